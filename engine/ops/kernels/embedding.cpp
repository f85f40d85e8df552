// SPDX-License-Identifier: Apache-2.0
// Embedding gather / scatter-add. The backward partitions the vocabulary (ownership of table rows),
// not the ids, so no two tasks ever write the same row.
#include "engine/ops/kernels/embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::engine::kernels {

namespace {

// Elements of work per parallel chunk, at least.
constexpr int64_t kGrain = 16384;

}  // namespace

IndexError embeddingForward(const float* ids, int64_t n, const float* table, int64_t vocab, int64_t dim,
                            float* y, ThreadPool& pool) {
    IndexError bad = findInvalidIndex(ids, n, vocab, pool);
    if (!bad.ok() || n <= 0 || dim <= 0) return bad;
    const int64_t grainRows = std::max<int64_t>(1, kGrain / dim);
    pool.parallelFor(n, grainRows, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const int64_t id = static_cast<int64_t>(ids[i]);
            std::memcpy(y + i * dim, table + id * dim, static_cast<size_t>(dim) * sizeof(float));
        }
    });
    return bad;
}

void embeddingBackward(const float* ids, int64_t n, const float* dy, int64_t vocab, int64_t dim,
                       float* dtable, ThreadPool& pool) {
    if (n <= 0 || dim <= 0 || vocab <= 0) return;
    // Every task reads all n ids; with little total work one task does everything.
    const int64_t work = n * dim;
    const int64_t grainRows = work < kGrain ? vocab : 1;
    pool.parallelFor(vocab, grainRows, [&](int64_t v0, int64_t v1) {
        // Float bounds: NaN and out-of-range ids fail the test and are skipped, and the cast below
        // only ever sees an in-range value.
        const float lo = static_cast<float>(v0), hi = static_cast<float>(v1);
        for (int64_t i = 0; i < n; ++i) {
            const float v = ids[i];
            if (!(v >= lo && v < hi)) continue;
            const int64_t id = static_cast<int64_t>(v);
            float* dst = dtable + id * dim;
            const float* src = dy + i * dim;
            for (int64_t j = 0; j < dim; ++j) dst[j] += src[j];
        }
    });
}

}  // namespace kiln::engine::kernels
