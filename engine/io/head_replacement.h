// SPDX-License-Identifier: Apache-2.0
// Transfer learning's first edit: cut a network after one node and put a new classification head
// there (GlobalAveragePooling2D -> Dropout -> Dense with softmax), keeping everything upstream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/io/project.h"

namespace kiln::engine::io {

struct HeadOptions {
    int64_t classes = 0;     // units of the new Dense; at least 1
    double dropout = 0.2;    // rate of the new Dropout in [0, 1); 0 leaves the Dropout out
    std::string prefix = "head";  // new nodes are "<prefix>_pooling", "<prefix>_dropout", "<prefix>_predictions"
};

struct HeadReplacement {
    Graph graph;                       // the project's graph after the cut, with the new head
    std::vector<std::string> removed;  // the nodes downstream of the cut node, file order
    std::vector<std::string> added;    // the new head's nodes, in order
    bool pooled = false;               // a pooling node was added (the cut node's output was rank 4)
};

// Removes every node downstream of `cutNode` (whatever reads it, directly or not) and attaches the
// new head to it. The new Dense becomes the model's output in place of the outputs removed (other
// outputs stay). The cut node must give [N, H, W, C] (pooled first) or [N, features]. Errors name
// the node (no such node, another rank, a kept node sharing the weights of a removed one) or the
// option (classes, dropout). `project` supplies the project's own layers for shape inference.
Result<HeadReplacement> replaceHead(const Project& project, const std::string& cutNode, const HeadOptions& options);

// The node a head is usually cut after: the one feeding the last global pooling node, else the last
// node (in topological order) with a rank-4 output; empty when there is neither.
std::string suggestCutNode(const Project& project);

}  // namespace kiln::engine::io
