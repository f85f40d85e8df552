// SPDX-License-Identifier: Apache-2.0
// The editor's Preview panel: the selected node's output on a real sample of the project's data,
// as a grid of normalised feature maps (one tile per channel of an NHWC picture tensor) or as a
// histogram with mean, standard deviation, minimum, maximum and shape. Computed on a worker
// thread through engine/api/node_preview.h a short moment after the selection or the graph
// changes; only the newest request is computed and shown.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <QImage>
#include <QString>
#include <QWidget>

#include "engine/api/node_preview.h"

class QLabel;
class QTimer;

namespace kiln::ui {

class FeatureMapView;
class ValueHistogramView;

// What the worker gives back for one request, as a value.
struct NodePreviewResult {
    uint64_t generation = 0;
    QString node;
    bool ok = false;
    QString error;                     // when !ok, composed for the user
    engine::api::NodeOutput output;    // when ok
    QString sampleSource;              // the file or row the sample came from
    QString split;                     // "validation" or "train"
    engine::api::PreviewWeights weights;
    double milliseconds = 0;           // from the request to the result
};

class NodePreviewPanel : public QWidget {
    Q_OBJECT
public:
    explicit NodePreviewPanel(QWidget* parent = nullptr);
    ~NodePreviewPanel() override;  // joins the worker

    // The project as it stands (a snapshot) and its path, for data paths. Schedules a preview.
    void setProject(const engine::io::Project& project, const QString& path);
    // The node to show ("" : none). Schedules a preview.
    void setNode(const QString& name);
    // Weights to preview with: a safetensors file or a run folder; "" : the initial weights.
    void setWeights(const QString& path, const QString& label = {});
    QString weights() const { return m_weightsPath; }

    // Delay between the last change and the request (the panel coalesces bursts of edits).
    static constexpr int kDebounceMs = 60;

    // What is shown (tests).
    const std::optional<NodePreviewResult>& shown() const { return m_shown; }
    QString messageText() const;
    QString statsText() const;
    QImage featureMapImage() const;  // empty unless a 4-D output is shown
    bool histogramShown() const;

signals:
    // A result (or an error) is on screen.
    void previewShown();

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    struct Request {
        uint64_t generation = 0;
        engine::io::Project project;
        std::string projectPath;
        std::string node;
        std::string weights;
        std::chrono::steady_clock::time_point asked;
    };
    void retranslate();
    void schedule();
    void sendRequest();
    void workerLoop();
    NodePreviewResult compute(const Request& r);
    void present(NodePreviewResult result);
    void showMessage(const QString& text);

    QLabel* m_title = nullptr;
    QLabel* m_weightsLabel = nullptr;
    QLabel* m_message = nullptr;
    QLabel* m_stats = nullptr;
    FeatureMapView* m_maps = nullptr;
    ValueHistogramView* m_histogram = nullptr;
    QTimer* m_debounce = nullptr;

    engine::io::Project m_project;
    bool m_hasProject = false;
    bool m_dirty = false;  // a change came while the panel was hidden
    QString m_projectPath;
    QString m_node;
    QString m_weightsPath;
    QString m_weightsText;
    uint64_t m_generation = 0;
    std::optional<NodePreviewResult> m_shown;

    // Worker state (guarded by m_mutex): the newest request waiting, and the caches the worker
    // keeps between requests (touched by the worker thread only).
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::optional<Request> m_pending;
    bool m_quit = false;
    std::thread m_worker;
    std::unique_ptr<engine::ThreadPool> m_pool;
    std::string m_sampleKey;
    std::optional<engine::Result<engine::api::PreviewSample>> m_sample;
    std::string m_previewerKey;
    std::unique_ptr<engine::api::NodePreviewer> m_previewer;
    std::optional<engine::Error> m_previewerError;
};

// Channels of an NHWC tensor [1, H, W, C] as a grid of grey tiles, each scaled by its own
// minimum and maximum (a constant channel is mid-grey). At most kMaxTiles tiles.
QImage featureMapGrid(const std::vector<float>& values, int64_t height, int64_t width, int64_t channels,
                      int* shownChannels = nullptr);
constexpr int kMaxTiles = 64;

}  // namespace kiln::ui
