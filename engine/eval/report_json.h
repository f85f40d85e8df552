// SPDX-License-Identifier: Apache-2.0
// Evaluation reports as JSON (what kiln-eval --json prints) and per-sample records as CSV.
// Numbers that are undefined (an AUC of a class without negatives) are null.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/eval/report.h"

namespace kiln::engine::eval {

// {"task": "classification", "samples", "classes", "accuracy", "confusion_matrix" (rows: true
// class), "per_class": [{class, precision, recall, f1, support}], "macro_avg", "weighted_avg"
// ({precision, recall, f1, support}), "roc": [{class, fpr, tpr, thresholds, auc}] (the first
// threshold, +infinity, is null), "macro_auc", "pr": [{class, precision, recall, thresholds,
// average_precision}], "calibration": {"bins": [{lower, upper, count, mean_confidence,
// accuracy}], "ece"}, "log_loss", "samples_most_confidently_wrong": the first `records` records}.
nlohmann::json reportJson(const ClassificationReport& report, size_t records = 20);
// {"task": "regression", "samples", "outputs", "mae", "mse", "rmse", "r2", "residuals"
// (true - predicted, one row per sample), "largest_errors": the first `records` records}.
nlohmann::json reportJson(const RegressionReport& report, size_t records = 20);

nlohmann::json recordJson(const SampleRecord& record, const std::vector<std::string>& classNames);

// index,source,true,predicted,confidence,loss,correct with a header line; class names as written
// in the report (fields quoted as RFC 4180 when needed). Regression rows leave true/predicted
// empty.
std::string recordsCsv(const std::vector<SampleRecord>& records, const std::vector<std::string>& classNames);

}  // namespace kiln::engine::eval
