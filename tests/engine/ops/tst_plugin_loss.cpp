// SPDX-License-Identifier: Apache-2.0
// Plugin losses and metrics (ABI 1.1) with the example plugin huber_fbeta (KILN_TEST_PLUGIN_DIR):
// the GroupNorm example built against the ABI 1.0 header still loads next to it; the Huber
// loss's value and gradient against a closed form and central finite differences, with Kiln's
// reduction and the term weight; training a model through a plugin op, a plugin loss and a
// plugin metric, the metric checked against F-beta recomputed from the model's predictions;
// training-config errors naming the field; and a plugin whose loss returns NaN or whose
// callbacks fail stopping training with an error that names it; the loss checker passing the
// Huber loss and catching a wrong gradient, a value that depends on another sample, NaN values
// and a failing compute().
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/ops/plugin_check.h"
#include "engine/ops/plugin_loss.h"
#include "engine/ops/plugin_ops.h"
#include "engine/train/config.h"
#include "engine/train/plugin_metric.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;

namespace {

const std::string kPluginDir = KILN_TEST_PLUGIN_DIR;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

Graph graphOf(const std::string& nodes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return p->graph;
}

// Input [4, 6] -> GroupNorm (the ABI 1.0 build) -> Flatten -> Dense(1, sigmoid).
const char* kModel = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [4, 6]}},
  {"name": "gn", "op": "Plugin", "inputs": ["x"], "attrs": {"plugin_op": "example.GroupNorm", "groups": 3}},
  {"name": "flat", "op": "Flatten", "inputs": ["gn"]},
  {"name": "y", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 1, "activation": "sigmoid"}}
])";

double huber(double d, double delta) {
    const double a = std::abs(d);
    return a <= delta ? 0.5 * d * d : delta * (a - 0.5 * delta);
}

// 128 samples of [4, 6] features and a 0/1 label from a fixed linear rule.
train::DataBundle binaryData(std::vector<float>* features = nullptr, std::vector<float>* labels = nullptr) {
    constexpr int64_t kSamples = 128;
    std::vector<float> x, y;
    for (int64_t s = 0; s < kSamples; ++s) {
        double t = 0;
        for (int j = 0; j < 24; ++j) {
            const float v =
                rng::normal(11, static_cast<uint64_t>(s), static_cast<uint64_t>(j)) * (1.0f + j % 3);
            x.push_back(v);
            t += (j % 2 ? 0.3 : -0.2) * v;
        }
        y.push_back(t > 0 ? 1.0f : 0.0f);
    }
    if (features) *features = x;
    if (labels) *labels = y;
    data::Column xc, yc;
    xc.name = "features";
    xc.sampleShape = Shape{4, 6};
    xc.values = std::move(x);
    yc.name = "label";
    yc.sampleShape = Shape{1};
    yc.values = std::move(y);
    auto set = data::InMemoryDataset::create(kSamples, {std::move(xc), std::move(yc)});
    if (!set.ok()) qFatal("dataset: %s", set.error().toString().c_str());
    train::DataBundle bundle;
    bundle.train = std::move(*set);
    return bundle;
}

}  // namespace

class TestPluginLoss : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // The GroupNorm example compiled against the 1.0 header: its descriptor ends after op_count.
        auto old = PluginRegistry::global().load(kPluginDir + "/abi_1_0/group_norm.so");
        QVERIFY2(old.ok(), old.ok() ? "" : old.error().toString().c_str());
        QCOMPARE(q(abiVersionText(old->abiVersion)), QString("1.0"));
        QCOMPARE(old->ops, std::vector<std::string>{"example.GroupNorm"});
        QVERIFY(old->losses.empty() && old->metrics.empty());

        auto info = PluginRegistry::global().load(kPluginDir + "/huber_fbeta.so");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(info->abiVersion, KILN_PLUGIN_ABI_VERSION);
        QCOMPARE(info->losses, (std::vector<std::string>{"example.Huber", "example.Quantile"}));
        QCOMPARE(info->metrics, std::vector<std::string>{"example.FBeta"});
        const PluginLoss* loss = PluginRegistry::global().findLoss("example.Huber");
        QVERIFY(loss);
        QCOMPARE(loss->attrs.size(), size_t{1});
        QCOMPARE(q(loss->attrs[0].name), QString("delta"));
        QVERIFY(findPluginLoss("plugin:example.Huber") == loss);
        QVERIFY(!findPluginLoss("example.Huber"));  // a type names it with the prefix
        const PluginMetric* metric = PluginRegistry::global().findMetric("example.FBeta");
        QVERIFY(metric);
        QCOMPARE(metric->desc->state_count, 3);

        auto bad = PluginRegistry::global().load(kPluginDir + "/bad/bad_loss.so");
        QVERIFY2(bad.ok(), bad.ok() ? "" : bad.error().toString().c_str());
    }

    // Value and gradient of the loss step: Kiln's mean over the batch of the plugin's per-sample
    // values, and the gradient scaled by the term weight, against central differences.
    void huberGradientMatchesFiniteDifferences() {
        const PluginLoss* loss = findPluginLoss("plugin:example.Huber");
        QVERIFY(loss);
        AttrMap given;
        given.set("delta", 0.7);
        auto attrs = resolvePluginLossAttrs(*loss, given, "training.loss");
        QVERIFY2(attrs.ok(), attrs.ok() ? "" : attrs.error().toString().c_str());
        Node node;
        node.name = "loss:y";
        node.op = "plugin:example.Huber";
        constexpr int64_t kBatch = 5, kWidth = 3;
        const std::vector<Shape> shapes{Shape{kBatch, kWidth}, Shape{kBatch, kWidth}};
        const ShapeContext ctx{node, *attrs, shapes};
        auto shape = pluginLossDef().shape(ctx);
        QVERIFY2(shape.ok(), shape.ok() ? "" : shape.error().toString().c_str());
        auto kernel = pluginLossDef().cpu(ctx, Shape{1});
        QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());

        std::vector<float> p(kBatch * kWidth), t(kBatch * kWidth);
        for (size_t k = 0; k < p.size(); ++k) {
            p[k] = 1.5f * rng::normal(3, k, 0);
            t[k] = 1.5f * rng::normal(3, k, 1);
        }
        ThreadPool pool(2);
        constexpr float kWeight = 1.3f;
        auto value = [&](const std::vector<float>& pred) {
            const float* in[2] = {pred.data(), t.data()};
            float out = 0;
            KernelIo io;
            io.in = in;
            io.out = &out;
            io.pool = &pool;
            io.gradScale = kWeight;
            auto st = (*kernel)->forward(io);
            if (!st.ok()) qFatal("forward: %s", st.error().toString().c_str());
            return static_cast<double>(out);
        };
        double expected = 0;
        for (int64_t i = 0; i < kBatch; ++i) {
            double sample = 0;
            for (int64_t j = 0; j < kWidth; ++j) sample += huber(p[i * kWidth + j] - t[i * kWidth + j], 0.7);
            expected += sample / kWidth;
        }
        expected /= kBatch;
        QVERIFY2(std::abs(value(p) - expected) < 1e-6,
                 qPrintable(QString("%1 vs %2").arg(value(p)).arg(expected)));

        std::vector<float> grad(p.size(), 0.25f);  // the kernel accumulates
        const float* in[2] = {p.data(), t.data()};
        float* dIn[2] = {grad.data(), nullptr};
        float out = 0;
        KernelIo io;
        io.in = in;
        io.out = &out;
        io.dIn = dIn;
        io.pool = &pool;
        io.gradScale = kWeight;
        QVERIFY((*kernel)->backward(io).ok());
        const double h = 1e-3;
        for (size_t k = 0; k < p.size(); ++k) {
            std::vector<float> plus = p, minus = p;
            plus[k] += static_cast<float>(h);
            minus[k] -= static_cast<float>(h);
            const double numeric = kWeight * (value(plus) - value(minus)) / (2 * h);
            const double analytic = grad[k] - 0.25;
            QVERIFY2(
                std::abs(numeric - analytic) < 2e-3,
                qPrintable(QString("d/dp[%1]: analytic %2, numeric %3").arg(k).arg(analytic).arg(numeric)));
        }
    }

    void trainsWithPluginLossAndMetric() {
        auto m = analyzeModel(graphOf(kModel));
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        auto c =
            train::parseTrainingConfig(nlohmann::json::parse(R"({"epochs": 12, "batch_size": 16, "seed": 3,
            "optimizer": {"type": "adam", "learning_rate": 0.02},
            "loss": [{"type": "plugin:example.Huber", "delta": 0.5}],
            "metrics": ["accuracy", {"type": "plugin:example.FBeta", "beta": 2, "name": "f2"}, "plugin:example.FBeta"]})"),
                                       m->graph);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(c->metrics, (std::vector<std::string>{"accuracy", "f2", "example.FBeta"}));
        std::vector<float> x, y;
        ThreadPool pool(2);
        auto t = train::Trainer::create(*m, *c, binaryData(&x, &y), pool);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        auto fit = (*t)->fit();
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        const double first = fit->history.front().train.loss, last = fit->history.back().train.loss;
        qInfo("Huber loss over %zu epochs: %g -> %g", fit->history.size(), first, last);
        QVERIFY2(std::isfinite(last) && last < 0.6 * first,
                 qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
        auto metric = [](const std::vector<train::MetricValue>& ms, const std::string& name) {
            for (const auto& mv : ms)
                if (mv.name == name) return mv.value;
            return -1.0;
        };
        QVERIFY(metric(fit->history.back().train.metrics, "f2") >= 0);
        QVERIFY(metric(fit->history.back().train.metrics, "example.FBeta") >= 0);

        // Evaluate the trained model, then recompute F-beta from its own predictions.
        auto eval = (*t)->evaluate((*t)->data().train);
        QVERIFY2(eval.ok(), eval.ok() ? "" : eval.error().toString().c_str());
        exec::CompileOptions o;
        o.batch = 128;
        o.training = false;
        auto plan = exec::Plan::compile(*m, (*t)->params(), o, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        std::copy(x.begin(), x.end(), (*plan)->input(size_t{0}));
        QVERIFY((*plan)->forward(0).ok());
        const float* pred = (*plan)->output(0);
        auto fbeta = [&](double beta) {
            double tp = 0, fp = 0, fn = 0, huberSum = 0;
            for (size_t i = 0; i < y.size(); ++i) {
                const bool predicted = pred[i] > 0.5f, actual = y[i] > 0.5f;
                tp += predicted && actual;
                fp += predicted && !actual;
                fn += !predicted && actual;
                huberSum += huber(pred[i] - y[i], 0.5);
            }
            const double b2 = beta * beta;
            return std::pair{(1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp),
                             huberSum / static_cast<double>(y.size())};
        };
        const auto [f2, meanHuber] = fbeta(2.0);
        const auto [f1, unused] = fbeta(1.0);
        (void)unused;
        qInfo("F2 %g, F1 %g, Huber %g over the training set", f2, f1, meanHuber);
        QVERIFY2(std::abs(metric(eval->metrics, "f2") - f2) < 1e-9,
                 qPrintable(QString("f2 %1 vs %2").arg(metric(eval->metrics, "f2")).arg(f2)));
        QVERIFY2(std::abs(metric(eval->metrics, "example.FBeta") - f1) < 1e-9,
                 qPrintable(QString("F1 %1 vs %2").arg(metric(eval->metrics, "example.FBeta")).arg(f1)));
        QVERIFY2(std::abs(eval->loss - meanHuber) < 1e-5,
                 qPrintable(QString("loss %1 vs %2").arg(eval->loss).arg(meanHuber)));
        QVERIFY(f1 > 0.8);  // it learned the rule
    }

    void configErrorsNameTheField() {
        const Graph g = graphOf(kModel);
        auto expectError = [&](const std::string& training, const std::string& field,
                               const std::string& needle) {
            auto c = train::parseTrainingConfig(nlohmann::json::parse(training), g);
            QVERIFY2(!c.ok(), training.c_str());
            QCOMPARE(c.error().code, ErrorCode::ConfigError);
            QCOMPARE(q(c.error().param("field")), q(field));
            QVERIFY2(c.error().message.find(needle) != std::string::npos, c.error().message.c_str());
        };
        expectError(R"({"loss": [{"type": "plugin:acme.Nope"}]})", "training.loss[0].type",
                    "names the plugin loss \"plugin:acme.Nope\", which no loaded plugin provides");
        expectError(R"({"loss": "plugin:acme.Nope"})", "training.loss.type", "no loaded plugin provides");
        expectError(R"({"loss": [{"type": "plugin:example.Huber", "delta": 0}]})", "training.loss[0].delta",
                    "at least");
        expectError(
            R"({"loss": [{"type": "plugin:example.Huber", "gamma": 2}]})", "training.loss[0].gamma",
            "is not a setting of plugin:example.Huber (use type, output, target, weight, name, delta)");
        expectError(R"({"loss": "MeanSquaredError", "metrics": ["mae", "plugin:acme.F"]})",
                    "training.metrics[1]",
                    "names the plugin metric \"plugin:acme.F\", which no loaded plugin provides");
        expectError(
            R"({"loss": "MeanSquaredError", "metrics": [{"type": "plugin:example.FBeta", "threshold": 2}]})",
            "training.metrics[0].threshold", "at most");
        expectError(R"({"loss": "MeanSquaredError", "metrics": [{"type": "mae"}]})", "training.metrics[0]",
                    "only plugin metrics take");
        expectError(
            R"({"loss": "MeanSquaredError", "metrics": ["plugin:example.FBeta", "plugin:example.FBeta"]})",
            "training.metrics[1]", "repeats the metric \"example.FBeta\"");
        expectError(R"({"loss": "Hubr"})", "training.loss.type",
                    "plugin:example.Huber");  // listed among the losses
        // Several weighted terms on one output get readable default names.
        auto c = train::parseTrainingConfig(
            nlohmann::json::parse(
                R"({"loss": [{"type": "plugin:example.Huber", "weight": 0.5}, {"type": "MeanSquaredError"}]})"),
            g);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(q(c->losses[0].name), QString("y_huber"));
        QCOMPARE(q(c->losses[1].name), QString("y_mean_squared_error"));
    }

    void misbehavingPluginStopsTrainingWithItsName() {
        auto m = analyzeModel(graphOf(kModel));
        QVERIFY(m.ok());
        ThreadPool pool(2);
        auto fitWith = [&](const std::string& loss, const std::string& metrics) -> Error {
            auto c = train::parseTrainingConfig(
                nlohmann::json::parse(R"({"epochs": 1, "batch_size": 16, "loss": )" + loss +
                                      R"(, "metrics": )" + metrics + "}"),
                m->graph);
            if (!c.ok()) return c.error();
            auto t = train::Trainer::create(*m, *c, binaryData(), pool);
            if (!t.ok()) return t.error();
            auto fit = (*t)->fit();
            return fit.ok() ? Error(ErrorCode::Internal, "training succeeded") : fit.error();
        };
        const std::string path = kPluginDir + "/bad/bad_loss.so";
        Error e = fitWith(R"("plugin:bad.NaNLoss")", "[]");
        QCOMPARE(e.code, ErrorCode::PluginError);
        QVERIFY2(e.message.find("the plugin loss bad.NaNLoss") != std::string::npos, e.message.c_str());
        QVERIFY2(e.message.find("bad_loss.so") != std::string::npos, e.message.c_str());
        QVERIFY2(e.message.find("nan for sample 1") != std::string::npos, e.message.c_str());
        e = fitWith(R"("plugin:bad.FailingLoss")", "[]");
        QCOMPARE(e.code, ErrorCode::PluginError);
        QVERIFY2(e.message.find("bad.FailingLoss") != std::string::npos &&
                     e.message.find("failed: the failing loss refuses batches of 16") != std::string::npos,
                 e.message.c_str());
        e = fitWith(R"("MeanSquaredError")", R"(["plugin:bad.FailingMetric"])");
        QCOMPARE(e.code, ErrorCode::PluginError);
        QVERIFY2(e.message.find("the plugin metric bad.FailingMetric") != std::string::npos &&
                     e.message.find("failed in update: the failing metric refuses every batch") !=
                         std::string::npos,
                 e.message.c_str());
        QCOMPARE(q(e.param("path")).endsWith("bad_loss.so"), true);
    }

    void lossCheckerPassesHuberAndCatchesBadLosses() {
        ThreadPool pool(2);
        using K = PluginCheck::Kind;
        using O = PluginCheck::Outcome;
        const PluginLoss* huberLoss = PluginRegistry::global().findLoss("example.Huber");
        QVERIFY(huberLoss);
        const auto good = checkPluginLoss(*huberLoss, pool);
        // Huber has no shape check of its own: the same number of values per sample, so the
        // [4,3]/[4,3] and [4,1]/[4,1] cases; each a value and a gradient check.
        QCOMPARE(good.size(), size_t{4});
        QCOMPARE(q(good[0].caseName), QStringLiteral("predictions [4,3], targets [4,3]"));
        QCOMPARE(q(good[2].caseName), QStringLiteral("predictions [4,1], targets [4,1]"));
        for (const auto& c : good) {
            QVERIFY2(c.outcome == O::Passed, (c.caseName + ": " + c.detail).c_str());
            QVERIFY(c.kind == K::Value || c.kind == K::Gradient);
        }
        QCOMPARE(good[1].kind, K::Gradient);
        QVERIFY(good[1].worstError < 2e-2);

        auto outcome = [&](const char* name) {
            const PluginLoss* loss = PluginRegistry::global().findLoss(name);
            if (!loss) qFatal("%s is not loaded", name);
            return checkPluginLoss(*loss, pool);
        };
        // A loss with a required attribute is checked on the cases its plugin declares (ABI 1.2),
        // with their attributes and shapes.
        const PluginLoss* quantile = PluginRegistry::global().findLoss("example.Quantile");
        QVERIFY(quantile);
        QCOMPARE(quantile->checkCases.size(), size_t{2});
        const auto declared = checkPluginLoss(*quantile, pool);
        QCOMPARE(declared.size(), size_t{4});
        QCOMPARE(q(declared[0].caseName), QStringLiteral("q=0.9 (predictions [4,3], targets [4,3])"));
        QCOMPARE(q(declared[2].caseName), QStringLiteral("median (predictions [5,1], targets [5,1])"));
        for (const auto& c : declared) QVERIFY2(c.outcome == O::Passed, (c.caseName + ": " + c.detail).c_str());
        QCOMPARE(declared[1].kind, K::Gradient);

        // A wrong gradient: the values pass, the gradient fails naming the element.
        auto half = outcome("bad.HalfGradient");
        QVERIFY(half.size() >= 2);
        QCOMPARE(half[0].outcome, O::Passed);
        QCOMPARE(half[1].kind, K::Gradient);
        QCOMPARE(half[1].outcome, O::Failed);
        QVERIFY2(half[1].detail.find("d loss / d prediction [") != std::string::npos &&
                     half[1].detail.find("finite difference") != std::string::npos,
                 half[1].detail.c_str());
        // A value that depends on another sample fails the value check (and is not checked further).
        auto coupled = outcome("bad.BatchCoupled");
        QCOMPARE(coupled[0].kind, K::Value);
        QCOMPARE(coupled[0].outcome, O::Failed);
        QVERIFY2(coupled[0].detail.find("changes when only sample 0") != std::string::npos, coupled[0].detail.c_str());
        QVERIFY(coupled.size() < 2 || coupled[1].caseName != coupled[0].caseName);
        auto nan = outcome("bad.NaNLoss");
        QCOMPARE(nan[0].outcome, O::Failed);
        QVERIFY2(nan[0].detail.find("sample 1") != std::string::npos, nan[0].detail.c_str());
        auto failing = outcome("bad.FailingLoss");
        QCOMPARE(failing[0].outcome, O::Failed);
        QVERIFY2(failing[0].detail.find("refuses batches of 4") != std::string::npos, failing[0].detail.c_str());
    }

    void metricShapeCheck() {
        // F-beta compares value by value: 3 predictions per sample against 1 target is refused.
        auto m = train::makePluginMetric("plugin:example.FBeta", "f", {}, Shape{3}, Shape{1});
        QVERIFY(!m.ok());
        QCOMPARE(m.error().code, ErrorCode::ShapeMismatch);
        QVERIFY2(m.error().message.find("a sample has 3 predictions and 1 targets") != std::string::npos,
                 m.error().message.c_str());
        auto ok = train::makePluginMetric("plugin:example.FBeta", "f", {}, Shape{2}, Shape{2});
        QVERIFY(ok.ok());
        const float p[4] = {0.9f, 0.2f, 0.7f, 0.6f}, t[4] = {1, 0, 0, 1};
        (*ok)->update(p, t, 2, 2);
        QVERIFY((*ok)->status().ok());
        QCOMPARE((*ok)->result(), 2.0 * 2 / (2.0 * 2 + 0 + 1));  // tp 2, fp 1, fn 0
        // Accumulators add across shards (data-parallel training).
        std::vector<double> counts((*ok)->numCounts());
        (*ok)->readCounts(counts.data());
        QCOMPARE(counts, (std::vector<double>{2, 1, 0}));
        (*ok)->reset();
        QCOMPARE((*ok)->result(), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestPluginLoss)
#include "tst_plugin_loss.moc"
