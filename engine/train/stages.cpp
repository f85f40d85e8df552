// SPDX-License-Identifier: Apache-2.0
// Which nodes train in a fine-tuning stage.
#include "engine/train/stages.h"

#include <algorithm>
#include <cmath>

namespace kiln::engine::train {
namespace {

bool ownsParameters(const ops::ModelInfo& m, size_t i) { return !m.nodes[i].params.empty(); }

// consumers[i]: the nodes that read node i.
std::vector<std::vector<int>> consumers(const ops::ModelInfo& m) {
    std::vector<std::vector<int>> out(m.nodes.size());
    for (size_t i = 0; i < m.nodes.size(); ++i)
        for (int in : m.nodes[i].inputs) out[static_cast<size_t>(in)].push_back(static_cast<int>(i));
    return out;
}

std::vector<char> headMask(const ops::ModelInfo& m) {
    const auto users = consumers(m);
    // followedByParams[i]: a node with parameters reads node i's output, directly or not.
    std::vector<char> followedByParams(m.nodes.size(), 0), head(m.nodes.size(), 0);
    for (auto it = m.order.rbegin(); it != m.order.rend(); ++it) {
        const auto i = static_cast<size_t>(*it);
        for (int u : users[i])
            if (ownsParameters(m, static_cast<size_t>(u)) || followedByParams[static_cast<size_t>(u)]) followedByParams[i] = 1;
        head[i] = ownsParameters(m, i) && !followedByParams[i];
    }
    return head;
}

}  // namespace

std::vector<char> stageTrainableNodes(const ops::ModelInfo& m, const TrainingStage& stage) {
    const size_t n = m.nodes.size();
    switch (stage.select) {
    case TrainingStage::Select::All: return std::vector<char>(n, 1);
    case TrainingStage::Select::Head: return headMask(m);
    case TrainingStage::Select::Nodes: {
        std::vector<char> out(n, 0);
        for (const auto& name : stage.nodes)
            if (int i = m.graph.find(name); i >= 0) out[static_cast<size_t>(i)] = 1;
        return out;
    }
    case TrainingStage::Select::From: {
        std::vector<char> out(n, 0);
        const int start = m.graph.find(stage.from);
        if (start < 0) return out;
        out[static_cast<size_t>(start)] = 1;
        // Topological order: every producer comes before its consumers.
        for (int i : m.order)
            for (int in : m.nodes[static_cast<size_t>(i)].inputs)
                if (out[static_cast<size_t>(in)]) out[static_cast<size_t>(i)] = 1;
        return out;
    }
    }
    return std::vector<char>(n, 1);
}

Result<ops::ModelInfo> stageModel(const ops::ModelInfo& m, const TrainingStage& stage) {
    const auto trainable = stageTrainableNodes(m, stage);
    Graph g = m.graph;
    for (size_t i = 0; i < g.nodes.size(); ++i) g.nodes[i].trainable = trainable[i] != 0;
    return ops::analyzeModel(g);
}

std::vector<std::string> headNodes(const ops::ModelInfo& m) {
    const auto head = headMask(m);
    std::vector<std::string> out;
    for (size_t i = 0; i < head.size(); ++i)
        if (head[i]) out.push_back(m.graph.nodes[i].name);
    return out;
}

std::map<std::string, double> discriminativeMultipliers(const ops::ModelInfo& m, int groups, double factor) {
    std::vector<int> depth(m.nodes.size(), 0);
    int deepest = 0;
    for (int i : m.order) {
        const auto n = static_cast<size_t>(i);
        for (int in : m.nodes[n].inputs) depth[n] = std::max(depth[n], depth[static_cast<size_t>(in)]);
        if (ownsParameters(m, n)) depth[n] += 1;
        deepest = std::max(deepest, depth[n]);
    }
    std::map<std::string, double> out;
    if (deepest == 0 || groups < 1) return out;
    const int n = std::min(groups, deepest);
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        if (!ownsParameters(m, i)) continue;
        const int block = (depth[i] - 1) * n / deepest;
        const double mult = std::pow(factor, -(n - 1 - block));
        out[m.graph.nodes[i].name] = std::round(mult * 1e4) / 1e4;
    }
    return out;
}

}  // namespace kiln::engine::train
