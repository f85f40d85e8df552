// SPDX-License-Identifier: Apache-2.0
// Gather and its scatter-add gradient, parallel over the (sample, outer) slices, which no two
// tasks share.
#include "engine/ops/kernels/gather.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::engine::kernels {

namespace {

// Elements of work per parallel chunk, at least.
constexpr int64_t kGrain = 16384;

// The row an index picks, or -1 when it is not an integer in [-axis, axis) (NaN included).
inline int64_t rowOf(float v, int64_t axis) {
    const double x = v;
    if (!(x >= -static_cast<double>(axis) && x < static_cast<double>(axis)) || x != std::floor(x)) return -1;
    const auto i = static_cast<int64_t>(x);
    return i < 0 ? i + axis : i;
}

}  // namespace

IndexError gatherForward(const float* data, const float* indices, const GatherDims& d, float* y, ThreadPool& pool) {
    IndexError bad;
    bad.limit = d.axis;
    const int64_t n = d.perSample ? d.batch * d.count : d.count;
    for (int64_t i = 0; i < n; ++i)
        if (rowOf(indices[i], d.axis) < 0) {
            bad.position = i;
            bad.value = indices[i];
            return bad;
        }
    const int64_t slices = d.batch * d.outer;
    if (slices <= 0 || d.count <= 0 || d.inner <= 0) return bad;
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, d.count * d.inner));
    pool.parallelFor(slices, grain, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            const float* idx = indices + (d.perSample ? (s / d.outer) * d.count : 0);
            const float* src = data + s * d.axis * d.inner;
            float* dst = y + s * d.count * d.inner;
            for (int64_t j = 0; j < d.count; ++j)
                std::memcpy(dst + j * d.inner, src + rowOf(idx[j], d.axis) * d.inner, static_cast<size_t>(d.inner) * sizeof(float));
        }
    });
    return bad;
}

void gatherBackward(const float* indices, const float* dy, const GatherDims& d, float* ddata, ThreadPool& pool) {
    const int64_t slices = d.batch * d.outer;
    if (slices <= 0 || d.count <= 0 || d.inner <= 0) return;
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, d.count * d.inner));
    pool.parallelFor(slices, grain, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            const float* idx = indices + (d.perSample ? (s / d.outer) * d.count : 0);
            const float* src = dy + s * d.count * d.inner;
            float* dst = ddata + s * d.axis * d.inner;
            for (int64_t j = 0; j < d.count; ++j) {
                const int64_t row = rowOf(idx[j], d.axis);
                if (row < 0) continue;
                float* to = dst + row * d.inner;
                const float* from = src + j * d.inner;
                for (int64_t q = 0; q < d.inner; ++q) to[q] += from[q];
            }
        }
    });
}

}  // namespace kiln::engine::kernels
