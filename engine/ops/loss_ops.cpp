// SPDX-License-Identifier: Apache-2.0
// Loss family: SparseCategoricalCrossentropy, CategoricalCrossentropy, BinaryCrossentropy,
// MeanSquaredError, MeanAbsoluteError. Inputs: (prediction, target); output: the mean loss.
// Cross-entropies work on logits (from_logits: true, the stable form) or on probabilities; as
// Keras, categorical probabilities are first divided by their row sum, then clipped to
// [1e-7, 1-1e-7].
#include <cmath>

#include "engine/ops/kernels/losses.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

constexpr float kProbEpsilon = 1e-7f;

Result<Shape> sparseShape(const ShapeContext& c) {
    const Shape& p = c.inputs[0];
    const Shape& t = c.inputs[1];
    if (p.rank() != 2)
        return shapeError(c, "expects predictions of shape [N,classes] but got " + p.toString());
    if (!(t.rank() == 1 || (t.rank() == 2 && t[1] == 1)))
        return shapeError(c, "expects integer class labels of shape [N] but got " + t.toString());
    return Shape{1};
}

Result<Shape> denseTargetShape(const ShapeContext& c) {
    const Shape& p = c.inputs[0];
    const Shape& t = c.inputs[1];
    if (p.rank() < 2) return shapeError(c, "expects predictions with a batch dimension, got " + p.toString());
    if (p.numelFrom(1) != t.numelFrom(1))
        return shapeError(c, "has predictions " + p.toString() + " but targets " + t.toString() +
                                 ": they must have the same number of values per sample");
    return Shape{1};
}

class LossKernel : public CpuKernel {
public:
    LossKernel(int64_t batch, int64_t width) : m_batch(batch), m_width(width) {}
    Status forward(const KernelIo& io) override {
        return compute(io, nullptr);
    }
    // The gradient is computed in a second pass of the same math, accumulating into dIn[0].
    Status backward(const KernelIo& io) override {
        if (!io.dIn[0]) return {};
        return compute(io, io.dIn[0]);
    }

protected:
    virtual Status compute(const KernelIo& io, float* grad) = 0;
    int64_t m_batch, m_width;
};

class SparseCeKernel final : public LossKernel {
public:
    SparseCeKernel(int64_t b, int64_t w, bool logits) : LossKernel(b, w), m_logits(logits) {}

protected:
    Status compute(const KernelIo& io, float* grad) override {
        const float* labels = io.in[1];
        if (m_logits) {
            auto r = kernels::sparseCategoricalCrossentropyLoss(io.in[0], labels, m_batch, m_width, nullptr, grad,
                                                                io.gradScale, *io.pool);
            if (!r.ok()) return badLabel(r.badLabel.position, r.badLabel.value);
            io.out[0] = r.loss;
            return {};
        }
        double sum = 0;
        for (int64_t i = 0; i < m_batch; ++i) {
            float lf = labels[i];
            auto l = static_cast<int64_t>(lf);
            if (!(lf >= 0) || l >= m_width || static_cast<float>(l) != lf) return badLabel(i, lf);
            const float* p = io.in[0] + i * m_width;
            float rowSum = 0;
            for (int64_t j = 0; j < m_width; ++j) rowSum += p[j];
            float q = p[l] / rowSum;
            float clipped = std::clamp(q, kProbEpsilon, 1.0f - kProbEpsilon);
            sum -= std::log(clipped);
            if (grad && q == clipped) {  // d/dp_j [log(s) - log(p_l)] = 1/s - [j == l]/p_l
                float scale = io.gradScale / static_cast<float>(m_batch);
                for (int64_t j = 0; j < m_width; ++j) grad[i * m_width + j] += scale / rowSum;
                grad[i * m_width + l] -= scale / p[l];
            }
        }
        io.out[0] = static_cast<float>(sum / static_cast<double>(m_batch));
        return {};
    }

private:
    Error badLabel(int64_t sample, float value) const {
        return Error(ErrorCode::DataError, "label " + std::to_string(value) + " of sample " + std::to_string(sample) +
                                               " is not a class index in [0, " + std::to_string(m_width) + ")")
            .with("reason", "label out of range");
    }
    bool m_logits;
};

class CategoricalCeKernel final : public LossKernel {
public:
    CategoricalCeKernel(int64_t b, int64_t w, bool logits) : LossKernel(b, w), m_logits(logits) {}

protected:
    Status compute(const KernelIo& io, float* grad) override {
        if (m_logits) {
            io.out[0] = kernels::categoricalCrossentropyLoss(io.in[0], io.in[1], m_batch, m_width, nullptr, grad,
                                                             io.gradScale, *io.pool);
            return {};
        }
        double sum = 0;
        const float scale = io.gradScale / static_cast<float>(m_batch);
        for (int64_t i = 0; i < m_batch; ++i) {
            const float* p = io.in[0] + i * m_width;
            const float* t = io.in[1] + i * m_width;
            float rowSum = 0, targetSum = 0;
            for (int64_t j = 0; j < m_width; ++j) rowSum += p[j];
            for (int64_t j = 0; j < m_width; ++j) {
                if (t[j] == 0.0f) continue;
                float q = p[j] / rowSum;
                float clipped = std::clamp(q, kProbEpsilon, 1.0f - kProbEpsilon);
                sum -= t[j] * std::log(clipped);
                if (grad && q == clipped) {  // d/dp_k of -t_j (log p_j - log s)
                    grad[i * m_width + j] -= scale * t[j] / p[j];
                    targetSum += t[j];
                }
            }
            if (grad)
                for (int64_t j = 0; j < m_width; ++j) grad[i * m_width + j] += scale * targetSum / rowSum;
        }
        io.out[0] = static_cast<float>(sum / static_cast<double>(m_batch));
        return {};
    }

private:
    bool m_logits;
};

class BinaryCeKernel final : public LossKernel {
public:
    BinaryCeKernel(int64_t b, int64_t w, bool logits) : LossKernel(b, w), m_logits(logits) {}

protected:
    Status compute(const KernelIo& io, float* grad) override {
        if (m_logits) {
            io.out[0] = kernels::binaryCrossentropyLoss(io.in[0], io.in[1], m_batch, m_width, nullptr, grad,
                                                        io.gradScale, *io.pool);
            return {};
        }
        const int64_t n = m_batch * m_width;
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            float z = io.in[1][i];
            float raw = io.in[0][i];
            float p = std::clamp(raw, kProbEpsilon, 1.0f - kProbEpsilon);
            sum -= z * std::log(p) + (1.0f - z) * std::log(1.0f - p);
            if (grad && raw == p) grad[i] += io.gradScale * (p - z) / (p * (1.0f - p) * static_cast<float>(n));
        }
        io.out[0] = static_cast<float>(sum / static_cast<double>(n));
        return {};
    }

private:
    bool m_logits;
};

template <bool Squared>
class RegressionKernel final : public LossKernel {
public:
    using LossKernel::LossKernel;

protected:
    Status compute(const KernelIo& io, float* grad) override {
        io.out[0] = Squared ? kernels::meanSquaredErrorLoss(io.in[0], io.in[1], m_batch, m_width, nullptr, grad,
                                                            io.gradScale, *io.pool)
                            : kernels::meanAbsoluteErrorLoss(io.in[0], io.in[1], m_batch, m_width, nullptr, grad,
                                                             io.gradScale, *io.pool);
        return {};
    }
};

template <typename K>
Result<std::unique_ptr<CpuKernel>> logitKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<K>(c.inputs[0][0], c.inputs[0].numelFrom(1), c.attrs.getBool("from_logits"));
}
template <bool Squared>
Result<std::unique_ptr<CpuKernel>> regressionKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<RegressionKernel<Squared>>(c.inputs[0][0], c.inputs[0].numelFrom(1));
}

AttrSpec fromLogits() {
    return boolAttr("from_logits", false, "predictions are logits (no softmax/sigmoid applied)");
}

}  // namespace

std::vector<OpDef> lossOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::SparseCategoricalCrossentropy, "SparseCategoricalCrossentropy", Category::Loss, 2, 2,
                    {fromLogits()}, sparseShape, nullptr, nullptr, logitKernel<SparseCeKernel>,
                    "Cross-entropy between integer class labels and predicted classes"});
    rows.push_back({OpKind::CategoricalCrossentropy, "CategoricalCrossentropy", Category::Loss, 2, 2, {fromLogits()},
                    denseTargetShape, nullptr, nullptr, logitKernel<CategoricalCeKernel>,
                    "Cross-entropy between one-hot targets and predicted classes"});
    rows.push_back({OpKind::BinaryCrossentropy, "BinaryCrossentropy", Category::Loss, 2, 2, {fromLogits()},
                    denseTargetShape, nullptr, nullptr, logitKernel<BinaryCeKernel>,
                    "Cross-entropy for 0/1 targets"});
    rows.push_back({OpKind::MeanSquaredError, "MeanSquaredError", Category::Loss, 2, 2, {}, denseTargetShape, nullptr,
                    nullptr, regressionKernel<true>, "Mean of squared differences"});
    rows.push_back({OpKind::MeanAbsoluteError, "MeanAbsoluteError", Category::Loss, 2, 2, {}, denseTargetShape,
                    nullptr, nullptr, regressionKernel<false>, "Mean of absolute differences"});
    return rows;
}

}  // namespace kiln::engine::ops
