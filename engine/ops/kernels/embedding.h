// SPDX-License-Identifier: Apache-2.0
// Embedding lookup kernels (float32): forward row gather from a [vocab, dim] table and the
// deterministic, race-free backward scatter-add into the table's gradient.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/reduce.h"

namespace kiln::engine::kernels {

// y[i, :] = table[ids[i], :] for i < n; ids holds n token ids stored as floats (any input shape,
// flattened), table is row-major [vocab, dim], y is [n, dim] (OVERWRITTEN).
// Every id is validated first (an integer in [0, vocab)); on the first invalid one nothing is
// written and the returned error names its position and value, so the caller can report
// "id 12 out of range [0, 10) at position 3". Returns an ok() IndexError otherwise.
[[nodiscard]] IndexError embeddingForward(const float* ids, int64_t n, const float* table, int64_t vocab,
                                          int64_t dim, float* y, ThreadPool& pool);

// dtable[ids[i], :] += dy[i, :] for i < n (ACCUMULATES; dtable is [vocab, dim]). Deterministic and
// race-free without atomics or scratch: each task owns a contiguous range of vocabulary rows and
// scans all ids in order, so every row receives its contributions in increasing i whatever the
// pool size. Ids outside [0, vocab) (which embeddingForward rejects) are skipped.
void embeddingBackward(const float* ids, int64_t n, const float* dy, int64_t vocab, int64_t dim,
                       float* dtable, ThreadPool& pool);

}  // namespace kiln::engine::kernels
