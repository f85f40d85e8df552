// SPDX-License-Identifier: Apache-2.0
// Normalisation kernels. Per-channel reductions (batch statistics, dgamma, dbeta) run over
// blocks of kChannelBlock channels, each block summing all rows in order, so no workspace is
// needed and the summation order never depends on the thread count.
#include "engine/ops/kernels/normalization.h"

// GCC 12 flags Eigen's AVX-512 unpack intrinsics as maybe-uninitialised (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace kiln::engine::kernels {
namespace {

// One AVX-512 register of floats; the per-block accumulators (doubles) live on the stack.
constexpr int64_t kChannelBlock = 16;

// Runs fn(c0, c1) over channel blocks in parallel.
template <typename Fn>
void forChannelBlocks(int64_t c, ThreadPool& pool, Fn&& fn) {
    const int64_t blocks = (c + kChannelBlock - 1) / kChannelBlock;
    pool.parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) fn(b * kChannelBlock, std::min(c, (b + 1) * kChannelBlock));
    });
}

// y = (x - mean) * scale + shift per channel, where scale = invStd*gamma; parallel over rows.
void normalizeRows(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                   const float* mean, const float* invStd, float* y, ThreadPool& pool) {
    pool.parallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(c, 1)), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = x + r * c;
            float* yr = y + r * c;
            for (int64_t ci = 0; ci < c; ++ci) {
                const float s = invStd[ci] * (gamma ? gamma[ci] : 1.0f);
                yr[ci] = (xr[ci] - mean[ci]) * s + (beta ? beta[ci] : 0.0f);
            }
        }
    });
}

}  // namespace

void batchNormForwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                              const BatchNormParams& params, float* y, float* saveMean, float* saveInvStd,
                              float* movingMean, float* movingVar, ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
        const int64_t nb = c1 - c0;
        double sum[kChannelBlock] = {}, sq[kChannelBlock] = {};
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c + c0;
            for (int64_t j = 0; j < nb; ++j) sum[j] += xr[j];
        }
        double mean[kChannelBlock];
        for (int64_t j = 0; j < nb; ++j) mean[j] = sum[j] / static_cast<double>(rows);
        // Two-pass variance: no cancellation when |mean| >> std.
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c + c0;
            for (int64_t j = 0; j < nb; ++j) {
                const double d = xr[j] - mean[j];
                sq[j] += d * d;
            }
        }
        for (int64_t j = 0; j < nb; ++j) {
            const int64_t ci = c0 + j;
            const double var = sq[j] / static_cast<double>(rows);
            saveMean[ci] = static_cast<float>(mean[j]);
            saveInvStd[ci] = static_cast<float>(1.0 / std::sqrt(var + params.epsilon));
            const double m = params.momentum;
            const double movVar = params.unbiasedMovingVariance && rows > 1
                                      ? var * static_cast<double>(rows) / static_cast<double>(rows - 1)
                                      : var;
            if (movingMean) movingMean[ci] = static_cast<float>(movingMean[ci] * m + mean[j] * (1.0 - m));
            if (movingVar) movingVar[ci] = static_cast<float>(movingVar[ci] * m + movVar * (1.0 - m));
        }
    });
    normalizeRows(rows, c, x, gamma, beta, saveMean, saveInvStd, y, pool);
}

void batchNormForwardInference(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                               const float* movingMean, const float* movingVar, float epsilon, float* y,
                               ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 4096 / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = x + r * c;
            float* yr = y + r * c;
            for (int64_t ci = 0; ci < c; ++ci) {
                const float s = (gamma ? gamma[ci] : 1.0f) / std::sqrt(movingVar[ci] + epsilon);
                yr[ci] = (xr[ci] - movingMean[ci]) * s + (beta ? beta[ci] : 0.0f);
            }
        }
    });
}

void batchNormBackwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma,
                               const float* saveMean, const float* saveInvStd, const float* dy, float* dx,
                               float* dgamma, float* dbeta, ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
        const int64_t nb = c1 - c0;
        const float* mean = saveMean + c0;
        const float* inv = saveInvStd + c0;
        double sdy[kChannelBlock] = {}, sdyx[kChannelBlock] = {};
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c + c0;
            const float* dr = dy + r * c + c0;
            for (int64_t j = 0; j < nb; ++j) {
                const float xhat = (xr[j] - mean[j]) * inv[j];
                sdy[j] += dr[j];
                sdyx[j] += static_cast<double>(dr[j]) * xhat;
            }
        }
        for (int64_t j = 0; j < nb; ++j) {
            if (dbeta) dbeta[c0 + j] += static_cast<float>(sdy[j]);
            if (dgamma) dgamma[c0 + j] += static_cast<float>(sdyx[j]);
        }
        if (!dx) return;
        float k[kChannelBlock], mdy[kChannelBlock], mdyx[kChannelBlock];
        for (int64_t j = 0; j < nb; ++j) {
            k[j] = (gamma ? gamma[c0 + j] : 1.0f) * inv[j];
            mdy[j] = static_cast<float>(sdy[j] / static_cast<double>(rows));
            mdyx[j] = static_cast<float>(sdyx[j] / static_cast<double>(rows));
        }
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c + c0;
            const float* dr = dy + r * c + c0;
            float* dxr = dx + r * c + c0;
            for (int64_t j = 0; j < nb; ++j) {
                const float xhat = (xr[j] - mean[j]) * inv[j];
                dxr[j] += k[j] * (dr[j] - mdy[j] - xhat * mdyx[j]);
            }
        }
    });
}

void batchNormBackwardInference(int64_t rows, int64_t c, const float* x, const float* gamma,
                                const float* movingMean, const float* movingVar, float epsilon,
                                const float* dy, float* dx, float* dgamma, float* dbeta, ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
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
            for (int64_t j = 0; j < nb; ++j) {
                const float xhat = (xr[j] - mean[j]) * inv[j];
                sdy[j] += dr[j];
                sdyx[j] += static_cast<double>(dr[j]) * xhat;
            }
            if (dx) {
                float* dxr = dx + r * c + c0;
                for (int64_t j = 0; j < nb; ++j) dxr[j] += dr[j] * k[j];
            }
        }
        for (int64_t j = 0; j < nb; ++j) {
            if (dbeta) dbeta[c0 + j] += static_cast<float>(sdy[j]);
            if (dgamma) dgamma[c0 + j] += static_cast<float>(sdyx[j]);
        }
    });
}

void layerNormForward(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                      float epsilon, float* y, float* saveMean, float* saveRstd, ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 4096 / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            // Eigen's packet reductions vectorise the double accumulation; their order is fixed
            // by c alone.
            const Eigen::Map<const Eigen::ArrayXf> xr(x + r * c, c);
            const double mean = xr.cast<double>().sum() / static_cast<double>(c);
            const double var = (xr.cast<double>() - mean).square().sum() / static_cast<double>(c);
            const float m = static_cast<float>(mean);
            const float rstd = static_cast<float>(1.0 / std::sqrt(var + epsilon));
            saveMean[r] = m;
            saveRstd[r] = rstd;
            float* yr = y + r * c;
            const float* xp = x + r * c;
            for (int64_t ci = 0; ci < c; ++ci)
                yr[ci] = (xp[ci] - m) * rstd * (gamma ? gamma[ci] : 1.0f) + (beta ? beta[ci] : 0.0f);
        }
    });
}

void layerNormBackward(int64_t rows, int64_t c, const float* x, const float* gamma, const float* saveMean,
                       const float* saveRstd, const float* dy, float* dx, float* dgamma, float* dbeta,
                       ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    if (dx) {
        pool.parallelFor(rows, std::max<int64_t>(1, 4096 / c), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const float* xr = x + r * c;
                const float* dr = dy + r * c;
                float* dxr = dx + r * c;
                const float m = saveMean[r], rstd = saveRstd[r];
                double sg = 0.0, sgx = 0.0;
                for (int64_t ci = 0; ci < c; ++ci) {
                    const float g = dr[ci] * (gamma ? gamma[ci] : 1.0f);
                    const float xhat = (xr[ci] - m) * rstd;
                    sg += g;
                    sgx += static_cast<double>(g) * xhat;
                }
                const float mg = static_cast<float>(sg / static_cast<double>(c));
                const float mgx = static_cast<float>(sgx / static_cast<double>(c));
                for (int64_t ci = 0; ci < c; ++ci) {
                    const float g = dr[ci] * (gamma ? gamma[ci] : 1.0f);
                    const float xhat = (xr[ci] - m) * rstd;
                    dxr[ci] += rstd * (g - mg - xhat * mgx);
                }
            }
        });
    }
    if (!dgamma && !dbeta) return;
    forChannelBlocks(c, pool, [&](int64_t c0, int64_t c1) {
        const int64_t nb = c1 - c0;
        double sdy[kChannelBlock] = {}, sdyx[kChannelBlock] = {};
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c + c0;
            const float* dr = dy + r * c + c0;
            const float m = saveMean[r], rstd = saveRstd[r];
            for (int64_t j = 0; j < nb; ++j) {
                sdy[j] += dr[j];
                sdyx[j] += static_cast<double>(dr[j]) * ((xr[j] - m) * rstd);
            }
        }
        for (int64_t j = 0; j < nb; ++j) {
            if (dbeta) dbeta[c0 + j] += static_cast<float>(sdy[j]);
            if (dgamma) dgamma[c0 + j] += static_cast<float>(sdyx[j]);
        }
    });
}

}  // namespace kiln::engine::kernels
