// SPDX-License-Identifier: Apache-2.0
// Input pipeline settings (batch size, shuffle buffer, workers, prefetch, cache) with a measured
// rate: the engine pipeline runs briefly off the GUI thread on the data set shown.
#pragma once

#include <atomic>
#include <memory>

#include <nlohmann/json.hpp>

#include <QFutureWatcher>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace kiln::ui {

struct PipelineMeasurement {
    bool ok = false;
    QString error;
    qint64 samples = 0;
    qint64 batches = 0;
    qint64 skipped = 0;
    double seconds = 0;
    double samplesPerSecond = 0;
    double waitFraction = 0;
    QString outputShape;  // e.g. "28×28×1"
};

class PipelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit PipelinePanel(QWidget* parent = nullptr);
    ~PipelinePanel() override;

    // The image folder the pipeline reads and the transforms it applies.
    void setImageFolder(const QString& root);
    void setTransforms(const nlohmann::json& transforms);
    // The settings as keys of a project's data section (batch_size, shuffle_buffer, workers,
    // prefetch, cache).
    nlohmann::json settings() const;
    void setSettings(const nlohmann::json& data);

    // Runs the pipeline for about `seconds` (at most one epoch) off the GUI thread.
    void measure(double seconds = 2.0);
    void cancel();
    bool isRunning() const { return m_watcher.isRunning(); }
    const PipelineMeasurement& lastMeasurement() const { return m_last; }

signals:
    void settingsChanged();
    void measured();

private:
    static PipelineMeasurement run(QString root, nlohmann::json transforms, nlohmann::json settings,
                                   double seconds, std::shared_ptr<std::atomic<bool>> stop);

    QString m_root;
    nlohmann::json m_transforms = nlohmann::json::array();
    QSpinBox* m_batch;
    QSpinBox* m_shuffle;
    QSpinBox* m_workers;
    QSpinBox* m_prefetch;
    QComboBox* m_cache;
    QPushButton* m_run;
    QLabel* m_result;
    PipelineMeasurement m_last;
    std::shared_ptr<std::atomic<bool>> m_stop;
    QFutureWatcher<PipelineMeasurement> m_watcher;
};

}  // namespace kiln::ui
