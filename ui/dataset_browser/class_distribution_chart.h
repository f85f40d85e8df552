// SPDX-License-Identifier: Apache-2.0
// Samples per class as stacked bars, one colour per split (train, validation, test, unassigned),
// drawn with QCustomPlot.
#pragma once

#include <array>

#include <QColor>
#include <QSharedPointer>
#include <QVector>
#include <QWidget>

#include "engine/api/datasets.h"

class QCustomPlot;
class QCPBars;
class QCPAxisTickerText;

namespace kiln::ui {

// The colour of a split, the same in the chart's bars and the thumbnails' stripes.
QColor splitColour(engine::api::SampleSplit split);

class ClassDistributionChart : public QWidget {
    Q_OBJECT
public:
    explicit ClassDistributionChart(QWidget* parent = nullptr);

    void setCounts(const engine::api::ClassSplitCounts& counts);
    const engine::api::ClassSplitCounts& counts() const { return m_counts; }
    // The values the bars of one split show, one per class (read back from the plot).
    QVector<double> barValues(engine::api::SampleSplit split) const;
    QCustomPlot* plot() const { return m_plot; }

private:
    QCustomPlot* m_plot;
    std::array<QCPBars*, 4> m_bars{};  // indexed by splitColumn()
    QSharedPointer<QCPAxisTickerText> m_ticker;
    engine::api::ClassSplitCounts m_counts;
    bool m_drawn = false;  // setCounts has drawn m_counts at least once
};

}  // namespace kiln::ui
