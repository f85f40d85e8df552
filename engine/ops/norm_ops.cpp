// SPDX-License-Identifier: Apache-2.0
// Normalization family: BatchNormalization and LayerNormalization over the last axis, and
// Normalization, Keras's preprocessing layer: fixed per-channel statistics, never trained.
// A frozen BatchNormalization (trainable: false) runs in inference mode, as in Keras, so that
// fine-tuning keeps a pretrained network's statistics.
#include "engine/ops/kernels/normalization.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

Result<Shape> normShape(const ShapeContext& c) {
    if (c.inputs[0].rank() < 2) return shapeError(c, "expects a batch and at least one more dimension");
    if (c.attrs.getInt("axis") != -1 && c.attrs.getInt("axis") != c.inputs[0].rank() - 1)
        return shapeError(c, "normalises only the last (channel) axis, axis -1");
    return c.inputs[0];
}

std::vector<ParamSpec> bnParams(const ShapeContext& c, const Shape&) {
    Shape s{c.inputs[0][-1]};
    return {{"gamma", s, Init::Ones},
            {"beta", s, Init::Zeros},
            {"moving_mean", s, Init::Zeros, false},
            {"moving_variance", s, Init::Ones, false}};
}

std::vector<ParamSpec> lnParams(const ShapeContext& c, const Shape&) {
    Shape s{c.inputs[0][-1]};
    return {{"gamma", s, Init::Ones}, {"beta", s, Init::Zeros}};
}

// Normalization keeps the statistics it was given (Keras: adapt() or the mean/variance
// arguments) as non-trainable parameters, so that weights files carry them.
std::vector<ParamSpec> fixedNormParams(const ShapeContext& c, const Shape&) {
    Shape s{c.inputs[0][-1]};
    return {{"mean", s, Init::Zeros, false}, {"variance", s, Init::Ones, false}};
}

int64_t normMacs(const ShapeContext& c, const Shape& out) { return 2 * out.numelFrom(1); }

class BatchNormKernel final : public CpuKernel {
public:
    BatchNormKernel(int64_t rows, int64_t ch, float momentum, float eps, bool frozen, bool synchronized)
        : m_rows(rows), m_c(ch), m_momentum(momentum), m_eps(eps), m_frozen(frozen), m_synchronized(synchronized) {}
    size_t savedFloats() const override { return static_cast<size_t>(2 * m_c); }  // batch mean, 1/std
    bool backwardNeedsOutput() const override { return m_relu; }
    bool overwritesInputGrads() const override { return true; }
    bool fuseRelu() override {
        m_relu = true;
        return true;
    }
    bool fuseResidual() override {
        m_residual = true;
        return true;
    }
    Status forward(const KernelIo& io) override {
        kernels::BatchNormFusion fusion;
        fusion.relu = m_relu;
        if (m_residual) fusion.residual = io.in[1];
        if (io.training && !m_frozen) {
            kernels::BatchNormParams bp;
            bp.epsilon = m_eps;
            bp.momentum = m_momentum;
            if (kernels::BatchNormSync* sync = syncHook()) {  // data parallel, synchronised
                if (!kernels::batchNormForwardTrainingSync(m_rows, m_c, io.in[0], io.params[0], io.params[1], bp, io.out,
                                                           io.saved, io.saved + m_c, io.params[2], io.params[3], *sync,
                                                           *io.pool, fusion))
                    return Error(ErrorCode::Internal, "synchronising batch statistics across replicas failed");
                return {};
            }
            kernels::batchNormForwardTraining(m_rows, m_c, io.in[0], io.params[0], io.params[1], bp, io.out, io.saved,
                                              io.saved + m_c, io.params[2], io.params[3], *io.pool, fusion);
        } else {
            kernels::batchNormForwardInference(m_rows, m_c, io.in[0], io.params[0], io.params[1], io.params[2],
                                               io.params[3], m_eps, io.out, *io.pool, fusion);
        }
        return {};
    }
    Status backward(const KernelIo& io) override {
        kernels::BatchNormFusion fusion;
        fusion.relu = m_relu;
        fusion.out = io.out;
        fusion.overwriteDx = overwritesGrad(io, 0);
        fusion.maskFromInput = m_relu && !m_residual;  // training backward only; the others read out
        fusion.beta = io.params[1];
        if (m_residual) {
            fusion.dResidual = io.dIn[1];
            fusion.overwriteResidual = overwritesGrad(io, 1);
        }
        if (m_frozen || !io.training) {  // frozen, or an inference plan's gradient probe
            kernels::batchNormBackwardInference(m_rows, m_c, io.in[0], io.params[0], io.params[2], io.params[3], m_eps,
                                                io.dOut, io.dIn[0], io.dParams[0], io.dParams[1], *io.pool, fusion);
            return {};
        }
        if (kernels::BatchNormSync* sync = syncHook()) {
            if (!kernels::batchNormBackwardTrainingSync(m_rows, m_c, io.in[0], io.params[0], io.saved, io.saved + m_c,
                                                        io.dOut, io.dIn[0], io.dParams[0], io.dParams[1], *sync, *io.pool,
                                                        fusion))
                return Error(ErrorCode::Internal, "synchronising batch-norm gradients across replicas failed");
            return {};
        }
        kernels::batchNormBackwardTraining(m_rows, m_c, io.in[0], io.params[0], io.saved, io.saved + m_c, io.dOut,
                                           io.dIn[0], io.dParams[0], io.dParams[1], *io.pool, fusion);
        return {};
    }

private:
    // The data-parallel hook when this layer takes part: marked `synchronized`, or a runner that
    // synchronises every layer.
    kernels::BatchNormSync* syncHook() const {
        kernels::BatchNormSync* sync = kernels::batchNormSync();
        return sync && (m_synchronized || sync->everyLayer()) ? sync : nullptr;
    }
    int64_t m_rows, m_c;
    float m_momentum, m_eps;
    bool m_frozen;
    bool m_synchronized;
    bool m_relu = false;      // a following ReLU applied here (fuseRelu)
    bool m_residual = false;  // a following Add taken in (fuseResidual): in[1] is its other input
};

class LayerNormKernel final : public CpuKernel {
public:
    LayerNormKernel(int64_t rows, int64_t ch, float eps) : m_rows(rows), m_c(ch), m_eps(eps) {}
    size_t savedFloats() const override { return static_cast<size_t>(2 * m_rows); }  // per-row mean, 1/std
    Status forward(const KernelIo& io) override {
        kernels::layerNormForward(m_rows, m_c, io.in[0], io.params[0], io.params[1], m_eps, io.out, io.saved,
                                  io.saved + m_rows, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        kernels::layerNormBackward(m_rows, m_c, io.in[0], io.params[0], io.saved, io.saved + m_rows, io.dOut, io.dIn[0],
                                   io.dParams[0], io.dParams[1], *io.pool);
        return {};
    }

private:
    int64_t m_rows, m_c;
    float m_eps;
};

// y = (x - mean) / max(sqrt(variance), 1e-7) per channel, as Keras computes it; the gradient
// reaches the input only (the statistics are constants).
class FixedNormKernel final : public CpuKernel {
public:
    FixedNormKernel(int64_t rows, int64_t ch) : m_rows(rows), m_c(ch) {}
    bool backwardNeedsInputs() const override { return false; }
    size_t workspaceFloats() const override { return static_cast<size_t>(m_c); }
    Status forward(const KernelIo& io) override {
        float* inv = io.workspace;
        kernels::fixedNormScale(io.params[1], m_c, inv);
        kernels::fixedNormForward(m_rows, m_c, io.in[0], io.params[0], inv, io.out, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (!io.dIn[0]) return {};
        float* inv = io.workspace;
        kernels::fixedNormScale(io.params[1], m_c, inv);
        kernels::fixedNormBackward(m_rows, m_c, io.dOut, inv, io.dIn[0], *io.pool);
        return {};
    }

private:
    int64_t m_rows, m_c;
};

Result<std::unique_ptr<CpuKernel>> bnKernel(const ShapeContext& c, const Shape& out) {
    int64_t ch = out[-1];
    return makeKernel<BatchNormKernel>(out.numel() / ch, ch, static_cast<float>(c.attrs.getFloat("momentum")),
                                       static_cast<float>(c.attrs.getFloat("epsilon")), !c.node.trainable,
                                       c.attrs.getBool("synchronized"));
}
Result<std::unique_ptr<CpuKernel>> lnKernel(const ShapeContext& c, const Shape& out) {
    int64_t ch = out[-1];
    return makeKernel<LayerNormKernel>(out.numel() / ch, ch, static_cast<float>(c.attrs.getFloat("epsilon")));
}

Result<std::unique_ptr<CpuKernel>> fixedNormKernel(const ShapeContext&, const Shape& out) {
    int64_t ch = out[-1];
    return makeKernel<FixedNormKernel>(out.numel() / ch, ch);
}

AttrSpec axisAttr() { return intAttr("axis", -1, std::nullopt, std::nullopt, "normalised axis (the last)"); }

}  // namespace

std::vector<OpDef> normOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::BatchNormalization, "BatchNormalization", Category::Normalization, 1, 1,
                    {axisAttr(), floatAttr("momentum", 0.99, 0.0, 1.0, "weight of the old moving statistics"),
                     floatAttr("epsilon", 1e-3, 1e-12, 1.0, "added to the variance for stability"),
                     boolAttr("synchronized", false,
                              "data-parallel training: batch statistics over all replicas' samples")},
                    normShape, bnParams, normMacs, bnKernel,
                    "Normalises each channel with batch statistics while training, moving averages otherwise"});
    rows.push_back({OpKind::LayerNormalization, "LayerNormalization", Category::Normalization, 1, 1,
                    {axisAttr(), floatAttr("epsilon", 1e-3, 1e-12, 1.0, "added to the variance for stability")},
                    normShape, lnParams, normMacs, lnKernel, "Normalises each sample over its last axis"});
    rows.push_back({OpKind::Normalization, "Normalization", Category::Normalization, 1, 1, {axisAttr()}, normShape,
                    fixedNormParams, normMacs, fixedNormKernel,
                    "(x - mean) / sqrt(variance) per channel with fixed statistics (its weights mean, variance)"});
    return rows;
}

}  // namespace kiln::engine::ops
