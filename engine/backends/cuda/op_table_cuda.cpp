// SPDX-License-Identifier: Apache-2.0
// CUDA rows of the op table: cuBLASLt for Dense, cuDNN for Conv2D and Softmax, Kiln's kernels for
// the rest. Shapes are bound at plan time, like the CPU kernels; semantics match them.
#include "engine/backends/cuda/op_table_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "engine/backends/cuda/blas.h"
#include "engine/backends/cuda/dnn.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/ops/kernels/conv2d.h"
#include "engine/ops/kernels/dropout.h"
#include "engine/ops/kernels/pooling.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::cuda {
namespace {

using ops::OpKind;
using ops::ShapeContext;

constexpr size_t kAlign = 256;
size_t alignUp(size_t b) {
    return (b + kAlign - 1) / kAlign * kAlign;
}
size_t f32(int64_t n) {
    return alignUp(static_cast<size_t>(n) * 4);
}
size_t f16(int64_t n) {
    return alignUp(static_cast<size_t>(n) * 2);
}

template <typename K, typename... A>
Result<std::unique_ptr<CudaKernel>> make(A&&... a) {
    return std::unique_ptr<CudaKernel>(new K(std::forward<A>(a)...));
}

// Activation attribute of Dense/Conv2D/activation layers. Softmax is handled by cuDNN.
struct ActSpec {
    k::Act act = k::Act::Linear;
    float alpha = 0.0f;
    bool softmax = false;
    bool linear() const { return act == k::Act::Linear && !softmax; }
    // GELU is differentiated from its input, the others from the output.
    bool needsPre() const { return act == k::Act::GeluExact || act == k::Act::GeluTanh; }
};
ActSpec actFromName(const std::string& s, bool approximateGelu = false) {
    ActSpec a;
    if (s == "relu")
        a.act = k::Act::ReLU;
    else if (s == "relu6")
        a.act = k::Act::ReLU6;
    else if (s == "sigmoid")
        a.act = k::Act::Sigmoid;
    else if (s == "tanh")
        a.act = k::Act::Tanh;
    else if (s == "gelu")
        a.act = approximateGelu ? k::Act::GeluTanh : k::Act::GeluExact;
    else if (s == "softmax")
        a.softmax = true;
    return a;
}

// y holds the pre-activation (bias added) on entry; applies the activation in place, keeping
// the pre-activation in `pre` when the backward needs it.
Status applyAct(DeviceContext& ctx, const ActSpec& a, float* y, float* pre, int64_t rows, int64_t cols) {
    const int64_t n = rows * cols;
    if (a.softmax) return softmaxForward(ctx, y, y, rows, cols);
    if (a.act == k::Act::Linear) return {};
    if (a.needsPre() && pre)
        KILN_TRY(checkCuda(
            cudaMemcpyAsync(pre, y, sizeof(float) * size_t(n), cudaMemcpyDeviceToDevice, ctx.stream()),
            "saving the pre-activation"));
    k::activationForward(a.act, a.needsPre() ? pre : y, y, n, a.alpha, ctx.stream());
    return {};
}
// dPre = dy * act'(...) (overwritten).
Status actGrad(DeviceContext& ctx, const ActSpec& a, const float* y, const float* pre, const float* dy,
               float* dPre, int64_t rows, int64_t cols) {
    const int64_t n = rows * cols;
    KILN_TRY(ctx.memsetAsync(dPre, 0, sizeof(float) * size_t(n)));
    if (a.softmax) return softmaxBackward(ctx, y, dy, dPre, rows, cols);
    k::activationBackward(a.act, a.needsPre() ? pre : nullptr, y, dy, dPre, n, a.alpha, ctx.stream());
    return {};
}

DataType matType(Precision p) {
    switch (p) {
    case Precision::Fp16:
        return DataType::F16;
    case Precision::Bf16:
        return DataType::BF16;
    default:
        return DataType::F32;
    }
}
void castHalf(DataType t, const float* x, void* y, int64_t n, StreamHandle s) {
    if (t == DataType::F16)
        k::castToHalf(x, static_cast<uint16_t*>(y), n, s);
    else
        k::castToBf16(x, static_cast<uint16_t*>(y), n, s);
}

// ---- Reshape-like -------------------------------------------------------------------------------
class AliasKernel final : public CudaKernel {
public:
    bool aliasesInput() const override { return true; }
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo&) override { return {}; }
    Status backward(const CudaIo&) override { return {}; }
};

// ---- Dense --------------------------------------------------------------------------------------
class DenseKernel final : public CudaKernel {
public:
    DenseKernel(int64_t rows, int64_t in, int64_t out, ActSpec act, bool bias, const CudaBuildOptions& o)
        : m_rows(rows),
          m_in(in),
          m_out(out),
          m_act(act),
          m_bias(bias),
          m_type(matType(o.precision)),
          m_tf32(o.tf32) {}
    size_t savedBytes() const override { return m_act.needsPre() ? f32(m_rows * m_out) : 0; }
    size_t workspaceBytes() const override {
        size_t fwd = m_type == DataType::F32 ? 0 : f16(m_rows * m_in) + f16(m_in * m_out);
        size_t bwd = m_act.linear() ? 0 : f32(m_rows * m_out);
        return std::max(fwd, bwd);
    }
    bool backwardNeedsOutput() const override { return !m_act.linear(); }
    Status forward(const CudaIo& io) override {
        DeviceContext& ctx = *io.ctx;
        const float* bias = m_bias ? io.params[1] : nullptr;
        const bool fuse = m_act.act == k::Act::ReLU && !m_act.softmax;
        const k::Act epi = fuse ? k::Act::ReLU : k::Act::Linear;
        if (m_type == DataType::F32) {
            KILN_TRY(denseForward(ctx, io.in[0], io.params[0], bias, io.out, m_rows, m_in, m_out,
                                  DataType::F32, epi, m_tf32));
        } else {
            std::byte* xh = io.workspace;
            std::byte* wh = io.workspace + f16(m_rows * m_in);
            castHalf(m_type, io.in[0], xh, m_rows * m_in, ctx.stream());
            castHalf(m_type, io.params[0], wh, m_in * m_out, ctx.stream());
            KILN_TRY(denseForward(ctx, xh, wh, bias, io.out, m_rows, m_in, m_out, m_type, epi, false));
        }
        if (fuse) return {};
        return applyAct(ctx, m_act, io.out, reinterpret_cast<float*>(io.saved), m_rows, m_out);
    }
    Status backward(const CudaIo& io) override {
        DeviceContext& ctx = *io.ctx;
        const float* g = io.dOut;
        if (!m_act.linear()) {
            auto* dPre = reinterpret_cast<float*>(io.workspace);
            KILN_TRY(actGrad(ctx, m_act, io.out, reinterpret_cast<const float*>(io.saved), io.dOut, dPre,
                             m_rows, m_out));
            g = dPre;
        }
        KILN_TRY(denseBackward(ctx, io.in[0], io.params[0], g, io.dIn[0], io.dParams[0], m_rows, m_in, m_out,
                               m_tf32));
        if (m_bias && io.dParams[1]) k::columnSums(g, m_rows, m_out, io.dParams[1], ctx.stream());
        return {};
    }

private:
    int64_t m_rows, m_in, m_out;
    ActSpec m_act;
    bool m_bias;
    DataType m_type;
    bool m_tf32;
};

Result<std::unique_ptr<CudaKernel>> denseCuda(const ShapeContext& c, const Shape& out,
                                              const CudaBuildOptions& o) {
    const int64_t units = out[-1], in = c.inputs[0][-1];
    return make<DenseKernel>(out.numel() / units, in, units, actFromName(c.attrs.getString("activation")),
                             c.attrs.getBool("use_bias"), o);
}

// ---- Conv2D -------------------------------------------------------------------------------------
class ConvKernel final : public CudaKernel {
public:
    ConvKernel(const kernels::Conv2DGeom& g, int64_t padBottom, int64_t padRight, ActSpec act, bool bias,
               const CudaBuildOptions& o)
        : m_g(g), m_act(act), m_bias(bias), m_type(matType(o.precision)), m_tf32(o.tf32) {
        m_padded = g.padTop != padBottom || g.padLeft != padRight;
        m_ph = g.h + g.padTop + padBottom;
        m_pw = g.w + g.padLeft + padRight;
        m_shape = {g.n,
                   m_padded ? m_ph : g.h,
                   m_padded ? m_pw : g.w,
                   g.c,
                   g.kh,
                   g.kw,
                   g.oc,
                   g.groups,
                   g.strideH,
                   g.strideW,
                   g.dilationH,
                   g.dilationW,
                   m_padded ? 0 : g.padTop,
                   m_padded ? 0 : g.padLeft,
                   g.oh,
                   g.ow};
    }
    // fp32 descriptors always (backward, and the forward when 16 bits cannot run); the 16-bit
    // forward when the precision asks for it and cuDNN offers an algorithm.
    Status init(DeviceContext& ctx) {
        KILN_ASSIGN(m_conv32, Convolution::create(ctx, m_shape, DataType::F32, m_tf32));
        if (m_type != DataType::F32) {
            auto half = Convolution::create(ctx, m_shape, m_type);
            if (half.ok())
                m_conv = std::move(half).value();
            else if (half.error().code == ErrorCode::Unsupported)
                fallBack(half.error());
            else
                return half.error();
        }
        return {};
    }
    // The 16-bit forward is not possible for this shape: run it in fp32 from now on, and say so.
    void fallBack(const Error& why) {
        m_conv.reset();
        noteConvolution("Conv2D " + describeConvolution(m_shape, m_type) + ": runs in fp32 instead of " +
                        dataTypeName(m_type) + " (" + why.message + ")");
    }
    int64_t xElems() const { return m_shape.n * m_shape.h * m_shape.w * m_g.c; }
    int64_t wElems() const { return m_g.kh * m_g.kw * (m_g.c / m_g.groups) * m_g.oc; }
    int64_t yElems() const { return m_g.n * m_g.oh * m_g.ow * m_g.oc; }
    // Workspace: [padded x (fp32)] [OHWI w (fp32)] [then forward: half x, half w, half y | backward: dPre, dw
    // OHWI, padded dx]
    size_t padBytes() const { return m_padded ? f32(xElems()) : 0; }
    size_t workspaceBytes() const override {
        const size_t base = padBytes() + f32(wElems());
        const size_t fwd = m_type == DataType::F32 ? 0 : f16(xElems()) + f16(wElems()) + f16(yElems());
        const size_t bwd = (m_act.linear() ? 0 : f32(yElems())) + f32(wElems()) + padBytes();
        return base + std::max(fwd, bwd);
    }
    size_t savedBytes() const override { return m_act.needsPre() ? f32(yElems()) : 0; }
    bool backwardNeedsOutput() const override { return !m_act.linear(); }

    Status forward(const CudaIo& io) override {
        DeviceContext& ctx = *io.ctx;
        StreamHandle s = ctx.stream();
        const float* x = io.in[0];
        std::byte* at = io.workspace;
        if (m_padded) {
            k::padNhwc(x, reinterpret_cast<float*>(at), m_g.n, m_g.h, m_g.w, m_g.c, m_g.padTop, m_g.padLeft,
                       m_ph, m_pw, s);
            x = reinterpret_cast<float*>(at);
            at += padBytes();
        }
        auto* w = reinterpret_cast<float*>(at);
        k::hwioToOhwi(io.params[0], w, m_g.kh, m_g.kw, m_g.c / m_g.groups, m_g.oc, s);
        at += f32(wElems());
        bool done = false;
        if (m_conv) {  // 16-bit forward
            std::byte* xh = at;
            std::byte* wh = xh + f16(xElems());
            std::byte* yh = wh + f16(wElems());
            castHalf(m_type, x, xh, xElems(), s);
            castHalf(m_type, w, wh, wElems(), s);
            if (auto st = m_conv->forward(ctx, xh, wh, yh); st.ok()) {
                if (m_type == DataType::F16)
                    k::castFromHalf(reinterpret_cast<uint16_t*>(yh), io.out, yElems(), s);
                else
                    k::castFromBf16(reinterpret_cast<uint16_t*>(yh), io.out, yElems(), s);
                done = true;
            } else if (st.error().code == ErrorCode::Unsupported) {
                fallBack(st.error());
            } else {
                return st;
            }
        }
        if (!done) KILN_TRY(m_conv32->forward(ctx, x, w, io.out));
        const int64_t rows = m_g.n * m_g.oh * m_g.ow;
        const bool simple = !m_act.softmax && !m_act.needsPre();
        if (m_bias || simple)
            k::biasActivation(io.out, m_bias ? io.params[1] : nullptr, rows, m_g.oc,
                              simple ? m_act.act : k::Act::Linear, m_act.alpha, s);
        if (simple) return {};
        return applyAct(ctx, m_act, io.out, reinterpret_cast<float*>(io.saved), rows, m_g.oc);
    }

    Status backward(const CudaIo& io) override {
        DeviceContext& ctx = *io.ctx;
        StreamHandle s = ctx.stream();
        const int64_t rows = m_g.n * m_g.oh * m_g.ow;
        std::byte* at = io.workspace;
        const float* x = io.in[0];
        if (m_padded && io.dParams[0]) {
            k::padNhwc(x, reinterpret_cast<float*>(at), m_g.n, m_g.h, m_g.w, m_g.c, m_g.padTop, m_g.padLeft,
                       m_ph, m_pw, s);
            x = reinterpret_cast<float*>(at);
        }
        at += padBytes();
        auto* w = reinterpret_cast<float*>(at);
        k::hwioToOhwi(io.params[0], w, m_g.kh, m_g.kw, m_g.c / m_g.groups, m_g.oc, s);
        at += f32(wElems());
        const float* g = io.dOut;
        if (!m_act.linear()) {
            auto* dPre = reinterpret_cast<float*>(at);
            KILN_TRY(actGrad(ctx, m_act, io.out, reinterpret_cast<const float*>(io.saved), io.dOut, dPre,
                             rows, m_g.oc));
            g = dPre;
            at += f32(yElems());
        }
        Convolution& conv = *m_conv32;
        if (m_bias && io.dParams[1]) k::columnSums(g, rows, m_g.oc, io.dParams[1], s);
        if (io.dParams[0]) {
            auto* dw = reinterpret_cast<float*>(at);
            KILN_TRY(conv.backwardFilter(ctx, x, g, dw));
            k::ohwiToHwioAccumulate(dw, io.dParams[0], m_g.kh, m_g.kw, m_g.c / m_g.groups, m_g.oc, s);
        }
        at += f32(wElems());
        if (io.dIn[0]) {
            if (m_padded) {
                auto* dxp = reinterpret_cast<float*>(at);
                KILN_TRY(ctx.memsetAsync(dxp, 0, sizeof(float) * size_t(xElems())));
                KILN_TRY(conv.backwardData(ctx, w, g, dxp));
                k::unpadNhwcAccumulate(dxp, io.dIn[0], m_g.n, m_g.h, m_g.w, m_g.c, m_g.padTop, m_g.padLeft,
                                       m_ph, m_pw, s);
            } else {
                KILN_TRY(conv.backwardData(ctx, w, g, io.dIn[0]));
            }
        }
        return {};
    }

private:
    kernels::Conv2DGeom m_g;
    ActSpec m_act;
    bool m_bias;
    DataType m_type;
    bool m_tf32 = true;
    bool m_padded = false;
    int64_t m_ph = 0, m_pw = 0;
    ConvShape m_shape{};
    std::unique_ptr<Convolution> m_conv;    // 16-bit forward (null: fp32 precision or fallen back)
    std::unique_ptr<Convolution> m_conv32;  // fp32 backward, and forward without m_conv
};

kernels::Conv2DGeom convGeom(const ShapeContext& c, const Shape& out) {
    const Shape& x = c.inputs[0];
    const auto& ks = c.attrs.getInts("kernel_size");
    const auto& st = c.attrs.getInts("strides");
    const auto& dl = c.attrs.getInts("dilation_rate");
    return kernels::makeConv2DGeom(x[0], x[1], x[2], x[3], ks[0], ks[1], out[-1], st[0], st[1], dl[0], dl[1],
                                   c.attrs.getString("padding") == "same", c.attrs.getInt("groups"));
}
Result<std::unique_ptr<CudaKernel>> convCudaFor(const kernels::Conv2DGeom& g, const ShapeContext& c,
                                                const CudaBuildOptions& o) {
    const int64_t padBottom =
        std::max<int64_t>(0, (g.oh - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1 - g.h - g.padTop);
    const int64_t padRight =
        std::max<int64_t>(0, (g.ow - 1) * g.strideW + (g.kw - 1) * g.dilationW + 1 - g.w - g.padLeft);
    auto k = std::make_unique<ConvKernel>(
        g, padBottom, padRight, actFromName(c.attrs.getString("activation")), c.attrs.getBool("use_bias"), o);
    KILN_TRY(k->init(*o.ctx));
    return std::unique_ptr<CudaKernel>(std::move(k));
}
Result<std::unique_ptr<CudaKernel>> convCuda(const ShapeContext& c, const Shape& out,
                                             const CudaBuildOptions& o) {
    return convCudaFor(convGeom(c, out), c, o);
}
// DepthwiseConv2D is the grouped convolution with groups = channels: its Keras kernel
// [kh, kw, C, m] has the memory order of [kh, kw, 1, C·m].
Result<std::unique_ptr<CudaKernel>> depthwiseCuda(const ShapeContext& c, const Shape& out,
                                                  const CudaBuildOptions& o) {
    const Shape& x = c.inputs[0];
    const auto& ks = c.attrs.getInts("kernel_size");
    const auto& st = c.attrs.getInts("strides");
    const auto& dl = c.attrs.getInts("dilation_rate");
    return convCudaFor(kernels::makeConv2DGeom(x[0], x[1], x[2], x[3], ks[0], ks[1], out[-1], st[0], st[1], dl[0],
                                               dl[1], c.attrs.getString("padding") == "same", x[3]),
                       c, o);
}
bool convSupports(const ShapeContext& c, const Shape&) {
    return c.inputs[0].rank() == 4;
}

// ---- Pooling ------------------------------------------------------------------------------------
class PoolKernel final : public CudaKernel {
public:
    PoolKernel(k::PoolGeom g, bool max) : m_g(g), m_max(max) {}
    bool backwardNeedsInputs() const override { return m_max; }
    Status forward(const CudaIo& io) override {
        if (m_max)
            k::maxPoolForward(m_g, io.in[0], io.out, io.ctx->stream());
        else
            k::avgPoolForward(m_g, io.in[0], io.out, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (!io.dIn[0]) return {};
        if (m_max)
            k::maxPoolBackward(m_g, io.in[0], io.dOut, io.dIn[0], io.ctx->stream());
        else
            k::avgPoolBackward(m_g, io.dOut, io.dIn[0], io.ctx->stream());
        return {};
    }

private:
    k::PoolGeom m_g;
    bool m_max;
};
template <bool kMax>
Result<std::unique_ptr<CudaKernel>> poolCuda(const ShapeContext& c, const Shape& out,
                                             const CudaBuildOptions&) {
    const Shape& x = c.inputs[0];
    const auto& ps = c.attrs.getInts("pool_size");
    auto st = c.attrs.getInts("strides");
    if (st.empty()) st = ps;
    const bool same = c.attrs.getString("padding") == "same";
    const auto ay = kernels::kerasWindowAxis(x[1], ps[0], st[0], 1, same);
    const auto ax = kernels::kerasWindowAxis(x[2], ps[1], st[1], 1, same);
    return make<PoolKernel>(k::PoolGeom{x[0], x[1], x[2], x[3], ps[0], ps[1], st[0], st[1], ay.padBefore,
                                        ax.padBefore, out[1], out[2]},
                            kMax);
}

class GapKernel final : public CudaKernel {
public:
    GapKernel(int64_t n, int64_t hw, int64_t c) : m_n(n), m_hw(hw), m_c(c) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::globalAvgPool(io.in[0], io.out, m_n, m_hw, m_c, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0]) k::globalAvgPoolBackward(io.dOut, io.dIn[0], m_n, m_hw, m_c, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n, m_hw, m_c;
};
Result<std::unique_ptr<CudaKernel>> gapCuda(const ShapeContext& c, const Shape& out,
                                            const CudaBuildOptions&) {
    const Shape& x = c.inputs[0];
    return make<GapKernel>(x[0], x.numel() / (x[0] * x[-1]), x[-1]);
}
bool gapSupports(const ShapeContext& c, const Shape& out) {
    return c.inputs[0].rank() == 4 && out.rank() == 2;
}

class GmpKernel final : public CudaKernel {
public:
    GmpKernel(int64_t n, int64_t hw, int64_t c) : m_n(n), m_hw(hw), m_c(c) {}
    size_t savedBytes() const override { return alignUp(sizeof(int32_t) * size_t(m_n * m_c)); }  // argmax
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::globalMaxPool(io.in[0], io.out, reinterpret_cast<int32_t*>(io.saved), m_n, m_hw, m_c, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0])
            k::globalMaxPoolBackward(io.dOut, reinterpret_cast<const int32_t*>(io.saved), io.dIn[0], m_n, m_hw, m_c,
                                     io.ctx->stream());
        return {};
    }

private:
    int64_t m_n, m_hw, m_c;
};
Result<std::unique_ptr<CudaKernel>> gmpCuda(const ShapeContext& c, const Shape&, const CudaBuildOptions&) {
    const Shape& x = c.inputs[0];
    return make<GmpKernel>(x[0], x[1] * x[2], x[3]);
}

// ---- Image layers -------------------------------------------------------------------------------
class ZeroPadKernel final : public CudaKernel {
public:
    ZeroPadKernel(const Shape& x, std::vector<int64_t> p) : m_x(x), m_p(std::move(p)) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::padNhwc(io.in[0], io.out, m_x[0], m_x[1], m_x[2], m_x[3], m_p[0], m_p[2], m_x[1] + m_p[0] + m_p[1],
                   m_x[2] + m_p[2] + m_p[3], io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0])
            k::unpadNhwcAccumulate(io.dOut, io.dIn[0], m_x[0], m_x[1], m_x[2], m_x[3], m_p[0], m_p[2],
                                   m_x[1] + m_p[0] + m_p[1], m_x[2] + m_p[2] + m_p[3], io.ctx->stream());
        return {};
    }

private:
    Shape m_x;
    std::vector<int64_t> m_p;  // top, bottom, left, right
};
Result<std::unique_ptr<CudaKernel>> zeroPadCuda(const ShapeContext& c, const Shape&, const CudaBuildOptions&) {
    return make<ZeroPadKernel>(c.inputs[0], c.attrs.getInts("padding"));
}
class UpsampleKernel final : public CudaKernel {
public:
    UpsampleKernel(const Shape& x, int64_t sh, int64_t sw, bool bilinear)
        : m_x(x), m_sh(sh), m_sw(sw), m_bilinear(bilinear) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::upsample(io.in[0], io.out, m_x[0], m_x[1], m_x[2], m_x[3], m_sh, m_sw, m_bilinear, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0])
            k::upsampleBackward(io.dOut, io.dIn[0], m_x[0], m_x[1], m_x[2], m_x[3], m_sh, m_sw, m_bilinear,
                                io.ctx->stream());
        return {};
    }

private:
    Shape m_x;
    int64_t m_sh, m_sw;
    bool m_bilinear;
};
Result<std::unique_ptr<CudaKernel>> upsampleCuda(const ShapeContext& c, const Shape&, const CudaBuildOptions&) {
    const auto& s = c.attrs.getInts("size");
    return make<UpsampleKernel>(c.inputs[0], s[0], s[1], c.attrs.getString("interpolation") == "bilinear");
}
class RescaleKernel final : public CudaKernel {
public:
    RescaleKernel(int64_t n, float scale, float offset) : m_n(n), m_scale(scale), m_offset(offset) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::affine(io.in[0], io.out, m_n, m_scale, m_offset, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0]) k::scaledAccumulate(io.dOut, io.dIn[0], m_n, m_scale, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n;
    float m_scale, m_offset;
};
Result<std::unique_ptr<CudaKernel>> rescaleCuda(const ShapeContext& c, const Shape& out, const CudaBuildOptions&) {
    return make<RescaleKernel>(out.numel(), float(c.attrs.getFloat("scale")), float(c.attrs.getFloat("offset")));
}

// ---- Normalisation ------------------------------------------------------------------------------
class BatchNormKernel final : public CudaKernel {
public:
    BatchNormKernel(int64_t rows, int64_t c, float momentum, float eps)
        : m_rows(rows), m_c(c), m_momentum(momentum), m_eps(eps) {}
    size_t savedBytes() const override { return f32(2 * m_c); }  // mean, 1/std
    size_t workspaceBytes() const override { return alignUp(sizeof(double) * 2 * size_t(m_c)); }  // sums
    Status forward(const CudaIo& io) override {
        StreamHandle s = io.ctx->stream();
        if (!io.training) {
            k::batchNormInference(io.in[0], io.params[2], io.params[3], io.params[0], io.params[1], m_eps,
                                  io.out, m_rows, m_c, s);
            return {};
        }
        auto* mean = reinterpret_cast<float*>(io.saved);
        auto* sums = reinterpret_cast<double*>(io.workspace);
        k::batchNormStats(io.in[0], m_rows, m_c, sums, s);
        k::batchNormFinish(sums, double(m_rows), m_c, m_eps, m_momentum, mean, mean + m_c, io.params[2],
                           io.params[3], s);
        k::batchNormApply(io.in[0], mean, mean + m_c, io.params[0], io.params[1], io.out, m_rows, m_c, s);
        return {};
    }
    Status backward(const CudaIo& io) override {
        StreamHandle s = io.ctx->stream();
        auto* sums = reinterpret_cast<double*>(io.workspace);
        const auto* mean = reinterpret_cast<const float*>(io.saved);
        k::batchNormBackwardSums(io.in[0], io.dOut, mean, mean + m_c, m_rows, m_c, sums, s);
        k::batchNormBackwardParams(sums, m_c, io.dParams[0], io.dParams[1], s);
        if (io.dIn[0])
            k::batchNormBackwardData(io.in[0], io.dOut, mean, mean + m_c, io.params[0], sums, double(m_rows),
                                     io.dIn[0], m_rows, m_c, s);
        return {};
    }

private:
    int64_t m_rows, m_c;
    float m_momentum, m_eps;
};
Result<std::unique_ptr<CudaKernel>> bnCuda(const ShapeContext& c, const Shape& out, const CudaBuildOptions&) {
    const int64_t ch = out[-1];
    return make<BatchNormKernel>(out.numel() / ch, ch, float(c.attrs.getFloat("momentum")),
                                 float(c.attrs.getFloat("epsilon")));
}
// A frozen BatchNormalization (fine-tuning) keeps to the CPU, whose inference-mode backward exists.
bool bnSupports(const ShapeContext& c, const Shape&) {
    return c.node.trainable;
}

class LayerNormKernel final : public CudaKernel {
public:
    LayerNormKernel(int64_t rows, int64_t c, float eps) : m_rows(rows), m_c(c), m_eps(eps) {}
    size_t savedBytes() const override { return f32(2 * m_rows); }
    Status forward(const CudaIo& io) override {
        auto* sm = reinterpret_cast<float*>(io.saved);
        k::layerNormForward(io.in[0], io.params[0], io.params[1], m_eps, io.out, sm, sm + m_rows, m_rows, m_c,
                            io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        const auto* sm = reinterpret_cast<const float*>(io.saved);
        k::layerNormBackward(io.in[0], io.params[0], sm, sm + m_rows, io.dOut, io.dIn[0], io.dParams[0],
                             io.dParams[1], m_rows, m_c, io.ctx->stream());
        return {};
    }

private:
    int64_t m_rows, m_c;
    float m_eps;
};
Result<std::unique_ptr<CudaKernel>> lnCuda(const ShapeContext& c, const Shape& out, const CudaBuildOptions&) {
    const int64_t ch = out[-1];
    return make<LayerNormKernel>(out.numel() / ch, ch, float(c.attrs.getFloat("epsilon")));
}

class FixedNormKernel final : public CudaKernel {
public:
    FixedNormKernel(int64_t rows, int64_t c) : m_rows(rows), m_c(c) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::fixedNormForward(io.in[0], io.params[0], io.params[1], io.out, m_rows, m_c, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0]) k::fixedNormBackward(io.dOut, io.params[1], io.dIn[0], m_rows, m_c, io.ctx->stream());
        return {};
    }

private:
    int64_t m_rows, m_c;
};
Result<std::unique_ptr<CudaKernel>> fixedNormCuda(const ShapeContext&, const Shape& out, const CudaBuildOptions&) {
    const int64_t ch = out[-1];
    return make<FixedNormKernel>(out.numel() / ch, ch);
}

// ---- Dropout ------------------------------------------------------------------------------------
class DropoutKernel final : public CudaKernel {
public:
    DropoutKernel(int64_t n, float rate, std::optional<k::DropoutNoise> noise) : m_n(n), m_rate(rate), m_noise(noise) {}
    size_t savedBytes() const override { return alignUp(size_t(m_n)); }  // keep mask, one byte each
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        if (!io.training || m_rate <= 0.0f)
            return checkCuda(cudaMemcpyAsync(io.out, io.in[0], sizeof(float) * size_t(m_n),
                                             cudaMemcpyDeviceToDevice, io.ctx->stream()),
                             "dropout copy");
        if (m_noise && m_rate < 1.0f)
            k::dropoutBroadcastForward(io.in[0], io.out, reinterpret_cast<uint8_t*>(io.saved), m_n, *m_noise, m_rate,
                                       io.seed, io.step, io.ctx->stream());
        else
            k::dropoutForward(io.in[0], io.out, reinterpret_cast<uint8_t*>(io.saved), m_n, m_rate, io.seed,
                              io.step, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (!io.dIn[0]) return {};
        if (!io.training || m_rate <= 0.0f)
            k::accumulate(io.dOut, io.dIn[0], m_n, io.ctx->stream());
        else
            k::dropoutBackward(io.dOut, reinterpret_cast<const uint8_t*>(io.saved), io.dIn[0], m_n, m_rate,
                               io.ctx->stream());
        return {};
    }

private:
    int64_t m_n;
    float m_rate;
    std::optional<k::DropoutNoise> m_noise;  // a noise shape sharing decisions along some axes
};
Result<std::unique_ptr<CudaKernel>> dropoutCuda(const ShapeContext& c, const Shape& out,
                                                const CudaBuildOptions&) {
    // The same noise tensor as the CPU kernel (kernels::dropoutNoiseDims), so both keep the same elements.
    const std::vector<int64_t>& dims = out.dims();
    const std::vector<int64_t> noise = kernels::dropoutNoiseDims(c.attrs.getInts("noise_shape"), dims);
    std::optional<k::DropoutNoise> g;
    if (!noise.empty()) {
        g.emplace();
        g->rank = static_cast<int>(dims.size());
        for (int64_t k = g->rank - 1, s = 1; k >= 0; --k) {
            g->dims[k] = dims[size_t(k)];
            g->stride[k] = noise[size_t(k)] == 1 ? 0 : s;
            s *= noise[size_t(k)];
        }
    }
    return make<DropoutKernel>(out.numel(), float(c.attrs.getFloat("rate")), g);
}

// ---- Merge --------------------------------------------------------------------------------------
class AddKernel final : public CudaKernel {
public:
    explicit AddKernel(int64_t n) : m_n(n) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::add(io.in[0], io.in[1], io.out, m_n, io.ctx->stream());
        for (size_t i = 2; i < io.in.size(); ++i) k::accumulate(io.in[i], io.out, m_n, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        for (float* d : io.dIn)
            if (d) k::accumulate(io.dOut, d, m_n, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n;
};
class MultiplyKernel final : public CudaKernel {
public:
    explicit MultiplyKernel(int64_t n) : m_n(n) {}
    Status forward(const CudaIo& io) override {
        k::multiply(io.in[0], io.in[1], io.out, m_n, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        k::multiplyBackward(io.in[0], io.in[1], io.dOut, io.dIn[0], io.dIn[1], m_n, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n;
};
// Two inputs: one full-size, one an [N,C] (or [N,1,1,C]) channel scale.
class ChannelScaleKernel final : public CudaKernel {
public:
    ChannelScaleKernel(int64_t n, int64_t positions, int64_t c, int full)
        : m_n(n), m_positions(positions), m_c(c), m_full(full) {}
    Status forward(const CudaIo& io) override {
        k::multiplyChannels(io.in[m_full], io.in[1 - m_full], io.out, m_n, m_positions, m_c, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        k::multiplyChannelsBackward(io.in[m_full], io.in[1 - m_full], io.dOut, io.dIn[m_full], io.dIn[1 - m_full],
                                    m_n, m_positions, m_c, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n, m_positions, m_c;
    int m_full;  // which input is full-size
};
class SubtractKernel final : public CudaKernel {
public:
    explicit SubtractKernel(int64_t n) : m_n(n) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        k::subtract(io.in[0], io.in[1], io.out, m_n, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        k::subtractBackward(io.dOut, io.dIn[0], io.dIn[1], m_n, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n;
};
class ConcatKernel final : public CudaKernel {
public:
    ConcatKernel(int64_t outer, std::vector<int64_t> inners) : m_outer(outer), m_inners(std::move(inners)) {
        for (int64_t w : m_inners) m_total += w;
    }
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const CudaIo& io) override {
        int64_t off = 0;
        for (size_t i = 0; i < io.in.size(); ++i) {
            k::concatLast(io.in[i], io.out, m_outer, m_inners[i], m_total, off, io.ctx->stream());
            off += m_inners[i];
        }
        return {};
    }
    Status backward(const CudaIo& io) override {
        int64_t off = 0;
        for (size_t i = 0; i < io.dIn.size(); ++i) {
            if (io.dIn[i])
                k::concatLastBackward(io.dOut, io.dIn[i], m_outer, m_inners[i], m_total, off,
                                      io.ctx->stream());
            off += m_inners[i];
        }
        return {};
    }

private:
    int64_t m_outer;
    std::vector<int64_t> m_inners;
    int64_t m_total = 0;
};
Result<std::unique_ptr<CudaKernel>> addCuda(const ShapeContext&, const Shape& out, const CudaBuildOptions&) {
    return make<AddKernel>(out.numel());
}
Result<std::unique_ptr<CudaKernel>> mulCuda(const ShapeContext& c, const Shape& out, const CudaBuildOptions&) {
    if (c.inputs[0].numel() == c.inputs[1].numel()) return make<MultiplyKernel>(out.numel());
    const int full = c.inputs[0].numel() == out.numel() ? 0 : 1;
    const int64_t n = out[0], ch = out[-1];
    return make<ChannelScaleKernel>(n, out.numel() / (n * ch), ch, full);
}
Result<std::unique_ptr<CudaKernel>> subCuda(const ShapeContext&, const Shape& out, const CudaBuildOptions&) {
    return make<SubtractKernel>(out.numel());
}
bool sameShapes(const ShapeContext& c, const Shape& out) {
    for (const auto& s : c.inputs)
        if (s.numel() != out.numel()) return false;
    return true;
}
// Two inputs of one shape, or one of them a channel scale (the op's shape rule checked which).
bool mulSupports(const ShapeContext& c, const Shape& out) {
    return c.inputs.size() == 2 && (c.inputs[0].numel() == out.numel() || c.inputs[1].numel() == out.numel());
}
Result<std::unique_ptr<CudaKernel>> concatCuda(const ShapeContext& c, const Shape& out,
                                               const CudaBuildOptions&) {
    int64_t axis = c.attrs.getInt("axis");
    if (axis < 0) axis += out.rank();
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= out[d];
    std::vector<int64_t> inners;
    for (const auto& s : c.inputs) inners.push_back(s.numelFrom(static_cast<int>(axis)));
    return make<ConcatKernel>(outer, std::move(inners));
}

// ---- Activation layers --------------------------------------------------------------------------
class ActKernel final : public CudaKernel {
public:
    ActKernel(int64_t rows, int64_t cols, ActSpec a) : m_rows(rows), m_cols(cols), m_a(a) {}
    bool backwardNeedsInputs() const override {
        return m_a.needsPre() || m_a.act == k::Act::ReLU6 || m_a.act == k::Act::LeakyReLU ||
               m_a.act == k::Act::SiLU || m_a.act == k::Act::HardSigmoid || m_a.act == k::Act::HardSwish;
    }
    bool backwardNeedsOutput() const override { return !backwardNeedsInputs(); }
    Status forward(const CudaIo& io) override {
        if (m_a.softmax) return softmaxForward(*io.ctx, io.in[0], io.out, m_rows, m_cols);
        k::activationForward(m_a.act, io.in[0], io.out, m_rows * m_cols, m_a.alpha, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (!io.dIn[0]) return {};
        if (m_a.softmax) return softmaxBackward(*io.ctx, io.out, io.dOut, io.dIn[0], m_rows, m_cols);
        const bool fromX = backwardNeedsInputs();
        k::activationBackward(m_a.act, fromX ? io.in[0] : nullptr, fromX ? nullptr : io.out, io.dOut,
                              io.dIn[0], m_rows * m_cols, m_a.alpha, io.ctx->stream());
        return {};
    }

private:
    int64_t m_rows, m_cols;
    ActSpec m_a;
};
template <OpKind K>
Result<std::unique_ptr<CudaKernel>> actCuda(const ShapeContext& c, const Shape& out,
                                            const CudaBuildOptions&) {
    ActSpec a;
    if constexpr (K == OpKind::ReLU) a.act = k::Act::ReLU;
    if constexpr (K == OpKind::ReLU6) a.act = k::Act::ReLU6;
    if constexpr (K == OpKind::Sigmoid) a.act = k::Act::Sigmoid;
    if constexpr (K == OpKind::Tanh) a.act = k::Act::Tanh;
    if constexpr (K == OpKind::Softmax) a.softmax = true;
    if constexpr (K == OpKind::SiLU) a.act = k::Act::SiLU;
    if constexpr (K == OpKind::HardSigmoid) a.act = k::Act::HardSigmoid;
    if constexpr (K == OpKind::HardSwish) a.act = k::Act::HardSwish;
    if constexpr (K == OpKind::LeakyReLU) {
        a.act = k::Act::LeakyReLU;
        a.alpha = float(c.attrs.getFloat("negative_slope"));
    }
    if constexpr (K == OpKind::GELU)
        a.act = c.attrs.getBool("approximate") ? k::Act::GeluTanh : k::Act::GeluExact;
    const int64_t cols = out[-1];
    return make<ActKernel>(out.numel() / cols, cols, a);
}
class ClipKernel final : public CudaKernel {
public:
    ClipKernel(int64_t n, float lo, float hi) : m_n(n), m_lo(lo), m_hi(hi) {}
    Status forward(const CudaIo& io) override {
        k::clip(io.in[0], io.out, m_n, m_lo, m_hi, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0]) k::clipBackward(io.in[0], io.dOut, io.dIn[0], m_n, m_lo, m_hi, io.ctx->stream());
        return {};
    }

private:
    int64_t m_n;
    float m_lo, m_hi;
};
Result<std::unique_ptr<CudaKernel>> clipCuda(const ShapeContext& c, const Shape& out, const CudaBuildOptions&) {
    return make<ClipKernel>(out.numel(), float(c.attrs.getFloat("min")), float(c.attrs.getFloat("max")));
}
bool softmaxSupports(const ShapeContext& c, const Shape& out) {
    const int64_t axis = c.attrs.getInt("axis");
    return axis == -1 || axis == out.rank() - 1;
}

// ---- Embedding ----------------------------------------------------------------------------------
class EmbeddingKernel final : public CudaKernel {
public:
    EmbeddingKernel(int64_t count, int64_t vocab, int64_t dim) : m_count(count), m_vocab(vocab), m_dim(dim) {}
    Status forward(const CudaIo& io) override {
        k::embeddingForward(io.in[0], io.params[0], io.out, m_count, m_dim, m_vocab, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dParams[0])
            k::embeddingBackward(io.in[0], io.dOut, io.dParams[0], m_count, m_dim, m_vocab, io.ctx->stream());
        return {};
    }

private:
    int64_t m_count, m_vocab, m_dim;
};
Result<std::unique_ptr<CudaKernel>> embeddingCuda(const ShapeContext& c, const Shape& out,
                                                  const CudaBuildOptions&) {
    return make<EmbeddingKernel>(c.inputs[0].numel(), c.attrs.getInt("input_dim"),
                                 c.attrs.getInt("output_dim"));
}

// ---- Gather -------------------------------------------------------------------------------------
// Constant indices live in a device buffer made with the kernel. Indices from an input are checked
// before the gather (one small download per step): a bad one is a DataError naming it, as on the CPU.
class GatherKernel final : public CudaKernel {
public:
    GatherKernel(k::GatherShape g, DeviceBuffer constant) : m_g(g), m_constant(std::move(constant)) {}
    size_t workspaceBytes() const override { return m_g.perSample ? alignUp(sizeof(int)) : 0; }
    Status forward(const CudaIo& io) override {
        const float* idx = indices(io);
        if (m_g.perSample) {
            auto* firstBad = reinterpret_cast<int*>(io.workspace);
            KILN_TRY(io.ctx->memsetAsync(firstBad, 0x7f, sizeof(int)));
            k::gatherIndexCheck(idx, m_g.batch * m_g.count, m_g.axis, firstBad, io.ctx->stream());
            int bad = 0;
            KILN_TRY(io.ctx->download(&bad, firstBad, sizeof(int)));
            if (bad != 0x7f7f7f7f) {
                float value = 0.f;
                KILN_TRY(io.ctx->download(&value, idx + bad, sizeof(float)));
                char text[32];
                std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
                return Error(ErrorCode::DataError, "index " + std::string(text) + " at position " + std::to_string(bad) +
                                                       " is outside [-" + std::to_string(m_g.axis) + ", " +
                                                       std::to_string(m_g.axis) + ") of the gathered axis")
                    .with("reason", "index out of range")
                    .with("index", text)
                    .with("position", std::to_string(bad))
                    .with("size", std::to_string(m_g.axis));
            }
        }
        k::gatherForward(io.in[0], idx, io.out, m_g, io.ctx->stream());
        return {};
    }
    Status backward(const CudaIo& io) override {
        if (io.dIn[0]) k::gatherBackward(indices(io), io.dOut, io.dIn[0], m_g, io.ctx->stream());
        return {};
    }

private:
    const float* indices(const CudaIo& io) const { return m_g.perSample ? io.in[1] : m_constant.as<float>(); }
    k::GatherShape m_g;
    DeviceBuffer m_constant;
};
Result<std::unique_ptr<CudaKernel>> gatherCuda(const ShapeContext& c, const Shape&, const CudaBuildOptions& o) {
    const Shape& data = c.inputs[0];
    int64_t a = c.attrs.getInt("axis");
    if (a < 0) a += data.rank();
    const int axis = static_cast<int>(a);  // the shape rule checked it
    k::GatherShape g;
    g.batch = data[0];
    for (int d = 1; d < axis; ++d) g.outer *= data[d];
    g.axis = data[axis];
    g.inner = data.numelFrom(axis + 1);
    g.perSample = c.inputs.size() == 2;
    DeviceBuffer constant;
    if (g.perSample) {
        g.count = c.inputs[1].numelFrom(1);
    } else {
        std::vector<float> values;
        for (int64_t v : c.attrs.getInts("indices")) values.push_back(static_cast<float>(v));
        g.count = static_cast<int64_t>(values.size());
        if (!o.ctx) return Error(ErrorCode::Internal, "the CUDA Gather kernel needs a device context");
        KILN_ASSIGN(constant, o.ctx->alloc(f32(g.count)));
        KILN_TRY(o.ctx->upload(constant.get(), values.data(), values.size() * sizeof(float)));
    }
    return make<GatherKernel>(g, std::move(constant));
}

// ---- MultiHeadAttention -------------------------------------------------------------------------
// The CPU kernel's algorithm (engine/ops/attention_ops.cpp) with cuBLASLt: the four projections as
// whole-batch GEMMs, the per-head products Q·Kᵀ and P·V as one strided-batched GEMM per head over
// the samples (a head's columns sit inside the rows of [samples, positions, heads·width]), the
// softmax with its causal mask and its gradient in Kiln's kernels, dropout on the weights with the
// CPU's mask. 16-bit precisions run the forward products with 16-bit inputs (fp32 accumulation
// and results), as Dense does; the attention products only where every width is a multiple of 8
// (otherwise fp32); the backward is fp32.
struct MhaDims {
    int64_t batch = 0, tq = 0, tv = 0, d = 0;  // query [batch, tq, d], value [batch, tv, d]
    int64_t heads = 0, key = 0, value = 0, out = 0;
};
class MultiHeadAttentionKernel final : public CudaKernel {
public:
    MultiHeadAttentionKernel(MhaDims m, bool bias, bool causal, float rate, const CudaBuildOptions& o)
        : m_(m), m_bias(bias), m_causal(causal), m_rate(rate), m_type(matType(o.precision)), m_tf32(o.tf32) {
        m_hk = m.heads * m.key;
        m_hv = m.heads * m.value;
        m_nq = m.batch * m.tq;
        m_nv = m.batch * m.tv;
        m_np = m.batch * m.heads * m.tq * m.tv;
        m_scale = 1.0f / std::sqrt(static_cast<float>(m.key));
        m_halfProducts = m_type != DataType::F32 && m.key % 8 == 0 && m.value % 8 == 0 && m.tv % 8 == 0;
        // Saved: Q, K, V, the weights P, the dropped weights, O, the keep mask (one byte each).
        m_offK = f32(m_nq * m_hk);
        m_offV = m_offK + f32(m_nv * m_hk);
        m_offP = m_offV + f32(m_nv * m_hv);
        m_offPd = m_offP + f32(m_np);
        m_offO = m_offPd + (dropout() ? f32(m_np) : 0);
        m_offMask = m_offO + f32(m_nq * m_hv);
        m_saved = m_offMask + (dropout() ? alignUp(size_t(m_np)) : 0);
        // Backward workspace: dO, dP, dP before the dropout, dS, dQ, dK, dV.
        m_wdP = f32(m_nq * m_hv);
        m_wdPd = m_wdP + f32(m_np);
        m_wdS = m_wdPd + (dropout() ? f32(m_np) : 0);
        m_wdQ = m_wdS + f32(m_np);
        m_wdK = m_wdQ + f32(m_nq * m_hk);
        m_wdV = m_wdK + f32(m_nv * m_hk);
        m_work = m_wdV + f32(m_nv * m_hv);
        // Forward workspace in 16-bit precisions: the first and the second operand of each product.
        if (m_type != DataType::F32) {
            int64_t a = std::max({m_nq * m.d, m_nv * m.d, m_nq * m_hv}), b = std::max({m.d * m_hk, m.d * m_hv, m_hv * m.out});
            if (m_halfProducts) {
                a = std::max({a, m_nq * m_hk, m_np});
                b = std::max({b, m_nv * m_hk, m_nv * m_hv});
            }
            m_halfB = f16(a);
            m_work = std::max(m_work, f16(a) + f16(b));
        }
    }
    size_t savedBytes() const override { return m_saved; }
    size_t workspaceBytes() const override { return m_work; }

    Status forward(const CudaIo& io) override {
        DeviceContext& ctx = *io.ctx;
        StreamHandle s = ctx.stream();
        float* Q = savedF(io, 0);
        float* K = savedF(io, m_offK);
        float* V = savedF(io, m_offV);
        float* P = savedF(io, m_offP);
        float* O = savedF(io, m_offO);
        KILN_TRY(project(io, io.in[0], m_nq, Wq, Bq, Q, m_hk, m_.d));
        KILN_TRY(project(io, io.in[1], m_nv, Wk, Bk, K, m_hk, m_.d));
        KILN_TRY(project(io, io.in[1], m_nv, Wv, Bv, V, m_hv, m_.d));

        // S = Q·Kᵀ / sqrt(key_dim) per (sample, head), into P; then the softmax in place.
        const void* q = Q;
        const void* kk = K;
        DataType t = DataType::F32;
        if (m_halfProducts) {
            castHalf(m_type, Q, io.workspace, m_nq * m_hk, s);
            castHalf(m_type, K, io.workspace + m_halfB, m_nv * m_hk, s);
            q = io.workspace;
            kk = io.workspace + m_halfB;
            t = m_type;
        }
        for (int64_t h = 0; h < m_.heads; ++h)
            KILN_TRY(headProduct(ctx, false, true, m_.tq, m_.tv, m_.key, m_scale, offset(q, t, h * m_.key), m_hk,
                                 m_.tq * m_hk, offset(kk, t, h * m_.key), m_hk, m_.tv * m_hk, P + h * m_.tq * m_.tv,
                                 m_.tv, m_.heads * m_.tq * m_.tv, t));
        k::attentionSoftmax(P, m_.batch * m_.heads * m_.tq, m_.tq, m_.tv, m_causal, s);
        const float* pd = P;
        if (io.training && dropout()) {
            float* Pd = savedF(io, m_offPd);
            k::dropoutForward(P, Pd, mask(io), m_np, m_rate, io.seed, io.step, s);
            pd = Pd;
        }

        // O = P·V per (sample, head), each head into its columns of O [samples, tq, heads·value].
        const void* pp = pd;
        const void* vv = V;
        if (m_halfProducts) {
            castHalf(m_type, pd, io.workspace, m_np, s);
            castHalf(m_type, V, io.workspace + m_halfB, m_nv * m_hv, s);
            pp = io.workspace;
            vv = io.workspace + m_halfB;
        }
        for (int64_t h = 0; h < m_.heads; ++h)
            KILN_TRY(headProduct(ctx, false, false, m_.tq, m_.value, m_.tv, 1.0f, offset(pp, t, h * m_.tq * m_.tv),
                                 m_.tv, m_.heads * m_.tq * m_.tv, offset(vv, t, h * m_.value), m_hv, m_.tv * m_hv,
                                 O + h * m_.value, m_hv, m_.tq * m_hv, t));
        return project(io, O, m_nq, Wo, Bo, io.out, m_.out, m_hv);
    }

    Status backward(const CudaIo& io) override {
        DeviceContext& ctx = *io.ctx;
        StreamHandle s = ctx.stream();
        const float* Q = savedF(io, 0);
        const float* K = savedF(io, m_offK);
        const float* V = savedF(io, m_offV);
        const float* P = savedF(io, m_offP);
        const float* O = savedF(io, m_offO);
        const bool dropped = io.training && dropout();
        const float* pd = dropped ? savedF(io, m_offPd) : P;
        float* dO = work(io, 0);
        float* dP = work(io, m_wdP);
        float* dS = work(io, m_wdS);
        float* dQ = work(io, m_wdQ);
        float* dK = work(io, m_wdK);
        float* dV = work(io, m_wdV);
        const int64_t tq = m_.tq, tv = m_.tv, heads = m_.heads, pStride = heads * tq * tv;

        // Output projection y = O·Wo + bo: dbo, dWo (accumulated) and dO (written).
        if (float* g = dParam(io, Bo)) k::columnSums(io.dOut, m_nq, m_.out, g, s);
        KILN_TRY(ctx.memsetAsync(dO, 0, sizeof(float) * size_t(m_nq * m_hv)));
        KILN_TRY(denseBackward(ctx, O, param(io, Wo), io.dOut, dO, dParam(io, Wo), m_nq, m_hv, m_.out, m_tf32));

        // O = Pd·V: dPd = dO·Vᵀ and dV = Pdᵀ·dO per (sample, head).
        for (int64_t h = 0; h < heads; ++h) {
            KILN_TRY(headProduct(ctx, false, true, tq, tv, m_.value, 1.0f, dO + h * m_.value, m_hv, tq * m_hv,
                                 V + h * m_.value, m_hv, tv * m_hv, dP + h * tq * tv, tv, pStride, DataType::F32));
            KILN_TRY(headProduct(ctx, true, false, tv, m_.value, tq, 1.0f, pd + h * tq * tv, tv, pStride,
                                 dO + h * m_.value, m_hv, tq * m_hv, dV + h * m_.value, m_hv, tv * m_hv,
                                 DataType::F32));
        }
        const float* dProb = dP;
        if (dropped) {
            float* dPd = work(io, m_wdPd);
            KILN_TRY(ctx.memsetAsync(dPd, 0, sizeof(float) * size_t(m_np)));
            k::dropoutBackward(dP, mask(io), dPd, m_np, m_rate, s);
            dProb = dPd;
        }
        // The softmax (masked weights are 0 and get no gradient) and the 1/sqrt(key_dim) scale.
        k::attentionSoftmaxBackward(P, dProb, dS, m_.batch * heads * tq, tv, m_scale, s);
        // S = Q·Kᵀ: dQ = dS·K and dK = dSᵀ·Q per (sample, head).
        for (int64_t h = 0; h < heads; ++h) {
            KILN_TRY(headProduct(ctx, false, false, tq, m_.key, tv, 1.0f, dS + h * tq * tv, tv, pStride,
                                 K + h * m_.key, m_hk, tv * m_hk, dQ + h * m_.key, m_hk, tq * m_hk, DataType::F32));
            KILN_TRY(headProduct(ctx, true, false, tv, m_.key, tq, 1.0f, dS + h * tq * tv, tv, pStride,
                                 Q + h * m_.key, m_hk, tq * m_hk, dK + h * m_.key, m_hk, tv * m_hk, DataType::F32));
        }
        // The input projections. Query and value may be one buffer (self-attention): everything
        // accumulates. The key bias's gradient is exactly zero (the softmax cancels a constant
        // added to a row's scores), so nothing is added to it, as on the CPU.
        if (float* g = dParam(io, Bq)) k::columnSums(dQ, m_nq, m_hk, g, s);
        KILN_TRY(denseBackward(ctx, io.in[0], param(io, Wq), dQ, io.dIn[0], dParam(io, Wq), m_nq, m_.d, m_hk, m_tf32));
        KILN_TRY(denseBackward(ctx, io.in[1], param(io, Wk), dK, io.dIn[1], dParam(io, Wk), m_nv, m_.d, m_hk, m_tf32));
        if (float* g = dParam(io, Bv)) k::columnSums(dV, m_nv, m_hv, g, s);
        return denseBackward(ctx, io.in[1], param(io, Wv), dV, io.dIn[1], dParam(io, Wv), m_nv, m_.d, m_hv, m_tf32);
    }

private:
    enum Which { Wq,
                 Bq,
                 Wk,
                 Bk,
                 Wv,
                 Bv,
                 Wo,
                 Bo };
    // Parameter positions in ParamSpec order (no biases without use_bias).
    size_t index(Which w) const { return m_bias ? static_cast<size_t>(w) : static_cast<size_t>(w) / 2; }
    const float* param(const CudaIo& io, Which w) const { return io.params[index(w)]; }
    const float* bias(const CudaIo& io, Which w) const { return m_bias ? io.params[index(w)] : nullptr; }
    float* dParam(const CudaIo& io, Which w) const {
        if (!m_bias && (w == Bq || w == Bk || w == Bv || w == Bo)) return nullptr;
        return io.dParams.empty() ? nullptr : io.dParams[index(w)];
    }
    bool dropout() const { return m_rate > 0.0f; }
    static float* savedF(const CudaIo& io, size_t off) { return reinterpret_cast<float*>(io.saved + off); }
    static float* work(const CudaIo& io, size_t off) { return reinterpret_cast<float*>(io.workspace + off); }
    uint8_t* mask(const CudaIo& io) const { return reinterpret_cast<uint8_t*>(io.saved + m_offMask); }
    static const void* offset(const void* base, DataType t, int64_t elements) {
        return static_cast<const std::byte*>(base) + elements * (t == DataType::F32 ? 4 : 2);
    }

    // y[rows, width] = x[rows, in]·W[in, width] + b, in 16 bits where the precision asks for it.
    Status project(const CudaIo& io, const float* x, int64_t rows, Which w, Which b, float* y, int64_t width,
                   int64_t in) const {
        DeviceContext& ctx = *io.ctx;
        if (m_type == DataType::F32)
            return denseForward(ctx, x, param(io, w), bias(io, b), y, rows, in, width, DataType::F32, k::Act::Linear,
                                m_tf32);
        castHalf(m_type, x, io.workspace, rows * in, ctx.stream());
        castHalf(m_type, param(io, w), io.workspace + m_halfB, in * width, ctx.stream());
        return denseForward(ctx, io.workspace, io.workspace + m_halfB, bias(io, b), y, rows, in, width, m_type,
                            k::Act::Linear, false);
    }
    // One head's product for every sample: C = alpha·op(A)·op(B), row-major, batched over the
    // samples with the given element strides.
    Status headProduct(DeviceContext& ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t kk, float alpha,
                       const void* a, int64_t lda, int64_t sa, const void* b, int64_t ldb, int64_t sb, float* c,
                       int64_t ldc, int64_t sc, DataType t) const {
        RowGemm r;
        r.transA = ta;
        r.transB = tb;
        r.m = m;
        r.n = n;
        r.k = kk;
        r.lda = lda;
        r.ldb = ldb;
        r.ldc = ldc;
        r.alpha = alpha;
        r.batch = m_.batch;
        r.strideA = sa;
        r.strideB = sb;
        r.strideC = sc;
        r.ab = t;
        r.tf32 = t == DataType::F32 && m_tf32;
        return gemmRowMajor(ctx, r, a, b, c);
    }

    MhaDims m_;
    bool m_bias, m_causal;
    float m_rate;
    DataType m_type;
    bool m_tf32;
    bool m_halfProducts = false;
    float m_scale = 1.0f;
    int64_t m_hk = 0, m_hv = 0, m_nq = 0, m_nv = 0, m_np = 0;
    size_t m_offK = 0, m_offV = 0, m_offP = 0, m_offPd = 0, m_offO = 0, m_offMask = 0, m_saved = 0;
    size_t m_wdP = 0, m_wdPd = 0, m_wdS = 0, m_wdQ = 0, m_wdK = 0, m_wdV = 0, m_work = 0;
    size_t m_halfB = 0;  // 16-bit forward: where the second operand starts in the workspace
};
Result<std::unique_ptr<CudaKernel>> mhaCuda(const ShapeContext& c, const Shape& out, const CudaBuildOptions& o) {
    MhaDims m;
    m.batch = c.inputs[0][0];
    m.tq = c.inputs[0][1];
    m.tv = c.inputs[1][1];
    m.d = c.inputs[0][2];
    m.heads = c.attrs.getInt("num_heads");
    m.key = c.attrs.getInt("key_dim");
    const int64_t v = c.attrs.getInt("value_dim");
    m.value = v > 0 ? v : m.key;
    m.out = out[-1];
    return make<MultiHeadAttentionKernel>(m, c.attrs.getBool("use_bias"), c.attrs.getBool("use_causal_mask"),
                                          static_cast<float>(c.attrs.getFloat("dropout")), o);
}

// ---- Losses -------------------------------------------------------------------------------------
enum class LossKind { Sparse, Categorical, Binary, Mse, Mae, BinaryFocal, CategoricalFocal, SparseFocal };
class LossKernel final : public CudaKernel {
public:
    LossKernel(LossKind kind, int64_t batch, int64_t width, k::FocalParams focal = {})
        : m_kind(kind), m_batch(batch), m_width(width), m_focal(focal) {}
    Status forward(const CudaIo& io) override { return run(io, nullptr); }
    Status backward(const CudaIo& io) override { return io.dIn[0] ? run(io, io.dIn[0]) : Status{}; }

private:
    Status run(const CudaIo& io, float* grad) {
        StreamHandle s = io.ctx->stream();
        const float* p = io.in[0];
        const float* t = io.in[1];
        const int64_t n = m_batch * m_width;
        switch (m_kind) {
        case LossKind::Sparse:
            k::sparseCrossEntropy(p, t, m_batch, m_width, io.out, grad, io.gradScale, io.badLabel, io.lossAcc,
                                  s);
            break;
        case LossKind::Categorical:
            k::categoricalCrossEntropy(p, t, m_batch, m_width, io.out, grad, io.gradScale, io.lossAcc, s);
            break;
        case LossKind::Binary:
            k::binaryCrossEntropy(p, t, n, io.out, grad, io.gradScale, io.lossAcc, s);
            break;
        case LossKind::Mse:
            k::meanSquaredError(p, t, n, io.out, grad, io.gradScale, io.lossAcc, s);
            break;
        case LossKind::Mae:
            k::meanAbsoluteError(p, t, n, io.out, grad, io.gradScale, io.lossAcc, s);
            break;
        case LossKind::BinaryFocal:
            k::binaryFocalCrossEntropy(p, t, n, m_focal, io.out, grad, io.gradScale, io.lossAcc, s);
            break;
        case LossKind::CategoricalFocal:
            k::categoricalFocalCrossEntropy(p, t, nullptr, m_batch, m_width, m_focal, io.out, grad, io.gradScale,
                                            nullptr, io.lossAcc, s);
            break;
        case LossKind::SparseFocal:
            k::categoricalFocalCrossEntropy(p, nullptr, t, m_batch, m_width, m_focal, io.out, grad, io.gradScale,
                                            io.badLabel, io.lossAcc, s);
            break;
        }
        return {};
    }
    LossKind m_kind;
    int64_t m_batch, m_width;
    k::FocalParams m_focal;
};
template <LossKind K>
Result<std::unique_ptr<CudaKernel>> lossCuda(const ShapeContext& c, const Shape&, const CudaBuildOptions&) {
    const Shape& p = c.inputs[0];
    k::FocalParams f;
    if constexpr (K == LossKind::BinaryFocal || K == LossKind::CategoricalFocal || K == LossKind::SparseFocal) {
        f.gamma = static_cast<float>(c.attrs.getFloat("gamma"));
        f.alpha = static_cast<float>(c.attrs.getFloat("alpha"));
        f.fromLogits = c.attrs.getBool("from_logits");
        if (c.attrs.has("label_smoothing")) f.labelSmoothing = static_cast<float>(c.attrs.getFloat("label_smoothing"));
        if (c.attrs.has("apply_class_balancing")) f.classBalancing = c.attrs.getBool("apply_class_balancing");
    }
    return make<LossKernel>(K, p[0], p.numel() / p[0], f);
}
// The probability forms (from_logits: false) clip and renormalise; they stay on the CPU.
bool fromLogits(const ShapeContext& c, const Shape&) {
    return c.attrs.getBool("from_logits");
}

// ---- Plugin operations: the plugin's own CUDA kernels, fp32, on the plan's compute stream -------
bool pluginSupports(const ShapeContext& c, const Shape&) {
    const ops::PluginOp* op = ops::pluginOpOf(c.node);
    return op && op->desc->cuda_forward;
}
class PluginCudaKernel final : public CudaKernel {
public:
    PluginCudaKernel(const ops::PluginOp& op, const ShapeContext& c, const Shape& output)
        : m_op(op), m_node(c.node), m_attrs(c.attrs), m_inputShapes(c.inputs.begin(), c.inputs.end()),
          m_output(output), m_call(op, m_node, m_attrs, m_inputShapes) {
        for (int32_t k = 0; k < op.desc->param_count; ++k) {
            auto ps = m_call.paramShape(output, k);  // checked by the shape rule
            m_params.push_back(ps.ok() ? *ps : Shape{1});
        }
        if (op.desc->workspace_floats) {
            const KilnShape o = ops::pluginTensor(nullptr, m_output).shape;
            m_workspace = std::max<int64_t>(0, op.desc->workspace_floats(&m_call.context(), &o));
        }
    }
    size_t workspaceBytes() const override { return f32(m_workspace); }
    bool backwardNeedsOutput() const override { return true; }
    Status forward(const CudaIo& io) override { return run(io, false); }
    Status backward(const CudaIo& io) override { return run(io, true); }

private:
    Status run(const CudaIo& io, bool backward) {
        KilnCudaKernelFn fn = backward ? m_op.desc->cuda_backward : m_op.desc->cuda_forward;
        if (!fn)
            return Error(ErrorCode::Unsupported, m_op.name + " \"" + m_node.name + "\" has no CUDA backward kernel in its plugin")
                .withNode(m_node.name)
                .with("what", "training the plugin operation " + m_op.name + " on CUDA");
        std::vector<KilnTensor> in, params;
        for (size_t k = 0; k < io.in.size(); ++k) in.push_back(ops::pluginTensor(const_cast<float*>(io.in[k]), m_inputShapes[k]));
        for (size_t k = 0; k < io.params.size(); ++k) params.push_back(ops::pluginTensor(io.params[k], m_params[k]));
        std::vector<float*> noParams(params.size(), nullptr);
        char err[1024] = {};
        KilnKernelArgs a{};
        a.ctx = &m_call.context();
        a.inputs = in.data();
        a.input_count = static_cast<int32_t>(in.size());
        a.output = ops::pluginTensor(io.out, m_output);
        a.params = params.data();
        a.param_count = static_cast<int32_t>(params.size());
        if (backward) {
            a.d_output = io.dOut;
            a.d_inputs = io.dIn.data();
            a.d_params = io.dParams.empty() ? noParams.data() : io.dParams.data();
        }
        a.workspace = reinterpret_cast<float*>(io.workspace);
        a.workspace_floats = m_workspace;
        a.training = io.training ? 1 : 0;
        a.error = err;
        a.error_size = sizeof err;
        if (fn(&a, static_cast<void*>(io.ctx->stream())) != 0)
            return Error(ErrorCode::PluginError, m_op.name + " \"" + m_node.name + "\" failed in its CUDA " +
                                                     (backward ? "backward" : "forward") + " kernel: " +
                                                     ops::pluginMessage(err, sizeof err))
                .withNode(m_node.name)
                .with("path", m_op.pluginPath)
                .with("reason", ops::pluginMessage(err, sizeof err))
                .with("op", m_op.name);
        return {};
    }

    const ops::PluginOp& m_op;
    Node m_node;
    AttrMap m_attrs;
    std::vector<Shape> m_inputShapes;
    Shape m_output;
    ops::PluginCall m_call;
    std::vector<Shape> m_params;
    int64_t m_workspace = 0;
};
Result<std::unique_ptr<CudaKernel>> pluginCuda(const ShapeContext& c, const Shape& output, const CudaBuildOptions& o) {
    const ops::PluginOp* op = ops::pluginOpOf(c.node);
    if (!op) return Error(ErrorCode::Internal, "plugin operation of \"" + c.node.name + "\" vanished").withNode(c.node.name);
    if (o.precision != Precision::Fp32)
        return Error(ErrorCode::Unsupported, op->name + " \"" + c.node.name +
                                                 "\" is a plugin operation, which runs in float32 only; train with fp32 precision")
            .withNode(c.node.name)
            .with("what", "16-bit precision for the plugin operation " + op->name);
    return make<PluginCudaKernel>(*op, c, output);
}

}  // namespace

const std::array<std::optional<CudaOpRow>, ops::kOpKindCount>& cudaOpTable() {
    static const std::array<std::optional<CudaOpRow>, ops::kOpKindCount> table = {{
        std::nullopt,  // Input: fed by the plan
        CudaOpRow{OpKind::Dense, nullptr, denseCuda},
        CudaOpRow{OpKind::Conv2D, convSupports, convCuda},
        CudaOpRow{OpKind::DepthwiseConv2D, convSupports, depthwiseCuda},
        CudaOpRow{OpKind::MaxPooling2D, nullptr, poolCuda<true>},
        CudaOpRow{OpKind::AveragePooling2D, nullptr, poolCuda<false>},
        CudaOpRow{OpKind::GlobalAveragePooling2D, gapSupports, gapCuda},
        CudaOpRow{OpKind::GlobalMaxPooling2D, nullptr, gmpCuda},
        CudaOpRow{OpKind::GlobalAveragePooling1D, nullptr, gapCuda},  // [N,T,D]: T positions, D channels
        CudaOpRow{OpKind::ZeroPadding2D, nullptr, zeroPadCuda},
        CudaOpRow{OpKind::UpSampling2D, nullptr, upsampleCuda},
        CudaOpRow{OpKind::BatchNormalization, bnSupports, bnCuda},
        CudaOpRow{OpKind::LayerNormalization, nullptr, lnCuda},
        CudaOpRow{OpKind::Normalization, nullptr, fixedNormCuda},
        CudaOpRow{OpKind::Dropout, nullptr, dropoutCuda},
        CudaOpRow{
            OpKind::Flatten, nullptr,
            [](const ShapeContext&, const Shape&, const CudaBuildOptions&) { return make<AliasKernel>(); }},
        CudaOpRow{
            OpKind::Reshape, nullptr,
            [](const ShapeContext&, const Shape&, const CudaBuildOptions&) { return make<AliasKernel>(); }},
        CudaOpRow{OpKind::Rescaling, nullptr, rescaleCuda},
        CudaOpRow{OpKind::Concatenate, nullptr, concatCuda},
        CudaOpRow{OpKind::Add, sameShapes, addCuda},
        CudaOpRow{OpKind::Subtract, nullptr, subCuda},
        CudaOpRow{OpKind::Multiply, mulSupports, mulCuda},
        CudaOpRow{OpKind::ReLU, nullptr, actCuda<OpKind::ReLU>},
        CudaOpRow{OpKind::LeakyReLU, nullptr, actCuda<OpKind::LeakyReLU>},
        CudaOpRow{OpKind::ReLU6, nullptr, actCuda<OpKind::ReLU6>},
        CudaOpRow{OpKind::GELU, nullptr, actCuda<OpKind::GELU>},
        CudaOpRow{OpKind::Sigmoid, nullptr, actCuda<OpKind::Sigmoid>},
        CudaOpRow{OpKind::Tanh, nullptr, actCuda<OpKind::Tanh>},
        CudaOpRow{OpKind::Softmax, softmaxSupports, actCuda<OpKind::Softmax>},
        CudaOpRow{OpKind::SiLU, nullptr, actCuda<OpKind::SiLU>},
        CudaOpRow{OpKind::HardSigmoid, nullptr, actCuda<OpKind::HardSigmoid>},
        CudaOpRow{OpKind::HardSwish, nullptr, actCuda<OpKind::HardSwish>},
        CudaOpRow{OpKind::Clip, nullptr, clipCuda},
        CudaOpRow{OpKind::Embedding, nullptr, embeddingCuda},
        CudaOpRow{OpKind::Gather, nullptr, gatherCuda},
        CudaOpRow{OpKind::MultiHeadAttention, nullptr, mhaCuda},
        CudaOpRow{OpKind::SparseCategoricalCrossentropy, fromLogits, lossCuda<LossKind::Sparse>},
        CudaOpRow{OpKind::CategoricalCrossentropy, fromLogits, lossCuda<LossKind::Categorical>},
        CudaOpRow{OpKind::BinaryCrossentropy, fromLogits, lossCuda<LossKind::Binary>},
        CudaOpRow{OpKind::MeanSquaredError, nullptr, lossCuda<LossKind::Mse>},
        CudaOpRow{OpKind::MeanAbsoluteError, nullptr, lossCuda<LossKind::Mae>},
        CudaOpRow{OpKind::BinaryFocalCrossentropy, nullptr, lossCuda<LossKind::BinaryFocal>},
        CudaOpRow{OpKind::CategoricalFocalCrossentropy, nullptr, lossCuda<LossKind::CategoricalFocal>},
        CudaOpRow{OpKind::SparseCategoricalFocalCrossentropy, nullptr, lossCuda<LossKind::SparseFocal>},
        std::nullopt,  // Placeholder: nothing to compute anywhere
        CudaOpRow{OpKind::Plugin, pluginSupports, pluginCuda},
    }};
    return table;
}

bool cudaSupports(OpKind kind, const ShapeContext& ctx, const Shape& output) {
    const auto& r = cudaOpTable()[static_cast<size_t>(kind)];
    if (!r) return false;
    return !r->supports || r->supports(ctx, output);
}

Placement placeModel(const ops::ModelInfo& model) {
    Placement p;
    p.onGpu.assign(model.nodes.size(), 1);
    const auto& g = model.graph;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if (ni.def->kind == OpKind::Input) continue;
        const ShapeContext ctx = ops::shapeContext(model, i);
        if (cudaSupports(ni.def->kind, ctx, ni.output)) continue;
        p.onGpu[static_cast<size_t>(i)] = 0;
        p.cpuNodes.push_back(g.nodes[static_cast<size_t>(i)].name + " (" + std::string(ni.def->name) + ")");
    }
    // A value crosses whenever producer and consumer sit on different sides.
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        for (int src : ni.inputs) {
            if (p.onGpu[static_cast<size_t>(src)] == p.onGpu[static_cast<size_t>(i)]) continue;
            p.copies.push_back({g.nodes[static_cast<size_t>(i)].name, g.nodes[static_cast<size_t>(src)].name,
                                p.onGpu[static_cast<size_t>(src)] != 0,
                                model.nodes[static_cast<size_t>(src)].output.numelFrom(1)});
        }
    }
    return p;
}

std::string Placement::report() const {
    std::ostringstream o;
    size_t gpu = 0;
    for (char c : onGpu) gpu += c ? 1 : 0;
    o << gpu << " of " << onGpu.size() << " nodes on the GPU";
    if (cpuNodes.empty()) {
        o << "; no copies between host and device inside a step\n";
        return o.str();
    }
    o << "; on the CPU:";
    for (const auto& n : cpuNodes) o << ' ' << n << (n == cpuNodes.back() ? "" : ",");
    o << "\ncopies per step:";
    for (const auto& c : copies)
        o << "\n  " << c.producer << (c.toHost ? " -> host for " : " -> device from ") << c.node << " ("
          << c.floatsPerSample << " floats per sample, and its gradient back)";
    o << '\n';
    return o.str();
}

}  // namespace kiln::engine::cuda
