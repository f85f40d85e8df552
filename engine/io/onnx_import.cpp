// SPDX-License-Identifier: Apache-2.0
// ONNX → Kiln graph. Every ONNX value maps to a Kiln node plus a layout tag saying how the ONNX
// tensor relates to the Kiln (channels-last) tensor: the same, channel-first (a transpose of it),
// [N,C,1,1] for a pooled [N,C], a channel-first flatten (rows of a following Gemm permuted), or
// [N] with no dimension besides the batch (Kiln's [N,1]). Transposes only move tags; no Kiln node
// is made for them.
#include "engine/io/onnx_import.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "engine/core/rng.h"
#include "engine/exec/plan.h"
#include "engine/io/onnx_export.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::io {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxElements = int64_t{1} << 28;

enum class Layout { Same,
                    ChannelFirst,
                    Pooled11,
                    FlatChannelFirst,
                    Vector };

struct Ref {
    int node = -1;
    Layout layout = Layout::Same;
    std::vector<int64_t> cfDims;  // FlatChannelFirst: the channel-first dims [C, d1, d2...] flattened
};

struct Const {
    std::vector<int64_t> dims;
    std::vector<float> f;    // float data (always filled for numeric tensors)
    std::vector<int64_t> i;  // integer data (filled for integer tensors)
    // Per element, 1 where the value is the batch size, which is known only when the model runs
    // (a Shape of a value whose batch the inputs leave open; `i` holds -1 there). Empty when none.
    std::vector<uint8_t> batch;
    bool isInt = false;
    bool dependsOnBatch() const { return std::find(batch.begin(), batch.end(), 1) != batch.end(); }
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        return n;
    }
};

Error parseError(const std::string& msg) {
    return Error(ErrorCode::ParseError, msg).with("reason", msg);
}
Error unsupported(const std::string& node, const std::string& msg) {
    return Error(ErrorCode::Unsupported, msg).withNode(node).with("what", msg);
}

template <typename T>
bool readRaw(const std::string& raw, int64_t n, std::vector<T>& out) {
    if (raw.size() != static_cast<size_t>(n) * sizeof(T)) return false;
    out.resize(static_cast<size_t>(n));
    if (n > 0) std::memcpy(out.data(), raw.data(), raw.size());
    return true;
}

Result<Const> readTensor(const onnx::TensorProto& t, const std::string& where) {
    Const c;
    int64_t n = 1;
    for (int64_t d : t.dims()) {
        if (d < 0 || d > kMaxDim) return parseError("tensor \"" + t.name() + "\" of " + where + " has an invalid dimension " + std::to_string(d));
        n *= d;
        if (n > kMaxElements) return parseError("tensor \"" + t.name() + "\" of " + where + " is too large");
        c.dims.push_back(d);
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0)
        return Error(ErrorCode::Unsupported, "tensor \"" + t.name() + "\" keeps its data in an external file")
            .with("what", "external data");
    const bool raw = t.has_raw_data();
    auto bad = [&]() { return parseError("tensor \"" + t.name() + "\" of " + where + " holds a wrong number of values"); };
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
        if (raw) {
            if (!readRaw(t.raw_data(), n, c.f)) return bad();
        } else {
            if (t.float_data_size() != n) return bad();
            c.f.assign(t.float_data().begin(), t.float_data().end());
        }
        break;
    case onnx::TensorProto::DOUBLE: {
        std::vector<double> d;
        if (raw) {
            if (!readRaw(t.raw_data(), n, d)) return bad();
        } else {
            if (t.double_data_size() != n) return bad();
            d.assign(t.double_data().begin(), t.double_data().end());
        }
        c.f.assign(d.begin(), d.end());
        break;
    }
    case onnx::TensorProto::INT64:
        c.isInt = true;
        if (raw) {
            if (!readRaw(t.raw_data(), n, c.i)) return bad();
        } else {
            if (t.int64_data_size() != n) return bad();
            c.i.assign(t.int64_data().begin(), t.int64_data().end());
        }
        break;
    case onnx::TensorProto::INT32: {
        c.isInt = true;
        std::vector<int32_t> v;
        if (raw) {
            if (!readRaw(t.raw_data(), n, v)) return bad();
        } else {
            if (t.int32_data_size() != n) return bad();
            v.assign(t.int32_data().begin(), t.int32_data().end());
        }
        c.i.assign(v.begin(), v.end());
        break;
    }
    default:
        return Error(ErrorCode::Unsupported, "tensor \"" + t.name() + "\" of " + where + " has data type " +
                                                 std::to_string(t.data_type()) + ", which Kiln does not read")
            .with("what", "tensor data type");
    }
    if (c.isInt) c.f.assign(c.i.begin(), c.i.end());
    return c;
}

std::vector<int64_t> toFirst(const std::vector<int64_t>& d) {
    if (d.size() <= 2) return d;
    std::vector<int64_t> r{d[0], d.back()};
    r.insert(r.end(), d.begin() + 1, d.end() - 1);
    return r;
}

// Keras's layer-name rule: "Conv2D" -> "conv2d", "BatchNormalization" -> "batch_normalization".
std::string snakeCase(const std::string& name) {
    static const std::regex words("(.)([A-Z][a-z0-9]+)");
    static const std::regex humps("([a-z])([A-Z])");
    // Op names from a file can be anything: a short prefix keeps std::regex's recursion shallow.
    const std::string head = name.substr(0, 48);
    std::string s = std::regex_replace(std::regex_replace(head, words, "$1_$2"), humps, "$1_$2");
    std::string out;
    for (char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '_';
    }
    return out.empty() ? std::string("node") : out;
}

// A JSON string of `s` (at most 4 KiB), with bytes that are not UTF-8 replaced.
nlohmann::json utf8Json(const std::string& s) {
    const std::string text = nlohmann::json(s.substr(0, 4096)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return nlohmann::json::parse(text);
}

nlohmann::json attributeJson(const onnx::AttributeProto& a) {
    using A = onnx::AttributeProto;
    auto dims = [](const onnx::TensorProto& t) { return std::vector<int64_t>(t.dims().begin(), t.dims().end()); };
    switch (a.type()) {
    case A::FLOAT: return std::isfinite(a.f()) ? nlohmann::json(a.f()) : nlohmann::json(std::to_string(a.f()));
    case A::INT: return a.i();
    case A::STRING: return utf8Json(a.s());
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::FLOATS: {
        nlohmann::json v = nlohmann::json::array();
        for (float f : a.floats()) v.push_back(std::isfinite(f) ? nlohmann::json(f) : nlohmann::json(std::to_string(f)));
        return v;
    }
    case A::STRINGS: {
        nlohmann::json v = nlohmann::json::array();
        for (const auto& s : a.strings()) v.push_back(utf8Json(s));
        return v;
    }
    case A::TENSOR: return {{"tensor", dims(a.t())}, {"data_type", a.t().data_type()}};
    case A::GRAPH: return {{"graph", a.g().name()}, {"nodes", a.g().node_size()}};
    default: return {{"attribute_type", static_cast<int>(a.type())}};
    }
}

class Importer {
public:
    explicit Importer(ImportOptions options) : m_opt(options) {}

    Result<ImportedModel> run(const onnx::ModelProto& m) {
        for (const auto& o : m.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") m_out.opset = o.version();
        if (m.ir_version() < 3) return parseError("the model's ir_version " + std::to_string(m.ir_version()) + " is not supported (3 or later)");
        if (m_out.opset < 7 && m.opset_import_size() > 0) return parseError("the default-domain opset " + std::to_string(m_out.opset) + " is too old (7 or later)");
        if (!m.has_graph()) return parseError("the model has no graph");
        for (const auto& p : m.metadata_props()) m_out.metadata[p.key()] = p.value();
        m_out.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
        const auto& g = m.graph();
        if (m_opt.placeholders) collectValueShapes(m);

        for (const auto& t : g.initializer()) {
            if (t.name().empty()) return parseError("an initializer has no name");
            KILN_ASSIGN(Const c, readTensor(t, "the initializers"));
            m_consts[t.name()] = std::move(c);
        }
        for (const auto& n : g.node())
            for (const auto& s : n.input()) ++m_uses[s];
        for (const auto& o : g.output()) ++m_uses[o.name()];

        for (const auto& in : g.input()) {
            if (m_consts.count(in.name())) continue;
            KILN_TRY(addInput(in, g));
        }
        for (const auto& n : g.node()) {
            const size_t before = m_out.graph.nodes.size();
            NodeMapping map;
            map.sourceName = n.name().empty() ? (n.output_size() ? n.output(0) : n.op_type()) : n.name();
            map.sourceOp = (n.domain().empty() || n.domain() == "ai.onnx") ? n.op_type() : n.domain() + "." + n.op_type();
            Status st;
            if (m_opt.placeholders && readsUnknown(n)) {
                st = placeholder(n, "it reads a value whose shape is unknown", map);
            } else {
                st = convert(n);
                const bool mappable = st.ok() || (st.error().code != ErrorCode::UnknownOp && st.error().code != ErrorCode::Unsupported);
                if (!mappable && m_opt.placeholders && n.op_type() != "Constant" && m_out.graph.nodes.size() == before)
                    st = placeholder(n, st.error().message, map);
                else if (st.ok())
                    describe(n, before, map);
            }
            if (!st.ok()) {
                Error e = st.error();
                if (e.node.empty()) e.withNode(n.name().empty() ? (n.output_size() ? n.output(0) : n.op_type()) : n.name());
                return e;
            }
            m_out.mapping.push_back(std::move(map));
        }
        if (g.output_size() == 0) return parseError("the graph has no outputs");
        std::set<int> seen;
        for (const auto& o : g.output()) {
            auto it = m_values.find(o.name());
            if (it == m_values.end() && m_consts.count(o.name()))
                return unsupported(o.name(), "graph output \"" + o.name() + "\" is a constant, computed while reading; Kiln's outputs are computed from the inputs");
            if (it == m_values.end()) return parseError("graph output \"" + o.name() + "\" is not produced by any node");
            const Ref& r = it->second;
            if (r.layout == Layout::ChannelFirst || r.layout == Layout::FlatChannelFirst)
                return unsupported(o.name(), "graph output \"" + o.name() + "\" is channel-first; Kiln outputs are channels-last");
            if (!seen.insert(r.node).second)
                return unsupported(o.name(), "two graph outputs are the same value");
            m_out.graph.outputs.push_back(m_out.graph.nodes[static_cast<size_t>(r.node)].name);
            m_out.outputs.push_back(o.name());
        }
        // Placeholders of unknown shape leave the graph unanalysable until they are replaced;
        // the editor shows that on the node.
        if (m_unknown.empty()) {
            auto analysed = ops::analyzeModel(m_out.graph);
            if (!analysed.ok()) return analysed.error();
        }
        if (m_opt.readableNames) renameReadably();
        return std::move(m_out);
    }

private:
    // ---- import bookkeeping -------------------------------------------------------------------
    // Shapes of every value ONNX's own shape inference can tell (on a copy of the model), for
    // placeholder outputs; -1 marks an unknown dimension.
    void collectValueShapes(const onnx::ModelProto& m) {
        onnx::ModelProto copy = m;
        // ONNX's inference divides by a convolution's or pooling's strides without checking them
        // (a zero stride is a division by zero, which no exception catches): such a file is left
        // to the node's own checks below.
        const bool inferable = std::none_of(m.graph().node().begin(), m.graph().node().end(), [](const onnx::NodeProto& n) {
            return std::any_of(n.attribute().begin(), n.attribute().end(), [](const onnx::AttributeProto& a) {
                return a.name() == "strides" && std::any_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v <= 0; });
            });
        });
        try {
            if (inferable) onnx::shape_inference::InferShapes(copy);
        } catch (const std::exception&) {
            // Inference is a help only: without it placeholders keep the shapes the file declares.
        }
        auto take = [&](const onnx::ValueInfoProto& v) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
            std::vector<int64_t> dims;
            for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
            m_valueDims[v.name()] = std::move(dims);
        };
        for (const auto* g : {&m.graph(), &copy.graph()}) {
            for (const auto& v : g->value_info()) take(v);
            for (const auto& v : g->output()) take(v);
        }
        // An operation that keeps its input's shape reveals that shape through its output's: the
        // value an unknown custom operation makes gets a shape when the file states the shape of
        // an activation or normalisation that reads it. Walked from the last node back, so that
        // it carries through a chain of them.
        static const std::set<std::string> keepsShape{
            "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
            "Tanh", "Softplus", "Softsign", "Gelu", "Erf", "Abs", "Neg", "Exp", "Log",
            "Sqrt", "Reciprocal", "Clip", "Dropout", "Identity", "Softmax", "LogSoftmax", "BatchNormalization",
            "InstanceNormalization", "LpNormalization", "Mish", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign"};
        auto complete = [](const std::vector<int64_t>& d) {
            return d.size() >= 2 && std::all_of(d.begin() + 1, d.end(), [](int64_t x) { return x > 0; });
        };
        const auto& nodes = m.graph().node();
        for (int k = nodes.size() - 1; k >= 0; --k) {
            const auto& n = nodes[k];
            if (!(n.domain().empty() || n.domain() == "ai.onnx") || !keepsShape.count(n.op_type())) continue;
            if (n.input_size() < 1 || n.output_size() < 1 || n.input(0).empty()) continue;
            auto out = m_valueDims.find(n.output(0));
            if (out == m_valueDims.end() || !complete(out->second)) continue;
            auto in = m_valueDims.find(n.input(0));
            if (in != m_valueDims.end() && complete(in->second)) continue;
            if (in != m_valueDims.end() && in->second.size() != out->second.size()) continue;  // the file says otherwise
            m_valueDims[n.input(0)] = out->second;
        }
    }

    bool readsUnknown(const onnx::NodeProto& n) const {
        for (const auto& s : n.input()) {
            auto it = m_values.find(s);
            if (it != m_values.end() && m_unknown.count(it->second.node)) return true;
        }
        return false;
    }

    void describe(const onnx::NodeProto& n, size_t before, NodeMapping& map) {
        using K = NodeMapping::Kind;
        if (m_out.graph.nodes.size() > before) {
            map.kind = K::Node;
            for (size_t k = before; k < m_out.graph.nodes.size(); ++k) map.kilnNodes.push_back(m_out.graph.nodes[k].name);
            return;
        }
        if (n.output_size() == 0) return;
        if (m_consts.count(n.output(0))) {
            map.kind = K::Constant;
            return;
        }
        auto it = m_values.find(n.output(0));
        if (it == m_values.end()) return;
        static const std::set<std::string> folds{"Relu", "Clip", "Sigmoid", "Tanh", "Softmax", "Gelu", "GeluTanh", "Add", "Mul", "Sub"};
        map.kind = folds.count(n.op_type()) ? K::Folded : K::PassThrough;
        map.kilnNodes = {kname(it->second.node)};
    }

    // Keeps an operation Kiln cannot map as a Placeholder node: its ONNX op, attributes and
    // constant inputs, and its output shape when ONNX's shape inference or the file knows it.
    Status placeholder(const onnx::NodeProto& n, const std::string& reason, NodeMapping& map) {
        if (n.output_size() < 1 || n.output(0).empty()) return parseError(n.op_type() + " has no output");
        if (m_values.count(n.output(0)) || m_consts.count(n.output(0))) return parseError("value \"" + n.output(0) + "\" is produced twice");
        for (int k = 1; k < n.output_size(); ++k)
            if (!n.output(k).empty() && m_uses[n.output(k)] > 0)
                return unsupported(n.name(), n.op_type() + " is not supported (" + reason + "), and it cannot stay as a placeholder because other nodes read its output " +
                                                 std::to_string(k + 1));
        Node node;
        node.name = nameFor(n);
        node.op = "Placeholder";
        nlohmann::json constInputs = nlohmann::json::array();
        nlohmann::json inputShapes = nlohmann::json::array();  // ONNX shapes, -1 for unknown sizes
        const Ref* first = nullptr;
        bool unknown = false;
        for (int k = 0; k < n.input_size(); ++k) {
            const std::string& s = n.input(k);
            if (s.empty()) continue;
            auto known = m_valueDims.find(s);
            inputShapes.push_back({{"name", s}, {"shape", known == m_valueDims.end() ? nlohmann::json(nullptr) : nlohmann::json(known->second)}});
            if (auto it = m_values.find(s); it != m_values.end()) {
                if (!first) first = &it->second;
                node.inputs.push_back(kname(it->second.node));
                unknown = unknown || m_unknown.count(it->second.node);
            } else if (auto c = m_consts.find(s); c != m_consts.end()) {
                constInputs.push_back({{"input", k}, {"name", s}, {"shape", c->second.dims}});
            } else {
                return parseError("input \"" + s + "\" of " + n.op_type() + " is not produced by an earlier node");
            }
        }
        node.attrs.set("onnx_op", n.op_type());
        if (!n.domain().empty() && n.domain() != "ai.onnx") node.attrs.set("onnx_domain", n.domain());
        nlohmann::json attrs = nlohmann::json::object();
        for (const auto& a : n.attribute()) attrs[a.name()] = attributeJson(a);
        node.attrs.set("onnx_attributes", attrs.dump());
        if (!constInputs.empty()) node.extra["onnx_constant_inputs"] = constInputs;
        node.extra["onnx_input_shapes"] = inputShapes;
        // The output shape in Kiln's layout: a 4-D result of a channel-first input is channel-first.
        // A placeholder that reads a value of unknown shape still takes the shape the file states
        // for its output, so that the nodes after it map.
        std::vector<int64_t> out;
        Layout layout = Layout::Same;
        const bool channelFirstIn = first && (first->layout == Layout::ChannelFirst || m_unknownChannelFirst.count(first->node));
        if (auto it = m_valueDims.find(n.output(0)); it != m_valueDims.end() && it->second.size() >= 2) {
            const auto& d = it->second;
            int64_t numel = 1;
            bool ok = true;
            for (size_t k = 1; k < d.size() && ok; ++k) {
                ok = d[k] > 0 && d[k] <= kMaxDim;
                if (ok) numel *= d[k];
                ok = ok && numel <= kMaxElements;
            }
            if (ok) {
                out.assign(d.begin() + 1, d.end());
                if (channelFirstIn && d.size() == 4) {
                    out = {d[2], d[3], d[1]};
                    layout = Layout::ChannelFirst;
                }
            }
        }
        const std::string name = node.name;
        int idx = -1;
        if (!out.empty() && !unknown) {
            node.attrs.set("output_shape", out);
            KILN_ASSIGN(idx, addNode(std::move(node)));
        } else if (!out.empty()) {
            // Its inputs' shapes are unknown, so Kiln's shape rule cannot run; the shape is the file's.
            node.attrs.set("output_shape", out);
            std::vector<int64_t> full{Shape::kBatch};
            full.insert(full.end(), out.begin(), out.end());
            m_out.graph.nodes.push_back(std::move(node));
            m_shapes.emplace_back(full);
            idx = static_cast<int>(m_out.graph.nodes.size()) - 1;
        } else {
            m_out.graph.nodes.push_back(std::move(node));
            m_shapes.emplace_back();
            idx = static_cast<int>(m_out.graph.nodes.size()) - 1;
            m_unknown.insert(idx);
            // Its values keep the channel order of its input, as far as a later shape can tell.
            if (channelFirstIn) m_unknownChannelFirst.insert(idx);
        }
        map.kind = NodeMapping::Kind::Placeholder;
        map.kilnNodes = {name};
        map.reason = reason;
        m_out.placeholders.push_back(name);
        return setOutput(n, Ref{idx, layout, {}});
    }

    // Keras-style names for every node but the inputs; the ONNX name stays in "onnx_node".
    void renameReadably() {
        std::set<std::string> used;
        for (const auto& node : m_out.graph.nodes)
            if (node.op == "Input") used.insert(node.name);
        std::map<std::string, std::string> renamed;
        std::map<std::string, int> counters;
        for (auto& node : m_out.graph.nodes) {
            if (node.op == "Input") continue;
            std::string base = snakeCase(node.op == "Placeholder" ? node.attrs.getString("onnx_op") : node.op);
            std::string name;
            int& k = counters[base];
            do {
                name = k == 0 ? base : base + "_" + std::to_string(k);
                ++k;
            } while (used.count(name));
            used.insert(name);
            node.extra["onnx_node"] = node.name;
            renamed[node.name] = name;
            node.name = name;
        }
        auto fix = [&](std::string& s) {
            if (auto it = renamed.find(s); it != renamed.end()) s = it->second;
        };
        for (auto& node : m_out.graph.nodes)
            for (auto& in : node.inputs) fix(in);
        for (auto& o : m_out.graph.outputs) fix(o);
        for (auto& p : m_out.placeholders) fix(p);
        for (auto& map : m_out.mapping)
            for (auto& k : map.kilnNodes) fix(k);
        for (auto& w : m_out.weights) {
            const auto slash = w.name.rfind('/');  // parameter names have none; node names may
            std::string node = w.name.substr(0, slash);
            fix(node);
            w.name = node + w.name.substr(slash);
        }
    }

    // ---- attributes -------------------------------------------------------------------------
    const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) const {
        for (const auto& a : n.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    Result<int64_t> attrInt(const onnx::NodeProto& n, const std::string& name, int64_t def) const {
        const auto* a = attr(n, name);
        if (!a) return def;
        if (a->type() != onnx::AttributeProto::INT && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_i()))
            return parseError("attribute \"" + name + "\" of " + n.op_type() + " must be an integer");
        return a->i();
    }
    Result<float> attrFloat(const onnx::NodeProto& n, const std::string& name, float def) const {
        const auto* a = attr(n, name);
        if (!a) return def;
        if (a->type() != onnx::AttributeProto::FLOAT && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_f()))
            return parseError("attribute \"" + name + "\" of " + n.op_type() + " must be a float");
        return a->f();
    }
    Result<std::vector<int64_t>> attrInts(const onnx::NodeProto& n, const std::string& name,
                                          std::vector<int64_t> def) const {
        const auto* a = attr(n, name);
        if (!a) return def;
        if (a->type() != onnx::AttributeProto::INTS && a->type() != onnx::AttributeProto::UNDEFINED)
            return parseError("attribute \"" + name + "\" of " + n.op_type() + " must be a list of integers");
        if (a->ints_size() > 16) return parseError("attribute \"" + name + "\" of " + n.op_type() + " is too long");
        return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    }
    Result<std::string> attrString(const onnx::NodeProto& n, const std::string& name, std::string def) const {
        const auto* a = attr(n, name);
        if (!a) return def;
        if (a->type() != onnx::AttributeProto::STRING && !(a->type() == onnx::AttributeProto::UNDEFINED && a->has_s()))
            return parseError("attribute \"" + name + "\" of " + n.op_type() + " must be a string");
        return a->s();
    }

    // ---- values -----------------------------------------------------------------------------
    Result<Ref> ref(const onnx::NodeProto& n, int k) const {
        if (k >= n.input_size() || n.input(k).empty())
            return parseError(n.op_type() + " needs input " + std::to_string(k + 1));
        auto it = m_values.find(n.input(k));
        if (it == m_values.end()) {
            if (auto c = m_consts.find(n.input(k)); c != m_consts.end())
                return unsupported(n.name(), "input \"" + n.input(k) + "\" of " + n.op_type() +
                                                 (c->second.dependsOnBatch() ? " is computed from the batch size, which Kiln cannot use there"
                                                                             : " is a constant, which Kiln cannot use there"));
            return parseError("input \"" + n.input(k) + "\" of " + n.op_type() + " is not produced by an earlier node");
        }
        return it->second;
    }
    // A constant input: an initializer, a Constant or a value folded while reading. Its values are
    // plain numbers: one that holds the batch size (batchConstant) is not returned.
    const Const* constant(const onnx::NodeProto& n, int k) const {
        const Const* c = batchConstant(n, k);
        return c && !c->dependsOnBatch() ? c : nullptr;
    }
    // A constant input, also one holding the batch size (a shape read with Shape): only constant
    // folding and Reshape take those.
    const Const* batchConstant(const onnx::NodeProto& n, int k) const {
        if (k >= n.input_size() || n.input(k).empty()) return nullptr;
        auto it = m_consts.find(n.input(k));
        return it == m_consts.end() ? nullptr : &it->second;
    }
    Result<const Const*> needConst(const onnx::NodeProto& n, int k, const std::string& what) const {
        const Const* c = constant(n, k);
        if (!c && batchConstant(n, k))
            return unsupported(n.name(), what + " of " + n.op_type() + " is computed from the batch size; Kiln needs it fixed when reading");
        if (!c) return unsupported(n.name(), what + " of " + n.op_type() + " must be a constant (initializer)");
        return c;
    }
    const Shape& kshape(int node) const { return m_shapes[static_cast<size_t>(node)]; }
    std::vector<int64_t> onnxDims(const Ref& r) const {
        const auto& d = kshape(r.node).dims();
        switch (r.layout) {
        case Layout::Same: return d;
        case Layout::ChannelFirst: return toFirst(d);
        case Layout::Pooled11: return {d[0], d[1], 1, 1};
        case Layout::FlatChannelFirst: return d;
        case Layout::Vector: return {d[0]};
        }
        return d;
    }
    bool spatialOnes(const Ref& r) const {
        const auto& d = kshape(r.node).dims();
        for (size_t k = 1; k + 1 < d.size(); ++k)
            if (d[k] != 1) return false;
        return true;
    }
    Status setOutput(const onnx::NodeProto& n, Ref r) {
        if (n.output_size() < 1 || n.output(0).empty()) return parseError(n.op_type() + " has no output");
        if (m_values.count(n.output(0)) || m_consts.count(n.output(0)))
            return parseError("value \"" + n.output(0) + "\" is produced twice");
        m_values[n.output(0)] = std::move(r);
        return {};
    }

    std::string uniqueName(const std::string& preferred) {
        std::string base;
        for (char ch : preferred) base += (ch == '\0') ? '_' : ch;
        if (base.empty()) base = "node";
        std::string name = base;
        for (int k = 1; m_names.count(name); ++k) name = base + "_" + std::to_string(k);
        m_names.insert(name);
        return name;
    }
    std::string nameFor(const onnx::NodeProto& n) {
        return uniqueName(!n.name().empty() ? n.name() : n.output_size() ? n.output(0)
                                                                         : n.op_type());
    }

    // Adds a Kiln node, resolving attributes and inferring its shape; returns its index.
    Result<int> addNode(Node node) {
        const ops::OpDef* def = ops::findOp(node.op);
        if (!def) return Error(ErrorCode::Internal, "unknown Kiln op " + node.op);
        KILN_ASSIGN(AttrMap attrs, ops::resolveAttrs(*def, node));
        std::vector<Shape> ins;
        for (const auto& s : node.inputs) ins.push_back(m_shapes[static_cast<size_t>(m_out.graph.find(s))]);
        if (static_cast<int>(ins.size()) < def->minInputs || (def->maxInputs >= 0 && static_cast<int>(ins.size()) > def->maxInputs))
            return parseError(node.op + " got " + std::to_string(ins.size()) + " inputs");
        ops::ShapeContext ctx{node, attrs, ins};
        KILN_ASSIGN(Shape out, def->shape(ctx));
        m_out.graph.nodes.push_back(std::move(node));
        m_shapes.push_back(std::move(out));
        return static_cast<int>(m_out.graph.nodes.size()) - 1;
    }
    const std::string& kname(int node) const { return m_out.graph.nodes[static_cast<size_t>(node)].name; }
    void addWeight(const std::string& node, const std::string& param, const Shape& shape, const std::vector<float>& v) {
        Tensor t(shape);
        std::memcpy(t.raw(), v.data(), v.size() * sizeof(float));
        m_out.weights.push_back({node + "/" + param, std::move(t)});
    }
    NamedTensor* findWeight(const std::string& name) {
        for (auto& w : m_out.weights)
            if (w.name == name) return &w;
        return nullptr;
    }

    Status addInput(const onnx::ValueInfoProto& in, const onnx::GraphProto& g) {
        if (in.name().empty()) return parseError("a graph input has no name");
        if (!in.type().has_tensor_type()) return unsupported(in.name(), "graph input \"" + in.name() + "\" is not a tensor");
        const auto& tt = in.type().tensor_type();
        int et = tt.elem_type();
        bool ints = et == onnx::TensorProto::INT32 || et == onnx::TensorProto::INT64;
        if (et != onnx::TensorProto::FLOAT && !ints)
            return unsupported(in.name(), "graph input \"" + in.name() + "\" has element type " + std::to_string(et) + "; Kiln reads float and integer inputs");
        if (!tt.has_shape()) return unsupported(in.name(), "graph input \"" + in.name() + "\" has no shape");
        const auto& dims = tt.shape().dim();
        if (dims.size() < 1 || dims.size() > 6)
            return unsupported(in.name(), "graph input \"" + in.name() + "\" must have a batch and at most 5 more dimensions");
        std::vector<int64_t> shape;
        for (int k = 1; k < dims.size(); ++k) {
            if (!dims[k].has_dim_value() || dims[k].dim_value() <= 0 || dims[k].dim_value() > kMaxDim)
                return unsupported(in.name(), "graph input \"" + in.name() + "\" needs fixed positive sizes after the batch dimension");
            shape.push_back(dims[k].dim_value());
        }
        // The batch size the file fixes, when every input that fixes one agrees: exporters write
        // it literally into reshapes ([1, -1] for a model exported with batch 1).
        if (dims[0].has_dim_value() && dims[0].dim_value() > 0) {
            if (m_batch == 0) m_batch = dims[0].dim_value();
            else if (m_batch != dims[0].dim_value()) m_batch = -1;
        }
        // A rank-4 input read by a channel-first op (or a Resize), directly or through a Pad (as
        // exporters write "same" padding), is NCHW; Kiln's Input is its NHWC form. So is one whose
        // Pad leaves the batch and the second axis alone and pads the last: NCHW height and width.
        auto channelFirstReader = [](const std::string& op) {
            return op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool" ||
                   op == "BatchNormalization" || op == "Resize";
        };
        bool cf = false;
        if (shape.size() == 3) {
            std::set<std::string> readChannelFirst;
            for (const auto& n : g.node())
                if (n.input_size() > 0 && channelFirstReader(n.op_type())) readChannelFirst.insert(n.input(0));
            for (const auto& n : g.node()) {
                if (n.input_size() == 0 || n.input(0) != in.name()) continue;
                if (channelFirstReader(n.op_type()) || (n.op_type() == "Pad" && n.output_size() > 0 && readChannelFirst.count(n.output(0))))
                    cf = true;
                if (n.op_type() == "Pad") {
                    auto p = padsOf(n);
                    if (p && p->size() == 8 && !(*p)[0] && !(*p)[1] && !(*p)[4] && !(*p)[5] && ((*p)[3] || (*p)[7])) cf = true;
                }
            }
        }
        if (cf) shape = {shape[1], shape[2], shape[0]};
        // [N] (one number per sample) is Kiln's [N, 1].
        const bool vector = shape.empty();
        if (vector) shape = {1};
        if (m_names.count(in.name())) return parseError("graph input \"" + in.name() + "\" is declared twice");
        m_names.insert(in.name());
        Node node;
        node.name = in.name();
        node.op = "Input";
        node.attrs.set("shape", shape);
        if (ints) node.attrs.set("dtype", std::string("int32"));
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        m_values[in.name()] = Ref{idx, cf ? Layout::ChannelFirst : vector ? Layout::Vector
                                                                          : Layout::Same,
                                  {}};
        m_out.inputs.push_back(in.name());
        m_out.inputChannelFirst.push_back(cf);
        return {};
    }

    // The pads of a Pad node over all `rank` axes (begins, then ends), from its constant pads
    // input (opset 11 on, with the axes input of opset 18) or its attribute; nullopt when they are
    // not constant or do not fit `rank`.
    std::optional<std::vector<int64_t>> padsOf(const onnx::NodeProto& n, size_t rank = 4) const {
        std::vector<int64_t> p;
        if (n.input_size() > 1 && !n.input(1).empty()) {
            const Const* c = constant(n, 1);
            if (!c || !c->isInt) return std::nullopt;
            p = c->i;
        } else {
            const auto* a = attr(n, "pads");
            if (!a || a->ints_size() > 16) return std::nullopt;
            p.assign(a->ints().begin(), a->ints().end());
        }
        if (n.input_size() > 3 && !n.input(3).empty()) {
            const Const* ax = constant(n, 3);
            if (!ax || !ax->isInt || p.size() != 2 * ax->i.size()) return std::nullopt;
            std::vector<int64_t> full(2 * rank, 0);
            const size_t m = ax->i.size();
            for (size_t k = 0; k < m; ++k) {
                int64_t a = ax->i[k] < 0 ? ax->i[k] + static_cast<int64_t>(rank) : ax->i[k];
                if (a < 0 || a >= static_cast<int64_t>(rank)) return std::nullopt;
                full[static_cast<size_t>(a)] = p[k];
                full[static_cast<size_t>(a) + rank] = p[k + m];
            }
            p = std::move(full);
        }
        if (p.size() != 2 * rank) return std::nullopt;
        return p;
    }

    // Whether every value the Kiln node `node` gives is >= 0: an activation that cannot go below
    // zero (also folded into a convolution or Dense), or pooling, padding and upsampling of such.
    bool nonNegative(int node, int depth = 0) const {
        const Node& k = m_out.graph.nodes[static_cast<size_t>(node)];
        static const std::set<std::string> acts{"relu", "relu6", "sigmoid", "softmax"};
        if (k.op == "ReLU" || k.op == "ReLU6" || k.op == "Sigmoid" || k.op == "HardSigmoid" || k.op == "Softmax") return true;
        if ((k.op == "Conv2D" || k.op == "DepthwiseConv2D" || k.op == "Dense") && k.attrs.has("activation"))
            return acts.count(k.attrs.getString("activation")) != 0;
        if (k.op == "Clip") return k.attrs.getFloat("min") >= 0.0;
        if ((k.op == "MaxPooling2D" || k.op == "ZeroPadding2D" || k.op == "UpSampling2D" || k.op == "GlobalMaxPooling2D") && depth < 8 &&
            k.inputs.size() == 1 && m_out.graph.find(k.inputs[0]) >= 0)
            return nonNegative(m_out.graph.find(k.inputs[0]), depth + 1);
        return false;
    }

    // Folds an activation into the Dense/Conv2D that produced `r` when nothing else reads it.
    bool tryFold(const onnx::NodeProto& n, const Ref& r, const std::string& act) {
        if (n.input_size() < 1 || m_uses[n.input(0)] != 1) return false;
        Node& prod = m_out.graph.nodes[static_cast<size_t>(r.node)];
        if (prod.op != "Dense" && prod.op != "Conv2D" && prod.op != "DepthwiseConv2D") return false;
        if (prod.attrs.has("activation") && prod.attrs.getString("activation") != "linear") return false;
        if (act == "softmax" && prod.op != "Dense") return false;
        prod.attrs.set("activation", act);
        return true;
    }

    Status activationNode(const onnx::NodeProto& n, const std::string& op, const std::string& fold,
                          const AttrMap& attrs = {}) {
        KILN_ASSIGN(Ref r, ref(n, 0));
        if (r.layout == Layout::FlatChannelFirst)
            return unsupported(n.name(), n.op_type() + " on a channel-first flatten is not supported");
        if (!fold.empty() && tryFold(n, r, fold)) return setOutput(n, r);
        Node node;
        node.name = nameFor(n);
        node.op = op;
        node.inputs = {kname(r.node)};
        node.attrs = attrs;
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, r.layout, r.cfDims});
    }

    Result<std::string> paddingMode(const onnx::NodeProto& n, const std::vector<int64_t>& in,
                                    const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                                    const std::vector<int64_t>& d) {
        KILN_ASSIGN(std::string autoPad, attrString(n, "auto_pad", "NOTSET"));
        if (autoPad == "SAME_UPPER") return std::string("same");
        if (autoPad == "VALID") return std::string("valid");
        if (autoPad != "NOTSET") return unsupported(n.name(), n.op_type() + " auto_pad " + autoPad + " is not supported");
        KILN_ASSIGN(auto pads, attrInts(n, "pads", {0, 0, 0, 0}));
        if (pads.size() != 4) return parseError(n.op_type() + " pads must have 4 entries");
        if (pads == std::vector<int64_t>{0, 0, 0, 0}) return std::string("valid");
        for (int a = 0; a < 2; ++a) {
            int64_t out = (in[static_cast<size_t>(a)] + s[static_cast<size_t>(a)] - 1) / s[static_cast<size_t>(a)];
            int64_t eff = (k[static_cast<size_t>(a)] - 1) * d[static_cast<size_t>(a)] + 1;
            int64_t total = std::max<int64_t>((out - 1) * s[static_cast<size_t>(a)] + eff - in[static_cast<size_t>(a)], 0);
            if (pads[static_cast<size_t>(a)] != total / 2 || pads[static_cast<size_t>(a) + 2] != total - total / 2)
                return unsupported(n.name(), n.op_type() + " padding " + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," +
                                                 std::to_string(pads[2]) + "," + std::to_string(pads[3]) +
                                                 " is neither \"valid\" nor \"same\"; Kiln supports only those");
        }
        return std::string("same");
    }

    Result<std::vector<int64_t>> pair(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> def) {
        KILN_ASSIGN(auto v, attrInts(n, name, def));
        if (v.size() != 2) return unsupported(n.name(), n.op_type() + " " + name + " must have 2 entries (2-D only)");
        for (int64_t x : v)
            if (x < 1 || x > kMaxDim) return parseError(n.op_type() + " " + name + " must be positive");
        return v;
    }

    // A 1x1 Conv of a pooled [N,C,1,1] value (squeeze-and-excitation): a Dense of [N,C].
    Status pooledConv(const onnx::NodeProto& n, const Ref& x) {
        KILN_ASSIGN(const Const* w, needConst(n, 1, "the weight"));
        const int64_t C = kshape(x.node)[1];
        KILN_ASSIGN(int64_t group, attrInt(n, "group", 1));
        if (w->isInt || w->dims.size() != 4 || w->dims[1] != C || w->dims[2] != 1 || w->dims[3] != 1 || group != 1 || w->dims[0] <= 0)
            return unsupported(n.name(), "a Conv of a pooled [N, C, 1, 1] value is supported as a 1x1 convolution with one group");
        KILN_ASSIGN(auto pads, attrInts(n, "pads", {0, 0, 0, 0}));
        for (int64_t p : pads)
            if (p != 0) return unsupported(n.name(), "a Conv of a pooled [N, C, 1, 1] value is supported without padding");
        const int64_t M = w->dims[0];
        const Const* b = constant(n, 2);
        if (n.input_size() > 2 && !n.input(2).empty() && (!b || b->numel() != M || b->isInt))
            return unsupported(n.name(), "Conv bias must be a constant of " + std::to_string(M) + " values");
        Node node;
        node.name = nameFor(n);
        node.op = "Dense";
        node.inputs = {kname(x.node)};
        node.attrs.set("units", M);
        node.attrs.set("use_bias", b != nullptr);
        const std::string name = node.name;
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        std::vector<float> kernel(static_cast<size_t>(C * M));
        for (int64_t o = 0; o < M; ++o)
            for (int64_t c = 0; c < C; ++c) kernel[static_cast<size_t>(c * M + o)] = w->f[static_cast<size_t>(o * C + c)];
        addWeight(name, "kernel", Shape{C, M}, kernel);
        if (b) addWeight(name, "bias", Shape{M}, b->f);
        return setOutput(n, Ref{idx, Layout::Pooled11, {}});
    }

    Status conv(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        if (x.layout == Layout::Pooled11) return pooledConv(n, x);
        if (x.layout != Layout::ChannelFirst || kshape(x.node).rank() != 4)
            return unsupported(n.name(), "Conv needs a channel-first 4-D input");
        KILN_ASSIGN(const Const* w, needConst(n, 1, "the weight"));
        if (w->dims.size() != 4 || w->isInt) return unsupported(n.name(), "Conv weights must be a 4-D float tensor (2-D convolution)");
        int64_t M = w->dims[0], Cg = w->dims[1], kh = w->dims[2], kw = w->dims[3];
        KILN_ASSIGN(int64_t group, attrInt(n, "group", 1));
        const Shape& xs = kshape(x.node);
        if (group < 1 || Cg * group != xs[3] || M <= 0)
            return unsupported(n.name(), "Conv weights do not match the input's " + std::to_string(xs[3]) + " channels");
        KILN_ASSIGN(auto ks, attrInts(n, "kernel_shape", {kh, kw}));
        if (ks != std::vector<int64_t>{kh, kw}) return parseError("Conv kernel_shape does not match its weights");
        KILN_ASSIGN(auto s, pair(n, "strides", {1, 1}));
        KILN_ASSIGN(auto d, pair(n, "dilations", {1, 1}));
        // Explicit pads that are neither "valid" nor "same" (PyTorch's padding=1 with stride 2):
        // zero padding is exact for a convolution, so a ZeroPadding2D goes in front.
        std::vector<int64_t> explicitPads;
        auto mode = paddingMode(n, {xs[1], xs[2]}, {kh, kw}, s, d);
        if (!mode.ok()) {
            if (mode.error().code != ErrorCode::Unsupported) return mode.error();
            KILN_ASSIGN(std::string autoPad, attrString(n, "auto_pad", "NOTSET"));
            KILN_ASSIGN(auto pads, attrInts(n, "pads", {0, 0, 0, 0}));
            if (autoPad != "NOTSET" || pads.size() != 4) return mode.error();
            for (int64_t p : pads)
                if (p < 0 || p > kMaxDim) return mode.error();
            explicitPads = pads;  // ONNX order: top, left, bottom, right
        }
        const std::string pad = explicitPads.empty() ? *mode : std::string("valid");
        const Const* b = constant(n, 2);
        if (n.input_size() > 2 && !n.input(2).empty() && (!b || b->numel() != M || b->isInt))
            return unsupported(n.name(), "Conv bias must be a constant of " + std::to_string(M) + " values");
        // One group per input channel is Keras's DepthwiseConv2D; its kernel [kh, kw, C, m] has
        // the memory order of the grouped [kh, kw, 1, C·m].
        const bool depthwise = group > 1 && group == xs[3] && Cg == 1;
        int input = x.node;
        if (!explicitPads.empty()) {
            Node padNode;
            padNode.name = uniqueName((!n.name().empty() ? n.name() : n.output_size() ? n.output(0)
                                                                                      : n.op_type()) +
                                      "_pad");
            padNode.op = "ZeroPadding2D";
            padNode.inputs = {kname(x.node)};
            padNode.attrs.set("padding", std::vector<int64_t>{explicitPads[0], explicitPads[2], explicitPads[1], explicitPads[3]});
            KILN_ASSIGN(input, addNode(std::move(padNode)));
        }
        Node node;
        node.name = nameFor(n);
        node.op = depthwise ? "DepthwiseConv2D" : "Conv2D";
        node.inputs = {kname(input)};
        if (depthwise) {
            node.attrs.set("depth_multiplier", M / group);
        } else {
            node.attrs.set("filters", M);
            node.attrs.set("groups", group);
        }
        node.attrs.set("kernel_size", std::vector<int64_t>{kh, kw});
        node.attrs.set("strides", s);
        node.attrs.set("dilation_rate", d);
        node.attrs.set("padding", pad);
        node.attrs.set("use_bias", b != nullptr);
        std::string name = node.name;
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        std::vector<float> hwio(static_cast<size_t>(w->numel()));
        for (int64_t o = 0; o < M; ++o)
            for (int64_t c = 0; c < Cg; ++c)
                for (int64_t y = 0; y < kh; ++y)
                    for (int64_t xx = 0; xx < kw; ++xx)
                        hwio[static_cast<size_t>(((y * kw + xx) * Cg + c) * M + o)] =
                            w->f[static_cast<size_t>(((o * Cg + c) * kh + y) * kw + xx)];
        if (depthwise)
            addWeight(name, "depthwise_kernel", Shape{kh, kw, group, M / group}, hwio);
        else
            addWeight(name, "kernel", Shape{kh, kw, Cg, M}, hwio);
        if (b) addWeight(name, "bias", Shape{M}, b->f);
        return setOutput(n, Ref{idx, Layout::ChannelFirst, {}});
    }

    Status pool(const onnx::NodeProto& n, bool isMax) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        if (x.layout != Layout::ChannelFirst || kshape(x.node).rank() != 4)
            return unsupported(n.name(), n.op_type() + " needs a channel-first 4-D input");
        if (n.output_size() > 1 && !n.output(1).empty()) return unsupported(n.name(), "MaxPool indices are not supported");
        KILN_ASSIGN(auto k, pair(n, "kernel_shape", {0, 0}));
        KILN_ASSIGN(auto s, pair(n, "strides", {1, 1}));
        KILN_ASSIGN(auto d, pair(n, "dilations", {1, 1}));
        if (d != std::vector<int64_t>{1, 1}) return unsupported(n.name(), "dilated pooling is not supported");
        KILN_ASSIGN(int64_t ceil, attrInt(n, "ceil_mode", 0));
        if (ceil != 0) return unsupported(n.name(), "ceil_mode = 1 is not supported");
        const Shape& xs = kshape(x.node);
        KILN_ASSIGN(int64_t cip, attrInt(n, "count_include_pad", 0));
        auto mode = paddingMode(n, {xs[1], xs[2]}, k, s, d);
        int input = x.node;
        std::string pad;
        if (mode.ok()) {
            pad = *mode;
            if (!isMax && pad == "same" && cip != 0) return unsupported(n.name(), "average pooling that counts padding is not supported");
        } else {
            // Explicit pads (PyTorch's MaxPool2d(3, 2, padding=1) of ResNet's stem): zero padding
            // in front of a "valid" pooling is exact for the maximum of values that are never
            // negative (behind a ReLU) and for an average that counts the padding.
            if (mode.error().code != ErrorCode::Unsupported) return mode.error();
            KILN_ASSIGN(auto pads, attrInts(n, "pads", {0, 0, 0, 0}));
            bool fits = pads.size() == 4 && (isMax ? nonNegative(x.node) : cip != 0);
            for (int64_t p : pads) fits = fits && p >= 0 && p < k[0] + k[1];
            if (!fits)
                return unsupported(n.name(), mode.error().message + (isMax ? " (other pads are read for a maximum of values that are never negative)"
                                                                           : " (other pads are read for an average that counts the padding)"));
            Node padNode;
            padNode.name = uniqueName((!n.name().empty() ? n.name() : n.output_size() ? n.output(0)
                                                                                      : n.op_type()) +
                                      "_pad");
            padNode.op = "ZeroPadding2D";
            padNode.inputs = {kname(x.node)};
            padNode.attrs.set("padding", std::vector<int64_t>{pads[0], pads[2], pads[1], pads[3]});
            KILN_ASSIGN(input, addNode(std::move(padNode)));
            pad = "valid";
        }
        Node node;
        node.name = nameFor(n);
        node.op = isMax ? "MaxPooling2D" : "AveragePooling2D";
        node.inputs = {kname(input)};
        node.attrs.set("pool_size", k);
        node.attrs.set("strides", s);
        node.attrs.set("padding", pad);
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, Layout::ChannelFirst, {}});
    }

    Status dense(const onnx::NodeProto& n, bool gemm) {
        KILN_ASSIGN(Ref a, ref(n, 0));
        if (a.layout == Layout::ChannelFirst || a.layout == Layout::Pooled11) {
            if (kshape(a.node).rank() != 2 && !(a.layout == Layout::Pooled11))
                return unsupported(n.name(), n.op_type() + " needs a 2-D input");
        }
        if (kshape(a.node).rank() != 2) return unsupported(n.name(), n.op_type() + " needs a 2-D input; Kiln's Dense takes [N, features]");
        KILN_ASSIGN(const Const* b, needConst(n, 1, "the weight"));
        if (b->dims.size() != 2 || b->isInt) return unsupported(n.name(), n.op_type() + " weight must be a 2-D float constant");
        int64_t transA = 0, transB = 0;
        float alpha = 1.f, beta = 1.f;
        if (gemm) {
            KILN_ASSIGN(transA, attrInt(n, "transA", 0));
            KILN_ASSIGN(transB, attrInt(n, "transB", 0));
            KILN_ASSIGN(alpha, attrFloat(n, "alpha", 1.f));
            KILN_ASSIGN(beta, attrFloat(n, "beta", 1.f));
        }
        if (transA) return unsupported(n.name(), "Gemm with transA = 1 is not supported");
        int64_t K = transB ? b->dims[1] : b->dims[0];
        int64_t N = transB ? b->dims[0] : b->dims[1];
        int64_t inF = kshape(a.node)[1];
        if (K != inF) return Error(ErrorCode::ShapeMismatch, n.op_type() + " weight has " + std::to_string(K) + " rows but its input has " + std::to_string(inF) + " features");
        if (N <= 0) return parseError(n.op_type() + " weight has no columns");
        std::vector<float> kernel(static_cast<size_t>(K * N));
        for (int64_t r = 0; r < K; ++r)
            for (int64_t c = 0; c < N; ++c)
                kernel[static_cast<size_t>(r * N + c)] = alpha * (transB ? b->f[static_cast<size_t>(c * K + r)] : b->f[static_cast<size_t>(r * N + c)]);
        if (a.layout == Layout::FlatChannelFirst) {
            // Rows are in channel-first flatten order (C, d1, d2...); Kiln flattens channels-last.
            const auto& cd = a.cfDims;
            int64_t C = cd[0], spatial = K / std::max<int64_t>(C, 1);
            std::vector<float> permuted(kernel.size());
            for (int64_t c = 0; c < C; ++c)
                for (int64_t p = 0; p < spatial; ++p)
                    std::memcpy(&permuted[static_cast<size_t>((p * C + c) * N)], &kernel[static_cast<size_t>((c * spatial + p) * N)],
                                static_cast<size_t>(N) * sizeof(float));
            kernel.swap(permuted);
        }
        std::vector<float> bias;
        if (gemm && n.input_size() > 2 && !n.input(2).empty()) {
            KILN_ASSIGN(const Const* c, needConst(n, 2, "the bias"));
            if (c->isInt || (c->numel() != N && c->numel() != 1))
                return unsupported(n.name(), "Gemm bias must have " + std::to_string(N) + " values (or one)");
            bias.assign(static_cast<size_t>(N), 0.f);
            for (int64_t j = 0; j < N; ++j) bias[static_cast<size_t>(j)] = beta * c->f[c->numel() == 1 ? 0 : static_cast<size_t>(j)];
        }
        Node node;
        node.name = nameFor(n);
        node.op = "Dense";
        node.inputs = {kname(a.node)};
        node.attrs.set("units", N);
        node.attrs.set("use_bias", !bias.empty());
        std::string name = node.name;
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        addWeight(name, "kernel", Shape{K, N}, kernel);
        if (!bias.empty()) addWeight(name, "bias", Shape{N}, bias);
        return setOutput(n, Ref{idx, Layout::Same, {}});
    }

    // Add/Mul with a constant operand: a bias for the Dense/Conv2D before it.
    Status biasAdd(const onnx::NodeProto& n, const Ref& x, const Const& c) {
        Node& prod = m_out.graph.nodes[static_cast<size_t>(x.node)];
        int64_t units = kshape(x.node)[-1];
        bool okProducer = (prod.op == "Dense" || prod.op == "Conv2D" || prod.op == "DepthwiseConv2D") && !prod.attrs.getBool("use_bias") &&
                          (!prod.attrs.has("activation") || prod.attrs.getString("activation") == "linear") &&
                          m_uses[n.input(0) == "" ? "" : (m_values.count(n.input(0)) ? n.input(0) : n.input(1))] == 1;
        if (!okProducer || c.isInt || c.numel() != units)
            return unsupported(n.name(), "Add of a constant is supported only as the bias of the Dense or Conv before it");
        prod.attrs.set("use_bias", true);
        addWeight(prod.name, "bias", Shape{units}, c.f);
        return setOutput(n, x);
    }

    // x·scale + offset with scalar constants: a Rescaling layer. An offset added right after a
    // Rescaling that has none (and no other reader) joins it.
    Status rescale(const onnx::NodeProto& n, const Ref& x, double scale, double offset, const std::string& input) {
        if (x.layout == Layout::FlatChannelFirst)
            return unsupported(n.name(), n.op_type() + " on a channel-first flatten is not supported");
        Node& prod = m_out.graph.nodes[static_cast<size_t>(x.node)];
        if (scale == 1.0 && prod.op == "Rescaling" && prod.attrs.getFloat("offset") == 0.0 && m_uses[input] == 1) {
            prod.attrs.set("offset", offset);
            return setOutput(n, x);
        }
        Node node;
        node.name = nameFor(n);
        node.op = "Rescaling";
        node.inputs = {kname(x.node)};
        node.attrs.set("scale", scale);
        node.attrs.set("offset", offset);
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, x.layout, x.cfDims});
    }

    Status merge(const onnx::NodeProto& n, const std::string& op) {
        if (n.input_size() < 1) return parseError(n.op_type() + " needs inputs");
        if (op == "Add" && n.input_size() == 2) {
            const Const* c0 = constant(n, 0);
            const Const* c1 = constant(n, 1);
            if (c0 && c1) return unsupported(n.name(), "Add of two constants is not supported");
            if (c0 || c1) {
                KILN_ASSIGN(Ref x, ref(n, c0 ? 1 : 0));
                const Const& c = c0 ? *c0 : *c1;
                if (c.numel() == 1 && !c.isInt) return rescale(n, x, 1.0, c.f[0], n.input(c0 ? 1 : 0));
                return biasAdd(n, x, c);
            }
        }
        std::vector<Ref> refs;
        for (int k = 0; k < n.input_size(); ++k) {
            KILN_ASSIGN(Ref r, ref(n, k));
            refs.push_back(r);
        }
        // Squeeze-and-excitation: a channel-first image times a pooled [N,C,1,1] scale is Kiln's
        // Multiply of [N,H,W,C] by [N,C].
        size_t full = 0;
        for (size_t k = 0; k < refs.size(); ++k) {
            if (refs[k].layout == refs[0].layout) continue;
            const bool scale = op == "Multiply" && refs.size() == 2 &&
                               ((refs[k].layout == Layout::Pooled11 && refs[0].layout == Layout::ChannelFirst) ||
                                (refs[0].layout == Layout::Pooled11 && refs[k].layout == Layout::ChannelFirst));
            if (!scale) return unsupported(n.name(), n.op_type() + " inputs have different layouts");
            if (refs[k].layout == Layout::ChannelFirst) full = k;
        }
        if (refs.size() == 1) return setOutput(n, refs[0]);
        Node node;
        node.name = nameFor(n);
        node.op = op;
        for (const auto& r : refs) node.inputs.push_back(kname(r.node));
        std::set<std::string> distinct(node.inputs.begin(), node.inputs.end());
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, refs[full].layout, refs[full].cfDims});
    }

    Status concat(const onnx::NodeProto& n) {
        std::vector<Ref> refs;
        for (int k = 0; k < n.input_size(); ++k) {
            KILN_ASSIGN(Ref r, ref(n, k));
            if (!refs.empty() && r.layout != refs[0].layout) return unsupported(n.name(), "Concat inputs have different layouts");
            if (r.layout == Layout::FlatChannelFirst || r.layout == Layout::Pooled11)
                return unsupported(n.name(), "Concat of this input layout is not supported");
            refs.push_back(r);
        }
        if (refs.empty()) return parseError("Concat needs inputs");
        KILN_ASSIGN(int64_t axis, attrInt(n, "axis", INT64_MIN));
        if (axis == INT64_MIN) return parseError("Concat needs an axis");
        int rank = kshape(refs[0].node).rank();
        if (axis < 0) axis += rank;
        if (axis <= 0 || axis >= rank) return unsupported(n.name(), "Concat along the batch axis or an invalid axis");
        int64_t kilnAxis = axis;
        if (refs[0].layout == Layout::ChannelFirst) kilnAxis = axis == 1 ? rank - 1 : axis - 1;
        if (refs.size() == 1) return setOutput(n, refs[0]);
        Node node;
        node.name = nameFor(n);
        node.op = "Concatenate";
        for (const auto& r : refs) node.inputs.push_back(kname(r.node));
        node.attrs.set("axis", kilnAxis);
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, refs[0].layout, {}});
    }

    Status batchNorm(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        int rank = kshape(x.node).rank();
        bool ok = (x.layout == Layout::ChannelFirst && rank > 2) || (x.layout == Layout::Same && rank == 2);
        if (!ok) return unsupported(n.name(), "BatchNormalization needs a channel-first input (or a 2-D one)");
        KILN_ASSIGN(int64_t training, attrInt(n, "training_mode", 0));
        if (training) return unsupported(n.name(), "BatchNormalization in training mode is not supported");
        int64_t C = kshape(x.node)[-1];
        std::vector<const Const*> p;
        for (int k = 1; k <= 4; ++k) {
            KILN_ASSIGN(const Const* c, needConst(n, k, "input " + std::to_string(k + 1)));
            if (c->numel() != C || c->isInt) return unsupported(n.name(), "BatchNormalization parameters must have " + std::to_string(C) + " values");
            p.push_back(c);
        }
        KILN_ASSIGN(float eps, attrFloat(n, "epsilon", 1e-5f));
        KILN_ASSIGN(float momentum, attrFloat(n, "momentum", 0.9f));
        if (!(eps >= 1e-12f && eps <= 1.0f)) return unsupported(n.name(), "BatchNormalization epsilon out of range");
        if (!(momentum >= 0.f && momentum <= 1.f)) momentum = 0.9f;
        Node node;
        node.name = nameFor(n);
        node.op = "BatchNormalization";
        node.inputs = {kname(x.node)};
        node.attrs.set("epsilon", static_cast<double>(eps));
        node.attrs.set("momentum", static_cast<double>(momentum));
        std::string name = node.name;
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        const char* names[] = {"gamma", "beta", "moving_mean", "moving_variance"};
        for (int k = 0; k < 4; ++k) addWeight(name, names[k], Shape{C}, p[static_cast<size_t>(k)]->f);
        return setOutput(n, Ref{idx, x.layout, {}});
    }

    Status layerNorm(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        int rank = kshape(x.node).rank();
        KILN_ASSIGN(int64_t axis, attrInt(n, "axis", -1));
        if (x.layout != Layout::Same || (axis != -1 && axis != rank - 1))
            return unsupported(n.name(), "LayerNormalization is supported over the last axis of a channels-last value");
        int64_t C = kshape(x.node)[-1];
        KILN_ASSIGN(const Const* scale, needConst(n, 1, "the scale"));
        if (scale->numel() != C || scale->isInt) return unsupported(n.name(), "LayerNormalization scale must have " + std::to_string(C) + " values");
        std::vector<float> beta(static_cast<size_t>(C), 0.f);
        if (n.input_size() > 2 && !n.input(2).empty()) {
            KILN_ASSIGN(const Const* b, needConst(n, 2, "the bias"));
            if (b->numel() != C || b->isInt) return unsupported(n.name(), "LayerNormalization bias must have " + std::to_string(C) + " values");
            beta = b->f;
        }
        KILN_ASSIGN(float eps, attrFloat(n, "epsilon", 1e-5f));
        if (!(eps >= 1e-12f && eps <= 1.0f)) return unsupported(n.name(), "LayerNormalization epsilon out of range");
        Node node;
        node.name = nameFor(n);
        node.op = "LayerNormalization";
        node.inputs = {kname(x.node)};
        node.attrs.set("epsilon", static_cast<double>(eps));
        std::string name = node.name;
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        addWeight(name, "gamma", Shape{C}, scale->f);
        addWeight(name, "beta", Shape{C}, beta);
        return setOutput(n, Ref{idx, Layout::Same, {}});
    }

    Status flatten(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        KILN_ASSIGN(int64_t axis, attrInt(n, "axis", 1));
        if (axis != 1) return unsupported(n.name(), "Flatten is supported with axis = 1");
        return flattenRef(n, x);
    }
    Status flattenRef(const onnx::NodeProto& n, const Ref& x) {
        const Shape s = kshape(x.node);  // a copy: adding the Flatten node below may move the shapes
        if (x.layout == Layout::Vector) return setOutput(n, Ref{x.node, Layout::Same, {}});
        if (x.layout == Layout::Pooled11 || x.layout == Layout::FlatChannelFirst || (x.layout == Layout::Same && s.rank() == 2))
            return setOutput(n, Ref{x.node, x.layout == Layout::FlatChannelFirst ? x.layout : Layout::Same, x.cfDims});
        Node node;
        node.name = nameFor(n);
        node.op = "Flatten";
        node.inputs = {kname(x.node)};
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        if (x.layout == Layout::ChannelFirst && !spatialOnes(x)) {
            std::vector<int64_t> cf = toFirst(s.dims());
            cf.erase(cf.begin());
            return setOutput(n, Ref{idx, Layout::FlatChannelFirst, cf});
        }
        return setOutput(n, Ref{idx, Layout::Same, {}});
    }

    Status reshape(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        const Const* sc = batchConstant(n, 1);
        if (!sc) {
            KILN_ASSIGN(sc, needConst(n, 1, "the shape"));
        }
        if (!sc->isInt || sc->dims.size() != 1 || sc->i.empty() || sc->i.size() > 8)
            return unsupported(n.name(), "Reshape needs a constant 1-D integer shape of 1 to 8 entries");
        auto in = onnxDims(x);
        std::vector<int64_t> t = sc->i;
        // A shape computed from the input's own (Shape, Slice or Gather, Concat: "[batch, -1]") may
        // hold the batch size first, which is what 0 says; anywhere else Kiln cannot follow it.
        if (sc->dependsOnBatch()) {
            if (std::find(sc->batch.begin() + 1, sc->batch.end(), 1) != sc->batch.end())
                return unsupported(n.name(), "Reshape to a shape with the batch size after the first dimension is not supported");
            t[0] = 0;
        }
        // The batch stays first: 0 (copied), -1, or the batch size the model's inputs fix.
        if (t[0] != 0 && t[0] != -1 && !(m_batch > 0 && t[0] == m_batch))
            return unsupported(n.name(), "Reshape must keep the batch dimension (0, -1 or the inputs' batch size first)");
        std::vector<int64_t> dims;
        int64_t known = 1;
        int unknown = -1;
        for (size_t k = 1; k < t.size(); ++k) {
            int64_t v = t[k];
            if (v == 0) {
                if (k >= in.size()) return parseError("Reshape copies a dimension the input does not have");
                v = in[k];
            }
            if (v == -1) {
                if (unknown >= 0) return parseError("Reshape has two -1 entries");
                unknown = static_cast<int>(dims.size());
            } else if (v <= 0 || v > kMaxElements) {
                return parseError("Reshape has an invalid dimension " + std::to_string(v));
            } else {
                known *= v;
                if (known > kMaxElements) return parseError("Reshape target is too large");
            }
            dims.push_back(v);
        }
        int64_t total = 1;
        for (size_t k = 1; k < in.size(); ++k) total *= in[k];
        if (unknown >= 0) {
            if (known == 0 || total % known) return Error(ErrorCode::ShapeMismatch, "Reshape cannot infer its -1 dimension");
            dims[static_cast<size_t>(unknown)] = total / known;
        } else if (known != total) {
            return Error(ErrorCode::ShapeMismatch, "Reshape changes the number of values per sample");
        }
        if (dims.empty()) {
            // [N, 1, ...] to [N]: Kiln's [N, 1].
            if (kshape(x.node).rank() == 2 && x.layout != Layout::FlatChannelFirst) return setOutput(n, Ref{x.node, Layout::Vector, {}});
            Node node;
            node.name = nameFor(n);
            node.op = "Reshape";
            node.inputs = {kname(x.node)};
            node.attrs.set("target_shape", std::vector<int64_t>{1});
            KILN_ASSIGN(int idx, addNode(std::move(node)));
            return setOutput(n, Ref{idx, Layout::Vector, {}});
        }
        if (dims.size() == 1) return flattenRef(n, x);
        if (x.layout == Layout::ChannelFirst && !spatialOnes(x))
            return unsupported(n.name(), "Reshape of a channel-first value to rank > 2 is not supported");
        std::vector<int64_t> full{-1};
        full.insert(full.end(), dims.begin(), dims.end());
        std::vector<int64_t> current = kshape(x.node).dims();
        current[0] = -1;
        if (full == current && (x.layout == Layout::Same || x.layout == Layout::Vector)) return setOutput(n, Ref{x.node, Layout::Same, {}});
        Node node;
        node.name = nameFor(n);
        node.op = "Reshape";
        node.inputs = {kname(x.node)};
        node.attrs.set("target_shape", dims);
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, Layout::Same, {}});
    }

    // Unsqueeze of an [N,C] value to a 4-D per-channel scale [N,C,1,1] (axes 2, 3) is the pooled
    // channel-first form; other axes after the batch of a channels-last value are a Reshape.
    Status unsqueeze(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        std::vector<int64_t> axes;
        if (n.input_size() > 1 && !n.input(1).empty()) {
            const Const* c = constant(n, 1);
            if (!c) return unsupported(n.name(), "Unsqueeze axes must be a constant");
            if (!c->isInt) return parseError("Unsqueeze axes must be integers");
            axes = c->i;
        } else {
            KILN_ASSIGN(axes, attrInts(n, "axes", {}));
        }
        const std::vector<int64_t> in = onnxDims(x);
        const int64_t outRank = static_cast<int64_t>(in.size() + axes.size());
        if (axes.empty() || outRank > 8) return parseError("Unsqueeze needs 1 to " + std::to_string(8 - in.size()) + " axes");
        for (auto& a : axes) {
            if (a < 0) a += outRank;
            if (a < 0 || a >= outRank) return parseError("Unsqueeze has an axis out of range");
        }
        std::sort(axes.begin(), axes.end());
        if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return parseError("Unsqueeze names an axis twice");
        if (x.layout == Layout::Same && kshape(x.node).rank() == 2 && axes == std::vector<int64_t>{2, 3})
            return setOutput(n, Ref{x.node, Layout::Pooled11, {}});
        if (axes[0] == 0) return unsupported(n.name(), "Unsqueeze of axis 0 puts a dimension before the batch; Kiln keeps the batch first");
        if (x.layout != Layout::Same && x.layout != Layout::Vector)
            return unsupported(n.name(), "Unsqueeze is supported on channels-last values (and [N, C] to [N, C, 1, 1])");
        std::vector<int64_t> target;
        for (int64_t k = 1, j = 1; k < outRank; ++k) target.push_back(std::binary_search(axes.begin(), axes.end(), k) ? 1 : in[static_cast<size_t>(j++)]);
        std::vector<int64_t> current = kshape(x.node).dims();
        current.erase(current.begin());
        if (target == current) return setOutput(n, Ref{x.node, Layout::Same, {}});
        Node node;
        node.name = nameFor(n);
        node.op = "Reshape";
        node.inputs = {kname(x.node)};
        node.attrs.set("target_shape", target);
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, Layout::Same, {}});
    }

    // ReduceMean / ReduceMax. Over height and width of an image: global pooling (the pooled
    // [N,C,1,1] form with keepdims). Over other axes after the batch that lie next to each other in
    // Kiln's channels-last order: a Reshape to [before, reduced, after], pooling over the middle
    // axis, and a Reshape to the result's shape.
    Status reduce(const onnx::NodeProto& n, bool isMax) {
        const std::string& op = n.op_type();
        KILN_ASSIGN(Ref x, ref(n, 0));
        std::vector<int64_t> axes;
        if (n.input_size() > 1 && !n.input(1).empty()) {
            const Const* c = constant(n, 1);
            if (!c) return unsupported(n.name(), op + " axes must be a constant");
            if (!c->isInt) return parseError(op + " axes must be integers");
            axes = c->i;
        } else {
            KILN_ASSIGN(axes, attrInts(n, "axes", {}));
        }
        KILN_ASSIGN(int64_t keep, attrInt(n, "keepdims", 1));
        KILN_ASSIGN(int64_t noop, attrInt(n, "noop_with_empty_axes", 0));
        if (x.layout == Layout::FlatChannelFirst || x.layout == Layout::Pooled11 || x.layout == Layout::Vector)
            return unsupported(n.name(), op + " of a flattened, pooled or one-number value is not supported");
        const std::vector<int64_t> od = onnxDims(x);
        const int rank = static_cast<int>(od.size());
        if (axes.empty()) {
            if (noop) return setOutput(n, x);
            for (int a = 0; a < rank; ++a) axes.push_back(a);
        }
        std::set<int64_t> ax;
        for (int64_t a : axes) {
            if (a < 0) a += rank;
            if (a < 0 || a >= rank) return parseError(op + " has an axis out of range");
            ax.insert(a);
        }
        const bool nhwc = x.layout == Layout::Same && rank == 4 && ax == std::set<int64_t>{1, 2};
        const bool nchw = x.layout == Layout::ChannelFirst && rank == 4 && ax == std::set<int64_t>{2, 3};
        if (nchw || (nhwc && !keep)) {
            Node node;
            node.name = nameFor(n);
            node.op = isMax ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D";
            node.inputs = {kname(x.node)};
            KILN_ASSIGN(int idx, addNode(std::move(node)));
            return setOutput(n, Ref{idx, keep ? Layout::Pooled11 : Layout::Same, {}});
        }
        if (ax.count(0)) return unsupported(n.name(), op + " over the batch axis is not supported; Kiln computes each sample apart");
        // The reduced axes in Kiln's order (channel-first: ONNX axis 1 is Kiln's last).
        const bool cf = x.layout == Layout::ChannelFirst;
        std::set<int64_t> kax;
        for (int64_t a : ax) kax.insert(!cf ? a : a == 1 ? rank - 1
                                                         : a - 1);
        const int64_t lo = *kax.begin(), hi = *kax.rbegin();
        if (hi - lo + 1 != static_cast<int64_t>(kax.size()))
            return unsupported(n.name(), op + " over axes that are not next to each other in Kiln's channels-last order is not supported");
        const std::vector<int64_t> kd = kshape(x.node).dims();
        int64_t before = 1, reduced = 1, after = 1;
        for (int64_t k = 1; k < rank; ++k) (k < lo ? before : k <= hi ? reduced
                                                                      : after) *= kd[static_cast<size_t>(k)];
        // The result in Kiln's order, and its layout.
        std::vector<int64_t> target;
        Layout layout = Layout::Same;
        if (keep) {
            for (int64_t k = 1; k < rank; ++k) target.push_back(kax.count(k) ? 1 : kd[static_cast<size_t>(k)]);
            layout = x.layout;
        } else {
            for (int64_t k = 1; k < rank; ++k)
                if (!kax.count(k)) target.push_back(kd[static_cast<size_t>(k)]);
            // A channel-first value keeps its channels last in Kiln when they are not reduced.
            if (cf && !ax.count(1) && target.size() >= 2) layout = Layout::ChannelFirst;
        }
        if (target.empty()) {
            target = {1};
            layout = Layout::Vector;
        }
        const std::string base = !n.name().empty() ? n.name() : n.output_size() ? n.output(0)
                                                                                : op;
        Node shape;
        shape.name = uniqueName(base + "_reshape");
        shape.op = "Reshape";
        shape.inputs = {kname(x.node)};
        shape.attrs.set("target_shape", std::vector<int64_t>{before, reduced, after});
        KILN_ASSIGN(int in, addNode(std::move(shape)));
        Node pool;
        pool.name = nameFor(n);
        pool.inputs = {kname(in)};
        if (before == 1) {
            pool.op = isMax ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D";  // [N, after]
        } else {
            pool.op = isMax ? "MaxPooling2D" : "AveragePooling2D";  // [N, before, 1, after]
            pool.attrs.set("pool_size", std::vector<int64_t>{1, reduced});
            pool.attrs.set("strides", std::vector<int64_t>{1, reduced});
            pool.attrs.set("padding", std::string("valid"));
        }
        KILN_ASSIGN(int idx, addNode(std::move(pool)));
        std::vector<int64_t> got = kshape(idx).dims();
        got.erase(got.begin());
        if (got != target) {
            Node back;
            back.name = uniqueName(base + "_result");
            back.op = "Reshape";
            back.inputs = {kname(idx)};
            back.attrs.set("target_shape", target);
            KILN_ASSIGN(idx, addNode(std::move(back)));
        }
        return setOutput(n, Ref{idx, layout, {}});
    }

    // Pad in constant mode of height and width of a 4-D image: a ZeroPadding2D. Another constant
    // value v pads x - v with zeros and adds v back (Rescaling layers on both sides).
    Status padNode(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        KILN_ASSIGN(std::string mode, attrString(n, "mode", "constant"));
        if (mode != "constant") return unsupported(n.name(), "Pad is supported only in constant mode");
        float value = 0.f;
        if (n.input_size() > 2 && !n.input(2).empty()) {
            const Const* v = constant(n, 2);
            if (!v) return unsupported(n.name(), "the Pad value must be a constant");
            if (v->f.size() != 1) return parseError("the Pad value must be one number");
            value = v->f[0];
        } else {
            KILN_ASSIGN(value, attrFloat(n, "value", 0.f));
        }
        if (!std::isfinite(value) || std::fabs(value) > 1e30f) return unsupported(n.name(), "Pad is supported with a finite value");
        if (n.input_size() > 1 && !n.input(1).empty() && !constant(n, 1)) return unsupported(n.name(), "the pads of Pad must be a constant");
        const bool cf = x.layout == Layout::ChannelFirst, nhwc = x.layout == Layout::Same;
        if (kshape(x.node).rank() != 4 || !(cf || nhwc)) return unsupported(n.name(), "Pad is supported on 4-D images only");
        const auto pads = padsOf(n, 4);
        if (!pads) return parseError("Pad needs integer pads, two per axis of its 4-D input");
        const auto& p = *pads;
        // Spatial axes of the value's layout: 2, 3 channel-first, 1, 2 channels-last.
        const size_t ay = cf ? 2 : 1, ax = cf ? 3 : 2, ac = cf ? 1 : 3;
        if (p[0] || p[4] || p[ac] || p[ac + 4]) return unsupported(n.name(), "Pad of the batch or channel axis is not supported");
        for (int64_t v : p) {
            if (v < 0) return unsupported(n.name(), "Pad with negative pads (cropping) is not supported");
            if (v > kMaxDim) return parseError("Pad has an invalid pad " + std::to_string(v));
        }
        const std::string base = !n.name().empty() ? n.name() : n.output_size() ? n.output(0)
                                                                                : n.op_type();
        int input = x.node;
        if (value != 0.f) {
            Node shift;
            shift.name = uniqueName(base + "_shift");
            shift.op = "Rescaling";
            shift.inputs = {kname(x.node)};
            shift.attrs.set("scale", 1.0);
            shift.attrs.set("offset", -static_cast<double>(value));
            KILN_ASSIGN(input, addNode(std::move(shift)));
        }
        Node node;
        node.name = nameFor(n);
        node.op = "ZeroPadding2D";
        node.inputs = {kname(input)};
        node.attrs.set("padding", std::vector<int64_t>{p[ay], p[ay + 4], p[ax], p[ax + 4]});
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        if (value != 0.f) {
            Node back;
            back.name = uniqueName(base + "_value");
            back.op = "Rescaling";
            back.inputs = {kname(idx)};
            back.attrs.set("scale", 1.0);
            back.attrs.set("offset", static_cast<double>(value));
            KILN_ASSIGN(idx, addNode(std::move(back)));
        }
        return setOutput(n, Ref{idx, x.layout, {}});
    }

    // Resize of a channel-first image by whole factors of height and width (scales, or sizes that
    // are multiples of the input's): UpSampling2D. Kiln's nearest takes pixel floor(y / factor),
    // which ONNX gives with asymmetric coordinates and floor, with half_pixel coordinates rounding
    // to the nearest pixel, and with tf_half_pixel_for_nn and floor; Kiln's bilinear is ONNX's
    // linear with half_pixel (or pytorch_half_pixel) coordinates.
    Status resize(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        if (x.layout != Layout::ChannelFirst || kshape(x.node).rank() != 4)
            return unsupported(n.name(), "Resize needs a channel-first 4-D input");
        if (m_out.opset < 11) return unsupported(n.name(), "Resize is supported from opset 11 on");
        KILN_ASSIGN(auto axesAttr, attrInts(n, "axes", {0, 1, 2, 3}));
        KILN_ASSIGN(std::string policy, attrString(n, "keep_aspect_ratio_policy", "stretch"));
        KILN_ASSIGN(std::string coord, attrString(n, "coordinate_transformation_mode", "half_pixel"));
        if (coord == "tf_crop_and_resize") return unsupported(n.name(), "Resize with tf_crop_and_resize is not supported");
        if (policy != "stretch") return unsupported(n.name(), "Resize is supported with keep_aspect_ratio_policy stretch");
        const std::vector<int64_t> in = onnxDims(x);
        std::vector<double> factor(4, 1.0);
        std::vector<int64_t> axes;
        for (int64_t a : axesAttr) axes.push_back(a < 0 ? a + 4 : a);
        for (int64_t a : axes)
            if (a < 0 || a > 3) return parseError("Resize has an axis out of range");
        const Const* scales = constant(n, 2);
        const Const* sizes = constant(n, 3);
        const bool hasScales = n.input_size() > 2 && !n.input(2).empty(), hasSizes = n.input_size() > 3 && !n.input(3).empty();
        if ((hasScales && !scales) || (hasSizes && !sizes)) return unsupported(n.name(), "Resize scales and sizes must be constants");
        if (scales && !scales->f.empty()) {
            if (scales->f.size() != axes.size()) return parseError("Resize has " + std::to_string(scales->f.size()) + " scales for " + std::to_string(axes.size()) + " axes");
            for (size_t k = 0; k < axes.size(); ++k) factor[static_cast<size_t>(axes[k])] = scales->f[k];
        } else if (sizes && !sizes->i.empty()) {
            if (sizes->i.size() != axes.size()) return parseError("Resize has " + std::to_string(sizes->i.size()) + " sizes for " + std::to_string(axes.size()) + " axes");
            for (size_t k = 0; k < axes.size(); ++k) {
                const int64_t a = axes[k], want = sizes->i[k], have = in[static_cast<size_t>(a)];
                if (a == 0) {  // the batch: its size in the file, when the file fixes one
                    if (m_batch > 0 && want != m_batch) return unsupported(n.name(), "Resize of the batch axis is not supported");
                    continue;
                }
                if (want <= 0 || want % have) return unsupported(n.name(), "Resize is supported to sizes that are whole multiples of the input's");
                factor[static_cast<size_t>(a)] = static_cast<double>(want) / static_cast<double>(have);  // a whole number
            }
        } else {
            return parseError("Resize needs scales or sizes");
        }
        const double fh = factor[2], fw = factor[3];
        if (factor[0] != 1.0 || factor[1] != 1.0 || fh < 1.0 || fw < 1.0 || fh != std::floor(fh) || fw != std::floor(fw) || fh > 64.0 || fw > 64.0)
            return unsupported(n.name(), "Resize is supported as upsampling of height and width by whole factors");
        KILN_ASSIGN(std::string mode, attrString(n, "mode", "nearest"));
        KILN_ASSIGN(std::string nearest, attrString(n, "nearest_mode", "round_prefer_floor"));
        const bool halfPixel = coord == "half_pixel" || coord == "pytorch_half_pixel";
        const bool rounding = nearest == "round_prefer_floor" || nearest == "round_prefer_ceil";
        std::string interpolation;
        if (mode == "nearest" && ((coord == "asymmetric" && nearest == "floor") || (halfPixel && rounding) ||
                                  (coord == "tf_half_pixel_for_nn" && nearest == "floor")))
            interpolation = "nearest";
        else if (mode == "linear" && halfPixel)
            interpolation = "bilinear";
        else
            return unsupported(n.name(), "Resize is supported as nearest (asymmetric with floor, half_pixel with rounding) or linear (half_pixel)");
        if (fh == 1.0 && fw == 1.0) return setOutput(n, x);
        Node node;
        node.name = nameFor(n);
        node.op = "UpSampling2D";
        node.inputs = {kname(x.node)};
        node.attrs.set("size", std::vector<int64_t>{static_cast<int64_t>(fh), static_cast<int64_t>(fw)});
        node.attrs.set("interpolation", interpolation);
        KILN_ASSIGN(int idx, addNode(std::move(node)));
        return setOutput(n, Ref{idx, Layout::ChannelFirst, {}});
    }

    Status transpose(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        int rank = kshape(x.node).rank();
        std::vector<int64_t> def;
        for (int k = rank - 1; k >= 0; --k) def.push_back(k);
        KILN_ASSIGN(auto perm, attrInts(n, "perm", def));
        std::vector<int64_t> first{0, rank - 1}, last{0};
        for (int d = 1; d < rank - 1; ++d) first.push_back(d);
        for (int d = 2; d < rank; ++d) last.push_back(d);
        last.push_back(1);
        std::vector<int64_t> identity;
        for (int d = 0; d < rank; ++d) identity.push_back(d);
        if (perm == identity) return setOutput(n, x);
        if (x.layout == Layout::Same && perm == first) return setOutput(n, Ref{x.node, Layout::ChannelFirst, {}});
        if (x.layout == Layout::ChannelFirst && perm == last) return setOutput(n, Ref{x.node, Layout::Same, {}});
        return unsupported(n.name(), "this Transpose is not supported; Kiln reads transposes between channels-last and channel-first");
    }

    // ---- constant folding --------------------------------------------------------------------
    // Exporters often compute padding amounts and shapes with small integer subgraphs
    // (Shape, ConstantOfShape, Concat, Gather, Reshape, Slice, Transpose, arithmetic...); they are
    // evaluated while reading. A shape read with Shape keeps the batch size as a marked element (Const::batch)
    // when the inputs leave it open; the data of these operations may hold it, their other inputs
    // (shapes, indices, axes) may not.
    static bool foldable(const std::string& op) {
        static const std::set<std::string> ops{"ConstantOfShape", "Concat", "Gather", "Reshape", "Slice", "Transpose", "Unsqueeze", "Squeeze",
                                               "Add", "Sub", "Mul", "Div"};
        return ops.count(op) != 0;
    }
    bool allInputsConstant(const onnx::NodeProto& n) const {
        if (n.input_size() == 0 || n.domain() == kOnnxKilnDomain) return false;
        for (const auto& s : n.input())
            if (!s.empty() && !m_consts.count(s)) return false;
        return true;
    }
    // `src[k]`: the input element that output element k copies.
    static Const gather(const Const& in, std::vector<int64_t> dims, const std::vector<int64_t>& src) {
        Const c;
        c.dims = std::move(dims);
        c.isInt = in.isInt;
        c.f.reserve(src.size());
        for (int64_t s : src) c.f.push_back(in.f[static_cast<size_t>(s)]);
        if (in.isInt)
            for (int64_t s : src) c.i.push_back(in.i[static_cast<size_t>(s)]);
        if (!in.batch.empty())
            for (int64_t s : src) c.batch.push_back(in.batch[static_cast<size_t>(s)]);
        return c;
    }
    static std::vector<int64_t> strides(const std::vector<int64_t>& dims) {
        std::vector<int64_t> s(dims.size(), 1);
        for (size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
        return s;
    }
    Status foldConstant(const onnx::NodeProto& n) {
        const std::string& op = n.op_type();
        if (n.output_size() < 1 || n.output(0).empty()) return parseError(op + " has no output");
        if (m_values.count(n.output(0)) || m_consts.count(n.output(0))) return parseError("value \"" + n.output(0) + "\" is produced twice");
        const Const* first = batchConstant(n, 0);
        if (!first) return parseError(op + " needs its first input");
        const Const& x = *first;
        for (int k = 1; k < n.input_size() && op != "Concat"; ++k)
            if (const Const* c = batchConstant(n, k); c && c->dependsOnBatch())
                return unsupported(n.name(), "input " + std::to_string(k + 1) + " of " + op + " is computed from the batch size; Kiln needs it fixed when reading");
        if (op == "ConstantOfShape" && x.dependsOnBatch())
            return unsupported(n.name(), "ConstantOfShape of a shape that holds the batch size is not supported");
        auto axisOf = [&](int64_t a, size_t rank) -> Result<size_t> {
            if (a < 0) a += static_cast<int64_t>(rank);
            if (a < 0 || a >= static_cast<int64_t>(std::max<size_t>(rank, 1))) return parseError(op + " has an axis out of range");
            return static_cast<size_t>(a);
        };
        Const out;
        if (op == "ConstantOfShape") {
            if (!x.isInt || x.dims.size() != 1) return parseError("ConstantOfShape needs a 1-D integer shape");
            int64_t numel = 1;
            for (int64_t d : x.i) {
                if (d < 0 || d > kMaxDim) return parseError("ConstantOfShape has an invalid dimension " + std::to_string(d));
                numel *= d;
                if (numel > kMaxElements) return parseError("ConstantOfShape is too large");
            }
            Const value;
            value.f = {0.f};
            value.i = {0};
            if (const auto* a = attr(n, "value"); a && a->has_t()) {
                KILN_ASSIGN(value, readTensor(a->t(), "ConstantOfShape " + n.name()));
                if (value.f.size() != 1) return parseError("ConstantOfShape value must hold one element");
                if (value.isInt) value.i.resize(1);
            } else {
                value.isInt = false;
            }
            out.dims = x.i;
            out.isInt = value.isInt;
            out.f.assign(static_cast<size_t>(numel), value.f[0]);
            if (out.isInt) out.i.assign(static_cast<size_t>(numel), value.i[0]);
        } else if (op == "Concat") {
            if (x.dims.empty()) return parseError("Concat of scalars");
            KILN_ASSIGN(int64_t a, attrInt(n, "axis", 0));
            KILN_ASSIGN(size_t axis, axisOf(a, x.dims.size()));
            std::vector<const Const*> parts;
            bool marked = false;
            for (int k = 0; k < n.input_size(); ++k) {
                const Const* c = batchConstant(n, k);
                if (!c) continue;
                if (c->dims.size() != x.dims.size() || c->isInt != x.isInt) return parseError("Concat inputs differ in rank or type");
                for (size_t d = 0; d < x.dims.size(); ++d)
                    if (d != axis && c->dims[d] != x.dims[d]) return parseError("Concat inputs differ in shape");
                parts.push_back(c);
                marked = marked || c->dependsOnBatch();
            }
            out.dims = x.dims;
            out.dims[axis] = 0;
            int64_t total = 0;
            for (const Const* c : parts) {
                out.dims[axis] += c->dims[axis];
                total += c->numel();
                if (total > kMaxElements) return parseError("Concat of constants gives too many values");
            }
            out.isInt = x.isInt;
            int64_t outer = 1, inner = 1;
            for (size_t d = 0; d < axis; ++d) outer *= x.dims[d];
            for (size_t d = axis + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
            for (int64_t o = 0; o < outer; ++o)
                for (const Const* c : parts) {
                    const int64_t run = c->dims[axis] * inner;
                    out.f.insert(out.f.end(), c->f.begin() + o * run, c->f.begin() + (o + 1) * run);
                    if (out.isInt) out.i.insert(out.i.end(), c->i.begin() + o * run, c->i.begin() + (o + 1) * run);
                    if (!marked) continue;
                    if (c->batch.empty()) out.batch.insert(out.batch.end(), static_cast<size_t>(run), 0);
                    else out.batch.insert(out.batch.end(), c->batch.begin() + o * run, c->batch.begin() + (o + 1) * run);
                }
        } else if (op == "Reshape" || op == "Unsqueeze" || op == "Squeeze") {
            std::vector<int64_t> dims;
            if (op == "Reshape") {
                const Const* s = constant(n, 1);
                if (!s || !s->isInt || s->dims.size() != 1) return parseError("Reshape needs a 1-D integer shape");
                int64_t known = 1, unknown = -1;
                for (size_t k = 0; k < s->i.size(); ++k) {
                    int64_t v = s->i[k] == 0 && k < x.dims.size() ? x.dims[k] : s->i[k];
                    if (v == -1 && unknown < 0) unknown = static_cast<int64_t>(k);
                    else if (v < 0 || v > kMaxDim) return parseError("Reshape has an invalid dimension " + std::to_string(v));
                    else known *= v;
                    dims.push_back(v);
                }
                if (unknown >= 0) {
                    if (known == 0 || x.numel() % known) return parseError("Reshape cannot infer its -1 dimension");
                    dims[static_cast<size_t>(unknown)] = x.numel() / known;
                }
            } else {
                std::vector<int64_t> axes;
                if (const Const* c = constant(n, 1)) axes = c->i;
                else {
                    KILN_ASSIGN(axes, attrInts(n, "axes", {}));
                }
                const size_t rank = op == "Unsqueeze" ? x.dims.size() + axes.size() : x.dims.size();
                std::set<size_t> at;
                for (int64_t a : axes) {
                    KILN_ASSIGN(size_t k, axisOf(a, rank));
                    if (!at.insert(k).second) return parseError(op + " names an axis twice");
                }
                if (op == "Unsqueeze") {
                    for (size_t k = 0, j = 0; k < rank; ++k) dims.push_back(at.count(k) ? 1 : x.dims[j++]);
                } else {
                    for (size_t k = 0; k < x.dims.size(); ++k)
                        if (!(at.empty() ? x.dims[k] == 1 : at.count(k) != 0)) dims.push_back(x.dims[k]);
                }
            }
            int64_t numel = 1;
            for (int64_t d : dims) numel *= d;
            if (numel != x.numel()) return Error(ErrorCode::ShapeMismatch, op + " changes the number of values of a constant");
            out = x;
            out.dims = dims;
        } else if (op == "Transpose") {
            const size_t rank = x.dims.size();
            std::vector<int64_t> def;
            for (size_t k = rank; k-- > 0;) def.push_back(static_cast<int64_t>(k));
            KILN_ASSIGN(auto perm, attrInts(n, "perm", def));
            if (perm.size() != rank) return parseError("Transpose perm does not match the rank");
            std::vector<int64_t> dims;
            for (int64_t p : perm) {
                if (p < 0 || p >= static_cast<int64_t>(rank)) return parseError("Transpose perm is out of range");
                dims.push_back(x.dims[static_cast<size_t>(p)]);
            }
            const auto inStride = strides(x.dims), outStride = strides(dims);
            std::vector<int64_t> src(static_cast<size_t>(x.numel()));
            for (int64_t e = 0; e < x.numel(); ++e) {
                int64_t rest = e, s = 0;
                for (size_t k = 0; k < rank; ++k) {
                    const int64_t idx = rest / outStride[k];
                    rest %= outStride[k];
                    s += idx * inStride[static_cast<size_t>(perm[k])];
                }
                src[static_cast<size_t>(e)] = s;
            }
            out = gather(x, dims, src);
        } else if (op == "Gather") {
            const Const* idx = constant(n, 1);
            if (!idx || !idx->isInt) return parseError("Gather needs integer indices");
            if (x.dims.empty()) return parseError("Gather of a scalar");
            KILN_ASSIGN(int64_t a, attrInt(n, "axis", 0));
            KILN_ASSIGN(size_t axis, axisOf(a, x.dims.size()));
            std::vector<int64_t> dims(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis));
            dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
            dims.insert(dims.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.dims.end());
            if (dims.size() > 8) return unsupported(n.name(), "Gather gives more than 8 dimensions");
            int64_t outer = 1, inner = 1;
            for (size_t d = 0; d < axis; ++d) outer *= x.dims[d];
            for (size_t d = axis + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
            const int64_t dim = x.dims[axis];
            if (outer * idx->numel() * inner > kMaxElements) return parseError("Gather gives too many values");
            std::vector<int64_t> src;
            src.reserve(static_cast<size_t>(outer * idx->numel() * inner));
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t j : idx->i) {
                    // Negative indices count from the end.
                    if (j < -dim || j >= dim)
                        return parseError("Gather index " + std::to_string(j) + " is out of range for a dimension of " + std::to_string(dim));
                    const int64_t row = j < 0 ? j + dim : j;
                    for (int64_t e = 0; e < inner; ++e) src.push_back((o * dim + row) * inner + e);
                }
            out = gather(x, dims, src);
        } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
            // Element by element with NumPy's broadcasting; integers stay integers (Div truncates).
            const Const* y = constant(n, 1);
            if (n.input_size() != 2 || !y) return parseError(op + " needs two inputs");
            if (x.dependsOnBatch()) return unsupported(n.name(), op + " of the batch size is not supported; Kiln needs it fixed when reading");
            if (x.isInt != y->isInt) return parseError(op + " of an integer and a floating-point constant");
            const size_t rank = std::max(x.dims.size(), y->dims.size());
            std::vector<int64_t> dims(rank), ax(rank, 1), ay(rank, 1);
            for (size_t k = 0; k < rank; ++k) {
                if (k + x.dims.size() >= rank) ax[k] = x.dims[k + x.dims.size() - rank];
                if (k + y->dims.size() >= rank) ay[k] = y->dims[k + y->dims.size() - rank];
                if (ax[k] != ay[k] && ax[k] != 1 && ay[k] != 1) return Error(ErrorCode::ShapeMismatch, op + " of constants whose shapes do not broadcast");
                dims[k] = ax[k] == 1 ? ay[k] : ax[k];
            }
            int64_t numel = 1;
            for (int64_t d : dims) {
                numel *= d;
                if (numel > kMaxElements) return parseError(op + " of constants gives too many values");
            }
            const auto so = strides(dims), sx = strides(ax), sy = strides(ay);
            out.dims = dims;
            out.isInt = x.isInt;
            for (int64_t e = 0; e < numel; ++e) {
                int64_t rest = e, ix = 0, iy = 0;
                for (size_t k = 0; k < rank; ++k) {
                    const int64_t idx = rest / so[k];
                    rest %= so[k];
                    if (ax[k] != 1) ix += idx * sx[k];
                    if (ay[k] != 1) iy += idx * sy[k];
                }
                if (out.isInt) {
                    const int64_t a = x.i[static_cast<size_t>(ix)], b = y->i[static_cast<size_t>(iy)];
                    if (op == "Div" && b == 0) return parseError("Div of integer constants divides by zero");
                    int64_t r = 0;
                    const bool overflow = op == "Add"   ? __builtin_add_overflow(a, b, &r)
                                          : op == "Sub" ? __builtin_sub_overflow(a, b, &r)
                                          : op == "Mul" ? __builtin_mul_overflow(a, b, &r)
                                                        : (a == std::numeric_limits<int64_t>::min() && b == -1);
                    if (overflow) return parseError(op + " of integer constants overflows 64 bits");
                    if (op == "Div") r = a / b;
                    out.i.push_back(r);
                    out.f.push_back(static_cast<float>(r));
                } else {
                    const float a = x.f[static_cast<size_t>(ix)], b = y->f[static_cast<size_t>(iy)];
                    out.f.push_back(op == "Add" ? a + b : op == "Sub" ? a - b
                                                      : op == "Mul"   ? a * b
                                                                      : a / b);
                }
            }
        } else {  // Slice (opset 10+: starts, ends, axes, steps as inputs)
            const Const* st = constant(n, 1);
            const Const* en = constant(n, 2);
            if (!st || !en || !st->isInt || !en->isInt || st->i.size() != en->i.size()) return parseError("Slice needs integer starts and ends");
            std::vector<int64_t> axes, steps(st->i.size(), 1);
            for (size_t k = 0; k < st->i.size(); ++k) axes.push_back(static_cast<int64_t>(k));
            if (const Const* a = constant(n, 3)) axes = a->i;
            if (const Const* s = constant(n, 4)) steps = s->i;
            if (axes.size() != st->i.size() || steps.size() != st->i.size()) return parseError("Slice inputs differ in length");
            const size_t rank = x.dims.size();
            std::vector<int64_t> begin(rank, 0), step(rank, 1), dims = x.dims;
            for (size_t k = 0; k < axes.size(); ++k) {
                KILN_ASSIGN(size_t a, axisOf(axes[k], rank));
                const int64_t dim = x.dims[a], s = steps[k];
                if (s == 0) return parseError("Slice step is 0");
                // Negative indices count from the end; a negative step walks down to index 0.
                auto clampIdx = [&](int64_t v) {
                    v = std::clamp<int64_t>(v, -kMaxElements - 1, kMaxElements);
                    if (v < 0) v += dim;
                    return s > 0 ? std::clamp<int64_t>(v, 0, dim) : std::clamp<int64_t>(v, -1, dim - 1);
                };
                const int64_t b = clampIdx(st->i[k]);
                const int64_t e = clampIdx(en->i[k]);
                const int64_t count = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s) : std::max<int64_t>(0, (b - e + (-s) - 1) / (-s));
                begin[a] = b;
                step[a] = s;
                dims[a] = count;
            }
            const auto inStride = strides(x.dims), outStride = strides(dims);
            int64_t numel = 1;
            for (int64_t d : dims) numel *= d;
            std::vector<int64_t> src(static_cast<size_t>(numel));
            for (int64_t e = 0; e < numel; ++e) {
                int64_t rest = e, s = 0;
                for (size_t k = 0; k < rank; ++k) {
                    const int64_t idx = rest / outStride[k];
                    rest %= outStride[k];
                    s += (begin[k] + idx * step[k]) * inStride[k];
                }
                src[static_cast<size_t>(e)] = s;
            }
            out = gather(x, dims, src);
        }
        m_consts[n.output(0)] = std::move(out);
        return {};
    }

    // Shape: the ONNX dimensions of its input as a constant, from `start` to `end` (opset 15).
    // The batch is the inputs' batch size when they fix one; otherwise the element is marked as the
    // batch size, which a later Reshape takes as "keep the batch".
    Status shapeOf(const onnx::NodeProto& n) {
        if (n.output_size() < 1 || n.output(0).empty()) return parseError("Shape has no output");
        if (m_values.count(n.output(0)) || m_consts.count(n.output(0))) return parseError("value \"" + n.output(0) + "\" is produced twice");
        std::vector<int64_t> dims;
        std::vector<uint8_t> batch;
        if (const Const* c = batchConstant(n, 0)) {
            dims = c->dims;
            batch.assign(dims.size(), 0);
        } else {
            KILN_ASSIGN(Ref x, ref(n, 0));
            dims = onnxDims(x);
            batch.assign(dims.size(), 0);
            if (!dims.empty() && dims[0] == Shape::kBatch) {
                if (m_batch > 0) dims[0] = m_batch;
                else batch[0] = 1;
            }
        }
        const auto rank = static_cast<int64_t>(dims.size());
        KILN_ASSIGN(int64_t start, attrInt(n, "start", 0));
        KILN_ASSIGN(int64_t end, attrInt(n, "end", rank));
        // Negative positions count from the end; both are clamped to [0, rank].
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::clamp<int64_t>(start, 0, rank);
        end = std::clamp<int64_t>(end, 0, rank);
        Const c;
        c.isInt = true;
        for (int64_t k = start; k < end; ++k) {
            c.i.push_back(dims[static_cast<size_t>(k)]);
            c.batch.push_back(batch[static_cast<size_t>(k)]);
        }
        c.f.assign(c.i.begin(), c.i.end());
        c.dims = {static_cast<int64_t>(c.i.size())};
        if (!c.dependsOnBatch()) c.batch.clear();
        m_consts[n.output(0)] = std::move(c);
        return {};
    }

    // ---- plugin operations ------------------------------------------------------------------
    // The loaded plugin operation a custom-domain node stands for: Kiln's exporter writes
    // "acme.GroupNorm" as GroupNorm of the domain "ai.kiln.plugin.acme"; a node of the domain
    // "acme" itself is taken too.
    static const ops::PluginOp* pluginOpFor(const onnx::NodeProto& n) {
        std::string ns = n.domain();
        if (ns.rfind(kOnnxPluginDomainPrefix, 0) == 0) ns = ns.substr(std::strlen(kOnnxPluginDomainPrefix));
        if (ns.empty() || n.op_type().empty()) return nullptr;
        return ops::PluginRegistry::global().find(ns + "." + n.op_type());
    }

    // A Plugin node: the tensor inputs (channels-last values, as the exporter writes them), the
    // constant inputs after them as the operation's parameters in its order, and the attributes
    // by name, typed by the operation's schema. What does not fit is Unsupported, so the node
    // stays a placeholder naming the reason.
    Status pluginNode(const onnx::NodeProto& n, const ops::PluginOp& plugin) {
        const std::string& opName = plugin.name;
        auto refuse = [&](const std::string& why) {
            return unsupported(n.name(), "plugin operation " + opName + ": " + why);
        };
        Node node;
        node.name = nameFor(n);
        node.op = "Plugin";
        node.attrs.set(ops::kPluginOpAttr, opName);
        std::vector<const Const*> params;
        std::vector<std::string> paramInputs;
        for (int k = 0; k < n.input_size(); ++k) {
            const std::string& s = n.input(k);
            if (s.empty()) return refuse("input " + std::to_string(k + 1) + " is empty");
            if (auto it = m_values.find(s); it != m_values.end()) {
                if (!params.empty()) return refuse("tensor input \"" + s + "\" follows a constant; the parameters come last");
                if (it->second.layout != Layout::Same)
                    return refuse("input \"" + s + "\" is channel-first or a flatten of it; plugin operations read Kiln's channels-last tensors");
                node.inputs.push_back(kname(it->second.node));
            } else if (auto c = m_consts.find(s); c != m_consts.end()) {
                if (c->second.isInt) return refuse("constant input \"" + s + "\" is not float");
                params.push_back(&c->second);
                paramInputs.push_back(s);
            } else {
                return parseError("input \"" + s + "\" of " + n.op_type() + " is not produced by an earlier node");
            }
        }
        if (static_cast<int32_t>(params.size()) != plugin.desc->param_count)
            return refuse(std::to_string(params.size()) + " constant inputs, the operation has " + std::to_string(plugin.desc->param_count) +
                          " parameters");
        for (const auto& a : n.attribute()) {
            const AttrSpec* spec = nullptr;
            for (const auto& sp : plugin.attrs)
                if (sp.name == a.name()) spec = &sp;
            if (!spec) return refuse("the operation has no attribute \"" + a.name() + "\"");
            const auto t = a.type();
            switch (spec->type) {
            case AttrType::Bool:
            case AttrType::Int:
                if (t != onnx::AttributeProto::INT) return refuse("attribute \"" + a.name() + "\" must be an integer");
                if (spec->type == AttrType::Bool) node.attrs.set(a.name(), a.i() != 0);
                else node.attrs.set(a.name(), static_cast<int64_t>(a.i()));
                break;
            case AttrType::Float:
                if (t != onnx::AttributeProto::FLOAT) return refuse("attribute \"" + a.name() + "\" must be a float");
                node.attrs.set(a.name(), static_cast<double>(a.f()));
                break;
            case AttrType::String:
                if (t != onnx::AttributeProto::STRING) return refuse("attribute \"" + a.name() + "\" must be a string");
                node.attrs.set(a.name(), a.s());
                break;
            case AttrType::IntList:
                if (t != onnx::AttributeProto::INTS) return refuse("attribute \"" + a.name() + "\" must be a list of integers");
                if (a.ints_size() > 1024) return refuse("attribute \"" + a.name() + "\" is too long");
                node.attrs.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
                break;
            }
        }
        // The attributes, arity and shapes as the operation checks them; weights only after.
        std::vector<Shape> ins;
        for (const auto& in : node.inputs) ins.push_back(m_shapes[static_cast<size_t>(m_out.graph.find(in))]);
        auto attrs = ops::resolvePluginAttrs(node);
        if (!attrs.ok()) return refuse(attrs.error().message);
        ops::ShapeContext ctx{node, *attrs, ins};
        const ops::OpDef& def = ops::opDef(ops::OpKind::Plugin);
        auto out = def.shape(ctx);
        if (!out.ok()) return refuse(out.error().message);
        const std::vector<ops::ParamSpec> specs = def.params ? def.params(ctx, *out) : std::vector<ops::ParamSpec>{};
        if (specs.size() != params.size()) return refuse("the operation gives " + std::to_string(specs.size()) + " parameters for these inputs");
        for (size_t k = 0; k < specs.size(); ++k)
            if (params[k]->numel() != specs[k].shape.numel())
                return refuse("constant \"" + paramInputs[k] + "\" has " + std::to_string(params[k]->numel()) + " values, parameter " +
                              specs[k].name + " needs " + specs[k].shape.toString());
        const std::string name = node.name;
        m_out.graph.nodes.push_back(std::move(node));
        m_shapes.push_back(*out);
        const int idx = static_cast<int>(m_out.graph.nodes.size()) - 1;
        for (size_t k = 0; k < specs.size(); ++k) addWeight(name, specs[k].name, specs[k].shape, params[k]->f);
        return setOutput(n, Ref{idx, Layout::Same, {}});
    }

    Status convert(const onnx::NodeProto& n) {
        const std::string& op = n.op_type();
        const bool kiln = n.domain() == kOnnxKilnDomain;
        if (!n.domain().empty() && n.domain() != "ai.onnx" && !kiln) {
            if (const ops::PluginOp* plugin = pluginOpFor(n)) return pluginNode(n, *plugin);
            if (n.domain().rfind(kOnnxPluginDomainPrefix, 0) == 0) {
                const std::string name = n.domain().substr(std::strlen(kOnnxPluginDomainPrefix)) + "." + op;
                return Error(ErrorCode::UnknownOp, "operation " + n.domain() + "." + op + " is the plugin operation " + name +
                                                       ", which no loaded plugin provides; load its plugin (the plugin folder, KILN_PLUGIN_PATH or --plugin)")
                    .with("op", name);
            }
            return Error(ErrorCode::UnknownOp, "operation " + n.domain() + "." + op + " is not supported").with("op", op);
        }
        if (op == "Constant" && !kiln) {
            if (n.output_size() < 1) return parseError("Constant has no output");
            Const c;
            if (const auto* a = attr(n, "value"); a && a->has_t()) {
                KILN_ASSIGN(c, readTensor(a->t(), "Constant " + n.name()));
            } else if (const auto* f = attr(n, "value_float")) {
                c.f = {f->f()};
            } else if (const auto* fs = attr(n, "value_floats")) {
                if (fs->floats_size() > kMaxElements) return parseError("Constant too large");
                c.f.assign(fs->floats().begin(), fs->floats().end());
                c.dims = {static_cast<int64_t>(c.f.size())};
            } else if (const auto* i = attr(n, "value_int")) {
                c.isInt = true;
                c.i = {i->i()};
                c.f = {static_cast<float>(i->i())};
            } else if (const auto* is = attr(n, "value_ints")) {
                c.isInt = true;
                c.i.assign(is->ints().begin(), is->ints().end());
                c.f.assign(c.i.begin(), c.i.end());
                c.dims = {static_cast<int64_t>(c.i.size())};
            } else {
                return unsupported(n.name(), "this kind of Constant is not supported");
            }
            if (m_values.count(n.output(0)) || m_consts.count(n.output(0))) return parseError("value \"" + n.output(0) + "\" is produced twice");
            m_consts[n.output(0)] = std::move(c);
            return {};
        }
        if (op == "Identity" || op == "Dropout" || op == "Cast") {
            if (op == "Dropout" && n.output_size() > 1 && !n.output(1).empty()) return unsupported(n.name(), "Dropout masks are not supported");
            if (op == "Dropout" && n.input_size() > 2 && !n.input(2).empty()) {
                const Const* tm = constant(n, 2);
                if (!tm || (!tm->f.empty() && tm->f[0] != 0.f)) return unsupported(n.name(), "Dropout in training mode is not supported");
            }
            // Of a constant these fold (a Cast too: Kiln keeps constants as numbers); of a value
            // they pass it through (Kiln computes in float32).
            if (const Const* c = batchConstant(n, 0)) {
                if (n.output_size() < 1 || n.output(0).empty()) return parseError(op + " has no output");
                if (m_values.count(n.output(0)) || m_consts.count(n.output(0))) return parseError("value \"" + n.output(0) + "\" is produced twice");
                Const out = *c;
                if (op == "Cast") {
                    // Shape arithmetic casts between integers and floats: an integer keeps the
                    // whole part (toward zero); other types keep the numbers as they are.
                    using T = onnx::TensorProto;
                    KILN_ASSIGN(int64_t to, attrInt(n, "to", T::FLOAT));
                    const bool toInt = to == T::INT64 || to == T::INT32 || to == T::INT16 || to == T::INT8 || to == T::UINT8 ||
                                       to == T::UINT16 || to == T::UINT32 || to == T::UINT64;
                    const bool toFloat = to == T::FLOAT || to == T::DOUBLE || to == T::FLOAT16 || to == T::BFLOAT16;
                    if (toInt && !out.isInt) {
                        out.i.clear();
                        for (float v : out.f) {
                            if (!std::isfinite(v) || std::fabs(v) > 9.0e18f) return parseError("Cast of a constant out of the integer range");
                            out.i.push_back(static_cast<int64_t>(v));
                        }
                        out.f.assign(out.i.begin(), out.i.end());
                        out.isInt = true;
                    } else if (toFloat && out.isInt) {
                        if (out.dependsOnBatch()) return unsupported(n.name(), "Cast of the batch size is not supported; Kiln needs it fixed when reading");
                        out.i.clear();
                        out.isInt = false;
                    }
                }
                m_consts[n.output(0)] = std::move(out);
                return {};
            }
            KILN_ASSIGN(Ref r, ref(n, 0));
            return setOutput(n, r);
        }
        if (op == "Shape") return shapeOf(n);
        if (allInputsConstant(n) && foldable(op)) return foldConstant(n);
        // A value with no dimension besides the batch ([N], Kiln's [N, 1]) goes only through
        // element-by-element operations and shape changes.
        static const std::set<std::string> takesVector{"Identity", "Dropout", "Cast", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip",
                                                       "HardSigmoid", "HardSwish", "Gelu", "Add", "Sum", "Sub", "Mul", "Reshape",
                                                       "Flatten", "Unsqueeze"};
        if (!takesVector.count(op))
            for (const auto& s : n.input())
                if (auto it = m_values.find(s); it != m_values.end() && it->second.layout == Layout::Vector)
                    return unsupported(n.name(), op + " of a value with no dimension besides the batch is not supported");
        if (op == "Conv") return conv(n);
        if (op == "MaxPool") return pool(n, true);
        if (op == "AveragePool") return pool(n, false);
        if (op == "Gemm") return dense(n, true);
        if (op == "MatMul") return dense(n, false);
        if (op == "Add") return merge(n, "Add");
        if (op == "Sum") return merge(n, "Add");
        if (op == "Mul") {
            const Const* c0 = constant(n, 0);
            const Const* c1 = constant(n, 1);
            if ((c0 && !c1 && c0->numel() == 1 && !c0->isInt) || (c1 && !c0 && c1->numel() == 1 && !c1->isInt)) {
                KILN_ASSIGN(Ref x, ref(n, c0 ? 1 : 0));
                return rescale(n, x, (c0 ? c0 : c1)->f[0], 0.0, n.input(c0 ? 1 : 0));
            }
            if (c0 || c1) return unsupported(n.name(), "Mul by a constant is supported only for a scalar");
            return merge(n, "Multiply");
        }
        if (op == "Sub") {
            if (n.input_size() != 2) return parseError("Sub needs two inputs");
            if (constant(n, 0) || constant(n, 1)) return unsupported(n.name(), "Sub of a constant is not supported");
            return merge(n, "Subtract");
        }
        if (op == "Concat") return concat(n);
        if (op == "BatchNormalization") return batchNorm(n);
        if (op == "LayerNormalization") return layerNorm(n);
        if (op == "Flatten") return flatten(n);
        if (op == "Reshape") return reshape(n);
        if (op == "Transpose") return transpose(n);
        if (op == "Unsqueeze") return unsqueeze(n);
        if (op == "Relu") return activationNode(n, "ReLU", "relu");
        if (op == "Sigmoid") return activationNode(n, "Sigmoid", "sigmoid");
        if (op == "Tanh") return activationNode(n, "Tanh", "tanh");
        if (op == "LeakyRelu") {
            KILN_ASSIGN(float alpha, attrFloat(n, "alpha", 0.01f));
            if (!(alpha >= 0.f && alpha < 1e6f)) return unsupported(n.name(), "LeakyRelu alpha must be non-negative");
            AttrMap a;
            a.set("negative_slope", static_cast<double>(alpha));
            return activationNode(n, "LeakyReLU", "", a);
        }
        if (op == "Clip") {
            float lo = -INFINITY, hi = INFINITY;
            if (const Const* c = constant(n, 1); c && !c->f.empty()) lo = c->f[0];
            if (const Const* c = constant(n, 2); c && !c->f.empty()) hi = c->f[0];
            if ((n.input_size() > 1 && !n.input(1).empty() && !constant(n, 1)) || (n.input_size() > 2 && !n.input(2).empty() && !constant(n, 2)))
                return unsupported(n.name(), "Clip bounds must be constants");
            if (attr(n, "min")) {
                KILN_ASSIGN(lo, attrFloat(n, "min", lo));
            }
            if (attr(n, "max")) {
                KILN_ASSIGN(hi, attrFloat(n, "max", hi));
            }
            if (lo == 0.f && hi == 6.f) return activationNode(n, "ReLU6", "relu6");
            if (lo == 0.f && std::isinf(hi) && hi > 0) return activationNode(n, "ReLU", "relu");
            if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi))
                return unsupported(n.name(), "Clip needs finite bounds with min < max (or min 0 alone, as ReLU)");
            AttrMap a;
            a.set("min", static_cast<double>(lo));
            a.set("max", static_cast<double>(hi));
            return activationNode(n, "Clip", "", a);
        }
        if (op == "HardSigmoid") {
            KILN_ASSIGN(float alpha, attrFloat(n, "alpha", 0.2f));
            KILN_ASSIGN(float beta, attrFloat(n, "beta", 0.5f));
            if (std::fabs(alpha - 1.0f / 6.0f) > 1e-6f || beta != 0.5f)
                return unsupported(n.name(), "HardSigmoid is supported with alpha 1/6 and beta 0.5 (relu6(x + 3) / 6)");
            return activationNode(n, "HardSigmoid", "");
        }
        if (op == "HardSwish") return activationNode(n, "HardSwish", "");
        if (op == "Gelu" || op == "GeluTanh") {
            bool approximate = op == "GeluTanh";
            if (!kiln) {
                KILN_ASSIGN(std::string mode, attrString(n, "approximate", "none"));
                approximate = mode == "tanh";
            }
            AttrMap a;
            a.set("approximate", approximate);
            return activationNode(n, "GELU", approximate ? "" : "gelu", a);
        }
        if (op == "Softmax") {
            KILN_ASSIGN(Ref r, ref(n, 0));
            int rank = kshape(r.node).rank();
            KILN_ASSIGN(int64_t axis, attrInt(n, "axis", m_out.opset >= 13 ? -1 : 1));
            if (axis < 0) axis += rank;
            bool last = (r.layout == Layout::Same && axis == rank - 1) || (r.layout == Layout::ChannelFirst && axis == 1) ||
                        (r.layout == Layout::Pooled11 && axis == 1 && m_out.opset >= 13);
            if (!last) return unsupported(n.name(), "Softmax is supported over the channel (last) axis only");
            if (r.layout == Layout::Same && rank == 2 && tryFold(n, r, "softmax")) return setOutput(n, r);
            Node node;
            node.name = nameFor(n);
            node.op = "Softmax";
            node.inputs = {kname(r.node)};
            KILN_ASSIGN(int idx, addNode(std::move(node)));
            return setOutput(n, Ref{idx, r.layout, {}});
        }
        if (op == "GlobalAveragePool") {
            KILN_ASSIGN(Ref x, ref(n, 0));
            if (x.layout != Layout::ChannelFirst || kshape(x.node).rank() != 4)
                return unsupported(n.name(), "GlobalAveragePool needs a channel-first 4-D input");
            Node node;
            node.name = nameFor(n);
            node.op = "GlobalAveragePooling2D";
            node.inputs = {kname(x.node)};
            KILN_ASSIGN(int idx, addNode(std::move(node)));
            return setOutput(n, Ref{idx, Layout::Pooled11, {}});
        }
        if (op == "Pad") return padNode(n);
        if (op == "Resize") return resize(n);
        if (op == "GlobalMaxPool") {
            KILN_ASSIGN(Ref x, ref(n, 0));
            if (x.layout != Layout::ChannelFirst || kshape(x.node).rank() != 4)
                return unsupported(n.name(), "GlobalMaxPool needs a channel-first 4-D input");
            Node node;
            node.name = nameFor(n);
            node.op = "GlobalMaxPooling2D";
            node.inputs = {kname(x.node)};
            KILN_ASSIGN(int idx, addNode(std::move(node)));
            return setOutput(n, Ref{idx, Layout::Pooled11, {}});
        }
        if (op == "ReduceMean" || op == "ReduceMax") return reduce(n, op == "ReduceMax");
        if (kiln && op.rfind("GatherPerSample_", 0) == 0) return gatherPerSample(n);
        if (op == "Gather" && !batchConstant(n, 0)) return gatherValue(n);
        if (op == "Gather") {
            KILN_ASSIGN(const Const* table, needConst(n, 0, "the table"));
            KILN_ASSIGN(Ref ids, ref(n, 1));
            KILN_ASSIGN(int64_t axis, attrInt(n, "axis", 0));
            if (axis != 0 || table->dims.size() != 2 || table->isInt || ids.layout != Layout::Same)
                return unsupported(n.name(), "Gather is supported as an embedding lookup (a 2-D float table, axis 0)");
            Node node;
            node.name = nameFor(n);
            node.op = "Embedding";
            node.inputs = {kname(ids.node)};
            node.attrs.set("input_dim", table->dims[0]);
            node.attrs.set("output_dim", table->dims[1]);
            std::string name = node.name;
            KILN_ASSIGN(int idx, addNode(std::move(node)));
            addWeight(name, "embeddings", Shape{table->dims[0], table->dims[1]}, table->f);
            return setOutput(n, Ref{idx, Layout::Same, {}});
        }
        return Error(ErrorCode::UnknownOp, "ONNX operation " + op + " is not supported by Kiln's reader").with("op", op);
    }

    // Gather of a computed value by constant indices: Kiln's Gather with the indices as its
    // attribute. The gathered axis is one of the value's own (never the batch); on a channel-first
    // image the ONNX axis is moved to Kiln's channels-last one, with one-dimensional indices so that
    // the image keeps its four axes. Computed indices would pick across the batch (ONNX's indices
    // are not per sample), which Kiln's per-sample values cannot express.
    Status gatherValue(const onnx::NodeProto& n) {
        KILN_ASSIGN(Ref x, ref(n, 0));
        const Const* idx = constant(n, 1);
        if (!idx) {
            if (batchConstant(n, 1)) return unsupported(n.name(), "the indices of Gather are computed from the batch size");
            return unsupported(n.name(),
                               "Gather of a computed value by computed indices picks across the batch; Kiln gathers within "
                               "each sample, by constant indices or (as an embedding lookup) from a constant table");
        }
        if (!idx->isInt) return parseError("Gather needs integer indices");
        const int64_t rank = static_cast<int64_t>(onnxDims(x).size());
        KILN_ASSIGN(int64_t a, attrInt(n, "axis", 0));
        if (a < -rank || a >= rank)
            return parseError("Gather axis " + std::to_string(a) + " is out of range for a value of rank " + std::to_string(rank));
        if (a < 0) a += rank;
        if (a == 0) return unsupported(n.name(), "Gather along the batch axis (axis 0) is not supported: Kiln gathers within each sample");
        int64_t axis = a;
        Layout layout = Layout::Same;
        if (x.layout == Layout::ChannelFirst && rank == 4) {
            if (idx->dims.size() != 1)
                return unsupported(n.name(), "Gather of a channel-first image is supported with one-dimensional indices");
            axis = a == 1 ? 3 : a - 1;
            layout = Layout::ChannelFirst;
        } else if (x.layout != Layout::Same) {
            return unsupported(n.name(), "Gather is supported on values Kiln keeps in ONNX's layout and on channel-first images");
        }
        if (idx->numel() > kMaxElements) return parseError("Gather has too many indices");
        Node node;
        node.name = nameFor(n);
        node.op = "Gather";
        node.inputs = {kname(x.node)};
        node.attrs.set("axis", axis);
        node.attrs.set("indices", idx->i);
        node.attrs.set("indices_shape", idx->dims);
        KILN_ASSIGN(int k, addNode(std::move(node)));
        return setOutput(n, Ref{k, layout, {}});
    }

    // Kiln's per-sample Gather as its ONNX export writes it: a function of Kiln's domain named after
    // its form, "GatherPerSample_r<data rank>_a<axis>_i<indices rank after the batch>".
    Status gatherPerSample(const onnx::NodeProto& n) {
        long long rank = 0, axis = 0, indices = 0;
        if (std::sscanf(n.op_type().c_str(), "GatherPerSample_r%lld_a%lld_i%lld", &rank, &axis, &indices) != 3 || axis < 1 || axis >= rank)
            return parseError("operation " + n.op_type() + " of Kiln's domain does not name a per-sample Gather");
        KILN_ASSIGN(Ref x, ref(n, 0));
        KILN_ASSIGN(Ref ids, ref(n, 1));
        if (x.layout != Layout::Same || ids.layout != Layout::Same || kshape(x.node).rank() != rank ||
            kshape(ids.node).rank() != indices + 1)
            return unsupported(n.name(), n.op_type() + " needs its data of rank " + std::to_string(rank) + " and indices of rank " +
                                             std::to_string(indices + 1) + " in Kiln's layout");
        Node node;
        node.name = nameFor(n);
        node.op = "Gather";
        node.inputs = {kname(x.node), kname(ids.node)};
        node.attrs.set("axis", static_cast<int64_t>(axis));
        KILN_ASSIGN(int k, addNode(std::move(node)));
        return setOutput(n, Ref{k, Layout::Same, {}});
    }

    ImportOptions m_opt;
    ImportedModel m_out;
    std::vector<Shape> m_shapes;
    std::set<int> m_unknown;              // placeholder nodes whose output shape is unknown
    std::set<int> m_unknownChannelFirst;  // those of them reading a channel-first value
    std::map<std::string, std::vector<int64_t>> m_valueDims;
    std::map<std::string, Ref> m_values;
    std::map<std::string, Const> m_consts;
    std::map<std::string, int> m_uses;
    std::set<std::string> m_names;
    int64_t m_batch = 0;  // the batch size the graph inputs fix; 0 none, -1 they disagree
};

}  // namespace

const std::vector<std::string>& onnxOpsRead() {
    static const std::vector<std::string> ops{
        "Add", "AveragePool", "BatchNormalization", "Cast", "Clip", "Concat", "Constant", "Conv",
        "Dropout", "Flatten", "Gather", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid",
        "HardSwish", "Identity", "LayerNormalization", "LeakyRelu", "MatMul", "MaxPool", "Mul", "Pad",
        "ReduceMax", "ReduceMean", "Relu", "Reshape", "Resize", "Shape", "Sigmoid", "Softmax", "Sub",
        "Sum", "Tanh", "Transpose", "Unsqueeze"};
    return ops;
}

const char* mappingKindName(NodeMapping::Kind kind) {
    switch (kind) {
    case NodeMapping::Kind::Node: return "node";
    case NodeMapping::Kind::Folded: return "folded";
    case NodeMapping::Kind::PassThrough: return "pass-through";
    case NodeMapping::Kind::Constant: return "constant";
    case NodeMapping::Kind::Placeholder: return "placeholder";
    }
    return "?";
}

Result<ImportedModel> importOnnx(std::string_view bytes, const std::string& file, const ImportOptions& options) {
    auto withFile = [&](Error e) {
        if (!file.empty() && e.file.empty()) e.withFile(file);
        return e;
    };
    if (bytes.size() > (size_t{1} << 31) - 1)
        return withFile(Error(ErrorCode::Unsupported, "ONNX files over 2 GB are not supported").with("what", "file size"));
    onnx::ModelProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return withFile(parseError("the file is not a valid ONNX model (protobuf parsing failed)"));
    try {
        Importer importer(options);
        auto r = importer.run(proto);
        if (!r.ok()) return withFile(r.error());
        return r;
    } catch (const std::bad_alloc&) {
        return withFile(Error(ErrorCode::OutOfMemory, "out of memory while reading the ONNX model"));
    } catch (const std::exception& e) {
        return withFile(parseError(std::string("the ONNX model could not be read: ") + e.what()));
    }
}

Result<ImportedModel> loadOnnx(const std::string& path, const ImportOptions& options) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error(ErrorCode::FileNotFound, "cannot open " + path).withFile(path).with("path", path);
    std::stringstream ss;
    ss << f.rdbuf();
    if (f.bad()) return Error(ErrorCode::FileRead, "cannot read " + path).withFile(path).with("reason", "read failed");
    return importOnnx(ss.str(), path, options);
}

Status applyWeights(const ImportedModel& model, exec::ParamStore& params) {
    for (auto& p : params.params()) {
        const NamedTensor* found = nullptr;
        for (const auto& w : model.weights)
            if (w.name == p.name) found = &w;
        if (!found)
            return Error(ErrorCode::WeightsMismatch, "the imported model has no tensor " + p.name).with("tensor", p.name).with("reason", "missing");
        if (found->tensor.shape() != p.value.shape())
            return Error(ErrorCode::WeightsMismatch, "tensor " + p.name + " has shape " + found->tensor.shape().toString() +
                                                         ", expected " + p.value.shape().toString())
                .with("tensor", p.name)
                .with("reason", "shape");
        p.value.copyFrom(found->tensor);
    }
    return {};
}

std::vector<Tensor> syntheticInputs(const ops::ModelInfo& model, int64_t batch, uint64_t seed) {
    std::vector<Tensor> out;
    const auto consumers = model.graph.consumers();
    for (size_t k = 0; k < model.inputs.size(); ++k) {
        int i = model.inputs[k];
        Tensor t(model.nodes[static_cast<size_t>(i)].output.withBatch(batch));
        int64_t vocab = 0;
        auto limit = [&vocab](int64_t n) { vocab = vocab == 0 ? n : std::min(vocab, n); };
        for (int c : consumers[static_cast<size_t>(i)]) {
            const Node& user = model.graph.nodes[static_cast<size_t>(c)];
            const auto& info = model.nodes[static_cast<size_t>(c)];
            if (user.op == "Embedding") limit(info.attrs.getInt("input_dim"));
            // The indices of a per-sample Gather: rows of the gathered axis.
            if (user.op == "Gather" && user.inputs.size() == 2 && user.inputs[1] == model.graph.nodes[static_cast<size_t>(i)].name) {
                const Shape& data = info.inputShapes[0];
                int64_t axis = info.attrs.getInt("axis");
                if (axis < 0) axis += data.rank();
                limit(data[static_cast<int>(axis)]);
            }
        }
        float* d = t.data<float>();
        for (int64_t e = 0; e < t.numel(); ++e) {
            float u = rng::uniform(seed, k + 1, static_cast<uint64_t>(e));
            d[e] = vocab > 0 ? std::floor(u * static_cast<float>(vocab)) : 2.0f * u - 1.0f;
        }
        out.push_back(std::move(t));
    }
    return out;
}

Result<ParityReport> checkOnnxParity(const ops::ModelInfo& model, exec::ParamStore& params, std::string_view onnxBytes,
                                     const std::vector<Tensor>& inputs, ThreadPool& pool) {
    if (inputs.size() != model.inputs.size() || inputs.empty())
        return Error(ErrorCode::InvalidArgument, "the parity batch needs one tensor per model input");
    const int64_t batch = inputs[0].shape()[0];
    KILN_ASSIGN(ImportedModel imported, importOnnx(onnxBytes, "model.onnx"));
    KILN_ASSIGN(ops::ModelInfo back, ops::analyzeModel(imported.graph));
    exec::ParamStore backParams = exec::ParamStore::create(back, 0);
    KILN_TRY(applyWeights(imported, backParams));

    exec::CompileOptions opts;
    opts.batch = batch;
    opts.training = false;
    KILN_ASSIGN(auto kilnPlan, exec::Plan::compile(model, params, opts, pool));
    KILN_ASSIGN(auto onnxPlan, exec::Plan::compile(back, backParams, opts, pool));
    for (size_t k = 0; k < inputs.size(); ++k) {
        const std::string& name = model.graph.nodes[static_cast<size_t>(model.inputs[k])].name;
        if (inputs[k].shape() != model.nodes[static_cast<size_t>(model.inputs[k])].output.withBatch(batch))
            return Error(ErrorCode::ShapeMismatch, "parity input for " + name + " has shape " + inputs[k].shape().toString()).withNode(name);
        std::memcpy(kilnPlan->input(k), inputs[k].data<float>(), inputs[k].bytes());
        int j = back.graph.find(name);
        if (j < 0 || back.graph.nodes[static_cast<size_t>(j)].op != "Input")
            return Error(ErrorCode::Internal, "the exported model lost input " + name).withNode(name);
        std::memcpy(onnxPlan->input(name), inputs[k].data<float>(), inputs[k].bytes());
    }
    KILN_TRY(kilnPlan->forward());
    KILN_TRY(onnxPlan->forward());
    if (imported.outputs.size() != model.outputs.size())
        return Error(ErrorCode::Internal, "the exported model has " + std::to_string(imported.outputs.size()) + " outputs instead of " +
                                              std::to_string(model.outputs.size()));
    ParityReport rep;
    rep.batch = batch;
    rep.worstOutput = imported.outputs.empty() ? std::string() : imported.outputs[0];
    for (size_t k = 0; k < model.outputs.size(); ++k) {
        Shape s = kilnPlan->outputShape(k);
        if (onnxPlan->outputShape(k) != s)
            return Error(ErrorCode::ShapeMismatch, "exported output " + imported.outputs[k] + " has shape " +
                                                       onnxPlan->outputShape(k).toString() + " instead of " + s.toString());
        const float* a = kilnPlan->output(k);
        const float* b = onnxPlan->output(k);
        for (int64_t e = 0; e < s.numel(); ++e) {
            double diff = std::fabs(static_cast<double>(a[e]) - static_cast<double>(b[e]));
            if (std::isnan(a[e]) != std::isnan(b[e])) diff = INFINITY;
            if (std::isnan(diff)) diff = 0.0;
            double excess = diff / (kParityAbsTolerance + kParityRelTolerance * std::fabs(static_cast<double>(a[e])));
            if (diff > rep.maxAbsDiff) {
                rep.maxAbsDiff = diff;
                rep.worstOutput = imported.outputs[k];
            }
            rep.maxRelExcess = std::max(rep.maxRelExcess, excess);
        }
    }
    rep.passed = rep.maxRelExcess <= 1.0;
    return rep;
}

}  // namespace kiln::engine::io
