// SPDX-License-Identifier: Apache-2.0
// Layered (Sugiyama-style) layout of a directed graph: longest-path layering, dummy nodes on
// long edges, barycentre crossing reduction, then coordinates. Pure; no Qt widgets.
#pragma once

#include <QPointF>
#include <QSizeF>

#include <vector>

namespace kiln::ui {

struct LayoutOptions {
    QSizeF nodeSize{176, 68};
    qreal layerGap = 56;  // vertical space between layers
    qreal nodeGap = 36;   // horizontal space between neighbours in a layer
    int sweeps = 8;       // down/up barycentre passes
};

// `inputs[i]` lists the producers of node i (indices). Cycles are broken by ignoring back edges.
// Returns each node's top-left corner; layers run top to bottom.
std::vector<QPointF> layeredLayout(const std::vector<std::vector<int>>& inputs,
                                   const LayoutOptions& options = {});

// Number of edge crossings between consecutive layers for the given layer orders (for tests).
int countCrossings(const std::vector<std::vector<int>>& inputs, const std::vector<QPointF>& positions);

}  // namespace kiln::ui
