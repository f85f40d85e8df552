// SPDX-License-Identifier: Apache-2.0
// Runs a trained model over a split of its project's data (or other data read the project's
// way) and turns the outputs into an evaluation report. The project, data pipelines, weights and
// forward passes are those of training: TrainingJob's loading, train::openData, loadWeights and
// the Trainer's evaluation path.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/shape.h"
#include "engine/eval/report.h"
#include "engine/eval/report_json.h"
#include "engine/io/project.h"

namespace kiln::engine::api {

struct EvaluationOptions {
    // A safetensors file, or a run folder (its weights.safetensors, written at the end of every
    // run). Required.
    std::string weights;
    // "test", "val" / "validation", "train", or the path of other data in the project's format
    // (an image folder with class subfolders, a CSV index, TFRecord files, rows of a csv table).
    std::string split = "test";
    // Pictures to predict (image folder projects); when set, `split` is not used.
    std::vector<std::string> imageFiles;
    // Other rows of a csv table (`split` a path) may lack the label column: for predictions,
    // whose targets are then zeros. Evaluation needs it (ParseError naming the file otherwise).
    bool labelsOptional = false;
    int threads = 0;                 // CPU threads; 0: all cores
    std::optional<int64_t> batchSize;
};

// The raw outputs of the model's first output (the one the first loss reads) for every sample.
struct Predictions {
    int64_t samples = 0;
    std::vector<float> outputs;  // [samples, width]
    int64_t width = 0;
    std::vector<float> targets;  // [samples, targetWidth]: class indices (sparse), one-hot rows or values
    int64_t targetWidth = 0;
    // Per sample: the file (or file@offset) of streamed data, "FILE:LINE" of a CSV table's row, or
    // "row N" of other in-memory data.
    std::vector<std::string> sources;
    std::vector<std::string> classNames;
    std::string lossType;  // "SparseCategoricalCrossentropy", "MeanSquaredError", ...
    bool fromLogits = false;
    double loss = 0;       // the model's loss over the samples (meaningless for unlabeled pictures)
    // training.metrics over the samples (built-in and plugin metrics), by logged name, in order.
    std::vector<std::pair<std::string, double>> metrics;
    std::string weightsPath;  // the file the weights came from
    std::string split;        // what was evaluated ("test", ..., or a path)

    // True for cross-entropy losses: outputs are class scores.
    bool classification() const;
    int64_t numClasses() const;  // classification: 2 for a width-1 binary head, else width
    std::vector<double> probabilities() const;  // classification: [samples, numClasses()]
    // True class per sample (classification): the index (sparse), the argmax of a one-hot row, or
    // target > 0.5 for a binary head.
    std::vector<int64_t> labels() const;
};

// A weights file as given, or <folder>/weights.safetensors for a run folder. FileNotFound
// naming the path otherwise.
Result<std::string> resolveWeights(const std::string& path);

// Loads data, model and weights as training does and runs the forward pass over the split.
// Errors name the file, field or node (ConfigError "split" for an unknown split, or a split the
// project does not have).
Result<Predictions> predict(const io::Project& project, const std::string& projectPath,
                            const EvaluationOptions& options);

// One sample of a split as the model's (single) input sees it, after decoding and preprocessing.
struct SampleInput {
    int64_t index = 0;   // position in the split, as in Predictions and the report's records
    std::string source;  // as Predictions::sources
    Shape shape;         // [1, ...] the model input's shape for one sample
    std::vector<float> data;
    int64_t label = -1;  // true class (classification), else -1
    // The data's class names (as Predictions::classNames; empty when the data has none).
    const std::vector<std::string>* classNames = nullptr;
};

// Runs the split as predict() does and shows every sample to `visit`, in order, until it returns
// false. Unsupported for models with several inputs.
Status forEachSample(const io::Project& project, const std::string& projectPath, const EvaluationOptions& options,
                     const std::function<Result<bool>(const SampleInput&)>& visit);

// The feature values of the samples predict() runs for a split of table data, indexed as its
// samples, with the values the file holds (the transforms training applies, standardisation
// among them, are left out):
// - data.format "csv": every file column the model's inputs read, in the order of the inputs and
//   their columns (a one-hot column is one feature holding its category), the split read again
//   as training reads it (or the other rows, `options.split` a path);
// - data.format "tfrecord" or "csv_index" when every model input reads a number column (scalars
//   or vectors, no pictures): each input column's elements ("x", or "x[0]", "x[1]", ... for a
//   vector), the split (or other data, `options.split` a path) streamed again in order.
// `options` as for predict(). std::nullopt for data that is not a table (pictures, IDX).
Result<std::optional<eval::SampleFeatures>> tableFeatures(const io::Project& project, const std::string& projectPath,
                                                          const EvaluationOptions& options);

struct Evaluation {
    std::optional<eval::ClassificationReport> classification;
    std::optional<eval::RegressionReport> regression;
};

// The report of predictions: classification for cross-entropy losses, regression otherwise.
// Unsupported for binary cross-entropy over several outputs (multi-label).
Result<Evaluation> evaluate(const Predictions& predictions, int calibrationBins = 10);

}  // namespace kiln::engine::api
