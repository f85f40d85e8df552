// SPDX-License-Identifier: Apache-2.0
// Export dialog: a real export driven through the buttons (progress, parity shown, files in the
// repository), a refused export (weights of another model), request building and prediction text,
// and, when kiln-serve is built, serving the export and a prediction over loopback HTTP.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_export
#include <QtTest>

#include <QCheckBox>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>

#include "engine/io/project.h"
#include "engine/train/weights.h"
#include "ui/export/export_dialog.h"

using namespace kiln;
using namespace kiln::engine;

namespace {

QString example(const char* name) { return QStringLiteral(KILN_SOURCE_DIR "/resources/examples/%1.kiln").arg(name); }

// Random-initialised weights of an example, as a run would write them.
QString writeWeights(const QString& dir, const char* name) {
    auto p = io::loadProject(example(name).toStdString());
    auto m = ops::analyzeModel(p->graph);
    auto params = exec::ParamStore::create(*m, 3);
    QString path = dir + QStringLiteral("/%1.safetensors").arg(name);
    if (!train::saveWeights(params, path.toStdString()).ok()) qFatal("cannot write weights");
    return path;
}

}  // namespace

class TestExportDialog : public QObject {
    Q_OBJECT

private slots:
    void exportThroughButtons() {
        QTemporaryDir tmp;
        ui::ExportDialog dlg(example("fashion_mlp"));
        dlg.setWeightsPath(writeWeights(tmp.path(), "fashion_mlp"));
        dlg.setBasePath(tmp.path() + QStringLiteral("/repo"));
        dlg.setModelName(QStringLiteral("mlp"));
        dlg.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dlg));
        QSignalSpy done(&dlg, &ui::ExportDialog::exportFinished);
        auto* button = dlg.findChild<QPushButton*>(QStringLiteral("export"));
        QVERIFY(button && button->isEnabled());
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(!button->isEnabled());  // one export at a time
        QVERIFY(done.wait(120000));
        QCOMPARE(done.takeFirst().at(0).toBool(), true);
        QCOMPARE(dlg.versionDir(), tmp.path() + QStringLiteral("/repo/mlp/1"));
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/model.onnx")));
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/saved_model.pb")));
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/kiln-model.json")));
        QVERIFY(dlg.findChild<QLabel*>(QStringLiteral("parity"))->text().contains(QStringLiteral("largest difference")));
        // The request panel is prefilled with an instance of the model's input shape.
        QVERIFY(dlg.findChild<QPlainTextEdit*>(QStringLiteral("request"))->toPlainText().startsWith(QStringLiteral("{\"instances\"")));

        // TensorFlow Lite is off by default.
        QVERIFY(!QFile::exists(dlg.versionDir() + QStringLiteral("/model.tflite")));

        // Again: the next version, with TensorFlow Lite ticked.
        auto* tflite = dlg.findChild<QCheckBox*>(QStringLiteral("tflite"));
        QVERIFY(tflite && !tflite->isChecked());
        tflite->setChecked(true);
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(done.wait(120000));
        QCOMPARE(dlg.versionDir(), tmp.path() + QStringLiteral("/repo/mlp/2"));
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/model.tflite")));
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/model.onnx")));
    }

    void int8Quantisation() {
        // Calibration reads the example's training data.
        QString data = qEnvironmentVariable("KILN_DATA");
        if (data.isEmpty()) data = QDir::homePath() + QStringLiteral("/.cache/kiln/data");
        if (!QFileInfo::exists(data + QStringLiteral("/fashion-mnist/train-images-idx3-ubyte.gz")))
            QSKIP("Fashion-MNIST is not in the data cache");
        QTemporaryDir tmp;
        ui::ExportDialog dlg(example("fashion_mlp"));
        dlg.setWeightsPath(writeWeights(tmp.path(), "fashion_mlp"));
        dlg.setBasePath(tmp.path() + QStringLiteral("/repo"));
        dlg.setModelName(QStringLiteral("mlp"));
        dlg.setFormats(true, false, false, false);
        auto* quantize = dlg.findChild<QComboBox*>(QStringLiteral("quantize"));
        auto* button = dlg.findChild<QPushButton*>(QStringLiteral("export"));
        QVERIFY(quantize && button);
        quantize->setCurrentIndex(quantize->findData(QStringLiteral("int8")));
        QVERIFY(button->isEnabled());
        // Int8 needs ONNX or TensorFlow Lite; with both, both get an int8 twin.
        dlg.setFormats(false, false, true, false);
        QVERIFY(!button->isEnabled());
        dlg.setFormats(false, false, false, true);
        QVERIFY(button->isEnabled());
        // int8 inputs and outputs exist only for TensorFlow Lite.
        auto* int8Io = dlg.findChild<QCheckBox*>(QStringLiteral("int8Io"));
        auto* calibration = dlg.findChild<QComboBox*>(QStringLiteral("calibration"));
        QVERIFY(int8Io && calibration);
        QVERIFY(int8Io->isEnabled());
        dlg.setFormats(true, false, false, false);
        QVERIFY(!int8Io->isEnabled());
        dlg.setFormats(true, false, false, true);
        QVERIFY(int8Io->isEnabled());
        int8Io->setChecked(true);
        calibration->setCurrentIndex(1);  // the 99.99th percentile
        dlg.findChild<QSpinBox*>(QStringLiteral("calibrationSamples"))->setValue(64);
        QSignalSpy done(&dlg, &ui::ExportDialog::exportFinished);
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(done.wait(300000));
        QCOMPARE(done.takeFirst().at(0).toBool(), true);
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/model.int8.onnx")));
        QVERIFY(QFile::exists(dlg.versionDir() + QStringLiteral("/model.int8.tflite")));
        const QString report = dlg.findChild<QLabel*>(QStringLiteral("quantization"))->text();
        QVERIFY2(report.contains(QStringLiteral("model.int8.onnx: int8 accuracy")) &&
                     report.contains(QStringLiteral("model.int8.tflite: int8 accuracy")) &&
                     report.contains(QStringLiteral("64 training samples, ranges clipped to the 99.99th percentile")) &&
                     report.contains(QStringLiteral("model.int8.tflite: input image is int8 with scale")) &&
                     report.contains(QStringLiteral("model.int8.tflite: output logits is int8 with scale")),
                 qPrintable(report));
        QFile desc(dlg.versionDir() + QStringLiteral("/kiln-model.json"));
        QVERIFY(desc.open(QIODevice::ReadOnly));
        const QByteArray meta = desc.readAll();
        QVERIFY2(meta.contains("\"input_output_type\": \"int8\"") || meta.contains("\"input_output_type\":\"int8\""), meta.constData());
        QVERIFY2(meta.contains("\"calibration\": \"percentile\"") || meta.contains("\"calibration\":\"percentile\""), meta.constData());
    }

    void refusedExport() {
        QTemporaryDir tmp;
        ui::ExportDialog dlg(example("fashion_mlp"));
        dlg.setWeightsPath(writeWeights(tmp.path(), "two_tower"));
        dlg.setBasePath(tmp.path() + QStringLiteral("/repo"));
        QSignalSpy done(&dlg, &ui::ExportDialog::exportFinished);
        dlg.startExport();
        QVERIFY(done.wait(60000));
        QCOMPARE(done.takeFirst().at(0).toBool(), false);
        QVERIFY(dlg.findChild<QLabel*>(QStringLiteral("status"))->text().contains(QStringLiteral("failed")));
        QVERIFY(dlg.versionDir().isEmpty());
        QVERIFY(!QDir(tmp.path() + QStringLiteral("/repo/fashion_mlp/1")).exists());
    }

    void requestAndPrediction() {
        QImage img(40, 20, QImage::Format_RGB32);
        img.fill(QColor(255, 255, 255));
        QByteArray body = ui::ExportDialog::imageRequest(img, {-1, 2, 3, 1}, 0.5);
        QCOMPARE(body, QByteArray(R"({"instances":[[[[127.5],[127.5],[127.5]],[[127.5],[127.5],[127.5]]]]})"));
        QVERIFY(ui::ExportDialog::imageRequest(img, {-1, 15}, 1.0).isEmpty());
        QCOMPARE(ui::ExportDialog::describePrediction(R"({"predictions":[[0.1,2.5,0.3]]})", {"a", "b", "c"}),
                 QStringLiteral("Prediction: b (score 2.5)"));
        QVERIFY(ui::ExportDialog::describePrediction(R"({"error":"bad"})", {}).contains(QStringLiteral("bad")));
    }

    void serveAndPredict() {
        if (ui::ExportDialog::findServeProgram().isEmpty()) QSKIP("kiln-serve is not built");
        QTemporaryDir tmp;
        ui::ExportDialog dlg(example("fashion_mlp"));
        dlg.setWeightsPath(writeWeights(tmp.path(), "fashion_mlp"));
        dlg.setBasePath(tmp.path());
        dlg.setModelName(QStringLiteral("fm"));
        dlg.setServePort(18000 + QCoreApplication::applicationPid() % 1000);
        QSignalSpy done(&dlg, &ui::ExportDialog::exportFinished);
        dlg.startExport();
        QVERIFY(done.wait(120000));
        QVERIFY(done.takeFirst().at(0).toBool());
        dlg.startServing();
        QTRY_VERIFY_WITH_TIMEOUT(dlg.isServing(), 10000);
        QSignalSpy predicted(&dlg, &ui::ExportDialog::predictionReceived);
        // The server needs a moment to load the version; retry until it answers with a prediction.
        bool ok = false;
        QString last;
        for (int k = 0; k < 30 && !ok; ++k) {
            dlg.sendRequest();
            QVERIFY(predicted.wait(10000));
            last = predicted.takeFirst().at(0).toString();
            ok = last.startsWith(QStringLiteral("Prediction:"));
            if (!ok) QTest::qWait(500);
        }
        QVERIFY2(ok, qPrintable(last));
        dlg.stopServing();
        QVERIFY(!dlg.isServing());
    }
};

QTEST_MAIN(TestExportDialog)
#include "tst_export_dialog.moc"
