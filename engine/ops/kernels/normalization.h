// SPDX-License-Identifier: Apache-2.0
// Batch and layer normalisation over the last (channel) axis of a row-major [rows, c] float32
// view, forward and accumulating backward. For NHWC tensors rows = n*h*w.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// Conventions shared by every function here:
// - gamma (scale) and beta (center) are [c] and may be nullptr, meaning 1 and 0 (Keras's
//   scale=False / center=False).
// - Backward functions ACCUMULATE: dx += ..., dgamma += ..., dbeta += ...; each may be nullptr.
// - Reductions accumulate in double in a fixed order (over rows per channel, or over channels
//   per row), so results are bit-identical run to run and for any thread count.

struct BatchNormParams {
    float epsilon = 1e-3f;   // Keras default
    float momentum = 0.99f;  // Keras convention: moving = moving*momentum + batch*(1 - momentum)
    // Which batch variance feeds the moving variance. false: the biased batch variance (divide by
    // rows), which is what Keras 3 and TF2 Keras's non-fused path do. true: the unbiased one
    // (divide by rows - 1), which is what PyTorch and TF2 Keras's fused path (the default for
    // 4-D NHWC inputs) do. Normalisation itself always uses the biased variance.
    bool unbiasedMovingVariance = false;
};

// What a plan may ask of batch normalisation beyond the layer itself (default: nothing).
struct BatchNormFusion {
    // A following ReLU: the forward functions write max(y, 0); the backward functions use dy only
    // where that output (`out`) is positive.
    bool relu = false;
    const float* out = nullptr;  // backward with relu: the forward output
    // Backward: dx = ... instead of dx += ... (the first write of dx in a training step).
    bool overwriteDx = false;
    // A residual added to the normalised value (Add(BatchNorm(x), residual), folded in): the
    // forward functions add residual[rows, c] before any ReLU; the backward functions pass the
    // output gradient (masked like dy with relu) on to dResidual, = with overwriteResidual, else
    // +=. dResidual may alias dx (the residual is x itself): dResidual is written first, as an
    // unfused Add's backward step would have been.
    const float* residual = nullptr;
    float* dResidual = nullptr;
    bool overwriteResidual = false;
    // batchNormBackwardTraining with relu and no residual: take the ReLU's mask from x instead of
    // reading `out`. The backward pass reads x anyway, and (x - mean) * (invStd * gamma) + beta is
    // forward's pre-activation bit for bit, so the gradients are the same and one tensor fewer is
    // read twice. `beta` is the layer's beta as forward used it (null: 0). The other backward
    // functions read `out`.
    bool maskFromInput = false;
    const float* beta = nullptr;
};

// Training-mode forward: batch statistics per channel, y = (x - mean) * invStd * gamma + beta
// with invStd = 1 / sqrt(var + epsilon), var biased. Writes saveMean[c] and saveInvStd[c] for
// the backward pass and, when movingMean/movingVar are non-null, updates them in place with the
// momentum rule above. Overwrites y (y may alias x).
void batchNormForwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                              const BatchNormParams& params, float* y, float* saveMean, float* saveInvStd,
                              float* movingMean, float* movingVar, ThreadPool& pool,
    const BatchNormFusion& fusion = {});

// Inference-mode forward with the moving statistics. Overwrites y (y may alias x).
void batchNormForwardInference(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                               const float* movingMean, const float* movingVar, float epsilon, float* y,
                               ThreadPool& pool,
    const BatchNormFusion& fusion = {});

// Gradients of batchNormForwardTraining (the batch statistics depend on x):
//   xhat = (x - mean) * invStd, dbeta += sum dy, dgamma += sum dy*xhat,
//   dx += gamma * invStd * (dy - mean(dy) - xhat * mean(dy*xhat)).
void batchNormBackwardTraining(int64_t rows, int64_t c, const float* x, const float* gamma,
                               const float* saveMean, const float* saveInvStd, const float* dy, float* dx,
                               float* dgamma, float* dbeta, ThreadPool& pool,
    const BatchNormFusion& fusion = {});

// Gradients of batchNormForwardInference (frozen statistics, e.g. fine-tuning with
// training=False): dx += dy * gamma * invStd, dgamma += sum dy*xhat, dbeta += sum dy.
void batchNormBackwardInference(int64_t rows, int64_t c, const float* x, const float* gamma,
                                const float* movingMean, const float* movingVar, float epsilon,
                                const float* dy, float* dx, float* dgamma, float* dbeta, ThreadPool& pool,
    const BatchNormFusion& fusion = {});

// Layer normalisation of each row over its c channels (Keras LayerNormalization with axis=-1,
// default epsilon 1e-3): y = (x - mean_r) * rstd_r * gamma + beta, rstd = 1/sqrt(var_r + eps),
// var biased. Writes saveMean[rows] and saveRstd[rows]. Overwrites y (y may alias x).
void layerNormForward(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                      float epsilon, float* y, float* saveMean, float* saveRstd, ThreadPool& pool);

// Gradients of layerNormForward: with g = dy * gamma,
//   dx += rstd * (g - mean_c(g) - xhat * mean_c(g * xhat)), dgamma += sum_rows dy*xhat,
//   dbeta += sum_rows dy.
void layerNormBackward(int64_t rows, int64_t c, const float* x, const float* gamma, const float* saveMean,
                       const float* saveRstd, const float* dy, float* dx, float* dgamma, float* dbeta,
                       ThreadPool& pool);

// Keras's Normalization layer with fixed statistics: inv[c] = 1 / max(sqrt(variance[c]), 1e-7)
// (Keras's epsilon), then y = (x - mean[c]) * inv[c] over [rows, c]; y may alias x.
void fixedNormScale(const float* variance, int64_t c, float* inv);
void fixedNormForward(int64_t rows, int64_t c, const float* x, const float* mean, const float* inv, float* y,
                      ThreadPool& pool);
// dx += dy * inv[c]; the statistics get no gradient.
void fixedNormBackward(int64_t rows, int64_t c, const float* dy, const float* inv, float* dx, ThreadPool& pool);

}  // namespace kiln::engine::kernels

namespace kiln::engine::kernels {

// Synchronised batch normalisation for data-parallel training: while a hook is installed on the
// calling thread, training-mode BatchNormalization sums its per-channel statistics over every
// replica through it, so each replica normalises with the statistics of the whole global batch.
class BatchNormSync {
public:
    virtual ~BatchNormSync() = default;
    // Element-wise sum of `values` over all replicas, in place; the same order on every replica.
    virtual bool allReduceSum(double* values, int64_t n) = 0;
    // True: every training-mode BatchNormalization synchronises; false: only those whose
    // `synchronized` attribute is set.
    virtual bool everyLayer() const { return false; }
};
// The calling thread's hook (null by default); set per replica thread by the data-parallel runner.
BatchNormSync* batchNormSync();
void setBatchNormSync(BatchNormSync* sync);

// As batchNormForwardTraining/batchNormBackwardTraining, with the sums over rows (count, sum x,
// sum x², and in backward sum dy, sum dy·xhat) reduced through `sync` first. dgamma/dbeta receive
// this replica's local sums only (the gradient all-reduce adds the other replicas'). Return false
// when the reduction failed.
bool batchNormForwardTrainingSync(int64_t rows, int64_t c, const float* x, const float* gamma, const float* beta,
                                  const BatchNormParams& params, float* y, float* saveMean, float* saveInvStd,
                                  float* movingMean, float* movingVar, BatchNormSync& sync, ThreadPool& pool,
    const BatchNormFusion& fusion = {});
bool batchNormBackwardTrainingSync(int64_t rows, int64_t c, const float* x, const float* gamma,
                                   const float* saveMean, const float* saveInvStd, const float* dy, float* dx,
                                   float* dgamma, float* dbeta, BatchNormSync& sync, ThreadPool& pool,
    const BatchNormFusion& fusion = {});

}  // namespace kiln::engine::kernels
