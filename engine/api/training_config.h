// SPDX-License-Identifier: Apache-2.0
// A project's training section for the forms that edit it: the section checked the way a run
// reads it, and what the fine-tuning settings would select in a graph (the head's nodes, the
// discriminative learning-rate multipliers). None of these throws.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/graph/graph.h"

namespace kiln::engine::api {

// The training section checked against its graph as a run reads it (every field, loss, metric,
// callback and stage); errors name the field.
Status validateTraining(const nlohmann::json& training, const Graph& graph);

// The nodes a fine-tuning stage with "trainable": "head" trains, in graph order; an error when the
// graph does not analyse.
Result<std::vector<std::string>> headLayers(const Graph& graph);

// Lower learning rates for earlier layers: a multiplier per node with parameters, the last block
// of layers at 1 (engine/train's discriminativeMultipliers with its defaults); an error when the graph
// does not analyse.
Result<std::map<std::string, double>> discriminativeLearningRates(const Graph& graph);

}  // namespace kiln::engine::api
