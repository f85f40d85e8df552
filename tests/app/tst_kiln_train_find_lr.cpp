// kiln-test-timeout: 300
// SPDX-License-Identifier: Apache-2.0
// kiln-train --find-lr end to end on a small image folder project: the JSON curve starts at 1e-7
// and grows exponentially, the suggestion lies in the range tested, nothing is written (no run
// folder, the weights file unchanged), and bad options exit 2.
#include <QtTest>

#include <QCryptographicHash>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <cmath>

#include "app_test_util.h"

namespace {

using kiln::test::program;
using kiln::test::Run;
using kiln::test::writeFile;

QByteArray hashOf(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

}  // namespace

class TestKilnTrainFindLr : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(program("kiln-train")));
        QVERIFY(m_dir.isValid());
        const int levels[3] = {40, 128, 215};
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 16; ++i)
                writeFile(QStringLiteral("%1/train/c%2/%3.bmp").arg(m_dir.filePath(QStringLiteral("pics"))).arg(c).arg(i),
                          kiln::test::greyBmp8(levels[c], i, 30));
        m_project = m_dir.filePath(QStringLiteral("grey.kiln"));
        writeFile(m_project,
                  "{\"format\": \"kiln-project\", \"version\": 2,\n"
                  " \"graph\": {\"nodes\": [\n"
                  "  {\"name\": \"image\", \"op\": \"Input\", \"attrs\": {\"shape\": [8, 8, 3]}},\n"
                  "  {\"name\": \"flat\", \"op\": \"Flatten\", \"inputs\": [\"image\"]},\n"
                  "  {\"name\": \"h\", \"op\": \"Dense\", \"inputs\": [\"flat\"], \"attrs\": {\"units\": 16, \"activation\": \"relu\"}},\n"
                  "  {\"name\": \"logits\", \"op\": \"Dense\", \"inputs\": [\"h\"], \"attrs\": {\"units\": 3}}]},\n"
                  " \"data\": {\"format\": \"folder\", \"path\": \"pics\", \"workers\": 1,\n"
                  "          \"transforms\": [{\"type\": \"normalize\", \"preset\": \"symmetric\"}]},\n"
                  " \"training\": {\"epochs\": 1, \"batch_size\": 8, \"seed\": 2, \"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.01, \"momentum\": 0.9},\n"
                  "   \"loss\": {\"type\": \"SparseCategoricalCrossentropy\", \"from_logits\": true}}}\n");
        // Weights to start from: one short training run.
        m_runDir = m_dir.filePath(QStringLiteral("run"));
        Run t = kiln::test::runProgram("kiln-train", {m_project, QStringLiteral("--quiet"), QStringLiteral("--run-dir"), m_runDir,
                                                      QStringLiteral("--run-store"), QStringLiteral("none")});
        QVERIFY2(t.exitCode == 0, qPrintable(t.err));
    }

    void jsonCurveAndSuggestion() {
        const QString weights = m_runDir + QStringLiteral("/weights.safetensors");
        const QByteArray before = hashOf(weights);
        QVERIFY(!before.isEmpty());
        const QStringList entries = QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
        Run r = kiln::test::runProgram("kiln-train", {m_project, QStringLiteral("--find-lr"), QStringLiteral("--json"), QStringLiteral("--lr-steps"),
                                                      QStringLiteral("80"), QStringLiteral("--weights"), weights});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.trimmed().toUtf8()).object();
        const QJsonArray points = j.value(QStringLiteral("points")).toArray();
        QVERIFY2(points.size() >= 10 && points.size() <= 80, qPrintable(r.out));
        QVERIFY(std::abs(points[0].toObject().value(QStringLiteral("lr")).toDouble() - 1e-7) < 1e-18);
        const double factor = std::pow(1e8, 1.0 / 79);
        for (int i = 1; i < points.size(); ++i) {
            const double a = points[i - 1].toObject().value(QStringLiteral("lr")).toDouble();
            const double b = points[i].toObject().value(QStringLiteral("lr")).toDouble();
            QVERIFY(std::abs(b / a - factor) < 1e-6);
            QVERIFY(std::isfinite(points[i].toObject().value(QStringLiteral("loss")).toDouble()));
        }
        const QString rule = j.value(QStringLiteral("rule")).toString();
        QVERIFY(rule == QStringLiteral("steepest") || rule == QStringLiteral("min/10"));
        const double suggested = j.value(QStringLiteral("suggested_lr")).toDouble();
        QVERIFY(suggested >= 1e-8 && suggested <= 10);
        QVERIFY(j.value(QStringLiteral("diverged")).isBool());
        // Nothing written: the weights as they were, no new run folder.
        QCOMPARE(hashOf(weights), before);
        QCOMPARE(QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), entries);
    }

    void textOutputAndBadOptions() {
        Run r = kiln::test::runProgram("kiln-train", {m_project, QStringLiteral("--find-lr"), QStringLiteral("--lr-steps"), QStringLiteral("30")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("Suggested learning rate")), qPrintable(r.out));
        Run steps = kiln::test::runProgram("kiln-train", {m_project, QStringLiteral("--find-lr"), QStringLiteral("--lr-steps"), QStringLiteral("1")});
        QCOMPARE(steps.exitCode, 2);
        QVERIFY2(steps.err.contains(QStringLiteral("--lr-steps")), qPrintable(steps.err));
        Run weights = kiln::test::runProgram("kiln-train", {m_project, QStringLiteral("--find-lr"), QStringLiteral("--weights"),
                                                            m_dir.filePath(QStringLiteral("absent.safetensors"))});
        QCOMPARE(weights.exitCode, 2);
        QVERIFY2(weights.err.contains(QStringLiteral("absent.safetensors")), qPrintable(weights.err));
    }

private:
    QTemporaryDir m_dir;
    QString m_project;
    QString m_runDir;
};

QTEST_GUILESS_MAIN(TestKilnTrainFindLr)
#include "tst_kiln_train_find_lr.moc"
