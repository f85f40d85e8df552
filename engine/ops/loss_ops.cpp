// SPDX-License-Identifier: Apache-2.0
// Loss family: SparseCategoricalCrossentropy, CategoricalCrossentropy, BinaryCrossentropy,
// MeanSquaredError, MeanAbsoluteError and the focal losses (BinaryFocalCrossentropy,
// CategoricalFocalCrossentropy, SparseCategoricalFocalCrossentropy). Inputs: (prediction,
// target); output: the mean loss.
// Cross-entropies work on logits (from_logits: true, the stable form) or on probabilities; as
// Keras, categorical probabilities are first divided by their row sum, then clipped to
// [1e-7, 1-1e-7].
#include <algorithm>
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


// ---- Focal losses (Keras 3 formulas, computed in double) ---------------------------------------
// Binary, per element with target z (label-smoothed to t = z(1-ls) + ls/2) and probability p
// (sigmoid of the logit when from_logits):
//   o = clip(p, eps, 1-eps), bce = -(t log(o+eps) + (1-t) log(1-o+eps)),
//   p_t = t p + (1-t)(1-p), loss = w (1-p_t)^gamma bce, w = t alpha + (1-t)(1-alpha) with
//   apply_class_balancing, else 1; mean over the sample's elements, then over the batch.
// Categorical, per row with targets t (label-smoothed to t(1-ls) + ls/classes) and probabilities
// q (softmax of the logits when from_logits): o = clip(q / Σq, eps, 1-eps),
//   loss = Σ_j alpha (1-o_j)^gamma (-t_j log o_j); the sparse form takes t = onehot(label).
// Gradients are the exact derivatives of these expressions (zero where a clip is active).

// d/db of b^gamma, with the limit at b = 0 (gamma >= 1 there; gamma < 1 gives 0 by convention).
double powGrad(double b, double gamma) {
    if (gamma == 0.0) return 0.0;
    if (b > 0.0) return gamma * std::pow(b, gamma - 1.0);
    return gamma == 1.0 ? 1.0 : 0.0;
}

double sigmoid(double x) {
    return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

struct FocalAttrs {
    double gamma = 2.0;
    double alpha = 0.25;
    bool fromLogits = false;
    double labelSmoothing = 0.0;
    bool classBalancing = false;  // binary only
};

FocalAttrs focalAttrs(const AttrMap& a) {
    FocalAttrs f;
    f.gamma = a.getFloat("gamma");
    f.alpha = a.getFloat("alpha");
    f.fromLogits = a.getBool("from_logits");
    if (a.has("label_smoothing")) f.labelSmoothing = a.getFloat("label_smoothing");
    if (a.has("apply_class_balancing")) f.classBalancing = a.getBool("apply_class_balancing");
    return f;
}

class BinaryFocalKernel final : public LossKernel {
public:
    BinaryFocalKernel(int64_t b, int64_t w, FocalAttrs a) : LossKernel(b, w), m_a(a) {}

protected:
    Status compute(const KernelIo& io, float* grad) override {
        const int64_t n = m_batch * m_width;
        const double eps = kProbEpsilon, ls = m_a.labelSmoothing, g = m_a.gamma;
        const double coef = static_cast<double>(io.gradScale) / static_cast<double>(n);
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double x = io.in[0][i];
            const double t = ls > 0 ? io.in[1][i] * (1.0 - ls) + 0.5 * ls : io.in[1][i];
            const double p = m_a.fromLogits ? sigmoid(x) : x;
            const double o = std::clamp(p, eps, 1.0 - eps);
            const double bce = -(t * std::log(o + eps) + (1.0 - t) * std::log(1.0 - o + eps));
            const double base = 1.0 - (t * p + (1.0 - t) * (1.0 - p));
            const double focal = std::pow(base, g);
            const double w = m_a.classBalancing ? t * m_a.alpha + (1.0 - t) * (1.0 - m_a.alpha) : 1.0;
            sum += w * focal * bce;
            if (!grad) continue;
            const double dBce = p == o ? -(t / (o + eps) - (1.0 - t) / (1.0 - o + eps)) : 0.0;
            const double dFocal = -(2.0 * t - 1.0) * powGrad(base, g);
            double d = w * (dFocal * bce + focal * dBce);
            if (m_a.fromLogits) d *= p * (1.0 - p);
            grad[i] += static_cast<float>(coef * d);
        }
        io.out[0] = static_cast<float>(sum / static_cast<double>(n));
        return {};
    }

private:
    FocalAttrs m_a;
};

// Dense (one-hot or soft) targets, or sparse integer labels.
class CategoricalFocalKernel final : public LossKernel {
public:
    CategoricalFocalKernel(int64_t b, int64_t w, FocalAttrs a, bool sparse) : LossKernel(b, w), m_a(a), m_sparse(sparse) {}

protected:
    Status compute(const KernelIo& io, float* grad) override {
        const double eps = kProbEpsilon, g = m_a.gamma, alpha = m_a.alpha;
        const double ls = m_sparse ? 0.0 : m_a.labelSmoothing;
        const double coef = static_cast<double>(io.gradScale) / static_cast<double>(m_batch);
        const int64_t w = m_width;
        // Every label is checked before anything is written.
        for (int64_t i = 0; m_sparse && i < m_batch; ++i) {
            const float lf = io.in[1][i];
            if (!(lf >= 0) || static_cast<int64_t>(lf) >= w || static_cast<float>(static_cast<int64_t>(lf)) != lf)
                return Error(ErrorCode::DataError, "label " + std::to_string(lf) + " of sample " + std::to_string(i) +
                                                       " is not a class index in [0, " + std::to_string(w) + ")")
                    .with("reason", "label out of range");
        }
        double sum = 0;
        for (int64_t i = 0; i < m_batch; ++i) {
            const float* x = io.in[0] + i * w;
            const int64_t label = m_sparse ? static_cast<int64_t>(io.in[1][i]) : -1;
            auto target = [&](int64_t j) -> double {
                const double t = m_sparse ? (j == label ? 1.0 : 0.0) : io.in[1][i * w + j];
                return ls > 0 ? t * (1.0 - ls) + ls / static_cast<double>(w) : t;
            };
            // q_j: softmax of the logits (max-shifted) or the probabilities as given.
            double mx = x[0], sumExp = 0;
            if (m_a.fromLogits) {
                for (int64_t j = 1; j < w; ++j) mx = std::max(mx, static_cast<double>(x[j]));
                for (int64_t j = 0; j < w; ++j) sumExp += std::exp(x[j] - mx);
            }
            auto q = [&](int64_t j) -> double { return m_a.fromLogits ? std::exp(x[j] - mx) / sumExp : x[j]; };
            double s = 0;
            for (int64_t j = 0; j < w; ++j) s += q(j);
            double rowLoss = 0;
            for (int64_t j = 0; j < w; ++j) {
                const double t = target(j);
                if (t == 0.0) continue;
                const double o = std::clamp(q(j) / s, eps, 1.0 - eps);
                rowLoss -= alpha * std::pow(1.0 - o, g) * t * std::log(o);
            }
            sum += rowLoss;
            if (!grad) continue;
            // dL/do_j (zero where the clip is active), then through o = q / Σq, then the softmax.
            auto dO = [&](int64_t j) -> double {
                const double t = target(j);
                if (t == 0.0) return 0.0;
                const double raw = q(j) / s;
                const double o = std::clamp(raw, eps, 1.0 - eps);
                if (o != raw) return 0.0;
                return alpha * t * (powGrad(1.0 - o, g) * std::log(o) - std::pow(1.0 - o, g) / o);
            };
            double dotO = 0;
            for (int64_t j = 0; j < w; ++j) dotO += dO(j) * q(j) / s;
            auto dQ = [&](int64_t j) { return (dO(j) - dotO) / s; };
            double dotQ = 0;
            if (m_a.fromLogits)
                for (int64_t j = 0; j < w; ++j) dotQ += dQ(j) * q(j);
            for (int64_t j = 0; j < w; ++j) {
                const double d = m_a.fromLogits ? q(j) * (dQ(j) - dotQ) : dQ(j);
                grad[i * w + j] += static_cast<float>(coef * d);
            }
        }
        io.out[0] = static_cast<float>(sum / static_cast<double>(m_batch));
        return {};
    }

private:
    FocalAttrs m_a;
    bool m_sparse;
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

Result<std::unique_ptr<CpuKernel>> binaryFocalKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<BinaryFocalKernel>(c.inputs[0][0], c.inputs[0].numelFrom(1), focalAttrs(c.attrs));
}
template <bool Sparse>
Result<std::unique_ptr<CpuKernel>> categoricalFocalKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<CategoricalFocalKernel>(c.inputs[0][0], c.inputs[0].numelFrom(1), focalAttrs(c.attrs), Sparse);
}

AttrSpec gammaAttr() {
    return floatAttr("gamma", 2.0, 0.0, std::nullopt, "focusing parameter: (1 - p_t)^gamma down-weights easy examples");
}
AttrSpec alphaAttr(const char* doc) { return floatAttr("alpha", 0.25, 0.0, 1.0, doc); }
AttrSpec labelSmoothingAttr() {
    return floatAttr("label_smoothing", 0.0, 0.0, 1.0, "moves targets towards the uniform distribution by this much");
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
    rows.push_back({OpKind::BinaryFocalCrossentropy, "BinaryFocalCrossentropy", Category::Loss, 2, 2,
                    {gammaAttr(), alphaAttr("weight of the positive class when apply_class_balancing is set"),
                     boolAttr("apply_class_balancing", false, "weight positives by alpha and negatives by 1 - alpha"),
                     fromLogits(), labelSmoothingAttr()},
                    denseTargetShape, nullptr, nullptr, binaryFocalKernel,
                    "Binary cross-entropy scaled by (1 - p_t)^gamma, focusing on hard examples"});
    rows.push_back({OpKind::CategoricalFocalCrossentropy, "CategoricalFocalCrossentropy", Category::Loss, 2, 2,
                    {gammaAttr(), alphaAttr("weighting factor of every class term"), fromLogits(), labelSmoothingAttr()},
                    denseTargetShape, nullptr, nullptr, categoricalFocalKernel<false>,
                    "Categorical cross-entropy scaled by alpha (1 - p)^gamma, for one-hot targets"});
    rows.push_back({OpKind::SparseCategoricalFocalCrossentropy, "SparseCategoricalFocalCrossentropy", Category::Loss, 2,
                    2, {gammaAttr(), alphaAttr("weighting factor of every class term"), fromLogits()}, sparseShape,
                    nullptr, nullptr, categoricalFocalKernel<true>, "Focal cross-entropy for integer class labels"});
    return rows;
}

}  // namespace kiln::engine::ops
