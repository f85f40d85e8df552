// SPDX-License-Identifier: Apache-2.0
// Graph structure checks and topological ordering (Kahn's algorithm, stable in file order).
#include "engine/graph/graph.h"

#include <queue>
#include <set>

namespace kiln::engine {

int Graph::find(const std::string& name) const {
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].name == name) return static_cast<int>(i);
    return -1;
}

Node* Graph::node(const std::string& name) {
    int i = find(name);
    return i < 0 ? nullptr : &nodes[static_cast<size_t>(i)];
}

const Node* Graph::node(const std::string& name) const {
    int i = find(name);
    return i < 0 ? nullptr : &nodes[static_cast<size_t>(i)];
}

Status Graph::validateStructure() const {
    if (nodes.empty()) return Error(ErrorCode::ConfigError, "the graph has no nodes").with("field", "graph.nodes");
    std::set<std::string> seen;
    for (const auto& n : nodes) {
        if (n.name.empty())
            return Error(ErrorCode::ConfigError, "a node of type " + n.op + " has no name").with("field", "name");
        if (!seen.insert(n.name).second)
            return Error(ErrorCode::DuplicateNode, "two nodes are called \"" + n.name + "\"").withNode(n.name);
    }
    for (const auto& n : nodes) {
        for (const auto& in : n.inputs)
            if (!seen.count(in))
                return Error(ErrorCode::DanglingInput,
                             "node \"" + n.name + "\" takes input from \"" + in + "\", which does not exist")
                    .withNode(n.name)
                    .with("input", in);
        if (!n.shareWeightsWith.empty()) {
            if (!seen.count(n.shareWeightsWith))
                return Error(ErrorCode::DanglingInput, "node \"" + n.name + "\" shares weights with \"" +
                                                           n.shareWeightsWith + "\", which does not exist")
                    .withNode(n.name)
                    .with("input", n.shareWeightsWith);
            if (n.shareWeightsWith == n.name)
                return Error(ErrorCode::BadAttribute, "node \"" + n.name + "\" cannot share weights with itself")
                    .withNode(n.name)
                    .with("attribute", "share_weights_with");
        }
    }
    for (const auto& o : outputs)
        if (!seen.count(o))
            return Error(ErrorCode::DanglingInput, "model output \"" + o + "\" is not a node")
                .withNode(o)
                .with("input", o);
    auto order = topologicalOrder();
    if (!order.ok()) return order.error();
    return {};
}

std::vector<std::vector<int>> Graph::consumers() const {
    std::vector<std::vector<int>> out(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
        for (const auto& in : nodes[i].inputs) {
            int p = find(in);
            if (p >= 0) out[static_cast<size_t>(p)].push_back(static_cast<int>(i));
        }
    return out;
}

Result<std::vector<int>> Graph::topologicalOrder() const {
    std::unordered_map<std::string, int> index;
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].name] = static_cast<int>(i);
    std::vector<int> pending(nodes.size(), 0);
    std::vector<std::vector<int>> users(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
        for (const auto& in : nodes[i].inputs) {
            auto it = index.find(in);
            if (it == index.end())
                return Error(ErrorCode::DanglingInput, "node \"" + nodes[i].name + "\" takes input from \"" + in +
                                                           "\", which does not exist")
                    .withNode(nodes[i].name)
                    .with("input", in);
            ++pending[i];
            users[static_cast<size_t>(it->second)].push_back(static_cast<int>(i));
        }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (pending[i] == 0) ready.push(static_cast<int>(i));
    std::vector<int> order;
    while (!ready.empty()) {
        int i = ready.top();
        ready.pop();
        order.push_back(i);
        for (int u : users[static_cast<size_t>(i)])
            if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
    }
    if (order.size() != nodes.size()) {
        for (size_t i = 0; i < nodes.size(); ++i)
            if (pending[i] > 0)
                return Error(ErrorCode::Cycle, "node \"" + nodes[i].name + "\" is part of a cycle: a model graph must not loop back")
                    .withNode(nodes[i].name);
    }
    return order;
}

}  // namespace kiln::engine
