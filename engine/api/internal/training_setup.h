// SPDX-License-Identifier: Apache-2.0
// The set-up every use of a project's training shares: the model graph (layer instances
// expanded), its analysis, the training configuration with the caller's overrides, the compute
// backend, the project's data and a Trainer over them. Training runs, sweeps, the preflight check,
// the learning-rate finder, evaluation and node previews all start here, so that their errors
// name the same node, field or file. Internal to the engine: the api's own sources and the
// headless programs include it; an engine/api header and the studio may not (cmake/
// CheckApiHeaders.cmake, cmake/CheckUiBoundary.cmake).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/api/training_setup.h"
#include "engine/core/thread_pool.h"
#include "engine/data/data_config.h"
#include "engine/io/project.h"
#include "engine/train/trainer.h"

namespace kiln::engine::api {

// The compute backend for training.device (and training.precision, training.memory_limit): the
// CPU (an empty factory: the Trainer's default), or a CUDA device when this build has the CUDA
// backend and the machine has the device. Errors name the field. (Defined in devices.cpp.)
Result<exec::BackendFactory> backendFor(const train::TrainingConfig& config);

// What differs between the users of a project's training; unset fields keep the project's value.
struct PrepareOptions {
    std::optional<int> epochs;
    std::optional<int64_t> batchSize;
    std::optional<uint64_t> seed;
    // training.device ("cpu", "cuda:N") and training.precision; either one set checks the pair
    // (a device name that does not parse, a precision other than float32, mixed_float16 or
    // mixed_bfloat16, mixed precision on the CPU) with errors naming the field.
    std::optional<std::string> device;
    std::optional<std::string> precision;
    std::optional<bool> shuffle;  // training.shuffle (also how the data is opened)
    bool histograms = true;       // false: training.histogram_freq 0
    // Learning-rate scaling with the global batch (TrainingOptions::lrScaling, warmupEpochs).
    std::string lrScaling = "none";
    double warmupEpochs = 0;
    // Refuse a model with untrained placeholders for this action ("train"); "" : allow them.
    std::string refusePlaceholdersFor;
    // An empty data section is an error (field "data") instead of whatever opening it says.
    bool requireData = false;
    // Opens the data with the test split replaced (evaluation of another folder or file).
    std::optional<data::TestReplacement> testReplacement;
    // Checks the opened data before the trainer is made (a wanted split is there).
    std::function<Status(const train::DataBundle&)> checkData;
    int threads = 0;                 // CPU threads of the trainer's pool; 0 : all cores
    exec::Reducer* group = nullptr;  // data parallel across processes (Trainer::create)
};

// The model and configuration, before any data is read.
struct PreparedModel {
    ops::ModelInfo model;
    train::TrainingConfig config;
    int64_t projectBatch = 0;  // training.batch_size as the project has it (before overrides)
};

// Everything a run needs. The trainer uses the pool; both live as long as this.
struct PreparedTraining {
    ops::ModelInfo model;
    train::TrainingConfig config;  // as the trainer has it (overrides and learning-rate scaling applied)
    int64_t projectBatch = 0;
    std::unique_ptr<ThreadPool> pool;
    std::unique_ptr<train::Trainer> trainer;
};

// The project's training configuration as written (layer instances expanded for the names it
// checks), without analysing the model or applying overrides; errors as prepareModel's.
Result<train::TrainingConfig> projectTrainingConfig(const io::Project& project, const std::string& projectPath);

// The model graph, its analysis and the configuration with the overrides of `options`; errors
// carry the project's file and the node's line, or the field.
Result<PreparedModel> prepareModel(const io::Project& project, const std::string& projectPath,
                                   const PrepareOptions& options);
// prepareModel, then the device's backend (checked before the data is read), the data and the
// trainer.
Result<PreparedTraining> prepareTraining(const io::Project& project, const std::string& projectPath,
                                         const PrepareOptions& options);
// The second half of prepareTraining for a model already prepared with the same options.
Result<PreparedTraining> prepareTraining(const io::Project& project, const std::string& projectPath,
                                         PreparedModel prepared, const PrepareOptions& options);

}  // namespace kiln::engine::api
