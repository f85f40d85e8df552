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

#include <nlohmann/json.hpp>

#include "engine/core/shape.h"
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

// The input values of evaluated samples of a table, for showing beside their records: one value
// per feature (a column of the file the model reads), as the file holds it (before any
// standardisation). A categorical column is one feature whose value is the index of its category.
struct SampleFeatures {
    std::vector<std::string> names;                    // one per feature, in the model inputs' order
    std::vector<std::vector<std::string>> categories;  // per feature: its categories (empty for numbers)
    std::vector<float> values;                         // [samples, names.size()]; NaN: missing
    int64_t samples = 0;

    size_t count() const { return names.size(); }
    // The value of feature f of sample `index` (the record's index); NaN when out of range.
    float value(int64_t index, size_t f) const;
    // As text: the shortest form that reads back as the same float ("17.99"), the category's
    // name, or "" for a missing value.
    std::string text(int64_t index, size_t f) const;
};

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
Result<std::optional<SampleFeatures>> tableFeatures(const io::Project& project, const std::string& projectPath,
                                                    const EvaluationOptions& options);

// The report's figures, defined as scikit-learn defines them (engine/eval/report.h says how).

// A ROC curve of one class against the rest: the first point is (0, 0) with threshold +infinity.
// Undefined (defined false, auc NaN) when the class has no positive or no negative sample.
struct RocCurve {
    std::vector<double> fpr, tpr, thresholds;
    double auc = 0;
    bool defined = false;
};

// A precision-recall curve of one class against the rest, recall decreasing, ending in the point
// (recall 0, precision 1), which has no threshold.
struct PrCurve {
    std::vector<double> precision, recall, thresholds;  // thresholds: one fewer than points
    double averagePrecision = 0;
    bool defined = false;
};

// Per-class precision, recall and F1 (0 where undefined).
struct ClassFigures {
    std::string name;
    double precision = 0, recall = 0, f1 = 0;
    int64_t support = 0;  // samples whose true class this is
};

struct ClassAverages {
    double precision = 0, recall = 0, f1 = 0;
    int64_t support = 0;
};

// Reliability bin [lower, upper) of the predicted class's probability (the last one includes 1).
struct CalibrationBin {
    double lower = 0, upper = 0;
    int64_t count = 0;
    double meanConfidence = 0;  // 0 for an empty bin
    double accuracy = 0;        // 0 for an empty bin
};

// One evaluated sample. Classification: confidence is the probability of the predicted class,
// loss is -log(p of the true class). Regression: trueClass/predicted are -1, confidence 0, loss
// the squared error averaged over the outputs.
struct EvaluationRecord {
    int64_t index = 0;   // position in the evaluated split (0-based, in evaluation order)
    std::string source;  // as Predictions::sources ("" when unknown)
    int64_t trueClass = -1;
    int64_t predicted = -1;
    double confidence = 0;
    double loss = 0;
    bool correct() const { return trueClass == predicted; }
};

struct ClassificationReport {
    int64_t numClasses = 0;
    int64_t samples = 0;
    std::vector<std::string> classNames;
    double accuracy = 0;
    std::vector<int64_t> confusion;  // [true][predicted], row-major numClasses x numClasses
    std::vector<ClassFigures> perClass;
    ClassAverages macro;        // unweighted mean over all numClasses classes
    ClassAverages weighted;     // mean weighted by support
    std::vector<RocCurve> roc;  // one per class (one-vs-rest)
    std::vector<PrCurve> pr;    // one per class (one-vs-rest)
    double macroAuc = 0;        // mean of the defined per-class AUCs (NaN when none)
    std::vector<CalibrationBin> calibration;
    double expectedCalibrationError = 0;
    double logLoss = 0;
    std::vector<EvaluationRecord> records;  // wrong predictions first, most confident first

    int64_t count(int64_t trueClass, int64_t predicted) const {
        return confusion[static_cast<size_t>(trueClass * numClasses + predicted)];
    }
};

// Regression over `width` outputs per sample.
struct RegressionReport {
    int64_t samples = 0;
    int64_t width = 0;
    double mae = 0, mse = 0, rmse = 0, r2 = 0;
    std::vector<double> residuals;          // true - predicted, [samples, width]
    std::vector<EvaluationRecord> records;  // largest error first
};

struct Evaluation {
    std::optional<ClassificationReport> classification;
    std::optional<RegressionReport> regression;
};

// The report of predictions: classification for cross-entropy losses, regression otherwise.
// Unsupported for binary cross-entropy over several outputs (multi-label).
Result<Evaluation> evaluate(const Predictions& predictions, int calibrationBins = 10);

// The report as JSON, as kiln-eval --json prints it (engine/eval/report_json.h gives the fields):
// the first `records` records, and with `features` (table data) the feature names and each
// record's values.
nlohmann::json reportJson(const ClassificationReport& report, size_t records = 20,
                          const SampleFeatures* features = nullptr);
nlohmann::json reportJson(const RegressionReport& report, size_t records = 20, const SampleFeatures* features = nullptr);

// index,source,true,predicted,confidence,loss,correct with a header line (regression rows leave
// true and predicted empty), and with `features` one more column per feature.
std::string recordsCsv(const std::vector<EvaluationRecord>& records, const std::vector<std::string>& classNames,
                       const SampleFeatures* features = nullptr);

}  // namespace kiln::engine::api
