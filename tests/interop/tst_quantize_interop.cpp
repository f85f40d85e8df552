// kiln-test-timeout: 900
// SPDX-License-Identifier: Apache-2.0
// Int8 QDQ models against onnxruntime. (1) The Fashion-MNIST MLP example is trained for one
// epoch with kiln-train and exported with kiln-export --quantize int8: the report's agreement,
// accuracy drop and size saving are checked, and onnxruntime runs model.onnx and model.int8.onnx on
// the test images (onnx.checker must accept the int8 model; the two must agree on the top-1
// class of nearly every image). (2) The convolutional example with its initial weights, calibrated
// on synthetic inputs: onnxruntime's outputs of the QDQ model match Kiln's int8 simulation.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>
#include <fstream>

#include "../app/app_test_util.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/io/quantize.h"
#include "tests/python_env.h"

using namespace kiln::engine;

namespace {

QString dataDir() {
    QString d = qEnvironmentVariable("KILN_DATA");
    if (d.isEmpty()) d = QDir::homePath() + "/.cache/kiln/data";
    return d;
}

}  // namespace

class TestQuantizeInterop : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment is not available");
    }

    void trainedMlpThroughKilnExport() {
        const QString fashion = dataDir() + "/fashion-mnist";
        if (!QFileInfo::exists(fashion + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not in the data cache (kiln-fetch-data)");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString project = QString(KILN_SOURCE_DIR) + "/resources/examples/fashion_mlp.kiln";
        const QString runDir = tmp.filePath("run");
        auto train = kiln::test::runProgram("kiln-train", {project, "--epochs", "1", "--run-dir", runDir, "--quiet",
                                                           "--threads", "2"}, 900000);
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        auto exp = kiln::test::runProgram("kiln_export/kiln-export", {project, "--weights", runDir + "/weights.safetensors", "--base",
                                                          tmp.filePath("repo"), "--name", "mlp", "--formats", "onnx",
                                                          "--quantize", "int8", "--json", "--threads", "2"}, 900000);
        QVERIFY2(exp.exitCode == 0, qPrintable(exp.err));
        const QJsonObject j = QJsonDocument::fromJson(exp.out.trimmed().toUtf8()).object();
        const QJsonObject q = j["quantization"].toObject();
        QCOMPARE(q["metric"].toString(), QString("accuracy"));
        // The example's data has train and test files (its validation split is carved out during
        // training only), so the models are compared on the test split.
        QCOMPARE(q["split"].toString(), QString("test"));
        QCOMPARE(q["calibration_samples"].toInt(), 200);
        const double drop = q["drop"].toDouble(), agreement = q["agreement"].toDouble();
        const double ratio = q["size_ratio"].toDouble();
        qInfo("kiln-export: float %.4f, int8 %.4f (drop %.4f), agreement %.4f over %d samples; %lld -> %lld bytes (%.3f)",
              q["float"].toDouble(), q["int8"].toDouble(), drop, agreement, q["samples"].toInt(),
              qint64(q["float_bytes"].toDouble()), qint64(q["int8_bytes"].toDouble()), ratio);
        QVERIFY(q["float"].toDouble() > 0.7);  // one epoch trains the MLP well past chance
        QVERIFY2(agreement >= 0.97, qPrintable(QString::number(agreement)));
        QVERIFY2(std::fabs(drop) <= 0.02, qPrintable(QString::number(drop)));
        QVERIFY2(ratio > 0.2 && ratio < 0.3, qPrintable(QString::number(ratio)));  // int8 kernels: a quarter

        const QString dir = j["version_dir"].toString();
        QVERIFY(QFileInfo::exists(dir + "/model.int8.onnx"));
        QFile desc(dir + "/kiln-model.json");
        QVERIFY(desc.open(QIODevice::ReadOnly));
        const QJsonObject meta = QJsonDocument::fromJson(desc.readAll()).object();
        QCOMPARE(meta["files"].toObject()["onnx_int8"].toString(), QString("model.int8.onnx"));
        QCOMPARE(meta["quantization"].toObject()["int8_bytes"].toDouble(), double(QFileInfo(dir + "/model.int8.onnx").size()));

        QProcess py;
        py.start(m_python, {QString(KILN_SOURCE_DIR) + "/tests/interop/quant_check.py", dir + "/model.onnx",
                            dir + "/model.int8.onnx", fashion + "/t10k-images-idx3-ubyte.gz",
                            fashion + "/t10k-labels-idx1-ubyte.gz", "2000"});
        QVERIFY(py.waitForFinished(600000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const QJsonObject r = QJsonDocument::fromJson(py.readAllStandardOutput().trimmed()).object();
        qInfo("onnxruntime on %d test images: float %.4f, int8 %.4f, agreement %.4f", r["samples"].toInt(),
              r["float_accuracy"].toDouble(), r["int8_accuracy"].toDouble(), r["agreement"].toDouble());
        QVERIFY(r["int8_ops"].toArray().contains(QString("QuantizeLinear")));
        QVERIFY(r["agreement"].toDouble() >= 0.97);
        QVERIFY(std::fabs(r["float_accuracy"].toDouble() - r["int8_accuracy"].toDouble()) <= 0.02);
    }

    void cnnMatchesSimulation() {
        auto p = io::loadProject(std::string(KILN_SOURCE_DIR) + "/resources/examples/fashion_cnn.kiln");
        QVERIFY(p.ok());
        auto g = io::modelGraph(*p);
        QVERIFY(g.ok());
        auto m = ops::analyzeModel(*g);
        QVERIFY(m.ok());
        exec::ParamStore params = exec::ParamStore::create(*m, 11);
        ThreadPool pool(2);
        const int64_t n = 16;
        std::vector<Tensor> calib = io::syntheticInputs(*m, n, 5);
        auto rc = io::RangeCollector::create(*m, params, io::quantizedValues(*m), n, pool);
        QVERIFY2(rc.ok(), rc.ok() ? "" : rc.error().toString().c_str());
        QVERIFY((*rc)->add({calib[0].data<float>()}, n).ok());
        auto quant = io::makeQuantization(*m, (*rc)->ranges(), true);
        QVERIFY2(quant.ok(), quant.ok() ? "" : quant.error().toString().c_str());
        auto bytes = io::exportOnnx(*m, params, {}, nullptr, &*quant);
        QVERIFY(bytes.ok());
        QTemporaryDir tmp;
        const std::string onnxPath = tmp.filePath("cnn.int8.onnx").toStdString();
        std::ofstream(onnxPath, std::ios::binary) << *bytes;

        std::vector<Tensor> test = io::syntheticInputs(*m, n, 9);
        const std::string in = tmp.filePath("x.f32").toStdString(), out = tmp.filePath("y.f32").toStdString();
        std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(test[0].data<float>()),
                                                  std::streamsize(test[0].bytes()));
        auto sim = io::Int8Simulator::create(*m, params, *quant, n, pool);
        QVERIFY(sim.ok());
        std::memcpy((*sim)->input(0), test[0].data<float>(), test[0].bytes());
        QVERIFY((*sim)->forward().ok());
        QString shape;
        for (int64_t d : test[0].shape().dims()) shape += (shape.isEmpty() ? "" : ",") + QString::number(d);
        QProcess py;
        py.start(m_python, {QString(KILN_SOURCE_DIR) + "/tests/interop/onnx_run.py", QString::fromStdString(onnxPath),
                            QString::fromStdString(in), shape, QString::fromStdString(out)});
        QVERIFY(py.waitForFinished(300000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        std::ifstream f(out, std::ios::binary);
        const std::string outName = m->graph.nodes[static_cast<size_t>(m->outputs[0])].name;
        const int64_t count = m->nodes[static_cast<size_t>(m->outputs[0])].output.withBatch(n).numel();
        std::vector<float> ort(static_cast<size_t>(count));
        f.read(reinterpret_cast<char*>(ort.data()), std::streamsize(count * 4));
        QVERIFY(f.good());
        const float step = quant->values.at(outName).scale;
        double worst = 0;
        for (int64_t e = 0; e < count; ++e) worst = std::max(worst, double(std::fabs(ort[size_t(e)] - (*sim)->output(0)[e])));
        // onnxruntime may requantise through its int8 kernels: at most a few grid steps apart.
        qInfo("largest difference onnxruntime vs Kiln's int8 simulation: %.3g (output grid step %.3g)", worst, double(step));
        QVERIFY2(worst <= 3 * step, qPrintable(QString::number(worst)));
    }

private:
    QString m_python;
};

QTEST_GUILESS_MAIN(TestQuantizeInterop)
#include "tst_quantize_interop.moc"
