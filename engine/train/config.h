// SPDX-License-Identifier: Apache-2.0
// The "training" and "data" sections of a project: parsed, validated (errors name the field)
// and, for data, loaded into memory with splits and standardisation applied.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/data/dataset.h"
#include "engine/data/batch_stream.h"
#include "engine/exec/plan.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/schedule.h"
#include "engine/train/stages.h"

namespace kiln::engine::data {
struct TestReplacement;
}  // namespace kiln::engine::data

namespace kiln::engine::train {

struct LossConfig {
    exec::LossSpec spec;     // type, output node, attrs, weight (targetShape set once data is known)
    std::string target;      // data column holding the targets
    // The term's name in logs ("<name>_loss", "val_<name>_loss"): the "name" setting, or else
    // the output's name when the output has only this term, or "<output>_<snake_case type>"
    // (with "_2", "_3"... for repeats) when several terms share the output.
    std::string name;
};

// A plugin metric of training.metrics: "plugin:acme.FBeta" or {"type": "plugin:acme.FBeta",
// "name": "f2", <attributes>}. Logged under `name` (default: the plugin's name, "acme.FBeta").
struct PluginMetricConfig {
    std::string type;  // "plugin:acme.FBeta"
    std::string name;
    AttrMap attrs;     // as given, checked against the metric's schema
};

// Fills in the default names of terms that have none (see LossConfig::name).
void assignLossTermNames(std::vector<LossConfig>& losses);

struct TrainingConfig {
    int epochs = 5;
    int64_t batchSize = 32;
    uint64_t seed = 0;
    bool shuffle = true;
    double validationSplit = 0.0;  // fraction of the training set held out (its last part, as Keras)
    optim::OptimizerConfig optimizer;
    optim::ScheduleConfig schedule;  // schedule.initial comes from the optimizer's learning rate
    std::vector<LossConfig> losses;
    // The metrics' names as logged: built-in names ("accuracy") and plugin metrics' names.
    std::vector<std::string> metrics;
    // The plugin metrics among them, by logged name. A "plugin:<name>" entry of `metrics` that
    // has none here (a config built in code) is that plugin metric with default attributes.
    std::map<std::string, PluginMetricConfig> pluginMetrics;
    // "callbacks": one object per callback ({"type": "EarlyStopping", ...}), validated by
    // parseTrainingConfig and built by Trainer::addConfiguredCallbacks.
    std::vector<nlohmann::json> callbacks;
    // Where to train ("cpu", "cuda:N") and in which precision ("float32", "mixed_float16",
    // "mixed_bfloat16"; the mixed ones need a GPU).
    std::string device = "cpu";
    std::string precision = "float32";
    // GPU memory Kiln may take: "growth" (as needed, the default), "all", a fraction ("0.8",
    // "80%") or a size ("12GiB").
    std::string memoryLimit = "growth";
    // "histogram_freq": weight and gradient histograms of every parameter in the epoch events
    // every N epochs (the studio's Histograms view and the run folder's histograms.jsonl);
    // 0: never.
    int histogramFreq = 1;
    // "stages": staged fine-tuning, run back to back; empty: one stage of the model as it is.
    // With stages, epochs is the sum of the stages' epochs.
    std::vector<TrainingStage> stages;
    // The stage that epoch (1-based) belongs to: its index in stages, or -1 without stages.
    // Epochs beyond the last stage (a longer --epochs) stay in the last stage.
    int stageOfEpoch(int epoch) const;
    // The first epoch (1-based) of stage `index`.
    int firstEpochOfStage(int index) const;
};

// Parses the "training" object; the graph is used to default the loss output (the single model
// output) and to check names.
Result<TrainingConfig> parseTrainingConfig(const nlohmann::json& training, const Graph& graph);

struct DataBundle {
    data::InMemoryDataset train;
    std::optional<data::InMemoryDataset> validation;
    std::optional<data::InMemoryDataset> test;
    // Streamed data (image folders, CSV index, TFRecord): pipelines instead of the sets above.
    // When trainStream is set, train/validation/test are unused.
    std::shared_ptr<data::BatchStream> trainStream, validationStream, testStream;
    std::map<std::string, std::string> inputs;  // Input node -> data column
    std::vector<std::string> classNames;
    std::string description;                    // one line, for logs
};

// data.inputs: Input node -> data column (errors name the field).
Result<std::map<std::string, std::string>> readInputMap(const nlohmann::json& inputs);

// Loads the "data" section (idx or csv). Relative paths are taken from the project's folder;
// ${KILN_DATA} expands to the data cache.
Result<DataBundle> loadData(const nlohmann::json& data, const std::string& projectPath, uint64_t seed);
// The same with other rows in the test split's place (data::TestReplacement::path; csv tables
// only): they are read with the columns and one-hot categories of the project's table
// (data::readCsvRows) and standardised with the statistics of its training split, as the model
// was trained. Labels are checked against `replacement.classes` when it is set. Other IDX files
// are openData's (ConfigError naming data.format here).
Result<DataBundle> loadData(const nlohmann::json& data, const std::string& projectPath, uint64_t seed,
                            const data::TestReplacement& replacement);

// The data section as training takes it: image folders, CSV indexes and TFRecord files become
// streaming pipelines (engine/data/data_config.h, batches of `batchSize` unless data.batch_size
// says otherwise); IDX and numeric CSV tables are loaded into memory by loadData. Streamed
// training data is shuffled with a buffer of kDefaultShuffleBuffer samples unless
// data.shuffle_buffer is set or `shuffle` (training.shuffle) is false.
constexpr int64_t kDefaultShuffleBuffer = 10000;
Result<DataBundle> openData(const nlohmann::json& data, const std::string& projectPath, uint64_t seed,
                            int64_t batchSize, bool shuffle = true);
// The same with other data in the test stream's place (see data::TestReplacement): streamed
// formats, rows of a csv table (loadData), or another pair of IDX files read into memory as the
// project's IDX splits are.
Result<DataBundle> openData(const nlohmann::json& data, const std::string& projectPath, uint64_t seed,
                            int64_t batchSize, bool shuffle, const data::TestReplacement& replacement);

}  // namespace kiln::engine::train
