// SPDX-License-Identifier: Apache-2.0
// Epoch loop, batching, evaluation and metrics.
#include "engine/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/json_checked.h"
#include "engine/core/rng.h"
#include "engine/data/byte_reader.h"
#include "engine/data/split.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/plugin_registry.h"
#include "engine/train/plugin_metric.h"
#include "engine/train/weights.h"

namespace kiln::engine::train {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

Error configError(const std::string& field, const std::string& why) {
    return Error(ErrorCode::ConfigError, field + " " + why).with("field", field).with("reason", why);
}

// The running mean of one loss term's own value over the samples seen: the "<name>_loss"
// scalars of a training config with several loss terms. Fed by the Trainer from the runner's
// loss values, not from predictions.
class LossTermMean final : public Metric {
public:
    explicit LossTermMean(std::string name) : m_name(std::move(name)) {}
    void reset() override { m_sum = m_count = 0; }
    void update(const float*, const float*, int64_t, int64_t) override {}
    void add(double value, int64_t samples) {
        m_sum += value * static_cast<double>(samples);
        m_count += static_cast<double>(samples);
    }
    double result() const override { return m_count > 0 ? m_sum / m_count : 0.0; }
    std::string name() const override { return m_name; }
    size_t numCounts() const override { return 2; }
    void readCounts(double* out) const override {
        out[0] = m_sum;
        out[1] = m_count;
    }
    void setCounts(std::span<const double> v) override {
        m_sum = v[0];
        m_count = v[1];
    }

private:
    std::string m_name;
    double m_sum = 0, m_count = 0;
};

}  // namespace

double EvalResult::metric(const std::string& name, double fallback) const {
    if (name == "loss") return loss;
    for (const auto& m : metrics)
        if (m.name == name) return m.value;
    return fallback;
}

Trainer::Trainer(const ops::ModelInfo& model, const TrainingConfig& config, DataBundle data, ThreadPool& pool)
    : m_model(model), m_config(config), m_data(std::move(data)), m_pool(&pool) {}

Trainer::~Trainer() = default;

Result<std::unique_ptr<Trainer>> Trainer::create(const ops::ModelInfo& model, const TrainingConfig& config,
                                                 DataBundle data, ThreadPool& pool,
                                                 const exec::BackendFactory& backend, exec::Reducer* group) {
    std::unique_ptr<Trainer> t(new Trainer(model, config, std::move(data), pool));
    t->m_group = group && group->size() > 1 ? group : nullptr;
    if (t->m_data.trainStream) {
        if (t->m_config.validationSplit > 0 && !t->m_data.validationStream)
            return configError("training.validation_split",
                               "applies to data held in memory; for streamed data set data.split");
    } else if (t->m_config.validationSplit > 0 && !t->m_data.validation) {
        // As Keras: the last fraction of the training data, taken before any shuffling.
        int64_t n = t->m_data.train.count();
        auto hold = static_cast<int64_t>(std::floor(static_cast<double>(n) * t->m_config.validationSplit));
        if (hold > 0 && hold < n) {
            std::vector<int64_t> head(static_cast<size_t>(n - hold)), tail(static_cast<size_t>(hold));
            std::iota(head.begin(), head.end(), 0);
            std::iota(tail.begin(), tail.end(), n - hold);
            KILN_ASSIGN(auto val, t->m_data.train.subset(tail));
            KILN_ASSIGN(auto train, t->m_data.train.subset(head));
            t->m_data.validation = std::move(val);
            t->m_data.train = std::move(train);
        }
    }
    if (!t->m_data.trainStream && t->m_data.train.count() == 0) return configError("data.train", "holds no samples");
    if (t->m_data.trainStream && t->m_data.trainStream->samplesPerEpoch() == 0)
        return configError("data.train", "holds no samples");
    KILN_TRY(t->bindColumns());
    int64_t replicaBatch = t->m_config.batchSize;
    if (t->m_group) {
        const int64_t k = t->m_group->size();
        const int64_t b = t->m_config.batchSize;
        if (b % k != 0)
            return Error(ErrorCode::ConfigError, "the global batch size " + std::to_string(b) +
                                                     " cannot be split evenly over " + std::to_string(k) +
                                                     " processes; choose a multiple of " + std::to_string(k))
                .with("field", "training.batch_size")
                .with("batch_size", std::to_string(b))
                .with("processes", std::to_string(k));
        // The last batch of an epoch must still give every process a row.
        const int64_t last = t->m_data.trainStream ? 0 : t->m_data.train.count() % b;
        if (last > 0 && last < k)
            return Error(ErrorCode::ConfigError, "the last batch of each epoch holds " + std::to_string(last) +
                                                     " samples, fewer than the " + std::to_string(k) +
                                                     " processes; choose another batch size")
                .with("field", "training.batch_size")
                .with("batch_size", std::to_string(b))
                .with("processes", std::to_string(k));
        replicaBatch = b / k;
        KILN_TRY(t->makeMetrics(t->m_groupMetrics));
    }
    t->m_replicaBatch = replicaBatch;
    t->m_baseModel = t->m_model;
    t->m_backendFactory = backend;
    if (!t->m_config.stages.empty()) {
        // The first stage's trainable parts from the start: plans compile once for it.
        KILN_ASSIGN(t->m_model, stageModel(t->m_baseModel, t->m_config.stages.front()));
        t->m_activeStage = 0;
    }
    t->m_params = exec::ParamStore::create(t->m_model, t->m_config.seed);
    KILN_TRY(t->makeBackend());
    return t;
}

Status Trainer::makeBackend() {
    exec::BackendSetup setup;
    setup.model = &m_model;
    setup.params = &m_params;
    setup.losses = m_losses;
    setup.optimizer = m_config.optimizer;
    setup.batchSize = m_replicaBatch;
    // Dropout masks differ between replicas, as between the rows of one batch.
    setup.seed = m_group ? rng::mix(m_config.seed, static_cast<uint64_t>(m_group->rank())) : m_config.seed;
    KILN_ASSIGN(setup.precision, parsePrecision(m_config.precision));
    setup.pool = m_pool;
    setup.group = m_group;
    if (m_backendFactory) {
        KILN_ASSIGN(m_backend, m_backendFactory(setup));
    } else {
        KILN_ASSIGN(m_backend, exec::makeCpuBackend(setup));
    }
    KILN_ASSIGN(auto* runner, runnerFor(m_replicaBatch, true));
    (void)runner;
    return {};
}

Status Trainer::buildStage(int stage) {
    KILN_TRY(m_backend->pullParameters());
    m_backend.reset();
    KILN_ASSIGN(m_model, stageModel(m_baseModel, m_config.stages[static_cast<size_t>(stage)]));
    // The weights stay; only which of them train changes (as ParamStore::create decides it).
    for (auto& p : m_params.params()) {
        const auto& ni = m_model.nodes[static_cast<size_t>(p.node)];
        p.trainable = p.spec.trainable && ni.trainable;
        p.lrMultiplier = ni.lrMultiplier;
    }
    KILN_TRY(makeBackend());
    KILN_TRY(m_backend->pushParameters());
    m_activeStage = stage;
    return {};
}

Status Trainer::enterStage(int stage) {
    if (stage == m_activeStage) return {};
    const TrainingStage& next = m_config.stages[static_cast<size_t>(stage)];
    // The optimizer state holds, for each trainable parameter in store order, stateSlots()
    // buffers of its size (optim::Optimizer's layout, shared by every backend).
    std::vector<float> oldState;
    std::vector<char> wasTrainable;
    const int64_t oldIterations = m_backend->iterations();
    if (!next.resetOptimizer) {
        oldState.resize(static_cast<size_t>(m_backend->optimizerStateSize()));
        if (!oldState.empty()) KILN_TRY(m_backend->saveOptimizerState(oldState.data()));
        for (const auto& p : m_params.params()) wasTrainable.push_back(p.trainable ? 1 : 0);
    }
    KILN_TRY(buildStage(stage));
    m_lrOverride.reset();  // a rate set during the last stage (ReduceLROnPlateau, a command) ends with it
    m_stageStartStep = m_pos.globalStep;
    if (next.resetOptimizer) return {};
    const int slots = optim::Optimizer(m_config.optimizer).stateSlots();
    std::vector<float> state(static_cast<size_t>(m_backend->optimizerStateSize()), 0.0f);
    size_t from = 0, to = 0;
    const auto& ps = m_params.params();
    for (size_t i = 0; i < ps.size(); ++i) {
        const auto size = static_cast<size_t>(ps[i].value.numel()) * static_cast<size_t>(slots);
        if (ps[i].trainable && wasTrainable[i]) std::copy_n(oldState.begin() + static_cast<std::ptrdiff_t>(from), size,
                                                            state.begin() + static_cast<std::ptrdiff_t>(to));
        if (wasTrainable[i]) from += size;
        if (ps[i].trainable) to += size;
    }
    if (from != oldState.size() || to != state.size())
        return Error(ErrorCode::Internal, "the optimizer state of stage \"" + next.name + "\" does not have the expected size");
    if (!state.empty()) KILN_TRY(m_backend->loadOptimizerState(state.data()));
    m_backend->setIterations(oldIterations);
    return {};
}

std::pair<int64_t, int64_t> Trainer::shard(int64_t size) const {
    if (!m_group) return {0, size};
    const int64_t k = m_group->size(), r = m_group->rank();
    return {size * r / k, size * (r + 1) / k};
}

Result<double> Trainer::reduceStep(double localLossSum, const std::vector<std::vector<std::unique_ptr<Metric>>>& local) {
    size_t n = 1;
    for (const auto& ms : local)
        for (const auto& m : ms) n += m->numCounts();
    m_groupSums.resize(n);
    m_groupSums[0] = localLossSum;
    size_t at = 1;
    for (const auto& ms : local)
        for (const auto& m : ms) {
            m->readCounts(m_groupSums.data() + at);
            at += m->numCounts();
        }
    KILN_TRY(m_group->allReduceSum(m_groupSums.data(), static_cast<int64_t>(n)));
    at = 1;
    for (auto& ms : m_groupMetrics)
        for (auto& m : ms) {
            m->setCounts(std::span<const double>(m_groupSums.data() + at, m->numCounts()));
            at += m->numCounts();
        }
    return m_groupSums[0];
}

Status Trainer::agreeOn(EvalResult& r) {
    if (!m_group) return {};
    std::vector<double> v{r.loss};
    for (const auto& m : r.metrics) v.push_back(m.value);
    KILN_TRY(m_group->allReduceSum(v.data(), static_cast<int64_t>(v.size())));
    const double k = m_group->size();
    r.loss = v[0] / k;
    for (size_t i = 0; i < r.metrics.size(); ++i) r.metrics[i].value = v[i + 1] / k;
    return {};
}

TrainEvent Trainer::event(TrainEvent::Kind kind) const {
    TrainEvent e;
    e.kind = kind;
    e.epochs = m_config.epochs;
    e.epoch = m_pos.epoch;
    e.step = m_pos.step;
    e.globalStep = m_pos.globalStep;
    if (m_activeStage >= 0) {
        e.stage = m_activeStage;
        e.stageName = m_config.stages[static_cast<size_t>(m_activeStage)].name;
        e.stageStartStep = m_stageStartStep;
    }
    return e;
}

int64_t Trainer::trainSamples() const {
    return m_data.trainStream ? m_data.trainStream->samplesPerEpoch() : m_data.train.count();
}

exec::ParamStore* Trainer::parameters() {
    if (Status st = m_backend->pullParameters(); !st.ok()) return nullptr;
    m_paramsOnHost = true;
    return &m_params;
}

exec::ParamStore* Trainer::gradients() {
    if (!parameters()) return nullptr;
    if (Status st = m_backend->pullGradients(); !st.ok()) return nullptr;
    return &m_params;
}

std::vector<ParamHistogram> parameterHistograms(const exec::ParamStore& params, int buckets) {
    std::vector<ParamHistogram> out;
    out.reserve(params.params().size());
    for (const auto& p : params.params()) {
        const auto n = static_cast<size_t>(p.value.numel());
        ParamHistogram h;
        h.name = p.name;
        h.weights = io::Histogram::of(std::span<const float>(p.value.data<float>(), n), buckets);
        if (p.trainable) h.gradients = io::Histogram::of(std::span<const float>(p.grad.data<float>(), n), buckets);
        out.push_back(std::move(h));
    }
    return out;
}

Status Trainer::forEachCallback(const std::function<Status(Callback&)>& call) {
    Status first;
    for (auto& cb : m_callbacks) {
        Status st = call(*cb);
        if (!st.ok()) {
            first = st;
            break;
        }
    }
    if (m_paramsOnHost) {
        m_paramsOnHost = false;
        KILN_TRY(m_backend->pushParameters());
    }
    return first;
}

Status Trainer::bindColumns() {
    const auto& g = m_model.graph;
    // The training data's columns: name and per-sample shape.
    std::vector<std::pair<std::string, Shape>> columns;
    if (m_data.trainStream) {
        const auto& names = m_data.trainStream->outputNames();
        const auto& shapes = m_data.trainStream->outputShapes();
        for (size_t c = 0; c < names.size(); ++c) columns.emplace_back(names[c], shapes[c]);
    } else {
        for (const auto& c : m_data.train.columnData()) columns.emplace_back(c.name, c.sampleShape);
    }
    auto column = [&](const std::string& name) -> const Shape* {
        for (const auto& [n, shape] : columns)
            if (n == name) return &shape;
        return nullptr;
    };
    assignLossTermNames(m_config.losses);  // configs built in code may leave the names out
    std::set<std::string> targets;
    for (const auto& l : m_config.losses) targets.insert(l.target);
    for (int i : m_model.inputs) {
        const std::string& node = g.nodes[static_cast<size_t>(i)].name;
        std::string col;
        if (auto it = m_data.inputs.find(node); it != m_data.inputs.end()) {
            col = it->second;
        } else {
            std::vector<std::string> candidates;
            for (const auto& [name, shape] : columns)
                if (!targets.count(name)) candidates.push_back(name);
            if (m_model.inputs.size() == 1 && candidates.size() == 1) {
                col = candidates[0];
            } else if (column(node)) {
                col = node;
            } else {
                return configError("data.inputs", "does not say which data column feeds Input \"" + node + "\"");
            }
        }
        const Shape* c = column(col);
        if (!c) return configError("data.inputs." + node, "names column \"" + col + "\", which the data does not have");
        Shape want = m_model.nodes[static_cast<size_t>(i)].output.withoutFirst();
        if (c->numel() != want.numel())
            return Error(ErrorCode::ShapeMismatch, "Input \"" + node + "\" has shape " + want.toString() +
                                                       " but its data column \"" + col + "\" holds samples of shape " +
                                                       c->toString())
                .withNode(node)
                .with("reason", "data shape");
        m_inputColumns.push_back(col);
    }
    for (const auto& l : m_config.losses) {
        const Shape* c = column(l.target);
        if (!c) return configError("training.loss.target", "names column \"" + l.target + "\", which the data does not have");
        exec::LossSpec spec = l.spec;
        spec.targetShape = *c;
        m_losses.push_back(spec);
        int o = g.find(spec.output);
        size_t k = 0;
        while (k < m_model.outputs.size() && m_model.outputs[k] != o) ++k;
        if (k == m_model.outputs.size())
            return configError("training.loss.output", "names \"" + spec.output + "\", which is not a model output");
        m_lossOutput.push_back(k);
    }
    m_feed.resize(m_inputColumns.size() + m_losses.size());
    m_feedColumns.resize(m_feed.size());
    return {};
}

Result<exec::BatchRunner*> Trainer::runnerFor(int64_t batch, bool training) {
    return m_backend->runner(batch, training);
}

Status Trainer::loadBatch(exec::BatchRunner& runner, const data::InMemoryDataset& set,
                          std::span<const int64_t> indices) {
    size_t k = 0;
    for (size_t i = 0; i < m_inputColumns.size(); ++i, ++k) {
        m_feed[k] = runner.input(i);
        m_feedColumns[k] = set.column(m_inputColumns[i]);
    }
    for (size_t l = 0; l < m_losses.size(); ++l, ++k) {
        m_feed[k] = runner.target(l);
        m_feedColumns[k] = set.column(m_config.losses[l].target);
    }
    for (size_t c = 0; c < m_feed.size(); ++c) {
        const data::Column* col = m_feedColumns[c];
        if (!col) return Error(ErrorCode::DataError, "a data split lacks a column the model needs");
        const int64_t size = col->sampleSize();
        const float* src = col->values.data();
        float* dst = m_feed[c];
        for (size_t r = 0; r < indices.size(); ++r)
            std::memcpy(dst + static_cast<int64_t>(r) * size, src + indices[r] * size, static_cast<size_t>(size) * sizeof(float));
    }
    return {};
}

Status Trainer::loadBatch(exec::BatchRunner& runner, const data::Batch& batch, int64_t first) {
    // `expected`: the per-sample shape of the model's input buffer. Data of another size (pictures of
    // another size than the model's input, in other data than it was trained on) are refused,
    // naming the first file, before anything is copied.
    auto copy = [&](float* dst, const std::string& name, const std::optional<Shape>& expected) -> Status {
        const int c = batch.column(name);
        if (c < 0)
            return Error(ErrorCode::DataError, "a streamed batch lacks the column \"" + name + "\"")
                .with("field", "data")
                .with("column", name);
        const auto& column = batch.columns[static_cast<size_t>(c)];
        const size_t rowFloats = batch.size > 0 ? column.size() / static_cast<size_t>(batch.size) : 0;
        if (expected && batch.size > 0 && rowFloats != static_cast<size_t>(expected->numel())) {
            const std::string origin =
                static_cast<size_t>(first) < batch.origins.size() ? batch.origins[static_cast<size_t>(first)] : std::string();
            const std::string got = static_cast<size_t>(c) < batch.shapes.size() ? batch.shapes[static_cast<size_t>(c)].toString()
                                                                                 : std::to_string(rowFloats) + " values";
            const std::string reason = "column \"" + name + "\" is " + got + " per sample where the model's input takes " +
                                       expected->toString() + "; add a resize or crop transform, or use data of that size";
            Error e(ErrorCode::DataError, (origin.empty() ? std::string() : origin + ": ") + reason);
            if (!origin.empty()) e.withFile(origin).with("file", origin);
            return e.with("reason", reason).with("column", name);
        }
        std::memcpy(dst, column.data() + static_cast<size_t>(first) * rowFloats,
                    static_cast<size_t>(runner.batch()) * rowFloats * sizeof(float));
        return {};
    };
    for (size_t i = 0; i < m_inputColumns.size(); ++i) {
        const Shape& input = m_model.nodes[static_cast<size_t>(m_model.inputs[i])].output;
        const std::vector<int64_t> perSample(input.dims().begin() + 1, input.dims().end());
        KILN_TRY(copy(runner.input(i), m_inputColumns[i], Shape(perSample)));
    }
    for (size_t l = 0; l < m_losses.size(); ++l) KILN_TRY(copy(runner.target(l), m_config.losses[l].target, std::nullopt));
    return {};
}

Status Trainer::makeMetrics(std::vector<std::vector<std::unique_ptr<Metric>>>& out) const {
    out.clear();
    // One group per loss term; the metrics of an output live in the group of its first term.
    // With several terms, one more group holds each term's running loss.
    out.resize(m_losses.size() + (m_losses.size() > 1 ? 1 : 0));
    for (size_t l = 0; l < m_losses.size(); ++l) {
        if (std::find(m_lossOutput.begin(), m_lossOutput.begin() + static_cast<std::ptrdiff_t>(l), m_lossOutput[l]) !=
            m_lossOutput.begin() + static_cast<std::ptrdiff_t>(l))
            continue;
        const auto& loss = m_losses[l];
        bool fromLogits = loss.attrs.has("from_logits") && loss.attrs.getBool("from_logits");
        bool sparse = loss.type == "SparseCategoricalCrossentropy";
        for (const auto& name : m_config.metrics) {
            const auto plugin = m_config.pluginMetrics.find(name);
            if (plugin != m_config.pluginMetrics.end() || name.starts_with(ops::kPluginPrefix)) {
                const std::string type = plugin != m_config.pluginMetrics.end() ? plugin->second.type : name;
                const AttrMap attrs = plugin != m_config.pluginMetrics.end() ? plugin->second.attrs : AttrMap{};
                const Shape& predicted = m_model.nodes[static_cast<size_t>(m_model.outputs[m_lossOutput[l]])].output;
                const std::vector<int64_t> perSample(predicted.dims().begin() + 1, predicted.dims().end());
                KILN_ASSIGN(auto m, makePluginMetric(type, name, attrs, Shape(perSample), loss.targetShape));
                out[l].push_back(std::move(m));
                continue;
            }
            MetricOptions o;
            o.fromLogits = fromLogits;
            o.sparseTargets = sparse;
            std::string real = name;
            if (name == "accuracy" || name == "acc") {
                if (loss.type == "BinaryCrossentropy") real = "binary_accuracy";
                else if (sparse) real = "sparse_categorical_accuracy";
                else real = "accuracy";
            } else if (sparse && name == "top_k_categorical_accuracy") {
                real = "sparse_top_k_categorical_accuracy";
            }
            auto m = makeMetric(real, o);
            if (!m.ok()) {
                Error e = m.error();
                for (auto& [k, v] : e.params)
                    if (k == "field") v = "training.metrics";
                return e;
            }
            out[l].push_back(std::move(m.value()));
        }
    }
    if (out.size() > m_losses.size())
        for (const auto& l : m_config.losses) out.back().push_back(std::make_unique<LossTermMean>(l.name + "_loss"));
    return {};
}

Status Trainer::updateMetrics(exec::BatchRunner& runner, int64_t batch,
                              std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) {
    const size_t losses = std::min(metrics.size(), m_losses.size());
    for (size_t l = 0; l < losses; ++l) {
        if (metrics[l].empty()) continue;
        size_t o = m_lossOutput[l];
        int64_t width = runner.outputShape(o).numelFrom(1);
        KILN_ASSIGN(const float* out, runner.output(o));
        for (auto& m : metrics[l]) {
            m->update(out, runner.target(l), batch, width);
            KILN_TRY(m->status());
        }
    }
    if (metrics.size() > m_losses.size()) {
        const std::span<const float> values = runner.lossValues();
        auto& terms = metrics.back();
        for (size_t t = 0; t < terms.size() && t < values.size(); ++t)
            static_cast<LossTermMean&>(*terms[t]).add(static_cast<double>(values[t]), batch);
    }
    return {};
}

Status Trainer::metricStatus(const std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) {
    for (const auto& group : metrics)
        for (const auto& m : group) KILN_TRY(m->status());
    return {};
}

std::vector<MetricValue> Trainer::metricValues(const std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) const {
    std::vector<MetricValue> out;
    const std::set<size_t> outputs(m_lossOutput.begin(), m_lossOutput.end());
    const size_t losses = std::min(metrics.size(), m_losses.size());
    for (size_t l = 0; l < losses; ++l)
        for (size_t k = 0; k < metrics[l].size(); ++k) {
            std::string name = m_config.metrics[k];
            if (outputs.size() > 1) name = m_losses[l].output + "_" + name;
            out.push_back({name, metrics[l][k]->result()});
        }
    if (metrics.size() > m_losses.size())
        for (const auto& m : metrics.back()) out.push_back({m->name(), m->result()});
    return out;
}

Result<EvalResult> Trainer::evaluate(const data::InMemoryDataset& set, const EvalObserver& observer) {
    return evaluateImpl(&set, nullptr, observer);
}

Result<EvalResult> Trainer::evaluate(data::BatchStream& stream, const EvalObserver& observer) {
    return evaluateImpl(nullptr, &stream, observer);
}

Result<EvalResult> Trainer::evaluateImpl(const data::InMemoryDataset* set, data::BatchStream* stream,
                                         const EvalObserver& observer) {
    EvalResult r;
    std::vector<std::vector<std::unique_ptr<Metric>>> metrics;
    KILN_TRY(makeMetrics(metrics));
    const int64_t b = m_config.batchSize;
    std::vector<int64_t> idx(static_cast<size_t>(b));
    std::vector<std::string> rowOrigins;  // in-memory data with source lines: this batch's
    double lossSum = 0;
    const auto& first = m_losses.front();
    const bool sparse = first.type == "SparseCategoricalCrossentropy";
    if (sparse || first.type == "CategoricalCrossentropy" || first.type == "BinaryCrossentropy") {
        int64_t width = m_model.nodes[static_cast<size_t>(m_model.outputs[m_lossOutput.front()])].output.numelFrom(1);
        bool fromLogits = first.attrs.has("from_logits") && first.attrs.getBool("from_logits");
        r.confusion.emplace(width == 1 ? 2 : width, sparse, 0.5, fromLogits);
    }
    // Evaluation sees the same samples in the same order every time (epoch 0 of its pipeline).
    if (stream) KILN_TRY(stream->startEpoch(0));
    int64_t n = 0;
    for (int64_t start = 0;; start += b) {
        int64_t size = 0;
        exec::BatchRunner* runner = nullptr;
        if (stream) {
            KILN_ASSIGN(bool more, stream->next(m_batch));
            if (!more) break;
            size = m_batch.size;
            KILN_ASSIGN(runner, runnerFor(size, false));
            KILN_TRY(loadBatch(*runner, m_batch));
        } else {
            if (start >= set->count()) break;
            size = std::min(b, set->count() - start);
            std::iota(idx.begin(), idx.begin() + size, start);
            KILN_ASSIGN(runner, runnerFor(size, false));
            KILN_TRY(loadBatch(*runner, *set, std::span<const int64_t>(idx.data(), static_cast<size_t>(size))));
        }
        KILN_TRY(runner->forward());
        KILN_ASSIGN(double loss, runner->totalLoss());
        lossSum += loss * static_cast<double>(size);
        n += size;
        KILN_TRY(updateMetrics(*runner, size, metrics));
        if (r.confusion) {
            size_t o = m_lossOutput.front();
            KILN_ASSIGN(const float* out, runner->output(o));
            KILN_TRY(r.confusion->update(out, runner->target(0), size, runner->outputShape(o).numelFrom(1)));
        }
        if (observer) {
            const size_t o = m_lossOutput.front();
            EvalBatch seen;
            seen.size = size;
            KILN_ASSIGN(seen.outputs, runner->output(o));
            seen.outputWidth = runner->outputShape(o).numelFrom(1);
            seen.targets = runner->target(0);
            seen.targetWidth = m_losses.front().targetShape.numel();
            seen.sourceIndices = stream ? &m_batch.indices : nullptr;
            if (stream) {
                seen.origins = &m_batch.origins;
            } else if (set->hasSourceLines()) {
                rowOrigins.resize(static_cast<size_t>(size));
                for (int64_t i = 0; i < size; ++i) rowOrigins[static_cast<size_t>(i)] = set->sourceOf(start + i);
                seen.origins = &rowOrigins;
            }
            seen.firstRow = stream ? 0 : start;
            for (size_t k = 0; k < m_model.inputs.size(); ++k) seen.inputs.push_back(runner->input(k));
            KILN_TRY(observer(seen));
        }
    }
    r.samples = n;
    r.loss = n > 0 ? lossSum / static_cast<double>(n) : 0.0;
    r.metrics = metricValues(metrics);
    KILN_TRY(metricStatus(metrics));
    return r;
}

exec::Plan* Trainer::trainPlan() {
    return exec::cpuPlan(*m_backend, m_config.batchSize, true);
}

Status Trainer::stepOnce(int64_t globalStep) {
    int64_t b = m_config.batchSize;
    exec::BatchRunner* runner = nullptr;
    if (m_data.trainStream) {
        KILN_TRY(m_data.trainStream->startEpoch(1));
        KILN_ASSIGN(bool more, m_data.trainStream->next(m_batch));
        if (!more) return configError("data.train", "holds no samples");
        KILN_ASSIGN(runner, runnerFor(m_batch.size, true));
        KILN_TRY(loadBatch(*runner, m_batch));
    } else {
        b = std::min(b, m_data.train.count());
        if (static_cast<int64_t>(m_firstBatch.size()) != b) {
            m_firstBatch.resize(static_cast<size_t>(b));
            std::iota(m_firstBatch.begin(), m_firstBatch.end(), 0);
        }
        KILN_ASSIGN(runner, runnerFor(b, true));
        KILN_TRY(loadBatch(*runner, m_data.train, m_firstBatch));
    }
    KILN_ASSIGN(bool applied, runner->trainStep(static_cast<uint64_t>(globalStep), m_config.schedule.lrAt(globalStep)));
    (void)applied;
    return {};
}

Result<double> Trainer::stepWithRate(double lr) {
    exec::BatchRunner* runner = nullptr;
    if (m_data.trainStream) {
        bool more = false;
        if (m_probeEpoch > 0) {
            KILN_ASSIGN(more, m_data.trainStream->next(m_batch));
        }
        if (!more) {  // the first step, or the end of an epoch: the next one
            KILN_TRY(m_data.trainStream->startEpoch(++m_probeEpoch));
            KILN_ASSIGN(more, m_data.trainStream->next(m_batch));
            if (!more) return configError("data.train", "holds no samples");
        }
        KILN_ASSIGN(runner, runnerFor(m_batch.size, true));
        KILN_TRY(loadBatch(*runner, m_batch));
    } else {
        const int64_t n = m_data.train.count();
        if (n == 0) return configError("data.train", "holds no samples");
        if (static_cast<int64_t>(m_probeOrder.size()) != n) {
            m_probeOrder.resize(static_cast<size_t>(n));
            std::iota(m_probeOrder.begin(), m_probeOrder.end(), 0);
            std::mt19937_64 rng(m_config.seed);
            std::shuffle(m_probeOrder.begin(), m_probeOrder.end(), rng);
            m_probeCursor = 0;
        }
        const int64_t b = std::min(m_config.batchSize, n);
        m_probeBatch.resize(static_cast<size_t>(b));
        for (int64_t k = 0; k < b; ++k) m_probeBatch[static_cast<size_t>(k)] = m_probeOrder[static_cast<size_t>((m_probeCursor + k) % n)];
        m_probeCursor = (m_probeCursor + b) % n;
        KILN_ASSIGN(runner, runnerFor(b, true));
        KILN_TRY(loadBatch(*runner, m_data.train, m_probeBatch));
    }
    KILN_ASSIGN(bool applied, runner->trainStep(m_probeSteps++, lr));
    (void)applied;  // a skipped float16 update still measured the loss
    return runner->totalLoss();
}

double Trainer::learningRate() const {
    if (m_lrOverride) return *m_lrOverride;
    double lr = m_config.schedule.lrAt(m_pos.globalStep);
    if (m_activeStage >= 0) {
        const TrainingStage& st = m_config.stages[static_cast<size_t>(m_activeStage)];
        if (st.lr) lr = m_config.schedule.initial > 0 ? lr * (*st.lr / m_config.schedule.initial) : *st.lr;
        else lr *= st.lrFactor;
    }
    return lr;
}

void Trainer::requestStop(const std::string& reason) {
    if (!m_stopRequested) m_stopReason = reason;
    m_stopRequested = true;
}

void Trainer::requestStateSave(const std::string& dir) {
    if (std::find(m_pendingSaves.begin(), m_pendingSaves.end(), dir) == m_pendingSaves.end()) m_pendingSaves.push_back(dir);
}

Status Trainer::addConfiguredCallbacks(const CallbackContext& ctx) {
    for (size_t i = 0; i < m_config.callbacks.size(); ++i) {
        KILN_ASSIGN(auto cb, makeCallback(m_config.callbacks[i], "training.callbacks[" + std::to_string(i) + "]", ctx));
        // Callbacks that only write files have nothing to do on a read-only replica.
        const std::string type = cb->type();
        if (ctx.readOnly && (type == "ModelCheckpoint" || type == "CSVLogger" || type == "TensorBoard")) continue;
        m_callbacks.push_back(std::move(cb));
    }
    return {};
}

Status Trainer::runPendingSaves(const std::function<void(const TrainEvent&)>& emit) {
    auto dirs = std::move(m_pendingSaves);
    m_pendingSaves.clear();
    if (m_group && m_group->rank() != 0) return {};  // replica 0 writes the run's states
    for (const auto& d : dirs) {
        TrainEvent e = event(TrainEvent::Kind::SavingState);
        e.message = d;
        emit(e);
        KILN_TRY(saveState(d));
    }
    return {};
}

Status Trainer::endCallbacks(TrainEndReason reason) {
    Status first;
    for (auto& cb : m_callbacks) {
        Status st = cb->onTrainEnd(*this, reason);
        if (!st.ok() && first.ok()) first = st;
    }
    if (m_paramsOnHost) {  // e.g. EarlyStopping restored the best weights
        m_paramsOnHost = false;
        Status st = m_backend->pushParameters();
        if (!st.ok() && first.ok()) first = st;
    }
    return first;
}

Result<bool> Trainer::drainCommands(const std::function<void(const TrainEvent&)>& emit, const std::atomic<bool>* cancel,
                                    FitResult& result) {
    if (!m_queue) return false;
    bool paused = false;
    for (;;) {
        std::optional<TrainCommand> c = paused ? m_queue->waitPop(std::chrono::milliseconds(50)) : m_queue->tryPop();
        if (!c) {
            if (!paused) return false;
            if (cancel && cancel->load()) return false;  // the cancel flag ends a pause too
            continue;
        }
        TrainEvent e = event(TrainEvent::Kind::Step);  // the kind is set below
        e.requestId = c->requestId;
        switch (c->kind) {
        case TrainCommand::Kind::Start: break;
        case TrainCommand::Kind::Pause:
            if (!paused) {
                paused = true;
                e.kind = TrainEvent::Kind::Paused;
                emit(e);
            }
            break;
        case TrainCommand::Kind::Resume:
            if (paused) {
                paused = false;
                e.kind = TrainEvent::Kind::Resumed;
                emit(e);
                return false;
            }
            break;
        case TrainCommand::Kind::SetLearningRate:
            if (!(c->learningRate >= 0) || !std::isfinite(c->learningRate)) break;
            setLearningRate(c->learningRate);
            e.kind = TrainEvent::Kind::LearningRateChanged;
            e.learningRate = c->learningRate;
            emit(e);
            break;
        case TrainCommand::Kind::Stop:
            result.stopped = true;
            result.cancelled = true;
            if (!m_stopStateDir.empty()) {
                requestStateSave(m_stopStateDir);
                KILN_TRY(runPendingSaves(emit));
                result.stopStateDir = m_stopStateDir;
                m_lastCheckpoint = m_stopStateDir;
            }
            e.kind = TrainEvent::Kind::Stopped;
            e.message = m_stopStateDir;
            emit(e);
            return true;
        }
    }
}

Result<FitResult> Trainer::fit(const std::function<void(const TrainEvent&)>& onEvent, const std::atomic<bool>* cancel) {
    FitResult result;
    const auto& train = m_data.train;
    data::BatchStream* const stream = m_data.trainStream.get();
    const int64_t n = stream ? stream->samplesPerEpoch() : train.count();
    const int64_t b = m_config.batchSize;
    // Record files do not know their length before the first epoch has read them.
    int64_t steps = stream ? stream->batchesPerEpoch() : (n + b - 1) / b;
    std::vector<std::vector<std::unique_ptr<Metric>>> metrics;
    KILN_TRY(makeMetrics(metrics));
    auto emit = [&](const TrainEvent& e) {
        if (onEvent) onEvent(e);
    };
    m_stopRequested = false;
    m_stopReason.clear();
    m_pendingSaves.clear();
    // Each fit() runs config().epochs epochs unless it continues from a restored state.
    // Weights set on the host before fit() (loaded, or changed by the caller) are what trains.
    // Every replica starts from replica 0's weights (initialised or loaded there).
    if (m_group)
        for (auto& p : m_params.params()) KILN_TRY(m_group->broadcast(p.value.data<float>(), p.value.numel(), 0));
    KILN_TRY(m_backend->pushParameters());
    m_pos = TrainPosition{1, 0, m_backend->iterations()};
    m_history.clear();
    m_epochLossSum = 0;
    m_epochSeen = 0;
    KILN_TRY(forEachCallback([&](Callback& cb) { return cb.onTrainBegin(*this); }));
    if (!m_restoreFrom.empty()) {
        std::string dir = std::move(m_restoreFrom);
        m_restoreFrom.clear();
        KILN_TRY(loadState(dir));
        result.resumedFromStep = m_pos.globalStep;
        m_lastCheckpoint = dir;
    }
    result.history = m_history;
    // Fails the run: callbacks see Failed, the error goes to the caller.
    auto failWith = [&](Error e) -> Result<FitResult> {
        (void)endCallbacks(TrainEndReason::Failed);
        return e;
    };

    TrainEvent begin = event(TrainEvent::Kind::Begin);
    begin.stepsPerEpoch = std::max<int64_t>(steps, 0);
    begin.learningRate = learningRate();
    emit(begin);

    const auto fitStart = Clock::now();
    double trainSeconds = 0;
    int64_t trainedSamples = 0;
    for (int epoch = m_pos.epoch; epoch <= m_config.epochs; ++epoch) {
        std::vector<int64_t> order;
        if (stream) {
            // The pipeline shuffles (data.shuffle_buffer), keyed by the seed and the epoch.
        } else if (m_config.shuffle) {
            order = data::shuffledIndices(n, m_config.seed, static_cast<uint64_t>(epoch));
        } else {
            order.resize(static_cast<size_t>(n));
            std::iota(order.begin(), order.end(), 0);
        }
        if (const int stage = m_config.stageOfEpoch(epoch); stage >= 0 && stage != m_activeStage) {
            if (Status st = enterStage(stage); !st.ok()) return failWith(st.error());
        }
        for (auto* set : {&metrics, &m_groupMetrics})
            for (auto& ms : *set)
                for (auto& m : ms) m->reset();
        // A run restored in the middle of an epoch continues its loss mean; the other training
        // metrics of that epoch cover the steps after the restore.
        const int64_t firstStep = m_pos.epoch == epoch ? (steps >= 0 ? std::min(m_pos.step, steps) : m_pos.step) : 0;
        if (firstStep == 0) {
            m_epochLossSum = 0;
            m_epochSeen = 0;
            if (Status st = forEachCallback([&](Callback& cb) { return cb.onEpochBegin(*this, epoch); }); !st.ok())
                return failWith(st.error());
        }
        if (stream) {
            // The batches of an epoch depend only on the seed and the epoch: a run restored in
            // the middle of one reads past the batches it had already trained on.
            if (Status st = stream->startEpoch(epoch); !st.ok()) return failWith(st.error());
            for (int64_t s = 0; s < firstStep; ++s) {
                auto more = stream->next(m_batch);
                if (!more.ok()) return failWith(more.error());
                if (!*more) break;
            }
        }
        m_pos.epoch = epoch;
        const int64_t seenBefore = m_epochSeen;
        const auto epochStart = Clock::now();
        int64_t s = firstStep;
        for (; steps < 0 || s < steps; ++s) {
            auto stop = drainCommands(emit, cancel, result);
            if (!stop.ok()) return failWith(stop.error());
            if (*stop) break;
            if (cancel && cancel->load()) {
                result.cancelled = true;
                break;
            }
            int64_t size = 0;
            exec::BatchRunner* runner = nullptr;
            if (stream) {
                auto more = stream->next(m_batch);
                if (!more.ok()) return failWith(more.error());
                if (!*more) break;  // fewer batches than announced: unreadable samples left out
                size = m_batch.size;
                const auto [first, last] = shard(size);
                if (last == first)
                    return failWith(Error(ErrorCode::DataError, "a batch of " + std::to_string(size) +
                                                                    " samples cannot give each of the " +
                                                                    std::to_string(m_group->size()) +
                                                                    " processes a sample")
                                        .with("field", "training.batch_size"));
                auto r = runnerFor(last - first, true);
                if (!r.ok()) return failWith(r.error());
                runner = *r;
                if (Status st = loadBatch(*runner, m_batch, first); !st.ok()) return failWith(st.error());
            } else {
                int64_t start = s * b;
                size = std::min(b, n - start);
                const auto [first, last] = shard(size);  // this replica's rows of the global batch
                auto r = runnerFor(last - first, true);
                if (!r.ok()) return failWith(r.error());
                runner = *r;
                std::span<const int64_t> idx(order.data() + start + first, static_cast<size_t>(last - first));
                if (Status st = loadBatch(*runner, train, idx); !st.ok()) return failWith(st.error());
            }
            const double lr = learningRate();
            auto applied = runner->trainStep(static_cast<uint64_t>(m_pos.globalStep), lr);
            if (!applied.ok()) return failWith(applied.error());
            if (!*applied) ++result.skippedSteps;
            ++m_pos.globalStep;
            m_pos.step = s + 1;
            auto loss = runner->totalLoss();
            if (!loss.ok()) return failWith(loss.error());
            double batchLoss = *loss;
            if (Status st = updateMetrics(*runner, runner->batch(), metrics); !st.ok()) return failWith(st.error());
            if (m_group) {  // the whole global batch's loss and metrics
                auto sum = reduceStep(batchLoss * static_cast<double>(runner->batch()), metrics);
                if (!sum.ok()) return failWith(sum.error());
                batchLoss = *sum / static_cast<double>(size);
            }
            m_epochLossSum += batchLoss * static_cast<double>(size);
            m_epochSeen += size;
            const auto running = metricValues(m_group ? m_groupMetrics : metrics);
            if (Status st = metricStatus(m_group ? m_groupMetrics : metrics); !st.ok()) return failWith(st.error());
            if (onEvent) {
                TrainEvent e = event(TrainEvent::Kind::Step);  // at (epoch, s + 1)
                e.stepsPerEpoch = steps;
                e.loss = m_epochLossSum / static_cast<double>(m_epochSeen);
                e.metrics = running;
                e.learningRate = lr;
                double el = secondsSince(epochStart);
                e.elapsedSeconds = el;
                const int64_t seenNow = m_epochSeen - seenBefore;
                e.samplesPerSecond = el > 0 ? static_cast<double>(seenNow) / el : 0;
                if (steps >= 0) {
                    int64_t remaining = (steps - s - 1) + (m_config.epochs - epoch) * steps;
                    e.etaSeconds = el / static_cast<double>(s + 1 - firstStep) * static_cast<double>(remaining);
                } else {
                    e.stepsPerEpoch = 0;  // not known before the first epoch ends
                }
                if (stream) {
                    const auto ps = stream->stats();
                    e.inputWaitFraction = ps.waitFraction;
                    e.badSamples = stream->badSampleCount();
                }
                e.deviceMemory = m_backend->memory();
                emit(e);
            }
            if (!m_callbacks.empty()) {
                BatchLogs bl;
                bl.epoch = epoch;
                bl.step = s + 1;
                bl.globalStep = m_pos.globalStep;
                bl.batchLoss = batchLoss;
                bl.logs["loss"] = m_epochLossSum / static_cast<double>(m_epochSeen);
                for (const auto& m : running) bl.logs[m.name] = m.value;
                bl.logs["learning_rate"] = lr;
                if (Status st = forEachCallback([&](Callback& cb) { return cb.onBatchEnd(*this, bl); }); !st.ok())
                    return failWith(st.error());
                if (Status st = runPendingSaves(emit); !st.ok()) return failWith(st.error());
            }
            if (m_stopRequested) break;  // as Keras: stop_training is checked after every batch
        }
        // A streamed epoch's real length: unknown before (record files), or shorter than announced
        // when unreadable files were left out.
        if (stream && !result.cancelled && !m_stopRequested) steps = s;
        double epochSeconds = secondsSince(epochStart);
        trainSeconds += epochSeconds;
        const int64_t seen = m_epochSeen;
        trainedSamples += seen - seenBefore;
        if (result.stopped) break;  // the state is saved at this step; no epoch-end processing
        if (result.cancelled && seen == 0) break;
        EpochRecord rec;
        rec.epoch = epoch;
        rec.stage = m_activeStage;
        rec.train.loss = seen ? m_epochLossSum / static_cast<double>(seen) : 0;
        rec.train.metrics = metricValues(m_group ? m_groupMetrics : metrics);
        if (Status st = metricStatus(m_group ? m_groupMetrics : metrics); !st.ok()) return failWith(st.error());
        rec.train.samples = seen;
        rec.seconds = epochSeconds;
        rec.samplesPerSecond = epochSeconds > 0 ? static_cast<double>(seen - seenBefore) / epochSeconds : 0;
        if (m_data.validationStream || (!stream && m_data.validation)) {
            auto v = m_data.validationStream ? evaluate(*m_data.validationStream) : evaluate(*m_data.validation);
            if (!v.ok()) return failWith(v.error());
            rec.validation = *v;
            if (Status st = agreeOn(*rec.validation); !st.ok()) return failWith(st.error());
        }
        // The position moves to the next epoch before the callbacks run, so a state saved at this
        // epoch end resumes with the next one.
        m_pos.epoch = epoch + 1;
        m_pos.step = 0;
        m_epochLossSum = 0;
        m_epochSeen = 0;
        result.history.push_back(rec);
        m_history = result.history;
        TrainEvent e = event(TrainEvent::Kind::Epoch);
        e.epoch = epoch;  // the position has moved on to the next epoch already
        e.step = steps;
        e.stepsPerEpoch = steps;
        e.loss = rec.train.loss;
        e.metrics = rec.train.metrics;
        e.learningRate = learningRate();
        e.samplesPerSecond = rec.samplesPerSecond;
        e.elapsedSeconds = secondsSince(fitStart);
        e.etaSeconds = epochSeconds * (m_config.epochs - epoch);
        e.validation = rec.validation;
        if (stream) {
            e.inputWaitFraction = stream->stats().waitFraction;
            e.badSamples = stream->badSampleCount();
        }
        e.deviceMemory = m_backend->memory();
        if (m_config.histogramFreq > 0 && epoch % m_config.histogramFreq == 0 && seen > seenBefore) {
            // Read only: the host copies are not sent back to the device.
            if (Status st = m_backend->pullParameters(); !st.ok()) return failWith(st.error());
            if (Status st = m_backend->pullGradients(); !st.ok()) return failWith(st.error());
            e.histograms = parameterHistograms(m_params);
        }
        emit(e);
        if (!result.cancelled && !m_callbacks.empty()) {
            Logs logs;
            logs["loss"] = rec.train.loss;
            for (const auto& m : rec.train.metrics) logs[m.name] = m.value;
            if (rec.validation) {
                logs["val_loss"] = rec.validation->loss;
                for (const auto& m : rec.validation->metrics) logs["val_" + m.name] = m.value;
            }
            logs["learning_rate"] = learningRate();
            // Stage boundaries in TensorBoard ("epoch_stage") and CSV logs.
            if (m_activeStage >= 0) logs["stage"] = m_activeStage;
            if (Status st = forEachCallback([&](Callback& cb) { return cb.onEpochEnd(*this, epoch, logs); }); !st.ok())
                return failWith(st.error());
            if (Status st = runPendingSaves(emit); !st.ok()) return failWith(st.error());
        }
        if (result.cancelled) break;
        if (m_stopRequested) {
            result.earlyStopped = true;
            result.stopReason = m_stopReason;
            break;
        }
    }
    const TrainEndReason reason = result.stopped     ? TrainEndReason::UserStopped
                                  : result.cancelled ? TrainEndReason::UserStopped
                                  : result.earlyStopped ? TrainEndReason::EarlyStopped
                                                        : TrainEndReason::Completed;
    KILN_TRY(endCallbacks(reason));
    if (!result.cancelled && (m_data.testStream || (!stream && m_data.test))) {
        KILN_ASSIGN(auto t, m_data.testStream ? evaluate(*m_data.testStream) : evaluate(*m_data.test));
        KILN_TRY(agreeOn(t));
        result.test = t;
    }
    // The trained weights on the host, for the caller's checkpoints and exports.
    KILN_TRY(m_backend->pullParameters());
    if (stream) result.badSamples = stream->badSamples();
    result.seconds = secondsSince(fitStart);
    result.samplesPerSecond = trainSeconds > 0 ? static_cast<double>(trainedSamples) / trainSeconds : 0;
    TrainEvent end = event(TrainEvent::Kind::End);
    end.elapsedSeconds = result.seconds;
    end.message = result.stopReason;
    emit(end);
    return result;
}

// ---------------------------------------------------------------------------------------------
// Full training state

namespace {

constexpr const char* kStateFormat = "kiln-train-state";
constexpr int kStateVersion = 1;

json evalToJson(const EvalResult& r) {
    json m = json::object();
    for (const auto& v : r.metrics) m[v.name] = v.value;
    return {{"loss", r.loss}, {"metrics", m}, {"samples", r.samples}};
}

EvalResult evalFromJson(const json& j) {
    EvalResult r;
    r.loss = j.at("loss").get<double>();
    r.samples = j.at("samples").get<int64_t>();
    for (auto& [k, v] : j.at("metrics").items()) r.metrics.push_back({k, v.get<double>()});
    return r;
}

Error stateError(const std::string& dir, const std::string& why) {
    return Error(ErrorCode::DataError, "training state " + dir + ": " + why).withFile(dir).with("file", dir).with("reason", why);
}

}  // namespace

bool Trainer::hasState(const std::string& dir) {
    namespace fs = std::filesystem;
    return fs::exists(fs::path(dir) / "state.json") || fs::exists(fs::path(dir + ".old") / "state.json");
}

Status Trainer::saveState(const std::string& dir) {
    namespace fs = std::filesystem;
    const std::string tmp = dir + ".tmp", old = dir + ".old";
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec)
        return Error(ErrorCode::FileWrite, "cannot create " + tmp + ": " + ec.message()).withFile(tmp).with("path", tmp).with("reason", ec.message());
    KILN_TRY(m_backend->pullParameters());
    KILN_TRY(saveWeights(m_params, tmp + "/weights.safetensors", {{"step", std::to_string(m_pos.globalStep)}}));
    std::vector<float> opt(static_cast<size_t>(m_backend->optimizerStateSize()));
    if (!opt.empty()) KILN_TRY(m_backend->saveOptimizerState(opt.data()));
    KILN_TRY(io::saveSafetensors(tmp + "/optimizer.safetensors",
                                 {{"state", Tensor::fromVector(Shape{static_cast<int64_t>(opt.size())}, opt)}},
                                 {{"type", m_config.optimizer.type}}));
    json hist = json::array();
    for (const auto& h : m_history) {
        json e = {{"epoch", h.epoch}, {"train", evalToJson(h.train)}, {"seconds", h.seconds}, {"samples_per_s", h.samplesPerSecond}};
        if (h.stage >= 0) e["stage"] = h.stage;
        if (h.validation) e["validation"] = evalToJson(*h.validation);
        hist.push_back(std::move(e));
    }
    json cbs = json::array();
    for (const auto& cb : m_callbacks) {
        KILN_ASSIGN(json s, cb->saveState(tmp));
        cbs.push_back({{"type", cb->type()}, {"state", s}});
    }
    json st = {{"format", kStateFormat},
               {"version", kStateVersion},
               {"seed", m_config.seed},
               {"batch_size", m_config.batchSize},
               {"train_samples", trainSamples()},
               {"optimizer", m_config.optimizer.type},
               {"optimizer_state_size", m_backend->optimizerStateSize()},
               {"iterations", m_backend->iterations()},
               {"global_step", m_pos.globalStep},
               {"epoch", m_pos.epoch},
               {"step_in_epoch", m_pos.step},
               {"epoch_loss_sum", m_epochLossSum},
               {"epoch_seen", m_epochSeen},
               {"lr_override", m_lrOverride ? json(*m_lrOverride) : json()},
               {"last_checkpoint", m_lastCheckpoint},
               {"history", hist},
               {"callbacks", cbs},
               {"backend", m_backend->extraState()}};
    // The stage the optimizer state belongs to (at an epoch end that closes a stage, still the
    // old one: the next epoch enters the new stage as an uninterrupted run would).
    if (m_activeStage >= 0) {
        st["stage"] = m_activeStage;
        st["stage_start_step"] = m_stageStartStep;
    }
    KILN_TRY(io::writeFileAtomic(tmp + "/state.json", st.dump(1) + "\n"));
    // Swap folders: the previous state stays as <dir>.old until the new one is in place.
    fs::remove_all(old, ec);
    if (fs::exists(dir)) fs::rename(dir, old, ec);
    if (ec) return Error(ErrorCode::FileWrite, "cannot replace " + dir + ": " + ec.message()).withFile(dir).with("path", dir).with("reason", ec.message());
    fs::rename(tmp, dir, ec);
    if (ec) return Error(ErrorCode::FileWrite, "cannot replace " + dir + ": " + ec.message()).withFile(dir).with("path", dir).with("reason", ec.message());
    fs::remove_all(old, ec);
    return {};
}

Status Trainer::restoreFrom(const std::string& dir) {
    if (!hasState(dir))
        return Error(ErrorCode::FileNotFound, "no training state to resume from in " + dir).withFile(dir).with("path", dir);
    m_restoreFrom = dir;
    return {};
}

Status Trainer::loadState(const std::string& requested) {
    namespace fs = std::filesystem;
    // A crash between the two renames of saveState leaves only <dir>.old.
    std::string dir = requested;
    if (!fs::exists(fs::path(dir) / "state.json") && fs::exists(fs::path(dir + ".old") / "state.json")) dir += ".old";
    auto text = data::readWholeFile(dir + "/state.json");
    if (!text.ok()) return text.error();
    auto parsed = parseJsonChecked(*text, JsonLimits{}, dir + "/state.json");
    if (!parsed) return stateError(dir, "state.json is not valid JSON: " + parsed.error().toString());
    json st = std::move(parsed.value());
    try {
        if (st.value("format", "") != kStateFormat || st.value("version", 0) != kStateVersion)
            return stateError(dir, "state.json is not a Kiln training state of version " + std::to_string(kStateVersion));
        auto mustMatch = [&](const char* key, const json& want, const std::string& what) -> Status {
            if (st.at(key) != want)
                return Error(ErrorCode::ConfigError, "the training state in " + dir + " was made with " + what + " " +
                                                         st.at(key).dump() + ", but the run uses " + want.dump())
                    .withFile(dir)
                    .with("field", std::string("training.") + key)
                    .with("reason", "differs from the saved state");
            return {};
        };
        KILN_TRY(mustMatch("seed", m_config.seed, "seed"));
        KILN_TRY(mustMatch("batch_size", m_config.batchSize, "batch size"));
        KILN_TRY(mustMatch("train_samples", trainSamples(), "a training set of"));
        KILN_TRY(mustMatch("optimizer", m_config.optimizer.type, "optimizer"));
        const int stage = st.value("stage", -1);
        if ((stage >= 0) != !m_config.stages.empty() || stage >= static_cast<int>(m_config.stages.size()))
            return Error(ErrorCode::ConfigError, "the training state in " + dir + " was saved in stage " + std::to_string(stage) +
                                                     ", which the run's training.stages do not have")
                .withFile(dir)
                .with("field", "training.stages")
                .with("reason", "differs from the saved state");
        if (stage >= 0 && stage != m_activeStage) KILN_TRY(buildStage(stage));
        m_stageStartStep = st.value("stage_start_step", int64_t{0});
        if (st.at("optimizer_state_size").get<int64_t>() != m_backend->optimizerStateSize())
            return stateError(dir, "the optimizer state does not fit this model");
        KILN_TRY(loadWeights(m_params, dir + "/weights.safetensors"));
        KILN_TRY(m_backend->pushParameters());
        KILN_ASSIGN(auto opt, io::loadSafetensors(dir + "/optimizer.safetensors"));
        const Tensor* os = opt.find("state");
        if (!os || os->numel() != m_backend->optimizerStateSize())
            return stateError(dir, "optimizer.safetensors does not fit this model");
        if (os->numel() > 0) KILN_TRY(m_backend->loadOptimizerState(os->data<float>()));
        m_backend->setIterations(st.at("iterations").get<int64_t>());
        if (st.contains("backend")) KILN_TRY(m_backend->loadExtraState(st.at("backend")));
        m_pos.globalStep = st.at("global_step").get<int64_t>();
        m_pos.epoch = st.at("epoch").get<int>();
        m_pos.step = st.at("step_in_epoch").get<int64_t>();
        m_epochLossSum = st.at("epoch_loss_sum").get<double>();
        m_epochSeen = st.at("epoch_seen").get<int64_t>();
        if (st.at("lr_override").is_null()) m_lrOverride.reset();
        else m_lrOverride = st.at("lr_override").get<double>();
        m_lastCheckpoint = st.value("last_checkpoint", std::string());
        m_history.clear();
        for (const auto& h : st.at("history")) {
            EpochRecord r;
            r.epoch = h.at("epoch").get<int>();
            r.train = evalFromJson(h.at("train"));
            if (h.contains("validation")) r.validation = evalFromJson(h.at("validation"));
            r.seconds = h.at("seconds").get<double>();
            r.samplesPerSecond = h.at("samples_per_s").get<double>();
            r.stage = h.value("stage", -1);
            m_history.push_back(std::move(r));
        }
        const json& cbs = st.at("callbacks");
        // Callback states are matched by position and type; a changed list keeps fresh states.
        for (size_t i = 0; i < m_callbacks.size() && i < cbs.size(); ++i) {
            if (cbs[i].at("type").get<std::string>() != m_callbacks[i]->type()) continue;
            if (cbs[i].at("state").is_null()) continue;
            KILN_TRY(m_callbacks[i]->loadState(cbs[i].at("state"), dir));
        }
    } catch (const json::exception& e) {
        return stateError(dir, std::string("state.json is incomplete: ") + e.what());
    }
    return {};
}

}  // namespace kiln::engine::train
