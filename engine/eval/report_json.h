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
// With `features` (table data), also "feature_names" and each record's "features".
nlohmann::json reportJson(const ClassificationReport& report, size_t records = 20,
                          const SampleFeatures* features = nullptr);
// {"task": "regression", "samples", "outputs", "mae", "mse", "rmse", "r2", "residuals"
// (true - predicted, one row per sample), "largest_errors": the first `records` records}, and
// the features as above.
nlohmann::json reportJson(const RegressionReport& report, size_t records = 20, const SampleFeatures* features = nullptr);

// {index, source, loss, and for classification true, predicted, confidence, correct}; with
// `features`, "features": the sample's values in the order of its names (numbers, category names,
// null for a missing value).
nlohmann::json recordJson(const SampleRecord& record, const std::vector<std::string>& classNames,
                          const SampleFeatures* features = nullptr);

// index,source,true,predicted,confidence,loss,correct with a header line; class names as written
// in the report (fields quoted as RFC 4180 when needed). Regression rows leave true/predicted
// empty. With `features` (table data), one more column per feature, headed by its name, holding
// the sample's value as SampleFeatures::text gives it.
std::string recordsCsv(const std::vector<SampleRecord>& records, const std::vector<std::string>& classNames,
                       const SampleFeatures* features = nullptr);

}  // namespace kiln::engine::eval
