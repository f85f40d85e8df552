// kiln-test-timeout: 600
// SPDX-License-Identifier: Apache-2.0
// Other IDX files for an IDX project (read into memory): a small project of 8x8 pictures in three
// brightness classes is trained with kiln-train; its test files, copied to another folder, are
// evaluated with kiln-eval --split FOLDER and predicted with kiln-predict FILE, each sample
// getting what kiln-eval --split test gave it. A label that is no class of the model and a file
// not named like an IDX file exit 2, naming the file.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>

#include "app_test_util.h"

namespace {

using kiln::test::program;
using kiln::test::Run;
using kiln::test::writeFile;

Run run(const char* name, const QStringList& args) {
    return kiln::test::runProgram(name, args);
}

void putBigEndian(QByteArray& b, quint32 v) {
    for (int k = 3; k >= 0; --k) b += char((v >> (8 * k)) & 0xff);
}

// An IDX images file ([count, 8, 8] bytes) and its labels file: sample i is of class labels[i],
// its grey level 40, 128 or 215 plus a texture that depends on i.
void writeIdx(const QString& images, const QString& labelsPath, const QList<int>& labels) {
    QByteArray img, lab;
    putBigEndian(img, 0x00000803);
    putBigEndian(img, quint32(labels.size()));
    putBigEndian(img, 8);
    putBigEndian(img, 8);
    putBigEndian(lab, 0x00000801);
    putBigEndian(lab, quint32(labels.size()));
    const int levels[3] = {40, 128, 215};
    for (qsizetype i = 0; i < labels.size(); ++i) {
        for (int p = 0; p < 64; ++p)
            img += char(std::clamp(levels[std::clamp(labels[i], 0, 2)] + int((i * 37 + p * 11) % 61) - 30, 0, 255));
        lab += char(labels[i]);
    }
    writeFile(images, img);
    writeFile(labelsPath, lab);
}

struct Sample {
    QString predicted, truth;
    double confidence = 0, loss = 0;
};

// The records of a samples CSV keyed by their index in the split.
QMap<int, Sample> readSamples(const QString& path) {
    QMap<int, Sample> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return out;
    const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split(QLatin1Char('\n'));
    for (qsizetype l = 1; l < lines.size(); ++l) {
        const QStringList cells = lines[l].split(QLatin1Char(','));
        out.insert(cells.value(0).toInt(), Sample{cells.value(3), cells.value(2), cells.value(4).toDouble(), cells.value(5).toDouble()});
    }
    return out;
}

}  // namespace

class TestKilnEvalIdxData : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(program("kiln-eval")));
        QVERIFY(QFileInfo::exists(program("kiln-predict")));
        QVERIFY(m_dir.isValid());
        QList<int> train, test;
        for (int i = 0; i < 60; ++i) train << i % 3;
        for (int i = 0; i < 18; ++i) test << (i * 2) % 3;
        writeIdx(m_dir.filePath(QStringLiteral("data/train-images-idx3-ubyte")), m_dir.filePath(QStringLiteral("data/train-labels-idx1-ubyte")),
                 train);
        writeIdx(m_dir.filePath(QStringLiteral("data/t10k-images-idx3-ubyte")), m_dir.filePath(QStringLiteral("data/t10k-labels-idx1-ubyte")),
                 test);
        // The same test files elsewhere, as other data.
        QDir().mkpath(m_dir.filePath(QStringLiteral("other")));
        for (const char* name : {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
            QVERIFY(QFile::copy(m_dir.filePath(QStringLiteral("data/%1").arg(QLatin1String(name))),
                                m_dir.filePath(QStringLiteral("other/%1").arg(QLatin1String(name)))));
        m_project = m_dir.filePath(QStringLiteral("idx.kiln"));
        writeFile(m_project,
                  "{\"format\": \"kiln-project\", \"version\": 2,\n"
                  " \"graph\": {\"nodes\": [\n"
                  "  {\"name\": \"image\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 1]}},\n"
                  "  {\"name\": \"flat\", \"op\": \"Flatten\", \"inputs\": [\"image\"]},\n"
                  "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"flat\"], \"attrs\": {\"units\": 3}}]},\n"
                  " \"data\": {\"format\": \"idx\",\n"
                  "          \"train\": {\"images\": \"data/train-images-idx3-ubyte\", \"labels\": \"data/train-labels-idx1-ubyte\"},\n"
                  "          \"test\": {\"images\": \"data/t10k-images-idx3-ubyte\", \"labels\": \"data/t10k-labels-idx1-ubyte\"}},\n"
                  " \"training\": {\"epochs\": 2, \"batch_size\": 8, \"seed\": 3, \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.02},\n"
                  "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n");
        m_runDir = m_dir.filePath(QStringLiteral("run"));
        Run t = run("kiln-train", {m_project, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), m_runDir, QStringLiteral("--run-store"),
                                   QStringLiteral("none")});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
        const QString samples = m_dir.filePath(QStringLiteral("test_samples.csv"));
        Run e = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--json"), QStringLiteral("--samples-csv"),
                                  samples, QStringLiteral("--no-cache")});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err));
        m_testReport = QJsonDocument::fromJson(e.out.trimmed().toUtf8()).object();
        m_test = readSamples(samples);
        QCOMPARE(m_test.size(), 18);
    }

    void evaluatesOtherFiles() {
        const QString samples = m_dir.filePath(QStringLiteral("other_samples.csv"));
        Run e = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"), m_dir.filePath(QStringLiteral("other")),
                                  QStringLiteral("--json"), QStringLiteral("--samples-csv"), samples});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err));
        const QJsonObject j = QJsonDocument::fromJson(e.out.trimmed().toUtf8()).object();
        QCOMPARE(j.value(QStringLiteral("samples")).toInt(), 18);
        QCOMPARE(j.value(QStringLiteral("confusion_matrix")), m_testReport.value(QStringLiteral("confusion_matrix")));
        QVERIFY(std::abs(j.value(QStringLiteral("loss")).toDouble() - m_testReport.value(QStringLiteral("loss")).toDouble()) < 1e-6);
        const QMap<int, Sample> got = readSamples(samples);
        QCOMPARE(got.size(), 18);
        for (int i = 0; i < 18; ++i) {
            QCOMPARE(got[i].truth, m_test[i].truth);
            QCOMPARE(got[i].predicted, m_test[i].predicted);
            QVERIFY(std::abs(got[i].confidence - m_test[i].confidence) < 1e-6);
            QVERIFY(std::abs(got[i].loss - m_test[i].loss) < 1e-5);
        }
    }

    void predictsOtherFiles() {
        Run p = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, m_dir.filePath(QStringLiteral("other/t10k-images-idx3-ubyte")),
                                     QStringLiteral("--json")});
        QVERIFY2(p.exitCode == 0, qPrintable(p.err));
        const QJsonArray predictions = QJsonDocument::fromJson(p.out.trimmed().toUtf8()).object().value(QStringLiteral("predictions")).toArray();
        QCOMPARE(predictions.size(), 18);
        for (int i = 0; i < 18; ++i) {
            const QJsonObject row = predictions[i].toObject();
            QCOMPARE(row.value(QStringLiteral("source")).toString(), QStringLiteral("row %1").arg(i + 1));
            QCOMPARE(row.value(QStringLiteral("predicted")).toString(), m_test[i].predicted);
            const double top = row.value(QStringLiteral("top_k")).toArray().at(0).toObject().value(QStringLiteral("probability")).toDouble();
            QVERIFY(std::abs(top - m_test[i].confidence) < 1e-6);
        }
    }

    void badFilesExitTwo() {
        writeIdx(m_dir.filePath(QStringLiteral("bad/x-images-idx3-ubyte")), m_dir.filePath(QStringLiteral("bad/x-labels-idx1-ubyte")), {0, 5});
        Run e = run("kiln-eval", {m_project, QStringLiteral("--weights"), m_runDir, QStringLiteral("--split"),
                                  m_dir.filePath(QStringLiteral("bad/x-images-idx3-ubyte"))});
        QCOMPARE(e.exitCode, 2);
        QVERIFY2(e.err.contains(QStringLiteral("x-labels-idx1-ubyte")) && e.err.contains(QStringLiteral("row 2")) &&
                     e.err.contains(QStringLiteral("0 to 2")),
                 qPrintable(e.err));
        const QString other = m_dir.filePath(QStringLiteral("pictures.bin"));
        writeFile(other, "not idx");
        Run p = run("kiln-predict", {m_project, QStringLiteral("--weights"), m_runDir, other});
        QCOMPARE(p.exitCode, 2);
        QVERIFY2(p.err.contains(QStringLiteral("pictures.bin")), qPrintable(p.err));
    }

private:
    QTemporaryDir m_dir;
    QString m_project;
    QString m_runDir;
    QJsonObject m_testReport;
    QMap<int, Sample> m_test;  // index in the test split -> kiln-eval's record
};

QTEST_GUILESS_MAIN(TestKilnEvalIdxData)
#include "tst_kiln_eval_idx_data.moc"
