// SPDX-License-Identifier: Apache-2.0
// The Trainer runs epochs over in-memory data with a compiled plan, an optimizer and metrics,
// reporting progress events. Deterministic: the same seed gives bit-identical weights on the CPU.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "engine/exec/plan.h"
#include "engine/optim/optimizer.h"
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

struct TrainEvent {
    enum class Kind { Begin, Step, Epoch, End };
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
};

struct EpochRecord {
    int epoch = 0;
    EvalResult train;
    std::optional<EvalResult> validation;
    double seconds = 0;
    double samplesPerSecond = 0;
};

struct FitResult {
    std::vector<EpochRecord> history;
    std::optional<EvalResult> test;
    double seconds = 0;
    double samplesPerSecond = 0;  // training samples per second over all epochs
    bool cancelled = false;
};

class Trainer {
public:
    // The model must have been analysed; data columns are matched to Input nodes by
    // DataBundle::inputs, else by a single feature column.
    static Result<std::unique_ptr<Trainer>> create(const ops::ModelInfo& model, const TrainingConfig& config,
                                                   DataBundle data, ThreadPool& pool);
    ~Trainer();

    Result<FitResult> fit(const std::function<void(const TrainEvent&)>& onEvent = {},
                          const std::atomic<bool>* cancel = nullptr);
    Result<EvalResult> evaluate(const data::InMemoryDataset& set);

    exec::ParamStore& params() { return m_params; }
    const DataBundle& data() const { return m_data; }
    const ops::ModelInfo& model() const { return m_model; }
    // The plan for full training batches (compiled by create()).
    exec::Plan* trainPlan();
    // Runs one training step on the first batch of the training set (tests use this to
    // check that steps after the first allocate nothing).
    Status stepOnce(int64_t globalStep);

private:
    Trainer(const ops::ModelInfo& model, const TrainingConfig& config, DataBundle data, ThreadPool& pool);
    Status bindColumns();
    Result<exec::Plan*> planFor(int64_t batch, bool training);
    Status loadBatch(exec::Plan& plan, const data::InMemoryDataset& set, std::span<const int64_t> indices);
    Status makeMetrics(std::vector<std::vector<std::unique_ptr<Metric>>>& out) const;
    void updateMetrics(exec::Plan& plan, int64_t batch, std::vector<std::vector<std::unique_ptr<Metric>>>& metrics);
    std::vector<MetricValue> metricValues(const std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) const;

    ops::ModelInfo m_model;
    TrainingConfig m_config;
    DataBundle m_data;
    ThreadPool* m_pool;
    exec::ParamStore m_params;
    std::unique_ptr<optim::Optimizer> m_optimizer;
    std::vector<exec::LossSpec> m_losses;
    std::vector<size_t> m_lossOutput;          // model output index per loss
    std::vector<std::string> m_inputColumns;   // per Input node (model order)
    std::map<std::pair<int64_t, bool>, std::unique_ptr<exec::Plan>> m_plans;
    std::vector<float*> m_feed;                // scratch: destination pointers for a batch
    std::vector<const data::Column*> m_feedColumns;
    std::vector<int64_t> m_firstBatch;         // indices used by stepOnce()
};

}  // namespace kiln::engine::train
