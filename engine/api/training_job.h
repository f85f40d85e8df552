// SPDX-License-Identifier: Apache-2.0
// One training run of a project, set up the same way for every front end: data, trainer, the
// project's callbacks, a run folder, the run's record in the project's RunStore and resume from a
// backup. The caller runs it on its own thread, steers it through a TrainCommandQueue and hears
// of it through TrainEvents. The events, results, commands and weights report are the api's own
// types, copied from the trainer's in training_job.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/api/devices.h"
#include "engine/api/histogram_log.h"
#include "engine/core/error.h"
#include "engine/core/thread_pool.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

// Internal classes the api only points to: the group of a data-parallel run, and the trainer's
// command queue behind the api's.
namespace kiln::engine::exec {
class Reducer;
}
namespace kiln::engine::train {
class TrainCommandQueue;
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

struct MetricValue {
    std::string name;  // "loss", "accuracy", ...
    double value = 0;
};

// True against predicted class counts, row-major: counts[t * classes + p].
struct ConfusionCounts {
    int64_t classes = 0;
    std::vector<int64_t> counts;
};

struct EvalResult {
    double loss = 0;
    std::vector<MetricValue> metrics;  // without "loss"
    int64_t samples = 0;
    // For classifiers (a cross-entropy loss on the first output).
    std::optional<ConfusionCounts> confusion;
    // The metric's value ("loss" included); `fallback` when there is no such metric.
    double metric(const std::string& name, double fallback = -1) const;
};

// The compute device's memory (bytes); zeros on the CPU.
struct DeviceMemory {
    uint64_t inUse = 0, reserved = 0, peak = 0, limit = 0, total = 0;
};

struct TrainEvent {
    // Paused/Resumed/Stopped/LearningRateChanged acknowledge a TrainCommand (see requestId).
    // SavingState comes just before each full-state save (message: the folder): everything
    // emitted before it belongs to that state.
    enum class Kind { Begin,
                      Step,
                      Epoch,
                      End,
                      Paused,
                      Resumed,
                      Stopped,
                      LearningRateChanged,
                      SavingState };
    Kind kind = Kind::Step;
    int epoch = 0;  // 1-based
    int epochs = 0;
    int64_t step = 0;  // step within the epoch, 1-based
    int64_t stepsPerEpoch = 0;
    int64_t globalStep = 0;
    double loss = 0;                   // running mean over the epoch so far
    std::vector<MetricValue> metrics;  // running, over the epoch so far
    double learningRate = 0;
    double samplesPerSecond = 0;
    double etaSeconds = 0;
    double elapsedSeconds = 0;
    std::optional<EvalResult> validation;  // Epoch events, when there is validation data
    uint64_t requestId = 0;                // the command acknowledged by Paused/Resumed/Stopped/LearningRateChanged
    std::string message;                   // Stopped: where the state was saved; End: why training stopped early
    // Streamed data: the share of the epoch's time the step waited for the input pipeline (near
    // 1: input-bound), and the samples left out as unreadable so far. -1 / 0 for in-memory data.
    double inputWaitFraction = -1;
    int64_t badSamples = 0;
    DeviceMemory deviceMemory;
    // Staged fine-tuning: the stage in progress (-1 without stages), its name, and the global
    // step at which it began (a chart's boundary marker).
    int stage = -1;
    std::string stageName;
    int64_t stageStartStep = 0;
    // Epoch events every training.histogram_freq epochs: weight and gradient histograms.
    std::vector<ParamHistogram> histograms;
};

struct EpochRecord {
    int epoch = 0;
    EvalResult train;
    std::optional<EvalResult> validation;
    double seconds = 0;
    double samplesPerSecond = 0;
    int stage = -1;  // the fine-tuning stage the epoch trained in (-1 without stages)
};

// A sample of streamed data left out of training, and why.
struct BadSample {
    int64_t index = -1;
    std::string path;
    std::string reason;
};

struct FitResult {
    std::vector<EpochRecord> history;
    std::optional<EvalResult> test;
    double seconds = 0;
    double samplesPerSecond = 0;  // training samples per second over all epochs
    bool cancelled = false;       // ended by the cancel flag or a Stop command
    bool stopped = false;         // ended by a Stop command
    bool earlyStopped = false;    // a callback requested the stop (e.g. EarlyStopping)
    std::string stopReason;
    std::string stopStateDir;           // where a Stop command saved the full state ("" if nowhere)
    int64_t resumedFromStep = -1;       // global step of the state training continued from, -1 if none
    int64_t skippedSteps = 0;           // mixed float16: updates skipped because gradients overflowed
    std::vector<BadSample> badSamples;  // streamed data: samples left out, with reasons
};

// How the tensors of a starting weights file met the parameters of the model, matched by name.
struct WeightsReport {
    struct Mismatch {
        std::string name;
        std::string fileShape;   // "[3,3,16,32]" (with the dtype when that differs: "F16 [3]")
        std::string modelShape;  // "[3,3,16,64]"
    };
    std::string file;
    std::vector<std::string> loaded;       // name, dtype and shape match: copied into the model
    std::vector<std::string> initialised;  // model parameters the file lacks: they keep their initial values
    std::vector<Mismatch> mismatched;      // same name, other shape or dtype: the model keeps its initial values
    std::vector<std::string> unused;       // tensors of the file that are no parameter of the model
    int64_t loadedValues = 0;              // floats copied
    // The file fits the model exactly: every parameter loaded, nothing left over.
    bool exact() const { return initialised.empty() && mismatched.empty() && unused.empty(); }
};

struct TrainCommand {
    enum class Kind {
        Pause,  // stop after the current step and wait for Resume or Stop
        Resume,
        Stop,             // save the full training state, then end the run
        SetLearningRate,  // from the next step on, `learningRate` replaces the schedule's value
    };
    Kind kind = Kind::Stop;
    double learningRate = 0;  // SetLearningRate
    uint64_t requestId = 0;   // echoed in TrainEvent::requestId of the event that acknowledges it
};

// Commands for a running job: any thread posts, the training thread takes them between steps, so
// they act within one step.
class TrainCommandQueue {
public:
    TrainCommandQueue();
    ~TrainCommandQueue();
    TrainCommandQueue(const TrainCommandQueue&) = delete;
    TrainCommandQueue& operator=(const TrainCommandQueue&) = delete;

    void post(const TrainCommand& command);
    void clear();  // drops the commands not yet taken

private:
    friend class TrainingJob;
    std::unique_ptr<train::TrainCommandQueue> m_queue;
};

// nlohmann::json's move constructor is noexcept; clang-tidy 14 follows into its body and reports
// a throw from there for any struct that holds a json and is moved.
struct TrainingOutcome {  // NOLINT(bugprone-exception-escape)
    FitResult fit;
    std::string runDir;
    int64_t runId = 0;       // 0 when the run is not recorded
    nlohmann::json results;  // the summary written to run.json's "results"
};

class TrainingJob {
public:
    // The listener of run(): the event is the listener's to keep (move from it).
    using EventListener = std::function<void(TrainEvent&&)>;

    // Validates everything a run needs (model, configuration, data, weights, run folder) before
    // any step runs; errors name the node, field or file. Like run(), it never throws: an exception
    // from below (a plugin, a library, memory) comes back as an Error (engine/api/guard.h).
    static Result<std::unique_ptr<TrainingJob>> prepare(const io::Project& project, const std::string& projectPath,
                                                        TrainingOptions options);
    ~TrainingJob();
    TrainingJob(const TrainingJob&) = delete;
    TrainingJob& operator=(const TrainingJob&) = delete;

    // Trains to the end, a Stop command, early stopping or `cancel`; writes weights.safetensors
    // and run.json into the run folder and marks the run's record. Call once. An exception thrown
    // during the run becomes the returned Error and marks the run's record failed.
    Result<TrainingOutcome> run(const EventListener& onEvent, TrainCommandQueue* queue = nullptr,
                                const std::atomic<bool>* cancel = nullptr);

    const std::string& runDir() const;
    int64_t runId() const;
    const ops::ModelInfo& model() const;
    int threads() const;
    // The global step the run continues from (-1 for a fresh start).
    int64_t resumedFromStep() const;
    // False on the replicas of a data-parallel group other than rank 0.
    bool writesFiles() const;
    // How the starting weights (TrainingOptions::weightsPath) met the model; empty without them.
    const std::optional<WeightsReport>& weightsReport() const;

private:
    // The trainer, its configuration and the run store stay inside the engine
    // (engine/api/internal/training_job_access.h hands the trainer to the engine's own programs).
    struct State;
    friend class TrainingJobAccess;

    TrainingJob();
    static Result<std::unique_ptr<TrainingJob>> prepareUnguarded(const io::Project& project,
                                                                 const std::string& projectPath, TrainingOptions options);
    Result<TrainingOutcome> runUnguarded(const EventListener& onEvent, TrainCommandQueue* queue,
                                         const std::atomic<bool>* cancel);

    std::unique_ptr<State> m_state;
};

}  // namespace kiln::engine::api
