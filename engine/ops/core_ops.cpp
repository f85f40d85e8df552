// SPDX-License-Identifier: Apache-2.0
// Core family: Input, Dense (along the last axis), Dropout, Flatten, Reshape, Embedding, Gather — attributes, shape
// rules, parameters and CPU kernels.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/ops/kernels/dropout.h"
#include "engine/ops/kernels/elementwise.h"
#include "engine/ops/kernels/embedding.h"
#include "engine/ops/kernels/gather.h"
#include "engine/ops/kernels/gemm.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

// ---- Input -------------------------------------------------------------------------------
Result<Shape> inputShape(const ShapeContext& c) {
    std::vector<int64_t> dims{Shape::kBatch};
    for (int64_t d : c.attrs.getInts("shape")) {
        if (d <= 0) return shapeError(c, "has a non-positive dimension in its shape");
        dims.push_back(d);
    }
    return Shape(dims);
}

class InputKernel final : public CpuKernel {
public:
    Status forward(const KernelIo&) override { return {}; }
    Status backward(const KernelIo&) override { return {}; }
};

// ---- Dense -------------------------------------------------------------------------------
// As in Keras, a sequence [B, T, D] is transformed along its last axis into [B, T, units], one
// kernel for every position. Images (rank 4) are refused with a hint to flatten them first, the
// common mistake in a classifier head.
Result<Shape> denseShape(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    if (in.rank() != 2 && in.rank() != 3)
        return shapeError(c, "expects a rank-2 or rank-3 input but got " + in.toString() +
                                 (in.rank() > 3 ? ": add a Flatten before it" : ""));
    std::vector<int64_t> dims = in.dims();
    dims.back() = c.attrs.getInt("units");
    return Shape(dims);
}

std::vector<ParamSpec> denseParams(const ShapeContext& c, const Shape&) {
    std::vector<ParamSpec> p{{"kernel", Shape{c.inputs[0][-1], c.attrs.getInt("units")}, Init::GlorotUniform}};
    if (c.attrs.getBool("use_bias")) p.push_back({"bias", Shape{c.attrs.getInt("units")}, Init::Zeros});
    return p;
}

int64_t denseMacs(const ShapeContext& c, const Shape&) {
    return c.inputs[0].numelFrom(1) * c.attrs.getInt("units");
}

class DenseKernel final : public CpuKernel {
public:
    DenseKernel(int64_t rows, int64_t in, int64_t out, bool bias, kernels::Activation act)
        : m_rows(rows), m_in(in), m_out(out), m_bias(bias), m_act(act),
          m_fused(kernels::activationDerivableFromOutput(act, 0.0f)), m_epi(act, rows, out) {}
    // Activations differentiable from their output are fused with the bias into one pass over
    // the GEMM result (forward) and one pass computing dpre and dbias (backward); GELU keeps its
    // pre-activation and goes through the generic epilogue.
    size_t workspaceFloats() const override {
        return m_fused ? (m_act == kernels::Activation::Linear ? 0 : static_cast<size_t>(m_rows * m_out))
                       : m_epi.scratchFloats();
    }
    size_t savedFloats() const override { return m_fused ? 0 : m_epi.savedFloats(); }
    bool overwritesInputGrads() const override { return true; }
    bool backwardNeedsOutput() const override { return m_act != kernels::Activation::Linear; }

    Status forward(const KernelIo& io) override {
        ThreadPool& pool = *io.pool;
        kernels::gemm(false, false, m_rows, m_out, m_in, 1.0f, io.in[0], m_in, io.params[0], m_out, 0.0f, io.out,
                      m_out, pool);
        const float* bias = m_bias ? io.params[1] : nullptr;
        if (m_fused) {
            if (bias || m_act != kernels::Activation::Linear)
                kernels::biasActivationForward(io.out, bias, m_rows, m_out, m_act, 0.0f, pool);
            return {};
        }
        if (bias) kernels::biasActivationForward(io.out, bias, m_rows, m_out, kernels::Activation::Linear, 0.0f, pool);
        m_epi.forward(io.out, io.saved, pool);
        return {};
    }

    Status backward(const KernelIo& io) override {
        ThreadPool& pool = *io.pool;
        float* dbias = m_bias ? io.dParams[1] : nullptr;
        const float* dpre = io.dOut;
        if (m_fused) {
            if (m_act == kernels::Activation::Linear) {
                if (dbias) addColumnSums(io.dOut, m_rows, m_out, dbias, pool);
            } else {
                kernels::biasActivationBackward(io.out, io.dOut, io.workspace, dbias, m_rows, m_out, m_act, 0.0f, pool);
                dpre = io.workspace;
            }
        } else {
            dpre = m_epi.backward(io.out, io.dOut, io.workspace, io.saved, pool);
            if (dbias) addColumnSums(dpre, m_rows, m_out, dbias, pool);
        }
        if (io.dParams[0])
            kernels::gemm(true, false, m_in, m_out, m_rows, 1.0f, io.in[0], m_in, dpre, m_out, 1.0f, io.dParams[0],
                          m_out, pool);
        if (io.dIn[0])
            kernels::gemm(false, true, m_rows, m_in, m_out, 1.0f, dpre, m_out, io.params[0], m_out,
                          overwritesGrad(io, 0) ? 0.0f : 1.0f, io.dIn[0], m_in, pool);
        return {};
    }

private:
    int64_t m_rows, m_in, m_out;
    bool m_bias;
    kernels::Activation m_act;
    bool m_fused;
    ActivationEpilogue m_epi;
};

Result<std::unique_ptr<CpuKernel>> denseKernel(const ShapeContext& c, const Shape& out) {
    const int64_t in = c.inputs[0][-1];
    return makeKernel<DenseKernel>(c.inputs[0].numel() / in, in, out[-1], c.attrs.getBool("use_bias"),
                                   activationFromName(c.attrs.getString("activation")));
}

// ---- Dropout -----------------------------------------------------------------------------
// noise_shape (Keras's): one entry per input dimension, batch included; 1 shares one keep decision
// along that axis, -1 (Keras's None) or the axis's own size draws one per index.
Result<Shape> dropoutShape(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    const std::vector<int64_t> noise = c.attrs.getInts("noise_shape");
    if (noise.empty()) return in;
    if (static_cast<int64_t>(noise.size()) != in.rank())
        return shapeError(c, "has a noise_shape of " + std::to_string(noise.size()) + " entries for an input of rank " +
                                 std::to_string(in.rank()) + " " + in.toString() + " (one entry per dimension, batch included)");
    if (in.rank() > 8) return shapeError(c, "takes a noise_shape for inputs of rank 8 or less, got " + in.toString());
    for (size_t k = 0; k < noise.size(); ++k) {
        const int64_t d = noise[k];
        const bool own = k > 0 && d == in[static_cast<int64_t>(k)];
        if (d != 1 && d != -1 && !own)
            return shapeError(c, "has noise_shape entry " + std::to_string(d) + " for dimension " + std::to_string(k) +
                                     " of " + in.toString() + ": use 1 (one decision along it) or -1 (one per index)");
    }
    return in;
}

class DropoutKernel final : public CpuKernel {
public:
    // noise: empty for plain dropout, else the noise tensor's sizes (1 along shared axes).
    DropoutKernel(std::vector<int64_t> dims, std::vector<int64_t> noise, float rate)
        : m_dims(std::move(dims)), m_noise(std::move(noise)), m_rate(rate) {
        m_n = 1;
        for (int64_t d : m_dims) m_n *= d;
        m_m = 1;
        for (int64_t d : m_noise) m_m *= d;
    }
    // The mask is kept as bytes inside the float-typed saved buffer; a noise shape's decisions
    // are drawn into the workspace.
    size_t savedFloats() const override { return static_cast<size_t>((m_n + 3) / 4); }
    size_t workspaceFloats() const override { return m_noise.empty() ? 0 : static_cast<size_t>((m_m + 3) / 4); }
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        auto* mask = reinterpret_cast<uint8_t*>(io.saved);
        if (!io.training || m_rate <= 0.0f) {
            kernels::copy(io.in[0], io.out, m_n, *io.pool);
            std::memset(mask, 1, static_cast<size_t>(m_n));
            return {};
        }
        if (m_noise.empty())
            kernels::dropoutForward(io.in[0], io.out, mask, m_n, m_rate, io.seed, io.step, true, *io.pool);
        else
            kernels::dropoutBroadcastForward(io.in[0], io.out, mask, reinterpret_cast<uint8_t*>(io.workspace), m_dims,
                                             m_noise, m_rate, io.seed, io.step, true, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (!io.dIn[0]) return {};
        if (!io.training || m_rate <= 0.0f) {  // identity: no rate, or an inference plan's gradient probe
            kernels::accumulate(io.dOut, io.dIn[0], m_n, *io.pool);
            return {};
        }
        kernels::dropoutBackward(io.dOut, reinterpret_cast<const uint8_t*>(io.saved), io.dIn[0], m_n, m_rate, true,
                                 *io.pool);
        return {};
    }

private:
    std::vector<int64_t> m_dims, m_noise;
    int64_t m_n = 0, m_m = 0;
    float m_rate;
};

Result<std::unique_ptr<CpuKernel>> dropoutKernel(const ShapeContext& c, const Shape& out) {
    return makeKernel<DropoutKernel>(out.dims(), kernels::dropoutNoiseDims(c.attrs.getInts("noise_shape"), out.dims()),
                                     static_cast<float>(c.attrs.getFloat("rate")));
}

// ---- Flatten and Reshape: views of their input ---------------------------------------------
Result<Shape> flattenShape(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    if (in.rank() < 2) return shapeError(c, "expects an input with a batch and at least one more dimension, got " + in.toString());
    return Shape{in[0], in.numelFrom(1)};
}

Result<Shape> reshapeShape(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    std::vector<int64_t> target = c.attrs.getInts("target_shape");
    int64_t known = 1;
    int unknown = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == -1) {
            if (unknown >= 0) return shapeError(c, "can infer only one dimension (-1) of target_shape");
            unknown = static_cast<int>(i);
        } else if (target[i] <= 0) {
            return shapeError(c, "has an invalid dimension " + std::to_string(target[i]) + " in target_shape");
        } else {
            known *= target[i];
        }
    }
    int64_t total = in.numelFrom(1);
    if (unknown >= 0) {
        if (total % known != 0)
            return shapeError(c, "cannot reshape " + in.toString() + " (" + std::to_string(total) +
                                     " values per sample) with target_shape containing -1");
        target[static_cast<size_t>(unknown)] = total / known;
    } else if (known != total) {
        return shapeError(c, "cannot reshape " + in.toString() + " (" + std::to_string(total) +
                                 " values per sample) into " + std::to_string(known) + " values");
    }
    std::vector<int64_t> dims{in[0]};
    dims.insert(dims.end(), target.begin(), target.end());
    return Shape(dims);
}

class ViewKernel final : public CpuKernel {
public:
    bool aliasesInput() const override { return true; }
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo&) override { return {}; }
    Status backward(const KernelIo&) override { return {}; }
};

Result<std::unique_ptr<CpuKernel>> viewKernel(const ShapeContext&, const Shape&) { return makeKernel<ViewKernel>(); }

// ---- Embedding ---------------------------------------------------------------------------
Result<Shape> embeddingShape(const ShapeContext& c) {
    const Shape& in = c.inputs[0];
    if (in.rank() < 1) return shapeError(c, "expects integer ids with a batch dimension");
    std::vector<int64_t> dims = in.dims();
    dims.push_back(c.attrs.getInt("output_dim"));
    return Shape(dims);
}

std::vector<ParamSpec> embeddingParams(const ShapeContext& c, const Shape&) {
    return {{"embeddings", Shape{c.attrs.getInt("input_dim"), c.attrs.getInt("output_dim")}, Init::Uniform005}};
}

class EmbeddingKernel final : public CpuKernel {
public:
    EmbeddingKernel(int64_t count, int64_t vocab, int64_t dim) : m_count(count), m_vocab(vocab), m_dim(dim) {}
    Status forward(const KernelIo& io) override {
        auto bad = kernels::embeddingForward(io.in[0], m_count, io.params[0], m_vocab, m_dim, io.out, *io.pool);
        if (!bad.ok())
            return Error(ErrorCode::DataError, "id " + std::to_string(static_cast<int64_t>(bad.value)) + " at position " +
                                                   std::to_string(bad.position) + " is outside the vocabulary [0, " +
                                                   std::to_string(m_vocab) + ")")
                .with("reason", "id out of range");
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dParams[0]) kernels::embeddingBackward(io.in[0], m_count, io.dOut, m_vocab, m_dim, io.dParams[0], *io.pool);
        return {};
    }

private:
    int64_t m_count, m_vocab, m_dim;
};

Result<std::unique_ptr<CpuKernel>> embeddingKernel(const ShapeContext& c, const Shape&) {
    return makeKernel<EmbeddingKernel>(c.inputs[0].numel(), c.attrs.getInt("input_dim"), c.attrs.getInt("output_dim"));
}

// ---- Gather ------------------------------------------------------------------------------
// Picks entries of one axis of each sample (axis 0, the batch, is never gathered): with a second
// input each sample by its own indices ([batch, i1, ...], integers stored as floats, as Embedding
// takes ids), else by the constant `indices` (shaped by `indices_shape`) for every sample. The
// output has the indices' dimensions where the axis was, as in ONNX Gather and NumPy's take().
// The gathered axis with a negative one counted from the end; outside [0, rank) when invalid.
int gatherAxis(const ShapeContext& c) {
    const int64_t rank = c.inputs[0].rank();
    int64_t axis = c.attrs.getInt("axis");
    if (axis < 0) axis += rank;
    return axis < 0 || axis >= rank ? -1 : static_cast<int>(axis);
}

std::vector<int64_t> constantIndexDims(const ShapeContext& c) {
    const std::vector<int64_t> shape = c.attrs.getInts("indices_shape");
    if (shape.size() == 1 && shape[0] == -1) return {static_cast<int64_t>(c.attrs.getInts("indices").size())};
    return shape;
}

Result<Shape> gatherShape(const ShapeContext& c) {
    const Shape& data = c.inputs[0];
    const int64_t rank = data.rank();
    if (rank < 2) return shapeError(c, "expects data with a batch and at least one more dimension, got " + data.toString());
    const int axis = gatherAxis(c);
    if (axis == 0)
        return shapeError(c, "cannot gather along the batch axis (axis 0 of " + data.toString() + "): it gathers within each sample");
    if (axis < 0)
        return shapeError(c, "has axis " + std::to_string(c.attrs.getInt("axis")) + ", outside the axes 1.." + std::to_string(rank - 1) +
                                 " of its data " + data.toString());
    const int64_t size = data[axis];
    const std::vector<int64_t> constant = c.attrs.getInts("indices");
    std::vector<int64_t> indexDims;
    if (c.inputs.size() == 2) {
        const Shape& ids = c.inputs[1];
        if (!constant.empty())
            return shapeError(c, "takes its indices from its second input or from the attribute indices, not from both");
        if (ids.rank() < 1 || ids[0] != data[0])
            return shapeError(c, "expects indices with the data's batch first, got " + ids.toString() + " for data " + data.toString());
        indexDims.assign(ids.dims().begin() + 1, ids.dims().end());
    } else {
        if (constant.empty()) return shapeError(c, "needs indices: a second input (one set per sample) or the attribute indices");
        for (int64_t v : constant)
            if (v < -size || v >= size)
                return shapeError(c, "has index " + std::to_string(v) + ", outside [-" + std::to_string(size) + ", " + std::to_string(size) +
                                         ") for axis " + std::to_string(axis) + " of " + data.toString());
        indexDims = constantIndexDims(c);
        int64_t n = 1;
        for (int64_t d : indexDims) {
            if (d <= 0) return shapeError(c, "has a non-positive dimension in indices_shape (use [-1] for one axis of all indices)");
            n *= d;
        }
        if (n != static_cast<int64_t>(constant.size()))
            return shapeError(c, "has indices_shape holding " + std::to_string(n) + " values for " + std::to_string(constant.size()) +
                                     " indices");
    }
    std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + axis);
    dims.insert(dims.end(), indexDims.begin(), indexDims.end());
    dims.insert(dims.end(), data.dims().begin() + axis + 1, data.dims().end());
    if (dims.size() > 8) return shapeError(c, "would give " + std::to_string(dims.size()) + " dimensions; Kiln's values have at most 8");
    return Shape(dims);
}

// An index as the user wrote it: "3", or "1.5" for one that is not a whole number.
std::string indexText(float v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15f) return std::to_string(static_cast<int64_t>(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    return buf;
}

class GatherKernel final : public CpuKernel {
public:
    GatherKernel(kernels::GatherDims dims, std::vector<float> constant) : m_d(dims), m_constant(std::move(constant)) {}
    Status forward(const KernelIo& io) override {
        auto bad = kernels::gatherForward(io.in[0], indices(io), m_d, io.out, *io.pool);
        if (!bad.ok())
            return Error(ErrorCode::DataError, "index " + indexText(bad.value) + " at position " + std::to_string(bad.position) +
                                                   " is outside [-" + std::to_string(m_d.axis) + ", " + std::to_string(m_d.axis) +
                                                   ") of the gathered axis")
                .with("reason", "index out of range")
                .with("index", indexText(bad.value))
                .with("position", std::to_string(bad.position))
                .with("size", std::to_string(m_d.axis));
        return {};
    }
    Status backward(const KernelIo& io) override {
        if (io.dIn[0]) kernels::gatherBackward(indices(io), io.dOut, m_d, io.dIn[0], *io.pool);
        return {};
    }

private:
    const float* indices(const KernelIo& io) const { return m_d.perSample ? io.in[1] : m_constant.data(); }
    kernels::GatherDims m_d;
    std::vector<float> m_constant;
};

Result<std::unique_ptr<CpuKernel>> gatherKernel(const ShapeContext& c, const Shape&) {
    const Shape& data = c.inputs[0];
    const int axis = gatherAxis(c);
    kernels::GatherDims d;
    d.batch = data[0];
    d.outer = 1;
    for (int k = 1; k < axis; ++k) d.outer *= data[k];
    d.axis = data[axis];
    d.inner = data.numelFrom(axis + 1);
    d.perSample = c.inputs.size() == 2;
    std::vector<float> constant;
    if (d.perSample) {
        d.count = c.inputs[1].numelFrom(1);
    } else {
        for (int64_t v : c.attrs.getInts("indices")) constant.push_back(static_cast<float>(v));
        d.count = static_cast<int64_t>(constant.size());
    }
    return makeKernel<GatherKernel>(d, std::move(constant));
}

Result<std::unique_ptr<CpuKernel>> inputKernel(const ShapeContext&, const Shape&) { return makeKernel<InputKernel>(); }

}  // namespace

std::vector<OpDef> coreOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::Input, "Input", Category::Input, 0, 0,
                    {intsAttr("shape", {}, 0, 1, "shape of one sample, without the batch dimension", true),
                     choiceAttr("dtype", "float32", {"float32", "int32"}, "element type of the fed data")},
                    inputShape, nullptr, nullptr, inputKernel, "A model input fed from the data set"});
    rows.push_back({OpKind::Dense, "Dense", Category::Core, 1, 1, {requiredInt("units", 1, "number of output units"), activationAttr(), boolAttr("use_bias", true, "add a learned bias")}, denseShape, denseParams, denseMacs, denseKernel, "Fully connected layer on the last axis: y = activation(x·W + b)"});
    rows.push_back({OpKind::Dropout, "Dropout", Category::Regularization, 1, 1,
                    {floatAttr("rate", 0.5, 0.0, 0.99, "fraction of inputs set to zero while training"),
                     intsAttr("noise_shape", {}, 0, -1,
                              "per dimension, batch included: 1 drops along it together (e.g. [-1, 1, 1, 1] "
                              "drops whole samples), -1 independently; empty drops single values")},
                    dropoutShape, nullptr, nullptr, dropoutKernel,
                    "Randomly zeroes inputs while training and rescales the rest"});
    rows.push_back({OpKind::Flatten, "Flatten", Category::Core, 1, 1, {}, flattenShape, nullptr, nullptr, viewKernel,
                    "Flattens each sample to one dimension"});
    rows.push_back({OpKind::Reshape, "Reshape", Category::Core, 1, 1,
                    {intsAttr("target_shape", {}, 0, -1, "new shape of one sample; one entry may be -1", true)},
                    reshapeShape, nullptr, nullptr, viewKernel, "Gives each sample a new shape"});
    rows.push_back({OpKind::Embedding, "Embedding", Category::Core, 1, 1,
                    {requiredInt("input_dim", 1, "vocabulary size (ids are 0 .. input_dim-1)"),
                     requiredInt("output_dim", 1, "size of each embedding vector")},
                    embeddingShape, embeddingParams, nullptr, embeddingKernel,
                    "Maps integer ids to learned dense vectors"});
    rows.push_back({OpKind::Gather, "Gather", Category::Core, 1, 2, {intAttr("axis", 1, std::nullopt, std::nullopt, "axis of the data to pick from (1 is the first after the batch; negative counts from the end)"), intsAttr("indices", {}, 0, std::nullopt, "constant indices for every sample, when there is no second input (negative counts from the end)"), intsAttr("indices_shape", {-1}, 0, -1, "shape of the constant indices: [-1] one axis of all of them, [] a single index (the axis goes)")}, gatherShape, nullptr, nullptr, gatherKernel, "Picks entries along one axis of each sample by indices: its second input's, or constant ones"});
    return rows;
}

}  // namespace kiln::engine::ops
