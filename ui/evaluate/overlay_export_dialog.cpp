// SPDX-License-Identifier: Apache-2.0
// The overlay export dialog: the layers come from the model's analysis (cheap, no weights read),
// and OK is offered only once a folder is named and the chosen method can run.
#include "ui/evaluate/overlay_export_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include "app/common/error_text.h"
#include "engine/api/explanation.h"

namespace kiln::ui::evaluate {

OverlayExportDialog::OverlayExportDialog(const engine::io::Project& project, const std::vector<std::string>& classNames,
                                         int samples, const QString& folder, QWidget* parent)
    : QDialog(parent), m_samples(samples) {
    setObjectName(QStringLiteral("overlayExportDialog"));
    auto* layout = new QVBoxLayout(this);
    m_intro = new QLabel(this);
    m_intro->setWordWrap(true);
    layout->addWidget(m_intro);
    auto* form = new QFormLayout;
    m_methodLabel = new QLabel(this);
    m_method = new QComboBox(this);
    m_method->setObjectName(QStringLiteral("exportMethod"));
    m_method->addItem(QString(), QStringLiteral("gradcam"));
    m_method->addItem(QString(), QStringLiteral("saliency"));
    form->addRow(m_methodLabel, m_method);
    m_layerLabel = new QLabel(this);
    m_layer = new QComboBox(this);
    m_layer->setObjectName(QStringLiteral("exportLayer"));
    auto model = engine::ops::analyzeModel(project.graph);
    if (model.ok()) {
        const auto layers = engine::api::gradCamLayers(*model);
        auto preferred = engine::api::defaultGradCamLayer(*model);
        for (const auto& l : layers) m_layer->addItem(QString::fromStdString(l), QString::fromStdString(l));
        if (preferred.ok()) m_layer->setCurrentIndex(std::max(0, m_layer->findData(QString::fromStdString(*preferred))));
        else m_layerProblem = app::ErrorText::describe(preferred.error());
    } else {
        m_layerProblem = app::ErrorText::describe(model.error());
    }
    form->addRow(m_layerLabel, m_layer);
    m_classLabel = new QLabel(this);
    m_class = new QComboBox(this);
    m_class->setObjectName(QStringLiteral("exportClass"));
    m_class->addItem(QString(), -1);  // the predicted class
    for (size_t c = 0; c < classNames.size(); ++c)
        m_class->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(classNames[c])).arg(c), int(c));
    form->addRow(m_classLabel, m_class);
    m_opacityLabel = new QLabel(this);
    auto* opacityRow = new QHBoxLayout;
    m_opacity = new QSlider(Qt::Horizontal, this);
    m_opacity->setObjectName(QStringLiteral("exportOpacity"));
    m_opacity->setRange(0, 100);
    m_opacity->setValue(50);
    m_opacity->setPageStep(10);
    m_opacityValue = new QLabel(this);
    m_opacityValue->setMinimumWidth(m_opacityValue->fontMetrics().horizontalAdvance(QStringLiteral("1.00")));
    opacityRow->addWidget(m_opacity, 1);
    opacityRow->addWidget(m_opacityValue);
    form->addRow(m_opacityLabel, opacityRow);
    m_folderLabel = new QLabel(this);
    auto* folderRow = new QHBoxLayout;
    m_folder = new QLineEdit(QDir::toNativeSeparators(folder), this);
    m_folder->setObjectName(QStringLiteral("exportFolder"));
    m_browse = new QPushButton(this);
    m_browse->setObjectName(QStringLiteral("exportBrowse"));
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(m_browse);
    form->addRow(m_folderLabel, folderRow);
    layout->addLayout(form);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setObjectName(QStringLiteral("exportStart"));
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_method, &QComboBox::currentIndexChanged, this, &OverlayExportDialog::updateState);
    connect(m_folder, &QLineEdit::textChanged, this, &OverlayExportDialog::updateState);
    connect(m_opacity, &QSlider::valueChanged, this, [this](int v) { m_opacityValue->setText(QString::number(v / 100.0, 'f', 2)); });
    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString chosen = QFileDialog::getExistingDirectory(this, tr("Export overlays into a folder"), this->folder());
        if (!chosen.isEmpty()) m_folder->setText(QDir::toNativeSeparators(chosen));
    });
    // Without a layer Grad-CAM cannot run: saliency is proposed instead.
    if (m_layer->count() == 0 || !m_layerProblem.isEmpty()) m_method->setCurrentIndex(1);
    m_opacityValue->setText(QString::number(m_opacity->value() / 100.0, 'f', 2));
    retranslate();
    updateState();
}

engine::api::OverlayExportOptions OverlayExportDialog::settings() const {
    engine::api::OverlayExportOptions out;
    const bool gradCam = m_method->currentData().toString() == QLatin1String("gradcam");
    out.method = gradCam ? engine::api::ExplainMethod::GradCam : engine::api::ExplainMethod::Saliency;
    if (gradCam) out.layer = m_layer->currentData().toString().toStdString();
    if (m_class->currentData().toInt() >= 0) out.cls = m_class->currentData().toInt();
    out.opacity = float(m_opacity->value() / 100.0);
    out.folder = folder().toStdString();
    return out;
}

QString OverlayExportDialog::folder() const { return QDir::fromNativeSeparators(m_folder->text().trimmed()); }

void OverlayExportDialog::updateState() {
    const bool gradCam = m_method->currentData().toString() == QLatin1String("gradcam");
    const bool layerOk = m_layer->count() > 0 && m_layerProblem.isEmpty();
    m_layer->setEnabled(gradCam && layerOk);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(!folder().isEmpty() && (!gradCam || layerOk));
}

void OverlayExportDialog::retranslate() {
    setWindowTitle(tr("Export overlays"));
    m_intro->setText(tr("Explain %n sample(s) and write each overlay as a PNG file, with overlays.csv listing them.", "", m_samples));
    m_methodLabel->setText(tr("Method:"));
    m_method->setItemText(0, tr("Grad-CAM"));
    m_method->setItemText(1, tr("Saliency (input gradient)"));
    m_layerLabel->setText(tr("Layer:"));
    m_layer->setToolTip(m_layerProblem.isEmpty() ? tr("The node whose activations Grad-CAM weighs; saliency does not use one")
                                                 : tr("Grad-CAM cannot be used: %1").arg(m_layerProblem));
    m_classLabel->setText(tr("Class:"));
    m_class->setItemText(0, tr("Predicted class"));
    m_opacityLabel->setText(tr("Opacity:"));
    m_folderLabel->setText(tr("Folder:"));
    m_browse->setText(tr("Browse…"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
}

void OverlayExportDialog::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QDialog::changeEvent(event);
}

}  // namespace kiln::ui::evaluate
