// SPDX-License-Identifier: Apache-2.0
// One evaluated sample with its Grad-CAM (or saliency) overlay: the layer, the class and the
// method are chosen here, the opacity with a slider. The sample is read and the maps computed off
// the GUI thread (engine/api/explanation.h, the code of kiln-eval --explain), one job at a time;
// a change made while a job runs is computed after it with the latest settings.
#pragma once

#include <QDialog>
#include <QImage>

#include <memory>
#include <vector>

#include "engine/api/evaluation.h"
#include "engine/api/explanation.h"
#include "engine/io/project.h"

class QComboBox;
class QLabel;
class QSlider;

namespace kiln::ui::evaluate {

class ExplanationDialog : public QDialog {
    Q_OBJECT
public:
    // `options` names the weights and the split the sample belongs to; `sample` is its index there.
    // Empty `classNames`: the data's, read with the sample (a picture from the dataset browser).
    ExplanationDialog(const engine::io::Project& project, const QString& projectPath,
                      const engine::api::EvaluationOptions& options, int64_t sample, const QString& source,
                      std::vector<std::string> classNames, QWidget* parent = nullptr);
    ~ExplanationDialog() override;

    bool busy() const { return m_busy; }
    // The last map shown (empty before the first one or after an error).
    const engine::api::Heatmap& heatmap() const { return m_heat; }
    QImage overlay() const { return m_overlay; }
    QString errorText() const { return m_error; }

signals:
    // After each computed map (ok) or failure, once its result is shown.
    void explained(bool ok);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Worker;
    struct Result;
    void compute();
    void showResult(const Result& result);
    void redraw();
    void retranslate();

    std::shared_ptr<Worker> m_worker;
    std::vector<std::string> m_classNames;
    QString m_source;
    QComboBox* m_method = nullptr;
    QComboBox* m_layer = nullptr;
    QComboBox* m_class = nullptr;
    QSlider* m_opacity = nullptr;
    QLabel* m_methodLabel = nullptr;
    QLabel* m_layerLabel = nullptr;
    QLabel* m_classLabel = nullptr;
    QLabel* m_opacityLabel = nullptr;
    QLabel* m_picture = nullptr;
    QLabel* m_overlayView = nullptr;
    QLabel* m_status = nullptr;
    engine::api::Heatmap m_heat;
    std::vector<uint8_t> m_pictureRgb;
    QImage m_overlay;
    QString m_error;
    bool m_busy = false;
    bool m_pending = false;
    bool m_layersFilled = false;
};

}  // namespace kiln::ui::evaluate
