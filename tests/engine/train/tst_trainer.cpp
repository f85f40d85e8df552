// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_train Qt6::Core
// Training configuration and data loading (errors name the field; CSV splits, standardisation and
// input mapping), convergence on small classification and regression problems, evaluate() against
// a hand computation, and validation_split holding out the last part of the data.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::train;
using nlohmann::json;

namespace {

ops::ModelInfo buildModel(const std::string& nodes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

const char* kClassifier = R"([
  {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
  {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "activation": "relu"}},
  {"name": "logits", "op": "Dense", "inputs": ["h"], "attrs": {"units": 2}}
])";

TrainingConfig config(const std::string& training, const ops::ModelInfo& m) {
    auto c = parseTrainingConfig(json::parse(training), m.graph);
    if (!c.ok()) qFatal("parseTrainingConfig: %s", c.error().toString().c_str());
    return std::move(c).value();
}

data::InMemoryDataset dataset(int64_t n, Shape featureShape, std::vector<float> features, Shape labelShape,
                              std::vector<float> labels) {
    data::Column x;
    x.name = "features";
    x.sampleShape = std::move(featureShape);
    x.values = std::move(features);
    data::Column y;
    y.name = "label";
    y.sampleShape = std::move(labelShape);
    y.values = std::move(labels);
    auto set = data::InMemoryDataset::create(n, {std::move(x), std::move(y)});
    if (!set.ok()) qFatal("InMemoryDataset::create: %s", set.error().toString().c_str());
    return std::move(set).value();
}

// Two Gaussian blobs around (-1.5, -1.5) (class 0) and (1.5, 1.5) (class 1), unit spread.
data::InMemoryDataset blobs(int64_t n, uint64_t stream) {
    std::vector<float> x(static_cast<size_t>(2 * n)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const int c = static_cast<int>(i % 2);
        const float centre = c ? 1.5f : -1.5f;
        y[static_cast<size_t>(i)] = static_cast<float>(c);
        for (int j = 0; j < 2; ++j)
            x[static_cast<size_t>(2 * i + j)] = centre + rng::normal(77, stream, static_cast<uint64_t>(2 * i + j));
    }
    return dataset(n, Shape{2}, std::move(x), Shape{}, std::move(y));
}

std::unique_ptr<Trainer> trainer(const ops::ModelInfo& m, const TrainingConfig& c, DataBundle data, ThreadPool& pool) {
    auto t = Trainer::create(m, c, std::move(data), pool);
    if (!t.ok()) qFatal("Trainer::create: %s", t.error().toString().c_str());
    return std::move(t).value();
}

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

double meanOf(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}
double popStd(const std::vector<double>& v) {
    const double m = meanOf(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size()));
}

// Element `e` of every sample of a column.
std::vector<double> element(const data::InMemoryDataset& set, const std::string& column, int64_t e) {
    const data::Column* c = set.column(column);
    std::vector<double> out;
    if (!c) return out;
    for (int64_t i = 0; i < set.count(); ++i) out.push_back(c->sample(i)[static_cast<size_t>(e)]);
    return out;
}

}  // namespace

class TestTrainer : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // ---- parseTrainingConfig -------------------------------------------------------------------
    void parsesFullConfig() {
        const ops::ModelInfo m = buildModel(kClassifier);
        auto c = parseTrainingConfig(json::parse(R"({
            "epochs": 7, "batch_size": 16, "seed": 99, "shuffle": false, "validation_split": 0.2,
            "optimizer": {"type": "sgd", "learning_rate": 0.05, "momentum": 0.9, "nesterov": true},
            "schedule": {"type": "exponential", "decay_steps": 100, "decay_rate": 0.5},
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true},
            "metrics": ["accuracy"]})"),
                                     m.graph);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(c->epochs, 7);
        QCOMPARE(c->batchSize, int64_t{16});
        QCOMPARE(c->seed, uint64_t{99});
        QCOMPARE(c->shuffle, false);
        QCOMPARE(c->validationSplit, 0.2);
        QCOMPARE(c->optimizer.type, std::string("sgd"));
        QCOMPARE(*c->optimizer.learningRate, 0.05);
        QCOMPARE(c->optimizer.momentum, 0.9);
        QCOMPARE(c->optimizer.nesterov, true);
        QCOMPARE(c->schedule.initial, 0.05);
        QCOMPARE(c->losses.size(), size_t{1});
        QCOMPARE(c->losses[0].spec.type, std::string("SparseCategoricalCrossentropy"));
        QCOMPARE(c->losses[0].spec.output, std::string("logits"));  // the single model output
        QCOMPARE(c->losses[0].target, std::string("label"));
        QVERIFY(c->losses[0].spec.attrs.getBool("from_logits"));
        QCOMPARE(c->metrics, std::vector<std::string>{"accuracy"});

        // Defaults: Keras's.
        auto d = parseTrainingConfig(json::parse(R"({"loss": "MeanSquaredError"})"), m.graph);
        QVERIFY(d.ok());
        QCOMPARE(d->epochs, 5);
        QCOMPARE(d->batchSize, int64_t{32});
        QCOMPARE(d->optimizer.type, std::string("adam"));
        QCOMPARE(d->optimizer.resolvedLearningRate(), 0.001);
        QCOMPARE(d->validationSplit, 0.0);
        QVERIFY(d->shuffle);
    }

    void configErrorsNameTheField_data() {
        QTest::addColumn<QString>("training");
        QTest::addColumn<QString>("field");
        QTest::newRow("typo at top level") << R"({"lerning_rate": 0.1, "loss": "MeanSquaredError"})"
                                           << "training.lerning_rate";
        QTest::newRow("typo: epoch") << R"({"epoch": 3, "loss": "MeanSquaredError"})" << "training.epoch";
        QTest::newRow("batch_size 0") << R"({"batch_size": 0, "loss": "MeanSquaredError"})" << "training.batch_size";
        QTest::newRow("batch_size negative") << R"({"batch_size": -4, "loss": "MeanSquaredError"})"
                                             << "training.batch_size";
        QTest::newRow("batch_size a string") << R"({"batch_size": "32", "loss": "MeanSquaredError"})"
                                             << "training.batch_size";
        QTest::newRow("batch_size fractional") << R"({"batch_size": 8.5, "loss": "MeanSquaredError"})"
                                               << "training.batch_size";
        QTest::newRow("epochs negative") << R"({"epochs": -1, "loss": "MeanSquaredError"})" << "training.epochs";
        QTest::newRow("validation_split 1") << R"({"validation_split": 1.0, "loss": "MeanSquaredError"})"
                                            << "training.validation_split";
        QTest::newRow("shuffle not bool") << R"({"shuffle": 1, "loss": "MeanSquaredError"})" << "training.shuffle";
        QTest::newRow("unknown loss") << R"({"loss": "MeanSquaredErr"})" << "training.loss.type";
        QTest::newRow("unknown loss in object") << R"({"loss": {"type": "Hinge"}})" << "training.loss.type";
        QTest::newRow("an op that is not a loss") << R"({"loss": "Dense"})" << "training.loss.type";
        QTest::newRow("missing loss") << R"({"epochs": 1})" << "training.loss";
        QTest::newRow("loss typo") << R"({"loss": {"type": "MeanSquaredError", "outptu": "logits"}})"
                                   << "training.loss.outptu";
        QTest::newRow("loss output not a node") << R"({"loss": {"type": "MeanSquaredError", "output": "nope"}})"
                                                << "training.loss.output";
        QTest::newRow("second loss bad") << R"({"loss": ["MeanSquaredError", {"type": "Nope"}]})"
                                         << "training.loss[1].type";
        QTest::newRow("loss list empty") << R"({"loss": []})" << "training.loss";
        QTest::newRow("term weight negative")
            << R"({"loss": ["MeanSquaredError", {"type": "MeanAbsoluteError", "weight": -0.5}]})"
            << "training.loss[1].weight";
        QTest::newRow("term weight a string")
            << R"({"loss": ["MeanSquaredError", {"type": "MeanAbsoluteError", "weight": "0.3"}]})"
            << "training.loss[1].weight";
        QTest::newRow("first term in a list") << R"({"loss": [{"type": "MeanSquaredError", "weight": null}]})"
                                              << "training.loss[0].weight";
        QTest::newRow("attribute of another loss") << R"({"loss": [{"type": "MeanSquaredError", "gamma": 2}]})"
                                                   << "training.loss[0].gamma";
        QTest::newRow("focal gamma negative") << R"({"loss": {"type": "BinaryFocalCrossentropy", "gamma": -1}})"
                                              << "training.loss.gamma";
        QTest::newRow("focal alpha a string")
            << R"({"loss": {"type": "CategoricalFocalCrossentropy", "alpha": "high"}})" << "training.loss.alpha";
        QTest::newRow("term without type") << R"({"loss": ["MeanSquaredError", {"weight": 1}]})"
                                           << "training.loss[1].type";
        QTest::newRow("term names repeat")
            << R"({"loss": [{"type": "MeanSquaredError", "name": "fit"}, {"type": "MeanAbsoluteError", "name": "fit"}]})"
            << "training.loss[1].name";
        QTest::newRow("term name with a space")
            << R"({"loss": [{"type": "MeanSquaredError", "name": "my fit"}, "MeanAbsoluteError"]})"
            << "training.loss[0].name";
        QTest::newRow("optimizer typo") << R"({"optimizer": {"type": "adam", "lerning_rate": 0.1}, "loss": "MeanSquaredError"})"
                                        << "training.optimizer.lerning_rate";
        QTest::newRow("schedule typo") << R"({"schedule": {"type": "step", "stepsize": 3}, "loss": "MeanSquaredError"})"
                                       << "training.schedule.stepsize";
        QTest::newRow("metrics not a list") << R"({"metrics": "accuracy", "loss": "MeanSquaredError"})"
                                            << "training.metrics";
    }
    void configErrorsNameTheField() {
        QFETCH(QString, training);
        QFETCH(QString, field);
        const ops::ModelInfo m = buildModel(kClassifier);
        auto c = parseTrainingConfig(json::parse(training.toStdString()), m.graph);
        QVERIFY(!c.ok());
        QCOMPARE(errorCodeName(c.error().code), errorCodeName(ErrorCode::ConfigError));
        QCOMPARE(c.error().param("field"), field.toStdString());
        QVERIFY2(c.error().message.find(field.toStdString()) != std::string::npos, c.error().message.c_str());
    }

    void unknownOptimizerNamesTheField_data() {
        QTest::addColumn<QString>("training");
        QTest::newRow("string") << R"({"optimizer": "adamx", "loss": "MeanSquaredError"})";
        QTest::newRow("object") << R"({"optimizer": {"type": "nadam"}, "loss": "MeanSquaredError"})";
    }
    void unknownOptimizerNamesTheField() {
        QFETCH(QString, training);
        const ops::ModelInfo m = buildModel(kClassifier);
        auto c = parseTrainingConfig(json::parse(training.toStdString()), m.graph);
        QVERIFY(!c.ok());
        QCOMPARE(errorCodeName(c.error().code), errorCodeName(ErrorCode::ConfigError));
        const std::string field = c.error().param("field");
        // The optimizer library names "optimizer.type"; inside a project it may carry "training.".
        QVERIFY2(field == "optimizer.type" || field == "training.optimizer.type", field.c_str());
    }

    void lossOutputRequiredWithSeveralOutputs() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
          {"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": 1}},
          {"name": "b", "op": "Dense", "inputs": ["x"], "attrs": {"units": 1}}
        ])");
        auto c = parseTrainingConfig(json::parse(R"({"loss": "MeanSquaredError"})"), m.graph);
        QVERIFY(!c.ok());
        QCOMPARE(c.error().param("field"), std::string("training.loss.output"));
        auto ok = parseTrainingConfig(
            json::parse(R"({"loss": [{"type": "MeanSquaredError", "output": "a", "target": "ya"},
                                     {"type": "MeanAbsoluteError", "output": "b", "target": "yb", "weight": 0.5}]})"),
            m.graph);
        QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().toString().c_str());
        QCOMPARE(ok->losses.size(), size_t{2});
        QCOMPARE(ok->losses[1].spec.output, std::string("b"));
        QCOMPARE(ok->losses[1].target, std::string("yb"));
        QCOMPARE(ok->losses[1].spec.weight, 0.5f);
    }

    // ---- loadData (CSV) ------------------------------------------------------------------------
    void lossTermsTakeAttributesAndNames() {
        const ops::ModelInfo m = buildModel(kClassifier);
        const TrainingConfig c = config(R"({"loss": [
            {"type": "SparseCategoricalCrossentropy", "from_logits": true, "weight": 0.7},
            {"type": "SparseCategoricalFocalCrossentropy", "from_logits": true, "gamma": 3, "alpha": 0.5, "weight": 0.3},
            {"type": "CategoricalFocalCrossentropy", "label_smoothing": 0.1, "target": "onehot", "weight": 0},
            {"type": "SparseCategoricalCrossentropy", "name": "ce_again"}]})", m);
        QCOMPARE(c.losses.size(), size_t{4});
        QCOMPARE(c.losses[0].spec.weight, 0.7f);
        QCOMPARE(c.losses[1].spec.attrs.getFloat("gamma"), 3.0);  // an integer taken as a float
        QCOMPARE(c.losses[1].spec.attrs.getFloat("alpha"), 0.5);
        QCOMPARE(c.losses[2].spec.attrs.getFloat("label_smoothing"), 0.1);
        QCOMPARE(c.losses[2].target, std::string("onehot"));
        // Several terms on one output: "<output>_<snake_case type>", repeats numbered; a "name" wins.
        QCOMPARE(c.losses[0].name, std::string("logits_sparse_categorical_crossentropy"));
        QCOMPARE(c.losses[1].name, std::string("logits_sparse_categorical_focal_crossentropy"));
        QCOMPARE(c.losses[2].name, std::string("logits_categorical_focal_crossentropy"));
        QCOMPARE(c.losses[3].name, std::string("ce_again"));
        const TrainingConfig single = config(R"({"loss": "MeanSquaredError"})", m);
        QCOMPARE(single.losses[0].name, std::string("logits"));
        const TrainingConfig repeated = config(R"({"loss": ["MeanSquaredError", "MeanSquaredError"]})", m);
        QCOMPARE(repeated.losses[0].name, std::string("logits_mean_squared_error"));
        QCOMPARE(repeated.losses[1].name, std::string("logits_mean_squared_error_2"));
    }

    // 0.7 x MSE + 0.3 x MAE on one output: the reported loss is the weighted sum, each term is
    // its own "<name>_loss" scalar (unweighted), the output's metrics are computed once, and
    // training lowers both terms.
    void compositeLossOnOneOutput() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
          {"name": "y", "op": "Dense", "inputs": ["x"], "attrs": {"units": 1}}
        ])");
        const TrainingConfig c = config(R"({"epochs": 20, "batch_size": 4, "seed": 4,
            "optimizer": {"type": "sgd", "learning_rate": 0.05},
            "loss": [{"type": "MeanSquaredError", "weight": 0.7}, {"type": "MeanAbsoluteError", "weight": 0.3}],
            "metrics": ["mae"]})", m);
        std::vector<float> x, y;
        for (int i = 0; i < 10; ++i) {
            x.push_back(0.5f * static_cast<float>(i) - 2.0f);
            x.push_back(static_cast<float>((i * 7) % 5) - 1.0f);
            y.push_back(1.5f * x[static_cast<size_t>(2 * i)] - 0.5f * x[static_cast<size_t>(2 * i + 1)] + 2.0f);
        }
        const data::InMemoryDataset set = dataset(10, Shape{2}, x, Shape{1}, y);
        DataBundle bundle;
        bundle.train = set;
        ThreadPool pool(1);
        auto t = trainer(m, c, std::move(bundle), pool);
        const float* w = t->params().find("y/kernel")->value.data<float>();
        double sq = 0, ab = 0;
        for (int i = 0; i < 10; ++i) {
            const double pred = static_cast<double>(x[static_cast<size_t>(2 * i)]) * w[0] +
                                static_cast<double>(x[static_cast<size_t>(2 * i + 1)]) * w[1];
            const double d = pred - y[static_cast<size_t>(i)];
            sq += d * d;
            ab += std::abs(d);
        }
        sq /= 10;
        ab /= 10;
        auto r = t->evaluate(set);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const double want = 0.7 * sq + 0.3 * ab;
        QVERIFY2(std::abs(r->loss - want) < 1e-5 * (1 + want), qPrintable(QString("%1 vs %2").arg(r->loss).arg(want)));
        QVERIFY(std::abs(r->metric("y_mean_squared_error_loss", -1) - sq) < 1e-5 * (1 + sq));
        QVERIFY(std::abs(r->metric("y_mean_absolute_error_loss", -1) - ab) < 1e-5 * (1 + ab));
        QVERIFY(std::abs(r->metric("mae", -1) - ab) < 1e-5 * (1 + ab));
        std::vector<std::string> names;
        for (const auto& v : r->metrics) names.push_back(v.name);
        QCOMPARE(names, (std::vector<std::string>{"mae", "y_mean_squared_error_loss", "y_mean_absolute_error_loss"}));

        auto fit = t->fit();
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        const auto& first = fit->history.front().train;
        const auto& last = fit->history.back().train;
        for (const auto* e : {&first, &last}) {  // the epoch's loss is the weighted sum of its terms' means
            const double sum = 0.7 * e->metric("y_mean_squared_error_loss") + 0.3 * e->metric("y_mean_absolute_error_loss");
            QVERIFY2(std::abs(e->loss - sum) < 1e-5 * (1 + sum), qPrintable(QString("%1 vs %2").arg(e->loss).arg(sum)));
        }
        QVERIFY(last.metric("y_mean_squared_error_loss") < 0.1 * first.metric("y_mean_squared_error_loss"));
        QVERIFY(last.metric("y_mean_absolute_error_loss") < 0.5 * first.metric("y_mean_absolute_error_loss"));
    }

    // A classifier trained on 0.7 x cross-entropy + 0.3 x focal loss, both on the logits.
    void focalTermTrainsAClassifier() {
        const ops::ModelInfo m = buildModel(kClassifier);
        const TrainingConfig c = config(R"({"epochs": 10, "batch_size": 32, "seed": 3,
            "optimizer": {"type": "adam", "learning_rate": 0.01},
            "loss": [{"type": "SparseCategoricalCrossentropy", "from_logits": true, "weight": 0.7},
                     {"type": "SparseCategoricalFocalCrossentropy", "from_logits": true, "weight": 0.3, "name": "focal"}],
            "metrics": ["accuracy"]})", m);
        DataBundle b;
        b.train = blobs(400, 1);
        b.validation = blobs(200, 2);
        ThreadPool pool(2);
        auto t = trainer(m, c, std::move(b), pool);
        auto fit = t->fit();
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        const auto& last = fit->history.back();
        QVERIFY(last.validation.has_value());
        QVERIFY2(last.validation->metric("accuracy") > 0.95,
                 qPrintable(QString("validation accuracy %1").arg(last.validation->metric("accuracy"))));
        QVERIFY(last.validation->metric("focal_loss", -1) >= 0);
        QVERIFY(last.train.metric("focal_loss") < fit->history.front().train.metric("focal_loss"));
        QVERIFY(last.train.metric("logits_sparse_categorical_crossentropy_loss", -1) >= 0);
    }

    void loadCsvSplitsAndStandardizes() {
        // 120 rows; "sq" = i*i (a non-uniform feature), "mod" = (7i mod 11); classes 60/36/24.
        const std::string dir = m_dir.path().toStdString();
        std::string csv = "sq,mod,label\n";
        std::vector<int> classOf(120);
        for (int i = 0; i < 120; ++i) {
            classOf[static_cast<size_t>(i)] = i < 60 ? 0 : i < 96 ? 1 : 2;
            csv += std::to_string(i * i) + "," + std::to_string((7 * i) % 11) + "," +
                   std::to_string(classOf[static_cast<size_t>(i)]) + "\n";
        }
        writeFile(dir + "/table.csv", csv);
        const json data = json::parse(R"({
            "format": "csv", "path": "table.csv", "header": true, "label_column": "label",
            "standardize": true, "split": {"validation": 0.25, "test": 0.25},
            "inputs": {"x": "features"}})");
        // Relative to the project's folder.
        auto r = loadData(data, dir + "/project.kiln", 5);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const DataBundle& b = *r;
        QVERIFY(b.validation.has_value());
        QVERIFY(b.test.has_value());
        QCOMPARE(b.inputs.size(), size_t{1});
        QCOMPARE(b.inputs.at("x"), std::string("features"));
        QCOMPARE(b.train.count() + b.validation->count() + b.test->count(), int64_t{120});
        QVERIFY(std::abs(b.train.count() - 60) <= 3);
        QVERIFY(std::abs(b.validation->count() - 30) <= 3);
        QVERIFY(std::abs(b.test->count() - 30) <= 3);
        const data::Column* features = b.train.column("features");
        QVERIFY(features);
        QCOMPARE(features->sampleShape, Shape({2}));

        // Stratified: every split has the classes in the 60/36/24 proportions.
        auto classCounts = [](const data::InMemoryDataset& s) {
            std::vector<int> n(3, 0);
            for (float v : s.column("label")->values) ++n[static_cast<size_t>(v)];
            return n;
        };
        const std::vector<int> tr = classCounts(b.train), va = classCounts(*b.validation), te = classCounts(*b.test);
        const int want[3] = {60, 36, 24};
        for (int c = 0; c < 3; ++c) {
            QCOMPARE(tr[static_cast<size_t>(c)] + va[static_cast<size_t>(c)] + te[static_cast<size_t>(c)], want[c]);
            QVERIFY2(std::abs(va[static_cast<size_t>(c)] - want[c] / 4) <= 2, qPrintable(QString("class %1: %2 in validation").arg(c).arg(va[static_cast<size_t>(c)])));
            QVERIFY2(std::abs(te[static_cast<size_t>(c)] - want[c] / 4) <= 2, qPrintable(QString("class %1: %2 in test").arg(c).arg(te[static_cast<size_t>(c)])));
        }
        // Labels are not standardised.
        for (float v : b.validation->column("label")->values) QVERIFY(v == 0.0f || v == 1.0f || v == 2.0f);

        // Standardised with the training split's statistics: zero mean and unit spread there...
        for (int e = 0; e < 2; ++e) {
            const std::vector<double> t = element(b.train, "features", e);
            QVERIFY2(std::abs(meanOf(t)) < 1e-4, qPrintable(QString::number(meanOf(t))));
            QVERIFY2(std::abs(popStd(t) - 1.0) < 1e-4, qPrintable(QString::number(popStd(t))));
        }
        // ...and the same affine map on the other splits. Recover it from all standardised "sq"
        // values (the raw values are the squares 0..119^2) and map every value back.
        std::vector<double> all;
        for (const data::InMemoryDataset* s : {&b.train, &*b.validation, &*b.test})
            for (double v : element(*s, "features", 0)) all.push_back(v);
        std::sort(all.begin(), all.end());
        const double scale = (119.0 * 119.0) / (all.back() - all.front());
        const double shift = -all.front() * scale;
        auto raw = [&](double v) { return v * scale + shift; };
        std::set<long> seen;
        for (const data::InMemoryDataset* s : {&b.train, &*b.validation, &*b.test})
            for (double v : element(*s, "features", 0)) {
                const double r0 = raw(v);
                const long i = std::lround(std::sqrt(std::max(0.0, r0)));
                QVERIFY2(std::abs(r0 - static_cast<double>(i * i)) < 0.05,
                         qPrintable(QString("standardised %1 maps back to %2, not a square").arg(v).arg(r0)));
                seen.insert(i);
            }
        QCOMPARE(seen.size(), size_t{120});  // every row exactly once
        // The map's mean and spread are those of the raw training values.
        std::vector<double> trainRaw;
        for (double v : element(b.train, "features", 0)) trainRaw.push_back(std::round(raw(v)));
        QVERIFY2(std::abs(shift - meanOf(trainRaw)) < 1e-3 * meanOf(trainRaw),
                 qPrintable(QString("mean %1 vs training mean %2").arg(shift).arg(meanOf(trainRaw))));
        QVERIFY2(std::abs(scale - popStd(trainRaw)) < 1e-3 * popStd(trainRaw),
                 qPrintable(QString("std %1 vs training std %2").arg(scale).arg(popStd(trainRaw))));
        // The held-out splits are not re-centred on their own.
        QVERIFY(std::abs(meanOf(element(*b.validation, "features", 0))) > 1e-3 ||
                std::abs(meanOf(element(*b.test, "features", 0))) > 1e-3);

        // The same seed gives the same split; another seed another one.
        auto again = loadData(data, dir + "/project.kiln", 5);
        QVERIFY(again.ok());
        QVERIFY(again->validation->column("features")->values == b.validation->column("features")->values);
        auto other = loadData(data, dir + "/project.kiln", 6);
        QVERIFY(other.ok());
        QVERIFY(other->validation->column("label")->values != b.validation->column("label")->values ||
                other->validation->column("features")->values != b.validation->column("features")->values);
    }

    void loadCsvWithoutStandardizing() {
        const std::string dir = m_dir.path().toStdString();
        writeFile(dir + "/plain.csv", "1,2,0\n3,4,1\n5,6,0\n7,8,1\n");
        auto r = loadData(json::parse(R"({"format": "csv", "path": "plain.csv"})"), dir + "/p.kiln", 1);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY(!r->validation);
        QVERIFY(!r->test);
        QCOMPARE(r->train.count(), int64_t{4});
        QVERIFY(r->train.column("features")->values == std::vector<float>({1, 2, 3, 4, 5, 6, 7, 8}));
        QVERIFY(r->train.column("label")->values == std::vector<float>({0, 1, 0, 1}));
    }

    void loadCsvGroupsFeedInputs() {
        const std::string dir = m_dir.path().toStdString();
        std::string csv = "a,b,c,d,label\n";
        for (int i = 0; i < 40; ++i)
            csv += std::to_string(i) + "," + std::to_string(i % 3) + "," + std::to_string(i % 5) + "," +
                   std::to_string(i % 7) + "," + std::to_string(i % 2) + "\n";
        writeFile(dir + "/groups.csv", csv);
        const json data = json::parse(R"({
            "format": "csv", "path": "groups.csv", "header": true, "label_column": "label",
            "columns": {"left": [0, 3], "right": ["d"]},
            "inputs": {"in_l": "left", "in_r": "right"}})");
        auto r = loadData(data, dir + "/p.kiln", 1);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->train.column("left")->sampleShape, Shape({3}));
        QCOMPARE(r->train.column("right")->sampleShape, Shape({1}));
        QVERIFY(!r->train.column("features"));
        QCOMPARE(r->train.column("left")->sample(4)[2], 4.0f);   // c of row 4
        QCOMPARE(r->train.column("right")->sample(10)[0], 3.0f);  // d of row 10

        const ops::ModelInfo m = buildModel(R"([
          {"name": "in_l", "op": "Input", "attrs": {"shape": [3]}},
          {"name": "in_r", "op": "Input", "attrs": {"shape": [1]}},
          {"name": "cat", "op": "Concatenate", "inputs": ["in_l", "in_r"]},
          {"name": "out", "op": "Dense", "inputs": ["cat"], "attrs": {"units": 2}}
        ])");
        const TrainingConfig c = config(R"({"batch_size": 8, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})", m);
        ThreadPool pool(1);
        {
            auto t = Trainer::create(m, c, *r, pool);
            QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
            QVERIFY((*t)->stepOnce(0).ok());
        }
        {
            // Swapped: the shapes no longer fit.
            DataBundle swapped = *r;
            swapped.inputs = {{"in_l", "right"}, {"in_r", "left"}};
            auto t = Trainer::create(m, c, swapped, pool);
            QVERIFY(!t.ok());
            QCOMPARE(errorCodeName(t.error().code), errorCodeName(ErrorCode::ShapeMismatch));
        }
        {
            DataBundle missing = *r;
            missing.inputs = {{"in_l", "middle"}, {"in_r", "right"}};
            auto t = Trainer::create(m, c, missing, pool);
            QVERIFY(!t.ok());
            QCOMPARE(t.error().param("field"), std::string("data.inputs.in_l"));
        }
    }

    void loadDataErrorsNameTheField_data() {
        QTest::addColumn<QString>("data");
        QTest::addColumn<QString>("field");
        QTest::newRow("typo") << R"({"format": "csv", "path": "plain.csv", "pathh": "x"})" << "data.pathh";
        QTest::newRow("unknown format") << R"({"format": "parquet", "path": "x"})" << "data.format";
        QTest::newRow("no format") << R"({"path": "x"})" << "data.format";
        QTest::newRow("no path") << R"({"format": "csv"})" << "data.path";
        QTest::newRow("split too big") << R"({"format": "csv", "path": "plain.csv", "split": {"validation": 0.5, "test": 0.5}})"
                                       << "data.split";
        QTest::newRow("split typo") << R"({"format": "csv", "path": "plain.csv", "split": {"valid": 0.2}})"
                                    << "data.split.valid";
        QTest::newRow("inputs not an object") << R"({"format": "csv", "path": "plain.csv", "inputs": ["a"]})"
                                              << "data.inputs";
        QTest::newRow("idx without train") << R"({"format": "idx"})" << "data.train";
    }
    void loadDataErrorsNameTheField() {
        QFETCH(QString, data);
        QFETCH(QString, field);
        const std::string dir = m_dir.path().toStdString();
        writeFile(dir + "/plain.csv", "1,2,0\n3,4,1\n5,6,0\n7,8,1\n");
        auto r = loadData(json::parse(data.toStdString()), dir + "/p.kiln", 1);
        QVERIFY(!r.ok());
        QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::ConfigError));
        QCOMPARE(r.error().param("field"), field.toStdString());
    }

    void loadDataMissingFile() {
        auto r = loadData(json::parse(R"({"format": "csv", "path": "does-not-exist.csv"})"),
                          m_dir.path().toStdString() + "/p.kiln", 1);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().toString().find("does-not-exist.csv") != std::string::npos, r.error().toString().c_str());
    }

    // ---- Training ------------------------------------------------------------------------------
    void classifiesTwoBlobs() {
        const ops::ModelInfo m = buildModel(kClassifier);
        const TrainingConfig c = config(R"({"epochs": 15, "batch_size": 32, "seed": 3,
            "optimizer": {"type": "adam", "learning_rate": 0.01},
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]})", m);
        DataBundle b;
        b.train = blobs(400, 1);
        b.test = blobs(400, 2);
        ThreadPool pool(2);
        auto t = trainer(m, c, std::move(b), pool);
        int steps = 0, epochs = 0;
        auto fit = t->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) ++steps;
            if (e.kind == TrainEvent::Kind::Epoch) ++epochs;
        });
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        QCOMPARE(epochs, 15);
        QCOMPARE(steps, 15 * 13);  // ceil(400 / 32) per epoch
        QCOMPARE(fit->history.size(), size_t{15});
        QVERIFY(fit->history.back().train.loss < fit->history.front().train.loss);
        QVERIFY(fit->test.has_value());
        const double acc = fit->test->metric("accuracy");
        QVERIFY2(acc > 0.95, qPrintable(QString("test accuracy %1").arg(acc)));
        QCOMPARE(fit->test->samples, int64_t{400});
        QVERIFY(fit->history.back().train.metric("accuracy") > 0.95);
        // evaluate() agrees with fit's test result.
        auto ev = t->evaluate(*t->data().test);
        QVERIFY(ev.ok());
        QCOMPARE(ev->metric("accuracy"), acc);
        QVERIFY(std::abs(ev->loss - fit->test->loss) < 1e-9);
    }

    void regressionConverges() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
          {"name": "y", "op": "Dense", "inputs": ["x"], "attrs": {"units": 1}}
        ])");
        const TrainingConfig c = config(R"({"epochs": 30, "batch_size": 16, "seed": 1,
            "optimizer": {"type": "sgd", "learning_rate": 0.1}, "loss": "MeanSquaredError", "metrics": ["mae"]})", m);
        std::vector<float> x, y;
        for (int i = 0; i < 256; ++i) {
            const float a = rng::normal(8, 1, static_cast<uint64_t>(i)), b = rng::normal(8, 2, static_cast<uint64_t>(i));
            x.push_back(a);
            x.push_back(b);
            y.push_back(2.0f * a - 3.0f * b + 0.5f);
        }
        DataBundle bundle;
        bundle.train = dataset(256, Shape{2}, x, Shape{1}, y);
        ThreadPool pool(2);
        auto t = trainer(m, c, std::move(bundle), pool);
        auto fit = t->fit();
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        const double first = fit->history.front().train.loss, last = fit->history.back().train.loss;
        QVERIFY2(last < 1e-4, qPrintable(QString("final loss %1").arg(last)));
        QVERIFY(first > 100 * last);
        const float* w = t->params().find("y/kernel")->value.data<float>();
        const float* bias = t->params().find("y/bias")->value.data<float>();
        QVERIFY2(std::abs(w[0] - 2.0f) < 1e-2 && std::abs(w[1] + 3.0f) < 1e-2 && std::abs(bias[0] - 0.5f) < 1e-2,
                 qPrintable(QString("w = (%1, %2), b = %3").arg(w[0]).arg(w[1]).arg(bias[0])));
        QVERIFY(fit->history.back().train.metric("mae") < 1e-2);
    }

    void evaluateMatchesManualLoss() {
        // A linear model on 10 samples with batch 4: two full batches and a partial one.
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
          {"name": "y", "op": "Dense", "inputs": ["x"], "attrs": {"units": 1}}
        ])");
        const TrainingConfig c = config(R"({"batch_size": 4, "seed": 4, "loss": "MeanSquaredError", "metrics": ["mae"]})", m);
        std::vector<float> x, y;
        for (int i = 0; i < 10; ++i) {
            x.push_back(0.5f * static_cast<float>(i) - 2.0f);
            x.push_back(static_cast<float>((i * 7) % 5) - 1.0f);
            y.push_back(static_cast<float>(i % 3) - 0.5f);
        }
        const data::InMemoryDataset set = dataset(10, Shape{2}, x, Shape{1}, y);
        DataBundle bundle;
        bundle.train = set;
        ThreadPool pool(1);
        auto t = trainer(m, c, std::move(bundle), pool);
        t->params().find("y/bias")->value.data<float>()[0] = 0.25f;
        const float* w = t->params().find("y/kernel")->value.data<float>();
        double sq = 0, ab = 0;
        for (int i = 0; i < 10; ++i) {
            const double pred = static_cast<double>(x[static_cast<size_t>(2 * i)]) * w[0] +
                                static_cast<double>(x[static_cast<size_t>(2 * i + 1)]) * w[1] + 0.25;
            const double d = pred - y[static_cast<size_t>(i)];
            sq += d * d;
            ab += std::abs(d);
        }
        auto r = t->evaluate(set);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->samples, int64_t{10});
        QVERIFY2(std::abs(r->loss - sq / 10) < 1e-5 * (1 + sq / 10), qPrintable(QString("%1 vs %2").arg(r->loss).arg(sq / 10)));
        QVERIFY2(std::abs(r->metric("mae") - ab / 10) < 1e-5 * (1 + ab / 10),
                 qPrintable(QString("%1 vs %2").arg(r->metric("mae")).arg(ab / 10)));
        // evaluate() changes no weights.
        QCOMPARE(t->params().find("y/bias")->value.data<float>()[0], 0.25f);
    }

    void evaluateMatchesManualCrossEntropy() {
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [3]}},
          {"name": "logits", "op": "Dense", "inputs": ["x"], "attrs": {"units": 3}}
        ])");
        const TrainingConfig c = config(R"({"batch_size": 4, "seed": 9,
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]})", m);
        std::vector<float> x, y;
        for (int i = 0; i < 11; ++i) {
            for (int j = 0; j < 3; ++j) x.push_back(rng::normal(3, 3, static_cast<uint64_t>(3 * i + j)) * 2.0f);
            y.push_back(static_cast<float>((i * 5) % 3));
        }
        const data::InMemoryDataset set = dataset(11, Shape{3}, x, Shape{}, y);
        DataBundle bundle;
        bundle.train = set;
        ThreadPool pool(2);
        auto t = trainer(m, c, std::move(bundle), pool);
        const float* w = t->params().find("logits/kernel")->value.data<float>();
        double loss = 0;
        int correct = 0;
        for (int i = 0; i < 11; ++i) {
            double z[3];
            for (int k = 0; k < 3; ++k) {
                z[k] = 0;
                for (int j = 0; j < 3; ++j) z[k] += static_cast<double>(x[static_cast<size_t>(3 * i + j)]) * w[j * 3 + k];
            }
            const double mx = std::max({z[0], z[1], z[2]});
            const double lse = mx + std::log(std::exp(z[0] - mx) + std::exp(z[1] - mx) + std::exp(z[2] - mx));
            const int label = static_cast<int>(y[static_cast<size_t>(i)]);
            loss += lse - z[label];
            correct += static_cast<int>(std::max_element(z, z + 3) - z) == label;
        }
        auto r = t->evaluate(set);
        QVERIFY(r.ok());
        QVERIFY2(std::abs(r->loss - loss / 11) < 1e-5 * (1 + loss / 11), qPrintable(QString("%1 vs %2").arg(r->loss).arg(loss / 11)));
        QVERIFY2(std::abs(r->metric("accuracy") - correct / 11.0) < 1e-9,
                 qPrintable(QString("%1 vs %2").arg(r->metric("accuracy")).arg(correct / 11.0)));
    }

    void validationSplitTakesTheLastPart_data() {
        QTest::addColumn<double>("split");
        QTest::addColumn<int>("held");
        QTest::newRow("0.25 of 20") << 0.25 << 5;
        QTest::newRow("0.3 of 20") << 0.3 << 6;
        QTest::newRow("0.1 of 20") << 0.1 << 2;
    }
    void validationSplitTakesTheLastPart() {
        QFETCH(double, split);
        QFETCH(int, held);
        const ops::ModelInfo m = buildModel(R"([
          {"name": "x", "op": "Input", "attrs": {"shape": [1]}},
          {"name": "logits", "op": "Dense", "inputs": ["x"], "attrs": {"units": 2}}
        ])");
        const TrainingConfig c = config(R"({"epochs": 1, "batch_size": 4, "validation_split": )" + std::to_string(split) +
                                            R"(, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})",
                                        m);
        std::vector<float> x, y;
        for (int i = 0; i < 20; ++i) {
            x.push_back(static_cast<float>(i));
            y.push_back(static_cast<float>(i % 2));
        }
        DataBundle bundle;
        bundle.train = dataset(20, Shape{1}, x, Shape{}, y);
        ThreadPool pool(1);
        auto t = trainer(m, c, std::move(bundle), pool);
        const DataBundle& d = t->data();
        QVERIFY(d.validation.has_value());
        QCOMPARE(d.validation->count(), int64_t{held});
        QCOMPARE(d.train.count(), int64_t{20 - held});
        for (int64_t i = 0; i < d.train.count(); ++i) QCOMPARE(d.train.column("features")->sample(i)[0], static_cast<float>(i));
        for (int64_t i = 0; i < held; ++i)
            QCOMPARE(d.validation->column("features")->sample(i)[0], static_cast<float>(20 - held + i));
        QCOMPARE(d.validation->column("label")->sample(held - 1)[0], 1.0f);
        // fit() reports validation results each epoch.
        auto fit = t->fit();
        QVERIFY(fit.ok());
        QVERIFY(fit->history.back().validation.has_value());
        QCOMPARE(fit->history.back().validation->samples, int64_t{held});
        QCOMPARE(fit->history.back().train.samples, int64_t{20 - held});
    }
};

QTEST_APPLESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
