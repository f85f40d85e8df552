// SPDX-License-Identifier: Apache-2.0
// The TensorBoard callback's weight and gradient histograms read by TensorBoard itself: after a
// short training run EventAccumulator lists "<param>/histogram" and "<param>/gradient" for every
// epoch, with the bucket counts and figures of the epoch events' histograms
// (tests/interop/tensorboard_read.py).
#include <QtTest/QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"
#include "tests/python_env.h"

using namespace kiln::engine;
using namespace kiln::engine::train;

class TstTensorBoardGradients : public QObject {
    Q_OBJECT
private:
    QString m_python;

private slots:
    void initTestCase() {
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment with TensorBoard could not be created");
    }

    void weightAndGradientHistogramsPerEpoch() {
        const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
          {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
          {"name": "hidden", "op": "Dense", "inputs": ["x"], "attrs": {"units": 6, "activation": "tanh"}},
          {"name": "out", "op": "Dense", "inputs": ["hidden"], "attrs": {"units": 1}}
        ]}})";
        auto p = io::parseProject(text, "test.kiln");
        QVERIFY(p.ok());
        auto m = ops::analyzeModel(p->graph);
        QVERIFY(m.ok());
        auto c = parseTrainingConfig(nlohmann::json::parse(R"({"epochs": 3, "batch_size": 8,
            "optimizer": {"type": "SGD", "learning_rate": 0.05}, "loss": "MeanSquaredError",
            "callbacks": [{"type": "TensorBoard", "histogram_freq": 1}]})"),
                                     m->graph);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        data::Column x{"features", Shape{4}, {}};
        data::Column y{"label", Shape{1}, {}};
        for (int i = 0; i < 32; ++i) {
            float t = 0;
            for (int j = 0; j < 4; ++j) {
                const float v = static_cast<float>((i * 7 + j * 3) % 11) / 5.0f - 1.0f;
                x.values.push_back(v);
                t += v * static_cast<float>(j + 1);
            }
            y.values.push_back(t / 4.0f);
        }
        auto set = data::InMemoryDataset::create(32, {std::move(x), std::move(y)});
        QVERIFY(set.ok());
        DataBundle bundle;
        bundle.train = std::move(set).value();
        ThreadPool pool(1);
        auto t = Trainer::create(*m, *c, std::move(bundle), pool);
        QVERIFY(t.ok());
        QTemporaryDir dir;
        CallbackContext ctx;
        ctx.runDir = dir.path().toStdString();
        QVERIFY((*t)->addConfiguredCallbacks(ctx).ok());
        std::map<int, std::vector<ParamHistogram>> byEpoch;
        auto fit = (*t)->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Epoch) byEpoch[e.epoch] = e.histograms;
        });
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        QCOMPARE(byEpoch.size(), size_t{3});

        QProcess py;
        py.start(m_python, {QStringLiteral(KILN_SOURCE_DIR "/tests/interop/tensorboard_read.py"), dir.filePath(QStringLiteral("tb/train"))});
        QVERIFY(py.waitForFinished(300000));
        const QByteArray out = py.readAllStandardOutput();
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const QJsonObject doc = QJsonDocument::fromJson(out).object();
        const QJsonArray tags = doc[QStringLiteral("tags")].toObject()[QStringLiteral("histograms")].toArray();
        QStringList expected;
        for (const char* param : {"hidden/kernel", "hidden/bias", "out/kernel", "out/bias"})
            expected << QStringLiteral("%1/histogram").arg(QLatin1String(param)) << QStringLiteral("%1/gradient").arg(QLatin1String(param));
        expected.sort();
        QStringList got;
        for (const auto& v : tags) got << v.toString();
        QCOMPARE(got, expected);

        const QJsonObject hist = doc[QStringLiteral("histograms")].toObject();
        for (int epoch = 1; epoch <= 3; ++epoch) {
            for (const auto& ph : byEpoch[epoch]) {
                for (const bool gradient : {false, true}) {
                    const io::Histogram& h = gradient ? ph.gradients : ph.weights;
                    const QString tag = QString::fromStdString(ph.name) + (gradient ? QStringLiteral("/gradient") : QStringLiteral("/histogram"));
                    const QJsonArray series = hist[tag].toArray();
                    QCOMPARE(series.size(), 3);
                    const QJsonObject e = series[epoch - 1].toObject();
                    QCOMPARE(e[QStringLiteral("step")].toInt(), epoch - 1);  // Keras logs epochs 0-based
                    QCOMPARE(e[QStringLiteral("num")].toDouble(), h.num);
                    QCOMPARE(e[QStringLiteral("min")].toDouble(), h.min);
                    QCOMPARE(e[QStringLiteral("max")].toDouble(), h.max);
                    const QJsonArray buckets = e[QStringLiteral("bucket")].toArray();
                    QCOMPARE(buckets.size(), static_cast<qsizetype>(h.bucket.size()));
                    double total = 0;
                    for (qsizetype i = 0; i < buckets.size(); ++i) {
                        QCOMPARE(buckets[i].toDouble(), h.bucket[static_cast<size_t>(i)]);
                        total += buckets[i].toDouble();
                    }
                    QCOMPARE(total, h.num);
                }
            }
        }
        // A kernel's gradient spreads over the 30 buckets; a one-value bias has one bucket.
        QCOMPARE(hist[QStringLiteral("hidden/kernel/gradient")].toArray()[0].toObject()[QStringLiteral("bucket")].toArray().size(), 30);
        QCOMPARE(hist[QStringLiteral("out/bias/gradient")].toArray()[0].toObject()[QStringLiteral("num")].toDouble(), 1.0);
    }
};

QTEST_GUILESS_MAIN(TstTensorBoardGradients)
#include "tst_tensorboard_gradients.moc"
