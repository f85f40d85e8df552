// SPDX-License-Identifier: Apache-2.0
// What the front ends ask of a project's training set-up without running it: the batch size its
// streamed data sets, and the metrics its training section logs. The set-up itself (model,
// configuration, backend, data and trainer, shared by every use of a project's training) is the
// api's own business: engine/api/internal/training_setup.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/io/project.h"

namespace kiln::engine::api {

// The batch size that streamed data (an image folder, a CSV index, TFRecord files) sets in its own
// data section (data.batch_size), which training uses instead of training.batch_size; 0 when the
// section sets none or its data is read into memory (CSV tables, IDX files).
int64_t streamedDataBatchSize(const nlohmann::json& data);

// The names under which a run of the project logs its metrics (training.metrics: built-in names
// such as "accuracy" and plugin metrics' names), in the section's order; "loss" is not among them.
// Errors as reading the project's training configuration gives them (the field, the project's
// file).
Result<std::vector<std::string>> projectMetricNames(const io::Project& project, const std::string& projectPath);

}  // namespace kiln::engine::api
