// SPDX-License-Identifier: Apache-2.0
// Builds the training, validation and test pipelines of a project's "data" section for the
// streaming formats (image folder, CSV index, TFRecord, IDX), with splits by folder, by CSV
// column or by seeded stratified ratio, and standardisation fitted on the training split.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/error.h"
#include "engine/data/pipeline.h"

namespace kiln::engine::data {

struct DataPipelines {
    std::string kind;                     // "image-folder", "csv-index", "tfrecord", "idx"
    std::vector<std::string> classNames;  // from class folders or data.class_names
    std::unique_ptr<Pipeline> train;
    std::unique_ptr<Pipeline> validation;  // null when there is no validation split
    std::unique_ptr<Pipeline> test;        // null when there is no test split
};

// Turns a path written in the project (relative, ${VAR}, ~) into one to open.
using PathResolver = std::function<std::string(const std::string&)>;

// True for the formats openDataPipelines handles: "folder", "csv_index", "tfrecord", "idx".
bool isStreamingFormat(const std::string& format);

// Reads data.format, data.path (or data.train / data.validation / data.test), data.transforms,
// data.eval_transforms, data.split, data.stratify, data.split_column, data.features,
// data.compression, data.class_names and the pipeline settings of PipelineOptions::fromJson.
// `seed` keys splits and shuffles unless data.seed is set; `batchSize` applies unless
// data.batch_size is set. Errors are ConfigError naming the field, or the source's own error.
Result<DataPipelines> openDataPipelines(const nlohmann::json& data, const PathResolver& resolve,
                                        uint64_t seed, int64_t batchSize);

// Other data in place of the test split, read the project's way: same columns, class list and
// evaluation transforms (standardisation fitted on the training split as usual).
struct TestReplacement {
    // Opened as the project's format opens it: an image folder with one subfolder per class
    // (classes matched by name to the training classes), a CSV index (all rows), TFRecord files
    // or a folder of them, an IDX pair, or rows of a CSV table (data.format "csv", read by
    // train::loadData with the project table's columns, categories and standardisation).
    std::string path;
    // Rows of a CSV table may lack the label column (for predictions only): zeros stand in for
    // the labels, so that the model's loss still has its target.
    bool labelsOptional = false;
    // Or, for image folder projects: pictures whose class is unknown (for predictions only).
    std::vector<std::string> imageFiles;
    // Or the training split itself, in order, with the evaluation transforms (no augmentation).
    bool trainingSplit = false;
    // The model's classes, for checking the labels of other data in a CSV index or TFRecord files:
    // each row's (record's) `labelColumn` must be a class index below `classes`. 0: not checked
    // (regression models).
    int64_t classes = 0;
    std::string labelColumn;
};
Result<DataPipelines> openDataPipelines(const nlohmann::json& data, const PathResolver& resolve,
                                        uint64_t seed, int64_t batchSize, const TestReplacement& replacement);

// The transforms for evaluation made from training ones: random crops become centre crops of the
// same size; flips, rotations and brightness/contrast changes are dropped.
TransformList evaluationTransforms(const TransformList& training);

}  // namespace kiln::engine::data
