// kiln-test-timeout: 600
// SPDX-License-Identifier: Apache-2.0
// kiln-eval --explain end to end: a small convolutional project (8x8 pictures whose left or right
// half is bright) is trained with kiln-train, then Grad-CAM and saliency overlays of its test
// split are written as PNG files with their index CSV, and bad explanation options exit 2 with a
// message naming the option, node or class.
#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "app_test_util.h"

namespace {

using kiln::test::program;
using kiln::test::Run;
using kiln::test::writeFile;

Run run(const char* name, const QStringList& args) {
    return kiln::test::runProgram(name, args);
}

// An 8x8 24-bit BMP, bright on the left half (or the right), dark elsewhere, with a little texture.
QByteArray halfBmp8(bool left, int seed) {
    QByteArray b = kiln::test::greyBmp8(0, seed, 0);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
            const bool bright = (x < 4) == left;
            const int v = (bright ? 210 : 40) + ((x * 7 + y * 13 + seed * 5) % 21) - 10;
            for (int k = 0; k < 3; ++k) b[54 + (y * 8 + x) * 3 + k] = char(v);
        }
    return b;
}

// PNG width and height from the IHDR chunk; {0, 0} when the file is not a PNG.
QSize pngSize(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.read(24);
    if (b.size() < 24 || !b.startsWith("\x89PNG\r\n\x1a\n")) return {};
    auto be32 = [&](int at) { return (uchar(b[at]) << 24) | (uchar(b[at + 1]) << 16) | (uchar(b[at + 2]) << 8) | uchar(b[at + 3]); };
    return QSize(be32(16), be32(20));
}

}  // namespace

class TestKilnEvalExplain : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(program("kiln-eval")));
        QVERIFY(m_dir.isValid());
        const QString root = m_dir.filePath(QStringLiteral("pics"));
        for (const char* split : {"train", "test"})
            for (int c = 0; c < 2; ++c)
                for (int i = 0; i < (split[1] == 'r' ? 16 : 4); ++i)
                    writeFile(QStringLiteral("%1/%2/%3/%4.bmp").arg(root, QLatin1String(split), c == 0 ? QStringLiteral("left") : QStringLiteral("right")).arg(i),
                              halfBmp8(c == 0, i + (split[1] == 'e' ? 40 : 0)));
        const QByteArray project =
            "{\"format\": \"kiln-project\", \"version\": 2,\n"
            " \"graph\": {\"nodes\": [\n"
            "  {\"name\": \"image\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 3]}},\n"
            "  {\"name\": \"conv\", \"op\": \"Conv2D\", \"inputs\": [\"image\"], \"attrs\": {\"filters\": 4, \"kernel_size\": 3, \"padding\": \"same\", \"activation\": \"relu\"}},\n"
            "  {\"name\": \"pool\", \"op\": \"MaxPooling2D\", \"inputs\": [\"conv\"]},\n"
            "  {\"name\": \"flat\", \"op\": \"Flatten\", \"inputs\": [\"pool\"]},\n"
            "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"flat\"], \"attrs\": {\"units\": 2}}]},\n"
            " \"data\": {\"format\": \"folder\", \"path\": \"pics\", \"workers\": 1,\n"
            "          \"transforms\": [{\"type\": \"normalize\", \"preset\": \"symmetric\"}]},\n"
            " \"training\": {\"epochs\": 3, \"batch_size\": 8, \"seed\": 3, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01},\n"
            "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n";
        m_project = m_dir.filePath(QStringLiteral("halves.kiln"));
        writeFile(m_project, project);
        m_runDir = m_dir.filePath(QStringLiteral("run"));
        Run t = run("kiln-train", {m_project, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), m_runDir, QStringLiteral("--run-store"),
                                   QStringLiteral("none")});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
    }

    void gradCamOverlaysOfTheTestSplit() {
        const QString out = m_dir.filePath(QStringLiteral("gradcam"));
        Run r = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--explain"), QStringLiteral("gradcam"),
                                  QStringLiteral("--overlays"), out, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray records = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object().value(QStringLiteral("overlays")).toArray();
        QCOMPARE(records.size(), 8);
        int correct = 0;
        for (int i = 0; i < records.size(); ++i) {
            const QJsonObject o = records[i].toObject();
            QCOMPARE(o.value(QStringLiteral("index")).toInt(), i);
            QVERIFY(o.value(QStringLiteral("source")).toString().endsWith(QStringLiteral(".bmp")));
            QCOMPARE(o.value(QStringLiteral("explained_class")).toInt(), o.value(QStringLiteral("predicted_class")).toInt());
            correct += o.value(QStringLiteral("predicted_class")).toInt() == o.value(QStringLiteral("true_class")).toInt();
            QCOMPARE(pngSize(o.value(QStringLiteral("file")).toString()), QSize(8, 8));
        }
        QVERIFY2(correct >= 6, qPrintable(r.out));  // the model learnt the task
        QFile csv(out + QStringLiteral("/overlays.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 9);
        QVERIFY(lines[0].startsWith(QStringLiteral("index,source,true_class")));
        QCOMPARE(QDir(out).entryList({QStringLiteral("*.png")}).size(), 8);
    }

    void saliencyForAChosenClassAndLimit() {
        const QString out = m_dir.filePath(QStringLiteral("saliency"));
        Run r = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--explain"), QStringLiteral("saliency"),
                                  QStringLiteral("--class"), QStringLiteral("1"), QStringLiteral("--max-samples"), QStringLiteral("3"),
                                  QStringLiteral("--opacity"), QStringLiteral("0.8"), QStringLiteral("--overlays"), out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("3")), qPrintable(r.out));
        QCOMPARE(QDir(out).entryList({QStringLiteral("*.png")}).size(), 3);
        QFile csv(out + QStringLiteral("/overlays.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);
        for (int i = 1; i < lines.size(); ++i) QCOMPARE(lines[i].split(QLatin1Char(','))[4], QStringLiteral("1"));
        // Another layer at its own resolution still gives pictures of the input's size.
        const QString pooled = m_dir.filePath(QStringLiteral("pooled"));
        Run p = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--explain"), QStringLiteral("gradcam"),
                                  QStringLiteral("--layer"), QStringLiteral("pool"), QStringLiteral("--max-samples"), QStringLiteral("1"),
                                  QStringLiteral("--overlays"), pooled});
        QVERIFY2(p.exitCode == 0, qPrintable(p.err));
        QCOMPARE(pngSize(pooled + QStringLiteral("/00000.png")), QSize(8, 8));
    }

    void badExplanationOptionsExitTwo() {
        const QString out = m_dir.filePath(QStringLiteral("bad"));
        const QStringList base{m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--overlays"), out};
        Run method = run("kiln-eval", base + QStringList{QStringLiteral("--explain"), QStringLiteral("lime")});
        QCOMPARE(method.exitCode, 2);
        QVERIFY2(method.err.contains(QStringLiteral("lime")), qPrintable(method.err));
        Run layer = run("kiln-eval", base + QStringList{QStringLiteral("--explain"), QStringLiteral("gradcam"), QStringLiteral("--layer"), QStringLiteral("flat")});
        QCOMPARE(layer.exitCode, 2);
        QVERIFY2(layer.err.contains(QStringLiteral("flat")), qPrintable(layer.err));
        Run cls = run("kiln-eval", base + QStringList{QStringLiteral("--explain"), QStringLiteral("gradcam"), QStringLiteral("--class"), QStringLiteral("7")});
        QCOMPARE(cls.exitCode, 2);
        QVERIFY2(cls.err.contains(QStringLiteral("7")), qPrintable(cls.err));
        Run noDir = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--explain"), QStringLiteral("saliency")});
        QCOMPARE(noDir.exitCode, 2);
        QVERIFY2(noDir.err.contains(QStringLiteral("--overlays")), qPrintable(noDir.err));
        Run stray = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--layer"), QStringLiteral("conv")});
        QCOMPARE(stray.exitCode, 2);
        QVERIFY2(stray.err.contains(QStringLiteral("--explain")), qPrintable(stray.err));
    }

private:
    QTemporaryDir m_dir;
    QString m_project;
    QString m_runDir;
};

QTEST_GUILESS_MAIN(TestKilnEvalExplain)
#include "tst_kiln_eval_explain.moc"
