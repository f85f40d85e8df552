// SPDX-License-Identifier: Apache-2.0
// Real Keras backbones through kiln-import: keras.applications ResNet50, EfficientNetB0 and
// MobileNetV3Small, built by Keras with weights=None (random weights, randomised batch and
// Normalization statistics) and saved as .keras and as legacy .h5 in a temporary folder, are
// imported by the kiln-import program with no placeholder; the written project and weights,
// run by Kiln on Keras's random inputs, give Keras's logits within 1e-4. Skips when the Python
// environment or Keras is missing.
// kiln-test-labels: interop slow
// kiln-test-timeout: 1800
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "tests/app/app_test_util.h"
#include "tests/engine/io/keras_fixtures.h"

using namespace kiln::engine;
using nlohmann::json;

namespace {

std::string readText(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<float> readFloats(const QString& path) {
    const std::string bytes = readText(path);
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

}  // namespace

class TestKerasBackbones : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    json m_manifest;

    QString path(const QString& name) const { return m_dir.filePath(name); }
    const json* model(const std::string& name) const {
        for (const auto& m : m_manifest["models"])
            if (m["name"] == name) return &m;
        return nullptr;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QString log;
        switch (kiln::test::makeKerasModels(m_dir.path(), {"resnet50", "efficientnet_b0", "mobilenet_v3_small"}, &log)) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("Keras is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        m_manifest = json::parse(readText(path("manifest.json")));
        qInfo("Keras %s", m_manifest["keras_version"].get<std::string>().c_str());
    }

    void importedBackboneMatchesKeras_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("ext");
        QTest::addColumn<QStringList>("mustMapTo");  // Kiln ops the import has to produce
        const QStringList resnet{"ZeroPadding2D", "Conv2D", "BatchNormalization", "ReLU", "MaxPooling2D", "Add"};
        // EfficientNet: Rescaling and Normalization in front, SiLU, squeeze-and-excitation
        // (global pooling with keepdims, a broadcasting Multiply), stochastic-depth Dropout.
        const QStringList efficientnet{"Rescaling", "Normalization", "SiLU", "DepthwiseConv2D", "Reshape", "Multiply", "Dropout"};
        // MobileNetV3: hard-swish, ReLU(max_value=6) as ReLU6, `x + 3` and `x * (1/6)` as Rescaling.
        const QStringList mobilenet{"Rescaling", "HardSwish", "ReLU6", "ReLU", "Multiply", "ZeroPadding2D"};
        for (const QString ext : {"keras", "h5"}) {
            QTest::newRow(qPrintable("resnet50." + ext)) << QStringLiteral("resnet50") << ext << resnet;
            QTest::newRow(qPrintable("efficientnet_b0." + ext)) << QStringLiteral("efficientnet_b0") << ext << efficientnet;
            QTest::newRow(qPrintable("mobilenet_v3_small." + ext)) << QStringLiteral("mobilenet_v3_small") << ext << mobilenet;
        }
    }
    void importedBackboneMatchesKeras() {
        QFETCH(QString, name);
        QFETCH(QString, ext);
        QFETCH(QStringList, mustMapTo);
        const json* m = model(name.toStdString());
        QVERIFY(m);
        const QString project = path(name + "_" + ext + ".kiln"), weightsFile = path(name + "_" + ext + ".safetensors"),
                      report = path(name + "_" + ext + ".import.json");
        auto run = kiln::test::runProgram("kiln-import", {path(name + "." + ext), "-o", project, "--weights-out", weightsFile, "--report", report}, 600000);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));

        const json r = json::parse(readText(report));
        QCOMPARE(r["summary"]["placeholders"].get<int>(), 0);
        for (const auto& n : r["nodes"]) QVERIFY2(!n["kiln_nodes"].empty(), n.dump().c_str());

        auto loaded = io::loadProject(project.toStdString());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        std::set<QString> ops;
        for (const auto& n : loaded->graph.nodes) ops.insert(QString::fromStdString(n.op));
        for (const QString& op : mustMapTo) QVERIFY2(ops.count(op), qPrintable(name + " has no " + op + " node"));
        // EfficientNet's stochastic depth keeps its noise shape: whole samples dropped while training.
        if (name == QLatin1String("efficientnet_b0")) {
            int perSample = 0;
            for (const auto& n : loaded->graph.nodes)
                if (n.op == "Dropout" && n.attrs.has("noise_shape") && n.attrs.getInts("noise_shape") == std::vector<int64_t>{-1, 1, 1, 1}) ++perSample;
            QVERIFY2(perSample > 0, "no Dropout with noise_shape [-1, 1, 1, 1]");
        }
        auto info = ops::analyzeModel(loaded->graph);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());

        auto weights = io::loadSafetensors(weightsFile.toStdString());
        QVERIFY2(weights.ok(), weights.ok() ? "" : weights.error().toString().c_str());
        auto params = exec::ParamStore::create(*info, 0);
        for (auto& p : params.params()) {
            const Tensor* t = weights->find(p.name);
            QVERIFY2(t, p.name.c_str());
            QCOMPARE(t->shape(), p.value.shape());
            p.value.copyFrom(*t);
        }

        ThreadPool pool(2);
        exec::CompileOptions copt;
        copt.batch = (*m)["inputs"][0]["shape"][0].get<int64_t>();
        copt.training = false;
        auto plan = exec::Plan::compile(*info, params, copt, pool);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().toString().c_str());
        const auto x = readFloats(path(QString::fromStdString((*m)["inputs"][0]["file"].get<std::string>())));
        std::memcpy((*plan)->input(size_t{0}), x.data(), x.size() * sizeof(float));
        QVERIFY((*plan)->forward().ok());
        const auto y = readFloats(path(QString::fromStdString((*m)["outputs"][0]["file"].get<std::string>())));
        QCOMPARE(static_cast<size_t>((*plan)->outputShape(0).numel()), y.size());
        double worst = 0.0, largest = 0.0;
        for (size_t e = 0; e < y.size(); ++e) {
            const double d = std::fabs(static_cast<double>((*plan)->output(0)[e]) - y[e]);
            worst = std::isnan(d) ? INFINITY : std::max(worst, d);
            largest = std::max(largest, std::fabs(static_cast<double>(y[e])));
        }
        qInfo("%s.%s: %zu Kiln nodes, %zu weight tensors; max |Kiln - Keras| = %.3g (largest logit %.3g)", qPrintable(name), qPrintable(ext),
              loaded->graph.nodes.size(), weights->tensors.size(), worst, largest);
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
    }
};

QTEST_GUILESS_MAIN(TestKerasBackbones)
#include "tst_keras_backbones.moc"
