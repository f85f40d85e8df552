// SPDX-License-Identifier: Apache-2.0
// MetricChart: QCustomPlot graphs fed from decimated series, coalesced replots, hover and export.
#include "ui/charts/metric_chart.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QMouseEvent>
#include <QSaveFile>
#include <QTextStream>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>

#include <qcustomplot.h>

#include "ui/charts/chart_theme.h"
#include "ui/common/theme.h"

namespace kiln::ui::charts {

QColor runColour(int index)
{
    // A qualitative palette whose neighbours stay distinguishable on light and dark backgrounds.
    static const QRgb kPalette[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                    0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
    constexpr int n = int(sizeof(kPalette) / sizeof(kPalette[0]));
    return QColor(kPalette[((index % n) + n) % n]);
}

MetricChart::MetricChart(const QString& metric, QWidget* parent) : QWidget(parent), m_metric(metric)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
    // Antialiased polylines cost several times more to draw; at two points per pixel the lines
    // look the same without it.
    m_plot->setNotAntialiasedElements(QCP::aePlottables | QCP::aeGrid | QCP::aeAxes | QCP::aeItems);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, metric, QFont(font().family(), -1, QFont::Bold)));
    m_plot->yAxis->setLabel(metric);
    m_plot->setMinimumHeight(160);
    followTheme(m_plot);
    m_cursor = new QCPItemStraightLine(m_plot);
    m_cursor->setPen(QPen(Theme::instance().colors().chartMarker, 1, Qt::DotLine));
    m_cursor->setVisible(false);
    m_cursor->setSelectable(false);
    layout->addWidget(m_plot);
    updateAxisTicker();

    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(replotInterval());
    connect(m_timer, &QTimer::timeout, this, [this] {
        // Several charts due at once redraw one per event-loop pass, a few ms apart, so input and
        // other timers run between them instead of waiting for all of them.
        static QElapsedTimer lastRedraw;
        if (lastRedraw.isValid() && lastRedraw.elapsed() < kSpacingMs) {
            m_timer->start(kSpacingMs);
            return;
        }
        rebuild();
        lastRedraw.start();
    });

    // The cursor and the markers are items of this chart: the shared chart look leaves them alone.
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        const QColor marker = Theme::instance().colors().chartMarker;
        m_cursor->setPen(QPen(marker, 1, Qt::DotLine));
        for (auto& m : m_markers) {
            m.line->setPen(QPen(marker, 1, Qt::DashLine));
            m.text->setColor(marker);
        }
    });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent*) { onUserNavigates(); });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this](QWheelEvent*) { onUserNavigates(); });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) { resetView(); });
    connect(m_plot, &QCustomPlot::mouseMove, this, &MetricChart::onMouseMove);
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange&) {
        if (!m_updatingRange) {
            scheduleRebuild();  // new visible range: decimate again at that resolution
        }
    });
}

MetricChart::~MetricChart() = default;

void MetricChart::setTitle(const QString& title)
{
    if (auto* text = qobject_cast<QCPTextElement*>(m_plot->plotLayout()->element(0, 0))) {
        text->setText(title);
    }
}

void MetricChart::setRun(const QString& runId, const QString& displayName, const QColor& colour)
{
    Run& run = m_runs[runId];
    run.name = displayName;
    run.colour = colour;
    for (auto& t : m_traces) {
        if (t->runId == runId) {
            styleTrace(*t);
        }
    }
    scheduleRebuild();
}

void MetricChart::removeRun(const QString& runId)
{
    for (auto it = m_traces.begin(); it != m_traces.end();) {
        if ((*it)->runId == runId) {
            m_plot->removeGraph((*it)->raw);
            m_plot->removeGraph((*it)->smooth);
            it = m_traces.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = m_markers.begin(); it != m_markers.end();) {
        if (it->runId == runId) {
            m_plot->removeItem(it->line);
            m_plot->removeItem(it->text);
            it = m_markers.erase(it);
        } else {
            ++it;
        }
    }
    m_runs.erase(runId);
    scheduleRebuild();
}

void MetricChart::addMarker(const QString& runId, int64_t step, double epoch, double wallTime, const QString& label)
{
    Marker m{runId, step, epoch, wallTime, label, new QCPItemStraightLine(m_plot), new QCPItemText(m_plot)};
    m.line->setPen(QPen(Theme::instance().colors().chartMarker, 1, Qt::DashLine));
    m.line->setSelectable(false);
    m.text->setText(label);
    m.text->setSelectable(false);
    m.text->setColor(Theme::instance().colors().chartMarker);
    m.text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    m.text->setPadding(QMargins(3, 1, 3, 1));
    // x in plot coordinates, y in the axis rect (0 = top): the label stays at the top edge.
    m.text->position->setTypeX(QCPItemPosition::ptPlotCoords);
    m.text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_markers.push_back(m);
    placeMarkers();
    scheduleRebuild();
}

double MetricChart::markerX(int i) const
{
    const Marker& m = m_markers[size_t(i)];
    switch (m_xMode) {
    case XAxisMode::Step:
        return double(m.step);
    case XAxisMode::Epoch:
        return m.epoch;
    case XAxisMode::WallTime:
        return m.wallTime;
    case XAxisMode::Relative:
        // Relative to the run's first point, as its series are drawn.
        for (const auto& t : m_traces) {
            if (t->runId == m.runId && !t->buffer.empty()) {
                return m.wallTime - t->buffer.wallTime(0);
            }
        }
        return 0;
    }
    return 0;
}

void MetricChart::placeMarkers()
{
    for (int i = 0; i < markerCount(); ++i) {
        Marker& m = m_markers[size_t(i)];
        const double x = markerX(i);
        const auto run = m_runs.find(m.runId);
        const bool visible = run == m_runs.end() || run->second.visible;
        m.line->point1->setCoords(x, 0);
        m.line->point2->setCoords(x, 1);
        m.text->position->setCoords(x, 0);
        m.line->setVisible(visible);
        m.text->setVisible(visible);
    }
}

void MetricChart::setRunVisible(const QString& runId, bool visible)
{
    auto it = m_runs.find(runId);
    if (it == m_runs.end()) {
        return;
    }
    it->second.visible = visible;
    for (auto& t : m_traces) {
        if (t->runId == runId) {
            styleTrace(*t);
        }
    }
    scheduleRebuild();
}

QStringList MetricChart::runs() const
{
    QStringList ids;
    for (const auto& [id, run] : m_runs) {
        ids << id;
    }
    return ids;
}

MetricChart::Trace& MetricChart::trace(const QString& runId, Split split)
{
    for (auto& t : m_traces) {
        if (t->runId == runId && t->split == split) {
            return *t;
        }
    }
    if (m_runs.find(runId) == m_runs.end()) {
        m_runs[runId] = Run{runId, runColour(int(m_runs.size())), true};
    }
    auto t = std::make_unique<Trace>();
    t->runId = runId;
    t->split = split;
    t->buffer.setSmoothing(m_smoothing);
    t->raw = m_plot->addGraph();
    t->smooth = m_plot->addGraph();
    t->raw->setAdaptiveSampling(false);  // the series is decimated before it gets here
    t->smooth->setAdaptiveSampling(false);
    m_traces.push_back(std::move(t));
    styleTrace(*m_traces.back());
    return *m_traces.back();
}

void MetricChart::styleTrace(Trace& t)
{
    const Run& run = m_runs[t.runId];
    const Qt::PenStyle style = t.split == Split::Train ? Qt::SolidLine : Qt::DashLine;
    QColor faint = run.colour;
    faint.setAlpha(m_smoothing > 0 ? 70 : 255);
    t.raw->setPen(QPen(faint, 1, style));
    t.smooth->setPen(QPen(run.colour, 2, style));
    const QString splitName = t.split == Split::Train ? tr("training") : tr("validation");
    t.smooth->setName(tr("%1 (%2)").arg(run.name, splitName));
    t.raw->setVisible(run.visible);
    t.smooth->setVisible(run.visible && m_smoothing > 0);
}

void MetricChart::append(const QString& runId, Split split, int64_t step, double epoch, double wallTime, double value)
{
    trace(runId, split).buffer.append(step, epoch, wallTime, value);
    scheduleRebuild();
}

void MetricChart::setXAxisMode(XAxisMode mode)
{
    if (mode == m_xMode) {
        return;
    }
    m_xMode = mode;
    updateAxisTicker();
    resetView();
}

void MetricChart::updateAxisTicker()
{
    switch (m_xMode) {
    case XAxisMode::WallTime: {
        auto ticker = QSharedPointer<QCPAxisTickerDateTime>::create();
        ticker->setDateTimeFormat(QStringLiteral("hh:mm:ss"));
        m_plot->xAxis->setTicker(ticker);
        m_plot->xAxis->setLabel(tr("Time"));
        break;
    }
    case XAxisMode::Relative:
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plot->xAxis->setLabel(tr("Seconds since start"));
        break;
    case XAxisMode::Epoch:
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plot->xAxis->setLabel(tr("Epoch"));
        break;
    case XAxisMode::Step:
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plot->xAxis->setLabel(tr("Step"));
        break;
    }
}

void MetricChart::setSmoothing(double weight)
{
    weight = std::clamp(weight, 0.0, 0.999);
    if (weight == m_smoothing) {
        return;
    }
    m_smoothing = weight;
    for (auto& t : m_traces) {
        t->buffer.setSmoothing(weight);
        styleTrace(*t);
    }
    scheduleRebuild();
}

void MetricChart::setLogY(bool on)
{
    if (on == m_logY) {
        return;
    }
    m_logY = on;
    if (on) {
        m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    } else {
        m_plot->yAxis->setScaleType(QCPAxis::stLinear);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    m_follow = true;
    scheduleRebuild();
}

void MetricChart::resetView()
{
    m_follow = true;
    scheduleRebuild();
}

void MetricChart::onUserNavigates()
{
    m_follow = false;
}

void MetricChart::scheduleRebuild()
{
    if (!m_timer->isActive()) {
        m_timer->start();
    }
}

double MetricChart::rebuildNow()
{
    m_timer->stop();
    QElapsedTimer clock;
    clock.start();
    rebuild();
    return double(clock.nsecsElapsed()) / 1e6;
}

void MetricChart::rebuild()
{
    QElapsedTimer cost;
    cost.start();
    // The x range: all data while following, else what the user navigated to.
    double xlo = 0, xhi = 0;
    bool haveX = false;
    for (const auto& t : m_traces) {
        if (!m_runs[t->runId].visible || t->buffer.empty()) {
            continue;
        }
        const double a = t->buffer.x(0, m_xMode);
        const double b = t->buffer.x(t->buffer.size() - 1, m_xMode);
        xlo = haveX ? std::min(xlo, a) : a;
        xhi = haveX ? std::max(xhi, b) : b;
        haveX = true;
    }
    m_updatingRange = true;
    if (m_follow && haveX) {
        if (xhi <= xlo) {
            xhi = xlo + 1;
        }
        m_plot->xAxis->setRange(xlo, xhi);
    }
    const QCPRange visible = m_plot->xAxis->range();
    const int buckets = std::max(50, m_plot->axisRect()->width());
    double ylo = 0, yhi = 0;
    bool haveY = false;
    int drawn = 0;
    QVector<QCPGraphData> data;
    for (auto& t : m_traces) {
        const bool shown = m_runs[t->runId].visible;
        const auto [first, last] = shown ? t->buffer.visibleRange(visible.lower, visible.upper, m_xMode)
                                         : std::pair<size_t, size_t>{0, 0};
        for (int which = 0; which < 2; ++which) {
            const bool smoothed = which == 1;
            QCPGraph* graph = smoothed ? t->smooth : t->raw;
            if (smoothed && m_smoothing <= 0) {
                graph->data()->clear();
                continue;
            }
            t->buffer.decimate(first, last, buckets, m_xMode, smoothed, m_xs, m_ys);
            data.resize(qsizetype(m_xs.size()));
            for (size_t i = 0; i < m_xs.size(); ++i) {
                data[qsizetype(i)] = QCPGraphData(m_xs[i], m_logY && m_ys[i] <= 0 ? qQNaN() : m_ys[i]);
            }
            graph->data()->set(data, true);
            drawn += int(m_xs.size());
            double lo, hi;
            if (shown && t->buffer.valueRange(first, last, smoothed, m_logY, lo, hi)) {
                ylo = haveY ? std::min(ylo, lo) : lo;
                yhi = haveY ? std::max(yhi, hi) : hi;
                haveY = true;
            }
        }
    }
    if (m_follow && haveY) {
        if (m_logY) {
            m_plot->yAxis->setRange(ylo / 1.2, yhi * 1.2);
        } else {
            const double pad = yhi > ylo ? 0.05 * (yhi - ylo) : std::max(1e-6, std::abs(yhi) * 0.05 + 1e-6);
            m_plot->yAxis->setRange(ylo - pad, yhi + pad);
        }
    }
    placeMarkers();
    m_updatingRange = false;
    m_lastDrawnPoints = drawn;
    if (isVisible()) {
        m_plot->replot(QCustomPlot::rpImmediateRefresh);
    } else {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    // Redraw at most as often as keeps drawing under a fifth of the GUI thread's time: a slow
    // machine or a huge window gets fewer frames, never a busy event loop.
    const int spent = int(cost.elapsed());
    m_timer->setInterval(std::clamp(spent * 5, replotInterval(), 500));
}

QString MetricChart::describeNearest(double x, double y) const
{
    const Trace* best = nullptr;
    size_t bestIndex = 0;
    double bestDistance = 0;
    for (const auto& t : m_traces) {
        const auto it = m_runs.find(t->runId);
        if (it == m_runs.end() || !it->second.visible || t->buffer.empty()) {
            continue;
        }
        const size_t i = t->buffer.nearest(x, m_xMode);
        const double px = m_plot->xAxis->coordToPixel(t->buffer.x(i, m_xMode)) - m_plot->xAxis->coordToPixel(x);
        const double value = m_smoothing > 0 ? t->buffer.smoothed(i) : t->buffer.value(i);
        const double py = m_plot->yAxis->coordToPixel(value) - m_plot->yAxis->coordToPixel(y);
        const double distance = px * px + py * py;
        if (!best || distance < bestDistance) {
            best = t.get();
            bestIndex = i;
            bestDistance = distance;
        }
    }
    if (!best) {
        return {};
    }
    const SeriesBuffer& b = best->buffer;
    const QString splitName = best->split == Split::Train ? tr("training") : tr("validation");
    QString text = tr("%1 (%2)\nstep %3 · epoch %4\n%5 = %6")
                       .arg(m_runs.at(best->runId).name, splitName)
                       .arg(b.step(bestIndex))
                       .arg(b.epoch(bestIndex), 0, 'f', 2)
                       .arg(m_metric)
                       .arg(b.value(bestIndex), 0, 'g', 6);
    if (m_smoothing > 0) {
        text += tr(" (smoothed %1)").arg(b.smoothed(bestIndex), 0, 'g', 6);
    }
    text += QLatin1Char('\n') + QDateTime::fromMSecsSinceEpoch(qint64(b.wallTime(bestIndex) * 1000)).toString(
                                    QStringLiteral("yyyy-MM-dd hh:mm:ss"));
    return text;
}

void MetricChart::onMouseMove(QMouseEvent* event)
{
    if (event->buttons() != Qt::NoButton) {
        return;  // dragging: no hover
    }
    const double x = m_plot->xAxis->pixelToCoord(event->position().x());
    const double y = m_plot->yAxis->pixelToCoord(event->position().y());
    const QString text = describeNearest(x, y);
    if (text.isEmpty()) {
        m_cursor->setVisible(false);
        QToolTip::hideText();
    } else {
        m_cursor->point1->setCoords(x, 0);
        m_cursor->point2->setCoords(x, 1);
        m_cursor->setVisible(true);
        QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
    }
    emit hoverTextChanged(text);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

const SeriesBuffer* MetricChart::series(const QString& runId, Split split) const
{
    for (const auto& t : m_traces) {
        if (t->runId == runId && t->split == split) {
            return &t->buffer;
        }
    }
    return nullptr;
}

bool MetricChart::exportCsv(const QString& path, QString* error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) {
            *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        }
        return false;
    }
    QTextStream out(&file);
    out << "run,split,step,epoch,wall_time,value,smoothed\n";
    for (const auto& t : m_traces) {
        const QString name = m_runs.count(t->runId) ? m_runs.at(t->runId).name : t->runId;
        QString quoted = name;
        quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
        const char* split = t->split == Split::Train ? "train" : "validation";
        const SeriesBuffer& b = t->buffer;
        for (size_t i = 0; i < b.size(); ++i) {
            out << '"' << quoted << "\"," << split << ',' << b.step(i) << ',' << QString::number(b.epoch(i), 'g', 10)
                << ',' << QString::number(b.wallTime(i), 'f', 3) << ',' << QString::number(b.value(i), 'g', 9) << ','
                << QString::number(b.smoothed(i), 'g', 9) << '\n';
        }
    }
    out.flush();
    if (!file.commit()) {
        if (error) {
            *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        }
        return false;
    }
    return true;
}

bool MetricChart::exportPng(const QString& path, int width, int height)
{
    rebuildNow();
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    return m_plot->savePng(path, width, height);
}

}  // namespace kiln::ui::charts
