// SPDX-License-Identifier: Apache-2.0
// The Trainer as one replica of a data-parallel group (what kiln-train does under mpirun), here
// with the in-process reducer on threads: three replicas over a global batch of 12 (the last
// batch of each epoch splits 1/1/2, so gradients must be weighted by rows) end with the weights,
// losses and metrics of one Trainer with batch 12, with a synchronised BatchNormalization and
// validation; batches that do not split are refused naming both numbers.
#include <QtTest>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/data_parallel.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::train;

namespace {

ops::ModelInfo model() {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [3]}},
      {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 6, "use_bias": false}},
      {"name": "bn", "op": "BatchNormalization", "inputs": ["h"], "attrs": {"synchronized": true}},
      {"name": "r", "op": "ReLU", "inputs": ["bn"]},
      {"name": "logits", "op": "Dense", "inputs": ["r"], "attrs": {"units": 3}}]}})";
    auto p = io::parseProject(text, "group.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

TrainingConfig config(const ops::ModelInfo& m, int64_t batch) {
    auto c = parseTrainingConfig(nlohmann::json::parse(R"({"epochs": 3, "seed": 4, "shuffle": true,
        "optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.9},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true},
        "metrics": ["accuracy"]})"),
                                 m.graph);
    if (!c.ok()) qFatal("parseTrainingConfig: %s", c.error().toString().c_str());
    c->batchSize = batch;
    return std::move(c).value();
}

data::InMemoryDataset dataset(int64_t n, uint64_t stream) {
    data::Column x{"features", Shape{3}, {}};
    data::Column y{"label", Shape{}, {}};
    for (int64_t i = 0; i < n; ++i) {
        const int c = static_cast<int>(i % 3);
        y.values.push_back(static_cast<float>(c));
        for (int j = 0; j < 3; ++j)
            x.values.push_back((j == c ? 1.5f : -0.5f) + rng::normal(11, stream, static_cast<uint64_t>(3 * i + j)));
    }
    auto set = data::InMemoryDataset::create(n, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("InMemoryDataset::create: %s", set.error().toString().c_str());
    return std::move(set).value();
}

DataBundle bundle(int64_t trainRows) {
    DataBundle b;
    b.train = dataset(trainRows, 1);
    b.validation = dataset(30, 2);
    return b;
}

struct Outcome {
    std::vector<float> weights;
    std::vector<EpochRecord> history;
};

Outcome collect(Trainer& t, const FitResult& r) {
    Outcome o;
    for (const auto& p : t.params().params())
        o.weights.insert(o.weights.end(), p.value.data<float>(), p.value.data<float>() + p.value.numel());
    o.history = r.history;
    return o;
}

}  // namespace

class TestTrainerGroup : public QObject {
    Q_OBJECT

private slots:
    void threeReplicasMatchOneTrainer() {
        const auto m = model();
        ThreadPool pool(1);
        auto one = Trainer::create(m, config(m, 12), bundle(100), pool);
        QVERIFY2(one.ok(), one.ok() ? "" : one.error().toString().c_str());
        auto fit = (*one)->fit();
        QVERIFY(fit.ok());
        const Outcome ref = collect(**one, *fit);

        constexpr int kReplicas = 3;
        InProcessGroup group(kReplicas);
        std::vector<Outcome> got(kReplicas);
        std::vector<std::string> errors(kReplicas);
        std::vector<std::thread> threads;
        for (int r = 0; r < kReplicas; ++r)
            threads.emplace_back([&, r] {
                ThreadPool own(1);
                auto t = Trainer::create(m, config(m, 12), bundle(100), own, {}, &group.reducer(r));
                if (!t.ok()) {
                    errors[r] = t.error().toString();
                    return;
                }
                auto f = (*t)->fit();
                if (!f.ok()) {
                    errors[r] = f.error().toString();
                    return;
                }
                got[r] = collect(**t, *f);
            });
        for (auto& t : threads) t.join();
        for (int r = 0; r < kReplicas; ++r) QVERIFY2(errors[r].empty(), errors[r].c_str());

        double worst = 0, largest = 0;
        for (int r = 0; r < kReplicas; ++r) {
            QCOMPARE(got[r].weights.size(), ref.weights.size());
            for (size_t i = 0; i < ref.weights.size(); ++i) {
                worst = std::max(worst, double(std::abs(got[r].weights[i] - ref.weights[i])));
                largest = std::max(largest, double(std::abs(ref.weights[i])));
            }
        }
        QVERIFY2(worst < 1e-5 * largest, qPrintable(QString::number(worst)));
        // Every replica reports the whole batch's loss and accuracy, and the same validation.
        for (int r = 0; r < kReplicas; ++r) {
            QCOMPARE(got[r].history.size(), ref.history.size());
            for (size_t e = 0; e < ref.history.size(); ++e) {
                const auto& a = got[r].history[e];
                const auto& b = ref.history[e];
                QVERIFY(std::abs(a.train.loss - b.train.loss) < 1e-5);
                QCOMPARE(a.train.metric("accuracy"), b.train.metric("accuracy"));
                QCOMPARE(a.train.samples, b.train.samples);
                QVERIFY(a.validation && b.validation);
                QVERIFY(std::abs(a.validation->loss - b.validation->loss) < 1e-5);
                QCOMPARE(a.validation->metric("accuracy"), b.validation->metric("accuracy"));
            }
        }
        QVERIFY(ref.history.back().train.loss < ref.history.front().train.loss);
    }

    void batchesMustSplit() {
        const auto m = model();
        InProcessGroup group(3);
        ThreadPool pool(1);
        // 10 is no multiple of 3.
        auto t = Trainer::create(m, config(m, 10), bundle(100), pool, {}, &group.reducer(0));
        QVERIFY(!t.ok());
        QCOMPARE(t.error().code, ErrorCode::ConfigError);
        QCOMPARE(t.error().param("batch_size"), std::string("10"));
        QCOMPARE(t.error().param("processes"), std::string("3"));
        QVERIFY2(t.error().message.find("10") != std::string::npos && t.error().message.find("3 processes") != std::string::npos,
                 t.error().message.c_str());
        // 98 samples in batches of 12 leave a last batch of 2 for 3 replicas.
        t = Trainer::create(m, config(m, 12), bundle(98), pool, {}, &group.reducer(0));
        QVERIFY(!t.ok());
        QVERIFY2(t.error().message.find("holds 2 samples") != std::string::npos, t.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainerGroup)
#include "tst_trainer_group.moc"
