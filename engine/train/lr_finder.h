// SPDX-License-Identifier: Apache-2.0
// The learning-rate range test: training steps from the current weights with a learning rate
// growing exponentially from `startLr` to `endLr`, the loss of each, and a suggested rate. The
// weights, optimizer state and step count are restored afterwards.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/train/trainer.h"

namespace kiln::engine::train {

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
    bool diverged = false;   // stopped early: non-finite loss or above divergence x minimum
    double minLossLr = 0;    // where the smoothed loss is lowest
    // The suggestion. Rule: on the smoothed loss up to its minimum (leaving out the first tenth
    // of the points), the rate where it falls fastest against log10(lr) ("steepest"); when it
    // nowhere falls, a tenth of minLossLr ("min/10").
    double suggestedLr = 0;
    std::string rule;        // "steepest" or "min/10"
};

// Options out of range give ConfigError naming the field ("steps", "start_lr", "end_lr").
Status checkLrFinderOptions(const LrFinderOptions& options);

// The suggestion for measured points (LrFinderResult's rule); fills minLossLr, suggestedLr, rule.
void suggestLearningRate(LrFinderResult& result);

// Runs the range test on `trainer`'s training data. `progress` sees every point; `cancel` stops
// between steps (the points so far are returned, the weights restored).
Result<LrFinderResult> findLearningRate(Trainer& trainer, const LrFinderOptions& options,
                                        const std::function<void(const LrFinderPoint&)>& progress = {},
                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace kiln::engine::train
