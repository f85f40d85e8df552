// kiln-test-timeout: 600
// kiln-test-labels: slow
// SPDX-License-Identifier: Apache-2.0
// kiln-export --quantize int8 end to end on a small CSV classifier trained with kiln-train: the
// report (text and --json), model.int8.onnx, model.int8.tflite (also with int8 inputs and
// outputs) and kiln-model.json, percentile calibration, and the exit status and message of every
// refused request (no data, an operator TensorFlow Lite lacks, bad values).
#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <cmath>

#include "../app_test_util.h"

namespace {

using kiln::test::Run;

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

const char* kGraph = R"("graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [8]}},
    {"name": "h1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 64, "activation": "relu"}},
    {"name": "drop", "op": "Dropout", "inputs": ["h1"], "attrs": {"rate": 0.1}},
    {"name": "h2", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 64, "activation": "relu"}},
    {"name": "logits", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 3}}]})";

}  // namespace

class TestKilnExportQuantize : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_project, m_weights;

    Run exportWith(const QStringList& extra, const QString& project = {}) {
        return kiln::test::runProgram("kiln_export/kiln-export", QStringList{project.isEmpty() ? m_project : project, "--weights",
                                                                 m_weights, "--base", m_dir.filePath("repo"),
                                                                 "--threads", "2"} + extra);
    }
    void expectRefusal(const QStringList& extra, const QString& needle, const QString& project = {}) {
        const Run r = exportWith(extra, project);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(needle), qPrintable(QStringLiteral("missing \"%1\" in: %2").arg(needle, r.err)));
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        // Three classes around three centres in 8 dimensions, 300 rows: 240 train, 60 validation.
        QByteArray csv;
        for (int i = 0; i < 300; ++i) {
            const int label = i % 3;
            for (int f = 0; f < 8; ++f)
                csv += QByteArray::number((f % 3 == label ? 2.0 : -1.0) + std::sin(i * 12.9898 + f * 78.233) * 1.2, 'f', 4) + ',';
            csv += QByteArray::number(label) + '\n';
        }
        write(m_dir, "blobs.csv", csv);
        m_project = write(m_dir, "blobs.kiln", QByteArray(R"({"format": "kiln-project", "version": 2, "name": "blobs", )") + kGraph + R"(,
  "data": {"format": "csv", "path": "blobs.csv", "split": {"validation": 0.2}},
  "training": {"epochs": 5, "batch_size": 32, "seed": 1, "optimizer": {"type": "adam", "learning_rate": 0.01},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}})");
        const QString run = m_dir.filePath("run");
        const Run t = kiln::test::runProgram("kiln-train", {m_project, "--run-dir", run, "--quiet", "--run-store", "none",
                                                            "--threads", "2"});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        m_weights = run + "/weights.safetensors";
    }

    void int8ReportAndFiles() {
        const Run r = exportWith({"--name", "blobs", "--formats", "onnx,kiln", "--quantize", "int8",
                                  "--calibration-samples", "100", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object();
        const QJsonObject q = j["quantization"].toObject();
        QCOMPARE(q["type"].toString(), QString("int8"));
        QCOMPARE(q["calibration_samples"].toInt(), 100);
        QCOMPARE(q["split"].toString(), QString("validation"));
        QCOMPARE(q["samples"].toInt(), 60);
        QCOMPARE(q["metric"].toString(), QString("accuracy"));
        const double f = q["float"].toDouble(), i8 = q["int8"].toDouble();
        QVERIFY(f > 0.8);  // separable blobs after 5 epochs
        QVERIFY(std::fabs(q["drop"].toDouble() - (f - i8)) < 1e-12);
        // Accuracies are counts over 60 samples.
        QVERIFY(std::fabs(f * 60 - std::round(f * 60)) < 1e-9 && std::fabs(i8 * 60 - std::round(i8 * 60)) < 1e-9);
        QVERIFY(q["agreement"].toDouble() >= 0.9 && q["agreement"].toDouble() <= 1.0);
        QVERIFY(q["max_abs_diff"].toDouble() > 0);  // the int8 model really is another model
        const QString dir = j["version_dir"].toString();
        QCOMPARE(qint64(q["int8_bytes"].toDouble()), QFileInfo(dir + "/model.int8.onnx").size());
        QCOMPARE(qint64(q["float_bytes"].toDouble()), QFileInfo(dir + "/model.onnx").size());
        QVERIFY(q["int8_bytes"].toDouble() < 0.5 * q["float_bytes"].toDouble());
        QVERIFY(j["files"].toVariant().toStringList().contains("model.int8.onnx"));
        QFile desc(dir + "/kiln-model.json");
        QVERIFY(desc.open(QIODevice::ReadOnly));
        const QJsonObject meta = QJsonDocument::fromJson(desc.readAll()).object();
        QCOMPARE(meta["quantization"].toObject()["int8"].toDouble(), i8);
        QCOMPARE(meta["files"].toObject()["onnx_int8"].toString(), QString("model.int8.onnx"));

        // The same export in words.
        const Run t = exportWith({"--name", "blobs", "--formats", "onnx", "--quantize", "int8"});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        QVERIFY2(t.out.contains("Int8 model.int8.onnx: accuracy") && t.out.contains("drop") && t.out.contains("top-1 agreement") &&
                     t.out.contains("model.int8.onnx"),
                 qPrintable(t.out));
        // The default: 200 of the 240 training samples calibrate.
        QVERIFY2(t.out.contains("calibrated on 200 training samples"), qPrintable(t.out));
        // Without --quantize nothing int8 is written or said.
        const Run plain = exportWith({"--name", "blobs", "--formats", "onnx", "--json"});
        QCOMPARE(plain.exitCode, 0);
        const QJsonObject pj = QJsonDocument::fromJson(plain.out.trimmed().toUtf8()).object();
        QVERIFY(!pj.contains("quantization"));
        QVERIFY(!QFileInfo::exists(pj["version_dir"].toString() + "/model.int8.onnx"));
    }

    void int8TfliteBesideOnnx() {
        const Run r = exportWith({"--name", "both", "--formats", "onnx,tflite", "--quantize", "int8", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object();
        const QJsonObject q = j["quantization"].toObject();
        const QJsonArray models = q["models"].toArray();
        QCOMPARE(models.size(), 2);
        // The top level describes the first file, ONNX.
        QCOMPARE(q["file"].toString(), QString("model.int8.onnx"));
        const QJsonObject onnx = models[0].toObject(), tflite = models[1].toObject();
        QCOMPARE(onnx["format"].toString(), QString("onnx"));
        QCOMPARE(tflite["format"].toString(), QString("tflite"));
        QCOMPARE(tflite["file"].toString(), QString("model.int8.tflite"));
        QVERIFY(tflite["scheme"].toString().startsWith("full integer"));
        QCOMPARE(onnx["int8"].toDouble(), q["int8"].toDouble());
        // Both compare against the same float model on the same 60 samples.
        const double i8 = tflite["int8"].toDouble();
        QVERIFY(std::fabs(i8 * 60 - std::round(i8 * 60)) < 1e-9);
        QVERIFY(std::fabs(tflite["drop"].toDouble() - (q["float"].toDouble() - i8)) < 1e-12);
        QVERIFY(tflite["agreement"].toDouble() >= 0.9);
        const QString dir = j["version_dir"].toString();
        QCOMPARE(qint64(tflite["int8_bytes"].toDouble()), QFileInfo(dir + "/model.int8.tflite").size());
        QCOMPARE(qint64(tflite["float_bytes"].toDouble()), QFileInfo(dir + "/model.tflite").size());
        QVERIFY(QFileInfo::exists(dir + "/model.int8.onnx"));
        QFile desc(dir + "/kiln-model.json");
        QVERIFY(desc.open(QIODevice::ReadOnly));
        const QJsonObject meta = QJsonDocument::fromJson(desc.readAll()).object();
        QCOMPARE(meta["files"].toObject()["tflite_int8"].toString(), QString("model.int8.tflite"));
        QCOMPARE(meta["quantization"].toObject()["models"].toArray().size(), 2);

        // TensorFlow Lite alone, in words.
        const Run t = exportWith({"--name", "tfl", "--format", "tflite", "--quantize", "int8"});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        QVERIFY2(t.out.contains("Int8 model.int8.tflite: accuracy") && t.out.contains("model.tflite") &&
                     !t.out.contains("model.int8.onnx"),
                 qPrintable(t.out));
    }

    // --int8-io: model.int8.tflite's edges are int8; the report and kiln-model.json give each
    // edge's scale and zero point, the same as the float-edged file's calibration.
    void int8InputsAndOutputs() {
        const Run r = exportWith({"--name", "io", "--format", "tflite", "--quantize", "int8", "--int8-io", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object();
        const QJsonObject m = j["quantization"].toObject()["models"].toArray()[0].toObject();
        QCOMPARE(m["input_output_type"].toString(), QString("int8"));
        QVERIFY(m["scheme"].toString().endsWith("int8 inputs and outputs"));
        const QJsonArray ins = m["inputs"].toArray(), outs = m["outputs"].toArray();
        QCOMPARE(ins.size(), 1);
        QCOMPARE(outs.size(), 1);
        QCOMPARE(ins[0].toObject()["name"].toString(), QString("x"));
        QCOMPARE(outs[0].toObject()["name"].toString(), QString("logits"));
        for (const auto& e : {ins[0].toObject(), outs[0].toObject()}) {
            QCOMPARE(e["dtype"].toString(), QString("int8"));
            QVERIFY(e["scale"].toDouble() > 0.0);
            QVERIFY(e["zero_point"].toInt() >= -128 && e["zero_point"].toInt() <= 127);
        }
        QFile desc(j["version_dir"].toString() + "/kiln-model.json");
        QVERIFY(desc.open(QIODevice::ReadOnly));
        const QJsonObject meta = QJsonDocument::fromJson(desc.readAll()).object();
        QCOMPARE(meta["quantization"].toObject()["models"].toArray()[0].toObject()["inputs"].toArray(), ins);

        const Run t = exportWith({"--name", "io", "--format", "tflite", "--quantize", "int8", "--int8-io"});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        QVERIFY2(t.out.contains("Int8 model.int8.tflite: input x is int8, scale ") &&
                     t.out.contains("Int8 model.int8.tflite: output logits is int8, scale "),
                 qPrintable(t.out));
        // Without the option the edges stay float32.
        const Run f = exportWith({"--name", "io", "--format", "tflite", "--quantize", "int8", "--json"});
        QVERIFY2(f.exitCode == 0, qPrintable(f.err));
        const QJsonObject fm = QJsonDocument::fromJson(f.out.trimmed().toUtf8()).object()["quantization"].toObject()["models"].toArray()[0].toObject();
        QCOMPARE(fm["input_output_type"].toString(), QString("float32"));
        QVERIFY(!fm.contains("inputs"));
    }

    // --calibration percentile: ranges clipped to the 99.99th percentile of |x|; the report says
    // so and kiln-model.json records the method. Min/max is the default and says so too.
    void percentileCalibration() {
        const Run r = exportWith({"--name", "pct", "--formats", "onnx", "--quantize", "int8", "--calibration", "percentile", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject q = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object()["quantization"].toObject();
        QCOMPARE(q["calibration"].toString(), QString("percentile"));
        QCOMPARE(q["percentile"].toDouble(), 99.99);
        QVERIFY(q["agreement"].toDouble() >= 0.9);
        const Run p = exportWith({"--name", "pct", "--formats", "onnx", "--quantize", "int8", "--calibration", "percentile",
                                  "--calibration-percentile", "99.5"});
        QVERIFY2(p.exitCode == 0, qPrintable(p.err));
        QVERIFY2(p.out.contains("ranges clipped to the 99.5th percentile of |x|"), qPrintable(p.out));
        const Run m = exportWith({"--name", "pct", "--formats", "onnx", "--quantize", "int8", "--json"});
        QVERIFY2(m.exitCode == 0, qPrintable(m.err));
        const QJsonObject mq = QJsonDocument::fromJson(m.out.trimmed().toUtf8()).object()["quantization"].toObject();
        QCOMPARE(mq["calibration"].toString(), QString("min_max"));
        QVERIFY(!mq.contains("percentile"));
    }

    void refusals() {
        expectRefusal({"--format", "tflite", "--int8-io"}, "--int8-io needs --quantize int8");
        expectRefusal({"--formats", "onnx", "--quantize", "int8", "--int8-io"}, "--int8-io needs the tflite format");
        expectRefusal({"--quantize", "int8", "--calibration", "mean"}, "--calibration must be minmax or percentile");
        expectRefusal({"--calibration", "percentile"}, "need --quantize int8");
        expectRefusal({"--quantize", "int8", "--calibration-percentile", "99"}, "--calibration-percentile needs --calibration percentile");
        expectRefusal({"--quantize", "int8", "--calibration", "percentile", "--calibration-percentile", "20"},
                      "--calibration-percentile must be a number from 50 to 100");
        expectRefusal({"--formats", "savedmodel", "--quantize", "int8"}, "needs the onnx or the tflite format");
        // An operator TensorFlow Lite has no builtin for: refused naming the node, before the
        // weights are read or anything is calibrated.
        const QString norm = write(m_dir, "norm.kiln", QByteArray(R"({"format": "kiln-project", "version": 2, "name": "norm",
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [8]}},
    {"name": "h1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 16, "activation": "relu"}},
    {"name": "ln", "op": "LayerNormalization", "inputs": ["h1"]},
    {"name": "logits", "op": "Dense", "inputs": ["ln"], "attrs": {"units": 3}}]},
  "data": {"format": "csv", "path": "blobs.csv", "split": {"validation": 0.2}},
  "training": {"epochs": 1, "batch_size": 32, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}})"));
        expectRefusal({"--formats", "tflite", "--quantize", "int8"}, "\"ln\"", norm);
        expectRefusal({"--formats", "tflite", "--quantize", "int8"}, "TensorFlow Lite", norm);
        QVERIFY(!QFileInfo::exists(m_dir.filePath("repo/norm")) || QDir(m_dir.filePath("repo/norm")).isEmpty());
        expectRefusal({"--quantize", "int4"}, "--quantize must be none or int8");
        expectRefusal({"--quantize", "int8", "--calibration-samples", "0"}, "--calibration-samples");
        expectRefusal({"--quantize", "int8", "--calibration-samples", "x"}, "--calibration-samples");
        expectRefusal({"--calibration-samples", "10"}, "--calibration-samples needs --quantize int8");
        // A project without data: nothing to calibrate with; the message names the file and "data".
        const QString noData = write(m_dir, "nodata.kiln", QByteArray(R"({"format": "kiln-project", "version": 2, "name": "nodata", )") +
                                                              kGraph + R"(,
  "training": {"epochs": 1, "batch_size": 32, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}})");
        expectRefusal({"--quantize", "int8"}, "no data to calibrate", noData);
        expectRefusal({"--quantize", "int8"}, "nodata.kiln", noData);
        QVERIFY(!QFileInfo::exists(m_dir.filePath("repo/nodata")) || QDir(m_dir.filePath("repo/nodata")).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestKilnExportQuantize)
#include "tst_kiln_export_quantize.moc"
