// SPDX-License-Identifier: Apache-2.0
// The Trainer runs epochs over in-memory data or a streaming pipeline on a compute backend (the
// CPU, or a CUDA device), with metrics, progress events, callbacks and a command queue (pause,
// stop, learning rate). Deterministic: the same seed gives bit-identical weights on the CPU, also
// across a save/restore of the full training state.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/backend.h"
#include "engine/exec/plan.h"
#include "engine/io/tfevents.h"
#include "engine/optim/optimizer.h"
#include "engine/train/callbacks.h"
#include "engine/train/command_queue.h"
#include "engine/train/config.h"
#include "engine/train/metrics.h"

namespace kiln::engine::train {

struct MetricValue {
    std::string name;  // "loss", "accuracy", ...
    double value = 0;
};

struct EvalResult {
    double loss = 0;
    std::vector<MetricValue> metrics;  // without "loss"
    int64_t samples = 0;
    // For classifiers (a cross-entropy loss on the first output): true vs predicted counts.
    std::optional<ConfusionMatrix> confusion;
    double metric(const std::string& name, double fallback = -1) const;
};

constexpr int kHistogramBuckets = 30;

// The distribution of one parameter's values and of its gradient at an epoch's end.
struct ParamHistogram {
    std::string name;        // "dense/kernel"
    io::Histogram weights;
    // The gradient of the epoch's last training step (unscaled); num == 0 for parameters that
    // do not train (frozen nodes, BatchNorm moving statistics).
    io::Histogram gradients;
};

// Histograms of every parameter, in ParamStore order; `buckets` equal-width buckets each.
std::vector<ParamHistogram> parameterHistograms(const exec::ParamStore& params, int buckets = kHistogramBuckets);

struct TrainEvent {
    // Paused/Resumed/Stopped/LearningRateChanged acknowledge a TrainCommand (see requestId).
    // SavingState comes just before each full-state save (message: the folder): everything
    // emitted before it belongs to that state, so a listener that persists events flushes on it
    // (then a crash never leaves a state newer than the persisted events).
    enum class Kind { Begin, Step, Epoch, End, Paused, Resumed, Stopped, LearningRateChanged, SavingState };
    Kind kind = Kind::Step;
    int epoch = 0;             // 1-based
    int epochs = 0;
    int64_t step = 0;          // step within the epoch, 1-based
    int64_t stepsPerEpoch = 0;
    int64_t globalStep = 0;
    double loss = 0;           // running mean over the epoch so far
    std::vector<MetricValue> metrics;  // running, over the epoch so far
    double learningRate = 0;
    double samplesPerSecond = 0;
    double etaSeconds = 0;
    double elapsedSeconds = 0;
    std::optional<EvalResult> validation;  // Epoch events, when there is validation data
    uint64_t requestId = 0;    // the command acknowledged by Paused/Resumed/Stopped/LearningRateChanged
    std::string message;       // Stopped: where the state was saved; End: why training stopped early
    // Streamed data: the share of the epoch's time the step waited for the input pipeline (near
    // 1: input-bound), and the samples left out as unreadable so far. -1 / 0 for in-memory data.
    double inputWaitFraction = -1;
    int64_t badSamples = 0;
    exec::DeviceMemory deviceMemory;  // zeros on the CPU
    // Staged fine-tuning: the stage in progress (index into TrainingConfig::stages; -1 without
    // stages), its name, and the global step at which it began (a chart's boundary marker).
    int stage = -1;
    std::string stageName;
    int64_t stageStartStep = 0;
    // Epoch events every TrainingConfig::histogramFreq epochs: weight and gradient histograms.
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

struct FitResult {
    std::vector<EpochRecord> history;
    std::optional<EvalResult> test;
    double seconds = 0;
    double samplesPerSecond = 0;  // training samples per second over all epochs
    bool cancelled = false;      // ended by the cancel flag or a Stop command
    bool stopped = false;        // ended by a Stop command
    bool earlyStopped = false;   // a callback requested the stop (e.g. EarlyStopping)
    std::string stopReason;
    std::string stopStateDir;    // where a Stop command saved the full state ("" if nowhere)
    int64_t resumedFromStep = -1;  // global step of the state training continued from, -1 if none
    int64_t skippedSteps = 0;      // mixed float16: updates skipped because gradients overflowed
    std::vector<data::BadSample> badSamples;  // streamed data: samples left out, with reasons
};

// What evaluate() shows an observer after each batch's forward pass: the output of the first
// loss, its targets and where the samples came from. Pointers are valid during the call only.
struct EvalBatch {
    int64_t size = 0;
    const float* outputs = nullptr;  // [size, outputWidth]
    int64_t outputWidth = 0;
    const float* targets = nullptr;  // [size, targetWidth] (class indices as floats when sparse)
    int64_t targetWidth = 0;
    // Streamed data: the source index of each sample; in-memory data: null, the samples are
    // rows firstRow, firstRow + 1, ... of the set.
    const std::vector<int64_t>* sourceIndices = nullptr;
    // Where each sample came from: its file (or file@offset) for streamed data, "FILE:LINE" for
    // in-memory data that knows its lines (a CSV table); null otherwise.
    const std::vector<std::string>* origins = nullptr;
    int64_t firstRow = 0;
    // The batch as the model saw it, per Input node: [size, ...] host memory (explanations).
    std::vector<const float*> inputs;
};
using EvalObserver = std::function<Status(const EvalBatch&)>;

// The position of training: the next step to run.
struct TrainPosition {
    int epoch = 1;          // 1-based
    int64_t step = 0;       // steps of that epoch already done
    int64_t globalStep = 0;
};

class Trainer : public TrainControl {
public:
    // The model must have been analysed; data columns are matched to Input nodes by
    // DataBundle::inputs, else by a single feature column. `backend` makes the compute backend
    // (default: the CPU).
    //
    // `group`, when given, makes this Trainer one replica of a data-parallel run across processes
    // (one per MPI rank): config.batchSize is the global batch, of which replica r trains on rows
    // shardRange(size, r, K) of every batch (the same global batches as one process would
    // take); the starting weights come from replica 0; gradients are averaged over the group
    // before each update; the loss and metrics of events and callbacks, validation and test
    // results are those of the whole batch, identical on every replica. Every replica must call
    // the same methods in the same order. Replicas other than 0 save no training states.
    static Result<std::unique_ptr<Trainer>> create(const ops::ModelInfo& model, const TrainingConfig& config,
                                                   DataBundle data, ThreadPool& pool,
                                                   const exec::BackendFactory& backend = {},
                                                   exec::Reducer* group = nullptr);
    ~Trainer() override;

    // Callbacks run in the order added. Also see addCallbacks() for the project's list.
    void addCallback(std::unique_ptr<Callback> callback) { m_callbacks.push_back(std::move(callback)); }
    // Builds and adds the callbacks of config().callbacks (paths relative to ctx.runDir).
    Status addConfiguredCallbacks(const CallbackContext& ctx);
    const std::vector<std::unique_ptr<Callback>>& callbacks() const { return m_callbacks; }
    // Drained between steps by fit(); may be posted to from any thread. Not owned.
    void setCommandQueue(TrainCommandQueue* queue) { m_queue = queue; }
    // Where a Stop command saves the full training state ("" : nowhere).
    void setStopStateDir(std::string dir) { m_stopStateDir = std::move(dir); }

    // Full training state (weights, optimizer moments and step count, learning-rate override,
    // position in the data order, RNG position, callback states, history) in a folder, written
    // atomically (a new folder renamed into place). A run restored from it continues bit-identically.
    Status saveState(const std::string& dir);
    // Checks that `dir` holds a state of this model and configuration; fit() then continues from it.
    Status restoreFrom(const std::string& dir);
    static bool hasState(const std::string& dir);
    TrainPosition position() const { return m_pos; }

    // TrainControl
    double learningRate() const override;
    void setLearningRate(double lr) override { m_lrOverride = lr; }
    void requestStop(const std::string& reason) override;
    // On a device backend the weights are brought to the host first; changes a callback makes
    // are sent back once the callbacks of that event have run.
    exec::ParamStore* parameters() override;
    exec::ParamStore* gradients() override;
    void requestStateSave(const std::string& dir) override;
    void requestRestore(const std::string& dir) override { m_restoreFrom = dir; }
    void noteCheckpoint(const std::string& path) override { m_lastCheckpoint = path; }
    std::string lastCheckpoint() const override { return m_lastCheckpoint; }
    int64_t globalStep() const override { return m_pos.globalStep; }

    const TrainingConfig& config() const { return m_config; }
    // The fine-tuning stage whose trainable parts the backend is built for (-1 without stages).
    int activeStage() const { return m_activeStage; }

    Result<FitResult> fit(const std::function<void(const TrainEvent&)>& onEvent = {},
                          const std::atomic<bool>* cancel = nullptr);
    // `observer`, when given, sees every batch (see EvalBatch); an error it returns stops the
    // evaluation.
    Result<EvalResult> evaluate(const data::InMemoryDataset& set, const EvalObserver& observer = {});
    Result<EvalResult> evaluate(data::BatchStream& stream, const EvalObserver& observer = {});
    // The loss of the first output ("SparseCategoricalCrossentropy", ...) with its attributes.
    const exec::LossSpec& firstLoss() const { return m_losses.front(); }

    // The weights on the host (after fit(): the trained ones). Changes made here before fit()
    // are what training starts from.
    exec::ParamStore& params() { return m_params; }
    exec::ComputeBackend& backend() { return *m_backend; }
    const DataBundle& data() const { return m_data; }
    const ops::ModelInfo& model() const { return m_model; }
    // The CPU plan for full training batches (compiled by create()); null on other backends.
    exec::Plan* trainPlan();
    // Runs one training step on the first batch of the training set (tests use this to
    // check that steps after the first allocate nothing).
    Status stepOnce(int64_t globalStep);
    // One training step at learning rate `lr` on the next batch of the training data and the loss
    // of its forward pass (before the update). Batches follow their own shuffled order (the
    // configured seed), wrapping around; fit()'s position is untouched. For tools that drive the
    // steps themselves, such as the learning-rate finder.
    Result<double> stepWithRate(double lr);

private:
    Trainer(const ops::ModelInfo& model, const TrainingConfig& config, DataBundle data, ThreadPool& pool);
    Status bindColumns();
    // Builds the backend for m_model and m_params (the factory given to create(), or the CPU).
    Status makeBackend();
    // Rebuilds m_model, the parameters' trainable flags and the backend for a stage; the
    // optimizer state starts fresh.
    Status buildStage(int stage);
    // Moves training into `stage` at a stage boundary, carrying the optimizer state over when
    // the stage keeps it.
    Status enterStage(int stage);
    Result<exec::BatchRunner*> runnerFor(int64_t batch, bool training);
    Status loadBatch(exec::BatchRunner& runner, const data::InMemoryDataset& set,
                     std::span<const int64_t> indices);
    // Rows [first, first + runner.batch()) of a streamed batch.
    Status loadBatch(exec::BatchRunner& runner, const data::Batch& batch, int64_t first = 0);
    // Data parallel: this replica's rows [begin, end) of a global batch of `size` rows.
    std::pair<int64_t, int64_t> shard(int64_t size) const;
    // Data parallel: the loss and metrics of the whole global batch so far, from every replica's
    // sums; `localLossSum` is this replica's loss times its rows. Sets m_groupMetrics.
    Result<double> reduceStep(double localLossSum, const std::vector<std::vector<std::unique_ptr<Metric>>>& local);
    // Data parallel: the replicas' evaluation results averaged (they evaluate the same data with
    // the same weights, so this only removes rounding differences between processes).
    Status agreeOn(EvalResult& r);
    Result<EvalResult> evaluateImpl(const data::InMemoryDataset* set, data::BatchStream* stream,
                                    const EvalObserver& observer);
    Status makeMetrics(std::vector<std::vector<std::unique_ptr<Metric>>>& out) const;
    Status updateMetrics(exec::BatchRunner& runner, int64_t batch,
                         std::vector<std::vector<std::unique_ptr<Metric>>>& metrics);
    // Runs callbacks' `call` on each; sends weights a callback changed back to the device.
    Status forEachCallback(const std::function<Status(Callback&)>& call);
    int64_t trainSamples() const;
    // An event of `kind` at the current position.
    TrainEvent event(TrainEvent::Kind kind) const;
    // The first error a metric met (plugin metrics), read after metricValues().
    static Status metricStatus(const std::vector<std::vector<std::unique_ptr<Metric>>>& metrics);
    std::vector<MetricValue> metricValues(const std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) const;

    ops::ModelInfo m_model;       // as the backend runs it (trainable flags of the active stage)
    ops::ModelInfo m_baseModel;   // as given to create()
    exec::BackendFactory m_backendFactory;
    int m_activeStage = -1;
    int64_t m_stageStartStep = 0;
    TrainingConfig m_config;
    DataBundle m_data;
    ThreadPool* m_pool;
    exec::ParamStore m_params;
    std::unique_ptr<exec::ComputeBackend> m_backend;
    std::vector<exec::LossSpec> m_losses;
    std::vector<size_t> m_lossOutput;          // model output index per loss
    std::vector<std::string> m_inputColumns;   // per Input node (model order)
    bool m_paramsOnHost = false;                // a callback took the weights to the host
    data::Batch m_batch;                        // scratch: a streamed batch
    Status loadState(const std::string& dir);
    Status runPendingSaves(const std::function<void(const TrainEvent&)>& emit);
    Status endCallbacks(TrainEndReason reason);
    // Handles queued commands; true when training must stop now.
    Result<bool> drainCommands(const std::function<void(const TrainEvent&)>& emit, const std::atomic<bool>* cancel,
                               FitResult& result);

    std::vector<std::unique_ptr<Callback>> m_callbacks;
    TrainCommandQueue* m_queue = nullptr;
    std::string m_stopStateDir;
    std::optional<double> m_lrOverride;
    TrainPosition m_pos;
    double m_epochLossSum = 0;   // running loss sum of the epoch in progress
    int64_t m_epochSeen = 0;
    std::vector<EpochRecord> m_history;
    std::vector<std::string> m_pendingSaves;
    std::string m_restoreFrom;
    bool m_stopRequested = false;
    std::string m_stopReason;
    std::string m_lastCheckpoint;
    std::vector<float*> m_feed;                // scratch: destination pointers for a batch
    std::vector<const data::Column*> m_feedColumns;
    std::vector<int64_t> m_firstBatch;         // indices used by stepOnce()
    exec::Reducer* m_group = nullptr;          // data parallel across processes; null: alone
    int64_t m_replicaBatch = 0;                // rows each replica trains of every batch
    std::vector<std::vector<std::unique_ptr<Metric>>> m_groupMetrics;  // the whole batch's metrics
    std::vector<double> m_groupSums;           // scratch: loss and metric counts to reduce
    // stepWithRate(): its sample order, position in it, streamed epoch and step count.
    std::vector<int64_t> m_probeOrder;
    std::vector<int64_t> m_probeBatch;
    int64_t m_probeCursor = 0;
    int m_probeEpoch = 0;
    uint64_t m_probeSteps = 0;
};

}  // namespace kiln::engine::train
