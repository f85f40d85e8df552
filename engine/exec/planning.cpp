// SPDX-License-Identifier: Apache-2.0
// Gradient needs per node and greedy arena placement of liveness-interval buffers.
#include "engine/exec/planning.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace kiln::engine::exec {

GradientNeeds gradientNeeds(const ops::ModelInfo& model, const ParamStore& params,
                            const std::vector<int>& lossNodes, bool training, bool inputGradients) {
    const size_t n = model.nodes.size();
    GradientNeeds needs;
    needs.hasTrainable.assign(n, 0);
    needs.needGrad.assign(n, 0);
    std::vector<char> reqGrad(n, 0), reachLoss(n, 0);
    // Forward: a node requires a gradient if it or anything it reads owns a trainable parameter
    // (or is an Input, when input gradients are wanted).
    for (int i : model.order) {
        const auto si = static_cast<size_t>(i);
        const auto& ni = model.nodes[si];
        for (size_t k = 0; k < ni.params.size(); ++k)
            if (params.params()[static_cast<size_t>(params.index(i, k))].trainable)
                needs.hasTrainable[si] = 1;
        char r = static_cast<char>(needs.hasTrainable[si] | (inputGradients && ni.def->kind == ops::OpKind::Input));
        for (int p : ni.inputs) r = static_cast<char>(r | reqGrad[static_cast<size_t>(p)]);
        reqGrad[si] = r;
    }
    // Backward: a node reaches a loss if a loss reads it or it feeds a node that does.
    for (int o : lossNodes) reachLoss[static_cast<size_t>(o)] = 1;
    for (auto k = model.order.size(); k-- > 0;) {
        const int i = model.order[k];
        if (!reachLoss[static_cast<size_t>(i)]) continue;
        for (int p : model.nodes[static_cast<size_t>(i)].inputs) reachLoss[static_cast<size_t>(p)] = 1;
    }
    if (training)
        for (size_t i = 0; i < n; ++i) needs.needGrad[i] = static_cast<char>(reqGrad[i] && reachLoss[i]);
    return needs;
}

void LiveBuffer::use(int pos) {
    first = std::min(first, pos);
    last = std::max(last, pos);
}

StepTimeline::StepTimeline(const ops::ModelInfo& model, int losses)
    : m_orderIndex(model.nodes.size(), 0), m_forward(static_cast<int>(model.order.size())), m_losses(losses) {
    for (int k = 0; k < m_forward; ++k) m_orderIndex[static_cast<size_t>(model.order[static_cast<size_t>(k)])] = k;
}

size_t alignUp(size_t n, size_t align) {
    return (n + align - 1) / align * align;
}

size_t placeBuffers(std::vector<LiveBuffer>& bufs, size_t alignBytes) {
    std::vector<size_t> order(bufs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return bufs[a].bytes > bufs[b].bytes; });
    std::vector<size_t> placed;
    size_t total = 0;
    for (size_t id : order) {
        LiveBuffer& b = bufs[id];
        std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping placed buffers
        for (size_t p : placed) {
            const LiveBuffer& o = bufs[p];
            if (o.first <= b.last && b.first <= o.last)
                busy.emplace_back(o.offset, o.offset + alignUp(o.bytes, alignBytes));
        }
        std::sort(busy.begin(), busy.end());
        size_t offset = 0;
        const size_t need = alignUp(b.bytes, alignBytes);
        for (const auto& [start, end] : busy) {
            if (offset + need <= start) break;
            offset = std::max(offset, end);
        }
        b.offset = offset;
        total = std::max(total, offset + need);
        placed.push_back(id);
    }
    return total;
}

}  // namespace kiln::engine::exec
