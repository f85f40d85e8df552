// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite export: walks the analysed model in topological order, collects tensors,
// constant buffers and built-in operators, then writes the flatbuffer with FlatBufferBuilder's
// table API. The TFLite schema's table fields, operator codes and option-union members are written
// out below from the published schema (version 3); no generated code is used.
#include "engine/io/tflite_export.h"

#include <flatbuffers/flatbuffers.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "engine/io/project.h"
#include "engine/io/quantize.h"

namespace kiln::engine::io {
namespace {

using ops::OpKind;
namespace fb = flatbuffers;

// The schema's field slots: field k of a table sits at vtable offset 4 + 2k.
constexpr fb::voffset_t slot(int k) { return static_cast<fb::voffset_t>(4 + 2 * k); }

// BuiltinOperator values used here.
enum class Op : int32_t {
    Add = 0,
    AveragePool2D = 1,
    Concatenation = 2,
    Conv2D = 3,
    DepthwiseConv2D = 4,
    Dequantize = 6,
    FullyConnected = 9,
    Logistic = 14,
    MaxPool2D = 17,
    Mul = 18,
    Relu = 19,
    Relu6 = 21,
    Reshape = 22,
    ResizeBilinear = 23,
    Softmax = 25,
    Tanh = 28,
    Pad = 34,
    Mean = 40,
    Sub = 41,
    Maximum = 55,
    Minimum = 57,
    ReduceMax = 82,
    ResizeNearestNeighbor = 97,
    LeakyRelu = 98,
    Quantize = 114,
    HardSwish = 117,
    Gelu = 150,
};

// The operator version written in a full-integer model: the version that introduced the int8
// kernel (per-channel weights for the convolutions), as TFLite's versioning reads.
int32_t int8Version(Op code) {
    switch (code) {
    case Op::Conv2D:
    case Op::DepthwiseConv2D:
        return 3;
    case Op::FullyConnected:
        return 4;
    case Op::Reshape:
    case Op::HardSwish:
        return 1;
    default:
        return 2;
    }
}

// BuiltinOptions union members used here (0 is NONE).
enum class Opt : uint8_t {
    None = 0,
    Conv2D = 1,
    DepthwiseConv2D = 2,
    Pool2D = 5,
    FullyConnected = 8,
    Softmax = 9,
    Concatenation = 10,
    ResizeBilinear = 15,
    Reshape = 17,
    Reducer = 27,
    ResizeNearestNeighbor = 74,
    LeakyRelu = 75,
};

// ActivationFunctionType, Padding and TensorType values.
enum Fused : int8_t { kFusedNone = 0, kFusedRelu = 1, kFusedRelu6 = 3 };
enum Padding : int8_t { kSame = 0, kValid = 1 };
enum TensorType : int8_t { kFloat32 = 0, kInt32 = 2, kInt8 = 9 };

// A tensor's QuantizationParameters: one scale and zero point, or one per index of `dimension`.
struct TQuant {
    std::vector<float> scale;
    std::vector<int64_t> zeroPoint;
    int32_t dimension = 0;
};

struct TTensor {
    std::vector<int32_t> shape;      // batch 1
    std::vector<int32_t> signature;  // batch -1
    int8_t type = kFloat32;
    uint32_t buffer = 0;             // 0: the empty buffer (a computed tensor)
    std::string name;
    std::optional<TQuant> quant;
};

// The range of a product of two ranges (interval arithmetic).
ValueRange product(ValueRange a, ValueRange b) {
    const float c[] = {a.min * b.min, a.min * b.max, a.max * b.min, a.max * b.max};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

struct TOp {
    Op code;
    std::vector<int32_t> inputs, outputs;
    Opt optType = Opt::None;
    // Writes the options table; called while serialising, before the operator's own table.
    std::function<fb::uoffset_t(fb::FlatBufferBuilder&)> options;
};

// Builds one options table from (slot, writer) pairs.
template <typename F> fb::uoffset_t table(fb::FlatBufferBuilder& b, F fields) {
    const auto start = b.StartTable();
    fields(b);
    return b.EndTable(start);
}

Error unsupported(const std::string& node, const std::string& what, const std::string& why) {
    return Error(ErrorCode::Unsupported, "node \"" + node + "\" (" + what + ") cannot be exported to TensorFlow Lite: " + why)
        .withNode(node)
        .with("what", what);
}

class TfliteWriter {
public:
    // `quant`: the full-integer parameters of every value, or null for a float model.
    TfliteWriter(const ops::ModelInfo& m, const exec::ParamStore& p, const Int8Quantization* quant, bool int8Io)
        : m_model(m), m_params(p), m_q(quant), m_int8Io(quant && int8Io) {
        m_value.assign(m.graph.nodes.size(), -1);
        m_buffers.emplace_back();  // buffer 0: empty, by convention
    }

    Result<std::string> run(const ModelMetadata& meta) {
        for (int i : m_model.order) KILN_TRY(emit(i));
        std::vector<int32_t> inputs, outputs;
        for (int i : m_model.inputs) inputs.push_back(int8() ? m_floatInput[i] : m_value[static_cast<size_t>(i)]);
        for (int o : m_model.outputs) {
            int32_t t = m_value[static_cast<size_t>(o)];
            if (t < 0) return unsupported(gnode(o).name, gnode(o).op, "a loss cannot be a model output");
            const std::string& name = gnode(o).name;
            if (info(o).def->kind == OpKind::Input) {
                // A model input that is also an output is one tensor in both lists, as TensorFlow
                // Lite's converter writes it; a copy would need a second tensor of the same name.
                outputs.push_back(int8() ? m_floatInput[o] : t);
                continue;
            }
            if (int8() && !m_int8Io) {
                // Float outputs: the int8 value is dequantised into a tensor with the node's name.
                TTensor f = m_tensors[static_cast<size_t>(t)];
                f.type = kFloat32;
                f.quant.reset();
                f.name = name;
                auto& q = m_tensors[static_cast<size_t>(t)];
                if (q.name == name) q.name += "/int8";
                m_tensors.push_back(std::move(f));
                t = add(Op::Dequantize, {t}, static_cast<int32_t>(m_tensors.size() - 1));
            } else if (m_tensors[static_cast<size_t>(t)].name != name) {
                // The value of another node (a Dropout passes its input on): a copy under the
                // output's own name, so that every output is found by the name Kiln gives it.
                std::vector<int32_t> target = dims32(info(o).output.dims());
                target[0] = -1;
                t = reshape(t, target, info(o).output, name);
            }
            outputs.push_back(t);
        }
        if (int8()) KILN_TRY(checkIntegerOnly());
        return serialise(inputs, outputs, meta);
    }

private:
    const Node& gnode(int i) const { return m_model.graph.nodes[static_cast<size_t>(i)]; }
    const ops::NodeInfo& info(int i) const { return m_model.nodes[static_cast<size_t>(i)]; }
    const Tensor& param(int node, size_t k) const {
        return m_params.params()[static_cast<size_t>(m_params.index(node, k))].value;
    }

    static std::vector<int32_t> dims32(const std::vector<int64_t>& d) { return {d.begin(), d.end()}; }

    bool int8() const { return m_q != nullptr; }
    // Int8 with per-tensor parameters p.
    void quantize(int32_t t, QuantParams p) {
        auto& tensor = m_tensors[static_cast<size_t>(t)];
        tensor.type = kInt8;
        tensor.quant = TQuant{{p.scale}, {p.zeroPoint}, 0};
    }
    QuantParams paramsOf(int32_t t) const {
        const auto& q = m_tensors[static_cast<size_t>(t)].quant;
        return q ? QuantParams{q->scale[0], static_cast<int32_t>(q->zeroPoint[0])} : QuantParams{};
    }
    ValueRange rangeOf(int32_t t) const { return representable(paramsOf(t)); }

    // A computed tensor of `shape` (batch first, -1): float, or in a full-integer model int8 with
    // the parameters of the value `name` when the quantisation has them (else the caller's).
    int32_t activation(const Shape& shape, const std::string& name) {
        TTensor t;
        for (int64_t d : shape.dims()) {
            t.signature.push_back(static_cast<int32_t>(d));
            t.shape.push_back(static_cast<int32_t>(d == Shape::kBatch ? 1 : d));
        }
        t.name = name;
        m_tensors.push_back(std::move(t));
        const auto id = static_cast<int32_t>(m_tensors.size() - 1);
        if (int8())
            if (auto it = m_q->values.find(name); it != m_q->values.end()) quantize(id, it->second);
        return id;
    }
    // An intermediate tensor of a node's decomposition, int8 over `range` in a full-integer model.
    int32_t intermediate(const Shape& shape, const std::string& name, ValueRange range) {
        const int32_t t = activation(shape, name);
        if (int8()) quantize(t, activationParams(range));
        return t;
    }
    int32_t intermediate(const Shape& shape, const std::string& name, QuantParams p) {
        const int32_t t = activation(shape, name);
        if (int8()) quantize(t, p);
        return t;
    }
    // Every tensor between the model's float inputs and outputs must be int8 (or an int32
    // constant or bias); a float one would make TFLite run that operator in float.
    Status checkIntegerOnly() const {
        for (const auto& op : m_ops) {
            if (op.code == Op::Quantize && op.inputs.size() == 1 && m_tensors[static_cast<size_t>(op.inputs[0])].type == kFloat32) continue;
            if (op.code == Op::Dequantize) continue;
            for (const auto& list : {op.inputs, op.outputs})
                for (int32_t t : list)
                    if (m_tensors[static_cast<size_t>(t)].type == kFloat32)
                        return Error(ErrorCode::Internal, "tensor \"" + m_tensors[static_cast<size_t>(t)].name +
                                                              "\" of the int8 TensorFlow Lite model has no quantisation");
        }
        return {};
    }
    int32_t constant(const std::string& name, const std::vector<int32_t>& shape, const void* data, size_t bytes, int8_t type) {
        m_buffers.emplace_back(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
        TTensor t;
        t.shape = shape;
        t.signature = shape;
        t.type = type;
        t.buffer = static_cast<uint32_t>(m_buffers.size() - 1);
        t.name = name;
        m_tensors.push_back(std::move(t));
        return static_cast<int32_t>(m_tensors.size() - 1);
    }
    // A float constant operand; in a full-integer model int8 on the given parameters, or on its own
    // range (widened to hold 0) when none are given.
    int32_t floats(const std::string& name, const std::vector<int32_t>& shape, const std::vector<float>& v,
                   std::optional<QuantParams> with = std::nullopt) {
        if (!int8()) return constant(name, shape, v.data(), v.size() * sizeof(float), kFloat32);
        QuantParams p;
        if (with) p = *with;
        else {
            auto [lo, hi] = std::minmax_element(v.begin(), v.end());
            p = activationParams({*lo, *hi});
        }
        std::vector<int8_t> q(v.size());
        for (size_t e = 0; e < v.size(); ++e)
            q[e] = static_cast<int8_t>(std::clamp(std::nearbyint(v[e] / p.scale) + static_cast<float>(p.zeroPoint), -128.0f, 127.0f));
        const int32_t t = constant(name, shape, q.data(), q.size(), kInt8);
        quantize(t, p);
        return t;
    }
    int32_t ints(const std::string& name, const std::vector<int32_t>& v) {
        return constant(name, {static_cast<int32_t>(v.size())}, v.data(), v.size() * sizeof(int32_t), kInt32);
    }
    int32_t scalar(const std::string& name, float v, std::optional<QuantParams> with = std::nullopt) {
        return floats(name, {1}, {v}, with);
    }

    int32_t add(Op code, std::vector<int32_t> in, int32_t out, Opt opt = Opt::None,
                std::function<fb::uoffset_t(fb::FlatBufferBuilder&)> options = {}) {
        m_ops.push_back({code, std::move(in), {out}, opt, std::move(options)});
        return out;
    }
    int32_t in(int node, size_t k) const { return m_value[static_cast<size_t>(info(node).inputs[k])]; }

    // The node's activation attribute: fused into the operator where TFLite can, else a
    // separate operator after it. Returns the fused code or -1 when another operator follows.
    Result<int> fusedCode(const std::string& act, const std::string& node, const std::string& op) {
        if (act == "linear") return int(kFusedNone);
        if (act == "relu") return int(kFusedRelu);
        if (act == "relu6") return int(kFusedRelu6);
        // TFLite's kernels clamp fused activations to a range, which tanh is not: its own operator.
        if (act == "tanh" || act == "sigmoid" || act == "softmax" || act == "gelu") return -1;
        return unsupported(node, op, "activation \"" + act + "\" has no TensorFlow Lite operator");
    }
    Status trailingActivation(const std::string& act, int32_t pre, int32_t out, const std::string& node, bool approximateGelu) {
        if (act == "sigmoid") add(Op::Logistic, {pre}, out);
        else if (act == "tanh") add(Op::Tanh, {pre}, out);
        else if (act == "softmax") add(Op::Softmax, {pre}, out, Opt::Softmax, softmaxOptions());
        else if (act == "gelu") {
            if (approximateGelu) return unsupported(node, "GELU", "only the exact (erf) form is exported");
            add(Op::Gelu, {pre}, out);
        }
        return {};
    }
    static std::function<fb::uoffset_t(fb::FlatBufferBuilder&)> softmaxOptions() {
        return [](fb::FlatBufferBuilder& b) { return table(b, [](auto& t) { t.template AddElement<float>(slot(0), 1.0f, 0.0f); }); };
    }

    // Per-channel scale and shift of an inference-mode batch normalisation.
    std::pair<std::vector<float>, std::vector<float>> bnAffine(int bn) const {
        const Tensor& gamma = param(bn, 0);
        const Tensor& beta = param(bn, 1);
        const Tensor& mean = param(bn, 2);
        const Tensor& var = param(bn, 3);
        const double eps = info(bn).attrs.getFloat("epsilon");
        const int64_t c = gamma.numel();
        std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
        for (int64_t k = 0; k < c; ++k) {
            const double s = gamma.data<float>()[k] / std::sqrt(static_cast<double>(var.data<float>()[k]) + eps);
            scale[static_cast<size_t>(k)] = static_cast<float>(s);
            shift[static_cast<size_t>(k)] = static_cast<float>(beta.data<float>()[k] - mean.data<float>()[k] * s);
        }
        return {scale, shift};
    }

    // Dense, Conv2D and DepthwiseConv2D: weights in TFLite's layout with `channels` output
    // channels innermost-last as given by `outChannel(flat index)`, an optional bias, and a
    // following batch normalisation folded in.
    Status weighted(int i, OpKind kind) {
        const auto& node = gnode(i);
        const auto& a = info(i).attrs;
        const std::string act = a.getString("activation");
        KILN_ASSIGN(int fused, fusedCode(act, node.name, node.op));
        const Tensor& w = param(i, 0);
        const bool useBias = a.getBool("use_bias");
        std::vector<float> weights;
        std::vector<int32_t> wshape;
        int64_t channels = 0;
        // Index of the output channel of each weight, in TFLite's layout.
        std::function<int64_t(size_t)> channelOf;
        const float* src = w.data<float>();
        if (kind == OpKind::Dense) {
            if (info(i).inputShapes[0].rank() != 2)
                return unsupported(node.name, node.op, "Dense on a rank-" + std::to_string(info(i).inputShapes[0].rank()) + " input");
            const int64_t nin = w.shape()[0], nout = w.shape()[1];
            channels = nout;
            weights.resize(static_cast<size_t>(w.numel()));
            for (int64_t o = 0; o < nout; ++o)
                for (int64_t k = 0; k < nin; ++k) weights[static_cast<size_t>(o * nin + k)] = src[k * nout + o];
            wshape = {static_cast<int32_t>(nout), static_cast<int32_t>(nin)};
            channelOf = [nin](size_t e) { return static_cast<int64_t>(e) / nin; };
        } else if (kind == OpKind::Conv2D) {
            if (a.getInt("groups") != 1)
                return unsupported(node.name, node.op, "grouped convolutions (groups " + std::to_string(a.getInt("groups")) +
                                                            ") are not exported");
            const int64_t kh = w.shape()[0], kw = w.shape()[1], ci = w.shape()[2], co = w.shape()[3];
            channels = co;
            weights.resize(static_cast<size_t>(w.numel()));
            // HWIO -> OHWI
            for (int64_t o = 0; o < co; ++o)
                for (int64_t y = 0; y < kh; ++y)
                    for (int64_t x = 0; x < kw; ++x)
                        for (int64_t c = 0; c < ci; ++c)
                            weights[static_cast<size_t>(((o * kh + y) * kw + x) * ci + c)] = src[((y * kw + x) * ci + c) * co + o];
            wshape = {static_cast<int32_t>(co), static_cast<int32_t>(kh), static_cast<int32_t>(kw), static_cast<int32_t>(ci)};
            const int64_t per = kh * kw * ci;
            channelOf = [per](size_t e) { return static_cast<int64_t>(e) / per; };
        } else {
            // [kh, kw, C, m] is already [1, kh, kw, C·m] with output channel c·m + j.
            const int64_t kh = w.shape()[0], kw = w.shape()[1];
            channels = w.shape()[2] * w.shape()[3];
            weights.assign(src, src + w.numel());
            wshape = {1, static_cast<int32_t>(kh), static_cast<int32_t>(kw), static_cast<int32_t>(channels)};
            channelOf = [channels](size_t e) { return static_cast<int64_t>(e) % channels; };
        }
        std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
        if (useBias) std::memcpy(bias.data(), param(i, 1).data<float>(), bias.size() * sizeof(float));
        int produced = i;  // the node whose value the operator's output is
        if (const int bn = foldedBatchNorm(m_model, i); bn >= 0) {
            auto [scale, shift] = bnAffine(bn);
            for (size_t e = 0; e < weights.size(); ++e) weights[e] *= scale[static_cast<size_t>(channelOf(e))];
            for (size_t c = 0; c < bias.size(); ++c) bias[c] = bias[c] * scale[c] + shift[c];
            m_folded.insert(bn);
            produced = bn;
        }
        const int32_t x = in(i, 0);
        int32_t wt = 0, bt = 0;
        if (int8()) {
            // Symmetric int8 weights per output channel (the quantised dimension: 0 of [O, ...],
            // 3 of the depthwise [1, kh, kw, C·m]) and int32 biases on input scale × weight scale.
            std::vector<float> maxAbs(static_cast<size_t>(m_q->perChannel ? channels : 1), 0.0f);
            for (size_t e = 0; e < weights.size(); ++e) {
                float& m = maxAbs[m_q->perChannel ? static_cast<size_t>(channelOf(e)) : 0];
                m = std::max(m, std::fabs(weights[e]));
            }
            std::vector<float> scales;
            const int limit = weightLimit(m_q->scheme);
            for (float m : maxAbs) scales.push_back(symmetricScale(m, limit));
            auto scaleOf = [&](int64_t c) { return scales[m_q->perChannel ? static_cast<size_t>(c) : 0]; };
            std::vector<int8_t> qw(weights.size());
            for (size_t e = 0; e < weights.size(); ++e) qw[e] = quantizeSymmetric(weights[e], scaleOf(channelOf(e)), limit);
            wt = constant(node.name + "/kernel", wshape, qw.data(), qw.size(), kInt8);
            const int32_t dim = kind == OpKind::DepthwiseConv2D ? 3 : 0;
            m_tensors[static_cast<size_t>(wt)].quant = TQuant{scales, std::vector<int64_t>(scales.size(), 0), dim};
            const double inScale = paramsOf(x).scale;
            std::vector<int32_t> qb(static_cast<size_t>(channels));
            std::vector<float> biasScales(static_cast<size_t>(channels));
            for (int64_t c = 0; c < channels; ++c) {
                const double bs = inScale * scaleOf(c);
                biasScales[static_cast<size_t>(c)] = static_cast<float>(bs);
                const double v = std::nearbyint(static_cast<double>(bias[static_cast<size_t>(c)]) / bs);
                qb[static_cast<size_t>(c)] = static_cast<int32_t>(std::clamp(v, -2147483647.0, 2147483647.0));
            }
            bt = constant(node.name + "/bias", {static_cast<int32_t>(channels)}, qb.data(), qb.size() * sizeof(int32_t), kInt32);
            m_tensors[static_cast<size_t>(bt)].quant = TQuant{biasScales, std::vector<int64_t>(biasScales.size(), 0), 0};
        } else {
            wt = floats(node.name + "/kernel", wshape, weights);
            bt = floats(node.name + "/bias", {static_cast<int32_t>(channels)}, bias);
        }
        const std::string outName = gnode(produced).name;
        const int32_t out = activation(info(produced).output, outName);
        const int32_t pre = fused >= 0 ? out : activation(info(i).output, node.name + kPreActivation);
        const int8_t f = static_cast<int8_t>(fused >= 0 ? fused : kFusedNone);
        if (kind == OpKind::Dense) {
            add(Op::FullyConnected, {x, wt, bt}, pre, Opt::FullyConnected, [f](fb::FlatBufferBuilder& b) {
                return table(b, [f](auto& t) {
                    t.template AddElement<int8_t>(slot(0), f, 0);
                    t.template AddElement<int8_t>(slot(1), 0, 0);  // weights_format DEFAULT
                    t.template AddElement<uint8_t>(slot(2), 0, 0); // keep_num_dims false
                });
            });
        } else {
            const auto& s = a.getInts("strides");
            const auto& d = a.getInts("dilation_rate");
            const std::string padding = a.getString("padding");
            if (padding != "same" && padding != "valid") return unsupported(node.name, node.op, "padding \"" + padding + "\"");
            const int8_t pad = padding == "same" ? kSame : kValid;
            const int32_t sh = static_cast<int32_t>(s[0]), sw = static_cast<int32_t>(s[1]);
            const int32_t dh = static_cast<int32_t>(d[0]), dw = static_cast<int32_t>(d[1]);
            if (kind == OpKind::Conv2D) {
                add(Op::Conv2D, {x, wt, bt}, pre, Opt::Conv2D, [=](fb::FlatBufferBuilder& b) {
                    return table(b, [=](auto& t) {
                        t.template AddElement<int8_t>(slot(0), pad, 0);
                        t.template AddElement<int32_t>(slot(1), sw, 0);
                        t.template AddElement<int32_t>(slot(2), sh, 0);
                        t.template AddElement<int8_t>(slot(3), f, 0);
                        t.template AddElement<int32_t>(slot(4), dw, 1);
                        t.template AddElement<int32_t>(slot(5), dh, 1);
                    });
                });
            } else {
                const int32_t mult = static_cast<int32_t>(w.shape()[3]);
                add(Op::DepthwiseConv2D, {x, wt, bt}, pre, Opt::DepthwiseConv2D, [=](fb::FlatBufferBuilder& b) {
                    return table(b, [=](auto& t) {
                        t.template AddElement<int8_t>(slot(0), pad, 0);
                        t.template AddElement<int32_t>(slot(1), sw, 0);
                        t.template AddElement<int32_t>(slot(2), sh, 0);
                        t.template AddElement<int32_t>(slot(3), mult, 0);
                        t.template AddElement<int8_t>(slot(4), f, 0);
                        t.template AddElement<int32_t>(slot(5), dw, 1);
                        t.template AddElement<int32_t>(slot(6), dh, 1);
                    });
                });
            }
        }
        if (fused < 0) KILN_TRY(trailingActivation(act, pre, out, node.name, false));
        m_value[static_cast<size_t>(i)] = out;
        if (produced != i) m_value[static_cast<size_t>(produced)] = out;
        return {};
    }

    // An elementwise binary operator; a rank-2 [N, C] operand meeting a rank-4 value is
    // reshaped to [N, 1, 1, C] first (TFLite broadcasts from the last axis, like NumPy).
    int32_t broadcastable(int node, size_t k) {
        const Shape& s = info(node).inputShapes[k];
        const Shape& out = info(node).output;
        int32_t t = in(node, k);
        if (s.rank() == 2 && out.rank() > 2) {
            std::vector<int32_t> target{-1};
            for (int d = 1; d < out.rank() - 1; ++d) target.push_back(1);
            target.push_back(static_cast<int32_t>(s[1]));
            Shape shaped(std::vector<int64_t>(target.begin(), target.end()));
            shaped[0] = Shape::kBatch;
            const std::string name = gnode(node).name + "/broadcast" + std::to_string(k);
            t = reshape(t, target, shaped, name);
        }
        return t;
    }
    int32_t reshape(int32_t x, const std::vector<int32_t>& target, const Shape& shape, const std::string& name) {
        const int32_t shapeT = ints(name + "/shape", target);
        const int32_t y = activation(shape, name);
        if (int8() && !m_tensors[static_cast<size_t>(y)].quant) quantize(y, paramsOf(x));  // same values, same grid
        return add(Op::Reshape, {x, shapeT}, y, Opt::Reshape, [target](fb::FlatBufferBuilder& b) {
            const auto v = b.CreateVector(target);
            return table(b, [&](auto& t) { t.AddOffset(slot(0), v); });
        });
    }

    Status emit(int i) {
        const auto& node = gnode(i);
        const auto& ni = info(i);
        const auto& a = ni.attrs;
        const OpKind kind = ni.def->kind;
        auto out = [&]() { return m_value[static_cast<size_t>(i)] = activation(ni.output, node.name); };
        if (ops::isLoss(kind)) return {};  // left out, like the other exporters
        for (int p : ni.inputs)
            if (m_value[static_cast<size_t>(p)] < 0 && !ops::isLoss(info(p).def->kind))
                return Error(ErrorCode::Internal, "node \"" + node.name + "\" reads a value that was not exported").withNode(node.name);
        for (int p : ni.inputs)
            if (ops::isLoss(info(p).def->kind)) return unsupported(node.name, node.op, "it reads a loss");
        if (m_folded.count(i)) return {};
        switch (kind) {
        case OpKind::Input:
            if (a.getString("dtype") == "int32") return unsupported(node.name, node.op, "integer inputs are not exported");
            out();
            if (m_int8Io) {
                // The int8 tensor is the model input, under the node's name.
                m_floatInput[i] = m_value[static_cast<size_t>(i)];
            } else if (int8()) {
                // Float input, quantised by the model's first operator.
                const int32_t q = m_value[static_cast<size_t>(i)];
                TTensor f = m_tensors[static_cast<size_t>(q)];
                f.type = kFloat32;
                f.quant.reset();
                m_tensors[static_cast<size_t>(q)].name += "/int8";
                m_tensors.push_back(std::move(f));
                m_floatInput[i] = static_cast<int32_t>(m_tensors.size() - 1);
                add(Op::Quantize, {m_floatInput[i]}, q);
            }
            return {};
        case OpKind::Dense:
        case OpKind::Conv2D:
        case OpKind::DepthwiseConv2D:
            return weighted(i, kind);
        case OpKind::MaxPooling2D:
        case OpKind::AveragePooling2D: {
            const auto& k = a.getInts("pool_size");
            auto s = a.getInts("strides");
            if (s.empty()) s = k;
            const int8_t pad = a.getString("padding") == "same" ? kSame : kValid;
            const int32_t fh = static_cast<int32_t>(k[0]), fw = static_cast<int32_t>(k[1]);
            const int32_t sh = static_cast<int32_t>(s[0]), sw = static_cast<int32_t>(s[1]);
            add(kind == OpKind::MaxPooling2D ? Op::MaxPool2D : Op::AveragePool2D, {in(i, 0)}, out(), Opt::Pool2D,
                [=](fb::FlatBufferBuilder& b) {
                    return table(b, [=](auto& t) {
                        t.template AddElement<int8_t>(slot(0), pad, 0);
                        t.template AddElement<int32_t>(slot(1), sw, 0);
                        t.template AddElement<int32_t>(slot(2), sh, 0);
                        t.template AddElement<int32_t>(slot(3), fw, 0);
                        t.template AddElement<int32_t>(slot(4), fh, 0);
                        t.template AddElement<int8_t>(slot(5), kFusedNone, 0);
                    });
                });
            return {};
        }
        case OpKind::GlobalAveragePooling2D:
        case OpKind::GlobalMaxPooling2D: {
            const int32_t axes = ints(node.name + "/axes", {1, 2});
            add(kind == OpKind::GlobalAveragePooling2D ? Op::Mean : Op::ReduceMax, {in(i, 0), axes}, out(), Opt::Reducer,
                [](fb::FlatBufferBuilder& b) { return table(b, [](auto& t) { t.template AddElement<uint8_t>(slot(0), 0, 0); }); });
            return {};
        }
        case OpKind::GlobalAveragePooling1D: {  // [N,T,D]: the mean over the positions
            const int32_t axes = ints(node.name + "/axes", {1});
            const bool keep = a.getBool("keepdims");
            add(Op::Mean, {in(i, 0), axes}, out(), Opt::Reducer, [keep](fb::FlatBufferBuilder& b) {
                return table(b, [keep](auto& t) { t.template AddElement<uint8_t>(slot(0), keep ? 1 : 0, 0); });
            });
            return {};
        }
        case OpKind::ZeroPadding2D: {
            const auto& p = a.getInts("padding");  // top, bottom, left, right
            const int32_t pads = constant(node.name + "/paddings", {4, 2},
                                          std::vector<int32_t>{0, 0, static_cast<int32_t>(p[0]), static_cast<int32_t>(p[1]),
                                                               static_cast<int32_t>(p[2]), static_cast<int32_t>(p[3]), 0, 0}
                                              .data(),
                                          8 * sizeof(int32_t), kInt32);
            add(Op::Pad, {in(i, 0), pads}, out());
            return {};
        }
        case OpKind::UpSampling2D: {
            const int32_t size = ints(node.name + "/size", {static_cast<int32_t>(ni.output[1]), static_cast<int32_t>(ni.output[2])});
            if (a.getString("interpolation") == "bilinear")
                add(Op::ResizeBilinear, {in(i, 0), size}, out(), Opt::ResizeBilinear, [](fb::FlatBufferBuilder& b) {
                    return table(b, [](auto& t) {
                        t.template AddElement<uint8_t>(slot(2), 0, 0);  // align_corners
                        t.template AddElement<uint8_t>(slot(3), 1, 0);  // half_pixel_centers
                    });
                });
            else
                add(Op::ResizeNearestNeighbor, {in(i, 0), size}, out(), Opt::ResizeNearestNeighbor, [](fb::FlatBufferBuilder& b) {
                    return table(b, [](auto& t) {
                        t.template AddElement<uint8_t>(slot(0), 0, 0);
                        t.template AddElement<uint8_t>(slot(1), 0, 0);
                    });
                });
            return {};
        }
        case OpKind::Rescaling: {
            const auto scale = static_cast<float>(a.getFloat("scale"));
            const int32_t scaled = add(Op::Mul, {in(i, 0), scalar(node.name + "/scale", scale)},
                                       intermediate(ni.output, node.name + "/scaled", product(rangeOf(in(i, 0)), {scale, scale})));
            add(Op::Add, {scaled, scalar(node.name + "/offset", static_cast<float>(a.getFloat("offset")))}, out());
            return {};
        }
        case OpKind::BatchNormalization: {
            auto [scale, shift] = bnAffine(i);
            const int32_t c = static_cast<int32_t>(scale.size());
            auto [smin, smax] = std::minmax_element(scale.begin(), scale.end());
            const int32_t scaled = add(Op::Mul, {in(i, 0), floats(node.name + "/scale", {c}, scale)},
                                       intermediate(ni.output, node.name + "/scaled", product(rangeOf(in(i, 0)), {*smin, *smax})));
            add(Op::Add, {scaled, floats(node.name + "/shift", {c}, shift)}, out());
            return {};
        }
        case OpKind::Normalization: {
            // Keras's Normalization: (x - mean) / max(sqrt(variance), 1e-7) as x·scale + shift.
            const Tensor& mean = param(i, 0);
            const Tensor& var = param(i, 1);
            const int32_t c = static_cast<int32_t>(var.numel());
            std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
            for (int32_t k = 0; k < c; ++k) {
                scale[static_cast<size_t>(k)] = 1.0f / std::max(std::sqrt(var.data<float>()[k]), 1e-7f);
                shift[static_cast<size_t>(k)] = -mean.data<float>()[k] * scale[static_cast<size_t>(k)];
            }
            auto [smin, smax] = std::minmax_element(scale.begin(), scale.end());
            const int32_t scaled = add(Op::Mul, {in(i, 0), floats(node.name + "/scale", {c}, scale)},
                                       intermediate(ni.output, node.name + "/scaled", product(rangeOf(in(i, 0)), {*smin, *smax})));
            add(Op::Add, {scaled, floats(node.name + "/shift", {c}, shift)}, out());
            return {};
        }
        case OpKind::Dropout:
            m_value[static_cast<size_t>(i)] = in(i, 0);
            return {};
        case OpKind::Flatten:
        case OpKind::Reshape: {
            std::vector<int32_t> target = dims32(ni.output.dims());
            target[0] = -1;
            m_value[static_cast<size_t>(i)] = reshape(in(i, 0), target, ni.output, node.name);
            return {};
        }
        case OpKind::Concatenate: {
            int32_t axis = static_cast<int32_t>(a.getInt("axis"));
            if (axis < 0) axis += ni.output.rank();
            const int32_t y = out();
            std::vector<int32_t> ins;
            for (size_t k = 0; k < ni.inputs.size(); ++k) {
                int32_t x = in(i, k);
                // TFLite's int8 concatenation copies values: an input on another grid is
                // requantised onto the output's first.
                if (int8() && (paramsOf(x).scale != paramsOf(y).scale || paramsOf(x).zeroPoint != paramsOf(y).zeroPoint))
                    x = add(Op::Quantize, {x},
                            intermediate(info(i).inputShapes[k], node.name + "/requantized" + std::to_string(k), paramsOf(y)));
                ins.push_back(x);
            }
            add(Op::Concatenation, ins, y, Opt::Concatenation, [axis](fb::FlatBufferBuilder& b) {
                return table(b, [axis](auto& t) {
                    t.template AddElement<int32_t>(slot(0), axis, 0);
                    t.template AddElement<int8_t>(slot(1), kFusedNone, 0);
                });
            });
            return {};
        }
        case OpKind::Add:
        case OpKind::Subtract:
        case OpKind::Multiply: {
            const Op op = kind == OpKind::Add ? Op::Add : kind == OpKind::Subtract ? Op::Sub : Op::Mul;
            int32_t acc = broadcastable(i, 0);
            for (size_t k = 1; k < ni.inputs.size(); ++k) {
                const bool last = k + 1 == ni.inputs.size();
                const int32_t rhs = broadcastable(i, k);
                int32_t dst = 0;
                if (last) dst = out();
                else {
                    // A partial result of three or more operands: its range from the operands'.
                    const ValueRange x = rangeOf(acc), y = rangeOf(rhs);
                    const ValueRange r = op == Op::Add   ? ValueRange{x.min + y.min, x.max + y.max}
                                         : op == Op::Sub ? ValueRange{x.min - y.max, x.max - y.min}
                                                         : product(x, y);
                    dst = intermediate(ni.output, node.name + "/part" + std::to_string(k), r);
                }
                acc = add(op, {acc, rhs}, dst);
            }
            return {};
        }
        case OpKind::ReLU:
            add(Op::Relu, {in(i, 0)}, out());
            return {};
        case OpKind::ReLU6:
            add(Op::Relu6, {in(i, 0)}, out());
            return {};
        case OpKind::Sigmoid:
            add(Op::Logistic, {in(i, 0)}, out());
            return {};
        case OpKind::Tanh:
            add(Op::Tanh, {in(i, 0)}, out());
            return {};
        case OpKind::HardSwish:
            add(Op::HardSwish, {in(i, 0)}, out());
            return {};
        case OpKind::GELU:
            return trailingActivation("gelu", in(i, 0), out(), node.name, a.getBool("approximate"));
        case OpKind::LeakyReLU: {
            const float alpha = static_cast<float>(a.getFloat("negative_slope"));
            add(Op::LeakyRelu, {in(i, 0)}, out(), Opt::LeakyRelu, [alpha](fb::FlatBufferBuilder& b) {
                return table(b, [alpha](auto& t) { t.template AddElement<float>(slot(0), alpha, 0.0f); });
            });
            return {};
        }
        case OpKind::SiLU: {
            const int32_t s = add(Op::Logistic, {in(i, 0)}, intermediate(ni.output, node.name + "/sigmoid", kInt8UnitParams));
            add(Op::Mul, {in(i, 0), s}, out());
            return {};
        }
        case OpKind::HardSigmoid: {
            // max(0, min(1, x/6 + 1/2)) = relu6(x + 3) / 6
            const ValueRange x = rangeOf(in(i, 0));
            const ValueRange sr{x.min + 3.0f, x.max + 3.0f};
            const int32_t shifted = add(Op::Add, {in(i, 0), scalar(node.name + "/three", 3.0f)}, intermediate(ni.output, node.name + "/shifted", sr));
            const int32_t clipped = add(Op::Relu6, {shifted},
                                        intermediate(ni.output, node.name + "/relu6",
                                                     ValueRange{std::clamp(sr.min, 0.0f, 6.0f), std::clamp(sr.max, 0.0f, 6.0f)}));
            add(Op::Mul, {clipped, scalar(node.name + "/sixth", 1.0f / 6.0f)}, out());
            return {};
        }
        case OpKind::Clip: {
            // TFLite's int8 MAXIMUM and MINIMUM compare raw values: bounds and results share the
            // input's grid.
            const QuantParams p = paramsOf(in(i, 0));
            const int32_t low = add(Op::Maximum, {in(i, 0), scalar(node.name + "/min", static_cast<float>(a.getFloat("min")), p)},
                                    intermediate(ni.output, node.name + "/lower", p));
            add(Op::Minimum, {low, scalar(node.name + "/max", static_cast<float>(a.getFloat("max")), p)}, out());
            return {};
        }
        case OpKind::Softmax:
            add(Op::Softmax, {in(i, 0)}, out(), Opt::Softmax, softmaxOptions());
            return {};
        default:
            break;
        }
        return unsupported(node.name, node.op, "TensorFlow Lite has no built-in operator Kiln maps it to");
    }

    Result<std::string> serialise(const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs, const ModelMetadata& meta) {
        fb::FlatBufferBuilder b(1 << 16);
        b.ForceDefaults(true);
        // Buffers (constant data aligned to 16 bytes, as TFLite's converter writes them).
        std::vector<fb::Offset<void>> buffers;
        for (const auto& data : m_buffers) {
            fb::uoffset_t vec = 0;
            if (!data.empty()) {
                b.ForceVectorAlignment(data.size(), 1, 16);
                vec = b.CreateVector(data).o;
            }
            const auto start = b.StartTable();
            if (vec) b.AddOffset(slot(0), fb::Offset<void>(vec));
            buffers.emplace_back(b.EndTable(start));
        }
        std::vector<fb::Offset<void>> tensors;
        for (const auto& t : m_tensors) {
            const auto shape = b.CreateVector(t.shape);
            const auto sig = b.CreateVector(t.signature);
            const auto name = b.CreateString(t.name);
            fb::uoffset_t quant = 0;
            if (t.quant) {
                // QuantizationParameters: scale (2), zero_point (3), quantized_dimension (6).
                const auto scale = b.CreateVector(t.quant->scale);
                const auto zeroPoint = b.CreateVector(t.quant->zeroPoint);
                const auto qs = b.StartTable();
                b.AddOffset(slot(2), scale);
                b.AddOffset(slot(3), zeroPoint);
                b.AddElement<int32_t>(slot(6), t.quant->dimension, 0);
                quant = b.EndTable(qs);
            }
            const auto start = b.StartTable();
            b.AddOffset(slot(0), shape);
            b.AddElement<int8_t>(slot(1), t.type, 0);
            b.AddElement<uint32_t>(slot(2), t.buffer, 0);
            b.AddOffset(slot(3), name);
            if (quant) b.AddOffset(slot(4), fb::Offset<void>(quant));
            b.AddOffset(slot(7), sig);
            tensors.emplace_back(b.EndTable(start));
        }
        // Operator codes, one per distinct operator.
        std::map<int32_t, uint32_t> codeIndex;
        std::vector<fb::Offset<void>> codes;
        for (const auto& op : m_ops) {
            const int32_t c = static_cast<int32_t>(op.code);
            if (codeIndex.count(c)) continue;
            codeIndex[c] = static_cast<uint32_t>(codes.size());
            const auto start = b.StartTable();
            // deprecated_builtin_code is a byte: codes past 127 put PLACEHOLDER_FOR_GREATER_OP_CODES (127) there.
            b.AddElement<int8_t>(slot(0), static_cast<int8_t>(c < 127 ? c : 127), 0);
            b.AddElement<int32_t>(slot(2), int8() ? int8Version(op.code) : 1, 1);  // version
            b.AddElement<int32_t>(slot(3), c, 0);
            codes.emplace_back(b.EndTable(start));
        }
        std::vector<fb::Offset<void>> operators;
        for (const auto& op : m_ops) {
            const auto ins = b.CreateVector(op.inputs);
            const auto outs = b.CreateVector(op.outputs);
            const fb::uoffset_t options = op.options ? op.options(b) : 0;
            const auto start = b.StartTable();
            b.AddElement<uint32_t>(slot(0), codeIndex[static_cast<int32_t>(op.code)], 0);
            b.AddOffset(slot(1), ins);
            b.AddOffset(slot(2), outs);
            b.AddElement<uint8_t>(slot(3), static_cast<uint8_t>(op.optType), 0);
            if (options) b.AddOffset(slot(4), fb::Offset<void>(options));
            operators.emplace_back(b.EndTable(start));
        }
        const auto tensorVec = b.CreateVector(tensors);
        const auto inVec = b.CreateVector(inputs);
        const auto outVec = b.CreateVector(outputs);
        const auto opVec = b.CreateVector(operators);
        const auto graphName = b.CreateString("main");
        auto start = b.StartTable();
        b.AddOffset(slot(0), tensorVec);
        b.AddOffset(slot(1), inVec);
        b.AddOffset(slot(2), outVec);
        b.AddOffset(slot(3), opVec);
        b.AddOffset(slot(4), graphName);
        const fb::Offset<void> subgraph(b.EndTable(start));

        const auto codeVec = b.CreateVector(codes);
        const auto subgraphs = b.CreateVector(std::vector<fb::Offset<void>>{subgraph});
        const auto description =
            b.CreateString(meta.name.empty() ? "Exported by Kiln " + meta.kilnVersion : "Kiln model " + meta.name + " (Kiln " + meta.kilnVersion + ")");
        const auto bufferVec = b.CreateVector(buffers);
        start = b.StartTable();
        b.AddElement<uint32_t>(slot(0), 3, 0);  // schema version
        b.AddOffset(slot(1), codeVec);
        b.AddOffset(slot(2), subgraphs);
        b.AddOffset(slot(3), description);
        b.AddOffset(slot(4), bufferVec);
        const fb::Offset<void> root(b.EndTable(start));
        b.Finish(root, "TFL3");
        return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
    }

    const ops::ModelInfo& m_model;
    const exec::ParamStore& m_params;
    std::vector<int32_t> m_value;  // node -> tensor, -1 for losses
    const Int8Quantization* m_q = nullptr;
    bool m_int8Io = false;  // full integer with int8 model inputs and outputs
    std::map<int, int32_t> m_floatInput;  // full integer: Input node → its model input tensor
    std::set<int> m_folded;         // batch normalisations folded into the operator before them
    std::vector<TTensor> m_tensors;
    std::vector<std::vector<uint8_t>> m_buffers;
    std::vector<TOp> m_ops;
};

}  // namespace

Result<std::string> exportTflite(const ops::ModelInfo& model, const exec::ParamStore& params, const ModelMetadata& meta,
                                 const Int8Quantization* quant, bool int8InputOutput) {
    KILN_TRY(ops::refusePlaceholders(model.graph, "export"));
    if (quant && quant->scheme != QuantScheme::FullInteger)
        return Error(ErrorCode::Internal, "an int8 TensorFlow Lite model needs full-integer quantisation parameters");
    TfliteWriter writer(model, params, quant, int8InputOutput);
    return writer.run(meta);
}

Status saveTflite(const std::string& path, const ops::ModelInfo& model, const exec::ParamStore& params,
                  const ModelMetadata& meta, const Int8Quantization* quant, bool int8InputOutput) {
    KILN_ASSIGN(std::string bytes, exportTflite(model, params, meta, quant, int8InputOutput));
    return writeFileAtomic(path, bytes);
}

}  // namespace kiln::engine::io
