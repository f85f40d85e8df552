// SPDX-License-Identifier: Apache-2.0
// The range test on a project's model and training data.
#include "engine/api/learning_rate_finder.h"

#include "engine/api/internal/training_setup.h"
#include "engine/train/lr_finder.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

namespace {

LrFinderPoint toApi(const train::LrFinderPoint& p) { return {p.lr, p.loss, p.smoothed}; }

}  // namespace

Result<LrFinderResult> findLearningRate(const io::Project& project, const std::string& projectPath,
                                        const LrFinderRequest& request,
                                        const std::function<void(const LrFinderPoint&)>& progress,
                                        const std::atomic<bool>* cancel) {
    train::LrFinderOptions options;
    options.startLr = request.finder.startLr;
    options.endLr = request.finder.endLr;
    options.steps = request.finder.steps;
    options.divergence = request.finder.divergence;
    options.smoothing = request.finder.smoothing;
    KILN_TRY(train::checkLrFinderOptions(options));
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
    std::function<void(const train::LrFinderPoint&)> seen;
    if (progress) seen = [&progress](const train::LrFinderPoint& p) { progress(toApi(p)); };
    KILN_ASSIGN(train::LrFinderResult found, train::findLearningRate(*trainer, options, seen, cancel));
    LrFinderResult out;
    out.points.reserve(found.points.size());
    for (const auto& p : found.points) out.points.push_back(toApi(p));
    out.diverged = found.diverged;
    out.minLossLr = found.minLossLr;
    out.suggestedLr = found.suggestedLr;
    out.rule = found.rule;
    return out;
}

}  // namespace kiln::engine::api
