// SPDX-License-Identifier: Apache-2.0
// The results of a training run as JSON, written the same way for every run (engine/api's
// TrainingJob writes them): the flat results summary (also kept in the run store) and the run
// folder's run.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/train/trainer.h"

namespace kiln::engine::train {

// {"loss", <metrics>...}, plus the confusion matrix and per-class figures when there is one.
nlohmann::json evalJson(const EvalResult& result, const std::vector<std::string>& classNames = {});

// epochs, seconds, samples_per_s, train_/val_/test_ loss and metrics of the last epoch,
// stopped (a Stop command), stopped_early (the reason), resumed_from_step.
nlohmann::json resultsJson(const FitResult& fit);

struct RunRecord {
    const io::Project* project = nullptr;
    std::string projectPath;
    const ops::ModelInfo* model = nullptr;
    const TrainingConfig* config = nullptr;
    std::string device;
    int threads = 0;
    std::vector<std::string> classNames;
};

// run.json: format "kiln-run" version 1 with the results, history per epoch, the test set's
// evaluation, the model summary and a snapshot of the project.
nlohmann::json runJson(const RunRecord& record, const FitResult& fit, const nlohmann::json& results);

}  // namespace kiln::engine::train
