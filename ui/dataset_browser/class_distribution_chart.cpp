// SPDX-License-Identifier: Apache-2.0
// Stacked bars per class; tick labels are the class names, turned when there are many.
#include "ui/dataset_browser/class_distribution_chart.h"

#include <QVBoxLayout>

#include <qcustomplot.h>

#include "ui/charts/chart_theme.h"
#include "ui/dataset_browser/sample_list_model.h"

namespace kiln::ui {

using engine::api::SampleSplit;

namespace {

const SampleSplit kOrder[4] = {SampleSplit::Train, SampleSplit::Validation, SampleSplit::Test,
                               SampleSplit::Unassigned};

}  // namespace

ClassDistributionChart::ClassDistributionChart(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setMinimumHeight(160);
    // Repaint with the rest of the window, never synchronously in the middle of a replot (which
    // QCustomPlot does by default and which flushed the whole browser on every count refresh).
    m_plot->setPlottingHint(QCP::phImmediateRefresh, false);
    QCPBars* below = nullptr;
    for (SampleSplit s : kOrder) {
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(splitDisplayName(s));
        bars->setPen(Qt::NoPen);
        bars->setBrush(splitColour(s));
        bars->setWidth(0.7);
        if (below != nullptr) bars->moveAbove(below);
        below = bars;
        m_bars[static_cast<size_t>(engine::api::splitColumn(s))] = bars;
    }
    m_plot->yAxis->setLabel(tr("Samples"));
    m_ticker = QSharedPointer<QCPAxisTickerText>::create();
    m_plot->xAxis->setTicker(m_ticker);
    m_plot->xAxis->setTickLength(0, 3);
    m_plot->xAxis->grid()->setVisible(false);
    // The legend in a row of its own above the bars, so it never hides a class.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(font());
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->legend->setMargins(QMargins(4, 2, 4, 0));
    charts::followTheme(m_plot);
    m_plot->setAccessibleName(tr("Samples per class and split"));
    setCounts({});
}

void ClassDistributionChart::setCounts(const engine::api::ClassSplitCounts& counts) {
    // A scan refreshes the counts every second; unchanged counts cost no relayout of the plot.
    if (m_drawn && counts.classNames == m_counts.classNames && counts.counts == m_counts.counts) return;
    m_drawn = true;
    m_counts = counts;
    const int n = static_cast<int>(counts.classNames.size());
    QVector<double> keys(n);
    QVector<QString> labels(n);
    for (int k = 0; k < n; ++k) {
        keys[k] = k;
        labels[k] = QString::fromStdString(counts.classNames[static_cast<size_t>(k)]);
    }
    double top = 0;
    for (SampleSplit s : kOrder) {
        const int col = engine::api::splitColumn(s);
        QVector<double> values(n);
        for (int k = 0; k < n; ++k)
            values[k] = static_cast<double>(counts.counts[static_cast<size_t>(k)][static_cast<size_t>(col)]);
        m_bars[static_cast<size_t>(col)]->setData(keys, values, true);
        // A split with no samples stays out of the legend.
        const bool any = std::any_of(values.begin(), values.end(), [](double v) { return v > 0; });
        QCPBars* bars = m_bars[static_cast<size_t>(col)];
        const bool listed = m_plot->legend->hasItemWithPlottable(bars);
        if (any && !listed)
            bars->addToLegend();
        else if (!any && listed)
            bars->removeFromLegend();
    }
    for (int k = 0; k < n; ++k) top = std::max(top, static_cast<double>(counts.classTotal(k)));
    m_ticker->setTicks(keys, labels);
    m_plot->xAxis->setTickLabelRotation(n > 6 ? 40 : 0);
    m_plot->xAxis->setRange(-0.6, std::max(0, n - 1) + 0.6);
    m_plot->yAxis->setRange(0, std::max(1.0, top * 1.08));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QVector<double> ClassDistributionChart::barValues(SampleSplit split) const {
    QVector<double> out;
    const QCPBars* bars = m_bars[static_cast<size_t>(engine::api::splitColumn(split))];
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) out.append(it->value);
    return out;
}

QColor splitColour(SampleSplit s) {
    switch (s) {
    case SampleSplit::Train:
        return QColor(0x3b, 0x75, 0xaf);
    case SampleSplit::Validation:
        return QColor(0xef, 0x8a, 0x3c);
    case SampleSplit::Test:
        return QColor(0x51, 0x9e, 0x3e);
    case SampleSplit::Unassigned:
        break;
    }
    return QColor(0xa0, 0xa0, 0xa0);
}

}  // namespace kiln::ui
