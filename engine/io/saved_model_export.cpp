// SPDX-License-Identifier: Apache-2.0
// SavedModel export, encoded straight to the protobuf wire format (field numbers of
// tensorflow/core/protobuf/{saved_model,meta_graph}.proto and framework/{graph,node_def,
// attr_value,tensor,tensor_shape}.proto). Kiln is NHWC like TensorFlow, so convolution kernels
// (HWIO) and dense kernels ([in, out]) are written as they are.
#include "engine/io/saved_model_export.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "engine/io/project.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::io {
namespace {

using ops::OpKind;

enum TfType : int { DtFloat = 1, DtInt32 = 3 };

// A protobuf message being written: fields appended in any order.
class Pb {
public:
    const std::string& bytes() const { return m_b; }
    Pb& varint(int field, uint64_t v) {
        tag(field, 0);
        raw(v);
        return *this;
    }
    Pb& i64(int field, int64_t v) { return varint(field, static_cast<uint64_t>(v)); }
    Pb& boolean(int field, bool v) { return varint(field, v ? 1 : 0); }
    Pb& f32(int field, float v) {
        tag(field, 5);
        char b[4];
        std::memcpy(b, &v, 4);
        m_b.append(b, 4);
        return *this;
    }
    Pb& str(int field, std::string_view s) {
        tag(field, 2);
        raw(s.size());
        m_b.append(s.data(), s.size());
        return *this;
    }
    Pb& msg(int field, const Pb& m) { return str(field, m.m_b); }
    Pb& packed(int field, const std::vector<int64_t>& v) {
        Pb p;
        for (int64_t x : v) p.raw(static_cast<uint64_t>(x));
        return str(field, p.m_b);
    }
    // A map<string, Message> entry.
    Pb& mapEntry(int field, std::string_view key, const Pb& value) {
        Pb e;
        e.str(1, key).msg(2, value);
        return msg(field, e);
    }

private:
    void tag(int field, int wire) { raw(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire)); }
    void raw(uint64_t v) {
        while (v >= 0x80) {
            m_b.push_back(static_cast<char>(v | 0x80));
            v >>= 7;
        }
        m_b.push_back(static_cast<char>(v));
    }
    std::string m_b;
};

Pb shapeProto(const std::vector<int64_t>& dims) {
    Pb s;
    for (int64_t d : dims) s.msg(2, Pb().i64(1, d));
    return s;
}

Pb tensorProto(int dtype, const std::vector<int64_t>& dims, const void* data, size_t bytes) {
    Pb t;
    t.varint(1, static_cast<uint64_t>(dtype)).msg(2, shapeProto(dims));
    if (bytes) t.str(4, std::string_view(static_cast<const char*>(data), bytes));
    return t;
}

// AttrValue builders (field numbers of attr_value.proto).
Pb attrType(int t) { return Pb().varint(6, static_cast<uint64_t>(t)); }
Pb attrInt(int64_t v) { return Pb().i64(3, v); }
Pb attrFloat(float v) { return Pb().f32(4, v); }
Pb attrBool(bool v) { return Pb().boolean(5, v); }
Pb attrStr(std::string_view s) { return Pb().str(2, s); }
Pb attrInts(const std::vector<int64_t>& v) { return Pb().msg(1, Pb().packed(3, v)); }
Pb attrShape(const std::vector<int64_t>& dims) { return Pb().msg(7, shapeProto(dims)); }

class TfWriter {
public:
    TfWriter(const ops::ModelInfo& m, const exec::ParamStore& p) : m_model(m), m_params(p) {
        m_val.resize(m.graph.nodes.size());
    }

    Result<std::string> run(const ModelMetadata& meta) {
        for (int i : m_model.order) KILN_TRY(emit(i));
        Pb graph;
        for (const auto& n : m_nodes) graph.msg(1, n);
        graph.msg(4, Pb().i64(1, kTfGraphProducer).i64(2, 0));

        Pb sig;
        for (int i : m_model.inputs) {
            const auto& info = m_model.nodes[static_cast<size_t>(i)];
            int dt = info.attrs.getString("dtype") == "int32" ? DtInt32 : DtFloat;
            sig.mapEntry(1, m_model.graph.nodes[static_cast<size_t>(i)].name, tensorInfo(m_val[static_cast<size_t>(i)], dt, info.output));
        }
        for (int o : m_model.outputs) {
            if (ops::isLoss(m_model.nodes[static_cast<size_t>(o)].def->kind))
                return Error(ErrorCode::Unsupported, "a loss cannot be a model output of an exported model")
                    .withNode(m_model.graph.nodes[static_cast<size_t>(o)].name).with("what", "loss output");
            sig.mapEntry(2, m_model.graph.nodes[static_cast<size_t>(o)].name,
                         tensorInfo(m_val[static_cast<size_t>(o)], DtFloat, m_model.nodes[static_cast<size_t>(o)].output));
        }
        sig.str(3, kPredictMethod);

        Pb metaInfo;
        metaInfo.str(4, "serve");
        Pb metaGraph;
        metaGraph.msg(1, metaInfo).msg(2, graph).mapEntry(5, kServingSignature, sig);
        Pb saved;
        saved.i64(1, 1).msg(2, metaGraph);
        if (saved.bytes().size() > (size_t{1} << 31) - 1)
            return Error(ErrorCode::Unsupported, "the model is larger than 2 GB, the limit of saved_model.pb")
                .with("what", "model size");
        return saved.bytes();
    }

private:
    using Attrs = std::vector<std::pair<std::string, Pb>>;

    static Pb tensorInfo(const std::string& node, int dtype, const Shape& shape) {
        Pb t;
        t.str(1, node + ":0").varint(2, static_cast<uint64_t>(dtype)).msg(3, shapeProto(shape.dims()));
        return t;
    }

    std::string fresh(const std::string& base) {
        // TensorFlow node names: [A-Za-z0-9.][A-Za-z0-9_.\-/]*
        std::string name;
        for (char c : base) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/') ? c : '_';
        if (name.empty() || !(std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '.')) name = "n" + name;
        std::string out = name;
        for (int k = 1; m_used.count(out); ++k) out = name + "_" + std::to_string(k);
        m_used.insert(out);
        return out;
    }

    std::string node(const std::string& op, const std::string& base, const std::vector<std::string>& inputs, Attrs attrs) {
        std::string name = fresh(base);
        Pb n;
        n.str(1, name).str(2, op);
        for (const auto& s : inputs) n.str(3, s);
        for (auto& [k, v] : attrs) n.mapEntry(5, k, v);
        m_nodes.push_back(std::move(n));
        return name;
    }
    std::string constF(const std::string& base, const std::vector<int64_t>& dims, const float* data) {
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        return node("Const", base, {}, {{"dtype", attrType(DtFloat)},
                                        {"value", Pb().msg(8, tensorProto(DtFloat, dims, data, static_cast<size_t>(n) * 4))}});
    }
    std::string scalarF(const std::string& base, float v) { return constF(base, {}, &v); }
    // A depthwise kernel [kh, kw, C, m] (`w`, channels·multiplier floats per tap) as the filter
    // of a DepthwiseConv2dNative with dilations of 1: TensorFlow's CPU kernel refuses other
    // dilations (its oneDNN path, which only some CPUs get, takes them), so a dilated kernel is
    // written out with the taps it skips as zeros. The sums are the same, and so is the padding of
    // "same", which depends only on the size the kernel spans.
    std::string depthwiseFilter(const std::string& base, const float* w, int64_t kh, int64_t kw, int64_t c,
                                int64_t m, int64_t dh, int64_t dw) {
        if (dh == 1 && dw == 1) return constF(base, {kh, kw, c, m}, w);
        const int64_t eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1, tap = c * m;
        std::vector<float> spread(static_cast<size_t>(eh * ew * tap), 0.0f);
        for (int64_t y = 0; y < kh; ++y)
            for (int64_t x = 0; x < kw; ++x)
                std::copy_n(w + (y * kw + x) * tap, tap, spread.begin() + (y * dh * ew + x * dw) * tap);
        return constF(base, {eh, ew, c, m}, spread.data());
    }
    std::string constI32(const std::string& base, const std::vector<int32_t>& v, bool scalar = false) {
        std::vector<int64_t> dims;
        if (!scalar) dims.push_back(static_cast<int64_t>(v.size()));
        return node("Const", base, {}, {{"dtype", attrType(DtInt32)},
                                        {"value", Pb().msg(8, tensorProto(DtInt32, dims, v.data(), v.size() * 4))}});
    }
    std::string param(int i, size_t k) {
        int idx = m_params.index(i, k);
        auto it = m_paramConst.find(idx);
        if (it != m_paramConst.end()) return it->second;
        const auto& p = m_params.params()[static_cast<size_t>(idx)];
        return m_paramConst[idx] = constF(p.name, p.value.shape().dims(), p.value.data<float>());
    }
    Attrs T() { return {{"T", attrType(DtFloat)}}; }
    std::string unary(const std::string& op, const std::string& base, const std::string& x) { return node(op, base, {x}, T()); }
    std::string binary(const std::string& op, const std::string& base, const std::string& a, const std::string& b) {
        return node(op, base, {a, b}, T());
    }

    std::string gelu(const std::string& base, const std::string& x, bool approximate) {
        std::string t;
        if (approximate) {
            std::string x3 = binary("Mul", base + "/x3", binary("Mul", base + "/x2", x, x), x);
            std::string inner = binary("AddV2", base + "/inner", x, binary("Mul", base + "/kx3", x3, scalarF(base + "/k", 0.044715f)));
            t = unary("Tanh", base + "/tanh", binary("Mul", base + "/arg", inner, scalarF(base + "/c", 0.7978845608028654f)));
        } else {
            t = unary("Erf", base + "/erf", binary("Mul", base + "/arg", x, scalarF(base + "/c", 0.7071067811865476f)));
        }
        std::string t1 = binary("AddV2", base + "/t1", t, scalarF(base + "/one", 1.0f));
        return binary("Mul", base, binary("Mul", base + "/xt", x, t1), scalarF(base + "/half", 0.5f));
    }

    Result<std::string> activation(const std::string& act, const std::string& x, const std::string& base) {
        if (act == "linear") return x;
        if (act == "relu") return unary("Relu", base, x);
        if (act == "relu6") return unary("Relu6", base, x);
        if (act == "sigmoid") return unary("Sigmoid", base, x);
        if (act == "tanh") return unary("Tanh", base, x);
        if (act == "softmax") return unary("Softmax", base, x);
        if (act == "gelu") return gelu(base, x, false);
        return Error(ErrorCode::Unsupported, "activation \"" + act + "\" cannot be exported").with("what", act);
    }

    Status emit(int i) {
        const Node& n = m_model.graph.nodes[static_cast<size_t>(i)];
        const auto& info = m_model.nodes[static_cast<size_t>(i)];
        const auto& a = info.attrs;
        auto in = [&](size_t k) { return m_val[static_cast<size_t>(info.inputs[k])]; };
        std::string& out = m_val[static_cast<size_t>(i)];
        const OpKind kind = info.def->kind;
        if (ops::isLoss(kind)) return {};
        auto finish = [&](Result<std::string> r) -> Status {
            if (!r.ok()) {
                Error e = r.error();
                return e.withNode(n.name);
            }
            out = r.value();
            return {};
        };
        switch (kind) {
        case OpKind::Input: {
            int dt = a.getString("dtype") == "int32" ? DtInt32 : DtFloat;
            out = node("Placeholder", n.name, {}, {{"dtype", attrType(dt)}, {"shape", attrShape(info.output.dims())}});
            return {};
        }
        case OpKind::Dense: {
            if (info.inputShapes[0].rank() != 2)
                return Error(ErrorCode::Unsupported, "Dense \"" + n.name + "\" reads a rank-" +
                                                         std::to_string(info.inputShapes[0].rank()) +
                                                         " input, which cannot be exported to a SavedModel yet (ONNX export can)")
                    .withNode(n.name)
                    .with("what", "Dense on a rank-" + std::to_string(info.inputShapes[0].rank()) + " input");
            std::string y = binary("MatMul", n.name + "/matmul", in(0), param(i, 0));
            if (a.getBool("use_bias"))
                y = node("BiasAdd", n.name + "/bias", {y, param(i, 1)}, {{"T", attrType(DtFloat)}, {"data_format", attrStr("NHWC")}});
            return finish(activation(a.getString("activation"), y, n.name));
        }
        case OpKind::Conv2D: {
            const auto& s = a.getInts("strides");
            const auto& d = a.getInts("dilation_rate");
            int64_t groups = a.getInt("groups");
            int64_t cin = info.inputShapes[0][3];
            std::string pad = a.getString("padding") == "same" ? "SAME" : "VALID";
            std::string y;
            if (groups == 1) {
                y = node("Conv2D", n.name + "/conv", {in(0), param(i, 0)},
                         {{"T", attrType(DtFloat)}, {"strides", attrInts({1, s[0], s[1], 1})}, {"padding", attrStr(pad)},
                          {"dilations", attrInts({1, d[0], d[1], 1})}, {"data_format", attrStr("NHWC")}});
            } else if (groups == cin) {
                // Depthwise: Kiln's [kh, kw, 1, C·m] kernel has the memory order of TensorFlow's
                // [kh, kw, C, m] (output channel o = c·m + j).
                const Tensor& w = m_params.params()[static_cast<size_t>(m_params.index(i, 0))].value;
                int64_t filters = w.shape()[3];
                std::string filt = depthwiseFilter(n.name + "/depthwise_kernel", w.data<float>(), w.shape()[0],
                                                   w.shape()[1], cin, filters / cin, d[0], d[1]);
                y = node("DepthwiseConv2dNative", n.name + "/conv", {in(0), filt},
                         {{"T", attrType(DtFloat)}, {"strides", attrInts({1, s[0], s[1], 1})}, {"padding", attrStr(pad)}, {"dilations", attrInts({1, 1, 1, 1})}, {"data_format", attrStr("NHWC")}});
            } else {
                return Error(ErrorCode::Unsupported, "grouped convolution (groups = " + std::to_string(groups) +
                                                         ") other than depthwise cannot be exported to a SavedModel")
                    .withNode(n.name).with("what", "grouped convolution");
            }
            if (a.getBool("use_bias"))
                y = node("BiasAdd", n.name + "/bias", {y, param(i, 1)}, {{"T", attrType(DtFloat)}, {"data_format", attrStr("NHWC")}});
            return finish(activation(a.getString("activation"), y, n.name));
        }
        case OpKind::DepthwiseConv2D: {
            const auto& s = a.getInts("strides");
            const auto& d = a.getInts("dilation_rate");
            const Tensor& w = m_params.params()[static_cast<size_t>(m_params.index(i, 0))].value;
            std::string filt = d[0] == 1 && d[1] == 1
                                   ? param(i, 0)
                                   : depthwiseFilter(n.name + "/dilated_kernel", w.data<float>(), w.shape()[0],
                                                     w.shape()[1], w.shape()[2], w.shape()[3], d[0], d[1]);
            std::string y = node("DepthwiseConv2dNative", n.name + "/conv", {in(0), filt},
                                 {{"T", attrType(DtFloat)}, {"strides", attrInts({1, s[0], s[1], 1})}, {"padding", attrStr(a.getString("padding") == "same" ? "SAME" : "VALID")}, {"dilations", attrInts({1, 1, 1, 1})}, {"data_format", attrStr("NHWC")}});
            if (a.getBool("use_bias"))
                y = node("BiasAdd", n.name + "/bias", {y, param(i, 1)}, {{"T", attrType(DtFloat)}, {"data_format", attrStr("NHWC")}});
            return finish(activation(a.getString("activation"), y, n.name));
        }
        case OpKind::MaxPooling2D:
        case OpKind::AveragePooling2D: {
            const auto& k = a.getInts("pool_size");
            auto s = a.getInts("strides");
            if (s.empty()) s = k;
            out = node(kind == OpKind::MaxPooling2D ? "MaxPool" : "AvgPool", n.name, {in(0)},
                       {{"T", attrType(DtFloat)}, {"ksize", attrInts({1, k[0], k[1], 1})}, {"strides", attrInts({1, s[0], s[1], 1})},
                        {"padding", attrStr(a.getString("padding") == "same" ? "SAME" : "VALID")}, {"data_format", attrStr("NHWC")}});
            return {};
        }
        case OpKind::GlobalAveragePooling2D:
            out = node("Mean", n.name, {in(0), constI32(n.name + "/axes", {1, 2})},
                       {{"T", attrType(DtFloat)}, {"Tidx", attrType(DtInt32)}, {"keep_dims", attrBool(false)}});
            return {};
        case OpKind::GlobalAveragePooling1D:  // [N,T,D]: the mean over the positions
            out = node("Mean", n.name, {in(0), constI32(n.name + "/axes", {1})},
                       {{"T", attrType(DtFloat)}, {"Tidx", attrType(DtInt32)}, {"keep_dims", attrBool(a.getBool("keepdims"))}});
            return {};
        case OpKind::GlobalMaxPooling2D:
            out = node("Max", n.name, {in(0), constI32(n.name + "/axes", {1, 2})},
                       {{"T", attrType(DtFloat)}, {"Tidx", attrType(DtInt32)}, {"keep_dims", attrBool(false)}});
            return {};
        case OpKind::ZeroPadding2D: {
            const auto& p = a.getInts("padding");  // top, bottom, left, right
            std::vector<int32_t> pads{0, 0, static_cast<int32_t>(p[0]), static_cast<int32_t>(p[1]),
                                      static_cast<int32_t>(p[2]), static_cast<int32_t>(p[3]), 0, 0};
            Pb t = tensorProto(DtInt32, {4, 2}, pads.data(), pads.size() * 4);
            std::string paddings = node("Const", n.name + "/paddings", {},
                                        {{"dtype", attrType(DtInt32)}, {"value", Pb().msg(8, t)}});
            out = node("Pad", n.name, {in(0), paddings}, {{"T", attrType(DtFloat)}, {"Tpaddings", attrType(DtInt32)}});
            return {};
        }
        case OpKind::UpSampling2D: {
            const bool bilinear = a.getString("interpolation") == "bilinear";
            std::string size = constI32(n.name + "/size", {static_cast<int32_t>(info.output[1]), static_cast<int32_t>(info.output[2])});
            // Half-pixel centres are Keras's bilinear geometry; nearest with integer factors reads
            // pixel o / factor without them.
            out = node(bilinear ? "ResizeBilinear" : "ResizeNearestNeighbor", n.name, {in(0), size},
                       {{"T", attrType(DtFloat)}, {"align_corners", attrBool(false)}, {"half_pixel_centers", attrBool(bilinear)}});
            return {};
        }
        case OpKind::Rescaling:
            out = binary("AddV2", n.name, binary("Mul", n.name + "/scale", in(0), scalarF(n.name + "/scale_value", static_cast<float>(a.getFloat("scale")))),
                         scalarF(n.name + "/offset", static_cast<float>(a.getFloat("offset"))));
            return {};
        case OpKind::BatchNormalization: {
            // Inference form: y = x·scale + shift, scale = γ/√(var+ε), shift = β − mean·scale.
            auto get = [&](size_t k) { return m_params.params()[static_cast<size_t>(m_params.index(i, k))].value.data<float>(); };
            int64_t c = info.output[-1];
            std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
            float eps = static_cast<float>(a.getFloat("epsilon"));
            for (int64_t j = 0; j < c; ++j) {
                scale[static_cast<size_t>(j)] = get(0)[j] / std::sqrt(get(3)[j] + eps);
                shift[static_cast<size_t>(j)] = get(1)[j] - get(2)[j] * scale[static_cast<size_t>(j)];
            }
            std::string y = binary("Mul", n.name + "/scale", in(0), constF(n.name + "/scale_value", {c}, scale.data()));
            out = binary("AddV2", n.name, y, constF(n.name + "/shift_value", {c}, shift.data()));
            return {};
        }
        case OpKind::Normalization: {
            // Keras's Normalization: (x - mean) / max(sqrt(variance), 1e-7), folded to x·scale + shift.
            auto get = [&](size_t k) { return m_params.params()[static_cast<size_t>(m_params.index(i, k))].value.data<float>(); };
            int64_t c = info.output[-1];
            std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
            for (int64_t j = 0; j < c; ++j) {
                scale[static_cast<size_t>(j)] = 1.0f / std::max(std::sqrt(get(1)[j]), 1e-7f);
                shift[static_cast<size_t>(j)] = -get(0)[j] * scale[static_cast<size_t>(j)];
            }
            std::string y = binary("Mul", n.name + "/scale", in(0), constF(n.name + "/scale_value", {c}, scale.data()));
            out = binary("AddV2", n.name, y, constF(n.name + "/shift_value", {c}, shift.data()));
            return {};
        }
        case OpKind::LayerNormalization: {
            Attrs meanAttrs{{"T", attrType(DtFloat)}, {"Tidx", attrType(DtInt32)}, {"keep_dims", attrBool(true)}};
            std::string axis = constI32(n.name + "/axis", {-1});
            std::string mean = node("Mean", n.name + "/mean", {in(0), axis}, meanAttrs);
            std::string centred = binary("Sub", n.name + "/centred", in(0), mean);
            std::string var = node("Mean", n.name + "/variance", {unary("Square", n.name + "/square", centred), axis}, meanAttrs);
            std::string inv = unary("Rsqrt", n.name + "/rsqrt",
                                    binary("AddV2", n.name + "/var_eps", var, scalarF(n.name + "/epsilon", static_cast<float>(a.getFloat("epsilon")))));
            std::string normed = binary("Mul", n.name + "/normed", centred, inv);
            out = binary("AddV2", n.name, binary("Mul", n.name + "/gamma_mul", normed, param(i, 0)), param(i, 1));
            return {};
        }
        case OpKind::Dropout:
            out = node("Identity", n.name, {in(0)}, T());
            return {};
        case OpKind::Flatten:
        case OpKind::Reshape: {
            std::vector<int32_t> dims{-1};
            for (int d = 1; d < info.output.rank(); ++d) dims.push_back(static_cast<int32_t>(info.output[d]));
            out = node("Reshape", n.name, {in(0), constI32(n.name + "/shape", dims)}, {{"T", attrType(DtFloat)}, {"Tshape", attrType(DtInt32)}});
            return {};
        }
        case OpKind::Concatenate: {
            int64_t axis = a.getInt("axis");
            if (axis < 0) axis += info.output.rank();
            std::vector<std::string> ins;
            for (size_t k = 0; k < info.inputs.size(); ++k) ins.push_back(in(k));
            ins.push_back(constI32(n.name + "/axis", {static_cast<int32_t>(axis)}, true));
            out = node("ConcatV2", n.name, ins, {{"N", attrInt(static_cast<int64_t>(info.inputs.size()))}, {"T", attrType(DtFloat)},
                                                {"Tidx", attrType(DtInt32)}});
            return {};
        }
        case OpKind::Add:
        case OpKind::Multiply: {
            // Multiply's [N,C] channel scales become [N,1,...,1,C] so that Mul broadcasts them.
            auto operand = [&](size_t k) {
                const Shape& s = info.inputShapes[k];
                if (s == info.output || s.rank() != 2) return in(k);
                std::vector<int32_t> dims(static_cast<size_t>(info.output.rank()), 1);
                dims.front() = -1;
                dims.back() = static_cast<int32_t>(info.output[-1]);
                return node("Reshape", n.name + "/scale" + std::to_string(k), {in(k), constI32(n.name + "/scale_shape", dims)},
                            {{"T", attrType(DtFloat)}, {"Tshape", attrType(DtInt32)}});
            };
            std::string acc = operand(0);
            for (size_t k = 1; k < info.inputs.size(); ++k)
                acc = binary(kind == OpKind::Add ? "AddV2" : "Mul", k + 1 == info.inputs.size() ? n.name : n.name + "/part", acc, operand(k));
            out = acc;
            return {};
        }
        case OpKind::Subtract: out = binary("Sub", n.name, in(0), in(1)); return {};
        case OpKind::ReLU: out = unary("Relu", n.name, in(0)); return {};
        case OpKind::ReLU6: out = unary("Relu6", n.name, in(0)); return {};
        case OpKind::Sigmoid: out = unary("Sigmoid", n.name, in(0)); return {};
        case OpKind::Tanh: out = unary("Tanh", n.name, in(0)); return {};
        case OpKind::Softmax: out = unary("Softmax", n.name, in(0)); return {};
        case OpKind::GELU: out = gelu(n.name, in(0), a.getBool("approximate")); return {};
        case OpKind::SiLU: out = binary("Mul", n.name, in(0), unary("Sigmoid", n.name + "/sigmoid", in(0))); return {};
        case OpKind::HardSigmoid:
        case OpKind::HardSwish: {
            // relu6(x + 3) / 6, times x for HardSwish.
            std::string shifted = binary("AddV2", n.name + "/shift", in(0), scalarF(n.name + "/three", 3.0f));
            std::string h = binary("Mul", kind == OpKind::HardSigmoid ? n.name : n.name + "/hard_sigmoid",
                                   unary("Relu6", n.name + "/relu6", shifted), scalarF(n.name + "/sixth", 1.0f / 6.0f));
            out = kind == OpKind::HardSigmoid ? h : binary("Mul", n.name, in(0), h);
            return {};
        }
        case OpKind::Clip:
            out = binary("Minimum", n.name, binary("Maximum", n.name + "/lower", in(0), scalarF(n.name + "/min", static_cast<float>(a.getFloat("min")))),
                         scalarF(n.name + "/max", static_cast<float>(a.getFloat("max"))));
            return {};
        case OpKind::LeakyReLU:
            out = node("LeakyRelu", n.name, {in(0)}, {{"T", attrType(DtFloat)}, {"alpha", attrFloat(static_cast<float>(a.getFloat("negative_slope")))}});
            return {};
        case OpKind::Embedding: {
            std::string ids = in(0);
            int src = info.inputs[0];
            bool intIds = m_model.graph.nodes[static_cast<size_t>(src)].op == "Input" &&
                          m_model.nodes[static_cast<size_t>(src)].attrs.getString("dtype") == "int32";
            if (!intIds)
                ids = node("Cast", n.name + "/ids", {ids}, {{"SrcT", attrType(DtFloat)}, {"DstT", attrType(DtInt32)}, {"Truncate", attrBool(false)}});
            out = node("GatherV2", n.name, {param(i, 0), ids, constI32(n.name + "/axis", {0}, true)},
                       {{"Tparams", attrType(DtFloat)}, {"Tindices", attrType(DtInt32)}, {"Taxis", attrType(DtInt32)}, {"batch_dims", attrInt(0)}});
            return {};
        }
        default:
            break;
        }
        return Error(ErrorCode::Unsupported, "operation " + n.op + " cannot be exported to a SavedModel").withNode(n.name).with("what", n.op);
    }

    const ops::ModelInfo& m_model;
    const exec::ParamStore& m_params;
    std::vector<Pb> m_nodes;
    std::vector<std::string> m_val;
    std::set<std::string> m_used;
    std::map<int, std::string> m_paramConst;
};

}  // namespace

Result<std::string> exportSavedModel(const ops::ModelInfo& model, const exec::ParamStore& params, const ModelMetadata& meta) {
    KILN_TRY(ops::refusePlaceholders(model.graph, "export"));
    // A SavedModel has no way to carry an operation TensorFlow does not know.
    for (size_t i = 0; i < model.nodes.size(); ++i)
        if (model.nodes[i].def->kind == ops::OpKind::Plugin) {
            const Node& n = model.graph.nodes[i];
            const std::string op = ops::pluginOpName(n);
            return Error(ErrorCode::Unsupported, "node \"" + n.name + "\" runs the plugin operation " + op +
                                                     ", which a SavedModel cannot hold; export to ONNX instead")
                .withNode(n.name)
                .with("what", "the plugin operation " + op + " in a SavedModel");
        }
    TfWriter w(model, params);
    return w.run(meta);
}

Status saveSavedModel(const std::string& dir, const ops::ModelInfo& model, const exec::ParamStore& params,
                      const ModelMetadata& meta) {
    KILN_ASSIGN(std::string bytes, exportSavedModel(model, params, meta));
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir) / "variables", ec);
    if (ec) return Error(ErrorCode::FileWrite, "cannot create " + dir + "/variables: " + ec.message()).withFile(dir).with("reason", ec.message());
    return writeFileAtomic(dir + "/saved_model.pb", bytes);
}

}  // namespace kiln::engine::io
