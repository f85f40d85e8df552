// SPDX-License-Identifier: Apache-2.0
// GEMM: plain-loop paths for tiny products and matrix-vector shapes, otherwise the register-tile
// GEMM (tile_kernels_isa.cpp) of the instruction set chosen at start-up, run per thread block.
#include "engine/ops/kernels/gemm.h"

// GCC 12 flags Eigen's AVX-512 unpack intrinsics (_mm512_undefined_ps) as maybe-uninitialised;
// the value is intentionally undefined, so silence that one false positive for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cstddef>

#include "engine/core/cpu_isa.h"
#include "engine/ops/kernels/tile_kernels.h"

namespace kiln::engine::kernels {
namespace {

// Below this many multiply-adds, setting up register tiles costs more than it saves: plain loops.
constexpr int64_t kTinyMacs = 24 * 24 * 24;
// Below this many multiply-adds, run on the calling thread: waking the pool costs a few
// microseconds, about what a 2^18-MAC product takes on one core.
constexpr int64_t kSerialMacs = int64_t{1} << 18;
// Thread blocks start at multiples of this, so that a split between columns keeps whole vectors
// (16 floats with AVX-512) in every block but the last.
constexpr int64_t kSplitAlign = 16;

struct GemmArgs {
    bool transA, transB;
    int64_t M, N, K;
    float alpha;
    const float* A;
    int64_t lda;
    const float* B;
    int64_t ldb;
    float beta;
    float* C;
    int64_t ldc;

    float opA(int64_t i, int64_t k) const { return transA ? A[k * lda + i] : A[i * lda + k]; }
    float opB(int64_t k, int64_t j) const { return transB ? B[j * ldb + k] : B[k * ldb + j]; }
};

float dotContiguous(const float* a, const float* b, int64_t n) {
    // Eigen's dot uses several packet accumulators; a scalar loop would not vectorise.
    return Eigen::Map<const Eigen::VectorXf>(a, n).dot(Eigen::Map<const Eigen::VectorXf>(b, n));
}

void scaleBlock(const GemmArgs& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    if (p.beta == 1.0f) return;
    for (int64_t i = i0; i < i1; ++i) {
        float* c = p.C + i * p.ldc;
        if (p.beta == 0.0f) {
            for (int64_t j = j0; j < j1; ++j) c[j] = 0.0f;
        } else {
            for (int64_t j = j0; j < j1; ++j) c[j] *= p.beta;
        }
    }
}

// Plain loops, ordered so that the innermost loop is unit-stride whenever the layout allows.
void loopBlock(const GemmArgs& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    if (p.N == 1 && p.transA) {
        // Matrix-vector with A^T: axpy down the columns of the stored A.
        for (int64_t k = 0; k < p.K; ++k) {
            const float bk = p.alpha * p.opB(k, 0);
            const float* a = p.A + k * p.lda;
            for (int64_t i = i0; i < i1; ++i) p.C[i * p.ldc] += bk * a[i];
        }
        return;
    }
    for (int64_t i = i0; i < i1; ++i) {
        float* c = p.C + i * p.ldc;
        if (!p.transB) {
            if (p.N == 1 && !p.transA && p.ldb == 1) {
                c[0] += p.alpha * dotContiguous(p.A + i * p.lda, p.B, p.K);
                continue;
            }
            for (int64_t k = 0; k < p.K; ++k) {
                const float a = p.alpha * p.opA(i, k);
                const float* b = p.B + k * p.ldb;
                for (int64_t j = j0; j < j1; ++j) c[j] += a * b[j];
            }
        } else if (!p.transA) {
            const float* a = p.A + i * p.lda;
            for (int64_t j = j0; j < j1; ++j) c[j] += p.alpha * dotContiguous(a, p.B + j * p.ldb, p.K);
        } else {
            for (int64_t j = j0; j < j1; ++j) {
                const float* b = p.B + j * p.ldb;
                float s = 0.0f;
                for (int64_t k = 0; k < p.K; ++k) s += p.A[k * p.lda + i] * b[k];
                c[j] += p.alpha * s;
            }
        }
    }
}

// C rows [i0, i1) x cols [j0, j1) = alpha op(A) op(B) + beta C through the register-tile GEMM of
// the instruction set chosen at start-up.
void tileBlock(const GemmArgs& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const float* a = p.transA ? p.A + i0 : p.A + i0 * p.lda;
    const float* b = p.transB ? p.B + j0 * p.ldb : p.B + j0;
    float* c = p.C + i0 * p.ldc + j0;
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::tileGemm(p.transA, p.transB, i1 - i0, j1 - j0, p.K, p.alpha, a, p.lda, b, p.ldb, p.beta, c, p.ldc);
    else
        avx2::tileGemm(p.transA, p.transB, i1 - i0, j1 - j0, p.K, p.alpha, a, p.lda, b, p.ldb, p.beta, c, p.ldc);
}

void runBlock(const GemmArgs& p, bool useLoops, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    if (i0 >= i1 || j0 >= j1) return;
    if (!useLoops && p.K > 0 && p.alpha != 0.0f) {
        tileBlock(p, i0, i1, j0, j1);
        return;
    }
    scaleBlock(p, i0, i1, j0, j1);
    if (p.K == 0 || p.alpha == 0.0f) return;
    loopBlock(p, i0, i1, j0, j1);
}

// Start of block t of `blocks` over [0, dim), rounded to kSplitAlign.
int64_t blockStart(int64_t dim, int64_t t, int64_t blocks) {
    if (t >= blocks) return dim;
    return std::min(dim, (dim * t / blocks) / kSplitAlign * kSplitAlign);
}

void run(const GemmArgs& p, ThreadPool* pool) {
    if (p.M <= 0 || p.N <= 0) return;
    const int64_t macs = p.M * p.N * std::max<int64_t>(p.K, 1);
    const bool useLoops = p.M == 1 || p.N == 1 || macs < kTinyMacs;
    int64_t threads = (pool && macs >= kSerialMacs) ? pool->size() : 1;
    const bool splitRows = p.M >= p.N;
    const int64_t dim = splitRows ? p.M : p.N;
    const int64_t blocks = std::max<int64_t>(1, std::min(threads, (dim + kSplitAlign - 1) / kSplitAlign));
    auto body = [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t s = blockStart(dim, b, blocks), e = blockStart(dim, b + 1, blocks);
            if (splitRows)
                runBlock(p, useLoops, s, e, 0, p.N);
            else
                runBlock(p, useLoops, 0, p.M, s, e);
        }
    };
    if (blocks == 1 || pool == nullptr)
        body(0, blocks);
    else
        pool->parallelFor(blocks, 1, body);  // blocks <= pool size: one block per chunk
}

}  // namespace

void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool& pool) {
    run(GemmArgs{transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc}, &pool);
}

void gemmSerial(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    run(GemmArgs{transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc}, nullptr);
}

}  // namespace kiln::engine::kernels
