// SPDX-License-Identifier: Apache-2.0
// Loss kernels (float32, Keras semantics, reduction = sum_over_batch_size i.e. the mean over the
// batch): sparse/categorical/binary cross-entropy from logits, mean squared and absolute error.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/reduce.h"

namespace kiln::engine::kernels {

// Shared conventions. Inputs are row-major [batch, classes] or [batch, width] views.
//  * Returns the mean loss over the batch, summed in double in a fixed order (deterministic and
//    independent of the pool size). An empty batch returns 0 and writes nothing.
//  * perSample (nullable, [batch]) receives each sample's loss, OVERWRITTEN. For the elementwise
//    losses (binary cross-entropy, MSE, MAE) it is the mean over the sample's `width` elements,
//    as Keras computes per-sample values before the batch reduction.
//  * gradLogits (nullable, same shape as the logits/predictions) ACCUMULATES
//    gradScale · d(returned mean loss)/d(logits) — the 1/batch of the mean is included, so
//    gradScale is 1 for a plain loss, the loss weight for weighted multi-output models, or a
//    loss-scaling factor.

// The result of the sparse loss, which can meet invalid labels.
struct SparseLossResult {
    float loss = 0.0f;    // mean loss; NaN when a label is invalid
    IndexError badLabel;  // position = the sample, value = its label, limit = classes
    bool ok() const { return badLabel.ok(); }
};

// Sparse categorical cross-entropy from logits: loss_i = logsumexp(x_i) - x_i[label_i], with
// labels[batch] class indices stored as floats. Every label is validated first (an integer in
// [0, classes)); on the first invalid one nothing is written and the result says which sample
// and value, so the caller can report "label 12 out of range [0, 10) at sample 3".
// Gradient: gradScale/batch · (softmax(x_i) - onehot(label_i)).
[[nodiscard]] SparseLossResult sparseCategoricalCrossentropyLoss(
    const float* logits, const float* labels, int64_t batch, int64_t classes, float* perSample,
    float* gradLogits, float gradScale, ThreadPool& pool);

// Categorical cross-entropy from logits with one-hot or soft targets [batch, classes]:
// loss_i = -Σ_c t_ic · log softmax(x_i)_c = logsumexp(x_i)·Σ_c t_ic - Σ_c t_ic·x_ic.
// Gradient (exact, also when the targets do not sum to 1): gradScale/batch · (softmax(x_i)·Σ_c t_ic - t_i).
float categoricalCrossentropyLoss(const float* logits, const float* targets, int64_t batch,
                                  int64_t classes, float* perSample, float* gradLogits,
                                  float gradScale, ThreadPool& pool);

// Binary cross-entropy from logits, elementwise in the stable form
// l = max(x, 0) - x·z + log(1 + exp(-|x|)), mean over all batch·width elements (Keras: mean over
// the last axis, then over the batch). Gradient: gradScale/(batch·width) · (sigmoid(x) - z).
float binaryCrossentropyLoss(const float* logits, const float* targets, int64_t batch, int64_t width,
                             float* perSample, float* gradLogits, float gradScale, ThreadPool& pool);

// Mean squared error (p - t)², mean over all elements. Gradient: gradScale/(batch·width) · 2(p - t).
float meanSquaredErrorLoss(const float* predictions, const float* targets, int64_t batch, int64_t width,
                           float* perSample, float* gradPredictions, float gradScale, ThreadPool& pool);

// Mean absolute error |p - t|, mean over all elements. Gradient: gradScale/(batch·width) ·
// sign(p - t), with sign(0) = 0 as in TensorFlow.
float meanAbsoluteErrorLoss(const float* predictions, const float* targets, int64_t batch, int64_t width,
                            float* perSample, float* gradPredictions, float gradScale, ThreadPool& pool);

}  // namespace kiln::engine::kernels
