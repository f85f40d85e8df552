// SPDX-License-Identifier: Apache-2.0
// The model graph: named nodes with typed attributes, several inputs and outputs, skip
// connections, shared weights, and per-node trainable flag and learning-rate multiplier.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/graph/attr.h"

namespace kiln::engine {

struct Node {
    std::string name;                 // unique within the graph; also the parameter prefix
    std::string op;                   // op name as written in files ("Dense", "Conv2D", ...)
    std::vector<std::string> inputs;  // names of producer nodes, in port order
    AttrMap attrs;                    // as written; defaults are filled in by the op table
    bool trainable = true;            // false: parameters are frozen (no gradient, no update)
    double lrMultiplier = 1.0;        // scales the learning rate for this node's parameters
    std::string shareWeightsWith;     // another node whose parameters this node uses
    nlohmann::json extra = nlohmann::json::object();  // unknown fields, kept on save
};

class Graph {
public:
    std::vector<Node> nodes;
    std::vector<std::string> outputs;  // model outputs (node names), in order

    // Index of the node called `name`, or -1.
    int find(const std::string& name) const;
    Node* node(const std::string& name);
    const Node* node(const std::string& name) const;

    // Structure checks that need no op knowledge: non-empty unique names, inputs that exist,
    // outputs that exist, no cycles, shared-weight targets that exist. Errors name the node.
    Status validateStructure() const;

    // Node indices in a topological order (stable: file order among ready nodes).
    Result<std::vector<int>> topologicalOrder() const;

    // For each node, the indices of the nodes consuming its output.
    std::vector<std::vector<int>> consumers() const;
};

}  // namespace kiln::engine
