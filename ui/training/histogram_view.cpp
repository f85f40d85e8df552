// SPDX-License-Identifier: Apache-2.0
// Histograms tab: bucket counts resampled onto a fixed value grid per parameter, drawn as
// QCustomPlot colour maps; run files read with QtConcurrent and applied on the GUI thread.
#include "ui/training/histogram_view.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <QComboBox>
#include <QElapsedTimer>
#include <QEvent>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <qcustomplot.h>

#include "app/common/error_text.h"
#include "ui/charts/chart_theme.h"

namespace kiln::ui::training {

using engine::api::Histogram;
using engine::api::ParamHistogram;

namespace {

// Adds the counts of `h` to one column of `rows` cells spanning [low, high]: each bucket's count
// spread evenly over the value range it covers.
void addColumn(const Histogram& h, double low, double high, int rows, double* column) {
    if (h.num <= 0 || h.bucket.empty()) return;
    const double cell = (high - low) / rows;
    auto rowOf = [&](double v) { return std::clamp(static_cast<int>((v - low) / cell), 0, rows - 1); };
    for (size_t k = 0; k < h.bucket.size(); ++k) {
        const double count = h.bucket[k];
        if (count <= 0) continue;
        const double left = k == 0 ? h.min : h.bucketLimit[k - 1];
        const double right = h.bucketLimit[k];
        if (!(right > left)) {
            column[rowOf(right)] += count;
            continue;
        }
        const int r0 = rowOf(left), r1 = rowOf(right);
        for (int r = r0; r <= r1; ++r) {
            const double a = std::max(left, low + r * cell), b = std::min(right, low + (r + 1) * cell);
            if (b > a) column[r] += count * (b - a) / (right - left);
        }
    }
    double top = 0;
    for (int r = 0; r < rows; ++r) top = std::max(top, column[r]);
    if (top > 0)
        for (int r = 0; r < rows; ++r) column[r] /= top;
}

QCustomPlot* makePlot(QWidget* parent, QCPColorMap*& map) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumHeight(160);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, QString(), QFont(plot->font().family(), plot->font().pointSize(), QFont::Bold)));
    map = new QCPColorMap(plot->xAxis, plot->yAxis);
    QCPColorGradient gradient(QCPColorGradient::gpThermal);
    map->setGradient(gradient);
    map->setDataRange(QCPRange(0, 1));
    map->setInterpolate(false);
    auto* scale = new QCPColorScale(plot);
    plot->plotLayout()->addElement(1, 1, scale);
    scale->setType(QCPAxis::atRight);
    scale->setDataRange(QCPRange(0, 1));
    scale->setGradient(gradient);
    scale->setBarWidth(10);
    map->setColorScale(scale);
    auto* group = new QCPMarginGroup(plot);
    plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    charts::followTheme(plot);
    return plot;
}

}  // namespace

HistogramView::HistogramView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    m_paramLabel = new QLabel(this);
    m_param = new QComboBox(this);
    m_param->setObjectName(QStringLiteral("histogramParameter"));
    m_param->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_source = new QLabel(this);
    m_source->setObjectName(QStringLiteral("histogramSource"));
    top->addWidget(m_paramLabel);
    top->addWidget(m_param);
    top->addSpacing(16);
    top->addWidget(m_source, 1);
    layout->addLayout(top);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("histogramMessage"));
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    layout->addWidget(m_message);
    m_weightsPlot = makePlot(this, m_weightsMap);
    m_weightsPlot->setObjectName(QStringLiteral("weightHistograms"));
    m_gradientsPlot = makePlot(this, m_gradientsMap);
    m_gradientsPlot->setObjectName(QStringLiteral("gradientHistograms"));
    layout->addWidget(m_weightsPlot, 1);
    layout->addWidget(m_gradientsPlot, 1);
    m_replotTimer = new QTimer(this);
    m_replotTimer->setSingleShot(true);
    m_replotTimer->setInterval(40);
    connect(m_replotTimer, &QTimer::timeout, this, &HistogramView::replot);
    connect(m_param, &QComboBox::currentIndexChanged, this, [this] { scheduleReplot(); });
    retranslate();
    replot();
}

HistogramView::~HistogramView() = default;

void HistogramView::retranslate()
{
    m_paramLabel->setText(tr("Parameter"));
    m_param->setToolTip(tr("The parameter whose distributions are shown."));
    for (auto* plot : {m_weightsPlot, m_gradientsPlot}) {
        const bool weights = plot == m_weightsPlot;
        static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))
            ->setText(weights ? tr("Weights") : tr("Gradients (last step of each epoch)"));
        plot->xAxis->setLabel(tr("Epoch"));
        plot->yAxis->setLabel(tr("Value"));
        (weights ? m_weightsMap : m_gradientsMap)->colorScale()->axis()->setLabel(tr("Density"));
    }
    m_source->setText(m_sourceText);
    scheduleReplot();
}

void HistogramView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(event);
}

void HistogramView::clear(const QString& source)
{
    ++m_generation;  // a load under way no longer applies
    m_epochs.clear();
    m_loadError.clear();
    m_sourceText = source;
    m_source->setText(source);
    refreshParameters();
    scheduleReplot();
}

void HistogramView::addEpoch(int epoch, std::vector<ParamHistogram> params) {
    if (params.empty()) {
        return;
    }
    m_epochs[epoch] = std::move(params);
    refreshParameters();
    scheduleReplot();
}

void HistogramView::loadRun(const QString& runDir, const QString& source)
{
    clear(source);
    const uint64_t generation = m_generation;
    const std::string path = engine::api::histogramLogPath(runDir.toStdString());
    auto future = QtConcurrent::run([path] { return engine::api::readHistograms(path); });
    auto* watcher = new QFutureWatcher<engine::Result<std::vector<engine::api::EpochHistograms>>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_generation) {
            return;  // cleared or another run asked for since
        }
        auto result = watcher->result();
        if (!result.ok()) {
            m_loadError = result.error().code == engine::ErrorCode::FileNotFound
                              ? tr("This run recorded no histograms (training.histogram_freq was 0, or the run "
                                   "predates them).")
                              : kiln::app::ErrorText::describe(result.error());
            scheduleReplot();
            emit loaded(false);
            return;
        }
        for (auto& e : result.value()) {
            m_epochs[e.epoch] = std::move(e.params);
        }
        refreshParameters();
        scheduleReplot();
        emit loaded(true);
    });
    watcher->setFuture(future);
}

QStringList HistogramView::parameters() const
{
    QStringList out;
    for (int i = 0; i < m_param->count(); ++i) {
        out << m_param->itemText(i);
    }
    return out;
}

QString HistogramView::currentParameter() const
{
    return m_param->currentText();
}

void HistogramView::setCurrentParameter(const QString& name)
{
    const int i = m_param->findText(name);
    if (i >= 0) {
        m_param->setCurrentIndex(i);
    }
}

QList<int> HistogramView::epochs() const
{
    QList<int> out;
    for (const auto& [epoch, params] : m_epochs) {
        out << epoch;
    }
    return out;
}

QString HistogramView::sourceText() const
{
    return m_sourceText;
}

QString HistogramView::messageText() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

void HistogramView::refreshParameters()
{
    QStringList names;
    if (!m_epochs.empty()) {
        for (const auto& p : m_epochs.rbegin()->second) {
            names << QString::fromStdString(p.name);
        }
    }
    if (names == parameters()) {
        return;
    }
    const QString keep = m_param->currentText();
    QSignalBlocker block(m_param);
    m_param->clear();
    m_param->addItems(names);
    const int i = m_param->findText(keep);
    m_param->setCurrentIndex(i >= 0 ? i : (names.isEmpty() ? -1 : 0));
}

HistogramView::Grid HistogramView::grid(bool gradients) const
{
    Grid g;
    const std::string name = m_param->currentText().toStdString();
    if (m_epochs.empty() || name.empty()) {
        return g;
    }
    auto find = [&](const std::vector<ParamHistogram>& params) -> const Histogram* {
        for (const auto& p : params) {
            if (p.name == name) {
                const Histogram& h = gradients ? p.gradients : p.weights;
                return h.num > 0 ? &h : nullptr;
            }
        }
        return nullptr;
    };
    double low = INFINITY, high = -INFINITY;
    int first = 0, last = 0;
    bool any = false;
    for (const auto& [epoch, params] : m_epochs) {
        if (const Histogram* h = find(params)) {
            low = std::min(low, h->min);
            high = std::max(high, h->max);
            if (!any) first = epoch;
            last = epoch;
            any = true;
        }
    }
    if (!any) {
        return g;
    }
    if (!(high > low)) {  // one value throughout: a band around it
        const double pad = std::max(std::abs(low) * 0.05, 1e-6);
        low -= pad;
        high += pad;
    }
    g.firstEpoch = first;
    g.columns = last - first + 1;
    g.rows = kRows;
    g.low = low;
    g.high = high;
    g.values.assign(static_cast<size_t>(g.columns * g.rows), 0.0);
    for (const auto& [epoch, params] : m_epochs) {
        if (epoch < first || epoch > last) {
            continue;
        }
        if (const Histogram* h = find(params)) {
            addColumn(*h, low, high, g.rows, g.values.data() + static_cast<size_t>((epoch - first) * g.rows));
        }
    }
    return g;
}

void HistogramView::scheduleReplot()
{
    // Hidden (another tab is on top): drawn when it shows, not at every epoch of a fast run.
    if (!isVisible()) {
        m_replotPending = true;
        return;
    }
    if (!m_replotTimer->isActive()) {
        m_replotTimer->start();
    }
}

void HistogramView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_replotPending) {
        m_replotPending = false;
        replot();
    }
}

void HistogramView::showMessage(const QString& text)
{
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

void HistogramView::replot()
{
    m_replotPending = false;
    QElapsedTimer clock;
    clock.start();
    if (m_epochs.empty()) {
        showMessage(!m_loadError.isEmpty() ? m_loadError
                                           : tr("No histograms yet. Kiln records the weight and gradient histograms of "
                                                "every parameter at the end of each epoch (training.histogram_freq); "
                                                "train, or select a run in Runs."));
    } else {
        showMessage(QString());
    }
    for (const bool gradients : {false, true}) {
        QCustomPlot* plot = gradients ? m_gradientsPlot : m_weightsPlot;
        QCPColorMap* map = gradients ? m_gradientsMap : m_weightsMap;
        const Grid g = grid(gradients);
        auto* title = static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
        const QString base = gradients ? tr("Gradients (last step of each epoch)") : tr("Weights");
        if (g.columns == 0) {
            map->data()->clear();
            map->setVisible(false);
            title->setText(gradients && !m_epochs.empty() && !currentParameter().isEmpty()
                               ? tr("Gradients: none recorded (this parameter does not train)")
                               : base);
            plot->replot(QCustomPlot::rpQueuedReplot);
            continue;
        }
        title->setText(base);
        map->setVisible(true);
        map->data()->setSize(g.columns, g.rows);
        // Cell centres: epochs across; the value cells' centres up.
        const double cell = (g.high - g.low) / g.rows;
        const double x0 = g.firstEpoch, x1 = g.firstEpoch + g.columns - 1;
        map->data()->setRange(g.columns > 1 ? QCPRange(x0, x1) : QCPRange(x0 - 0.5, x0 + 0.5),
                              QCPRange(g.low + cell / 2, g.high - cell / 2));
        for (int c = 0; c < g.columns; ++c) {
            for (int r = 0; r < g.rows; ++r) {
                map->data()->setCell(c, r, g.values[static_cast<size_t>(c * g.rows + r)]);
            }
        }
        plot->xAxis->setRange(x0 - 0.5, x1 + 0.5);
        plot->yAxis->setRange(g.low, g.high);
        QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        plot->xAxis->setTicker(ticker);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    // Many epochs a second (a tiny model): redraw at most every 40 ms or ten times the time a
    // redraw takes, whichever is longer, so the event loop keeps its time for the rest.
    m_replotTimer->setInterval(std::max<int>(40, static_cast<int>(clock.elapsed() * 10)));
}

}  // namespace kiln::ui::training
