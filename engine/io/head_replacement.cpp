// SPDX-License-Identifier: Apache-2.0
// Head replacement: the downstream closure of the cut node goes, the new head is attached, and the
// cut node's output shape (inferred on the cut graph, so a broken old head does not matter) decides
// whether the head pools first.
#include "engine/io/head_replacement.h"

#include <set>

#include "engine/ops/model.h"

namespace kiln::engine::io {

namespace {

std::string freeName(const Graph& graph, const std::string& base) {
    if (graph.find(base) < 0) return base;
    for (int k = 1;; ++k)
        if (const std::string name = base + "_" + std::to_string(k); graph.find(name) < 0) return name;
}

}  // namespace

Result<HeadReplacement> replaceHead(const Project& project, const std::string& cutNode, const HeadOptions& options) {
    const Graph& graph = project.graph;
    if (options.classes < 1)
        return Error(ErrorCode::ConfigError, "The new head needs at least one class (got " + std::to_string(options.classes) + ").")
            .with("field", "classes")
            .with("reason", "must be at least 1");
    if (!(options.dropout >= 0.0 && options.dropout < 1.0))
        return Error(ErrorCode::ConfigError, "The dropout rate of the new head must be at least 0 and below 1 (got " +
                                                 std::to_string(options.dropout) + ").")
            .with("field", "dropout")
            .with("reason", "must be in [0, 1)");
    const int cut = graph.find(cutNode);
    if (cut < 0)
        return Error(ErrorCode::InvalidArgument, "There is no node called \"" + cutNode + "\" to cut the network after.")
            .withNode(cutNode)
            .with("field", "node")
            .with("reason", "no such node");
    KILN_TRY(graph.validateStructure());

    // Everything that reads the cut node, directly or not.
    const auto consumers = graph.consumers();
    std::set<int> downstream;
    std::vector<int> todo(consumers[static_cast<size_t>(cut)]);
    while (!todo.empty()) {
        const int i = todo.back();
        todo.pop_back();
        if (!downstream.insert(i).second) continue;
        for (int j : consumers[static_cast<size_t>(i)]) todo.push_back(j);
    }

    HeadReplacement r;
    std::set<std::string> removedNames;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        if (downstream.count(static_cast<int>(i))) {
            r.removed.push_back(graph.nodes[i].name);
            removedNames.insert(graph.nodes[i].name);
        } else {
            r.graph.nodes.push_back(graph.nodes[i]);
        }
    }
    for (const auto& n : r.graph.nodes)
        if (!n.shareWeightsWith.empty() && removedNames.count(n.shareWeightsWith))
            return Error(ErrorCode::BadAttribute, "Node \"" + n.name + "\" shares the weights of \"" + n.shareWeightsWith +
                                                      "\", which the cut after \"" + cutNode + "\" would remove.")
                .withNode(n.name)
                .with("attribute", "share_weights_with")
                .with("reason", "shares weights with a removed node");

    // The cut node's output shape, from the graph without the old head.
    Project cutProject = project;
    cutProject.graph = r.graph;
    cutProject.graph.outputs = {cutNode};
    KILN_ASSIGN(Graph expanded, modelGraph(cutProject));
    auto info = ops::analyzeModel(expanded);
    if (!info.ok()) {
        Error e = info.error();
        e.message = "The network up to \"" + cutNode + "\" has a problem: " + e.message;
        return e;
    }
    const Shape cutShape = info->nodes[static_cast<size_t>(info->outputs.at(0))].output;
    if (cutShape.rank() != 4 && cutShape.rank() != 2)
        return Error(ErrorCode::ShapeMismatch, "The output of \"" + cutNode + "\" has " + std::to_string(cutShape.rank() - 1) +
                                                   " dimension(s) after the batch; a classification head needs a feature map "
                                                   "[height, width, channels] or a feature vector.")
            .withNode(cutNode)
            .with("reason", "rank " + std::to_string(cutShape.rank()));

    std::string last = cutNode;
    auto add = [&](const std::string& suffix, const std::string& op, AttrMap attrs) {
        Node n;
        n.name = freeName(r.graph, options.prefix + "_" + suffix);
        n.op = op;
        n.inputs = {last};
        n.attrs = std::move(attrs);
        r.graph.nodes.push_back(n);
        r.added.push_back(n.name);
        last = n.name;
    };
    if (cutShape.rank() == 4) {
        add("pooling", "GlobalAveragePooling2D", {});
        r.pooled = true;
    }
    if (options.dropout > 0) {
        AttrMap a;
        a.set("rate", options.dropout);
        add("dropout", "Dropout", std::move(a));
    }
    AttrMap dense;
    dense.set("units", options.classes);
    dense.set("activation", std::string("softmax"));
    add("predictions", "Dense", std::move(dense));

    // The new Dense takes the place of the first output removed; outputs that stay keep theirs.
    bool placed = false;
    for (const auto& out : graph.outputs) {
        if (!removedNames.count(out)) {
            r.graph.outputs.push_back(out);
        } else if (!placed) {
            r.graph.outputs.push_back(last);
            placed = true;
        }
    }
    if (!placed) r.graph.outputs.push_back(last);
    return r;
}

std::string suggestCutNode(const Project& project) {
    auto expanded = modelGraph(project);
    if (!expanded.ok()) return {};
    auto order = expanded->topologicalOrder();
    if (!order.ok()) return {};
    const Graph& g = project.graph;
    // A global pooling node reads the backbone's last feature map.
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
        const Node& n = expanded->nodes[static_cast<size_t>(*it)];
        if ((n.op == "GlobalAveragePooling2D" || n.op == "GlobalMaxPooling2D") && n.inputs.size() == 1 && g.find(n.inputs[0]) >= 0)
            return n.inputs[0];
    }
    auto info = ops::analyzeModel(*expanded);
    if (!info.ok()) return {};
    for (auto it = info->order.rbegin(); it != info->order.rend(); ++it) {
        const auto& n = expanded->nodes[static_cast<size_t>(*it)];
        if (info->nodes[static_cast<size_t>(*it)].output.rank() == 4 && g.find(n.name) >= 0) return n.name;
    }
    return {};
}

}  // namespace kiln::engine::io
