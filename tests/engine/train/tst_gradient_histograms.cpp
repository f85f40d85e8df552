// SPDX-License-Identifier: Apache-2.0
// Weight and gradient histograms of the epoch events: on a linear model with a mean squared error,
// the gradient of the epoch's last step equals the closed form (2/N) X^T (XW + b - y) at the
// weights the first step left, and the weights are those after the last update.
#include <QtTest>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::train;
using nlohmann::json;

namespace {

// x -> fc (Dense, 1 unit); with `frozenHead` a second Dense "head" follows that does not train.
ops::ModelInfo linearModel(bool frozenHead = false) {
    const std::string head = frozenHead ? R"(, {"name": "head", "op": "Dense", "inputs": ["fc"], "trainable": false, "attrs": {"units": 1}})" : "";
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [3]}},
      {"name": "fc", "op": "Dense", "inputs": ["x"], "attrs": {"units": 1}})" + head + "]}}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

// Four samples of three features and a target each.
const std::vector<float> kX = {1.0f, -2.0f, 0.5f, 0.25f, 3.0f, -1.0f, -1.5f, 0.75f, 2.0f, 2.0f, -0.5f, 1.0f};
const std::vector<float> kY = {0.5f, -1.0f, 2.0f, 0.25f};

DataBundle bundle() {
    data::Column x;
    x.name = "features";
    x.sampleShape = Shape{3};
    x.values = kX;
    data::Column y;
    y.name = "label";
    y.sampleShape = Shape{1};
    y.values = kY;
    auto set = data::InMemoryDataset::create(4, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("InMemoryDataset::create: %s", set.error().toString().c_str());
    DataBundle b;
    b.train = std::move(set).value();
    return b;
}

// Mean squared error over rows [first, first + n): d/dW = (2/n) sum_i (x_i.W + b - y_i) x_i,
// d/db = (2/n) sum_i (x_i.W + b - y_i).
void closedFormGradient(const std::vector<double>& w, double b, int first, int n, std::vector<double>& gw, double& gb) {
    gw.assign(3, 0.0);
    gb = 0;
    for (int i = first; i < first + n; ++i) {
        double pred = b;
        for (int j = 0; j < 3; ++j) pred += kX[static_cast<size_t>(3 * i + j)] * w[static_cast<size_t>(j)];
        const double r = 2.0 * (pred - kY[static_cast<size_t>(i)]) / n;
        for (int j = 0; j < 3; ++j) gw[static_cast<size_t>(j)] += r * kX[static_cast<size_t>(3 * i + j)];
        gb += r;
    }
}

struct Figures {
    double min = INFINITY, max = -INFINITY, sum = 0, sumSquares = 0;
};
Figures figuresOf(const std::vector<double>& v) {
    Figures f;
    for (double x : v) {
        f.min = std::min(f.min, x);
        f.max = std::max(f.max, x);
        f.sum += x;
        f.sumSquares += x * x;
    }
    return f;
}

void compareHistogram(const io::Histogram& h, const std::vector<double>& expected) {
    const Figures f = figuresOf(expected);
    QCOMPARE(h.num, static_cast<double>(expected.size()));
    QVERIFY2(std::abs(h.min - f.min) < 1e-5, qPrintable(QStringLiteral("min %1 vs %2").arg(h.min).arg(f.min)));
    QVERIFY2(std::abs(h.max - f.max) < 1e-5, qPrintable(QStringLiteral("max %1 vs %2").arg(h.max).arg(f.max)));
    QVERIFY2(std::abs(h.sum - f.sum) < 1e-5, qPrintable(QStringLiteral("sum %1 vs %2").arg(h.sum).arg(f.sum)));
    QVERIFY(std::abs(h.sumSquares - f.sumSquares) < 1e-4);
    double total = 0;
    for (double c : h.bucket) total += c;
    QCOMPARE(total, static_cast<double>(expected.size()));
    // Each value lies in the bucket whose range holds it.
    for (double x : expected) {
        size_t k = 0;
        while (k + 1 < h.bucketLimit.size() && x > h.bucketLimit[k] + 1e-6) ++k;
        QVERIFY(h.bucket[k] >= 1);
    }
}

}  // namespace

class TestGradientHistograms : public QObject {
    Q_OBJECT

private slots:
    void lastStepGradientMatchesClosedForm() {
        const auto m = linearModel();
        auto c = parseTrainingConfig(json::parse(R"({"epochs": 1, "batch_size": 2, "shuffle": false,
            "optimizer": {"type": "SGD", "learning_rate": 0.1}, "loss": "MeanSquaredError"})"),
                                     m.graph);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(c->histogramFreq, 1);
        ThreadPool pool(1);
        auto t = Trainer::create(m, *c, bundle(), pool);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        exec::Parameter* kernel = (*t)->params().find("fc/kernel");
        exec::Parameter* bias = (*t)->params().find("fc/bias");
        QVERIFY(kernel && bias);
        // A bias away from zero, so that its gradient is no special case.
        bias->value.data<float>()[0] = 0.3f;
        std::vector<double> w0(kernel->value.data<float>(), kernel->value.data<float>() + 3);
        const double b0 = 0.3;

        // Step 1 on rows 0-1 at (w0, b0), step 2 on rows 2-3 at the weights step 1 left.
        std::vector<double> g1, g2;
        double gb1 = 0, gb2 = 0;
        closedFormGradient(w0, b0, 0, 2, g1, gb1);
        std::vector<double> w1(3);
        for (int j = 0; j < 3; ++j) w1[static_cast<size_t>(j)] = w0[static_cast<size_t>(j)] - 0.1 * g1[static_cast<size_t>(j)];
        const double b1 = b0 - 0.1 * gb1;
        closedFormGradient(w1, b1, 2, 2, g2, gb2);
        std::vector<double> w2(3);
        for (int j = 0; j < 3; ++j) w2[static_cast<size_t>(j)] = w1[static_cast<size_t>(j)] - 0.1 * g2[static_cast<size_t>(j)];

        std::vector<TrainEvent> epochs;
        auto fit = (*t)->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Epoch) epochs.push_back(e);
        });
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        QCOMPARE(epochs.size(), size_t{1});
        const auto& hs = epochs[0].histograms;
        QCOMPARE(hs.size(), size_t{2});
        QCOMPARE(hs[0].name, std::string("fc/kernel"));
        QCOMPARE(hs[1].name, std::string("fc/bias"));
        compareHistogram(hs[0].gradients, g2);
        compareHistogram(hs[1].gradients, {gb2});
        compareHistogram(hs[0].weights, w2);
        compareHistogram(hs[1].weights, {b1 - 0.1 * gb2});
        QCOMPARE(static_cast<int>(hs[0].weights.bucket.size()), kHistogramBuckets);
        // The first step's gradient differs: the histogram is the last step's, not a mix.
        QVERIFY(std::abs(figuresOf(g1).sum - figuresOf(g2).sum) > 1e-3);
    }

    void frequencyAndFrozenParameters() {
        const auto m = linearModel(true);
        auto c = parseTrainingConfig(json::parse(R"({"epochs": 4, "batch_size": 4, "histogram_freq": 2,
            "optimizer": {"type": "SGD", "learning_rate": 0.01}, "loss": "MeanSquaredError"})"),
                                     m.graph);
        QVERIFY(c.ok());
        ThreadPool pool(1);
        auto t = Trainer::create(m, *c, bundle(), pool);
        QVERIFY(t.ok());
        std::vector<int> withHistograms;
        std::vector<TrainEvent> epochs;
        auto fit = (*t)->fit([&](const TrainEvent& e) {
            if (e.kind != TrainEvent::Kind::Epoch) return;
            epochs.push_back(e);
            if (!e.histograms.empty()) withHistograms.push_back(e.epoch);
        });
        QVERIFY(fit.ok());
        QCOMPARE(withHistograms, (std::vector<int>{2, 4}));
        // Parameters that do not train have weights but no gradient.
        const auto& hs = epochs[1].histograms;
        QCOMPARE(hs.size(), size_t{4});
        QCOMPARE(hs[2].name, std::string("head/kernel"));
        QCOMPARE(hs[2].gradients.num, 0.0);
        QCOMPARE(hs[2].weights.num, 1.0);
        QCOMPARE(hs[0].gradients.num, 3.0);
    }

    void negativeFrequencyIsRefused() {
        const auto m = linearModel();
        auto c = parseTrainingConfig(json::parse(R"({"histogram_freq": -1, "loss": "MeanSquaredError"})"), m.graph);
        QVERIFY(!c.ok());
        QCOMPARE(c.error().param("field"), std::string("training.histogram_freq"));
    }
};

QTEST_GUILESS_MAIN(TestGradientHistograms)
#include "tst_gradient_histograms.moc"
