// SPDX-License-Identifier: Apache-2.0
// Learning-rate schedules with Keras semantics (constant, step, exponential, cosine decay),
// each with an optional linear warm-up; pure functions of the step index.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace kiln::engine::optim {

enum class ScheduleKind { Constant, Step, Exponential, Cosine };

// "constant", "step", "exponential", "cosine" (case-insensitive); ConfigError naming
// schedule.type otherwise.
Result<ScheduleKind> parseScheduleKind(std::string_view type);
const char* scheduleKindName(ScheduleKind kind);

struct ScheduleConfig {
    std::string type = "constant";
    double initial = 0.001;  // learning rate reached at the end of warm-up

    // step: lr = initial * gamma^floor(step / stepSize)
    int64_t stepSize = 0;  // optimizer steps, > 0
    double gamma = 0.1;

    // exponential (Keras ExponentialDecay): lr = initial * decayRate^(step / decaySteps),
    // the exponent floored when staircase. Also the cosine horizon.
    int64_t decaySteps = 0;  // optimizer steps, > 0
    double decayRate = 0.96;
    bool staircase = false;

    // cosine (Keras CosineDecay): lr = initial * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step,
    // decaySteps) / decaySteps)) + alpha); alpha is the final fraction of initial.
    double alpha = 0.0;

    // Linear warm-up from warmupStart to initial over warmupSteps (Keras CosineDecay warm-up:
    // lrAt(0) == warmupStart); the schedule's own step count starts when warm-up ends.
    int64_t warmupSteps = 0;
    double warmupStart = 0.0;

    // Learning rate for the 0-based optimizer step `step` (iterations completed so far).
    double lrAt(int64_t step) const;

    // ConfigError with params {field, reason}, e.g. field "schedule.decay_steps".
    Status validate() const;
};

}  // namespace kiln::engine::optim
