// SPDX-License-Identifier: Apache-2.0
// Activation family as layers: ReLU, LeakyReLU, ReLU6, GELU, Sigmoid, Tanh, Softmax, SiLU,
// HardSigmoid, HardSwish, Clip.
#include "engine/ops/kernels/elementwise.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

Result<Shape> sameShape(const ShapeContext& c) { return c.inputs[0]; }

class ActivationKernel final : public CpuKernel {
public:
    ActivationKernel(kernels::Activation act, int64_t rows, int64_t cols, float param)
        : m_act(act), m_rows(rows), m_cols(cols), m_param(param) {}
    bool backwardNeedsInputs() const override {
        return m_act == kernels::Activation::GELU || m_act == kernels::Activation::SiLU ||
               m_act == kernels::Activation::HardSwish ||
               (m_act == kernels::Activation::LeakyReLU && m_param <= 0.0f);
    }
    bool backwardNeedsOutput() const override { return !backwardNeedsInputs(); }
    bool overwritesInputGrads() const override { return true; }
    Status forward(const KernelIo& io) override {
        if (m_act == kernels::Activation::Softmax)
            kernels::softmaxForward(io.in[0], io.out, m_rows, m_cols, *io.pool);
        else
            kernels::activationForward(m_act, io.in[0], io.out, m_rows * m_cols, m_param, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (!io.dIn[0]) return {};
        const bool overwrite = overwritesGrad(io, 0);
        if (m_act == kernels::Activation::Softmax) {
            if (overwrite) kernels::zero(io.dIn[0], m_rows * m_cols, *io.pool);
            kernels::softmaxBackward(io.out, io.dOut, io.dIn[0], m_rows, m_cols, *io.pool);
        } else if (backwardNeedsInputs()) {
            kernels::activationBackward(m_act, io.in[0], nullptr, io.dOut, io.dIn[0], m_rows * m_cols, m_param,
                                        *io.pool, overwrite);
        } else {
            kernels::activationBackward(m_act, nullptr, io.out, io.dOut, io.dIn[0], m_rows * m_cols, m_param,
                                        *io.pool, overwrite);
        }
        return {};
    }

private:
    kernels::Activation m_act;
    int64_t m_rows, m_cols;
    float m_param;
};

template <kernels::Activation A>
Result<std::unique_ptr<CpuKernel>> activationKernel(const ShapeContext& c, const Shape& out) {
    float param = 0.0f;
    if constexpr (A == kernels::Activation::LeakyReLU) param = static_cast<float>(c.attrs.getFloat("negative_slope"));
    if constexpr (A == kernels::Activation::GELU)
        param = c.attrs.getBool("approximate") ? kernels::kGeluApproximate : kernels::kGeluExact;
    int64_t cols = out[-1];
    return makeKernel<ActivationKernel>(A, out.numel() / cols, cols, param);
}

Result<Shape> softmaxShape(const ShapeContext& c) {
    int64_t axis = c.attrs.getInt("axis");
    if (axis != -1 && axis != c.inputs[0].rank() - 1)
        return shapeError(c, "supports only the last axis (axis -1), got axis " + std::to_string(axis));
    if (c.inputs[0].rank() < 2) return shapeError(c, "expects a batch and at least one more dimension");
    return c.inputs[0];
}

// Clip: min(max(x, min), max), differentiated from the input.
class ClipKernel final : public CpuKernel {
public:
    ClipKernel(int64_t n, float lo, float hi) : m_n(n), m_lo(lo), m_hi(hi) {}
    Status forward(const KernelIo& io) override {
        kernels::clipForward(io.in[0], io.out, m_n, m_lo, m_hi, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0]) kernels::clipBackward(io.in[0], io.dOut, io.dIn[0], m_n, m_lo, m_hi, *io.pool);
        return {};
    }

private:
    int64_t m_n;
    float m_lo, m_hi;
};

Result<Shape> clipShape(const ShapeContext& c) {
    const double lo = c.attrs.getFloat("min"), hi = c.attrs.getFloat("max");
    if (!(lo < hi))
        return shapeError(c, "needs min < max, got min = " + std::to_string(lo) + " and max = " + std::to_string(hi));
    return c.inputs[0];
}

Result<std::unique_ptr<CpuKernel>> clipKernel(const ShapeContext& c, const Shape& out) {
    return makeKernel<ClipKernel>(out.numel(), static_cast<float>(c.attrs.getFloat("min")),
                                  static_cast<float>(c.attrs.getFloat("max")));
}

OpDef activationRow(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, KernelFactory k,
                    std::string_view doc, ShapeRule shape = sameShape) {
    return {kind, name, Category::Activation, 1, 1, std::move(attrs), shape, nullptr, nullptr, k, doc};
}

}  // namespace

std::vector<OpDef> activationOps() {
    using A = kernels::Activation;
    std::vector<OpDef> rows;
    rows.push_back(activationRow(OpKind::ReLU, "ReLU", {}, activationKernel<A::ReLU>, "max(x, 0)"));
    rows.push_back(activationRow(OpKind::LeakyReLU, "LeakyReLU",
                                 {floatAttr("negative_slope", 0.3, 0.0, std::nullopt, "slope for negative inputs")},
                                 activationKernel<A::LeakyReLU>, "x for x > 0, negative_slope·x otherwise"));
    rows.push_back(activationRow(OpKind::ReLU6, "ReLU6", {}, activationKernel<A::ReLU6>, "min(max(x, 0), 6)"));
    rows.push_back(activationRow(OpKind::GELU, "GELU",
                                 {boolAttr("approximate", false, "use the tanh approximation instead of erf")},
                                 activationKernel<A::GELU>, "Gaussian error linear unit"));
    rows.push_back(activationRow(OpKind::Sigmoid, "Sigmoid", {}, activationKernel<A::Sigmoid>, "1 / (1 + exp(-x))"));
    rows.push_back(activationRow(OpKind::Tanh, "Tanh", {}, activationKernel<A::Tanh>, "Hyperbolic tangent"));
    rows.push_back(activationRow(OpKind::Softmax, "Softmax",
                                 {intAttr("axis", -1, std::nullopt, std::nullopt, "axis normalised (the last)")},
                                 activationKernel<A::Softmax>, "Normalised exponentials over the last axis",
                                 softmaxShape));
    rows.push_back(activationRow(OpKind::SiLU, "SiLU", {}, activationKernel<A::SiLU>,
                                 "x·sigmoid(x), also called swish (EfficientNet)"));
    rows.push_back(activationRow(OpKind::HardSigmoid, "HardSigmoid", {}, activationKernel<A::HardSigmoid>,
                                 "relu6(x + 3) / 6, a piecewise-linear sigmoid (MobileNetV3)"));
    rows.push_back(activationRow(OpKind::HardSwish, "HardSwish", {}, activationKernel<A::HardSwish>,
                                 "x·relu6(x + 3) / 6, a piecewise swish (MobileNetV3)"));
    rows.push_back(activationRow(OpKind::Clip, "Clip",
                                 {floatAttr("min", -1.0, std::nullopt, std::nullopt, "lower bound"),
                                  floatAttr("max", 1.0, std::nullopt, std::nullopt, "upper bound (greater than min)")},
                                 clipKernel, "min(max(x, min), max)", clipShape));
    return rows;
}

}  // namespace kiln::engine::ops
