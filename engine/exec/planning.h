// SPDX-License-Identifier: Apache-2.0
// Analysis shared by every plan compiler (CPU and CUDA): which nodes need gradients, and the
// placement of liveness-interval buffers in one arena.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/exec/param_store.h"
#include "engine/ops/model.h"

namespace kiln::engine::exec {

// Per node (indexed like model.nodes), 1 or 0.
struct GradientNeeds {
    std::vector<char> hasTrainable;  // the node owns a trainable parameter
    std::vector<char> needGrad;      // the node's output needs a gradient: it depends on a trainable
                                     // parameter (or an Input, with inputGradients) and a loss
                                     // depends on it (always 0 when not training)
};

// lossNodes: the model nodes the losses (or gradient seeds) read, already resolved from their
// names. inputGradients: the Input nodes count as needing gradients too (saliency maps).
GradientNeeds gradientNeeds(const ops::ModelInfo& model, const ParamStore& params,
                            const std::vector<int>& lossNodes, bool training, bool inputGradients = false);

// The step positions of a plan, on which buffer lifetimes are measured: forward steps 0..F-1 in
// model order, the L loss steps F..F+L-1, backward steps F+L..2F+L-1 in reverse model order;
// end() is one past the last.
class StepTimeline {
public:
    StepTimeline(const ops::ModelInfo& model, int losses);
    int forward(int node) const { return m_orderIndex[static_cast<size_t>(node)]; }
    int loss(int l) const { return m_forward + l; }
    int backward(int node) const { return m_forward + m_losses + (m_forward - 1 - forward(node)); }
    int end() const { return 2 * m_forward + m_losses; }

private:
    std::vector<int> m_orderIndex;  // per node: its position in model.order
    int m_forward = 0, m_losses = 0;
};

// A buffer alive from step position `first` to `last` inclusive; `offset` is its byte offset in
// the arena once placed.
struct LiveBuffer {
    size_t bytes = 0;
    int first = 0;
    int last = 0;
    size_t offset = 0;
    void use(int pos);
};

// `n` rounded up to a multiple of `align`.
size_t alignUp(size_t n, size_t align);

// Sets every buffer's offset so that buffers with overlapping intervals do not overlap in the
// arena, each starting at a multiple of `alignBytes` and taking its size rounded up to it;
// returns the arena size in bytes. Greedy: largest first, each at the lowest offset free during
// its interval (ties keep the buffers' order).
size_t placeBuffers(std::vector<LiveBuffer>& bufs, size_t alignBytes);

}  // namespace kiln::engine::exec
