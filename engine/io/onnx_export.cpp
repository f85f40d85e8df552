// SPDX-License-Identifier: Apache-2.0
// ONNX export: walks the analysed model in topological order and emits ONNX nodes. Every Kiln
// value has an NHWC form (named after its node) and, for rank > 2, possibly a channel-first form
// ("<node>__cf"); each form is made on demand with one Transpose, so chains such as
// Conv → BatchNorm → ReLU → MaxPool stay channel-first without transposes in between.
#include "engine/io/onnx_export.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "engine/io/project.h"
#include "engine/io/quantize.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::io {
namespace {

using ops::OpKind;

std::vector<int64_t> toFirstPerm(int rank) {
    std::vector<int64_t> p{0, rank - 1};
    for (int d = 1; d < rank - 1; ++d) p.push_back(d);
    return p;
}
std::vector<int64_t> toLastPerm(int rank) {
    std::vector<int64_t> p{0};
    for (int d = 2; d < rank; ++d) p.push_back(d);
    p.push_back(1);
    return p;
}

// Keras/TensorFlow "same" padding along one axis: (before, after), the extra cell at the end.
std::pair<int64_t, int64_t> samePads(int64_t in, int64_t k, int64_t stride, int64_t dil) {
    int64_t out = (in + stride - 1) / stride;
    int64_t eff = (k - 1) * dil + 1;
    int64_t total = std::max<int64_t>((out - 1) * stride + eff - in, 0);
    return {total / 2, total - total / 2};
}

class OnnxWriter {
public:
    OnnxWriter(const ops::ModelInfo& m, const exec::ParamStore& p, const Int8Quantization* quant)
        : m_model(m), m_params(p), m_quant(quant) {
        for (const auto& n : m.graph.nodes) m_used.insert(n.name);
        m_vals.resize(m.graph.nodes.size());
    }

    Result<std::string> run(const ModelMetadata& meta) {
        m_proto.set_ir_version(kOnnxIrVersion);
        m_proto.set_producer_name("Kiln");
        m_proto.set_producer_version(meta.kilnVersion);
        m_proto.set_domain("ai.kiln");
        m_proto.set_model_version(1);
        m_proto.set_doc_string(meta.name.empty() ? "Exported by Kiln" : "Kiln model " + meta.name);
        auto* opset = m_proto.add_opset_import();
        opset->set_domain("");
        opset->set_version(kOnnxOpset);
        m_graph = m_proto.mutable_graph();
        m_graph->set_name(meta.name.empty() ? "kiln_model" : meta.name);

        for (int i : m_model.order) {
            KILN_TRY(emit(i));
            if (m_quant) quantizeOutput(i);
        }
        for (int o : m_model.outputs) {
            const Node& node = m_model.graph.nodes[static_cast<size_t>(o)];
            const auto& info = m_model.nodes[static_cast<size_t>(o)];
            if (ops::isLoss(info.def->kind))
                return Error(ErrorCode::Unsupported, "a loss cannot be a model output of an exported model")
                    .withNode(node.name).with("what", "loss output");
            const int r = resolve(o);
            const auto& source = m_model.nodes[static_cast<size_t>(r)];
            const bool passesInput = source.def->kind == OpKind::Input;
            const int type = passesInput && source.attrs.getString("dtype") == "int32" ? onnx::TensorProto::INT32
                                                                                       : onnx::TensorProto::FLOAT;
            std::string name = node.name;
            if (r == o && passesInput) {
                // An Input that is also an output: ONNX names a value once, and onnxruntime does
                // not hand back a graph input listed as an output reliably (it may share its
                // buffer with a kernel's output), so the output is an Identity copy of its own.
                name = fresh(node.name + "_output");
                add("Identity", {nhwcOf(o)}, {name}, name);
            } else if (r != o) {
                add("Identity", {nhwcOf(r)}, {node.name}, node.name);
            } else {
                nhwcOf(o);
            }
            addValueInfo(m_graph->add_output(), name, info.output, type);
        }
        for (const auto& domain : m_pluginDomains) {
            auto* k = m_proto.add_opset_import();
            k->set_domain(domain);
            k->set_version(1);
        }
        if (m_useGelu || m_useGeluTanh || m_useKilnDomain) {
            auto* k = m_proto.add_opset_import();
            k->set_domain(kOnnxKilnDomain);
            k->set_version(1);
            if (m_useGelu) addGeluFunction(false);
            if (m_useGeluTanh) addGeluFunction(true);
        }
        auto meta1 = [&](const std::string& key, const std::string& value) {
            auto* e = m_proto.add_metadata_props();
            e->set_key(key);
            e->set_value(value);
        };
        nlohmann::json classes = meta.classNames;
        meta1("kiln.model_name", meta.name);
        meta1("kiln.version", meta.kilnVersion);
        meta1("kiln.class_names", classes.dump());
        meta1("kiln.preprocessing", meta.preprocessingJson.empty() ? "{}" : meta.preprocessingJson);
        meta1("kiln.layout", "NHWC");

        std::string bytes;
        if (m_proto.ByteSizeLong() > (size_t{1} << 31) - 1)
            return Error(ErrorCode::Unsupported, "the model is larger than 2 GB, the limit of one ONNX file")
                .with("what", "model size");
        if (!m_proto.SerializeToString(&bytes))
            return Error(ErrorCode::Internal, "the ONNX model could not be serialised");
        return bytes;
    }

private:
    struct Val {
        std::string nhwc;
        std::string cf;
        int rank = 0;
        int alias = -1;  // node whose value this node passes through (Dropout)
        bool elided = false;  // losses
    };

    int resolve(int i) const {
        while (m_vals[static_cast<size_t>(i)].alias >= 0) i = m_vals[static_cast<size_t>(i)].alias;
        return i;
    }
    const Node& gnode(int i) const { return m_model.graph.nodes[static_cast<size_t>(i)]; }
    const ops::NodeInfo& info(int i) const { return m_model.nodes[static_cast<size_t>(i)]; }

    std::string fresh(const std::string& base) {
        std::string name = base;
        for (int k = 1; m_used.count(name); ++k) name = base + "_" + std::to_string(k);
        m_used.insert(name);
        return name;
    }

    onnx::NodeProto* add(const std::string& op, const std::vector<std::string>& in,
                         const std::vector<std::string>& out, const std::string& name) {
        auto* n = m_graph->add_node();
        n->set_op_type(op);
        n->set_name(m_nodeNames.count(name) ? fresh(name + "/" + op) : name);
        m_nodeNames.insert(n->name());
        for (const auto& s : in) n->add_input(s);
        for (const auto& s : out) n->add_output(s);
        return n;
    }
    static void attrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attrFloat(onnx::NodeProto* n, const std::string& name, float v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void attrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }

    std::string initializer(const std::string& base, const std::vector<int64_t>& dims, const float* data) {
        std::string name = fresh(base);
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) { t->add_dims(d); n *= d; }
        if (n > 0) t->set_raw_data(std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(n) * 4));
        return name;
    }
    std::string initializerI64(const std::string& base, const std::vector<int64_t>& values) {
        std::string name = fresh(base);
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(values.size()));
        if (!values.empty())
            t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8));
        return name;
    }
    std::string scalar(const std::string& base, float v) { return initializer(base, {}, &v); }

    template <typename T>
    std::string rawInitializer(const std::string& base, const std::vector<int64_t>& dims, int type, const T* data) {
        std::string name = fresh(base);
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        int64_t n = 1;
        for (int64_t d : dims) { t->add_dims(d); n *= d; }
        if (n > 0) t->set_raw_data(std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(n) * sizeof(T)));
        return name;
    }
    // Scale (float) and zero point (int8) initializers: scalars for one parameter set, [C] for
    // per-channel ones.
    std::pair<std::string, std::string> qParams(const std::string& base, const std::vector<float>& scales,
                                                const std::vector<int8_t>& zeroPoints) {
        std::vector<int64_t> dims;
        if (scales.size() > 1) dims.push_back(static_cast<int64_t>(scales.size()));
        return {rawInitializer(base + "_scale", dims, onnx::TensorProto::FLOAT, scales.data()),
                rawInitializer(base + "_zero_point", dims, onnx::TensorProto::INT8, zeroPoints.data())};
    }
    // An int8 kernel [dims] (channel-major when axis 0, channel-fastest when axis 1) read through
    // DequantizeLinear; returns the float value's name.
    std::string int8Kernel(const std::string& base, const std::vector<int64_t>& dims, const std::vector<int8_t>& q,
                           const std::vector<float>& scales, int64_t axis) {
        std::string qname = rawInitializer(base + "_quantized", dims, onnx::TensorProto::INT8, q.data());
        auto [scale, zp] = qParams(base, scales, std::vector<int8_t>(scales.size(), 0));
        std::string out = fresh(base + "_dequantized");
        auto* n = add("DequantizeLinear", {qname, scale, zp}, {out}, base + "/dequantize");
        if (scales.size() > 1) attrInt(n, "axis", axis);
        return out;
    }
    // Dense: the kernel [in, out] as int8 with one scale per output unit (axis 1).
    std::string denseKernel(int node) {
        const int idx = m_params.index(node, 0);
        if (auto it = m_paramNames.find(idx); it != m_paramNames.end()) return it->second;
        const auto& p = m_params.params()[static_cast<size_t>(idx)];
        const int64_t rows = p.value.shape()[0], channels = p.value.shape()[1];
        const int limit = weightLimit(m_quant->scheme);
        const auto scales = weightScales(p.value.data<float>(), rows, channels, m_quant->perChannel, limit);
        const auto q = quantizeWeights(p.value.data<float>(), rows, channels, scales, limit);
        return m_paramNames[idx] = int8Kernel(p.name, {rows, channels}, q, scales, 1);
    }
    // QuantizeLinear → DequantizeLinear where node i's value is computed (its producer now writes
    // "<value>__float"), so every reader sees the value on its int8 grid.
    void quantizeOutput(int i) {
        const std::string& name = gnode(i).name;
        auto qp = m_quant->values.find(name);
        if (qp == m_quant->values.end()) return;
        Val& v = m_vals[static_cast<size_t>(i)];
        if (v.alias >= 0 || v.elided) return;
        auto [scale, zp] = qParams(name + "/q", {qp->second.scale}, {static_cast<int8_t>(qp->second.zeroPoint)});
        std::string src, dst;
        if (info(i).def->kind == OpKind::Input) {
            src = v.nhwc;
            dst = v.nhwc = fresh(name + "__dq");
        } else {
            dst = !v.cf.empty() ? v.cf : v.nhwc;
            if (dst.empty()) return;
            src = fresh(dst + "__float");
            for (int k = m_graph->node_size() - 1; k >= 0; --k) {
                auto* n = m_graph->mutable_node(k);
                bool found = false;
                for (int o = 0; o < n->output_size(); ++o)
                    if (n->output(o) == dst) {
                        n->set_output(o, src);
                        found = true;
                    }
                if (found) break;
            }
        }
        const std::string q = fresh(name + "__q");
        add("QuantizeLinear", {src, scale, zp}, {q}, name + "/quantize");
        add("DequantizeLinear", {q, scale, zp}, {dst}, name + "/dequantize");
    }

    const Tensor& param(int node, size_t k) const {
        return m_params.params()[static_cast<size_t>(m_params.index(node, k))].value;
    }
    // The parameter as an initializer, shared between nodes that share weights.
    std::string paramInit(int node, size_t k) {
        int idx = m_params.index(node, k);
        auto it = m_paramNames.find(idx);
        if (it != m_paramNames.end()) return it->second;
        const auto& p = m_params.params()[static_cast<size_t>(idx)];
        std::string name = initializer(p.name, p.value.shape().dims(), p.value.data<float>());
        m_paramNames[idx] = name;
        return name;
    }

    void addValueInfo(onnx::ValueInfoProto* v, const std::string& name, const Shape& shape, int elemType) {
        v->set_name(name);
        auto* tt = v->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elemType);
        auto* s = tt->mutable_shape();
        for (int d = 0; d < shape.rank(); ++d) {
            auto* dim = s->add_dim();
            if (shape[d] == Shape::kBatch) dim->set_dim_param("N");
            else dim->set_dim_value(shape[d]);
        }
    }

    std::string nhwcOf(int i) {
        i = resolve(i);
        Val& v = m_vals[static_cast<size_t>(i)];
        if (v.nhwc.empty()) {
            // Only channel-first values lack an NHWC form; the NHWC form carries the node's name.
            v.nhwc = gnode(i).name;
            auto* t = add("Transpose", {v.cf}, {v.nhwc}, gnode(i).name + "/to_nhwc");
            attrInts(t, "perm", toLastPerm(v.rank));
        }
        return v.nhwc;
    }
    std::string cfOf(int i) {
        i = resolve(i);
        Val& v = m_vals[static_cast<size_t>(i)];
        if (v.rank <= 2) return nhwcOf(i);
        if (v.cf.empty()) {
            v.cf = fresh(gnode(i).name + "__cf");
            auto* t = add("Transpose", {v.nhwc}, {v.cf}, gnode(i).name + "/to_cf");
            attrInts(t, "perm", toFirstPerm(v.rank));
        }
        return v.cf;
    }
    bool isChannelFirst(int i) const {
        const Val& v = m_vals[static_cast<size_t>(resolve(i))];
        return v.rank > 2 && !v.cf.empty();
    }
    // The output name of node i in the given layout.
    std::string outName(int i, bool cf) {
        Val& v = m_vals[static_cast<size_t>(i)];
        v.rank = info(i).output.rank();
        if (cf && v.rank > 2) return v.cf = fresh(gnode(i).name + "__cf");
        return v.nhwc = gnode(i).name;
    }

    // Applies a Dense/Conv activation attribute to `pre`, writing `out`.
    Status activation(const std::string& act, const std::string& pre, const std::string& out, const std::string& node,
                      bool channelFirst) {
        if (act == "relu") add("Relu", {pre}, {out}, node + "/relu");
        else if (act == "relu6") add("Clip", {pre, scalar(node + "/min", 0.f), scalar(node + "/max", 6.f)}, {out}, node + "/relu6");
        else if (act == "sigmoid") add("Sigmoid", {pre}, {out}, node + "/sigmoid");
        else if (act == "tanh") add("Tanh", {pre}, {out}, node + "/tanh");
        else if (act == "gelu") gelu(pre, out, node + "/gelu", false);
        else if (act == "softmax") {
            auto* n = add("Softmax", {pre}, {out}, node + "/softmax");
            attrInt(n, "axis", channelFirst ? 1 : -1);
        } else if (act == "linear") add("Identity", {pre}, {out}, node + "/linear");
        else return Error(ErrorCode::Unsupported, "activation \"" + act + "\" cannot be exported").withNode(node).with("what", act);
        return {};
    }
    void gelu(const std::string& in, const std::string& out, const std::string& name, bool approximate) {
        auto* n = add(approximate ? "GeluTanh" : "Gelu", {in}, {out}, name);
        n->set_domain(kOnnxKilnDomain);
        (approximate ? m_useGeluTanh : m_useGelu) = true;
    }
    // GELU as a model-local function of opset-17 ops (ONNX has Gelu only from opset 20).
    void addGeluFunction(bool approximate) {
        auto* f = m_proto.add_functions();
        f->set_name(approximate ? "GeluTanh" : "Gelu");
        f->set_domain(kOnnxKilnDomain);
        f->set_doc_string(approximate ? "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))" : "0.5·x·(1 + erf(x/√2))");
        f->add_input("X");
        f->add_output("Y");
        auto* o = f->add_opset_import();
        o->set_domain("");
        o->set_version(kOnnxOpset);
        auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
            auto* n = f->add_node();
            n->set_op_type(op);
            for (auto& s : in) n->add_input(s);
            n->add_output(out);
            return n;
        };
        auto constant = [&](const std::string& out, float v) {
            auto* n = node("Constant", {}, out);
            auto* a = n->add_attribute();
            a->set_name("value_float");
            a->set_type(onnx::AttributeProto::FLOAT);
            a->set_f(v);
        };
        constant("half", 0.5f);
        constant("one", 1.0f);
        if (approximate) {
            constant("c", 0.7978845608028654f);
            constant("k", 0.044715f);
            node("Mul", {"X", "X"}, "x2");
            node("Mul", {"x2", "X"}, "x3");
            node("Mul", {"x3", "k"}, "kx3");
            node("Add", {"X", "kx3"}, "inner");
            node("Mul", {"inner", "c"}, "arg");
            node("Tanh", {"arg"}, "t");
        } else {
            constant("c", 0.7071067811865476f);
            node("Mul", {"X", "c"}, "arg");
            node("Erf", {"arg"}, "t");
        }
        node("Add", {"t", "one"}, "t1");
        node("Mul", {"X", "t1"}, "xt");
        node("Mul", {"xt", "half"}, "Y");
    }

    Status emit(int i) {
        const Node& node = gnode(i);
        const auto& ni = info(i);
        const auto& a = ni.attrs;
        const OpKind kind = ni.def->kind;
        Val& val = m_vals[static_cast<size_t>(i)];
        val.rank = ni.output.rank();
        auto in = [&](size_t k) { return ni.inputs[k]; };
        if (ops::isLoss(kind)) {
            val.elided = true;
            return {};
        }
        for (int p : ni.inputs)
            if (m_vals[static_cast<size_t>(p)].elided)
                return Error(ErrorCode::Unsupported, "a node reading a loss cannot be exported").withNode(node.name)
                    .with("what", "loss input");

        switch (kind) {
        case OpKind::Input: {
            val.nhwc = node.name;
            bool ints = a.getString("dtype") == "int32";
            addValueInfo(m_graph->add_input(), node.name, ni.output,
                         ints ? onnx::TensorProto::INT32 : onnx::TensorProto::FLOAT);
            return {};
        }
        case OpKind::Dense: {
            std::string act = a.getString("activation");
            std::vector<std::string> ins{nhwcOf(in(0)), m_quant ? denseKernel(i) : paramInit(i, 0)};
            if (a.getBool("use_bias")) ins.push_back(paramInit(i, 1));
            bool linear = act == "linear";
            std::string out = linear ? outName(i, false) : fresh(node.name + "__pre");
            if (ni.inputShapes[0].rank() == 2) {
                add("Gemm", ins, {out}, node.name);
            } else {  // along the last axis: MatMul broadcasts the kernel over the leading axes
                std::string mm = a.getBool("use_bias") ? fresh(node.name + "__matmul") : out;
                add("MatMul", {ins[0], ins[1]}, {mm}, node.name);
                if (a.getBool("use_bias")) add("Add", {mm, ins[2]}, {out}, node.name + "/bias");
            }
            if (!linear) KILN_TRY(activation(act, out, outName(i, false), node.name, false));
            return {};
        }
        case OpKind::MultiHeadAttention: return emitAttention(i);
        case OpKind::Conv2D:
        case OpKind::DepthwiseConv2D: {
            const Shape& x = ni.inputShapes[0];
            const auto& k = a.getInts("kernel_size");
            const auto& s = a.getInts("strides");
            const auto& d = a.getInts("dilation_rate");
            const bool depthwise = kind == OpKind::DepthwiseConv2D;
            int64_t groups = depthwise ? x[3] : a.getInt("groups");
            // HWIO -> OIHW. A depthwise kernel [kh, kw, C, m] is the grouped [kh, kw, 1, C·m].
            const Tensor& w = param(i, 0);
            int64_t kh = w.shape()[0], kw = w.shape()[1];
            int64_t ci = depthwise ? 1 : w.shape()[2];
            int64_t co = depthwise ? w.shape()[2] * w.shape()[3] : w.shape()[3];
            std::vector<float> oihw(static_cast<size_t>(w.numel()));
            const float* src = w.data<float>();
            for (int64_t y = 0; y < kh; ++y)
                for (int64_t xx = 0; xx < kw; ++xx)
                    for (int64_t c = 0; c < ci; ++c)
                        for (int64_t o = 0; o < co; ++o)
                            oihw[static_cast<size_t>(((o * ci + c) * kh + y) * kw + xx)] =
                                src[((y * kw + xx) * ci + c) * co + o];
            int idx = m_params.index(i, 0);
            std::string wname;
            auto it = m_convWeights.find(idx);
            if (it != m_convWeights.end()) {
                wname = it->second;
            } else if (m_quant) {
                // Scales per output channel from Kiln's layout (channels fastest); the int8 kernel
                // is OIHW like the float one, so the channel is axis 0.
                const int limit = weightLimit(m_quant->scheme);
                const auto scales = weightScales(src, w.numel() / co, co, m_quant->perChannel, limit);
                std::vector<int8_t> q(oihw.size());
                const int64_t per = ci * kh * kw;
                for (size_t e = 0; e < q.size(); ++e) {
                    const float s = scales[scales.size() > 1 ? e / static_cast<size_t>(per) : 0];
                    q[e] = quantizeSymmetric(oihw[e], s, limit);
                }
                wname = m_convWeights[idx] =
                    int8Kernel(m_params.params()[static_cast<size_t>(idx)].name, {co, ci, kh, kw}, q, scales, 0);
            } else {
                wname = m_convWeights[idx] = initializer(m_params.params()[static_cast<size_t>(idx)].name, {co, ci, kh, kw}, oihw.data());
            }
            std::vector<std::string> ins{cfOf(in(0)), wname};
            if (a.getBool("use_bias")) ins.push_back(paramInit(i, 1));
            std::string act = a.getString("activation");
            bool linear = act == "linear" || act == "softmax";
            std::string out = linear && act != "softmax" ? outName(i, true) : fresh(node.name + "__pre");
            auto* n = add("Conv", ins, {out}, node.name);
            attrInts(n, "kernel_shape", {k[0], k[1]});
            attrInts(n, "strides", {s[0], s[1]});
            attrInts(n, "dilations", {d[0], d[1]});
            attrInt(n, "group", groups);
            std::vector<int64_t> pads{0, 0, 0, 0};
            if (a.getString("padding") == "same") {
                auto [t, b] = samePads(x[1], k[0], s[0], d[0]);
                auto [l, r] = samePads(x[2], k[1], s[1], d[1]);
                pads = {t, l, b, r};
            }
            attrInts(n, "pads", pads);
            if (act == "softmax") {
                // Softmax over channels: the channel axis is 1 in the channel-first value.
                KILN_TRY(activation(act, out, outName(i, true), node.name, true));
            } else if (!linear) {
                KILN_TRY(activation(act, out, outName(i, true), node.name, true));
            }
            return {};
        }
        case OpKind::MaxPooling2D:
        case OpKind::AveragePooling2D: {
            const Shape& x = ni.inputShapes[0];
            const auto& k = a.getInts("pool_size");
            auto s = a.getInts("strides");
            if (s.empty()) s = k;
            std::string src = cfOf(in(0));
            bool isMax = kind == OpKind::MaxPooling2D;
            auto* n = add(isMax ? "MaxPool" : "AveragePool", {src}, {outName(i, true)}, node.name);
            attrInts(n, "kernel_shape", {k[0], k[1]});
            attrInts(n, "strides", {s[0], s[1]});
            std::vector<int64_t> pads{0, 0, 0, 0};
            if (a.getString("padding") == "same") {
                auto [t, b] = samePads(x[1], k[0], s[0], 1);
                auto [l, r] = samePads(x[2], k[1], s[1], 1);
                pads = {t, l, b, r};
            }
            attrInts(n, "pads", pads);
            // Kiln averages over the cells inside the image only.
            if (!isMax) attrInt(n, "count_include_pad", 0);
            return {};
        }
        case OpKind::GlobalAveragePooling2D: {
            if (isChannelFirst(in(0))) {
                std::string pooled = fresh(node.name + "__pooled");
                add("GlobalAveragePool", {cfOf(in(0))}, {pooled}, node.name);
                auto* f = add("Flatten", {pooled}, {outName(i, false)}, node.name + "/flatten");
                attrInt(f, "axis", 1);
            } else {
                auto* n = add("ReduceMean", {nhwcOf(in(0))}, {outName(i, false)}, node.name);
                attrInts(n, "axes", {1, 2});
                attrInt(n, "keepdims", 0);
            }
            return {};
        }
        case OpKind::GlobalMaxPooling2D: {
            if (isChannelFirst(in(0))) {
                std::string pooled = fresh(node.name + "__pooled");
                add("GlobalMaxPool", {cfOf(in(0))}, {pooled}, node.name);
                auto* f = add("Flatten", {pooled}, {outName(i, false)}, node.name + "/flatten");
                attrInt(f, "axis", 1);
            } else {
                auto* n = add("ReduceMax", {nhwcOf(in(0))}, {outName(i, false)}, node.name);
                attrInts(n, "axes", {1, 2});
                attrInt(n, "keepdims", 0);
            }
            return {};
        }
        case OpKind::GlobalAveragePooling1D: {  // [N,T,D]: the mean over the positions
            auto* n = add("ReduceMean", {nhwcOf(in(0))}, {outName(i, false)}, node.name);
            attrInts(n, "axes", {1});
            attrInt(n, "keepdims", a.getBool("keepdims") ? 1 : 0);
            return {};
        }
        case OpKind::ZeroPadding2D: {
            const auto& p = a.getInts("padding");  // top, bottom, left, right
            const bool cf = isChannelFirst(in(0));
            // ONNX pads: all begins, then all ends, per axis of the value's layout.
            std::vector<int64_t> pads = cf ? std::vector<int64_t>{0, 0, p[0], p[2], 0, 0, p[1], p[3]}
                                           : std::vector<int64_t>{0, p[0], p[2], 0, 0, p[1], p[3], 0};
            auto* n = add("Pad", {cf ? cfOf(in(0)) : nhwcOf(in(0)), initializerI64(node.name + "/pads", pads)},
                          {outName(i, cf)}, node.name);
            n->add_attribute()->CopyFrom([] {
                onnx::AttributeProto m;
                m.set_name("mode");
                m.set_type(onnx::AttributeProto::STRING);
                m.set_s("constant");
                return m;
            }());
            return {};
        }
        case OpKind::UpSampling2D: {
            const auto& sz = a.getInts("size");
            const bool bilinear = a.getString("interpolation") == "bilinear";
            const std::vector<float> scales{1.0f, 1.0f, static_cast<float>(sz[0]), static_cast<float>(sz[1])};
            auto* n = add("Resize", {cfOf(in(0)), "", initializer(node.name + "/scales", {4}, scales.data())},
                          {outName(i, true)}, node.name);
            auto str = [&](const char* name, const char* v) {
                auto* at = n->add_attribute();
                at->set_name(name);
                at->set_type(onnx::AttributeProto::STRING);
                at->set_s(v);
            };
            if (bilinear) {
                str("mode", "linear");
                str("coordinate_transformation_mode", "half_pixel");
            } else {
                str("mode", "nearest");
                str("coordinate_transformation_mode", "asymmetric");
                str("nearest_mode", "floor");
            }
            return {};
        }
        case OpKind::Rescaling: {
            bool cf = isChannelFirst(in(0)) && m_vals[static_cast<size_t>(resolve(in(0)))].nhwc.empty();
            std::string src = cf ? cfOf(in(0)) : nhwcOf(in(0));
            std::string scaled = fresh(node.name + "__scaled");
            add("Mul", {src, scalar(node.name + "/scale", static_cast<float>(a.getFloat("scale")))}, {scaled},
                node.name + "/scale");
            add("Add", {scaled, scalar(node.name + "/offset", static_cast<float>(a.getFloat("offset")))},
                {outName(i, cf)}, node.name);
            return {};
        }
        case OpKind::BatchNormalization: {
            bool cf = val.rank > 2;
            std::string src = cf ? cfOf(in(0)) : nhwcOf(in(0));
            std::vector<std::string> ins{src};
            for (size_t p = 0; p < 4; ++p) ins.push_back(paramInit(i, p));
            auto* n = add("BatchNormalization", ins, {outName(i, cf)}, node.name);
            attrFloat(n, "epsilon", static_cast<float>(a.getFloat("epsilon")));
            attrFloat(n, "momentum", static_cast<float>(a.getFloat("momentum")));
            return {};
        }
        case OpKind::LayerNormalization: {
            auto* n = add("LayerNormalization", {nhwcOf(in(0)), paramInit(i, 0), paramInit(i, 1)}, {outName(i, false)},
                          node.name);
            attrInt(n, "axis", -1);
            attrFloat(n, "epsilon", static_cast<float>(a.getFloat("epsilon")));
            return {};
        }
        case OpKind::Normalization: {
            // As ONNX BatchNormalization (the form every ONNX reader, Kiln's importer included,
            // takes per channel): mean, scale = 1 / max(sqrt(variance), 1e-7) as Keras computes
            // it, bias 0, and a variance that makes sqrt(var + epsilon) exactly 1 in float.
            const Tensor& var = param(i, 1);
            const int64_t c = var.numel();
            std::vector<float> inv(static_cast<size_t>(c)), zeros(static_cast<size_t>(c), 0.0f), ones(static_cast<size_t>(c), 1.0f);
            for (size_t j = 0; j < inv.size(); ++j) inv[j] = 1.0f / std::max(std::sqrt(var.data<float>()[j]), 1e-7f);
            bool cf = val.rank > 2;
            std::string src = cf ? cfOf(in(0)) : nhwcOf(in(0));
            auto* n = add("BatchNormalization",
                          {src, initializer(node.name + "/scale", {c}, inv.data()), initializer(node.name + "/bias", {c}, zeros.data()),
                           paramInit(i, 0), initializer(node.name + "/unit_variance", {c}, ones.data())},
                          {outName(i, cf)}, node.name);
            attrFloat(n, "epsilon", 1e-10f);  // 1 + 1e-10 is 1 in float
            return {};
        }
        case OpKind::Dropout:
            val.alias = in(0);
            return {};
        case OpKind::Flatten: {
            auto* n = add("Flatten", {nhwcOf(in(0))}, {outName(i, false)}, node.name);
            attrInt(n, "axis", 1);
            return {};
        }
        case OpKind::Reshape: {
            std::vector<int64_t> shape = ni.output.dims();
            shape[0] = -1;
            add("Reshape", {nhwcOf(in(0)), initializerI64(node.name + "/shape", shape)}, {outName(i, false)}, node.name);
            return {};
        }
        case OpKind::Concatenate: {
            int rank = val.rank;
            int64_t axis = a.getInt("axis");
            if (axis < 0) axis += rank;
            bool cf = rank > 2;
            for (int p : ni.inputs) cf = cf && isChannelFirst(p);
            std::vector<std::string> ins;
            for (int p : ni.inputs) ins.push_back(cf ? cfOf(p) : nhwcOf(p));
            auto* n = add("Concat", ins, {outName(i, cf)}, node.name);
            attrInt(n, "axis", cf ? (axis == rank - 1 ? 1 : axis + 1) : axis);
            return {};
        }
        case OpKind::Add:
        case OpKind::Subtract:
        case OpKind::Multiply: {
            // Multiply's channel scales ([N,C] or [N,1,1,C]) broadcast in either layout; an [N,C]
            // one gets its unit axes back first.
            const int rank = val.rank;
            auto isScale = [&](size_t k) { return ni.inputShapes[k] != ni.output; };
            bool cf = rank > 2;
            for (size_t k = 0; k < ni.inputs.size(); ++k)
                if (!isScale(k)) cf = cf && isChannelFirst(in(k));
            std::vector<std::string> ins;
            for (size_t k = 0; k < ni.inputs.size(); ++k) {
                if (isScale(k) && ni.inputShapes[k].rank() == 2) {
                    std::vector<int64_t> axes;
                    for (int d = 0; d < rank - 2; ++d) axes.push_back(cf ? d + 2 : d + 1);
                    std::string u = fresh(gnode(in(k)).name + "__scale");
                    add("Unsqueeze", {nhwcOf(in(k)), initializerI64(node.name + "/axes", axes)}, {u},
                        node.name + "/unsqueeze");
                    ins.push_back(u);
                } else {
                    ins.push_back(cf ? cfOf(in(k)) : nhwcOf(in(k)));
                }
            }
            if (kind == OpKind::Subtract) {
                add("Sub", ins, {outName(i, cf)}, node.name);
                return {};
            }
            if (kind == OpKind::Add && ins.size() > 2) {
                add("Sum", ins, {outName(i, cf)}, node.name);
                return {};
            }
            const char* op = kind == OpKind::Add ? "Add" : "Mul";
            std::string acc = ins[0];
            for (size_t k = 1; k < ins.size(); ++k) {
                std::string out = k + 1 == ins.size() ? outName(i, cf) : fresh(node.name + "__part");
                add(op, {acc, ins[k]}, {out}, k + 1 == ins.size() ? node.name : node.name + "/part" + std::to_string(k));
                acc = out;
            }
            return {};
        }
        case OpKind::ReLU:
        case OpKind::LeakyReLU:
        case OpKind::ReLU6:
        case OpKind::GELU:
        case OpKind::Sigmoid:
        case OpKind::Tanh:
        case OpKind::SiLU:
        case OpKind::HardSigmoid:
        case OpKind::HardSwish:
        case OpKind::Clip: {
            bool cf = isChannelFirst(in(0)) && m_vals[static_cast<size_t>(resolve(in(0)))].nhwc.empty();
            std::string src = cf ? cfOf(in(0)) : nhwcOf(in(0));
            std::string out = outName(i, cf);
            if (kind == OpKind::ReLU) add("Relu", {src}, {out}, node.name);
            else if (kind == OpKind::SiLU) {
                // x·sigmoid(x): ONNX has no Swish before opset 24.
                std::string sig = fresh(node.name + "__sigmoid");
                add("Sigmoid", {src}, {sig}, node.name + "/sigmoid");
                add("Mul", {src, sig}, {out}, node.name);
            } else if (kind == OpKind::HardSigmoid) {
                auto* n = add("HardSigmoid", {src}, {out}, node.name);
                attrFloat(n, "alpha", 1.0f / 6.0f);
                attrFloat(n, "beta", 0.5f);
            } else if (kind == OpKind::HardSwish) add("HardSwish", {src}, {out}, node.name);
            else if (kind == OpKind::Clip)
                add("Clip", {src, scalar(node.name + "/min", static_cast<float>(a.getFloat("min"))),
                             scalar(node.name + "/max", static_cast<float>(a.getFloat("max")))}, {out}, node.name);
            else if (kind == OpKind::Sigmoid) add("Sigmoid", {src}, {out}, node.name);
            else if (kind == OpKind::Tanh) add("Tanh", {src}, {out}, node.name);
            else if (kind == OpKind::ReLU6)
                add("Clip", {src, scalar(node.name + "/min", 0.f), scalar(node.name + "/max", 6.f)}, {out}, node.name);
            else if (kind == OpKind::LeakyReLU)
                attrFloat(add("LeakyRelu", {src}, {out}, node.name), "alpha", static_cast<float>(a.getFloat("negative_slope")));
            else gelu(src, out, node.name, a.getBool("approximate"));
            return {};
        }
        case OpKind::Softmax: {
            auto* n = add("Softmax", {nhwcOf(in(0))}, {outName(i, false)}, node.name);
            attrInt(n, "axis", -1);
            return {};
        }
        case OpKind::Embedding: {
            std::string ids = nhwcOf(in(0));
            const Node& src = gnode(resolve(in(0)));
            bool intIds = src.op == "Input" && info(resolve(in(0))).attrs.getString("dtype") == "int32";
            if (!intIds) {
                std::string cast = fresh(node.name + "__ids");
                attrInt(add("Cast", {ids}, {cast}, node.name + "/ids"), "to", onnx::TensorProto::INT64);
                ids = cast;
            }
            auto* n = add("Gather", {paramInit(i, 0), ids}, {outName(i, false)}, node.name);
            attrInt(n, "axis", 0);
            return {};
        }
        case OpKind::Gather: return emitGather(i);
        case OpKind::Plugin: return emitPlugin(i);
        default:
            break;
        }
        return Error(ErrorCode::Unsupported, "operation " + node.op + " cannot be exported to ONNX")
            .withNode(node.name).with("what", node.op);
    }

    // Gather. Constant indices: ONNX Gather with them as an initializer, on the channels-last value.
    // Per-sample indices: a function of Kiln's domain (addGatherFunction).
    Status emitGather(int i) {
        const Node& node = gnode(i);
        const auto& ni = info(i);
        const auto& a = ni.attrs;
        const int64_t rank = ni.inputShapes[0].rank();
        int64_t axis = a.getInt("axis");
        if (axis < 0) axis += rank;
        const std::string data = nhwcOf(ni.inputs[0]);
        if (ni.inputs.size() == 1) {
            std::vector<int64_t> dims = a.getInts("indices_shape");
            const std::vector<int64_t> values = a.getInts("indices");
            if (dims.size() == 1 && dims[0] == -1) dims = {static_cast<int64_t>(values.size())};
            std::string idx = fresh(node.name + "/indices");
            auto* t = m_graph->add_initializer();
            t->set_name(idx);
            t->set_data_type(onnx::TensorProto::INT64);
            for (int64_t d : dims) t->add_dims(d);
            t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8));
            attrInt(add("Gather", {data, idx}, {outName(i, false)}, node.name), "axis", axis);
            return {};
        }
        // One function of Kiln's domain per form (data rank, gathered axis, indices rank), so that
        // Kiln's reader reads the node back as this Gather and other runtimes run its body.
        const int64_t m = ni.inputShapes[1].rank() - 1;
        const std::string fn = "GatherPerSample_r" + std::to_string(rank) + "_a" + std::to_string(axis) + "_i" + std::to_string(m);
        if (m_gatherFunctions.insert(fn).second) addGatherFunction(fn, rank, axis, m);
        m_useKilnDomain = true;
        auto* n = add(fn, {data, nhwcOf(ni.inputs[1])}, {outName(i, false)}, node.name);
        n->set_domain(kOnnxKilnDomain);
        return {};
    }

    // The body of a per-sample Gather: GatherND with batch_dims 1 picks along the first axis after
    // the batch, so the gathered axis is moved there first (Transpose) and the indices' axes moved
    // back to its place after; GatherND takes int64 indices only, so Kiln's (floats, or an int32
    // input) are cast.
    void addGatherFunction(const std::string& name, int64_t rank, int64_t axis, int64_t m) {
        auto* f = m_proto.add_functions();
        f->set_name(name);
        f->set_domain(kOnnxKilnDomain);
        f->set_doc_string("Y[b, ..., j, ...] = X[b, ..., Indices[b, j], ...] along axis " + std::to_string(axis) + " (per-sample gather)");
        f->add_input("X");
        f->add_input("Indices");
        f->add_output("Y");
        auto* o = f->add_opset_import();
        o->set_domain("");
        o->set_version(kOnnxOpset);
        auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
            auto* n = f->add_node();
            n->set_op_type(op);
            for (auto& s : in) n->add_input(s);
            n->add_output(out);
            return n;
        };
        attrInt(node("Cast", {"Indices"}, "ids"), "to", onnx::TensorProto::INT64);
        auto* axes = node("Constant", {}, "last");
        auto* a = axes->add_attribute();
        a->set_name("value_ints");
        a->set_type(onnx::AttributeProto::INTS);
        a->add_ints(-1);
        node("Unsqueeze", {"ids", "last"}, "ids_last");
        std::string x = "X";
        if (axis != 1) {
            std::vector<int64_t> perm{0, axis};
            for (int64_t d = 1; d < rank; ++d)
                if (d != axis) perm.push_back(d);
            attrInts(node("Transpose", {"X"}, "x_axis_first"), "perm", perm);
            x = "x_axis_first";
        }
        if (axis == 1) {
            attrInt(node("GatherND", {x, "ids_last"}, "Y"), "batch_dims", 1);
            return;
        }
        attrInt(node("GatherND", {x, "ids_last"}, "picked"), "batch_dims", 1);
        // picked: [batch, indices (m axes), the axes before the gathered one, those after].
        std::vector<int64_t> back{0};
        for (int64_t d = 0; d < axis - 1; ++d) back.push_back(1 + m + d);
        for (int64_t d = 0; d < m; ++d) back.push_back(1 + d);
        for (int64_t d = m + axis; d < m + rank - 1; ++d) back.push_back(d);
        attrInts(node("Transpose", {"picked"}, "Y"), "perm", back);
    }

    // MultiHeadAttention in standard operations on [batch, positions, features] values: MatMul and
    // Add for the projections (kernels [D, H, K] stored as [D, H·K]), Reshape and Transpose to
    // [batch, heads, positions, size], MatMul, Mul by 1/sqrt(key_dim), an Add of -1e9 above the
    // diagonal for the causal mask, Softmax over the last axis, MatMul with the values, and back.
    // Dropout on the attention weights is a training-time operation and is not exported.
    Status emitAttention(int i) {
        const Node& node = gnode(i);
        const auto& ni = info(i);
        const auto& a = ni.attrs;
        const std::string& n = node.name;
        const int64_t heads = a.getInt("num_heads"), key = a.getInt("key_dim");
        const int64_t value = a.getInt("value_dim") > 0 ? a.getInt("value_dim") : key;
        const int64_t d = ni.inputShapes[0][-1], tq = ni.inputShapes[0][1], tv = ni.inputShapes[1][1];
        const bool bias = a.getBool("use_bias");
        const std::string q = nhwcOf(ni.inputs[0]), v = nhwcOf(ni.inputs[1]);
        size_t k = 0;
        // Projection p of x to [batch, heads, positions, width] (perm {0, 2, 1, 3}) or, for the
        // keys, [batch, heads, width, positions] (perm {0, 2, 3, 1}).
        auto project = [&](const std::string& x, const std::string& what, int64_t width,
                           const std::vector<int64_t>& perm) {
            const Tensor& w = param(i, k++);
            std::string y = fresh(n + "__" + what);
            add("MatMul", {x, initializer(n + "/" + what + "/kernel", {d, heads * width}, w.data<float>())}, {y},
                n + "/" + what);
            if (bias) {
                const Tensor& b = param(i, k++);
                std::string yb = fresh(n + "__" + what + "_bias");
                add("Add", {y, initializer(n + "/" + what + "/bias", {heads * width}, b.data<float>())}, {yb},
                    n + "/" + what + "/bias");
                y = yb;
            }
            std::string r = fresh(n + "__" + what + "_heads");
            add("Reshape", {y, initializerI64(n + "/" + what + "/shape", {0, 0, heads, width})}, {r},
                n + "/" + what + "/split");
            std::string t = fresh(n + "__" + what + "_t");
            attrInts(add("Transpose", {r}, {t}, n + "/" + what + "/transpose"), "perm", perm);
            return t;
        };
        const std::string qh = project(q, "query", key, {0, 2, 1, 3});
        const std::string kh = project(v, "key", key, {0, 2, 3, 1});
        const std::string vh = project(v, "value", value, {0, 2, 1, 3});
        std::string scores = fresh(n + "__scores");
        add("MatMul", {qh, kh}, {scores}, n + "/scores");
        std::string scaled = fresh(n + "__scaled");
        add("Mul", {scores, scalar(n + "/scale", 1.0f / std::sqrt(static_cast<float>(key)))}, {scaled}, n + "/scale");
        if (a.getBool("use_causal_mask")) {
            std::vector<float> mask(static_cast<size_t>(tq * tv), 0.0f);
            for (int64_t r = 0; r < tq; ++r)
                for (int64_t c = r + 1; c < tv; ++c) mask[static_cast<size_t>(r * tv + c)] = -1e9f;
            std::string masked = fresh(n + "__masked");
            add("Add", {scaled, initializer(n + "/causal_mask", {tq, tv}, mask.data())}, {masked}, n + "/causal_mask");
            scaled = masked;
        }
        std::string probs = fresh(n + "__weights");
        attrInt(add("Softmax", {scaled}, {probs}, n + "/softmax"), "axis", -1);
        std::string heads_out = fresh(n + "__context");
        add("MatMul", {probs, vh}, {heads_out}, n + "/context");
        std::string back = fresh(n + "__context_t");
        attrInts(add("Transpose", {heads_out}, {back}, n + "/context/transpose"), "perm", {0, 2, 1, 3});
        std::string joined = fresh(n + "__context_joined");
        add("Reshape", {back, initializerI64(n + "/context/shape", {0, 0, heads * value})}, {joined}, n + "/context/join");
        const Tensor& wo = param(i, k++);
        const int64_t e = ni.output[-1];
        const std::string out = outName(i, false);
        std::string y = bias ? fresh(n + "__output") : out;
        add("MatMul", {joined, initializer(n + "/attention_output/kernel", {heads * value, e}, wo.data<float>())}, {y},
            n + "/attention_output");
        if (bias) {
            const Tensor& bo = param(i, k++);
            add("Add", {y, initializer(n + "/attention_output/bias", {e}, bo.data<float>())}, {out},
                n + "/attention_output/bias");
        }
        return {};
    }

    // A plugin operation: one node of its custom domain reading the NHWC input(s) and the
    // parameters as initializers, with every schema attribute (bools as 0/1 ints).
    Status emitPlugin(int i) {
        const Node& node = gnode(i);
        const auto& ni = info(i);
        const std::string opName = ops::pluginOpName(node);
        const auto dot = opName.find('.');
        const std::string domain = kOnnxPluginDomainPrefix + opName.substr(0, dot);
        const std::string local = opName.substr(dot + 1);
        std::vector<std::string> ins;
        for (int p : ni.inputs) ins.push_back(nhwcOf(p));
        for (size_t k = 0; k < ni.params.size(); ++k) ins.push_back(paramInit(i, k));
        auto* n = add(local, ins, {outName(i, false)}, node.name);
        n->set_domain(domain);
        for (const auto& [key, value] : ni.attrs.values()) {
            if (key == ops::kPluginOpAttr) continue;
            auto* at = n->add_attribute();
            at->set_name(key);
            std::visit(
                [&](const auto& x) {
                    using T = std::decay_t<decltype(x)>;
                    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
                        at->set_type(onnx::AttributeProto::INT);
                        at->set_i(static_cast<int64_t>(x));
                    } else if constexpr (std::is_same_v<T, double>) {
                        at->set_type(onnx::AttributeProto::FLOAT);
                        at->set_f(static_cast<float>(x));
                    } else if constexpr (std::is_same_v<T, std::string>) {
                        at->set_type(onnx::AttributeProto::STRING);
                        at->set_s(x);
                    } else {
                        at->set_type(onnx::AttributeProto::INTS);
                        for (int64_t v : x) at->add_ints(v);
                    }
                },
                value);
        }
        m_pluginDomains.insert(domain);
        m_warnings.push_back("node \"" + node.name + "\" runs the plugin operation " + opName +
                             ", exported as " + local + " of the custom domain " + domain +
                             "; an ONNX runtime needs that operation's implementation to run the model");
        return {};
    }

public:
    const std::vector<std::string>& warnings() const { return m_warnings; }

private:
    std::set<std::string> m_pluginDomains;
    std::vector<std::string> m_warnings;
    const ops::ModelInfo& m_model;
    const exec::ParamStore& m_params;
    const Int8Quantization* m_quant = nullptr;
    onnx::ModelProto m_proto;
    onnx::GraphProto* m_graph = nullptr;
    std::vector<Val> m_vals;
    std::set<std::string> m_used;
    std::set<std::string> m_nodeNames;
    std::map<int, std::string> m_paramNames;
    std::map<int, std::string> m_convWeights;
    bool m_useGelu = false;
    bool m_useGeluTanh = false;
    bool m_useKilnDomain = false;  // functions other than GELU (per-sample Gather)
    std::set<std::string> m_gatherFunctions;
};

}  // namespace

Result<std::string> exportOnnx(const ops::ModelInfo& model, const exec::ParamStore& params, const ModelMetadata& meta,
                               std::vector<std::string>* warnings, const Int8Quantization* quant) {
    KILN_TRY(ops::refusePlaceholders(model.graph, "export"));
    OnnxWriter writer(model, params, quant);
    KILN_ASSIGN(std::string bytes, writer.run(meta));
    if (warnings) warnings->insert(warnings->end(), writer.warnings().begin(), writer.warnings().end());
    return bytes;
}

Status saveOnnx(const std::string& path, const ops::ModelInfo& model, const exec::ParamStore& params,
                const ModelMetadata& meta, std::vector<std::string>* warnings) {
    KILN_ASSIGN(std::string bytes, exportOnnx(model, params, meta, warnings));
    return writeFileAtomic(path, bytes);
}

}  // namespace kiln::engine::io
