// SPDX-License-Identifier: Apache-2.0
// prepareModel / prepareTraining: project graph -> analysis -> configuration -> backend -> data
// -> trainer, with the caller's overrides in between.
#include "engine/api/training_setup.h"

#include <algorithm>
#include <cmath>

#include "engine/api/devices.h"
#include "engine/api/guard.h"
#include "engine/api/internal/training_setup.h"
#include "engine/core/device.h"

namespace kiln::engine::api {

namespace {

// Linear scaling of the learning rate with the global batch (Goyal et al., "Accurate, Large
// Minibatch SGD"), with the warm-up given in epochs turned into optimizer steps.
Status scaleLearningRate(train::TrainingConfig& config, const PrepareOptions& options, int64_t projectBatch,
                         const train::DataBundle& data)
{
    if (options.lrScaling == "none" || options.lrScaling.empty()) {
        if (options.warmupEpochs > 0) {
            return Error(ErrorCode::ConfigError, "a warm-up in epochs goes with learning-rate scaling (linear)")
                .with("field", "warmup_epochs")
                .with("reason", "needs lr_scaling linear");
        }
        return {};
    }
    if (options.lrScaling != "linear") {
        return Error(ErrorCode::ConfigError, "learning-rate scaling must be none or linear, not \"" + options.lrScaling + "\"")
            .with("field", "lr_scaling")
            .with("reason", "must be none or linear");
    }
    if (!(options.warmupEpochs >= 0) || options.warmupEpochs > 1e6) {
        return Error(ErrorCode::ConfigError, "the warm-up must be a number of epochs of at least 0")
            .with("field", "warmup_epochs")
            .with("reason", "must be at least 0");
    }
    const double base = config.schedule.initial;
    const double factor = static_cast<double>(config.batchSize) / static_cast<double>(projectBatch);
    config.schedule.initial = base * factor;
    config.optimizer.learningRate = config.schedule.initial;
    if (options.warmupEpochs > 0) {
        int64_t stepsPerEpoch = 0;
        if (data.trainStream) {
            stepsPerEpoch = data.trainStream->batchesPerEpoch();
            if (stepsPerEpoch < 0) {
                return Error(ErrorCode::ConfigError,
                             "a warm-up in epochs needs the length of an epoch, which record files do not tell "
                             "before the first epoch; use training.schedule warmup_steps instead")
                    .with("field", "warmup_epochs")
                    .with("reason", "epoch length unknown");
            }
        } else {
            // The Trainer holds out training.validation_split of the samples when there is no
            // validation set.
            int64_t n = data.train.count();
            if (config.validationSplit > 0 && !data.validation) {
                const auto hold = static_cast<int64_t>(std::floor(static_cast<double>(n) * config.validationSplit));
                if (hold > 0 && hold < n) {
                    n -= hold;
                }
            }
            stepsPerEpoch = (n + config.batchSize - 1) / config.batchSize;
        }
        config.schedule.warmupSteps = std::max<int64_t>(1, std::llround(options.warmupEpochs * double(stepsPerEpoch)));
        config.schedule.warmupStart = base;
    }
    return {};
}

// The device and precision overrides, checked as a pair.
Status overrideDevice(train::TrainingConfig& config, const PrepareOptions& options)
{
    if (!options.device && !options.precision) {
        return {};
    }
    if (options.device) {
        auto device = Device::parse(*options.device);
        if (!device.ok()) {
            return Error(ErrorCode::ConfigError, "the device must be cpu or cuda:N, not \"" + *options.device + "\"")
                .with("field", "training.device")
                .with("reason", "not a device");
        }
        config.device = device->toString();
    }
    if (options.precision) {
        config.precision = *options.precision;
    }
    const std::string& p = config.precision;
    if (p != "float32" && p != "mixed_float16" && p != "mixed_bfloat16") {
        return Error(ErrorCode::ConfigError, "precision must be float32, mixed_float16 or mixed_bfloat16")
            .with("field", "training.precision")
            .with("reason", "must be float32, mixed_float16 or mixed_bfloat16");
    }
    if (p != "float32" && config.device == "cpu") {
        return Error(ErrorCode::ConfigError, "mixed precision needs a GPU device; the CPU trains in float32")
            .with("field", "training.precision")
            .with("reason", "mixed precision needs a GPU device; the CPU trains in float32");
    }
    return {};
}

}  // namespace

Result<train::TrainingConfig> projectTrainingConfig(const io::Project& project, const std::string& projectPath)
{
    auto graph = io::modelGraph(project);
    if (!graph.ok()) {
        return graph.error();
    }
    auto config = train::parseTrainingConfig(project.training, *graph);
    if (!config.ok()) {
        return config.error().withFile(projectPath);
    }
    return config;
}

Result<std::vector<std::string>> projectMetricNames(const io::Project& project, const std::string& projectPath) {
    return guarded("reading the training settings", [&]() -> Result<std::vector<std::string>> {
        KILN_ASSIGN(train::TrainingConfig config, projectTrainingConfig(project, projectPath));
        return std::move(config.metrics);
    });
}

int64_t streamedDataBatchSize(const nlohmann::json& data)
{
    if (!data.is_object() || !data.contains("batch_size") || !data["batch_size"].is_number_integer()) return 0;
    const std::string format = data.value("format", std::string());
    if (format != "folder" && format != "csv_index" && format != "tfrecord") return 0;
    return std::max<int64_t>(0, data["batch_size"].get<int64_t>());
}

Result<PreparedModel> prepareModel(const io::Project& project, const std::string& projectPath,
                                   const PrepareOptions& options)
{
    auto graph = io::modelGraph(project);  // errors located in the project file
    if (!graph.ok()) {
        return graph.error();
    }
    PreparedModel out;
    auto model = ops::analyzeModel(*graph);
    if (!model.ok()) {
        return io::locate(model.error(), project);
    }
    if (!options.refusePlaceholdersFor.empty()) {
        if (auto refused = ops::refusePlaceholders(*graph, options.refusePlaceholdersFor); !refused.ok()) {
            return io::locate(refused.error(), project);
        }
    }
    out.model = std::move(model.value());
    auto config = train::parseTrainingConfig(project.training, *graph);
    if (!config.ok()) {
        return config.error().withFile(projectPath);
    }
    out.config = std::move(config.value());
    // Streamed data batches at data.batch_size when the section sets one (training.batch_size is
    // only its default): that is the project's batch, for step counts, memory and the rate.
    if (const int64_t dataBatch = streamedDataBatchSize(project.data); dataBatch > 0) {
        out.config.batchSize = dataBatch;
    }
    out.projectBatch = out.config.batchSize;
    if (options.epochs) {
        out.config.epochs = *options.epochs;
    }
    if (options.batchSize) {
        out.config.batchSize = *options.batchSize;
    }
    if (options.seed) {
        out.config.seed = *options.seed;
    }
    if (options.shuffle) {
        out.config.shuffle = *options.shuffle;
    }
    if (!options.histograms) {
        out.config.histogramFreq = 0;
    }
    KILN_TRY(overrideDevice(out.config, options));
    return out;
}

Result<PreparedTraining> prepareTraining(const io::Project& project, const std::string& projectPath,
                                         const PrepareOptions& options)
{
    KILN_ASSIGN(PreparedModel prepared, prepareModel(project, projectPath, options));
    return prepareTraining(project, projectPath, std::move(prepared), options);
}

Result<PreparedTraining> prepareTraining(const io::Project& project, const std::string& projectPath,
                                         PreparedModel prepared, const PrepareOptions& options)
{
    PreparedTraining out;
    out.model = std::move(prepared.model);
    out.config = std::move(prepared.config);
    out.projectBatch = prepared.projectBatch;
    if (options.requireData && (!project.data.is_object() || project.data.empty())) {
        return Error(ErrorCode::ConfigError, "the project has no data: configure it in the Data view first")
            .with("field", "data")
            .with("reason", "the project has no data");
    }
    // The device is checked before the data is read.
    auto backend = backendFor(out.config);
    if (!backend.ok()) {
        return backend.error().withFile(projectPath);
    }
    // A batch size given as an override replaces the data section's as well.
    nlohmann::json dataSection = project.data;
    if (options.batchSize && streamedDataBatchSize(dataSection) > 0) dataSection["batch_size"] = *options.batchSize;
    auto data = options.testReplacement
                    ? train::openData(dataSection, projectPath, out.config.seed, out.config.batchSize,
                                      out.config.shuffle, *options.testReplacement)
                    : train::openData(dataSection, projectPath, out.config.seed, out.config.batchSize,
                                      out.config.shuffle);
    if (!data.ok()) {
        Error e = data.error();
        return e.file.empty() ? e.withFile(projectPath) : e;
    }
    if (options.checkData) {
        KILN_TRY(options.checkData(*data));
    }
    KILN_TRY(scaleLearningRate(out.config, options, out.projectBatch, *data));
    out.pool = std::make_unique<ThreadPool>(options.threads);
    auto trainer = train::Trainer::create(out.model, out.config, std::move(data.value()), *out.pool, *backend,
                                          options.group);
    if (!trainer.ok()) {
        return io::locate(trainer.error(), project);
    }
    out.trainer = std::move(trainer.value());
    return out;
}

}  // namespace kiln::engine::api
