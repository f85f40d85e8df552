// SPDX-License-Identifier: Apache-2.0
// Settings dialog layout and persistence.
#include "ui/common/settings_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/common/app_settings.h"
#include "ui/common/language.h"
#include "ui/common/theme.h"

namespace kiln::ui {

SettingsDialog::SettingsDialog(QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("settingsDialog"));
    m_languageLabel = new QLabel(this);
    m_language = new QComboBox(this);
    m_language->setObjectName(QStringLiteral("settingsLanguage"));
    m_language->addItem(QString(), QString());  // system default; text set in retranslateUi()
    for (const QString& code : Language::available()) m_language->addItem(Language::nativeName(code), code);

    m_themeLabel = new QLabel(this);
    m_theme = new QComboBox(this);
    m_theme->setObjectName(QStringLiteral("settingsTheme"));
    for (ThemeChoice c : {ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark})
        m_theme->addItem(QString(), Theme::id(c));  // texts set in retranslateUi()

    m_autosaveLabel = new QLabel(this);
    m_autosaveOn = new QCheckBox(this);
    m_autosaveOn->setObjectName(QStringLiteral("settingsAutosaveOn"));
    m_autosave = new QSpinBox(this);
    m_autosave->setObjectName(QStringLiteral("settingsAutosave"));
    m_autosave->setRange(AppSettings::kMinAutosaveSeconds, AppSettings::kMaxAutosaveSeconds);
    connect(m_autosaveOn, &QCheckBox::toggled, m_autosave, &QSpinBox::setEnabled);

    m_deviceLabel = new QLabel(this);
    m_device = new QComboBox(this);
    m_device->setObjectName(QStringLiteral("settingsDevice"));
    m_device->setEditable(true);  // cuda:N for any N the machine has
    m_device->addItem(QStringLiteral("cpu"));
    m_device->addItem(QStringLiteral("cuda:0"));

    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &SettingsDialog::reject);

    auto* autosaveRow = new QHBoxLayout;
    autosaveRow->addWidget(m_autosaveOn);
    autosaveRow->addWidget(m_autosave, 1);
    auto* form = new QFormLayout;
    form->addRow(m_languageLabel, m_language);
    form->addRow(m_themeLabel, m_theme);
    form->addRow(m_autosaveLabel, autosaveRow);
    form->addRow(m_deviceLabel, m_device);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_note);
    layout->addStretch(1);
    layout->addWidget(m_buttons);

    retranslateUi();
    load();
}

void SettingsDialog::retranslateUi() {
    setWindowTitle(tr("Settings"));
    m_languageLabel->setText(tr("&Language:"));
    m_languageLabel->setBuddy(m_language);
    m_language->setItemText(0, tr("System default (%1)").arg(Language::nativeName(Language::resolve(QString()))));
    m_themeLabel->setText(tr("&Theme:"));
    m_themeLabel->setBuddy(m_theme);
    m_theme->setItemText(0, tr("System"));
    m_theme->setItemText(1, tr("Light"));
    m_theme->setItemText(2, tr("Dark"));
    m_theme->setToolTip(tr("System follows the desktop's light or dark colour scheme"));
    m_autosaveLabel->setText(tr("&Autosave:"));
    m_autosaveLabel->setBuddy(m_autosaveOn);
    m_autosaveOn->setText(tr("every"));
    m_autosave->setSuffix(tr(" s"));
    m_autosave->setToolTip(tr("Unsaved changes are written to a recovery file this often"));
    m_deviceLabel->setText(tr("Default &device:"));
    m_deviceLabel->setBuddy(m_device);
    m_device->setToolTip(tr("Device for new trainings: cpu, or cuda:N for the N-th GPU"));
    m_note->setText(tr("The language and the theme change as soon as you press OK."));
    if (auto* ok = m_buttons->button(QDialogButtonBox::Ok)) ok->setText(tr("OK"));
    if (auto* cancel = m_buttons->button(QDialogButtonBox::Cancel)) cancel->setText(tr("Cancel"));
}

void SettingsDialog::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QDialog::changeEvent(event);
}

void SettingsDialog::load() {
    setLanguage(AppSettings::language());
    setTheme(AppSettings::theme());
    setAutosaveSeconds(AppSettings::autosaveSeconds());
    setDefaultDevice(AppSettings::defaultDevice());
}

QString SettingsDialog::language() const { return m_language->currentData().toString(); }

QString SettingsDialog::theme() const { return m_theme->currentData().toString(); }

int SettingsDialog::autosaveSeconds() const { return m_autosaveOn->isChecked() ? m_autosave->value() : 0; }

QString SettingsDialog::defaultDevice() const { return m_device->currentText().trimmed(); }

void SettingsDialog::setLanguage(const QString& code) {
    const int i = m_language->findData(code);
    m_language->setCurrentIndex(i < 0 ? 0 : i);
}

void SettingsDialog::setTheme(const QString& id) {
    const int i = m_theme->findData(id);
    m_theme->setCurrentIndex(i < 0 ? 0 : i);
}

void SettingsDialog::setAutosaveSeconds(int seconds) {
    m_autosaveOn->setChecked(seconds > 0);
    m_autosave->setEnabled(seconds > 0);
    m_autosave->setValue(seconds > 0 ? seconds : AppSettings::kDefaultAutosaveSeconds);
}

void SettingsDialog::setDefaultDevice(const QString& device) { m_device->setCurrentText(device); }

void SettingsDialog::accept() {
    AppSettings::setLanguage(language());
    AppSettings::setAutosaveSeconds(autosaveSeconds());
    AppSettings::setDefaultDevice(defaultDevice());
    const QString code = Language::resolve(language());
    if (code != Language::current()) Language::apply(code);
    AppSettings::setTheme(theme());
    if (const auto choice = Theme::fromId(theme()); choice && *choice != Theme::instance().choice())
        Theme::instance().apply(*choice);
    emit settingsApplied();
    QDialog::accept();
}

}  // namespace kiln::ui
