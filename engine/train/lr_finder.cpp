// SPDX-License-Identifier: Apache-2.0
// The learning-rate range test over Trainer::stepWithRate, with the weights and optimizer state
// saved before and put back after.
#include "engine/train/lr_finder.h"

#include <algorithm>
#include <cmath>

namespace kiln::engine::train {

Status checkLrFinderOptions(const LrFinderOptions& o) {
    auto bad = [](const char* field, const std::string& why) {
        return Error(ErrorCode::ConfigError, std::string(field) + " " + why).with("field", field).with("reason", why);
    };
    if (o.steps < 2) return bad("steps", "must be at least 2");
    if (!(o.startLr > 0) || !std::isfinite(o.startLr)) return bad("start_lr", "must be a positive number");
    if (!(o.endLr > o.startLr) || !std::isfinite(o.endLr)) return bad("end_lr", "must be larger than start_lr");
    if (!(o.divergence > 1)) return bad("divergence", "must be larger than 1");
    if (!(o.smoothing >= 0 && o.smoothing < 1)) return bad("smoothing", "must be in [0, 1)");
    return {};
}

void suggestLearningRate(LrFinderResult& r) {
    const auto& p = r.points;
    r.minLossLr = r.suggestedLr = 0;
    r.rule.clear();
    if (p.empty()) return;
    size_t best = 0;
    for (size_t i = 1; i < p.size(); ++i)
        if (p[i].smoothed < p[best].smoothed) best = i;
    r.minLossLr = p[best].lr;
    // Slopes of the smoothed loss against log10(lr): central differences inside, one-sided at the ends.
    const size_t first = p.size() / 10;
    double steepest = 0;
    size_t at = p.size();
    for (size_t i = first; i <= best; ++i) {
        const size_t lo = i > 0 ? i - 1 : i, hi = i + 1 < p.size() ? i + 1 : i;
        if (lo == hi) continue;
        const double slope = (p[hi].smoothed - p[lo].smoothed) / (std::log10(p[hi].lr) - std::log10(p[lo].lr));
        if (slope < steepest) {
            steepest = slope;
            at = i;
        }
    }
    if (at < p.size()) {
        r.suggestedLr = p[at].lr;
        r.rule = "steepest";
    } else {
        r.suggestedLr = r.minLossLr / 10;
        r.rule = "min/10";
    }
}

Result<LrFinderResult> findLearningRate(Trainer& trainer, const LrFinderOptions& o,
                                        const std::function<void(const LrFinderPoint&)>& progress,
                                        const std::atomic<bool>* cancel) {
    KILN_TRY(checkLrFinderOptions(o));
    // The state to come back to.
    exec::ComputeBackend& backend = trainer.backend();
    KILN_TRY(backend.pullParameters());
    std::vector<std::vector<float>> weights;
    for (const auto& p : trainer.params().params())
        weights.emplace_back(p.value.data<float>(), p.value.data<float>() + p.value.numel());
    std::vector<float> optimizer(static_cast<size_t>(backend.optimizerStateSize()));
    KILN_TRY(backend.saveOptimizerState(optimizer.data()));
    const int64_t iterations = backend.iterations();
    auto restore = [&]() -> Status {
        auto& ps = trainer.params().params();
        for (size_t k = 0; k < ps.size(); ++k) std::copy(weights[k].begin(), weights[k].end(), ps[k].value.data<float>());
        KILN_TRY(backend.pushParameters());
        KILN_TRY(backend.loadOptimizerState(optimizer.data()));
        backend.setIterations(iterations);
        return {};
    };

    LrFinderResult r;
    double average = 0, minimum = INFINITY;
    const double ratio = std::log(o.endLr / o.startLr);
    for (int i = 0; i < o.steps; ++i) {
        if (cancel && cancel->load()) break;
        const double lr = o.startLr * std::exp(ratio * i / (o.steps - 1));
        Result<double> loss = trainer.stepWithRate(lr);
        if (!loss.ok()) {
            (void)restore();
            return loss.error();
        }
        LrFinderPoint pt;
        pt.lr = lr;
        pt.loss = *loss;
        if (!std::isfinite(pt.loss)) {
            r.diverged = true;
            break;
        }
        average = o.smoothing * average + (1 - o.smoothing) * pt.loss;
        pt.smoothed = average / (1 - std::pow(o.smoothing, i + 1));
        r.points.push_back(pt);
        if (progress) progress(pt);
        minimum = std::min(minimum, pt.smoothed);
        if (pt.smoothed > o.divergence * minimum) {
            r.diverged = true;
            break;
        }
    }
    KILN_TRY(restore());
    suggestLearningRate(r);
    return r;
}

}  // namespace kiln::engine::train
