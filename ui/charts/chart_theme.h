// SPDX-License-Identifier: Apache-2.0
// One look for every QCustomPlot of the studio: background, axes, tick labels, grid, legend and
// titles take the current theme's chart colours (ui/common/theme.h). Data colours stay with
// the chart that draws them.
#pragma once

class QCustomPlot;

namespace kiln::ui::charts {

// Colours the plot as the current theme says (no replot).
void applyChartTheme(QCustomPlot* plot);

// applyChartTheme now and again, with a queued replot, whenever the theme changes, for as long
// as the plot lives.
void followTheme(QCustomPlot* plot);

}  // namespace kiln::ui::charts
