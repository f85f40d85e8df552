// SPDX-License-Identifier: Apache-2.0
// The learning-rate range test (engine/train/lr_finder.h) on a project: its model, training data
// and configuration as a training run would set them up, no run folder and nothing recorded.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "engine/io/project.h"
#include "engine/train/lr_finder.h"

namespace kiln::engine::api {

struct LrFinderRequest {
    std::string weightsPath;  // start from these weights (safetensors); "" : initialise
    int threads = 0;          // CPU threads; 0 : all cores
    std::optional<int64_t> batchSize;
    std::optional<uint64_t> seed;
    train::LrFinderOptions finder;
};

// Errors name the file, field or node as TrainingJob::prepare's do.
Result<train::LrFinderResult> findLearningRate(const io::Project& project, const std::string& projectPath,
                                               const LrFinderRequest& request,
                                               const std::function<void(const train::LrFinderPoint&)>& progress = {},
                                               const std::atomic<bool>* cancel = nullptr);

}  // namespace kiln::engine::api
