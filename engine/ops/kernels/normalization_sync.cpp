// SPDX-License-Identifier: Apache-2.0
// Synchronised batch normalisation: per-channel sums over this replica's rows, reduced across
// replicas through a hook, then the usual normalisation. Sums are in double, in row order.
#include "engine/ops/kernels/normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::engine::kernels {
namespace {
thread_local BatchNormSync* t_sync = nullptr;
}  // namespace

BatchNormSync* batchNormSync() {
    return t_sync;
}
void setBatchNormSync(BatchNormSync* sync) {
    t_sync = sync;
}

bool batchNormForwardTrainingSync(int64_t rows, int64_t c, const float* x, const float* gamma,
                                  const float* beta, const BatchNormParams& params, float* y, float* saveMean,
                                  float* saveInvStd, float* movingMean, float* movingVar, BatchNormSync& sync,
                                  ThreadPool& pool, const BatchNormFusion& fusion) {
    // Layout of the reduced vector: [sum x (c), sum x² (c), rows].
    std::vector<double> sums(static_cast<size_t>(2 * c + 1), 0.0);
    pool.parallelFor(c, 16, [&](int64_t c0, int64_t c1) {
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * c;
            for (int64_t j = c0; j < c1; ++j) {
                const double v = xr[j];
                sums[static_cast<size_t>(j)] += v;
                sums[static_cast<size_t>(c + j)] += v * v;
            }
        }
    });
    sums[static_cast<size_t>(2 * c)] = static_cast<double>(rows);
    if (!sync.allReduceSum(sums.data(), 2 * c + 1)) return false;
    const double n = sums[static_cast<size_t>(2 * c)];
    for (int64_t j = 0; j < c; ++j) {
        const double mean = sums[static_cast<size_t>(j)] / n;
        const double var = std::max(0.0, sums[static_cast<size_t>(c + j)] / n - mean * mean);
        saveMean[j] = static_cast<float>(mean);
        saveInvStd[j] = static_cast<float>(1.0 / std::sqrt(var + params.epsilon));
        if (movingMean && movingVar) {
            const double movingV = params.unbiasedMovingVariance && n > 1 ? var * n / (n - 1) : var;
            movingMean[j] =
                static_cast<float>(movingMean[j] * params.momentum + mean * (1.0 - params.momentum));
            movingVar[j] =
                static_cast<float>(movingVar[j] * params.momentum + movingV * (1.0 - params.momentum));
        }
    }
    pool.parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            for (int64_t j = 0; j < c; ++j) {
                const float g = gamma ? gamma[j] : 1.0f, b = beta ? beta[j] : 0.0f;
                float v = (x[r * c + j] - saveMean[j]) * saveInvStd[j] * g + b;
                if (fusion.residual) v += fusion.residual[r * c + j];
                y[r * c + j] = fusion.relu && v < 0.0f ? 0.0f : v;
            }
    });
    return true;
}

bool batchNormBackwardTrainingSync(int64_t rows, int64_t c, const float* x, const float* gamma,
                                   const float* saveMean, const float* saveInvStd, const float* dy, float* dx,
                                   float* dgamma, float* dbeta, BatchNormSync& sync, ThreadPool& pool,
                                   const BatchNormFusion& fusion) {
    const float* out = fusion.relu ? fusion.out : nullptr;
    auto grad = [&](int64_t i) -> double { return !out || out[i] > 0.0f ? dy[i] : 0.0; };
    // [sum dy (c), sum dy·xhat (c), rows]: the local part goes to dbeta/dgamma, the global one to dx.
    std::vector<double> sums(static_cast<size_t>(2 * c + 1), 0.0);
    pool.parallelFor(c, 16, [&](int64_t c0, int64_t c1) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = c0; j < c1; ++j) {
                const double g = grad(r * c + j);
                sums[static_cast<size_t>(j)] += g;
                sums[static_cast<size_t>(c + j)] += g * (x[r * c + j] - saveMean[j]) * saveInvStd[j];
            }
    });
    for (int64_t j = 0; j < c; ++j) {
        if (dbeta) dbeta[j] += static_cast<float>(sums[static_cast<size_t>(j)]);
        if (dgamma) dgamma[j] += static_cast<float>(sums[static_cast<size_t>(c + j)]);
    }
    // Each replica's dy is the gradient of the mean loss over its own rows. Weighted by its rows,
    // the sums become sums of per-sample gradients; dividing by the global count and by this
    // replica's rows brings them back to its scale, so shards of unequal size combine exactly
    // (with equal shards this is the plain mean of dy over the global batch).
    const double local = static_cast<double>(rows);
    for (int64_t j = 0; j < 2 * c; ++j) sums[static_cast<size_t>(j)] *= local;
    sums[static_cast<size_t>(2 * c)] = local;
    if (!sync.allReduceSum(sums.data(), 2 * c + 1)) return false;
    if (float* dres = fusion.dResidual) {  // before dx is written: they may alias
        pool.parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
            for (int64_t i = r0 * c; i < r1 * c; ++i) {
                const auto g = static_cast<float>(grad(i));
                dres[i] = fusion.overwriteResidual ? g : dres[i] + g;
            }
        });
    }
    if (!dx) return true;
    const double n = sums[static_cast<size_t>(2 * c)] * local;
    pool.parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            for (int64_t j = 0; j < c; ++j) {
                const double xhat = (x[r * c + j] - saveMean[j]) * saveInvStd[j];
                const double meanDy = sums[static_cast<size_t>(j)] / n;
                const double meanDyXhat = sums[static_cast<size_t>(c + j)] / n;
                const double g = gamma ? gamma[j] : 1.0;
                const auto v = static_cast<float>(g * saveInvStd[j] * (grad(r * c + j) - meanDy - xhat * meanDyXhat));
                dx[r * c + j] = fusion.overwriteDx ? v : dx[r * c + j] + v;
            }
    });
    return true;
}

}  // namespace kiln::engine::kernels
