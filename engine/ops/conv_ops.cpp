// SPDX-License-Identifier: Apache-2.0
// Convolution and pooling family (NHWC): Conv2D, DepthwiseConv2D, MaxPooling2D, AveragePooling2D,
// GlobalAveragePooling2D, GlobalMaxPooling2D; and GlobalAveragePooling1D over the positions of a
// sequence [N,T,D]. Geometry follows Keras/TensorFlow "same"/"valid" padding.
#include <cmath>

#include "engine/ops/kernels/conv2d.h"
#include "engine/ops/kernels/pooling.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

// Output size along one axis, or -1 when the window does not fit.
int64_t outSize(int64_t in, int64_t k, int64_t stride, int64_t dil, bool same) {
    if (same) return (in + stride - 1) / stride;
    int64_t eff = (k - 1) * dil + 1;
    return in < eff ? -1 : (in - eff) / stride + 1;
}

Status needRank4(const ShapeContext& c) {
    if (c.inputs[0].rank() != 4)
        return shapeError(c, "expects an image batch [N,height,width,channels] but got " + c.inputs[0].toString() +
                                 (c.inputs[0].rank() == 3 ? ": give the Input a channel dimension, e.g. [28,28,1]" : ""));
    return {};
}

// ---- Conv2D ------------------------------------------------------------------------------
Result<Shape> convShape(const ShapeContext& c) {
    KILN_TRY(needRank4(c));
    const Shape& in = c.inputs[0];
    const auto& k = c.attrs.getInts("kernel_size");
    const auto& s = c.attrs.getInts("strides");
    const auto& d = c.attrs.getInts("dilation_rate");
    int64_t filters = c.attrs.getInt("filters");
    int64_t groups = c.attrs.getInt("groups");
    bool same = c.attrs.getString("padding") == "same";
    if ((s[0] > 1 || s[1] > 1) && (d[0] > 1 || d[1] > 1))
        return shapeError(c, "cannot combine strides > 1 with dilation_rate > 1");
    if (in[3] % groups != 0)
        return shapeError(c, "has " + std::to_string(in[3]) + " input channels, which is not divisible by groups = " +
                                 std::to_string(groups));
    if (filters % groups != 0)
        return shapeError(c, "has filters = " + std::to_string(filters) + ", which is not divisible by groups = " +
                                 std::to_string(groups));
    int64_t oh = outSize(in[1], k[0], s[0], d[0], same);
    int64_t ow = outSize(in[2], k[1], s[1], d[1], same);
    if (oh <= 0 || ow <= 0)
        return shapeError(c, "has a " + std::to_string(k[0]) + "x" + std::to_string(k[1]) +
                                 " kernel that does not fit its input " + in.toString() + " with padding \"valid\"");
    return Shape{in[0], oh, ow, filters};
}

std::vector<ParamSpec> convParams(const ShapeContext& c, const Shape&) {
    const auto& k = c.attrs.getInts("kernel_size");
    int64_t filters = c.attrs.getInt("filters");
    std::vector<ParamSpec> p{{"kernel", Shape{k[0], k[1], c.inputs[0][3] / c.attrs.getInt("groups"), filters},
                              Init::GlorotUniform}};
    if (c.attrs.getBool("use_bias")) p.push_back({"bias", Shape{filters}, Init::Zeros});
    return p;
}

int64_t convMacs(const ShapeContext& c, const Shape& out) {
    const auto& k = c.attrs.getInts("kernel_size");
    return out[1] * out[2] * out[3] * k[0] * k[1] * (c.inputs[0][3] / c.attrs.getInt("groups"));
}

class ConvKernel final : public CpuKernel {
public:
    ConvKernel(const kernels::Conv2DGeom& g, bool bias, kernels::Activation act)
        : m_g(g), m_bias(bias), m_fuseRelu(act == kernels::Activation::ReLU),
          m_epi(act, g.n * g.oh * g.ow, g.oc) {}
    size_t workspaceFloats() const override {
        return m_epi.scratchFloats() + kernels::conv2dWorkspaceFloats(m_g) + (m_foldBn ? foldedFloats() : 0);
    }
    size_t savedFloats() const override { return m_epi.savedFloats(); }
    bool backwardNeedsOutput() const override { return m_epi.active(); }
    bool overwritesInputGrads() const override { return true; }
    bool fuseBatchNorm(float epsilon) override {
        if (m_epi.active() || m_fuseRelu) return false;  // the batch norm must see the linear output
        m_foldBn = true;
        m_bnEps = epsilon;
        return true;
    }
    // A ReLU after a batch norm taken in (only then: a plain convolution's ReLU is its activation).
    bool fuseRelu() override {
        if (!m_foldBn) return false;
        m_fuseRelu = true;
        return true;
    }
    Status forward(const KernelIo& io) override {
        float* convWorkspace = io.workspace + m_epi.scratchFloats();
        if (m_foldBn) {
            // Weights [kh, kw, c/groups, oc] and bias scaled per output channel, in the workspace
            // after the convolution's own.
            const int64_t oc = m_g.oc, nw = m_g.kh * m_g.kw * (m_g.c / m_g.groups) * oc;
            float* wf = convWorkspace + kernels::conv2dWorkspaceFloats(m_g);
            float* bf = wf + nw;
            float* scale = bf + oc;
            const size_t bn = m_bias ? 2 : 1;
            const float *gamma = io.params[bn], *beta = io.params[bn + 1], *mean = io.params[bn + 2],
                        *var = io.params[bn + 3];
            for (int64_t o = 0; o < oc; ++o) {
                scale[o] = gamma[o] / std::sqrt(var[o] + m_bnEps);
                bf[o] = ((m_bias ? io.params[1][o] : 0.0f) - mean[o]) * scale[o] + beta[o];
            }
            const float* w = io.params[0];
            for (int64_t i = 0; i < nw; i += oc)
                for (int64_t o = 0; o < oc; ++o) wf[i + o] = w[i + o] * scale[o];
            kernels::conv2dForward(m_g, io.in[0], wf, bf, io.out, convWorkspace, *io.pool, m_fuseRelu);
            return {};
        }
        // ReLU is applied by the convolution's output pass; the epilogue still provides its
        // backward (from the output).
        kernels::conv2dForward(m_g, io.in[0], io.params[0], m_bias ? io.params[1] : nullptr, io.out, convWorkspace,
                               *io.pool, m_fuseRelu);
        if (!m_fuseRelu) m_epi.forward(io.out, io.saved, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        const float* dpre = m_epi.backward(io.out, io.dOut, io.workspace, io.saved, *io.pool);
        kernels::conv2dBackward(m_g, io.in[0], io.params[0], dpre, io.dIn[0], io.dParams[0],
                                m_bias ? io.dParams[1] : nullptr, io.workspace + m_epi.scratchFloats(), *io.pool,
                                overwritesGrad(io, 0));
        return {};
    }

private:
    size_t foldedFloats() const {
        return static_cast<size_t>(m_g.kh * m_g.kw * (m_g.c / m_g.groups) * m_g.oc + 2 * m_g.oc);
    }
    kernels::Conv2DGeom m_g;
    bool m_bias;
    bool m_fuseRelu;
    ActivationEpilogue m_epi;
    bool m_foldBn = false;  // a following inference-mode batch norm taken in (fuseBatchNorm)
    float m_bnEps = 0.0f;
};

Result<std::unique_ptr<CpuKernel>> convKernel(const ShapeContext& c, const Shape& out) {
    const Shape& in = c.inputs[0];
    const auto& k = c.attrs.getInts("kernel_size");
    const auto& s = c.attrs.getInts("strides");
    const auto& d = c.attrs.getInts("dilation_rate");
    auto g = kernels::makeConv2DGeom(in[0], in[1], in[2], in[3], k[0], k[1], out[3], s[0], s[1], d[0], d[1],
                                     c.attrs.getString("padding") == "same", c.attrs.getInt("groups"));
    return makeKernel<ConvKernel>(g, c.attrs.getBool("use_bias"), activationFromName(c.attrs.getString("activation")));
}

// ---- DepthwiseConv2D -----------------------------------------------------------------------
// Each input channel c has depth_multiplier filters of its own; output channel c·m + j. The Keras
// kernel [kh, kw, C, m] has the memory order of a grouped convolution's [kh, kw, 1, C·m] with
// groups = C, so the grouped kernels run it unchanged.
kernels::Conv2DGeom depthwiseGeom(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    const auto& k = c.attrs.getInts("kernel_size");
    const auto& s = c.attrs.getInts("strides");
    const auto& d = c.attrs.getInts("dilation_rate");
    return kernels::makeConv2DGeom(in[0], in[1], in[2], in[3], k[0], k[1], in[3] * c.attrs.getInt("depth_multiplier"),
                                   s[0], s[1], d[0], d[1], c.attrs.getString("padding") == "same", in[3]);
}

Result<Shape> depthwiseShape(const ShapeContext& c) {
    KILN_TRY(needRank4(c));
    const Shape& in = c.inputs[0];
    const auto& k = c.attrs.getInts("kernel_size");
    const auto& s = c.attrs.getInts("strides");
    const auto& d = c.attrs.getInts("dilation_rate");
    bool same = c.attrs.getString("padding") == "same";
    if ((s[0] > 1 || s[1] > 1) && (d[0] > 1 || d[1] > 1))
        return shapeError(c, "cannot combine strides > 1 with dilation_rate > 1");
    int64_t oh = outSize(in[1], k[0], s[0], d[0], same);
    int64_t ow = outSize(in[2], k[1], s[1], d[1], same);
    if (oh <= 0 || ow <= 0)
        return shapeError(c, "has a " + std::to_string(k[0]) + "x" + std::to_string(k[1]) +
                                 " kernel that does not fit its input " + in.toString() + " with padding \"valid\"");
    return Shape{in[0], oh, ow, in[3] * c.attrs.getInt("depth_multiplier")};
}

std::vector<ParamSpec> depthwiseParams(const ShapeContext& c, const Shape&) {
    const auto& k = c.attrs.getInts("kernel_size");
    const int64_t ch = c.inputs[0][3], m = c.attrs.getInt("depth_multiplier");
    std::vector<ParamSpec> p{{"depthwise_kernel", Shape{k[0], k[1], ch, m}, Init::GlorotUniform}};
    if (c.attrs.getBool("use_bias")) p.push_back({"bias", Shape{ch * m}, Init::Zeros});
    return p;
}

int64_t depthwiseMacs(const ShapeContext& c, const Shape& out) {
    const auto& k = c.attrs.getInts("kernel_size");
    return out[1] * out[2] * out[3] * k[0] * k[1];
}

Result<std::unique_ptr<CpuKernel>> depthwiseKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<ConvKernel>(depthwiseGeom(c), c.attrs.getBool("use_bias"),
                                  activationFromName(c.attrs.getString("activation")));
}

// ---- Pooling -----------------------------------------------------------------------------
std::vector<int64_t> poolStrides(const ShapeContext& c) {
    const auto& s = c.attrs.getInts("strides");
    return s.empty() ? c.attrs.getInts("pool_size") : s;
}

Result<Shape> poolShape(const ShapeContext& c) {
    KILN_TRY(needRank4(c));
    const Shape& in = c.inputs[0];
    const auto& k = c.attrs.getInts("pool_size");
    auto s = poolStrides(c);
    if (s.size() != 2 || s[0] < 1 || s[1] < 1) return shapeError(c, "needs two positive strides");
    bool same = c.attrs.getString("padding") == "same";
    int64_t oh = outSize(in[1], k[0], s[0], 1, same);
    int64_t ow = outSize(in[2], k[1], s[1], 1, same);
    if (oh <= 0 || ow <= 0)
        return shapeError(c, "has a pool window larger than its input " + in.toString());
    return Shape{in[0], oh, ow, in[3]};
}

kernels::Pool2DGeom poolGeom(const ShapeContext& c, const Shape& out) {
    const Shape& in = c.inputs[0];
    const auto& k = c.attrs.getInts("pool_size");
    auto s = poolStrides(c);
    return kernels::makePool2DGeom(in[0], in[1], in[2], in[3], k[0], k[1], s[0], s[1],
                                 c.attrs.getString("padding") == "same");
}

class MaxPoolKernel final : public CpuKernel {
public:
    explicit MaxPoolKernel(const kernels::Pool2DGeom& g) : m_g(g) {}
    // argmax indices (int32) live in the saved buffer.
    size_t savedFloats() const override { return kernels::maxPool2DIndexCount(m_g); }
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::maxPool2DForward(m_g, io.in[0], io.out, reinterpret_cast<int32_t*>(io.saved), *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0])
            kernels::maxPool2DBackward(m_g, io.dOut, reinterpret_cast<const int32_t*>(io.saved), io.dIn[0], *io.pool);
        return {};
    }

private:
    kernels::Pool2DGeom m_g;
};

class AvgPoolKernel final : public CpuKernel {
public:
    explicit AvgPoolKernel(const kernels::Pool2DGeom& g) : m_g(g) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::avgPool2DForward(m_g, io.in[0], io.out, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0]) kernels::avgPool2DBackward(m_g, io.dOut, io.dIn[0], *io.pool);
        return {};
    }

private:
    kernels::Pool2DGeom m_g;
};

Result<std::unique_ptr<CpuKernel>> maxPoolKernel(const ShapeContext& c, const Shape& out) {
    return makeKernel<MaxPoolKernel>(poolGeom(c, out));
}
Result<std::unique_ptr<CpuKernel>> avgPoolKernel(const ShapeContext& c, const Shape& out) {
    return makeKernel<AvgPoolKernel>(poolGeom(c, out));
}

Result<Shape> globalPoolShape(const ShapeContext& c) {
    KILN_TRY(needRank4(c));
    return Shape{c.inputs[0][0], c.inputs[0][3]};
}

class GlobalAvgPoolKernel final : public CpuKernel {
public:
    GlobalAvgPoolKernel(int64_t n, int64_t h, int64_t w, int64_t c) : m_n(n), m_h(h), m_w(w), m_c(c) {}
    bool backwardNeedsInputs() const override { return false; }
    bool overwritesInputGrads() const override { return true; }
    Status forward(const KernelIo& io) override {
        kernels::globalAvgPool2DForward(m_n, m_h, m_w, m_c, io.in[0], io.out, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0])
            kernels::globalAvgPool2DBackward(m_n, m_h, m_w, m_c, io.dOut, io.dIn[0], *io.pool, overwritesGrad(io, 0));
        return {};
    }

private:
    int64_t m_n, m_h, m_w, m_c;
};

Result<std::unique_ptr<CpuKernel>> globalPoolKernel(const ShapeContext& c, const Shape&) {
    const Shape& in = c.inputs[0];
    return makeKernel<GlobalAvgPoolKernel>(in[0], in[1], in[2], in[3]);
}

class GlobalMaxPoolKernel final : public CpuKernel {
public:
    GlobalMaxPoolKernel(int64_t n, int64_t h, int64_t w, int64_t c) : m_n(n), m_h(h), m_w(w), m_c(c) {}
    // argmax pixel indices (int32) live in the saved buffer.
    size_t savedFloats() const override { return static_cast<size_t>(m_n * m_c); }
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::globalMaxPool2DForward(m_n, m_h, m_w, m_c, io.in[0], io.out, reinterpret_cast<int32_t*>(io.saved),
                                        *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0])
            kernels::globalMaxPool2DBackward(m_n, m_h, m_w, m_c, io.dOut, reinterpret_cast<const int32_t*>(io.saved),
                                             io.dIn[0], *io.pool);
        return {};
    }

private:
    int64_t m_n, m_h, m_w, m_c;
};

// GlobalAveragePooling1D: [N,T,D] -> [N,D], or [N,1,D] with keepdims (Keras, channels_last).
Result<Shape> globalPool1DShape(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    if (in.rank() != 3) {
        std::string hint;
        if (in.rank() == 4) hint = ": for an image use GlobalAveragePooling2D";
        if (in.rank() == 2) hint = ": the input has no positions axis to average over";
        return shapeError(c, "expects a sequence batch [N,positions,features] but got " + in.toString() + hint);
    }
    if (c.attrs.getBool("keepdims")) return Shape{in[0], 1, in[2]};
    return Shape{in[0], in[2]};
}
// The 2-D kernel over a height of T positions and a width of 1.
Result<std::unique_ptr<CpuKernel>> globalPool1DKernel(const ShapeContext& c, const Shape&) {
    const Shape& in = c.inputs[0];
    return makeKernel<GlobalAvgPoolKernel>(in[0], in[1], 1, in[2]);
}

Result<std::unique_ptr<CpuKernel>> globalMaxPoolKernel(const ShapeContext& c, const Shape&) {
    const Shape& in = c.inputs[0];
    return makeKernel<GlobalMaxPoolKernel>(in[0], in[1], in[2], in[3]);
}

std::vector<AttrSpec> poolAttrs() {
    return {intsAttr("pool_size", {2, 2}, 2, 1, "window height and width"),
            intsAttr("strides", {}, 2, 1, "step between windows (default: pool_size)"),
            choiceAttr("padding", "valid", {"valid", "same"}, "\"same\" pads so that output = ceil(input / stride)")};
}

}  // namespace

std::vector<OpDef> convOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::Conv2D, "Conv2D", Category::Convolution, 1, 1,
                    {requiredInt("filters", 1, "number of output channels"),
                     intsAttr("kernel_size", {3, 3}, 2, 1, "kernel height and width"),
                     intsAttr("strides", {1, 1}, 2, 1, "step between windows"),
                     choiceAttr("padding", "valid", {"valid", "same"}, "\"same\" keeps ceil(input / stride)"),
                     intsAttr("dilation_rate", {1, 1}, 2, 1, "spacing between kernel taps"),
                     intAttr("groups", 1, 1, std::nullopt, "channel groups; groups = channels is depthwise"),
                     activationAttr(), boolAttr("use_bias", true, "add a learned bias")},
                    convShape, convParams, convMacs, convKernel, "2-D convolution over NHWC images"});
    rows.push_back({OpKind::DepthwiseConv2D, "DepthwiseConv2D", Category::Convolution, 1, 1,
                    {intsAttr("kernel_size", {3, 3}, 2, 1, "kernel height and width"),
                     intsAttr("strides", {1, 1}, 2, 1, "step between windows"),
                     choiceAttr("padding", "valid", {"valid", "same"}, "\"same\" keeps ceil(input / stride)"),
                     intAttr("depth_multiplier", 1, 1, std::nullopt, "output channels per input channel"),
                     intsAttr("dilation_rate", {1, 1}, 2, 1, "spacing between kernel taps"),
                     activationAttr(), boolAttr("use_bias", true, "add a learned bias")},
                    depthwiseShape, depthwiseParams, depthwiseMacs, depthwiseKernel,
                    "Per-channel 2-D convolution (MobileNet, EfficientNet)"});
    rows.push_back({OpKind::MaxPooling2D, "MaxPooling2D", Category::Pooling, 1, 1, poolAttrs(), poolShape, nullptr,
                    nullptr, maxPoolKernel, "Maximum over each window"});
    rows.push_back({OpKind::AveragePooling2D, "AveragePooling2D", Category::Pooling, 1, 1, poolAttrs(), poolShape,
                    nullptr, nullptr, avgPoolKernel, "Average over each window"});
    rows.push_back({OpKind::GlobalAveragePooling2D, "GlobalAveragePooling2D", Category::Pooling, 1, 1, {},
                    globalPoolShape, nullptr, nullptr, globalPoolKernel, "Average over height and width"});
    rows.push_back({OpKind::GlobalMaxPooling2D, "GlobalMaxPooling2D", Category::Pooling, 1, 1, {},
                    globalPoolShape, nullptr, nullptr, globalMaxPoolKernel, "Maximum over height and width"});
    rows.push_back({OpKind::GlobalAveragePooling1D, "GlobalAveragePooling1D", Category::Pooling, 1, 1, {boolAttr("keepdims", false, "keep the positions axis with length 1: [N,1,features]")}, globalPool1DShape, nullptr, nullptr, globalPool1DKernel, "Average over the positions of a sequence [N,positions,features]"});
    return rows;
}

}  // namespace kiln::engine::ops
