// SPDX-License-Identifier: Apache-2.0
// The settings dialog: language, theme, autosave interval and default training device. OK writes
// the settings (AppSettings) and applies the language and the theme at once.
#pragma once

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QSpinBox;
class QCheckBox;

namespace kiln::ui {

class SettingsDialog : public QDialog {
    Q_OBJECT

public:
    explicit SettingsDialog(QWidget* parent = nullptr);

    // The values shown (what accept() would store).
    QString language() const;  // "" for the system default
    QString theme() const;     // "system", "light" or "dark"
    int autosaveSeconds() const;
    QString defaultDevice() const;

    void setLanguage(const QString& code);
    void setTheme(const QString& id);
    void setAutosaveSeconds(int seconds);
    void setDefaultDevice(const QString& device);

    // Writes the values, applies the language and the theme; the dialog then closes.
    void accept() override;

signals:
    void settingsApplied();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    void load();
    QLabel* m_languageLabel;
    QComboBox* m_language;
    QLabel* m_themeLabel;
    QComboBox* m_theme;
    QLabel* m_autosaveLabel;
    QCheckBox* m_autosaveOn;
    QSpinBox* m_autosave;
    QLabel* m_deviceLabel;
    QComboBox* m_device;
    QLabel* m_note;
    QDialogButtonBox* m_buttons;
};

}  // namespace kiln::ui
