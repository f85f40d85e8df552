// SPDX-License-Identifier: Apache-2.0
// Elementwise float32 kernels (add, subtract, multiply, addN, scale, concat, copies, fills) and the
// aligned parallel loop the other elementwise-style kernels share.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// Conventions for every kernel in this folder: forward kernels OVERWRITE their output; backward
// kernels ACCUMULATE (+=) into every gradient output, which the caller zeroes first (so fan-out and
// shared weights sum for free). Nullable gradient outputs are skipped. An output may alias an
// input of the same shape exactly (same pointer, in-place) unless stated otherwise; partial
// overlap is not supported. Kernels never allocate.

// Runs fn(begin, end) over [0, n) in chunks of at least `grain` elements whose boundaries are
// multiples of 64 elements (256 bytes): chunks never share a cache line, a vectorised loop splits
// the same way into body and tail for any pool size, and 4-word RNG groups never straddle chunks.
void parallelElements(ThreadPool& pool, int64_t n, int64_t grain,
                      FunctionRef<void(int64_t, int64_t)> fn);

// y = 0.
void zero(float* y, int64_t n, ThreadPool& pool);
// y = value.
void fill(float* y, int64_t n, float value, ThreadPool& pool);
// y = x (no-op when x == y).
void copy(const float* x, float* y, int64_t n, ThreadPool& pool);
// dst[r*dstStride + c] = src[r*srcStride + c] for r < rows, c < cols (strides in elements); for
// slicing and packing row blocks. src and dst must not overlap.
void copy2d(const float* src, int64_t srcStride, float* dst, int64_t dstStride, int64_t rows,
            int64_t cols, ThreadPool& pool);
// dx += dy.
void accumulate(const float* dy, float* dx, int64_t n, ThreadPool& pool);
// dx += alpha * dy.
void accumulateScaled(const float* dy, float alpha, float* dx, int64_t n, ThreadPool& pool);

// y = a + b (same shape; broadcasting is the caller's business).
void add(const float* a, const float* b, float* y, int64_t n, ThreadPool& pool);
// da += dy; db += dy (either nullable).
void addBackward(const float* dy, float* da, float* db, int64_t n, ThreadPool& pool);

// y = a - b.
void subtract(const float* a, const float* b, float* y, int64_t n, ThreadPool& pool);
// da += dy; db -= dy (either nullable).
void subtractBackward(const float* dy, float* da, float* db, int64_t n, ThreadPool& pool);

// y = a * b.
void multiply(const float* a, const float* b, float* y, int64_t n, ThreadPool& pool);
// da += dy * b; db += dy * a (either nullable; a and b are the forward inputs).
void multiplyBackward(const float* a, const float* b, const float* dy, float* da, float* db,
                      int64_t n, ThreadPool& pool);

// Per-sample, per-channel scaling (squeeze-and-excitation): x and y are [n, positions, c], v is
// [n, c]; y[b, p, ch] = x[b, p, ch] * v[b, ch]. y may equal x.
void multiplyChannels(const float* x, const float* v, float* y, int64_t n, int64_t positions, int64_t c,
                      ThreadPool& pool);
// dv[b, ch] += Σ_p g[b, p, ch] for g [n, positions, c]: the gradient of the broadcast operand
// (fixed summation order, so deterministic for any pool size).
void sumOverPositions(const float* g, float* dv, int64_t n, int64_t positions, int64_t c, ThreadPool& pool);

// y = inputs[0] + inputs[1] + ... + inputs[count-1], added left to right per element (fixed
// order, so deterministic), then max(y, 0) with `relu`. y may alias any input. count == 0 gives
// zeros. The backward of addN is `accumulate(dy, dx_k)` for each input k (with relu, the ReLU's
// gradient from y first).
void addN(const float* const* inputs, int count, float* y, int64_t n, ThreadPool& pool, bool relu = false);

// The backward of addN for every input in one pass: with g = dy, or with `reluOut` (the forward
// output of addN with relu) g = reluOut > 0 ? dy : 0, dxs[k] += g, or dxs[k] = g where
// overwrite[k] is non-zero (overwrite may be null). dxs[k] may be null. A buffer named twice
// (Add(x, x)) receives both terms in input order, and must not be overwritten.
void addNBackward(const float* dy, const float* reluOut, float* const* dxs, const uint8_t* overwrite, int count,
                  int64_t n, ThreadPool& pool);

// y = s * x. Its backward is accumulateScaled(dy, s, dx).
void scale(const float* x, float s, float* y, int64_t n, ThreadPool& pool);

// Concatenation along one axis. Input k is viewed as [outer, inners[k]] (row-major: everything
// before the axis is `outer`, the axis times everything after it is inners[k]); the output is
// [outer, Σ inners] with input k occupying columns [Σ_{j<k} inners[j], ... + inners[k]).
// The output must not overlap any input.
void concatForward(const float* const* inputs, const int64_t* inners, int count, int64_t outer,
                   float* y, ThreadPool& pool);
// dxs[k] += the matching column block of dy (dxs[k] nullable).
void concatBackward(const float* dy, const int64_t* inners, int count, int64_t outer,
                    float* const* dxs, ThreadPool& pool);

}  // namespace kiln::engine::kernels
