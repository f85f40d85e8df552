// SPDX-License-Identifier: Apache-2.0
// Deterministic float32 reductions (sum, sum of squares, max-abs) and class-index validation.
// Block boundaries depend only on the element count, never on the thread count, so every result
// is bit-identical for any pool size and on every run.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// Most blocks one reduction is split into; the per-block partials live in a stack array of this
// many doubles, so reductions never allocate.
inline constexpr int64_t kMaxReduceBlocks = 256;

// Splits [0, n) into B = min(kMaxReduceBlocks, ceil(n / minBlock)) contiguous blocks, block b being
// [n*b/B, n*(b+1)/B), calls partial(begin, end) once per block (blocks run in parallel) and
// returns the partials added in block order. The block layout depends only on (n, minBlock), so
// the result does not depend on the pool size. minBlock is in items (choose it so that one block
// is roughly 16K elements of work). `partial` may also write outputs for its own items.
double blockedSum(int64_t n, int64_t minBlock, FunctionRef<double(int64_t, int64_t)> partial,
                  ThreadPool& pool);

// Σ x[i], accumulated in double.
double reduceSum(const float* x, int64_t n, ThreadPool& pool);

// Σ x[i]², accumulated in double (for global gradient-norm clipping: sum the per-tensor values in
// a fixed tensor order, then take the square root).
double reduceSumSquares(const float* x, int64_t n, ThreadPool& pool);

// max |x[i]|; 0 for n == 0; NaN when any element is NaN (so a clipping step sees the problem).
float reduceMaxAbs(const float* x, int64_t n, ThreadPool& pool);

// The first invalid entry of an array of class indices / ids stored as floats, so a caller can say
// e.g. "label 12 out of range [0, 10) at sample 3". position < 0 means every entry was valid.
struct IndexError {
    int64_t position = -1;  // flat position in the index array, -1 when all are valid
    float value = 0.0f;     // the offending value as stored
    int64_t limit = 0;      // the valid range is [0, limit)

    bool ok() const { return position < 0; }
};

// Checks that every indices[i] is an integer in [0, limit) (NaN, ±inf and fractions are invalid)
// and reports the lowest invalid position.
IndexError findInvalidIndex(const float* indices, int64_t n, int64_t limit, ThreadPool& pool);

}  // namespace kiln::engine::kernels
