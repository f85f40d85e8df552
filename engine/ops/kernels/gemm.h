// SPDX-License-Identifier: Apache-2.0
// Single-precision GEMM on row-major matrices: register-tile kernels for AVX2 or AVX-512 (chosen
// at run time) driven by Kiln's thread pool, with a persistent per-thread panel buffer so
// steady-state calls never touch the heap.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// C = alpha * op(A) * op(B) + beta * C, all row-major, op(X) = X or X^T.
//   op(A) is M x K: A is stored [M, lda] (transA false) or [K, lda] (transA true).
//   op(B) is K x N: B is stored [K, ldb] (transB false) or [N, ldb] (transB true).
//   C is stored [M, ldc].
// BLAS semantics for beta == 0: C is not read, so it may hold NaN or garbage. C must not overlap
// A or B. No alignment is required of any pointer or leading dimension.
// The larger of M and N is split into at most pool.size() contiguous blocks, each computed by
// one thread with a single-threaded tile product; the split depends only on the sizes and the
// pool size, so results are bit-identical run to run. Safe to call from inside a pool task
// (the pool then runs the blocks inline on the calling thread).
// Allocation: the panel buffers live in thread_local storage and only grow, so after one call
// with the same sizes (on the same pool) a call performs no heap allocation at all.
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool& pool);

// The same product computed entirely on the calling thread (for callers that already
// parallelise at a coarser level). Same allocation guarantee, per calling thread.
void gemmSerial(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace kiln::engine::kernels
