// SPDX-License-Identifier: Apache-2.0
// The training-section calls of the api, over train::parseTrainingConfig and train/stages.
#include "engine/api/training_config.h"

#include "engine/api/guard.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/stages.h"

namespace kiln::engine::api {

Status validateTraining(const nlohmann::json& training, const Graph& graph) {
    return guarded("checking the training settings", [&]() -> Status {
        KILN_TRY(train::parseTrainingConfig(training, graph));
        return {};
    });
}

Result<std::vector<std::string>> headLayers(const Graph& graph) {
    return guarded("finding the head's layers", [&]() -> Result<std::vector<std::string>> {
        KILN_ASSIGN(ops::ModelInfo model, ops::analyzeModel(graph));
        return train::headNodes(model);
    });
}

Result<std::map<std::string, double>> discriminativeLearningRates(const Graph& graph) {
    return guarded("setting learning rates per layer", [&]() -> Result<std::map<std::string, double>> {
        KILN_ASSIGN(ops::ModelInfo model, ops::analyzeModel(graph));
        return train::discriminativeMultipliers(model);
    });
}

}  // namespace kiln::engine::api
