// SPDX-License-Identifier: Apache-2.0
// The texture transfer-learning example end to end, small: tools/texture_set.py draws a tiny
// picture set, kiln-import brings in the cached EfficientNet-Lite0 ONNX file with a new head (and
// writes the backbone's weights), tools/pretrained/texture_transfer_project.py makes the example's
// project of it, and one kiln-train run trains its two stages (head only, then the top blocks) for
// an epoch each from those weights. The run's history must show the stage boundary and the test
// accuracy must be clearly above chance. Skips when the ONNX file (tools/fetch_pretrained.sh), the
// textures (tools/fetch_data.sh) or a Python with numpy and Pillow are missing.
// kiln-test-labels: slow
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include "tests/app/app_test_util.h"
#include "tests/test_data.h"

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

bool pythonHasNumpyAndPil() {
    QProcess p;
    p.start(kPython, {QStringLiteral("-c"), QStringLiteral("import numpy, PIL")});
    return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

kiln::test::Run runPython(const QStringList& args) {
    QProcess p;
    p.start(kPython, args);
    kiln::test::Run r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
    r.err = QString::fromLocal8Bit(p.readAllStandardError());
    return r;
}

}  // namespace

class TestTextureTransfer : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_onnx, m_textures;

private slots:
    void initTestCase() {
        const QString base = kiln::test::dataDir();
        m_onnx = base + QStringLiteral("/pretrained/efficientnet-lite0/efficientnet-lite0.onnx");
        m_textures = base + QStringLiteral("/textures");
        if (!QFile::exists(m_onnx)) QSKIP(qPrintable(m_onnx + QStringLiteral(" is missing; run tools/fetch_pretrained.sh")));
        for (const char* t : {"brick", "grass", "gravel"})
            if (!QFile::exists(m_textures + QStringLiteral("/%1.png").arg(QLatin1String(t))))
                QSKIP("the scikit-image textures are not cached; run tools/fetch_data.sh");
        if (!pythonHasNumpyAndPil()) QSKIP("/usr/bin/python3 cannot import numpy and PIL (Debian: python3-numpy, python3-pil)");
        QVERIFY(m_dir.isValid());
    }

    // The generator is deterministic: the same seed writes the same pictures, another seed others.
    void pictureSetIsDeterministic() {
        const QString script = QStringLiteral(KILN_SOURCE_DIR "/tools/texture_set.py");
        const QString a = m_dir.filePath(QStringLiteral("a")), b = m_dir.filePath(QStringLiteral("b")),
                      c = m_dir.filePath(QStringLiteral("c"));
        for (const auto& [out, seed] : {std::pair{a, 3}, std::pair{b, 3}, std::pair{c, 4}}) {
            auto r = runPython({script, m_textures, out, QStringLiteral("--per-class"), QStringLiteral("10"), QStringLiteral("--size"),
                                QStringLiteral("32"), QStringLiteral("--seed"), QString::number(seed)});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        }
        for (const char* split : {"train", "val", "test"})
            for (const char* cls : {"brick", "grass", "gravel", "scratch", "spot"})
                QVERIFY2(!QDir(a + QStringLiteral("/%1/%2").arg(QLatin1String(split), QLatin1String(cls)))
                              .entryList({QStringLiteral("*.png")})
                              .isEmpty(),
                         split);
        auto bytes = [](const QString& f) {
            QFile file(f);
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const QString one = QStringLiteral("/train/spot/train_0000.png");
        QVERIFY(!bytes(a + one).isEmpty());
        QCOMPARE(bytes(a + one), bytes(b + one));
        QVERIFY(bytes(a + one) != bytes(c + one));

        // Bad input is named, not a crash.
        auto bad = runPython({script, m_dir.filePath(QStringLiteral("nowhere")), m_dir.filePath(QStringLiteral("d"))});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(QStringLiteral("brick.png")), qPrintable(bad.err));
    }

    void stagedRunFromPretrainedWeights() {
        const QString set = m_dir.filePath(QStringLiteral("set"));
        auto gen = runPython({QStringLiteral(KILN_SOURCE_DIR "/tools/texture_set.py"), m_textures, set, QStringLiteral("--per-class"),
                              QStringLiteral("40"), QStringLiteral("--size"), QStringLiteral("64")});
        QVERIFY2(gen.exitCode == 0, qPrintable(gen.err));

        const QString imported = m_dir.filePath(QStringLiteral("imported.kiln"));
        auto imp = kiln::test::runProgram("kiln-import", {m_onnx, QStringLiteral("-o"), imported, QStringLiteral("--replace-head-after"),
                                                          QStringLiteral("conv2d_32"), QStringLiteral("--classes"), QStringLiteral("5")});
        QVERIFY2(imp.exitCode == 0, qPrintable(imp.err));
        // The backbone's weights as the import wrote them, without the removed classifier.
        const QString weights = m_dir.filePath(QStringLiteral("imported.safetensors"));
        QVERIFY(QFile::exists(weights));

        const QString project = m_dir.filePath(QStringLiteral("texture.kiln"));
        auto make = runPython({QStringLiteral(KILN_SOURCE_DIR "/tools/pretrained/texture_transfer_project.py"), imported, project,
                               QStringLiteral("--size"), QStringLiteral("64"), QStringLiteral("--data"), set, QStringLiteral("--weights"),
                               weights, QStringLiteral("--head-epochs"), QStringLiteral("1"), QStringLiteral("--top-epochs"),
                               QStringLiteral("1"), QStringLiteral("--learning-rate"), QStringLiteral("0.005")});
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));

        const QString runDir = m_dir.filePath(QStringLiteral("run"));
        auto train = kiln::test::runProgram("kiln-train", {project, QStringLiteral("--weights"), weights, QStringLiteral("--weights-partial"),
                                                           QStringLiteral("--run-dir"), runDir, QStringLiteral("--run-store"),
                                                           QStringLiteral("none"), QStringLiteral("--json")});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err + train.out));
        QVERIFY2(train.out.contains(QStringLiteral("Stage 2/2 \"top blocks\"")), qPrintable(train.out));

        const QJsonObject result =
            QJsonDocument::fromJson(train.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        // Every backbone tensor loaded; only the new head starts from its initialisers.
        const QJsonObject report = result.value(QStringLiteral("weights_report")).toObject();
        QCOMPARE(report.value(QStringLiteral("initialised")).toArray().size(), 2);
        QCOMPARE(report.value(QStringLiteral("mismatched")).toArray().size(), 0);
        QCOMPARE(report.value(QStringLiteral("loaded")).toArray().size(), 98);
        QCOMPARE(report.value(QStringLiteral("unused")).toArray().size(), 0);

        QFile runJson(runDir + QStringLiteral("/run.json"));
        QVERIFY(runJson.open(QIODevice::ReadOnly));
        const QJsonArray history = QJsonDocument::fromJson(runJson.readAll()).object().value(QStringLiteral("history")).toArray();
        QCOMPARE(history.size(), 2);
        QCOMPARE(history[0].toObject().value(QStringLiteral("stage")).toInt(), 0);
        QCOMPARE(history[0].toObject().value(QStringLiteral("stage_name")).toString(), QStringLiteral("head only"));
        QCOMPARE(history[1].toObject().value(QStringLiteral("stage")).toInt(), 1);
        QCOMPARE(history[1].toObject().value(QStringLiteral("stage_name")).toString(), QStringLiteral("top blocks"));

        // Five classes, six test pictures each: chance is 0.2.
        const double accuracy = result.value(QStringLiteral("test_accuracy")).toDouble(-1);
        qInfo("test accuracy after one epoch per stage: %.3f", accuracy);
        QVERIFY2(accuracy >= 0.4, qPrintable(QStringLiteral("test accuracy %1 is not clearly above chance (0.2)").arg(accuracy)));
    }
};

QTEST_APPLESS_MAIN(TestTextureTransfer)
#include "tst_texture_transfer.moc"
