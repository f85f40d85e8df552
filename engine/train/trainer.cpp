// SPDX-License-Identifier: Apache-2.0
// Epoch loop, batching, evaluation and metrics.
#include "engine/train/trainer.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>

#include "engine/data/split.h"

namespace kiln::engine::train {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

Error configError(const std::string& field, const std::string& why) {
    return Error(ErrorCode::ConfigError, field + " " + why).with("field", field).with("reason", why);
}

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
                                                 DataBundle data, ThreadPool& pool) {
    std::unique_ptr<Trainer> t(new Trainer(model, config, std::move(data), pool));
    if (t->m_config.validationSplit > 0 && !t->m_data.validation) {
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
    if (t->m_data.train.count() == 0) return configError("data.train", "holds no samples");
    KILN_TRY(t->bindColumns());
    t->m_params = exec::ParamStore::create(t->m_model, t->m_config.seed);
    KILN_ASSIGN(auto opt, optim::Optimizer::create(t->m_config.optimizer));
    t->m_optimizer = std::make_unique<optim::Optimizer>(std::move(opt));
    for (auto& p : t->m_params.params())
        if (p.trainable)
            t->m_optimizer->addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel(), p.lrMultiplier,
                                         p.decay);
    KILN_ASSIGN(auto* plan, t->planFor(t->m_config.batchSize, true));
    (void)plan;
    return t;
}

Status Trainer::bindColumns() {
    const auto& g = m_model.graph;
    const auto& train = m_data.train;
    std::set<std::string> targets;
    for (const auto& l : m_config.losses) targets.insert(l.target);
    for (int i : m_model.inputs) {
        const std::string& node = g.nodes[static_cast<size_t>(i)].name;
        std::string col;
        if (auto it = m_data.inputs.find(node); it != m_data.inputs.end()) {
            col = it->second;
        } else {
            std::vector<std::string> candidates;
            for (const auto& c : train.columnData())
                if (!targets.count(c.name)) candidates.push_back(c.name);
            if (m_model.inputs.size() == 1 && candidates.size() == 1) {
                col = candidates[0];
            } else if (train.column(node)) {
                col = node;
            } else {
                return configError("data.inputs", "does not say which data column feeds Input \"" + node + "\"");
            }
        }
        const data::Column* c = train.column(col);
        if (!c) return configError("data.inputs." + node, "names column \"" + col + "\", which the data does not have");
        Shape want = m_model.nodes[static_cast<size_t>(i)].output.withoutFirst();
        if (c->sampleShape.numel() != want.numel())
            return Error(ErrorCode::ShapeMismatch, "Input \"" + node + "\" has shape " + want.toString() +
                                                       " but its data column \"" + col + "\" holds samples of shape " +
                                                       c->sampleShape.toString())
                .withNode(node)
                .with("reason", "data shape");
        m_inputColumns.push_back(col);
    }
    for (const auto& l : m_config.losses) {
        const data::Column* c = train.column(l.target);
        if (!c) return configError("training.loss.target", "names column \"" + l.target + "\", which the data does not have");
        exec::LossSpec spec = l.spec;
        spec.targetShape = c->sampleShape;
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

Result<exec::Plan*> Trainer::planFor(int64_t batch, bool training) {
    auto key = std::make_pair(batch, training);
    auto it = m_plans.find(key);
    if (it != m_plans.end()) return it->second.get();
    exec::CompileOptions o;
    o.batch = batch;
    o.training = training;
    o.losses = m_losses;
    o.seed = m_config.seed;
    KILN_ASSIGN(auto plan, exec::Plan::compile(m_model, m_params, o, *m_pool));
    exec::Plan* raw = plan.get();
    m_plans[key] = std::move(plan);
    return raw;
}

Status Trainer::loadBatch(exec::Plan& plan, const data::InMemoryDataset& set, std::span<const int64_t> indices) {
    size_t k = 0;
    for (size_t i = 0; i < m_inputColumns.size(); ++i, ++k) {
        m_feed[k] = plan.input(i);
        m_feedColumns[k] = set.column(m_inputColumns[i]);
    }
    for (size_t l = 0; l < m_losses.size(); ++l, ++k) {
        m_feed[k] = plan.target(l);
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

Status Trainer::makeMetrics(std::vector<std::vector<std::unique_ptr<Metric>>>& out) const {
    out.clear();
    out.resize(m_losses.size());
    for (size_t l = 0; l < m_losses.size(); ++l) {
        const auto& loss = m_losses[l];
        bool fromLogits = loss.attrs.has("from_logits") && loss.attrs.getBool("from_logits");
        bool sparse = loss.type == "SparseCategoricalCrossentropy";
        for (const auto& name : m_config.metrics) {
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
    return {};
}

void Trainer::updateMetrics(exec::Plan& plan, int64_t batch, std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) {
    for (size_t l = 0; l < metrics.size(); ++l) {
        size_t o = m_lossOutput[l];
        int64_t width = plan.outputShape(o).numelFrom(1);
        for (auto& m : metrics[l]) m->update(plan.output(o), plan.target(l), batch, width);
    }
}

std::vector<MetricValue> Trainer::metricValues(const std::vector<std::vector<std::unique_ptr<Metric>>>& metrics) const {
    std::vector<MetricValue> out;
    for (size_t l = 0; l < metrics.size(); ++l)
        for (size_t k = 0; k < metrics[l].size(); ++k) {
            std::string name = m_config.metrics[k];
            if (metrics.size() > 1) name = m_losses[l].output + "_" + name;
            out.push_back({name, metrics[l][k]->result()});
        }
    return out;
}

Result<EvalResult> Trainer::evaluate(const data::InMemoryDataset& set) {
    EvalResult r;
    std::vector<std::vector<std::unique_ptr<Metric>>> metrics;
    KILN_TRY(makeMetrics(metrics));
    const int64_t n = set.count();
    const int64_t b = m_config.batchSize;
    std::vector<int64_t> idx(static_cast<size_t>(b));
    double lossSum = 0;
    const auto& first = m_losses.front();
    const bool sparse = first.type == "SparseCategoricalCrossentropy";
    if (sparse || first.type == "CategoricalCrossentropy" || first.type == "BinaryCrossentropy") {
        int64_t width = m_model.nodes[static_cast<size_t>(m_model.outputs[m_lossOutput.front()])].output.numelFrom(1);
        bool fromLogits = first.attrs.has("from_logits") && first.attrs.getBool("from_logits");
        r.confusion.emplace(width == 1 ? 2 : width, sparse, 0.5, fromLogits);
    }
    for (int64_t start = 0; start < n; start += b) {
        int64_t size = std::min(b, n - start);
        std::iota(idx.begin(), idx.begin() + size, start);
        KILN_ASSIGN(exec::Plan * plan, planFor(size, false));
        KILN_TRY(loadBatch(*plan, set, std::span<const int64_t>(idx.data(), static_cast<size_t>(size))));
        KILN_TRY(plan->forward(0));
        lossSum += static_cast<double>(plan->totalLoss()) * static_cast<double>(size);
        updateMetrics(*plan, size, metrics);
        if (r.confusion) {
            size_t o = m_lossOutput.front();
            KILN_TRY(r.confusion->update(plan->output(o), plan->target(0), size, plan->outputShape(o).numelFrom(1)));
        }
    }
    r.samples = n;
    r.loss = n > 0 ? lossSum / static_cast<double>(n) : 0.0;
    r.metrics = metricValues(metrics);
    return r;
}

exec::Plan* Trainer::trainPlan() {
    auto it = m_plans.find({m_config.batchSize, true});
    return it == m_plans.end() ? nullptr : it->second.get();
}

Status Trainer::stepOnce(int64_t globalStep) {
    const int64_t b = std::min(m_config.batchSize, m_data.train.count());
    if (static_cast<int64_t>(m_firstBatch.size()) != b) {
        m_firstBatch.resize(static_cast<size_t>(b));
        std::iota(m_firstBatch.begin(), m_firstBatch.end(), 0);
    }
    KILN_ASSIGN(exec::Plan * plan, planFor(b, true));
    KILN_TRY(loadBatch(*plan, m_data.train, m_firstBatch));
    KILN_TRY(plan->trainStep(static_cast<uint64_t>(globalStep)));
    m_optimizer->step(m_config.schedule.lrAt(globalStep), *m_pool);
    return {};
}

Result<FitResult> Trainer::fit(const std::function<void(const TrainEvent&)>& onEvent, const std::atomic<bool>* cancel) {
    FitResult result;
    const auto& train = m_data.train;
    const int64_t n = train.count();
    const int64_t b = m_config.batchSize;
    const int64_t steps = (n + b - 1) / b;
    std::vector<std::vector<std::unique_ptr<Metric>>> metrics;
    KILN_TRY(makeMetrics(metrics));
    auto emit = [&](const TrainEvent& e) {
        if (onEvent) onEvent(e);
    };
    TrainEvent begin;
    begin.kind = TrainEvent::Kind::Begin;
    begin.epochs = m_config.epochs;
    begin.stepsPerEpoch = steps;
    emit(begin);

    const auto fitStart = Clock::now();
    double trainSeconds = 0;
    int64_t trainedSamples = 0;
    int64_t globalStep = m_optimizer->iterations();
    for (int epoch = 1; epoch <= m_config.epochs; ++epoch) {
        std::vector<int64_t> order;
        if (m_config.shuffle) {
            order = data::shuffledIndices(n, m_config.seed, static_cast<uint64_t>(epoch));
        } else {
            order.resize(static_cast<size_t>(n));
            std::iota(order.begin(), order.end(), 0);
        }
        for (auto& ms : metrics)
            for (auto& m : ms) m->reset();
        double lossSum = 0;
        int64_t seen = 0;
        const auto epochStart = Clock::now();
        for (int64_t s = 0; s < steps; ++s) {
            if (cancel && cancel->load()) {
                result.cancelled = true;
                break;
            }
            int64_t start = s * b;
            int64_t size = std::min(b, n - start);
            KILN_ASSIGN(exec::Plan * plan, planFor(size, true));
            std::span<const int64_t> idx(order.data() + start, static_cast<size_t>(size));
            KILN_TRY(loadBatch(*plan, train, idx));
            KILN_TRY(plan->trainStep(static_cast<uint64_t>(globalStep)));
            double lr = m_config.schedule.lrAt(globalStep);
            m_optimizer->step(lr, *m_pool);
            ++globalStep;
            lossSum += static_cast<double>(plan->totalLoss()) * static_cast<double>(size);
            seen += size;
            updateMetrics(*plan, size, metrics);
            if (onEvent) {
                TrainEvent e;
                e.kind = TrainEvent::Kind::Step;
                e.epoch = epoch;
                e.epochs = m_config.epochs;
                e.step = s + 1;
                e.stepsPerEpoch = steps;
                e.globalStep = globalStep;
                e.loss = lossSum / static_cast<double>(seen);
                e.metrics = metricValues(metrics);
                e.learningRate = lr;
                double el = secondsSince(epochStart);
                e.elapsedSeconds = el;
                e.samplesPerSecond = el > 0 ? static_cast<double>(seen) / el : 0;
                int64_t remaining = (steps - s - 1) + (m_config.epochs - epoch) * steps;
                e.etaSeconds = el / static_cast<double>(s + 1) * static_cast<double>(remaining);
                emit(e);
            }
        }
        double epochSeconds = secondsSince(epochStart);
        trainSeconds += epochSeconds;
        trainedSamples += seen;
        if (result.cancelled && seen == 0) break;
        EpochRecord rec;
        rec.epoch = epoch;
        rec.train.loss = seen ? lossSum / static_cast<double>(seen) : 0;
        rec.train.metrics = metricValues(metrics);
        rec.train.samples = seen;
        rec.seconds = epochSeconds;
        rec.samplesPerSecond = epochSeconds > 0 ? static_cast<double>(seen) / epochSeconds : 0;
        if (m_data.validation) {
            KILN_ASSIGN(auto v, evaluate(*m_data.validation));
            rec.validation = v;
        }
        TrainEvent e;
        e.kind = TrainEvent::Kind::Epoch;
        e.epoch = epoch;
        e.epochs = m_config.epochs;
        e.step = steps;
        e.stepsPerEpoch = steps;
        e.globalStep = globalStep;
        e.loss = rec.train.loss;
        e.metrics = rec.train.metrics;
        e.learningRate = m_config.schedule.lrAt(globalStep);
        e.samplesPerSecond = rec.samplesPerSecond;
        e.elapsedSeconds = secondsSince(fitStart);
        e.etaSeconds = epochSeconds * (m_config.epochs - epoch);
        e.validation = rec.validation;
        result.history.push_back(std::move(rec));
        emit(e);
        if (result.cancelled) break;
    }
    if (m_data.test && !result.cancelled) {
        KILN_ASSIGN(auto t, evaluate(*m_data.test));
        result.test = t;
    }
    result.seconds = secondsSince(fitStart);
    result.samplesPerSecond = trainSeconds > 0 ? static_cast<double>(trainedSamples) / trainSeconds : 0;
    TrainEvent end;
    end.kind = TrainEvent::Kind::End;
    end.epochs = m_config.epochs;
    end.elapsedSeconds = result.seconds;
    emit(end);
    return result;
}

}  // namespace kiln::engine::train
