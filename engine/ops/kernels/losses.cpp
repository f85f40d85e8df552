// SPDX-License-Identifier: Apache-2.0
// Loss kernels. Rows are processed in fixed blocks (blockedSum): each block computes its rows'
// losses (and gradients) and returns their sum in double; blocks are added in order.
#include "engine/ops/kernels/losses.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::engine::kernels {

namespace {

// Elements of work per reduction block, at least (exp/log heavy, so smaller than for adds).
constexpr int64_t kLossBlock = 4096;

int64_t rowsPerBlock(int64_t width) { return std::max<int64_t>(1, kLossBlock / std::max<int64_t>(width, 1)); }

// Max and Σ exp(x - max) of one row of logits; the exponentials are float, their sum double.
struct RowLse {
    float max;
    double sumExp;
    double lse() const { return static_cast<double>(max) + std::log(sumExp); }
};

RowLse rowLogSumExp(const float* x, int64_t cols) {
    float m = x[0];
    for (int64_t c = 1; c < cols; ++c) m = x[c] > m ? x[c] : m;
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[c] - m);
    return {m, s};
}

// The per-element loss functions of the elementwise losses, with their derivatives.
struct BinaryCrossentropy {
    static double loss(float x, float z) {
        return static_cast<double>(std::max(x, 0.0f) - x * z) + std::log1p(std::exp(-std::fabs(x)));
    }
    static float grad(float x, float z) {
        const float e = std::exp(-std::fabs(x));
        const float r = 1.0f / (1.0f + e);
        return (x >= 0.0f ? r : e * r) - z;
    }
};

struct SquaredError {
    static double loss(float p, float t) {
        const double d = static_cast<double>(p) - t;
        return d * d;
    }
    static float grad(float p, float t) { return 2.0f * (p - t); }
};

struct AbsoluteError {
    static double loss(float p, float t) { return std::fabs(static_cast<double>(p) - t); }
    static float grad(float p, float t) {
        const float d = p - t;
        return static_cast<float>((d > 0.0f) - (d < 0.0f));
    }
};

// Mean over all batch·width elements of F::loss; per-sample means and scaled gradients optional.
template <typename F>
float elementwiseLoss(const float* pred, const float* target, int64_t batch, int64_t width,
                      float* perSample, float* grad, float gradScale, ThreadPool& pool) {
    if (batch <= 0 || width <= 0) return 0.0f;
    const double count = static_cast<double>(batch) * static_cast<double>(width);
    const float coef = static_cast<float>(static_cast<double>(gradScale) / count);
    const double invWidth = 1.0 / static_cast<double>(width);
    const double total = blockedSum(batch, rowsPerBlock(width), [&](int64_t r0, int64_t r1) {
        double blockSum = 0.0;
        for (int64_t r = r0; r < r1; ++r) {
            const float* p = pred + r * width;
            const float* t = target + r * width;
            double rowSum = 0.0;
            for (int64_t j = 0; j < width; ++j) rowSum += F::loss(p[j], t[j]);
            if (perSample) perSample[r] = static_cast<float>(rowSum * invWidth);
            if (grad) {
                float* g = grad + r * width;
                for (int64_t j = 0; j < width; ++j) g[j] += coef * F::grad(p[j], t[j]);
            }
            blockSum += rowSum;
        }
        return blockSum;
    }, pool);
    return static_cast<float>(total / count);
}

}  // namespace

SparseLossResult sparseCategoricalCrossentropyLoss(const float* logits, const float* labels, int64_t batch,
                                                   int64_t classes, float* perSample, float* gradLogits,
                                                   float gradScale, ThreadPool& pool) {
    SparseLossResult result;
    if (batch <= 0) return result;
    result.badLabel = findInvalidIndex(labels, batch, classes, pool);
    if (!result.badLabel.ok()) {
        result.loss = std::numeric_limits<float>::quiet_NaN();
        return result;
    }
    const float coef = static_cast<float>(static_cast<double>(gradScale) / static_cast<double>(batch));
    const double total = blockedSum(batch, rowsPerBlock(classes), [&](int64_t r0, int64_t r1) {
        double blockSum = 0.0;
        for (int64_t r = r0; r < r1; ++r) {
            const float* x = logits + r * classes;
            const int64_t label = static_cast<int64_t>(labels[r]);
            const RowLse l = rowLogSumExp(x, classes);
            const double loss = l.lse() - static_cast<double>(x[label]);
            if (perSample) perSample[r] = static_cast<float>(loss);
            if (gradLogits) {
                float* g = gradLogits + r * classes;
                const float invSum = static_cast<float>(1.0 / l.sumExp);
                for (int64_t c = 0; c < classes; ++c) {
                    const float p = std::exp(x[c] - l.max) * invSum;
                    g[c] += coef * (p - (c == label ? 1.0f : 0.0f));
                }
            }
            blockSum += loss;
        }
        return blockSum;
    }, pool);
    result.loss = static_cast<float>(total / static_cast<double>(batch));
    return result;
}

float categoricalCrossentropyLoss(const float* logits, const float* targets, int64_t batch, int64_t classes,
                                  float* perSample, float* gradLogits, float gradScale, ThreadPool& pool) {
    if (batch <= 0 || classes <= 0) return 0.0f;
    const float coef = static_cast<float>(static_cast<double>(gradScale) / static_cast<double>(batch));
    const double total = blockedSum(batch, rowsPerBlock(classes), [&](int64_t r0, int64_t r1) {
        double blockSum = 0.0;
        for (int64_t r = r0; r < r1; ++r) {
            const float* x = logits + r * classes;
            const float* t = targets + r * classes;
            const RowLse l = rowLogSumExp(x, classes);
            double targetSum = 0.0, targetDotLogits = 0.0;
            for (int64_t c = 0; c < classes; ++c) {
                targetSum += t[c];
                targetDotLogits += static_cast<double>(t[c]) * x[c];
            }
            const double loss = l.lse() * targetSum - targetDotLogits;
            if (perSample) perSample[r] = static_cast<float>(loss);
            if (gradLogits) {
                float* g = gradLogits + r * classes;
                const float pScale = static_cast<float>(targetSum / l.sumExp);
                for (int64_t c = 0; c < classes; ++c)
                    g[c] += coef * (std::exp(x[c] - l.max) * pScale - t[c]);
            }
            blockSum += loss;
        }
        return blockSum;
    }, pool);
    return static_cast<float>(total / static_cast<double>(batch));
}

float binaryCrossentropyLoss(const float* logits, const float* targets, int64_t batch, int64_t width,
                             float* perSample, float* gradLogits, float gradScale, ThreadPool& pool) {
    return elementwiseLoss<BinaryCrossentropy>(logits, targets, batch, width, perSample, gradLogits, gradScale, pool);
}

float meanSquaredErrorLoss(const float* predictions, const float* targets, int64_t batch, int64_t width,
                           float* perSample, float* gradPredictions, float gradScale, ThreadPool& pool) {
    return elementwiseLoss<SquaredError>(predictions, targets, batch, width, perSample, gradPredictions, gradScale, pool);
}

float meanAbsoluteErrorLoss(const float* predictions, const float* targets, int64_t batch, int64_t width,
                            float* perSample, float* gradPredictions, float gradScale, ThreadPool& pool) {
    return elementwiseLoss<AbsoluteError>(predictions, targets, batch, width, perSample, gradPredictions, gradScale, pool);
}

}  // namespace kiln::engine::kernels
