// SPDX-License-Identifier: Apache-2.0
// Applies the theme's chart colours to a QCustomPlot.
#include "ui/charts/chart_theme.h"

#include <qcustomplot.h>

#include "ui/common/theme.h"

namespace kiln::ui::charts {

namespace {

void styleAxis(QCPAxis* axis, const ThemeColors& c) {
    const QPen axisPen(c.chartAxis, 1);
    axis->setBasePen(axisPen);
    axis->setTickPen(axisPen);
    axis->setSubTickPen(axisPen);
    axis->setTickLabelColor(c.chartText);
    axis->setLabelColor(c.chartText);
    if (QCPGrid* grid = axis->grid()) {
        grid->setPen(QPen(c.chartGrid, 1, Qt::DotLine));
        grid->setSubGridPen(QPen(c.chartSubGrid, 1, Qt::DotLine));
        grid->setZeroLinePen(QPen(c.chartGrid, 1, Qt::SolidLine));
    }
}

void styleLegend(QCPLegend* legend, const ThemeColors& c) {
    legend->setBrush(c.chartLegendBackground);
    // A chart that drew its legend without a frame keeps it that way.
    if (legend->borderPen().style() != Qt::NoPen) legend->setBorderPen(QPen(c.chartLegendBorder, 1));
    legend->setTextColor(c.chartText);  // also recolours the items already listed
    legend->setSelectedTextColor(c.chartText);
}

}  // namespace

void applyChartTheme(QCustomPlot* plot) {
    if (!plot) return;
    const ThemeColors& c = Theme::instance().colors();
    plot->setBackground(c.chartBackground);
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) styleAxis(axis, c);
    if (plot->legend) styleLegend(plot->legend, c);
    // Titles, colour scales and legends placed in the layout rather than in an axis rect.
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* text = qobject_cast<QCPTextElement*>(element)) text->setTextColor(c.chartText);
        else if (auto* scale = qobject_cast<QCPColorScale*>(element)) styleAxis(scale->axis(), c);
        else if (auto* legend = qobject_cast<QCPLegend*>(element); legend && legend != plot->legend) styleLegend(legend, c);
    }
}

void followTheme(QCustomPlot* plot) {
    if (!plot) return;
    applyChartTheme(plot);
    QObject::connect(&Theme::instance(), &Theme::changed, plot, [plot] {
        applyChartTheme(plot);
        plot->replot(QCustomPlot::rpQueuedReplot);
    });
}

}  // namespace kiln::ui::charts
