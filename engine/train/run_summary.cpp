// SPDX-License-Identifier: Apache-2.0
// Results and run.json of a training run.
#include "engine/train/run_summary.h"

#include "engine/ops/summary.h"

namespace kiln::engine::train {

using nlohmann::json;

json evalJson(const EvalResult& r, const std::vector<std::string>& classNames) {
    json j = {{"loss", r.loss}};
    for (const auto& m : r.metrics) {
        j[m.name] = m.value;
    }
    if (r.confusion) {
        const auto& cm = *r.confusion;
        json rows = json::array(), perClass = json::array();
        for (int64_t t = 0; t < cm.numClasses(); ++t) {
            json row = json::array();
            for (int64_t p = 0; p < cm.numClasses(); ++p) {
                row.push_back(cm.count(t, p));
            }
            rows.push_back(std::move(row));
            perClass.push_back({{"class", t < int64_t(classNames.size()) ? classNames[size_t(t)] : std::to_string(t)},
                                {"precision", cm.precision(t)},
                                {"recall", cm.recall(t)},
                                {"support", cm.support(t)}});
        }
        j["confusion_matrix"] = std::move(rows);
        j["per_class"] = std::move(perClass);
    }
    return j;
}

json resultsJson(const FitResult& fit) {
    const auto& hist = fit.history;
    json out = {{"epochs", hist.size()}, {"seconds", fit.seconds}, {"samples_per_s", fit.samplesPerSecond}};
    if (fit.stopped) {
        out["stopped"] = true;
    }
    if (fit.earlyStopped) {
        out["stopped_early"] = fit.stopReason;
    }
    if (fit.resumedFromStep >= 0) {
        out["resumed_from_step"] = fit.resumedFromStep;
    }
    if (fit.skippedSteps > 0) {
        out["skipped_steps"] = fit.skippedSteps;  // mixed float16: overflowing steps
    }
    if (!fit.badSamples.empty()) {
        json bad = json::array();
        for (const auto& b : fit.badSamples) {
            bad.push_back({{"path", b.path}, {"reason", b.reason}});
        }
        out["bad_samples"] = bad;
    }
    if (!hist.empty()) {
        out["train_loss"] = hist.back().train.loss;
        for (const auto& m : hist.back().train.metrics) {
            out["train_" + m.name] = m.value;
        }
        if (hist.back().validation) {
            out["val_loss"] = hist.back().validation->loss;
            for (const auto& m : hist.back().validation->metrics) {
                out["val_" + m.name] = m.value;
            }
        }
    }
    if (fit.test) {
        out["test_loss"] = fit.test->loss;
        for (const auto& m : fit.test->metrics) {
            out["test_" + m.name] = m.value;
        }
    }
    return out;
}

json runJson(const RunRecord& r, const FitResult& fit, const json& results) {
    json history = json::array();
    for (const auto& h : fit.history) {
        json e = {{"epoch", h.epoch}, {"train", evalJson(h.train)}, {"seconds", h.seconds}, {"samples_per_s", h.samplesPerSecond}};
        if (h.validation) {
            e["validation"] = evalJson(*h.validation);
        }
        if (h.stage >= 0) {
            e["stage"] = h.stage;
            e["stage_name"] = r.config->stages[static_cast<size_t>(h.stage)].name;
        }
        history.push_back(std::move(e));
    }
    return {{"format", "kiln-run"},
            {"version", 1},
            {"project", r.projectPath},
            {"device", r.device},
            {"threads", r.threads},
            {"seed", r.config->seed},
            {"batch_size", r.config->batchSize},
            {"results", results},
            {"history", history},
            {"test", fit.test ? evalJson(*fit.test, r.classNames) : json()},
            {"summary", ops::summaryJson(ops::summarize(*r.model, r.config->batchSize))},
            {"project_snapshot", json::parse(io::serializeProject(*r.project))}};
}

}  // namespace kiln::engine::train
