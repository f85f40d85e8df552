// SPDX-License-Identifier: Apache-2.0
// Normalisation kernels: batch normalisation forwards to the variant compiled for the instruction
// set chosen at start-up (normalization_isa.cpp); layer normalisation is here.
#include "engine/ops/kernels/normalization.h"

// GCC 12 flags Eigen's AVX-512 unpack intrinsics as maybe-uninitialised (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "engine/core/cpu_isa.h"
#include "engine/ops/kernels/normalization_isa.h"

namespace kiln::engine::kernels {

void batchNormForwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                              const BatchNormParams& params, float* y, float* saveMean, float* saveInvStd,
                              float* movingMean, float* movingVar, ThreadPool& pool,
                              const BatchNormFusion& fusion) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::batchNormForwardTraining(rows, c, x, gamma, beta, params, y, saveMean, saveInvStd, movingMean,
                                         movingVar, pool, fusion);
    else
        avx2::batchNormForwardTraining(rows, c, x, gamma, beta, params, y, saveMean, saveInvStd, movingMean,
                                       movingVar, pool, fusion);
}

void batchNormForwardInference(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                               const float* movingMean, const float* movingVar, float epsilon, float* y,
                               ThreadPool& pool,
                              const BatchNormFusion& fusion) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::batchNormForwardInference(rows, c, x, gamma, beta, movingMean, movingVar, epsilon, y, pool, fusion);
    else
        avx2::batchNormForwardInference(rows, c, x, gamma, beta, movingMean, movingVar, epsilon, y, pool, fusion);
}

void batchNormBackwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma,
                               const float* saveMean, const float* saveInvStd, const float* dy, float* dx,
                               float* dgamma, float* dbeta, ThreadPool& pool,
                              const BatchNormFusion& fusion) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::batchNormBackwardTraining(rows, c, x, gamma, saveMean, saveInvStd, dy, dx, dgamma, dbeta, pool, fusion);
    else
        avx2::batchNormBackwardTraining(rows, c, x, gamma, saveMean, saveInvStd, dy, dx, dgamma, dbeta, pool, fusion);
}

void batchNormBackwardInference(int64_t rows, int64_t c, const float* x, const float* gamma,
                                const float* movingMean, const float* movingVar, float epsilon,
                                const float* dy, float* dx, float* dgamma, float* dbeta, ThreadPool& pool,
                              const BatchNormFusion& fusion) {
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::batchNormBackwardInference(rows, c, x, gamma, movingMean, movingVar, epsilon, dy, dx, dgamma,
                                           dbeta, pool, fusion);
    else
        avx2::batchNormBackwardInference(rows, c, x, gamma, movingMean, movingVar, epsilon, dy, dx, dgamma, dbeta,
                                         pool, fusion);
}

namespace {

// Layer-norm parameter reductions work on blocks of this many channels, one block per task.
constexpr int64_t kChannelBlock = 16;

// Runs fn(c0, c1) over channel blocks in parallel.
template <typename Fn>
void forChannelBlocks(int64_t c, ThreadPool& pool, Fn&& fn) {
    const int64_t blocks = (c + kChannelBlock - 1) / kChannelBlock;
    pool.parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) fn(b * kChannelBlock, std::min(c, (b + 1) * kChannelBlock));
    });
}

}  // namespace

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

void fixedNormScale(const float* variance, int64_t c, float* inv) {
    for (int64_t i = 0; i < c; ++i) inv[i] = 1.0f / std::max(std::sqrt(variance[i]), 1e-7f);
}

void fixedNormForward(int64_t rows, int64_t c, const float* x, const float* mean, const float* inv, float* y,
                      ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 16384 / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* xr = x + r * c;
            float* yr = y + r * c;
            for (int64_t i = 0; i < c; ++i) yr[i] = (xr[i] - mean[i]) * inv[i];
        }
    });
}

void fixedNormBackward(int64_t rows, int64_t c, const float* dy, const float* inv, float* dx, ThreadPool& pool) {
    if (rows <= 0 || c <= 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, 16384 / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* dr = dy + r * c;
            float* xr = dx + r * c;
            for (int64_t i = 0; i < c; ++i) xr[i] += dr[i] * inv[i];
        }
    });
}

}  // namespace kiln::engine::kernels
