// SPDX-License-Identifier: Apache-2.0
// Gather kernels (float32): rows of one axis of a per-sample value picked by indices, and the
// deterministic, race-free backward scatter-add into the data's gradient.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/reduce.h"

namespace kiln::engine::kernels {

// The data is [batch, outer, axis, inner] flattened row-major (outer: the dimensions between the
// batch and the gathered axis, inner: those after it). `count` indices pick rows of the axis; the
// output is [batch, outer, count, inner]. With `perSample` the indices are [batch, count] (each
// sample its own), else one set of `count` indices serves every sample.
struct GatherDims {
    int64_t batch = 0, outer = 1, axis = 1, inner = 1, count = 0;
    bool perSample = false;
};

// y[b, o, j, :] = data[b, o, idx(b, j), :], where idx is the index as stored (an integer held in a
// float) plus `axis` when negative (as ONNX counts from the end). Every index is validated first
// (an integer in [-axis, axis)); on the first invalid one nothing is written and the returned error
// names its flat position in the indices and its value (limit = axis).
[[nodiscard]] IndexError gatherForward(const float* data, const float* indices, const GatherDims& d, float* y,
                                       ThreadPool& pool);

// ddata[b, o, idx(b, j), :] += dy[b, o, j, :] (ACCUMULATES). Each task owns whole [axis, inner]
// slices of ddata (one per (b, o)) and adds its rows in increasing j, so the result does not
// depend on the pool size. Invalid indices (which gatherForward rejects) are skipped.
void gatherBackward(const float* indices, const float* dy, const GatherDims& d, float* ddata, ThreadPool& pool);

}  // namespace kiln::engine::kernels
