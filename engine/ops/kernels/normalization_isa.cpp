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
// GCC 12 flags a vector inside avx512fintrin.h as maybe uninitialised once relu() is inlined
// into the row loops (a false positive, as for Eigen's intrinsics in normalization.cpp).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

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

// a * b + c with one rounding, lane by lane. Forward computes its pre-activation with it and
// backward recomputes the same value from x (BatchNormFusion::maskFromInput), so the two agree bit
// for bit whatever the compiler would otherwise contract.
inline Vf fmadd(const Vf& a, const Vf& b, const Vf& c) {
    Vf r;
    for (int k = 0; k < kParts; ++k) {
#if defined(__AVX512F__)
        r.p[k] = _mm512_fmadd_ps(a.p[k], b.p[k], c.p[k]);
#else
        r.p[k] = _mm256_fmadd_ps(a.p[k], b.p[k], c.p[k]);
#endif
    }
    return r;
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
// The passes below walk rows in runs of kFloatRun and, within a run, every channel block of the
// range they were given (at most kMaxBlocks): a run of rows is one contiguous stretch of memory,
// so wide rows (c = 32, 64, ...) stream instead of being swept once per block at a stride of c.
constexpr int64_t kMaxBlocks = kMaxChunkedChannels / kChannelBlock;
// Rows summed in float before a partial sum joins the double accumulators: 16 products change a
// float sum by at most about 16 ulp, far below what a double total then keeps, and the float
// adds cost a sixth of the conversions and double adds they replace.
constexpr int64_t kFloatRun = 16;

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

// Runs fn(k, r0, r1) for every row chunk k (all channels), in parallel over chunks. With
// `reverse`, each task walks its chunks last to first: a second pass over the data (same chunk
// count, so the same static split) then starts with what the first pass left in cache.
template <typename Fn>
void forChunks(int64_t rows, int64_t chunks, bool reverse, ThreadPool& pool, Fn&& fn) {
    pool.parallelFor(chunks, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t i = k0; i < k1; ++i) {
            const int64_t k = reverse ? k0 + k1 - 1 - i : i;
            fn(k, rows * k / chunks, rows * (k + 1) / chunks);
        }
    });
}

// fn(ra, rb) for rows [r0, r1) in runs of kFloatRun starting at r0.
template <typename Fn>
inline void forRuns(int64_t r0, int64_t r1, Fn&& fn) {
    for (int64_t r = r0; r < r1; r += kFloatRun) fn(r, std::min(r1, r + kFloatRun));
}

// The channel blocks of a range [c0, c1) with c0 a multiple of 16: `full` blocks of 16 and a last
// one of `tail` channels (0: none). fn(b, kFull) per block, kFull a std::bool_constant.
struct BlockRange {
    int64_t c0, full, tail;
    BlockRange(int64_t first, int64_t last)
        : c0(first), full((last - first) / kChannelBlock), tail((last - first) % kChannelBlock) {}
    int64_t count() const { return full + (tail ? 1 : 0); }
    template <typename Fn>
    void each(Fn&& fn) const {
        for (int64_t b = 0; b < full; ++b) fn(b, std::true_type{});
        if (tail) fn(full, std::false_type{});
    }
    // Per-channel values of block b as a vector (lanes past the range are 0).
    Vf of(const float* perChannel, int64_t b) const {
        return loadN(perChannel + c0 + b * kChannelBlock, b < full ? kChannelBlock : tail);
    }
};

// Mean and sum of squared deviations of channels [c0, c1) (at most kMaxBlocks blocks) over rows
// [r0, r1) (a chunk, in L2 for its second sweep), into mean[j] and m2[j] for channel c0 + j: two
// sweeps, the sums, then the squares of the deviations from the mean rounded to float, each lane
// summing its rows in order in runs of kFloatRun rows in float, then in double.
void rangeMoments(const float* x, int64_t c, int64_t r0, int64_t r1, int64_t c0, int64_t c1, double* mean,
                  double* m2) {
    const BlockRange br(c0, c1);
    Vd sum[kMaxBlocks], sq[kMaxBlocks];
    for (int64_t b = 0; b < br.count(); ++b) sum[b] = sq[b] = Vd{};
    forRuns(r0, r1, [&](int64_t ra, int64_t rb) {
        br.each([&](int64_t b, auto full) {
            const float* p = x + c0 + b * kChannelBlock;
            Vf run = {};
            for (int64_t r = ra; r < rb; ++r) run += loadBlock<full()>(p + r * c, br.tail);
            sumInDouble(run, sum[b]);
        });
    });
    const double n = static_cast<double>(r1 - r0);
    // The deviations are taken from the mean rounded to float; the sum of squares is corrected
    // for that rounding below (sum (x - m)^2 = sum (x - mf)^2 - n (m - mf)^2).
    alignas(64) float mf[kMaxBlocks * kChannelBlock];
    for (int64_t j = 0; j < br.count() * kChannelBlock; ++j)
        mf[j] = static_cast<float>(sum[j / kChannelBlock][j % kChannelBlock] / n);
    forRuns(r0, r1, [&](int64_t ra, int64_t rb) {
        br.each([&](int64_t b, auto full) {
            const float* p = x + c0 + b * kChannelBlock;
            const Vf m = load16(mf + b * kChannelBlock);
            Vf run = {};
            for (int64_t r = ra; r < rb; ++r) {
                const Vf d = loadBlock<full()>(p + r * c, br.tail) - m;
                run += d * d;
            }
            sumInDouble(run, sq[b]);
        });
    });
    for (int64_t j = 0; j < c1 - c0; ++j) {
        const double mu = sum[j / kChannelBlock][j % kChannelBlock] / n;
        const double e = mu - static_cast<double>(mf[j]);
        mean[j] = mu;
        m2[j] = std::max(0.0, sq[j / kChannelBlock][j % kChannelBlock] - n * e * e);
    }
}

// y = (x - mean) * scale + shift per channel over rows [r0, r1) and channels [c0, c1) (at most
// kMaxBlocks blocks), where scale = invStd*gamma, plus res[r, :] with kRes, then max(y, 0) with
// kRelu.
template <bool kRelu, bool kRes>
void normalizeRange(int64_t r0, int64_t r1, int64_t c, int64_t c0, int64_t c1, const float* x,
                    const float* gamma, const float* beta, const float* mean, const float* invStd,
                    const float* res, float* y) {
    const BlockRange br(c0, c1);
    Vf m[kMaxBlocks], s[kMaxBlocks], sh[kMaxBlocks];
    for (int64_t b = 0; b < br.count(); ++b) {
        m[b] = br.of(mean, b);
        s[b] = br.of(invStd, b);
        if (gamma) s[b] *= br.of(gamma, b);
        sh[b] = beta ? br.of(beta, b) : Vf{};
    }
    forRuns(r0, r1, [&](int64_t ra, int64_t rb) {
        br.each([&](int64_t b, auto full) {
            const int64_t off = c0 + b * kChannelBlock;
            const Vf mb = m[b], sb = s[b], hb = sh[b];
            for (int64_t r = ra; r < rb; ++r) {
                Vf v = fmadd(loadBlock<full()>(x + r * c + off, br.tail) - mb, sb, hb);
                if constexpr (kRes) v = v + loadBlock<full()>(res + r * c + off, br.tail);
                storeBlock<full()>(y + r * c + off, kRelu ? relu(v) : v, br.tail);
            }
        });
    });
}

// normalizeRange over all channels, in ranges of at most kMaxBlocks blocks.
void normalizeRows(int64_t r0, int64_t r1, int64_t c, const float* x, const float* gamma, const float* beta,
                   const float* mean, const float* invStd, float* y, const BatchNormFusion& fusion) {
    const float* res = fusion.residual;
    for (int64_t c0 = 0; c0 < c; c0 += kMaxChunkedChannels) {
        const int64_t c1 = std::min(c, c0 + kMaxChunkedChannels);
        if (fusion.relu && res)
            normalizeRange<true, true>(r0, r1, c, c0, c1, x, gamma, beta, mean, invStd, res, y);
        else if (fusion.relu)
            normalizeRange<true, false>(r0, r1, c, c0, c1, x, gamma, beta, mean, invStd, res, y);
        else if (res)
            normalizeRange<false, true>(r0, r1, c, c0, c1, x, gamma, beta, mean, invStd, res, y);
        else
            normalizeRange<false, false>(r0, r1, c, c0, c1, x, gamma, beta, mean, invStd, res, y);
    }
}

// What the backward passes read per channel block: the batch statistics and, for a mask taken from
// x, forward's scale and shift.
struct GradConsts {
    Vf m[kMaxBlocks], iv[kMaxBlocks], s[kMaxBlocks], sh[kMaxBlocks];
    GradConsts(const BlockRange& br, const float* mean, const float* invStd, const float* gamma, const float* beta,
               bool maskFromInput) {
        for (int64_t b = 0; b < br.count(); ++b) {
            m[b] = br.of(mean, b);
            iv[b] = br.of(invStd, b);
            if (maskFromInput) {  // as normalizeRange computes them
                s[b] = gamma ? iv[b] * br.of(gamma, b) : iv[b];
                sh[b] = beta ? br.of(beta, b) : Vf{};
            }
        }
    }
};

// The output gradient of rows r of block b as batch norm sees it: dy, masked by a fused ReLU
// (kMask 1: where `out` is positive; 2: where forward's pre-activation, recomputed from t = x -
// mean, is positive).
template <int kMask, bool kFull>
inline Vf maskedGrad(const float* dy, const float* out, int64_t i, int64_t tail, const Vf& t, const GradConsts& k,
                     int64_t b) {
    const Vf d = loadBlock<kFull>(dy + i, tail);
    if constexpr (kMask == 1) return wherePositive(loadBlock<kFull>(out + i, tail), d);
    if constexpr (kMask == 2) return wherePositive(fmadd(t, k.s[b], k.sh[b]), d);
    return d;
}

// sum(dy) and sum(dy * xhat) of channels [c0, c1) (at most kMaxBlocks blocks) over rows [r0, r1),
// into sdyOut[j] and sdyxOut[j] for channel c0 + j: runs of kFloatRun rows in float, added in
// double.
template <int kMask>
void rangeGradSums(const float* x, const float* dy, const float* out, int64_t c, int64_t r0, int64_t r1,
                   const BlockRange& br, const GradConsts& k, double* sdyOut, double* sdyxOut) {
    Vd sdy[kMaxBlocks], sdyx[kMaxBlocks];
    for (int64_t b = 0; b < br.count(); ++b) sdy[b] = sdyx[b] = Vd{};
    forRuns(r0, r1, [&](int64_t ra, int64_t rb) {
        br.each([&](int64_t b, auto full) {
            const int64_t off = br.c0 + b * kChannelBlock;
            const Vf mb = k.m[b], ivb = k.iv[b];
            Vf runDy = {}, runDyx = {};
            for (int64_t r = ra; r < rb; ++r) {
                const Vf t = loadBlock<full()>(x + r * c + off, br.tail) - mb;
                const Vf xhat = t * ivb;
                const Vf d = maskedGrad<kMask, full()>(dy, out, r * c + off, br.tail, t, k, b);
                runDy += d;
                runDyx += d * xhat;
            }
            sumInDouble(runDy, sdy[b]);
            sumInDouble(runDyx, sdyx[b]);
        });
    });
    for (int64_t j = 0; j < br.full * kChannelBlock + br.tail; ++j) {
        sdyOut[j] = sdy[j / kChannelBlock][j % kChannelBlock];
        sdyxOut[j] = sdyx[j / kChannelBlock][j % kChannelBlock];
    }
}

// dx = gamma * invStd * (d - mean(d) - xhat * mean(d * xhat)) over rows [r0, r1) and the
// channels of br, = with kOverwrite, else +=; with kRes 1 / 2 the masked gradient d is also
// stored to / added to dres first (they may alias).
template <int kMask, bool kOverwrite, int kRes>
void rangeApplyDx(const float* x, const float* dy, const float* out, int64_t c, int64_t r0, int64_t r1,
                  const BlockRange& br, const GradConsts& k, const Vf* scale, const Vf* mdy, const Vf* mdyx,
                  float* dx, float* dres) {
    forRuns(r0, r1, [&](int64_t ra, int64_t rb) {
        br.each([&](int64_t b, auto full) {
            const int64_t off = br.c0 + b * kChannelBlock;
            const Vf mb = k.m[b], ivb = k.iv[b], sb = scale[b], mdyb = mdy[b], mdyxb = mdyx[b];
            for (int64_t r = ra; r < rb; ++r) {
                const int64_t i = r * c + off;
                const Vf t = loadBlock<full()>(x + i, br.tail) - mb;
                const Vf xhat = t * ivb;
                const Vf d = maskedGrad<kMask, full()>(dy, out, i, br.tail, t, k, b);
                if constexpr (kRes == 1) storeBlock<full()>(dres + i, d, br.tail);
                if constexpr (kRes == 2) storeBlock<full()>(dres + i, loadBlock<full()>(dres + i, br.tail) + d, br.tail);
                if (dx) {
                    const Vf g = sb * (d - mdyb - xhat * mdyxb);
                    if constexpr (kOverwrite)
                        storeBlock<full()>(dx + i, g, br.tail);
                    else
                        storeBlock<full()>(dx + i, loadBlock<full()>(dx + i, br.tail) + g, br.tail);
                }
            }
        });
    });
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
            rangeMoments(x, c, 0, rows, c0, c1, mean, m2);
            for (int64_t j = 0; j < c1 - c0; ++j) finish(c0 + j, mean[j], m2[j] / static_cast<double>(rows));
        });
        pool.parallelFor(rows, std::max<int64_t>(1, 4096 / c), [&](int64_t r0, int64_t r1) {
            normalizeRows(r0, r1, c, x, gamma, beta, saveMean, saveInvStd, y, fusion);
        });
        return;
    }
    // Per-chunk moments, combined in chunk order with the pairwise update of Chan et al.
    double mean[kMaxRowChunks * kMaxChunkedChannels], m2[kMaxRowChunks * kMaxChunkedChannels];
    forChunks(rows, chunks, false, pool, [&](int64_t k, int64_t r0, int64_t r1) {
        rangeMoments(x, c, r0, r1, 0, c, mean + k * c, m2 + k * c);
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
    forChunks(rows, chunks, true, pool, [&](int64_t, int64_t r0, int64_t r1) {
        normalizeRows(r0, r1, c, x, gamma, beta, saveMean, saveInvStd, y, fusion);
    });
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
    // 0: dy as it is; 1: masked where `out` is positive; 2: masked by forward's pre-activation,
    // recomputed from x (a ReLU without a residual: x is read anyway, `out` need not be).
    const int mask = !fusion.relu ? 0 : fusion.maskFromInput && !fusion.residual ? 2
                                                                                 : 1;
    const float* out = mask == 1 ? fusion.out : nullptr;
    auto gradSums = [&](int64_t r0, int64_t r1, const BlockRange& br, const GradConsts& k, double* sd, double* sx) {
        if (mask == 2)
            rangeGradSums<2>(x, dy, out, c, r0, r1, br, k, sd, sx);
        else if (mask == 1)
            rangeGradSums<1>(x, dy, out, c, r0, r1, br, k, sd, sx);
        else
            rangeGradSums<0>(x, dy, out, c, r0, r1, br, k, sd, sx);
    };
    // dx (and the residual gradient) for rows [r0, r1) and the channels of br given the totals.
    auto applyDx = [&](int64_t r0, int64_t r1, const BlockRange& br, const GradConsts& k, const double* totDy,
                       const double* totDyx) {
        Vf scale[kMaxBlocks], mdy[kMaxBlocks], mdyx[kMaxBlocks];
        alignas(64) float mdyA[kChannelBlock], mdyxA[kChannelBlock];
        for (int64_t b = 0; b < br.count(); ++b) {
            const int64_t n = b < br.full ? kChannelBlock : br.tail;
            for (int64_t j = 0; j < kChannelBlock; ++j) {
                const int64_t jj = b * kChannelBlock + j;
                mdyA[j] = j < n ? static_cast<float>(totDy[jj] / static_cast<double>(rows)) : 0.0f;
                mdyxA[j] = j < n ? static_cast<float>(totDyx[jj] / static_cast<double>(rows)) : 0.0f;
            }
            mdy[b] = load16(mdyA);
            mdyx[b] = load16(mdyxA);
            scale[b] = gamma ? br.of(gamma, b) * k.iv[b] : k.iv[b];
        }
        float* dres = fusion.dResidual;
        auto run = [&](auto kMask, auto overwrite) {
            constexpr int kM = decltype(kMask)::value;
            constexpr bool kO = decltype(overwrite)::value;
            if (!dres)
                rangeApplyDx<kM, kO, 0>(x, dy, out, c, r0, r1, br, k, scale, mdy, mdyx, dx, dres);
            else if (fusion.overwriteResidual)
                rangeApplyDx<kM, kO, 1>(x, dy, out, c, r0, r1, br, k, scale, mdy, mdyx, dx, dres);
            else
                rangeApplyDx<kM, kO, 2>(x, dy, out, c, r0, r1, br, k, scale, mdy, mdyx, dx, dres);
        };
        auto withOverwrite = [&](auto kMask) {
            if (fusion.overwriteDx)
                run(kMask, std::true_type{});
            else
                run(kMask, std::false_type{});
        };
        if (mask == 2)
            withOverwrite(std::integral_constant<int, 2>{});
        else if (mask == 1)
            withOverwrite(std::integral_constant<int, 1>{});
        else
            withOverwrite(std::integral_constant<int, 0>{});
    };
    const bool fromInput = mask == 2;
    if (chunks == 1) {
        forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
            const BlockRange br(c0, c1);
            const GradConsts k(br, saveMean, saveInvStd, gamma, fusion.beta, fromInput);
            double td[kChannelBlock], tx[kChannelBlock];
            gradSums(0, rows, br, k, td, tx);
            for (int64_t j = 0; j < c1 - c0; ++j) {
                if (dbeta) dbeta[c0 + j] += static_cast<float>(td[j]);
                if (dgamma) dgamma[c0 + j] += static_cast<float>(tx[j]);
            }
            if (dx || fusion.dResidual) applyDx(0, rows, br, k, td, tx);
        });
        return;
    }
    // Chunk sums [chunks][c], then totals in chunk order.
    const BlockRange all(0, c);
    const GradConsts k(all, saveMean, saveInvStd, gamma, fusion.beta, fromInput);
    double sdy[kMaxRowChunks * kMaxChunkedChannels], sdyx[kMaxRowChunks * kMaxChunkedChannels];
    forChunks(rows, chunks, false, pool, [&](int64_t ck, int64_t r0, int64_t r1) {
        gradSums(r0, r1, all, k, sdy + ck * c, sdyx + ck * c);
    });
    for (int64_t ci = 0; ci < c; ++ci) {
        double td = 0.0, tx = 0.0;
        for (int64_t ck = 0; ck < chunks; ++ck) {
            td += sdy[ck * c + ci];
            tx += sdyx[ck * c + ci];
        }
        sdy[ci] = td;  // chunk 0's slot now holds the total
        sdyx[ci] = tx;
        if (dbeta) dbeta[ci] += static_cast<float>(td);
        if (dgamma) dgamma[ci] += static_cast<float>(tx);
    }
    if (!dx && !fusion.dResidual) return;
    forChunks(rows, chunks, true, pool,
              [&](int64_t, int64_t r0, int64_t r1) { applyDx(r0, r1, all, k, sdy, sdyx); });
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
