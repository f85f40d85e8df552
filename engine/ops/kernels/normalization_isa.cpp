// SPDX-License-Identifier: Apache-2.0
// Batch-normalisation kernels, compiled once per instruction set through a wrapper that defines
// KILN_ISA_NS (see tile_kernels_isa.cpp); normalization.cpp dispatches to the variant chosen at
// run time. Per-channel reductions (batch statistics, dgamma, dbeta) run over
// blocks of kChannelBlock channels and, for batch norm with many rows, over fixed chunks of rows
// whose results are combined in chunk order; partial results live on the stack, so no
// workspace is needed and the summation order never depends on the thread count.
#ifndef KILN_ISA_NS
#error "normalization_isa.cpp is compiled through a per-ISA wrapper that defines KILN_ISA_NS"
#endif
#include "engine/ops/kernels/normalization.h"
#include "engine/ops/kernels/normalization_isa.h"
#include "engine/ops/kernels/lane_vectors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

// GCC notes that passing 64-byte vector types by value depends on the ISA; the helpers are local.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace kiln::engine::kernels::KILN_ISA_NS {
namespace {

// One block of 16 channels as native registers: one zmm with AVX-512, two ymm with AVX2. (A
// 64-byte GCC vector in AVX2 code goes through the stack on every operation, which made these
// memory-bound loops 3-6x slower there.)
constexpr int kParts = static_cast<int>(16 / native::kLanes);
struct Vf {
    native::Vf p[kParts];
};
template <typename Op>
inline Vf zip(const Vf& a, const Vf& b, Op op) {
    Vf r;
    for (int k = 0; k < kParts; ++k) r.p[k] = op(a.p[k], b.p[k]);
    return r;
}
inline Vf operator+(const Vf& a, const Vf& b) {
    return zip(a, b, [](native::Vf x, native::Vf y) { return x + y; });
}
inline Vf operator-(const Vf& a, const Vf& b) {
    return zip(a, b, [](native::Vf x, native::Vf y) { return x - y; });
}
inline Vf operator*(const Vf& a, const Vf& b) {
    return zip(a, b, [](native::Vf x, native::Vf y) { return x * y; });
}
inline Vf& operator+=(Vf& a, const Vf& b) {
    return a = a + b;
}
inline Vf& operator*=(Vf& a, const Vf& b) {
    return a = a * b;
}
// max(v, 0) as the ReLU kernel computes it (v < 0 ? 0 : v: NaN and -0 pass through, because max
// returns its second operand unless the first is greater).
inline Vf relu(const Vf& v) {
    Vf r;
    for (int k = 0; k < kParts; ++k) {
#if defined(__AVX512F__)
        r.p[k] = _mm512_max_ps(_mm512_setzero_ps(), v.p[k]);
#else
        r.p[k] = _mm256_max_ps(_mm256_setzero_ps(), v.p[k]);
#endif
    }
    return r;
}
// v where key > 0, 0 elsewhere (the gradient of a ReLU whose output is key).
inline Vf wherePositive(const Vf& key, const Vf& v) {
    Vf r;
    for (int k = 0; k < kParts; ++k) {
#if defined(__AVX512F__)
        r.p[k] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(key.p[k], _mm512_setzero_ps(), _CMP_GT_OQ), v.p[k]);
#else
        r.p[k] = _mm256_and_ps(_mm256_cmp_ps(key.p[k], _mm256_setzero_ps(), _CMP_GT_OQ), v.p[k]);
#endif
    }
    return r;
}
inline Vf load16(const float* p) {
    Vf v;
    for (int k = 0; k < kParts; ++k) std::memcpy(&v.p[k], p + k * native::kLanes, sizeof v.p[k]);
    return v;
}
inline void store16(float* p, const Vf& v) {
    for (int k = 0; k < kParts; ++k) std::memcpy(p + k * native::kLanes, &v.p[k], sizeof v.p[k]);
}
// Lanes [0, n) of 16; the rest read as 0 / are not written.
inline Vf loadN(const float* p, int64_t n) {
    Vf v;
    for (int k = 0; k < kParts; ++k)
        v.p[k] = native::loadN(p + k * native::kLanes, std::clamp<int64_t>(n - k * native::kLanes, 0, native::kLanes));
    return v;
}
inline void storeN(float* p, const Vf& v, int64_t n) {
    for (int k = 0; k < kParts; ++k)
        native::storeN(p + k * native::kLanes, v.p[k],
                       std::clamp<int64_t>(n - k * native::kLanes, 0, native::kLanes));
}
template <bool kFull>
inline Vf loadBlock(const float* p, int64_t n) {
    if constexpr (kFull)
        return load16(p);
    else
        return loadN(p, n);
}
template <bool kFull>
inline void storeBlock(float* p, const Vf& v, int64_t n) {
    if constexpr (kFull)
        store16(p, v);
    else
        storeN(p, v, n);
}
// Per-channel values of a block as a vector (lanes past n are 0).
inline Vf blockOf(const float* p, int64_t n) {
    return loadN(p, n);
}

// 16 double accumulators as four 4-lane vectors (32 bytes: native in both instruction sets).
typedef float Vf4 __attribute__((vector_size(16)));
typedef double Vd4 __attribute__((vector_size(32)));
struct Vd {
    Vd4 q[4];
    double operator[](int64_t j) const { return q[j / 4][j % 4]; }
};
// acc += v, lane by lane, in double.
inline void sumInDouble(const Vf& v, Vd& acc) {
    alignas(64) float lanes[16];
    store16(lanes, v);
    for (int i = 0; i < 4; ++i) {
        Vf4 f;
        std::memcpy(&f, lanes + 4 * i, sizeof f);
        acc.q[i] += __builtin_convertvector(f, Vd4);
    }
}

// One AVX-512 register of floats; the per-block accumulators (doubles) live on the stack.
constexpr int64_t kChannelBlock = 16;
// Batch-norm reductions over many rows and few channels also split the rows into at most this
// many fixed chunks (at least kMinChunkRows rows each). Each chunk is reduced in row order and
// the chunk results are combined in chunk order, so the result depends only on rows and c.
// Chunking is used up to kMaxChunkedChannels channels (above that, channel blocks alone give
// enough parallelism), which bounds the stack arrays of chunk results.
constexpr int64_t kMaxRowChunks = 16;
constexpr int64_t kMinChunkRows = 256;
constexpr int64_t kMaxChunkedChannels = 256;

// Runs fn(c0, c1) over channel blocks in parallel.
template <typename Fn>
void forChannelBlocks(int64_t c, ThreadPool& pool, Fn&& fn) {
    const int64_t blocks = (c + kChannelBlock - 1) / kChannelBlock;
    pool.parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) fn(b * kChannelBlock, std::min(c, (b + 1) * kChannelBlock));
    });
}

int64_t rowChunks(int64_t rows, int64_t c) {
    if (c > kMaxChunkedChannels) return 1;
    return std::max<int64_t>(1, std::min(kMaxRowChunks, rows / kMinChunkRows));
}

// Runs fn(k, r0, r1, c0, c1) for every row chunk k and channel block, in parallel over chunks:
// one task reads whole rows, so neighbouring channel blocks share its cache lines. With
// `reverse`, each task walks its chunks last to first: a second pass over the data (same chunk
// count, so the same static split) then starts with what the first pass left in cache.
template <typename Fn>
void forChunks(int64_t rows, int64_t c, int64_t chunks, bool reverse, ThreadPool& pool, Fn&& fn) {
    pool.parallelFor(chunks, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t i = k0; i < k1; ++i) {
            const int64_t k = reverse ? k0 + k1 - 1 - i : i;
            for (int64_t c0 = 0; c0 < c; c0 += kChannelBlock)
                fn(k, rows * k / chunks, rows * (k + 1) / chunks, c0, std::min(c, c0 + kChannelBlock));
        }
    });
}

// y = (x - mean) * scale + shift per channel, where scale = invStd*gamma, plus res[r, :] with
// kRes, then max(y, 0) with kRelu; parallel over rows.
template <bool kFull, bool kRelu, bool kRes>
void normalizeBlockAs(int64_t r0, int64_t r1, int64_t c, int64_t c0, int64_t nb, const float* x,
                      const float* gamma, const float* beta, const float* mean, const float* invStd,
                      const float* res, float* y) {
    const Vf m = blockOf(mean + c0, nb);
    Vf s = blockOf(invStd + c0, nb);
    if (gamma) s *= blockOf(gamma + c0, nb);
    const Vf b = beta ? blockOf(beta + c0, nb) : Vf{};
    for (int64_t r = r0; r < r1; ++r) {
        Vf v = (loadBlock<kFull>(x + r * c + c0, nb) - m) * s + b;
        if constexpr (kRes) v = v + loadBlock<kFull>(res + r * c + c0, nb);
        storeBlock<kFull>(y + r * c + c0, kRelu ? relu(v) : v, nb);
    }
}
template <bool kFull>
void normalizeBlock(int64_t r0, int64_t r1, int64_t c, int64_t c0, int64_t nb, const float* x,
                    const float* gamma, const float* beta, const float* mean, const float* invStd, float* y,
                    const BatchNormFusion& fusion) {
    const float* res = fusion.residual;
    if (fusion.relu && res)
        normalizeBlockAs<kFull, true, true>(r0, r1, c, c0, nb, x, gamma, beta, mean, invStd, res, y);
    else if (fusion.relu)
        normalizeBlockAs<kFull, true, false>(r0, r1, c, c0, nb, x, gamma, beta, mean, invStd, res, y);
    else if (res)
        normalizeBlockAs<kFull, false, true>(r0, r1, c, c0, nb, x, gamma, beta, mean, invStd, res, y);
    else
        normalizeBlockAs<kFull, false, false>(r0, r1, c, c0, nb, x, gamma, beta, mean, invStd, res, y);
}

void normalizeRows(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                   const float* mean, const float* invStd, float* y, const BatchNormFusion& fusion,
                   ThreadPool& pool) {
    pool.parallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(c, 1)), [&](int64_t r0, int64_t r1) {
        for (int64_t c0 = 0; c0 < c; c0 += kChannelBlock) {
            const int64_t nb = std::min(kChannelBlock, c - c0);
            if (nb == kChannelBlock)
                normalizeBlock<true>(r0, r1, c, c0, nb, x, gamma, beta, mean, invStd, y, fusion);
            else
                normalizeBlock<false>(r0, r1, c, c0, nb, x, gamma, beta, mean, invStd, y, fusion);
        }
    });
}

// Rows summed in float before a partial sum joins the double accumulators: 16 products change a
// float sum by at most about 16 ulp, far below what a double total then keeps, and the float
// adds cost a sixth of the conversions and double adds they replace.
constexpr int64_t kFloatRun = 16;


// Mean and sum of squared deviations of channels [c0, c0 + nb) over rows [r0, r1): two passes
// over the (cache-resident) chunk, each lane summing its rows in order, in runs of kFloatRun rows
// summed in float and then added in double.
template <bool kFull>
void chunkMoments(const float* x, int64_t c, int64_t r0, int64_t r1, int64_t c0, int64_t nb, double* mean,
                  double* m2) {
    Vd sum = {};
    for (int64_t r = r0; r < r1;) {
        const int64_t end = std::min(r1, r + kFloatRun);
        Vf run = {};
        for (; r < end; ++r) run += loadBlock<kFull>(x + r * c + c0, nb);
        sumInDouble(run, sum);
    }
    const double n = static_cast<double>(r1 - r0);
    // The deviations are taken from the mean rounded to float; the sum of squares is corrected
    // for that rounding below (sum (x - m)^2 = sum (x - mf)^2 - n (m - mf)^2).
    alignas(64) float mfLanes[16];
    for (int64_t j = 0; j < 16; ++j) mfLanes[j] = static_cast<float>(sum[j] / n);
    const Vf mf = load16(mfLanes);
    Vd sq = {};
    for (int64_t r = r0; r < r1;) {
        const int64_t end = std::min(r1, r + kFloatRun);
        Vf run = {};
        for (; r < end; ++r) {
            const Vf d = loadBlock<kFull>(x + r * c + c0, nb) - mf;
            run += d * d;
        }
        sumInDouble(run, sq);
    }
    for (int64_t j = 0; j < nb; ++j) {
        const double mu = sum[j] / n;
        const double e = mu - static_cast<double>(mfLanes[j]);
        mean[j] = mu;
        m2[j] = std::max(0.0, sq[j] - n * e * e);
    }
}

// sum(dy) and sum(dy * xhat) of channels [c0, c0 + nb) over rows [r0, r1): runs of kFloatRun rows
// in float, added in double.
// With kMasked, dy counts only where the forward output `out` is positive (a fused ReLU).
template <bool kFull, bool kMasked>
void chunkGradSums(const float* x, const float* dy, const float* out, int64_t c, int64_t r0, int64_t r1,
                   int64_t c0, int64_t nb, const float* mean, const float* inv, double* sdyOut, double* sdyxOut) {
    const Vf m = blockOf(mean + c0, nb), iv = blockOf(inv + c0, nb);
    Vd sdy = {}, sdyx = {};
    for (int64_t r = r0; r < r1;) {
        const int64_t end = std::min(r1, r + kFloatRun);
        Vf runDy = {}, runDyx = {};
        for (; r < end; ++r) {
            const Vf xhat = (loadBlock<kFull>(x + r * c + c0, nb) - m) * iv;
            Vf d = loadBlock<kFull>(dy + r * c + c0, nb);
            if constexpr (kMasked) d = wherePositive(loadBlock<kFull>(out + r * c + c0, nb), d);
            runDy += d;
            runDyx += d * xhat;
        }
        sumInDouble(runDy, sdy);
        sumInDouble(runDyx, sdyx);
    }
    for (int64_t j = 0; j < nb; ++j) {
        sdyOut[j] = sdy[j];
        sdyxOut[j] = sdyx[j];
    }
}

}  // namespace

void batchNormForwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                              const BatchNormParams& params, float* y, float* saveMean, float* saveInvStd,
                              float* movingMean, float* movingVar, ThreadPool& pool,
                              const BatchNormFusion& fusion) {
    if (rows <= 0 || c <= 0) return;
    const int64_t chunks = rowChunks(rows, c);
    auto finish = [&](int64_t ci, double mean, double var) {
        saveMean[ci] = static_cast<float>(mean);
        saveInvStd[ci] = static_cast<float>(1.0 / std::sqrt(var + params.epsilon));
        const double m = params.momentum;
        const double movVar = params.unbiasedMovingVariance && rows > 1
                                  ? var * static_cast<double>(rows) / static_cast<double>(rows - 1)
                                  : var;
        if (movingMean) movingMean[ci] = static_cast<float>(movingMean[ci] * m + mean * (1.0 - m));
        if (movingVar) movingVar[ci] = static_cast<float>(movingVar[ci] * m + movVar * (1.0 - m));
    };
    if (chunks == 1) {
        forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
            double mean[kChannelBlock], m2[kChannelBlock];
            if (c1 - c0 == kChannelBlock)
                chunkMoments<true>(x, c, 0, rows, c0, kChannelBlock, mean, m2);
            else
                chunkMoments<false>(x, c, 0, rows, c0, c1 - c0, mean, m2);
            for (int64_t j = 0; j < c1 - c0; ++j) finish(c0 + j, mean[j], m2[j] / static_cast<double>(rows));
        });
    } else {
        // Per-chunk moments, combined in chunk order with the pairwise update of Chan et al.
        double mean[kMaxRowChunks * kMaxChunkedChannels], m2[kMaxRowChunks * kMaxChunkedChannels];
        forChunks(rows, c, chunks, false, pool,
                  [&](int64_t k, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                      double* mk = mean + k * c + c0;
                      double* qk = m2 + k * c + c0;
                      if (c1 - c0 == kChannelBlock)
                          chunkMoments<true>(x, c, r0, r1, c0, kChannelBlock, mk, qk);
                      else
                          chunkMoments<false>(x, c, r0, r1, c0, c1 - c0, mk, qk);
                  });
        for (int64_t ci = 0; ci < c; ++ci) {
            double n = static_cast<double>(rows / chunks), mu = mean[ci], q = m2[ci];
            for (int64_t k = 1; k < chunks; ++k) {
                const double nb = static_cast<double>(rows * (k + 1) / chunks - rows * k / chunks);
                const double na = static_cast<double>(rows * k / chunks);
                const double d = mean[k * c + ci] - mu;
                n = na + nb;
                mu += d * (nb / n);
                q += m2[k * c + ci] + d * d * (na * nb / n);
            }
            finish(ci, mu, q / static_cast<double>(rows));
        }
        forChunks(rows, c, chunks, true, pool, [&](int64_t, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
            if (c1 - c0 == kChannelBlock)
                normalizeBlock<true>(r0, r1, c, c0, kChannelBlock, x, gamma, beta, saveMean, saveInvStd, y, fusion);
            else
                normalizeBlock<false>(r0, r1, c, c0, c1 - c0, x, gamma, beta, saveMean, saveInvStd, y, fusion);
        });
        return;
    }
    normalizeRows(rows, c, x, gamma, beta, saveMean, saveInvStd, y, fusion, pool);
}

void batchNormForwardInference(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                               const float* movingMean, const float* movingVar, float epsilon, float* y,
                               ThreadPool& pool, const BatchNormFusion& fusion) {
    if (rows <= 0 || c <= 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 4096 / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = x + r * c;
            float* yr = y + r * c;
            for (int64_t ci = 0; ci < c; ++ci) {
                const float s = (gamma ? gamma[ci] : 1.0f) / std::sqrt(movingVar[ci] + epsilon);
                float v = (xr[ci] - movingMean[ci]) * s + (beta ? beta[ci] : 0.0f);
                if (fusion.residual) v += fusion.residual[r * c + ci];
                yr[ci] = fusion.relu && v < 0.0f ? 0.0f : v;
            }
        }
    });
}

void batchNormBackwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma,
                               const float* saveMean, const float* saveInvStd, const float* dy, float* dx,
                               float* dgamma, float* dbeta, ThreadPool& pool, const BatchNormFusion& fusion) {
    if (rows <= 0 || c <= 0) return;
    const int64_t chunks = rowChunks(rows, c);
    const float* out = fusion.relu ? fusion.out : nullptr;
    // Chunk sums [chunks][c], then totals in chunk order.
    double sdy[kMaxRowChunks * kMaxChunkedChannels], sdyx[kMaxRowChunks * kMaxChunkedChannels];
    auto gradSums = [&](int64_t k, int64_t r0, int64_t r1, int64_t c0, int64_t c1, double* sd, double* sx) {
        (void)k;
        const bool full = c1 - c0 == kChannelBlock;
        if (full && out)
            chunkGradSums<true, true>(x, dy, out, c, r0, r1, c0, kChannelBlock, saveMean, saveInvStd, sd, sx);
        else if (full)
            chunkGradSums<true, false>(x, dy, out, c, r0, r1, c0, kChannelBlock, saveMean, saveInvStd, sd, sx);
        else if (out)
            chunkGradSums<false, true>(x, dy, out, c, r0, r1, c0, c1 - c0, saveMean, saveInvStd, sd, sx);
        else
            chunkGradSums<false, false>(x, dy, out, c, r0, r1, c0, c1 - c0, saveMean, saveInvStd, sd, sx);
    };
    // dx for rows [r0, r1) and channels [c0, c1) given the channel totals.
    auto applyDx = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1, const double* totDy,
                       const double* totDyx) {
        const int64_t nb = c1 - c0;
        float mdyA[kChannelBlock] = {}, mdyxA[kChannelBlock] = {};
        for (int64_t j = 0; j < nb; ++j) {
            mdyA[j] = static_cast<float>(totDy[j] / static_cast<double>(rows));
            mdyxA[j] = static_cast<float>(totDyx[j] / static_cast<double>(rows));
        }
        const Vf m = blockOf(saveMean + c0, nb), iv = blockOf(saveInvStd + c0, nb);
        const Vf k = gamma ? blockOf(gamma + c0, nb) * iv : iv;
        const Vf mdy = load16(mdyA), mdyx = load16(mdyxA);
        float* dres = fusion.dResidual;
        // kRes: 0 no residual gradient, 1 overwrite it, 2 add to it (before dx: they may alias).
        auto body = [&](auto full, auto masked, auto overwrite, auto res) {
            constexpr bool kFull = decltype(full)::value;
            constexpr int kRes = decltype(res)::value;
            for (int64_t r = r0; r < r1; ++r) {
                const Vf xhat = (loadBlock<kFull>(x + r * c + c0, nb) - m) * iv;
                Vf d = loadBlock<kFull>(dy + r * c + c0, nb);
                if constexpr (decltype(masked)::value) d = wherePositive(loadBlock<kFull>(out + r * c + c0, nb), d);
                if constexpr (kRes == 1) storeBlock<kFull>(dres + r * c + c0, d, nb);
                if constexpr (kRes == 2)
                    storeBlock<kFull>(dres + r * c + c0, loadBlock<kFull>(dres + r * c + c0, nb) + d, nb);
                if (dx) {
                    float* dxr = dx + r * c + c0;
                    const Vf g = k * (d - mdy - xhat * mdyx);
                    if constexpr (decltype(overwrite)::value)
                        storeBlock<kFull>(dxr, g, nb);
                    else
                        storeBlock<kFull>(dxr, loadBlock<kFull>(dxr, nb) + g, nb);
                }
            }
        };
        auto withRes = [&](auto full, auto masked, auto overwrite) {
            if (!dres)
                body(full, masked, overwrite, std::integral_constant<int, 0>{});
            else if (fusion.overwriteResidual)
                body(full, masked, overwrite, std::integral_constant<int, 1>{});
            else
                body(full, masked, overwrite, std::integral_constant<int, 2>{});
        };
        auto withOverwrite = [&](auto full, auto masked) {
            if (fusion.overwriteDx)
                withRes(full, masked, std::true_type{});
            else
                withRes(full, masked, std::false_type{});
        };
        auto withMask = [&](auto full) {
            if (out)
                withOverwrite(full, std::true_type{});
            else
                withOverwrite(full, std::false_type{});
        };
        if (nb == kChannelBlock)
            withMask(std::true_type{});
        else
            withMask(std::false_type{});
    };
    if (chunks == 1) {
        forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
            double td[kChannelBlock], tx[kChannelBlock];
            gradSums(0, 0, rows, c0, c1, td, tx);
            for (int64_t j = 0; j < c1 - c0; ++j) {
                if (dbeta) dbeta[c0 + j] += static_cast<float>(td[j]);
                if (dgamma) dgamma[c0 + j] += static_cast<float>(tx[j]);
            }
            if (dx || fusion.dResidual) applyDx(0, rows, c0, c1, td, tx);
        });
        return;
    }
    forChunks(rows, c, chunks, false, pool, [&](int64_t k, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        gradSums(k, r0, r1, c0, c1, sdy + k * c + c0, sdyx + k * c + c0);
    });
    for (int64_t ci = 0; ci < c; ++ci) {
        double td = 0.0, tx = 0.0;
        for (int64_t k = 0; k < chunks; ++k) {
            td += sdy[k * c + ci];
            tx += sdyx[k * c + ci];
        }
        sdy[ci] = td;  // chunk 0's slot now holds the total
        sdyx[ci] = tx;
        if (dbeta) dbeta[ci] += static_cast<float>(td);
        if (dgamma) dgamma[ci] += static_cast<float>(tx);
    }
    if (!dx && !fusion.dResidual) return;
    forChunks(rows, c, chunks, true, pool, [&](int64_t, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        applyDx(r0, r1, c0, c1, sdy + c0, sdyx + c0);
    });
}

void batchNormBackwardInference(int64_t rows, int64_t c, const float* x, const float* gamma,
                                const float* movingMean, const float* movingVar, float epsilon,
                                const float* dy, float* dx, float* dgamma, float* dbeta, ThreadPool& pool,
                                const BatchNormFusion& fusion) {
    if (rows <= 0 || c <= 0) return;
    const float* out = fusion.relu ? fusion.out : nullptr;
    forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
        const int64_t nb = c1 - c0;
        float inv[kChannelBlock], k[kChannelBlock];
        for (int64_t j = 0; j < nb; ++j) {
            inv[j] = 1.0f / std::sqrt(movingVar[c0 + j] + epsilon);
            k[j] = (gamma ? gamma[c0 + j] : 1.0f) * inv[j];
        }
        double sdy[kChannelBlock] = {}, sdyx[kChannelBlock] = {};
        const float* mean = movingMean + c0;
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c + c0;
            const float* dr = dy + r * c + c0;
            const float* outr = out ? out + r * c + c0 : nullptr;
            float dm[kChannelBlock];
            for (int64_t j = 0; j < nb; ++j) dm[j] = !outr || outr[j] > 0.0f ? dr[j] : 0.0f;
            for (int64_t j = 0; j < nb; ++j) {
                const float xhat = (xr[j] - mean[j]) * inv[j];
                sdy[j] += dm[j];
                sdyx[j] += static_cast<double>(dm[j]) * xhat;
            }
            if (float* dres = fusion.dResidual) {  // first: dx may be the same buffer
                float* dr2 = dres + r * c + c0;
                for (int64_t j = 0; j < nb; ++j) dr2[j] = (fusion.overwriteResidual ? 0.0f : dr2[j]) + dm[j];
            }
            if (dx) {
                float* dxr = dx + r * c + c0;
                for (int64_t j = 0; j < nb; ++j) dxr[j] = (fusion.overwriteDx ? 0.0f : dxr[j]) + dm[j] * k[j];
            }
        }
        for (int64_t j = 0; j < nb; ++j) {
            if (dbeta) dbeta[c0 + j] += static_cast<float>(sdy[j]);
            if (dgamma) dgamma[c0 + j] += static_cast<float>(sdyx[j]);
        }
    });
}

}  // namespace kiln::engine::kernels::KILN_ISA_NS
