// SPDX-License-Identifier: Apache-2.0
// The range test on a project's model and training data.
#include "engine/api/learning_rate_finder.h"

#include "engine/api/training_setup.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

Result<train::LrFinderResult> findLearningRate(const io::Project& project, const std::string& projectPath,
                                               const LrFinderRequest& request,
                                               const std::function<void(const train::LrFinderPoint&)>& progress,
                                               const std::atomic<bool>* cancel) {
    KILN_TRY(train::checkLrFinderOptions(request.finder));
    PrepareOptions setup;
    setup.batchSize = request.batchSize;
    setup.seed = request.seed;
    setup.threads = request.threads;
    KILN_ASSIGN(PreparedTraining prepared, prepareTraining(project, projectPath, setup));
    auto& trainer = prepared.trainer;
    if (!request.weightsPath.empty()) {
        KILN_TRY(train::loadWeights(trainer->params(), request.weightsPath));
        KILN_TRY(trainer->backend().pushParameters());
    }
    return train::findLearningRate(*trainer, request.finder, progress, cancel);
}

}  // namespace kiln::engine::api
