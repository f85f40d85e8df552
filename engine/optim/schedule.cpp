// SPDX-License-Identifier: Apache-2.0
// Learning-rate schedule formulas and their validation.
#include "engine/optim/schedule.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>

namespace kiln::engine::optim {

namespace {

Error configError(const std::string& field, const std::string& reason) {
    return Error(ErrorCode::ConfigError, field + " " + reason)
        .with("field", field)
        .with("reason", reason);
}

bool finite(double v) { return std::isfinite(v); }

}  // namespace

Result<ScheduleKind> parseScheduleKind(std::string_view type) {
    std::string t(type);
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "constant") return ScheduleKind::Constant;
    if (t == "step") return ScheduleKind::Step;
    if (t == "exponential") return ScheduleKind::Exponential;
    if (t == "cosine") return ScheduleKind::Cosine;
    return configError("schedule.type", "must be one of constant, step, exponential, cosine (got \"" +
                                            std::string(type) + "\")");
}

const char* scheduleKindName(ScheduleKind kind) {
    switch (kind) {
    case ScheduleKind::Constant: return "constant";
    case ScheduleKind::Step: return "step";
    case ScheduleKind::Exponential: return "exponential";
    case ScheduleKind::Cosine: return "cosine";
    }
    return "unknown";
}

double ScheduleConfig::lrAt(int64_t step) const {
    step = std::max<int64_t>(step, 0);
    if (warmupSteps > 0 && step < warmupSteps) {
        const double frac = static_cast<double>(step) / static_cast<double>(warmupSteps);
        return warmupStart + (initial - warmupStart) * frac;
    }
    const int64_t s = step - std::max<int64_t>(warmupSteps, 0);
    auto kind = parseScheduleKind(type);
    if (!kind.ok()) return initial;  // unvalidated config: behave as constant
    switch (*kind) {
    case ScheduleKind::Constant: return initial;
    case ScheduleKind::Step: {
        if (stepSize <= 0) return initial;
        return initial * std::pow(gamma, static_cast<double>(s / stepSize));
    }
    case ScheduleKind::Exponential: {
        if (decaySteps <= 0) return initial;
        double p = static_cast<double>(s) / static_cast<double>(decaySteps);
        if (staircase) p = std::floor(p);
        return initial * std::pow(decayRate, p);
    }
    case ScheduleKind::Cosine: {
        if (decaySteps <= 0) return initial;
        const double d = static_cast<double>(decaySteps);
        const double t = std::min(static_cast<double>(s), d) / d;
        const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * t));
        return initial * ((1.0 - alpha) * cosine + alpha);
    }
    }
    return initial;
}

Status ScheduleConfig::validate() const {
    KILN_ASSIGN(const ScheduleKind kind, parseScheduleKind(type));
    if (!finite(initial) || initial <= 0) return configError("schedule.initial_learning_rate", "must be > 0");
    switch (kind) {
    case ScheduleKind::Constant: break;
    case ScheduleKind::Step:
        if (stepSize <= 0) return configError("schedule.step_size", "must be > 0");
        if (!finite(gamma) || gamma <= 0) return configError("schedule.gamma", "must be > 0");
        break;
    case ScheduleKind::Exponential:
        if (decaySteps <= 0) return configError("schedule.decay_steps", "must be > 0");
        if (!finite(decayRate) || decayRate <= 0) return configError("schedule.decay_rate", "must be > 0");
        break;
    case ScheduleKind::Cosine:
        if (decaySteps <= 0) return configError("schedule.decay_steps", "must be > 0");
        if (!finite(alpha) || alpha < 0 || alpha > 1) return configError("schedule.alpha", "must be in [0, 1]");
        break;
    }
    if (warmupSteps < 0) return configError("schedule.warmup_steps", "must be >= 0");
    if (!finite(warmupStart) || warmupStart < 0) return configError("schedule.warmup_start", "must be >= 0");
    return okStatus();
}

}  // namespace kiln::engine::optim
