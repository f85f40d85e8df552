// SPDX-License-Identifier: Apache-2.0
// The learning-rate range test (engine/train/lr_finder.h) on a project: its model, training data
// and configuration as a training run would set them up, no run folder and nothing recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/project.h"

namespace kiln::engine::api {

struct LrFinderOptions {
    double startLr = 1e-7;
    double endLr = 10.0;
    int steps = 100;          // at most; fewer when the loss diverges
    double divergence = 4.0;  // stop once the smoothed loss exceeds this many times its minimum
    double smoothing = 0.9;   // weight of the past in the loss's moving average (bias-corrected)
};

struct LrFinderPoint {
    double lr = 0;
    double loss = 0;      // the batch's loss at this step, before its update
    double smoothed = 0;  // the bias-corrected exponential moving average of the losses so far
};

struct LrFinderResult {
    std::vector<LrFinderPoint> points;
    bool diverged = false;  // stopped early: non-finite loss or above divergence x minimum
    double minLossLr = 0;   // where the smoothed loss is lowest
    // The suggestion: where the smoothed loss falls fastest against log10(lr) up to its minimum
    // ("steepest"), or a tenth of minLossLr where it nowhere falls ("min/10").
    double suggestedLr = 0;
    std::string rule;  // "steepest" or "min/10"
};

struct LrFinderRequest {
    std::string weightsPath;  // start from these weights (safetensors); "" : initialise
    int threads = 0;          // CPU threads; 0 : all cores
    std::optional<int64_t> batchSize;
    std::optional<uint64_t> seed;
    LrFinderOptions finder;
};

// Errors name the file, field or node as TrainingJob::prepare's do; options out of range give
// ConfigError naming the field ("steps", "start_lr", "end_lr"). `progress` sees every point;
// `cancel` stops between steps (the points so far are returned).
Result<LrFinderResult> findLearningRate(const io::Project& project, const std::string& projectPath,
                                        const LrFinderRequest& request,
                                        const std::function<void(const LrFinderPoint&)>& progress = {},
                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace kiln::engine::api
