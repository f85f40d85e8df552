// SPDX-License-Identifier: Apache-2.0
// Staged fine-tuning (training.stages): each stage trains a chosen part of the model for some
// epochs at its own learning rate. The Trainer runs the stages back to back in one run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/ops/model.h"

namespace kiln::engine::train {

struct TrainingStage {
    // Which nodes train in the stage; the others are frozen (no updates; a frozen
    // BatchNormalization runs in inference mode, as in Keras). The stage's choice replaces the
    // nodes' own "trainable" flags; their learning-rate multipliers stay.
    enum class Select {
        All,    // every node
        Head,   // the last layers: nodes with parameters that no other node with parameters follows
        From,   // `from` and every node downstream of it
        Nodes,  // exactly `nodes`
    };
    std::string name;
    int epochs = 1;
    Select select = Select::All;
    std::string from;
    std::vector<std::string> nodes;
    // The learning rate: `lr` rescales the schedule so that it starts at lr; otherwise the
    // schedule's rate times lrFactor. The schedule keeps running on the global step.
    std::optional<double> lr;
    double lrFactor = 1.0;
    // true ("reset"): the stage starts with fresh optimizer moments and step count, as a newly
    // compiled Keras model; false ("keep"): moments of parameters that trained before are kept,
    // newly trainable ones start at zero.
    bool resetOptimizer = true;
};

// Per node of `model`: 1 when the node trains in `stage`.
std::vector<char> stageTrainableNodes(const ops::ModelInfo& model, const TrainingStage& stage);
// The model with its nodes' trainable flags set for `stage` (analysed again).
Result<ops::ModelInfo> stageModel(const ops::ModelInfo& model, const TrainingStage& stage);

// The names of the nodes "head" selects, in graph order (for editors and documentation).
std::vector<std::string> headNodes(const ops::ModelInfo& model);

// Discriminative learning rates (lower rates for earlier layers): the nodes with parameters are
// split into `groups` blocks by depth (the number of nodes with parameters on the longest path
// from an input, the node included); block k of n (0 nearest the inputs) gets the learning-rate
// multiplier factor^-(n-1-k), so the last block trains at the full rate. Rounded to 4 decimals.
std::map<std::string, double> discriminativeMultipliers(const ops::ModelInfo& model, int groups = 4,
                                                        double factor = 2.6);

}  // namespace kiln::engine::train
