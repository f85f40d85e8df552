// SPDX-License-Identifier: Apache-2.0
// One training run of a project, set up the same way for every front end: data, trainer, the
// project's callbacks, a run folder, the run's record in the project's RunStore and resume from a
// backup. The caller runs it on its own thread and steers it through a TrainCommandQueue.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/api/devices.h"
#include "engine/core/thread_pool.h"
#include "engine/io/project.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"

// The run's record is kept through engine/store's RunStore, which stays inside the engine.
namespace kiln::engine::store {
class RunStore;
}

namespace kiln::engine::api {

struct TrainingOptions {
    std::string runDir;       // "" : runsHome(<project folder>)/runs/<name>-<yyyyMMdd-HHmmss>
    std::string runName;      // "" : the project's name and the time
    std::string weightsPath;  // start from these weights (safetensors); "" : initialise
    // Load the tensors of weightsPath whose name and shape match and initialise the rest
    // (transfer learning); false: the file must fit the model exactly.
    bool weightsPartial = false;
    bool resume = false;  // continue from the run folder's newest saved state
    int threads = 0;      // CPU threads; 0 : all cores
    std::optional<int> epochs;
    std::optional<int64_t> batchSize;
    std::optional<uint64_t> seed;
    bool recordRun = true;                 // record the run and its metrics in the run store
    std::string storePath;                 // the run store; "" : runStorePath(project)
    std::optional<std::string> device;     // overrides training.device ("cpu", "cuda:N")
    std::optional<std::string> precision;  // overrides training.precision
    int64_t stepMetricsEvery = 1;          // record step metrics every N steps (1 : every step)
    // Learning-rate scaling with the global batch (docs/gpu.md): "none", or "linear": the
    // learning rate (and every rate of its schedule) times batchSize / the project's
    // training.batch_size, reached after a linear warm-up from the project's rate over
    // warmupEpochs epochs (0: none).
    std::string lrScaling = "none";
    double warmupEpochs = 0;
    // Data parallel across processes (mpirun): this job is the group's replica group->rank()
    // and batchSize the global batch (train::Trainer::create). Only rank 0 writes the run folder,
    // the run store and the weights; the others read a backup to resume and write nothing.
    exec::Reducer* group = nullptr;
    // Fields added to the run's recorded configuration snapshot (a sweep records its id, the
    // trial and the trial's parameters under "sweep").
    nlohmann::json recordExtra = nlohmann::json::object();
};

// runsHome(<project folder>)/.kiln/runs.sqlite: next to the project, or in the user's data folder
// when the project's folder is read-only (engine/api/run_location.h).
std::string runStorePath(const std::string& projectPath);
// Where a Stop command leaves the full training state inside a run folder.
std::string stopStateDir(const std::string& runDir);

// nlohmann::json's move constructor is noexcept; clang-tidy 14 follows into its body and reports
// a throw from there for any struct that holds a json and is moved.
struct TrainingOutcome {  // NOLINT(bugprone-exception-escape)
    train::FitResult fit;
    std::string runDir;
    int64_t runId = 0;       // 0 when the run is not recorded
    nlohmann::json results;  // the summary written to run.json's "results"
};

class TrainingJob {
public:
    // Validates everything a run needs (model, configuration, data, weights, run folder) before
    // any step runs; errors name the node, field or file. Like run(), it never throws: an exception
    // from below (a plugin, a library, memory) comes back as an Error (engine/api/guard.h).
    static Result<std::unique_ptr<TrainingJob>> prepare(const io::Project& project, const std::string& projectPath,
                                                        TrainingOptions options);
    ~TrainingJob();

    // Trains to the end, a Stop command, early stopping or `cancel`; writes weights.safetensors
    // and run.json into the run folder and marks the run's record. Call once. An exception thrown
    // during the run becomes the returned Error and marks the run's record failed.
    Result<TrainingOutcome> run(const std::function<void(const train::TrainEvent&)>& onEvent,
                                train::TrainCommandQueue* queue = nullptr, const std::atomic<bool>* cancel = nullptr);

    const std::string& runDir() const { return m_runDir; }
    int64_t runId() const { return m_runId; }
    const train::TrainingConfig& config() const { return m_config; }
    const ops::ModelInfo& model() const { return m_model; }
    train::Trainer& trainer() { return *m_trainer; }
    int threads() const;
    // The global step the run continues from (-1 for a fresh start).
    int64_t resumedFromStep() const { return m_resumedFrom; }
    // False on the replicas of a data-parallel group other than rank 0.
    bool writesFiles() const { return !m_options.group || m_options.group->rank() == 0; }
    // How the starting weights (TrainingOptions::weightsPath) met the model; empty without them.
    const std::optional<train::WeightsReport>& weightsReport() const { return m_weightsReport; }

private:
    TrainingJob() = default;
    static Result<std::unique_ptr<TrainingJob>> prepareUnguarded(const io::Project& project,
                                                                 const std::string& projectPath, TrainingOptions options);
    Result<TrainingOutcome> runUnguarded(const std::function<void(const train::TrainEvent&)>& onEvent,
                                         train::TrainCommandQueue* queue, const std::atomic<bool>* cancel);
    void markFailed(const Error& error);
    void record(const train::TrainEvent& e);

    io::Project m_project;
    std::string m_projectPath;
    TrainingOptions m_options;
    ops::ModelInfo m_model;
    train::TrainingConfig m_config;
    std::unique_ptr<ThreadPool> m_pool;
    std::unique_ptr<train::Trainer> m_trainer;
    std::unique_ptr<store::RunStore> m_store;
    std::string m_runDir;
    int64_t m_runId = 0;
    int64_t m_resumedFrom = -1;
    std::optional<train::WeightsReport> m_weightsReport;
    bool m_ran = false;
};

}  // namespace kiln::engine::api
