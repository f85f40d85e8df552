// SPDX-License-Identifier: Apache-2.0
// Shape inference and parameter resolution over a graph in topological order.
#include "engine/ops/model.h"

#include "engine/ops/plugin_ops.h"

namespace kiln::engine::ops {

int64_t ModelInfo::parameterCount(bool trainable) const {
    int64_t n = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto& ni = nodes[i];
        if (ni.paramOwner != static_cast<int>(i)) continue;
        for (const auto& p : ni.params) {
            bool t = p.trainable && ni.trainable;
            if (t == trainable) n += p.shape.numel();
        }
    }
    return n;
}

namespace {
// Elements of one tensor (per sample for activations): 2^31 float32 values are 8 GiB. Beyond it,
// sizes and operation counts would overflow 64-bit arithmetic further on.
constexpr int64_t kMaxTensorElements = int64_t(1) << 31;

Status checkSize(const Node& n, const Shape& shape, const std::string& what) {
    int64_t count = 1;
    for (int64_t d : shape.dims()) {
        if (d < 0) continue;  // the batch
        if (d != 0 && count > kMaxTensorElements / d) {
            count = kMaxTensorElements + 1;
            break;
        }
        count *= d;
    }
    if (count <= kMaxTensorElements) return okStatus();
    const std::string reason = what + " of shape " + shape.toString() + " has more than " +
                               std::to_string(kMaxTensorElements) + " elements";
    return Error(ErrorCode::ShapeMismatch, "node \"" + n.name + "\": " + reason).withNode(n.name).with("reason", reason);
}
}  // namespace

ShapeContext shapeContext(const ModelInfo& m, int i) {
    const auto& ni = m.nodes[static_cast<size_t>(i)];
    return ShapeContext{m.graph.nodes[static_cast<size_t>(i)], ni.attrs, ni.inputShapes};
}

Result<ModelInfo> analyzeModel(const Graph& graph) {
    KILN_TRY(graph.validateStructure());
    ModelInfo m;
    m.graph = graph;
    m.nodes.resize(graph.nodes.size());
    KILN_ASSIGN(m.order, graph.topologicalOrder());

    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        const Node& n = graph.nodes[i];
        const OpDef* def = findOp(n.op);
        if (!def) {
            std::string hint;
            for (const auto& row : opTable())
                if (std::equal(row.name.begin(), row.name.end(), n.op.begin(), n.op.end(),
                               [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
                    hint = " (did you mean \"" + std::string(row.name) + "\"?)";
            return Error(ErrorCode::UnknownOp, "node \"" + n.name + "\" has unknown op \"" + n.op + "\"" + hint)
                .withNode(n.name)
                .with("op", n.op);
        }
        if (def->category == Category::Loss)
            return Error(ErrorCode::UnknownOp, "node \"" + n.name + "\" is a loss (" + n.op +
                                                   "): losses belong in the training configuration")
                .withNode(n.name)
                .with("op", n.op);
        auto& ni = m.nodes[i];
        ni.def = def;
        ni.trainable = n.trainable;
        ni.lrMultiplier = static_cast<float>(n.lrMultiplier);
        if (n.lrMultiplier < 0)
            return Error(ErrorCode::BadAttribute, "node \"" + n.name + "\": lr_multiplier must not be negative")
                .withNode(n.name)
                .with("attribute", "lr_multiplier");
        int count = static_cast<int>(n.inputs.size());
        if (count < def->minInputs || (def->maxInputs >= 0 && count > def->maxInputs)) {
            std::string expected = def->maxInputs < 0 ? "at least " + std::to_string(def->minInputs)
                                   : def->minInputs == def->maxInputs ? std::to_string(def->minInputs)
                                   : std::to_string(def->minInputs) + " to " + std::to_string(def->maxInputs);
            return Error(ErrorCode::ArityMismatch, n.op + " \"" + n.name + "\" takes " + expected + " input(s) but has " +
                                                       std::to_string(count))
                .withNode(n.name)
                .with("expected", expected)
                .with("got", std::to_string(count));
        }
        KILN_ASSIGN(ni.attrs, resolveAttrs(*def, n));
        if (def->kind == OpKind::Input) m.inputs.push_back(static_cast<int>(i));
    }

    for (int i : m.order) {
        auto& ni = m.nodes[static_cast<size_t>(i)];
        const Node& n = graph.nodes[static_cast<size_t>(i)];
        for (const auto& in : n.inputs) {
            int p = graph.find(in);
            ni.inputs.push_back(p);
            ni.inputShapes.push_back(m.nodes[static_cast<size_t>(p)].output);
        }
        ShapeContext ctx{n, ni.attrs, ni.inputShapes};
        KILN_ASSIGN(ni.output, ni.def->shape(ctx));
        KILN_TRY(checkSize(n, ni.output, "its output"));
        if (ni.def->params) ni.params = ni.def->params(ctx, ni.output);
        for (const auto& p : ni.params) KILN_TRY(checkSize(n, p.shape, "its parameter \"" + p.name + "\""));
        // Both factors of every op's count are now bounded, so it cannot overflow.
        if (ni.def->macs) ni.macs = ni.def->macs(ctx, ni.output);
        ni.paramOwner = i;
    }

    // Shared weights: the owner must be of the same op with identical parameter shapes.
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        const Node& n = graph.nodes[i];
        if (n.shareWeightsWith.empty()) continue;
        int owner = graph.find(n.shareWeightsWith);
        while (!graph.nodes[static_cast<size_t>(owner)].shareWeightsWith.empty()) {
            owner = graph.find(graph.nodes[static_cast<size_t>(owner)].shareWeightsWith);
            if (owner == static_cast<int>(i))
                return Error(ErrorCode::Cycle, "node \"" + n.name + "\" shares weights in a loop").withNode(n.name);
        }
        auto& ni = m.nodes[i];
        const auto& oi = m.nodes[static_cast<size_t>(owner)];
        bool same = ni.params.size() == oi.params.size() && !ni.params.empty();
        for (size_t k = 0; same && k < ni.params.size(); ++k) same = ni.params[k].shape == oi.params[k].shape;
        if (!same)
            return Error(ErrorCode::ShapeMismatch, "node \"" + n.name + "\" shares weights with \"" +
                                                       graph.nodes[static_cast<size_t>(owner)].name +
                                                       "\" but their parameters differ in shape")
                .withNode(n.name)
                .with("reason", "shared weights differ");
        ni.paramOwner = owner;
    }

    if (graph.outputs.empty()) {
        auto users = graph.consumers();
        for (size_t i = 0; i < users.size(); ++i)
            if (users[i].empty()) m.outputs.push_back(static_cast<int>(i));
    } else {
        for (const auto& o : graph.outputs) m.outputs.push_back(graph.find(o));
    }
    if (m.inputs.empty())
        return Error(ErrorCode::ConfigError, "the graph has no Input node").with("field", "graph.nodes");
    return m;
}

std::vector<std::string> placeholderNodes(const Graph& graph) {
    std::vector<std::string> out;
    const std::string_view placeholder = opDef(OpKind::Placeholder).name;
    for (const auto& n : graph.nodes) {
        if (n.op != placeholder) continue;
        std::string what;
        if (auto it = n.attrs.values().find("keras_class"); it != n.attrs.values().end())
            if (const auto* s = std::get_if<std::string>(&it->second); s && !s->empty()) what = "Keras " + *s;
        if (auto it = n.attrs.values().find("onnx_op"); what.empty() && it != n.attrs.values().end())
            if (const auto* s = std::get_if<std::string>(&it->second); s && !s->empty()) what = "ONNX " + *s;
        out.push_back(n.name + (what.empty() ? std::string() : " (" + what + ")"));
    }
    return out;
}

std::vector<std::string> missingPluginNodes(const Graph& graph) {
    std::vector<std::string> out;
    const std::string_view plugin = opDef(OpKind::Plugin).name;
    for (const auto& n : graph.nodes)
        if (n.op == plugin && !pluginOpOf(n)) out.push_back(n.name + " (" + pluginOpName(n) + ")");
    return out;
}

Status refusePlaceholders(const Graph& graph, const std::string& action) {
    const auto names = placeholderNodes(graph);
    if (names.empty()) {
        const auto missing = missingPluginNodes(graph);
        if (missing.empty()) return {};
        std::string list;
        for (const auto& n : missing) list += (list.empty() ? "" : ", ") + n;
        const std::string folder = userPluginFolder();
        return Error(ErrorCode::Unsupported,
                     "cannot " + action + " the model: " + std::to_string(missing.size()) + " node" +
                         (missing.size() == 1 ? " runs a plugin operation" : "s run plugin operations") +
                         " that no loaded plugin provides: " + list + "; put the plugin in " +
                         (folder.empty() ? std::string("the plugin folder") : folder) +
                         ", or name it with KILN_PLUGIN_PATH or --plugin")
            .withNode(missing.front().substr(0, missing.front().find(" (")))
            .with("what", "missing plugin operations: " + list);
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string first = names.front().substr(0, names.front().find(" ("));
    return Error(ErrorCode::Unsupported, "cannot " + action + " the model: " + std::to_string(names.size()) +
                                             " placeholder node" + (names.size() == 1 ? "" : "s") +
                                             " stand" + (names.size() == 1 ? "s" : "") +
                                             " for imported operations Kiln cannot compute: " + list +
                                             "; replace them with Kiln layers")
        .withNode(first)
        .with("what", "placeholder nodes: " + list);
}

}  // namespace kiln::engine::ops
