// SPDX-License-Identifier: Apache-2.0
// GEMM: plain-loop paths for tiny products and matrix-vector shapes, otherwise, per thread block,
// the register-tile GEMM (tile_kernels_isa.cpp) or, with AVX2 and more than a few rows, Eigen's
// packed general_matrix_matrix_product with grow-only thread_local pack buffers: each is the
// faster one for its instruction set and shape (bench/RESULTS.md).
#include "engine/ops/kernels/gemm.h"

// GCC 12 flags Eigen's AVX-512 unpack intrinsics (_mm512_undefined_ps) as maybe-uninitialised;
// the value is intentionally undefined, so silence that one false positive for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cstddef>

#include "engine/core/allocator.h"
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
// (16 floats with AVX-512) and Eigen's micro-kernel tiles in every block but the last.
constexpr int64_t kSplitAlign = 16;
// With AVX2, products of at most this many rows of op(A) use the register tiles (useTiles).
constexpr int64_t kAvx2TileRows = 8;

using Index = Eigen::Index;

// Eigen's packed panels for one thread. They only grow, so once a thread has run a product of
// some shape it can run it again without allocating. Freed when the thread exits.
struct PackBuffers {
    float* a = nullptr;
    size_t capA = 0;
    float* b = nullptr;
    size_t capB = 0;

    PackBuffers() = default;
    PackBuffers(const PackBuffers&) = delete;
    PackBuffers& operator=(const PackBuffers&) = delete;
    ~PackBuffers() {
        alignedFree(a);
        alignedFree(b);
    }

    // 64-byte aligned, as Eigen's packing uses aligned packet stores.
    static float* grow(float*& p, size_t& cap, size_t need) {
        if (need > cap) {
            alignedFree(p);
            p = nullptr;
            cap = 0;
            p = static_cast<float*>(alignedAlloc(need * sizeof(float)));
            cap = need;
        }
        return p;
    }
};

thread_local PackBuffers t_pack;

// A level3_blocking whose panels point at this thread's persistent buffers instead of being
// allocated per call (which is what Eigen's own gemm_blocking_space does above
// EIGEN_STACK_ALLOCATION_LIMIT). Block sizes come from Eigen's cache-size heuristic.
class ThreadBlocking : public Eigen::internal::level3_blocking<float, float> {
public:
    ThreadBlocking(Index rows, Index cols, Index depth) {
        this->m_mc = rows;
        this->m_nc = cols;
        this->m_kc = depth;
        Eigen::internal::computeProductBlockingSizes<float, float, 1>(this->m_kc, this->m_mc, this->m_nc,
                                                                      Index{1});
        this->m_blockA =
            PackBuffers::grow(t_pack.a, t_pack.capA, static_cast<size_t>(this->m_mc * this->m_kc));
        this->m_blockB =
            PackBuffers::grow(t_pack.b, t_pack.capB, static_cast<size_t>(this->m_kc * this->m_nc));
    }
};

// res (col-major, rows x cols, stride resStride) += alpha * lhs(rows x depth) * rhs(depth x cols).
template <int LhsOrder, int RhsOrder>
void packedProduct(Index rows, Index cols, Index depth, const float* lhs, Index lhsStride, const float* rhs,
                   Index rhsStride, float* res, Index resStride, float alpha) {
    ThreadBlocking blocking(rows, cols, depth);
    Eigen::internal::general_matrix_matrix_product<Index, float, LhsOrder, false, float, RhsOrder, false,
                                                   Eigen::ColMajor, 1>::run(rows, cols, depth, lhs, lhsStride,
                                                                            rhs, rhsStride, res, 1, resStride,
                                                                            alpha, blocking, nullptr);
}


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

// C rows [i0, i1) x cols [j0, j1) += alpha * op(A) op(B), through Eigen's packed kernels.
// Eigen is column-major, so we compute the transposed block C^T = op(B)^T op(A)^T, whose
// column-major layout is exactly C's row-major layout.
void packedBlock(const GemmArgs& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const Index rows = j1 - j0, cols = i1 - i0, depth = p.K;
    // op(B)^T (rows x depth): B[k, j] stored row-major is column-major with stride ldb; when
    // transB, B is stored [N, K] which is op(B)^T in row-major order.
    const float* lhs = p.transB ? p.B + j0 * p.ldb : p.B + j0;
    // op(A)^T (depth x cols), by the same reasoning.
    const float* rhs = p.transA ? p.A + i0 : p.A + i0 * p.lda;
    float* res = p.C + i0 * p.ldc + j0;
    constexpr int kCol = Eigen::ColMajor, kRow = Eigen::RowMajor;
    if (!p.transB && !p.transA)
        packedProduct<kCol, kCol>(rows, cols, depth, lhs, p.ldb, rhs, p.lda, res, p.ldc, p.alpha);
    else if (!p.transB && p.transA)
        packedProduct<kCol, kRow>(rows, cols, depth, lhs, p.ldb, rhs, p.lda, res, p.ldc, p.alpha);
    else if (p.transB && !p.transA)
        packedProduct<kRow, kCol>(rows, cols, depth, lhs, p.ldb, rhs, p.lda, res, p.ldc, p.alpha);
    else
        packedProduct<kRow, kRow>(rows, cols, depth, lhs, p.ldb, rhs, p.lda, res, p.ldc, p.alpha);
}

// C rows [i0, i1) x cols [j0, j1) = alpha op(A) op(B) + beta C through the register-tile GEMM of
// this CPU's instruction set.
void tileBlock(const GemmArgs& p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const float* a = p.transA ? p.A + i0 : p.A + i0 * p.lda;
    const float* b = p.transB ? p.B + j0 * p.ldb : p.B + j0;
    float* c = p.C + i0 * p.ldc + j0;
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::tileGemm(p.transA, p.transB, i1 - i0, j1 - j0, p.K, p.alpha, a, p.lda, b, p.ldb, p.beta, c, p.ldc);
    else
        avx2::tileGemm(p.transA, p.transB, i1 - i0, j1 - j0, p.K, p.alpha, a, p.lda, b, p.ldb, p.beta, c, p.ldc);
}

// Whether a product goes to the register tiles: always with AVX-512; with AVX2 when op(A) has at
// most kAvx2TileRows rows. Eigen packs all of op(B) on every call, which a few rows of A do not
// repay: a served model's batch of 2-8 rows runs 1.2-1.9 times as fast on the tiles, while from
// about 16 rows on, and on the reference models' training shapes, Eigen's packed kernels are the
// faster ones (bench/RESULTS.md).
bool useTiles(const GemmArgs& p) {
    if (p.K <= 0 || p.alpha == 0.0f) return false;
    const CpuIsa isa = cpuIsa();
    return isa == CpuIsa::Avx512 || (isa == CpuIsa::Avx2 && p.M <= kAvx2TileRows);
}

void runBlock(const GemmArgs& p, bool useLoops, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    if (i0 >= i1 || j0 >= j1) return;
    if (!useLoops && useTiles(p)) {
        tileBlock(p, i0, i1, j0, j1);
        return;
    }
    scaleBlock(p, i0, i1, j0, j1);
    if (p.K == 0 || p.alpha == 0.0f) return;
    if (useLoops)
        loopBlock(p, i0, i1, j0, j1);
    else
        packedBlock(p, i0, i1, j0, j1);
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
