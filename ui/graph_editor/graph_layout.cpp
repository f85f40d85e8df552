// SPDX-License-Identifier: Apache-2.0
// Layered layout: longest-path layers, dummy nodes on long edges, barycentre ordering sweeps
// (keeping the order with the fewest crossings), and order-preserving least-squares placement.
#include "ui/graph_editor/graph_layout.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln::ui {
namespace {

struct Layered {
    std::vector<int> layer;                  // per vertex (real and dummy)
    std::vector<std::vector<int>> up, down;  // neighbours in the previous / next layer
    std::vector<std::vector<int>> layers;    // vertex order per layer
    std::vector<int> posInLayer;
    int real = 0;
};

// Crossings between layer l and l+1 (edges counted from `down`).
long crossingsBetween(const Layered& g, int l) {
    std::vector<std::pair<int, int>> edges;
    for (int v : g.layers[static_cast<size_t>(l)])
        for (int w : g.down[static_cast<size_t>(v)])
            edges.emplace_back(g.posInLayer[static_cast<size_t>(v)], g.posInLayer[static_cast<size_t>(w)]);
    std::sort(edges.begin(), edges.end());
    // Count inversions of the second coordinate (edges are few per layer pair in practice).
    long c = 0;
    for (size_t i = 0; i < edges.size(); ++i)
        for (size_t j = i + 1; j < edges.size(); ++j)
            if (edges[i].first < edges[j].first && edges[i].second > edges[j].second) ++c;
    return c;
}

long totalCrossings(const Layered& g) {
    long c = 0;
    for (int l = 0; l + 1 < static_cast<int>(g.layers.size()); ++l) c += crossingsBetween(g, l);
    return c;
}

void renumber(Layered& g) {
    for (const auto& layer : g.layers)
        for (size_t k = 0; k < layer.size(); ++k)
            g.posInLayer[static_cast<size_t>(layer[k])] = static_cast<int>(k);
}

void sweep(Layered& g, bool downwards) {
    int L = static_cast<int>(g.layers.size());
    auto step = [&](int l) {
        auto& layer = g.layers[static_cast<size_t>(l)];
        std::vector<std::pair<double, int>> keyed;
        keyed.reserve(layer.size());
        for (size_t k = 0; k < layer.size(); ++k) {
            int v = layer[k];
            const auto& nb = downwards ? g.up[static_cast<size_t>(v)] : g.down[static_cast<size_t>(v)];
            double key = static_cast<double>(k);
            if (!nb.empty()) {
                double s = 0;
                for (int w : nb) s += g.posInLayer[static_cast<size_t>(w)];
                key = s / static_cast<double>(nb.size());
            }
            keyed.emplace_back(key, v);
        }
        std::stable_sort(keyed.begin(), keyed.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (size_t k = 0; k < layer.size(); ++k) {
            layer[k] = keyed[k].second;
            g.posInLayer[static_cast<size_t>(layer[k])] = static_cast<int>(k);
        }
    };
    if (downwards)
        for (int l = 1; l < L; ++l) step(l);
    else
        for (int l = L - 2; l >= 0; --l) step(l);
}

// Places centres in order with minimum separations, as close as possible (least squares) to
// the desired centres: pool-adjacent-violators on the offsets.
std::vector<double> placeInOrder(const std::vector<double>& desired, const std::vector<double>& sep) {
    size_t n = desired.size();
    std::vector<double> offset(n, 0.0);
    for (size_t k = 1; k < n; ++k) offset[k] = offset[k - 1] + sep[k - 1];
    struct Block {
        double sum;
        int count;
    };
    std::vector<Block> blocks;
    for (size_t k = 0; k < n; ++k) {
        blocks.push_back({desired[k] - offset[k], 1});
        while (blocks.size() > 1) {
            auto& b = blocks[blocks.size() - 1];
            auto& a = blocks[blocks.size() - 2];
            if (a.sum / a.count <= b.sum / b.count) break;
            a.sum += b.sum;
            a.count += b.count;
            blocks.pop_back();
        }
    }
    std::vector<double> out(n);
    size_t k = 0;
    for (const auto& b : blocks)
        for (int i = 0; i < b.count; ++i, ++k) out[k] = b.sum / b.count + offset[k];
    return out;
}

}  // namespace

std::vector<QPointF> layeredLayout(const std::vector<std::vector<int>>& inputs, const LayoutOptions& opt) {
    const int n = static_cast<int>(inputs.size());
    std::vector<QPointF> result(static_cast<size_t>(n));
    if (n == 0) return result;

    // Depth-first order from the sources; edges into a vertex on the stack are back edges.
    std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        for (int p : inputs[static_cast<size_t>(i)])
            if (p >= 0 && p < n && p != i) consumers[static_cast<size_t>(p)].push_back(i);
    std::vector<int> state(static_cast<size_t>(n), 0), topo;
    std::vector<std::vector<bool>> isBack(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        isBack[static_cast<size_t>(i)].assign(inputs[static_cast<size_t>(i)].size(), false);
    // Iterative DFS over producers (post-order = topological order).
    for (int root = 0; root < n; ++root) {
        if (state[static_cast<size_t>(root)]) continue;
        std::vector<std::pair<int, size_t>> stack{{root, 0}};
        state[static_cast<size_t>(root)] = 1;
        while (!stack.empty()) {
            auto& [v, k] = stack.back();
            const auto& in = inputs[static_cast<size_t>(v)];
            if (k < in.size()) {
                int p = in[k];
                size_t edge = k++;
                if (p < 0 || p >= n || p == v) {
                    isBack[static_cast<size_t>(v)][edge] = true;
                } else if (state[static_cast<size_t>(p)] == 1) {
                    isBack[static_cast<size_t>(v)][edge] = true;  // cycle: ignore this edge
                } else if (state[static_cast<size_t>(p)] == 0) {
                    state[static_cast<size_t>(p)] = 1;
                    stack.emplace_back(p, 0);
                }
            } else {
                state[static_cast<size_t>(v)] = 2;
                topo.push_back(v);
                stack.pop_back();
            }
        }
    }

    Layered g;
    g.real = n;
    g.layer.assign(static_cast<size_t>(n), 0);
    for (int v : topo) {
        const auto& in = inputs[static_cast<size_t>(v)];
        for (size_t k = 0; k < in.size(); ++k)
            if (!isBack[static_cast<size_t>(v)][k])
                g.layer[static_cast<size_t>(v)] =
                    std::max(g.layer[static_cast<size_t>(v)], g.layer[static_cast<size_t>(in[k])] + 1);
    }
    // Pull sources down next to their first consumer (inputs of a second tower start beside it).
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
        int v = *it;
        if (!inputs[static_cast<size_t>(v)].empty() || consumers[static_cast<size_t>(v)].empty()) continue;
        int m = 1 << 30;
        for (int c : consumers[static_cast<size_t>(v)]) m = std::min(m, g.layer[static_cast<size_t>(c)]);
        g.layer[static_cast<size_t>(v)] = std::max(0, m - 1);
    }
    int maxLayer = *std::max_element(g.layer.begin(), g.layer.end());
    g.up.assign(static_cast<size_t>(n), {});
    g.down.assign(static_cast<size_t>(n), {});
    auto addVertex = [&](int layer) {
        g.layer.push_back(layer);
        g.up.emplace_back();
        g.down.emplace_back();
        return static_cast<int>(g.layer.size()) - 1;
    };
    for (int v : topo) {
        const auto& in = inputs[static_cast<size_t>(v)];
        for (size_t k = 0; k < in.size(); ++k) {
            if (isBack[static_cast<size_t>(v)][k]) continue;
            int prev = in[k];
            for (int l = g.layer[static_cast<size_t>(prev)] + 1; l < g.layer[static_cast<size_t>(v)]; ++l) {
                int d = addVertex(l);
                g.down[static_cast<size_t>(prev)].push_back(d);
                g.up[static_cast<size_t>(d)].push_back(prev);
                prev = d;
            }
            g.down[static_cast<size_t>(prev)].push_back(v);
            g.up[static_cast<size_t>(v)].push_back(prev);
        }
    }
    const int total = static_cast<int>(g.layer.size());
    g.layers.assign(static_cast<size_t>(maxLayer + 1), {});
    g.posInLayer.assign(static_cast<size_t>(total), 0);
    // Initial order: real vertices in topological order, then the dummies in creation order.
    std::vector<int> order;
    order.reserve(static_cast<size_t>(total));
    for (int v : topo) order.push_back(v);
    for (int v = n; v < total; ++v) order.push_back(v);
    for (int v : order) g.layers[static_cast<size_t>(g.layer[static_cast<size_t>(v)])].push_back(v);
    renumber(g);

    long best = totalCrossings(g);
    auto bestLayers = g.layers;
    for (int s = 0; s < opt.sweeps && best > 0; ++s) {
        sweep(g, s % 2 == 0);
        long c = totalCrossings(g);
        if (c < best) {
            best = c;
            bestLayers = g.layers;
        }
    }
    g.layers = bestLayers;
    renumber(g);

    // Coordinates: centres placed towards the mean of their neighbours, order kept.
    const double w = opt.nodeSize.width(), dummyW = 16.0;
    auto width = [&](int v) { return v < n ? w : dummyW; };
    std::vector<double> x(static_cast<size_t>(total), 0.0);
    for (const auto& layer : g.layers) {
        double cursor = 0;
        for (int v : layer) {
            x[static_cast<size_t>(v)] = cursor + width(v) / 2;
            cursor += width(v) + opt.nodeGap;
        }
    }
    auto relax = [&](bool downwards) {
        int L = static_cast<int>(g.layers.size());
        for (int li = 0; li < L; ++li) {
            int l = downwards ? li : L - 1 - li;
            const auto& layer = g.layers[static_cast<size_t>(l)];
            if (layer.empty()) continue;
            std::vector<double> desired(layer.size()), sep(layer.size(), 0.0);
            for (size_t k = 0; k < layer.size(); ++k) {
                int v = layer[k];
                const auto& nb1 = downwards ? g.up[static_cast<size_t>(v)] : g.down[static_cast<size_t>(v)];
                const auto& nb2 = downwards ? g.down[static_cast<size_t>(v)] : g.up[static_cast<size_t>(v)];
                const auto& nb = nb1.empty() ? nb2 : nb1;
                if (nb.empty()) {
                    desired[k] = x[static_cast<size_t>(v)];
                } else {
                    double s = 0;
                    for (int u : nb) s += x[static_cast<size_t>(u)];
                    desired[k] = s / static_cast<double>(nb.size());
                }
                if (k + 1 < layer.size()) sep[k] = (width(v) + width(layer[k + 1])) / 2 + opt.nodeGap;
            }
            auto placed = placeInOrder(desired, sep);
            for (size_t k = 0; k < layer.size(); ++k) x[static_cast<size_t>(layer[k])] = placed[k];
        }
    };
    for (int it = 0; it < 4; ++it) {
        relax(true);
        relax(false);
    }
    relax(true);
    double minX = 1e300;
    for (int v = 0; v < total; ++v) minX = std::min(minX, x[static_cast<size_t>(v)] - width(v) / 2);
    for (int v = 0; v < n; ++v)
        result[static_cast<size_t>(v)] =
            QPointF(x[static_cast<size_t>(v)] - w / 2 - minX,
                    g.layer[static_cast<size_t>(v)] * (opt.nodeSize.height() + opt.layerGap));
    return result;
}

int countCrossings(const std::vector<std::vector<int>>& inputs, const std::vector<QPointF>& pos) {
    // Edges between nodes on adjacent rows, as (row, x_from, x_to).
    std::map<double, std::vector<std::pair<double, double>>> rows;
    for (size_t i = 0; i < inputs.size(); ++i)
        for (int p : inputs[i]) {
            if (p < 0 || static_cast<size_t>(p) >= pos.size()) continue;
            rows[pos[static_cast<size_t>(p)].y()].emplace_back(pos[static_cast<size_t>(p)].x(), pos[i].x());
        }
    int c = 0;
    for (auto& [y, edges] : rows)
        for (size_t i = 0; i < edges.size(); ++i)
            for (size_t j = i + 1; j < edges.size(); ++j)
                if ((edges[i].first - edges[j].first) * (edges[i].second - edges[j].second) < 0) ++c;
    return c;
}

}  // namespace kiln::ui
