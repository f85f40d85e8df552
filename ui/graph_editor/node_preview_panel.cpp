// SPDX-License-Identifier: Apache-2.0
// Preview panel: debounced requests to a worker thread that keeps the sample and the compiled
// previewer between requests, and the two ways of drawing a node's output.
#include "ui/graph_editor/node_preview_panel.h"

#include <algorithm>
#include <cmath>

#include <QEvent>
#include <QLabel>
#include <QPainter>
#include <QTimer>
#include <QVBoxLayout>

#include "app/common/error_text.h"
#include "engine/io/project.h"

namespace kiln::ui {

// ---- drawing ------------------------------------------------------------------------------

QImage featureMapGrid(const std::vector<float>& values, int64_t height, int64_t width, int64_t channels,
                      int* shownChannels)
{
    const int shown = static_cast<int>(std::min<int64_t>(channels, kMaxTiles));
    if (shownChannels) {
        *shownChannels = shown;
    }
    if (shown <= 0 || height <= 0 || width <= 0) {
        return {};
    }
    // Tiles of at least 24 px: small maps are enlarged (nearest neighbour), large ones kept.
    const int scale = static_cast<int>(std::max<int64_t>(1, (24 + std::max(height, width) - 1) / std::max(height, width)));
    const int tileH = static_cast<int>(height) * scale, tileW = static_cast<int>(width) * scale;
    const int cols = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(shown))));
    const int rows = (shown + cols - 1) / cols;
    const int gap = 2;
    QImage image(cols * (tileW + gap) - gap, rows * (tileH + gap) - gap, QImage::Format_RGB32);
    image.fill(QColor(60, 60, 60));
    for (int c = 0; c < shown; ++c) {
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t p = 0; p < height * width; ++p) {
            const float v = values[static_cast<size_t>(p * channels + c)];
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
        const int x0 = (c % cols) * (tileW + gap), y0 = (c / cols) * (tileH + gap);
        for (int y = 0; y < tileH; ++y) {
            auto* line = reinterpret_cast<QRgb*>(image.scanLine(y0 + y)) + x0;
            for (int x = 0; x < tileW; ++x) {
                const float v = values[static_cast<size_t>(((y / scale) * width + x / scale) * channels + c)];
                int g = 128;
                if (!std::isfinite(v)) {
                    line[x] = qRgb(200, 0, 200);  // NaN or infinity: magenta
                    continue;
                }
                if (hi > lo) {
                    g = static_cast<int>(std::lround((v - lo) / (hi - lo) * 255.0f));
                }
                line[x] = qRgb(g, g, g);
            }
        }
    }
    return image;
}

// The feature-map grid, scaled to the widget's width (integer steps, crisp pixels).
class FeatureMapView : public QWidget {
public:
    explicit FeatureMapView(QWidget* parent) : QWidget(parent) { setMinimumHeight(160); }
    void setImage(QImage image)
    {
        m_image = std::move(image);
        updateGeometry();
        update();
    }
    const QImage& image() const { return m_image; }
    QSize sizeHint() const override { return m_image.isNull() ? QSize(200, 120) : m_image.size().grownBy({4, 4, 4, 4}); }

protected:
    void paintEvent(QPaintEvent*) override
    {
        if (m_image.isNull()) {
            return;
        }
        QPainter p(this);
        const QSize fit = m_image.size().scaled(size(), Qt::KeepAspectRatio);
        p.drawImage(QRect(QPoint((width() - fit.width()) / 2, 0), fit), m_image);
    }

private:
    QImage m_image;
};

// Bars of a value histogram, with the value range under them.
class ValueHistogramView : public QWidget {
public:
    explicit ValueHistogramView(QWidget* parent) : QWidget(parent) { setMinimumHeight(110); }
    void setValues(const std::vector<float>& values, double lo, double hi)
    {
        m_counts.assign(kBins, 0);
        m_lo = lo;
        m_hi = hi;
        for (float v : values) {
            if (!std::isfinite(v)) {
                continue;
            }
            const int b = hi > lo ? std::clamp(static_cast<int>((v - lo) / (hi - lo) * kBins), 0, kBins - 1) : kBins / 2;
            ++m_counts[static_cast<size_t>(b)];
        }
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        const QFontMetrics fm(font());
        const int axis = fm.height() + 4;
        const QRect plot = rect().adjusted(4, 4, -4, -axis);
        p.fillRect(plot, palette().base());
        const int top = m_counts.empty() ? 0 : *std::max_element(m_counts.begin(), m_counts.end());
        if (top > 0) {
            const double w = double(plot.width()) / kBins;
            for (int b = 0; b < kBins; ++b) {
                const int h = static_cast<int>(std::lround(double(m_counts[static_cast<size_t>(b)]) / top * plot.height()));
                p.fillRect(QRectF(plot.left() + b * w, plot.bottom() - h + 1, std::max(1.0, w - 1), h), QColor(52, 120, 200));
            }
        }
        p.setPen(palette().text().color());
        p.drawText(QRect(plot.left(), plot.bottom() + 2, plot.width(), axis), Qt::AlignLeft, QString::number(m_lo, 'g', 4));
        p.drawText(QRect(plot.left(), plot.bottom() + 2, plot.width(), axis), Qt::AlignRight, QString::number(m_hi, 'g', 4));
    }

private:
    static constexpr int kBins = 40;
    std::vector<int> m_counts;
    double m_lo = 0, m_hi = 0;
};

// ---- panel --------------------------------------------------------------------------------

NodePreviewPanel::NodePreviewPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("previewTitle"));
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_weightsLabel = new QLabel(this);
    m_weightsLabel->setObjectName(QStringLiteral("previewWeights"));
    m_weightsLabel->setWordWrap(true);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("previewMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_maps = new FeatureMapView(this);
    m_maps->setObjectName(QStringLiteral("previewFeatureMaps"));
    m_histogram = new ValueHistogramView(this);
    m_histogram->setObjectName(QStringLiteral("previewHistogram"));
    m_stats = new QLabel(this);
    m_stats->setObjectName(QStringLiteral("previewStats"));
    m_stats->setWordWrap(true);
    m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_title);
    layout->addWidget(m_weightsLabel);
    layout->addWidget(m_message);
    layout->addWidget(m_maps, 1);
    layout->addWidget(m_histogram, 1);
    layout->addWidget(m_stats);
    layout->addStretch();
    m_maps->hide();
    m_histogram->hide();

    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(kDebounceMs);
    connect(m_debounce, &QTimer::timeout, this, &NodePreviewPanel::sendRequest);
    m_worker = std::thread([this] { workerLoop(); });
    retranslate();
}

NodePreviewPanel::~NodePreviewPanel()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_quit = true;
        m_pending.reset();
    }
    m_wake.notify_all();
    m_worker.join();
}

void NodePreviewPanel::retranslate()
{
    setWindowTitle(tr("Preview"));
    if (m_weightsPath.isEmpty()) {
        m_weightsText = tr("Weights: initial (as training starts)");
    }
    m_weightsLabel->setText(m_weightsText);
    if (m_node.isEmpty()) {
        m_title->setText(QString());
        showMessage(tr("Select a node to see its output on a sample of the project's data."));
    } else if (m_shown) {
        present(*m_shown);  // composes the texts again
    }
}

void NodePreviewPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(event);
}

void NodePreviewPanel::setProject(const engine::io::Project& project, const QString& path)
{
    m_project = project;
    m_projectPath = path;
    m_hasProject = true;
    schedule();
}

void NodePreviewPanel::setNode(const QString& name)
{
    if (name == m_node && m_shown) {
        return;
    }
    m_node = name;
    if (m_node.isEmpty()) {
        ++m_generation;  // a result still coming is no longer wanted
        m_shown.reset();
        m_title->setText(QString());
        m_maps->hide();
        m_histogram->hide();
        m_stats->clear();
        showMessage(tr("Select a node to see its output on a sample of the project's data."));
        return;
    }
    m_title->setText(tr("%1: computing…").arg(m_node));
    schedule();
}

void NodePreviewPanel::setWeights(const QString& path, const QString& label)
{
    m_weightsPath = path;
    m_weightsText = path.isEmpty() ? tr("Weights: initial (as training starts)")
                                   : tr("Weights: %1").arg(label.isEmpty() ? path : label);
    m_weightsLabel->setText(m_weightsText);
    schedule();
}

void NodePreviewPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_dirty) {
        schedule();
    }
}

void NodePreviewPanel::schedule()
{
    if (m_node.isEmpty() || !m_hasProject) {
        return;
    }
    // Hidden (a closed dock or one tabbed behind another): nothing is computed until it shows.
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    m_debounce->start();  // restarts: bursts of edits make one request
}

void NodePreviewPanel::sendRequest()
{
    Request r;
    r.generation = ++m_generation;
    r.project = m_project;
    r.projectPath = m_projectPath.toStdString();
    r.node = m_node.toStdString();
    r.weights = m_weightsPath.toStdString();
    // The debounce wait counts: the delay the user sees runs from the last change.
    r.asked = std::chrono::steady_clock::now() - std::chrono::milliseconds(kDebounceMs);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_pending = std::move(r);  // replaces a request the worker has not started
    }
    m_wake.notify_one();
}

void NodePreviewPanel::workerLoop()
{
    m_pool = std::make_unique<engine::ThreadPool>(static_cast<int>(std::max(1u, std::min(4u, std::thread::hardware_concurrency()))));
    for (;;) {
        Request r;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_wake.wait(lock, [this] { return m_quit || m_pending.has_value(); });
            if (m_quit) {
                break;
            }
            r = std::move(*m_pending);
            m_pending.reset();
        }
        NodePreviewResult result = compute(r);
        {
            // A newer request already waiting makes this one stale: skip showing it.
            std::lock_guard<std::mutex> lock(m_mutex);
            if (m_quit || m_pending) {
                continue;
            }
        }
        QMetaObject::invokeMethod(
            this, [this, result = std::move(result)]() mutable { present(std::move(result)); }, Qt::QueuedConnection);
    }
    // The caches hold plans that use the pool: they go first, on this thread.
    m_previewer.reset();
    m_sample.reset();
    m_pool.reset();
}

NodePreviewResult NodePreviewPanel::compute(const Request& r)
{
    NodePreviewResult out;
    out.generation = r.generation;
    out.node = QString::fromStdString(r.node);
    auto fail = [&](const QString& text) {
        out.ok = false;
        out.error = text;
        out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r.asked).count();
        return out;
    };
    // The sample depends on the data, the training set-up and the Input nodes; the previewer on
    // the whole graph, the layers, the training seed and the weights (not on node positions).
    std::string inputs;
    for (const auto& n : r.project.graph.nodes) {
        if (n.op == "Input") {
            inputs += engine::io::nodeToJson(n).dump();
        }
    }
    const std::string sampleKey = r.projectPath + '\n' + r.project.data.dump() + '\n' + r.project.training.dump() + '\n' + inputs;
    if (sampleKey != m_sampleKey || !m_sample) {
        m_sample = engine::api::loadPreviewSample(r.project, r.projectPath, static_cast<int>(m_pool->size()));
        m_sampleKey = sampleKey;
    }
    engine::io::Project keyed = r.project;
    keyed.layout = nlohmann::json::object();
    keyed.data = nlohmann::json::object();
    const std::string previewerKey = engine::io::serializeProject(keyed) + '\n' + r.weights;
    if (previewerKey != m_previewerKey) {
        m_previewer.reset();
        m_previewerError.reset();
        auto p = engine::api::NodePreviewer::create(r.project, r.weights, *m_pool);
        if (p.ok()) {
            m_previewer = std::move(p.value());
        } else {
            m_previewerError = p.error();
        }
        m_previewerKey = previewerKey;
    }
    if (m_previewerError) {
        return fail(tr("The model cannot run: %1").arg(kiln::app::ErrorText::describe(*m_previewerError)));
    }
    if (!m_sample->ok()) {
        return fail(tr("No sample to preview: %1").arg(kiln::app::ErrorText::describe(m_sample->error())));
    }
    const auto& sample = m_sample->value();
    auto output = m_previewer->run(r.node, sample);
    if (!output.ok()) {
        return fail(kiln::app::ErrorText::describe(output.error()));
    }
    out.ok = true;
    out.output = std::move(output.value());
    out.sampleSource = QString::fromStdString(sample.source);
    out.split = QString::fromStdString(sample.split);
    out.weights = m_previewer->weights();
    out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r.asked).count();
    return out;
}

void NodePreviewPanel::showMessage(const QString& text)
{
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

void NodePreviewPanel::present(NodePreviewResult result)
{
    if (result.generation != m_generation || result.node != m_node) {
        return;  // stale: the selection or the graph changed since it was asked for
    }
    if (!result.ok) {
        m_title->setText(m_node);
        m_maps->hide();
        m_histogram->hide();
        m_stats->clear();
        showMessage(result.error);
        m_shown = std::move(result);
        emit previewShown();
        return;
    }
    const auto& o = result.output;
    QStringList dims;
    for (int64_t d : o.shape.dims()) {
        dims << QString::number(d);
    }
    const QString shape = QStringLiteral("[%1]").arg(dims.join(QStringLiteral(", ")));
    m_title->setText(tr("%1: output %2").arg(result.node, shape));
    const QString split = result.split == QLatin1String("validation") ? tr("validation") : tr("training");
    QString note = tr("Sample: %1 (%2 data)").arg(result.sampleSource, split);
    if (result.weights.initialised > 0) {
        note += QLatin1Char('\n') + tr("%n parameter(s) not in the weights file keep their initial values.", nullptr,
                                       int(result.weights.initialised));
    }
    showMessage(note);
    if (o.shape.rank() == 4 && o.shape[1] > 1 && o.shape[2] > 1) {
        int tiles = 0;
        m_maps->setImage(featureMapGrid(o.values, o.shape[1], o.shape[2], o.shape[3], &tiles));
        m_maps->setToolTip(tiles < o.shape[3] ? tr("The first %1 of %2 channels, each scaled to its own range.").arg(tiles).arg(o.shape[3])
                                              : tr("Each channel scaled to its own range."));
        m_maps->show();
        m_histogram->hide();
    } else {
        m_maps->setImage({});
        m_maps->hide();
        m_histogram->setValues(o.values, o.stats.min, o.stats.max);
        m_histogram->show();
    }
    QString stats = tr("mean %1 · std %2\nmin %3 · max %4")
                        .arg(o.stats.mean, 0, 'g', 4)
                        .arg(o.stats.std, 0, 'g', 4)
                        .arg(o.stats.min, 0, 'g', 4)
                        .arg(o.stats.max, 0, 'g', 4);
    if (o.stats.nonFinite > 0) {
        stats += QLatin1Char('\n') + tr("%n value(s) are NaN or infinite.", nullptr, int(o.stats.nonFinite));
    }
    stats += QLatin1Char('\n') + tr("Computed in %1 ms").arg(result.milliseconds, 0, 'f', 0);
    m_stats->setText(stats);
    m_shown = std::move(result);
    emit previewShown();
}

QString NodePreviewPanel::messageText() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

QString NodePreviewPanel::statsText() const
{
    return m_stats->text();
}

QImage NodePreviewPanel::featureMapImage() const
{
    return m_maps->isVisibleTo(this) ? m_maps->image() : QImage();
}

bool NodePreviewPanel::histogramShown() const
{
    return m_histogram->isVisibleTo(this);
}

}  // namespace kiln::ui
