// SPDX-License-Identifier: Apache-2.0
// The settings of a batch export of explanation overlays: the method (Grad-CAM or input-gradient
// saliency), Grad-CAM's layer (every node with a 4-D output, the default preselected), the class
// explained (the predicted one or any class), the opacity and the folder: the choices of the
// explanation dialog, for many samples at once.
#pragma once

#include <QDialog>

#include <string>
#include <vector>

#include "engine/api/overlay_export.h"
#include "engine/io/project.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;

namespace kiln::ui::evaluate {

class OverlayExportDialog : public QDialog {
    Q_OBJECT
public:
    // `samples`: how many will be written (for the title); `folder`: the folder proposed.
    OverlayExportDialog(const engine::io::Project& project, const std::vector<std::string>& classNames, int samples,
                        const QString& folder, QWidget* parent = nullptr);

    // The chosen method, layer, class and opacity, and the folder (samples are left empty).
    engine::api::OverlayExportOptions settings() const;
    QString folder() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void updateState();

    int m_samples = 0;
    QLabel* m_intro = nullptr;
    QLabel* m_methodLabel = nullptr;
    QLabel* m_layerLabel = nullptr;
    QLabel* m_classLabel = nullptr;
    QLabel* m_opacityLabel = nullptr;
    QLabel* m_folderLabel = nullptr;
    QComboBox* m_method = nullptr;
    QComboBox* m_layer = nullptr;
    QComboBox* m_class = nullptr;
    QSlider* m_opacity = nullptr;
    QLabel* m_opacityValue = nullptr;
    QLineEdit* m_folder = nullptr;
    QPushButton* m_browse = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QString m_layerProblem;  // why Grad-CAM cannot be used (no 4-D layer), else empty
};

}  // namespace kiln::ui::evaluate
