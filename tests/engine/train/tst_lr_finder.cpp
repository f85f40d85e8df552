// SPDX-License-Identifier: Apache-2.0
// The learning-rate range test on a real small classifier: rates grow exponentially from 1e-7,
// the loss first falls and then diverges so the test stops early, the suggestion follows the
// stated rule, and the weights, optimizer state and step count are exactly those of before.
#include <QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/train/lr_finder.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

ops::ModelInfo buildModel(const std::string& nodes) {
    auto p = io::parseProject(R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}", "t.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

// Three separable classes of 6 features.
train::DataBundle makeBundle(int64_t n) {
    data::Column x;
    x.name = "features";
    x.sampleShape = Shape{6};
    x.values.resize(size_t(n * 6));
    data::Column y;
    y.name = "label";
    y.sampleShape = Shape{};
    y.values.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
        const int c = int(i % 3);
        y.values[size_t(i)] = float(c);
        for (int64_t j = 0; j < 6; ++j)
            x.values[size_t(i * 6 + j)] = rng::normal(5, 1, uint64_t(i * 6 + j)) + ((j % 3) == c ? 2.0f : 0.0f);
    }
    auto set = data::InMemoryDataset::create(n, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("InMemoryDataset::create");
    train::DataBundle b;
    b.train = std::move(set).value();
    return b;
}

std::unique_ptr<train::Trainer> makeTrainer(ThreadPool& pool, const std::string& optimizer) {
    static const ops::ModelInfo m = buildModel(R"([
      {"name": "x", "op": "Input", "attrs": {"shape": [6]}},
      {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 16, "activation": "relu"}},
      {"name": "logits", "op": "Dense", "inputs": ["h"], "attrs": {"units": 3}}])");
    auto c = train::parseTrainingConfig(json::parse(R"({"epochs": 1, "batch_size": 16, "seed": 4, "optimizer": )" + optimizer +
                                                    R"(, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})"),
                                        m.graph);
    if (!c.ok()) qFatal("config: %s", c.error().toString().c_str());
    auto t = train::Trainer::create(m, *c, makeBundle(96), pool);
    if (!t.ok()) qFatal("Trainer::create: %s", t.error().toString().c_str());
    return std::move(t).value();
}

std::vector<std::vector<float>> weightsOf(train::Trainer& t) {
    std::vector<std::vector<float>> out;
    for (const auto& p : t.params().params()) out.emplace_back(p.value.data<float>(), p.value.data<float>() + p.value.numel());
    return out;
}

}  // namespace

class TestLrFinder : public QObject {
    Q_OBJECT

private slots:
    void rangeTestFallsThenDiverges() {
        ThreadPool pool(2);
        auto t = makeTrainer(pool, R"({"type": "sgd", "learning_rate": 0.01, "momentum": 0.9})");
        // Some training first, so the optimizer has state worth restoring.
        QVERIFY(t->stepOnce(0).ok());
        QVERIFY(t->stepOnce(1).ok());
        const auto before = weightsOf(t.operator*());
        std::vector<float> optBefore(size_t(t->backend().optimizerStateSize()));
        QVERIFY(t->backend().saveOptimizerState(optBefore.data()).ok());
        const int64_t iterations = t->backend().iterations();

        train::LrFinderOptions o;
        o.steps = 120;
        int seen = 0;
        auto r = train::findLearningRate(*t, o, [&](const train::LrFinderPoint&) { ++seen; });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(seen, int(r->points.size()));
        QVERIFY(r->points.size() >= 20);
        // 1e-7 up by a constant factor per step: (10 / 1e-7)^(1 / 119).
        QVERIFY(std::abs(r->points[0].lr - 1e-7) < 1e-20);
        const double factor = std::pow(1e8, 1.0 / 119);
        for (size_t i = 1; i < r->points.size(); ++i)
            QVERIFY(std::abs(r->points[i].lr / r->points[i - 1].lr - factor) < 1e-9);
        // SGD with momentum at rates near 10 blows up: the test stops before its last step.
        QVERIFY(r->diverged);
        QVERIFY(r->points.size() < 120);
        // The loss fell somewhere in the range: the lowest smoothed loss is well below the first.
        double lowest = INFINITY;
        for (const auto& p : r->points) lowest = std::min(lowest, p.smoothed);
        QVERIFY2(lowest < 0.8 * r->points[0].smoothed, qPrintable(QString::number(lowest)));
        QVERIFY(r->rule == "steepest");
        QVERIFY(r->suggestedLr > 1e-7 && r->suggestedLr <= r->minLossLr);

        // Everything as it was.
        QVERIFY(weightsOf(t.operator*()) == before);
        std::vector<float> optAfter(optBefore.size());
        QVERIFY(t->backend().saveOptimizerState(optAfter.data()).ok());
        QVERIFY(optAfter == optBefore);
        QCOMPARE(t->backend().iterations(), iterations);
    }

    void cancelStopsAndRestores() {
        ThreadPool pool(1);
        auto t = makeTrainer(pool, R"({"type": "adam", "learning_rate": 0.001})");
        const auto before = weightsOf(t.operator*());
        std::atomic<bool> cancel{false};
        train::LrFinderOptions o;
        o.steps = 50;
        auto r = train::findLearningRate(*t, o, [&](const train::LrFinderPoint&) { cancel = true; }, &cancel);
        QVERIFY(r.ok());
        QCOMPARE(r->points.size(), size_t(1));
        QVERIFY(weightsOf(t.operator*()) == before);
    }

    void suggestionRule() {
        // A curve that falls fastest between 1e-3 and 1e-2 and has its minimum at 1e-1.
        train::LrFinderResult r;
        const double lrs[] = {1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
        const double loss[] = {2.0, 1.98, 1.9, 1.5, 0.8, 0.6, 3.0};
        for (int i = 0; i < 7; ++i) r.points.push_back({lrs[i], loss[i], loss[i]});
        train::suggestLearningRate(r);
        QCOMPARE(r.rule, std::string("steepest"));
        QCOMPARE(r.minLossLr, 1e-1);
        // Central slopes per decade: at 1e-4 (1.5 - 1.98) / 2 = -0.24, at 1e-3 (0.8 - 1.9) / 2 = -0.55,
        // at 1e-2 (0.6 - 1.5) / 2 = -0.45: the steepest is at 1e-3.
        QCOMPARE(r.suggestedLr, 1e-3);
        // A loss that only rises: a tenth of the rate with the lowest loss.
        train::LrFinderResult up;
        for (int i = 0; i < 7; ++i) up.points.push_back({lrs[i], 1.0 + i, 1.0 + i});
        train::suggestLearningRate(up);
        QCOMPARE(up.rule, std::string("min/10"));
        QCOMPARE(up.suggestedLr, 1e-7);
    }

    void badOptionsNameTheField() {
        train::LrFinderOptions o;
        o.steps = 1;
        QCOMPARE(train::checkLrFinderOptions(o).error().param("field"), std::string("steps"));
        o = {};
        o.endLr = o.startLr;
        QCOMPARE(train::checkLrFinderOptions(o).error().param("field"), std::string("end_lr"));
        o = {};
        o.startLr = 0;
        QCOMPARE(train::checkLrFinderOptions(o).error().param("field"), std::string("start_lr"));
        QVERIFY(train::checkLrFinderOptions({}).ok());
    }
};

QTEST_GUILESS_MAIN(TestLrFinder)
#include "tst_lr_finder.moc"
