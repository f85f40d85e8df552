// SPDX-License-Identifier: Apache-2.0
// Model analysis: resolves every node against the op table, infers shapes (symbolic batch N),
// parameter specs (with shared weights resolved) and MACs. The editor, the summary and the
// planner all start from this.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/ops/op_table.h"

namespace kiln::engine::ops {

struct NodeInfo {
    const OpDef* def = nullptr;
    AttrMap attrs;               // defaults filled in
    std::vector<int> inputs;     // producer node indices
    std::vector<Shape> inputShapes;
    Shape output;                // with the symbolic batch dimension first
    std::vector<ParamSpec> params;
    int paramOwner = -1;         // node whose parameters are used (itself unless shared)
    int64_t macs = 0;            // per sample
    bool trainable = true;
    float lrMultiplier = 1.0f;
};

struct ModelInfo {
    Graph graph;
    std::vector<NodeInfo> nodes;  // same indices as graph.nodes
    std::vector<int> order;       // topological
    std::vector<int> inputs;      // Input nodes, in file order
    std::vector<int> outputs;     // model outputs (graph.outputs, or the sinks when empty)

    const NodeInfo& info(const std::string& name) const { return nodes[static_cast<size_t>(graph.find(name))]; }
    int64_t parameterCount(bool trainable) const;  // unique parameters (shared ones count once)
};

// Validates structure, attributes and shapes. The first problem is returned as an Error that
// names the node (and the attribute or dimension).
Result<ModelInfo> analyzeModel(const Graph& graph);

// Placeholder nodes (imported operations Kiln cannot compute) as `name (ONNX op)`, graph order.
std::vector<std::string> placeholderNodes(const Graph& graph);
// Plugin nodes whose plugin operation no loaded plugin provides, as `name (op)`, graph order.
std::vector<std::string> missingPluginNodes(const Graph& graph);
// An Unsupported error naming every placeholder node when the graph has any, else every Plugin
// node whose plugin is not loaded: `action` says what is refused ("train", "export", "run").
// Placeholders must be replaced, and missing plugins loaded, before the model can run.
Status refusePlaceholders(const Graph& graph, const std::string& action);

// A ShapeContext for node i of an analysed model.
ShapeContext shapeContext(const ModelInfo& m, int i);

}  // namespace kiln::engine::ops
