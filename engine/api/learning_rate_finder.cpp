// SPDX-License-Identifier: Apache-2.0
// The range test on a project's model and training data.
#include "engine/api/learning_rate_finder.h"

#include "engine/api/devices.h"
#include "engine/core/thread_pool.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

Result<train::LrFinderResult> findLearningRate(const io::Project& project, const std::string& projectPath,
                                               const LrFinderRequest& request,
                                               const std::function<void(const train::LrFinderPoint&)>& progress,
                                               const std::atomic<bool>* cancel) {
    KILN_TRY(train::checkLrFinderOptions(request.finder));
    auto graph = io::modelGraph(project);
    if (!graph.ok()) return io::locate(graph.error(), project);
    auto model = ops::analyzeModel(*graph);
    if (!model.ok()) return io::locate(model.error(), project);
    auto config = train::parseTrainingConfig(project.training, *graph);
    if (!config.ok()) return config.error().withFile(projectPath);
    if (request.batchSize) config->batchSize = *request.batchSize;
    if (request.seed) config->seed = *request.seed;
    auto backend = backendFor(*config);
    if (!backend.ok()) return backend.error().withFile(projectPath);
    auto data = train::openData(project.data, projectPath, config->seed, config->batchSize, config->shuffle);
    if (!data.ok()) {
        Error e = data.error();
        return e.file.empty() ? e.withFile(projectPath) : e;
    }
    ThreadPool pool(request.threads);
    auto trainer = train::Trainer::create(*model, *config, std::move(data.value()), pool, *backend);
    if (!trainer.ok()) return io::locate(trainer.error(), project);
    if (!request.weightsPath.empty()) {
        KILN_TRY(train::loadWeights((*trainer)->params(), request.weightsPath));
        KILN_TRY((*trainer)->backend().pushParameters());
    }
    return train::findLearningRate(**trainer, request.finder, progress, cancel);
}

}  // namespace kiln::engine::api
