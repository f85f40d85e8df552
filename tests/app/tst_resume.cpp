// SPDX-License-Identifier: Apache-2.0
// kiln-test-labels: slow
// Crash-safe resume end to end: kiln-train is killed (SIGKILL) after BackupAndRestore wrote a
// backup, `--resume` continues it, and the final weights are bit-identical to an uninterrupted run
// with the same seed; the run store's loss curve continues from the backup's step with the same
// values, and the CSV log and TensorBoard files are complete.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <random>

#include "engine/store/run_store.h"

using namespace kiln::engine;

namespace {

QString binary() { return QStringLiteral(KILN_BINARY_DIR "/app/kiln-train"); }

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Four Gaussian classes in 32 dimensions.
void writeData(const QString& path) {
    std::mt19937 gen(4);
    std::normal_distribution<double> noise(0.0, 1.0);
    QByteArray csv;
    for (int d = 0; d < 32; ++d) csv += "f" + QByteArray::number(d) + ",";
    csv += "label\n";
    for (int i = 0; i < 6000; ++i) {
        const int c = i % 4;
        for (int d = 0; d < 32; ++d) csv += QByteArray::number((d % 4 == c ? 1.0 : 0.0) + noise(gen), 'g', 6) + ",";
        csv += QByteArray::number(c) + "\n";
    }
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(csv);
}

const QByteArray kProject = R"({
  "format": "kiln-project", "version": 2, "name": "resume",
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [32]}},
    {"name": "h1", "op": "Dense", "inputs": ["x"], "attrs": {"units": 256, "activation": "relu"}},
    {"name": "drop", "op": "Dropout", "inputs": ["h1"], "attrs": {"rate": 0.2}},
    {"name": "h2", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 256, "activation": "relu"}},
    {"name": "logits", "op": "Dense", "inputs": ["h2"], "attrs": {"units": 4}}]},
  "data": {"format": "csv", "path": "data.csv", "header": true, "label_column": "label", "split": {"validation": 0.2}},
  "training": {"epochs": 6, "batch_size": 32, "seed": 11, "optimizer": {"type": "adam", "learning_rate": 0.002},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"],
    "callbacks": [
      {"type": "ReduceLROnPlateau", "monitor": "loss", "patience": 1, "factor": 0.5},
      {"type": "BackupAndRestore", "save_freq": 20},
      {"type": "CSVLogger"},
      {"type": "TensorBoard", "update_freq": 10},
      {"type": "TerminateOnNaN"}]}
})";

int run(const QStringList& args, QString* out = nullptr) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(binary(), args);
    if (!p.waitForFinished(600000)) return -1;
    if (out) *out = QString::fromLocal8Bit(p.readAll());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
}

int64_t backupStep(const QString& dir) {
    for (const QString& d : {dir + QStringLiteral("/backup"), dir + QStringLiteral("/backup.old")}) {
        QByteArray text = readAll(d + QStringLiteral("/state.json"));
        if (!text.isEmpty()) return QJsonDocument::fromJson(text).object()[QStringLiteral("global_step")].toInteger();
    }
    return -1;
}

int64_t runIdFor(store::RunStore& s, const QString& dir) {
    auto runs = s.listRuns();
    for (const auto& r : *runs)
        if (r.runDir == dir.toStdString()) return r.id;
    return 0;
}

}  // namespace

class TstResume : public QObject {
    Q_OBJECT
private slots:
    void killAndResumeIsBitIdentical() {
        QTemporaryDir tmp;
        const QString project = tmp.filePath(QStringLiteral("resume.kiln"));
        QFile pf(project);
        QVERIFY(pf.open(QIODevice::WriteOnly));
        pf.write(kProject);
        pf.close();
        writeData(tmp.filePath(QStringLiteral("data.csv")));
        const QStringList common = {project, QStringLiteral("--quiet"), QStringLiteral("--threads"), QStringLiteral("1")};

        // A: uninterrupted.
        const QString dirA = tmp.filePath(QStringLiteral("runs/a"));
        QString outA;
        QCOMPARE(run(common + QStringList{QStringLiteral("--run-dir"), dirA}, &outA), 0);

        // B: killed with SIGKILL once a backup past step 100 exists, then resumed.
        const QString dirB = tmp.filePath(QStringLiteral("runs/b"));
        QProcess p;
        p.start(binary(), common + QStringList{QStringLiteral("--run-dir"), dirB});
        QVERIFY(p.waitForStarted());
        QElapsedTimer timer;
        timer.start();
        while (backupStep(dirB) < 100 && p.state() == QProcess::Running && timer.elapsed() < 300000) QTest::qSleep(2);
        QVERIFY2(p.state() == QProcess::Running, "kiln-train finished before it could be killed");
        p.kill();
        QVERIFY(p.waitForFinished());
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);
        QVERIFY(!QFileInfo::exists(dirB + QStringLiteral("/weights.safetensors")));
        const int64_t resumedAt = backupStep(dirB);
        QVERIFY(resumedAt >= 100);

        QString outB;
        QCOMPARE(run(QStringList{project, QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--run-dir"), dirB,
                                 QStringLiteral("--resume"), QStringLiteral("--json")},
                     &outB),
                 0);
        QVERIFY2(outB.contains(QStringLiteral("(global step %1)").arg(resumedAt)), qPrintable(outB));
        const QJsonObject json = QJsonDocument::fromJson(outB.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
        QCOMPARE(json[QStringLiteral("resumed_from_step")].toInteger(), resumedAt);
        QCOMPARE(json[QStringLiteral("epochs")].toInt(), 6);

        // Bit-identical final weights.
        const QByteArray wa = readAll(dirA + QStringLiteral("/weights.safetensors"));
        const QByteArray wb = readAll(dirB + QStringLiteral("/weights.safetensors"));
        QVERIFY(wa.size() > 100000);
        QVERIFY2(wa == wb, "the resumed run's weights differ from the uninterrupted run's");

        // The run store: one run per folder; B's curve continues from the backup's step, without
        // gaps or duplicates, with A's values.
        auto s = store::RunStore::open(tmp.filePath(QStringLiteral(".kiln/runs.sqlite")).toStdString());
        QVERIFY(s.ok());
        QCOMPARE((*s)->listRuns()->size(), size_t{2});
        const int64_t a = runIdFor(**s, dirA), b = runIdFor(**s, dirB);
        QVERIFY(a && b);
        QCOMPARE((*s)->run(b)->status, store::RunStatus::Completed);
        auto la = (*s)->series(a, store::MetricScope::Step, "loss");
        auto lb = (*s)->series(b, store::MetricScope::Step, "loss");
        QCOMPARE(la->size(), size_t{6 * 150});
        QCOMPARE(lb->size(), la->size());
        for (size_t i = 0; i < la->size(); ++i) {
            QCOMPARE(lb->at(i).step, static_cast<int64_t>(i + 1));
            QCOMPARE(lb->at(i).value, la->at(i).value);
        }
        // Steps up to the backup were written by the killed process, the rest after the resume.
        QVERIFY(lb->at(static_cast<size_t>(resumedAt)).wallTime > lb->at(static_cast<size_t>(resumedAt - 1)).wallTime);
        auto ea = (*s)->series(a, store::MetricScope::Epoch, "val_loss");
        auto eb = (*s)->series(b, store::MetricScope::Epoch, "val_loss");
        QCOMPARE(eb->size(), size_t{6});
        for (size_t i = 0; i < 6; ++i) QCOMPARE(eb->at(i).value, ea->at(i).value);

        // The CSV log has each epoch once; the backup was removed when training completed.
        const QList<QByteArray> rows = readAll(dirB + QStringLiteral("/training.csv")).trimmed().split('\n');
        QCOMPARE(rows.size(), 7);
        QCOMPARE(rows[0], QByteArray("epoch,accuracy,learning_rate,loss,val_accuracy,val_loss"));
        // Equal to the uninterrupted run's log, except the training accuracy of the epoch the run
        // resumed in, which covers the steps after the backup (the loss mean is carried over).
        const QList<QByteArray> rowsA = readAll(dirA + QStringLiteral("/training.csv")).trimmed().split('\n');
        QCOMPARE(rowsA.size(), rows.size());
        const int resumedEpoch = static_cast<int>(resumedAt / 150);  // 0-based, as in the file
        for (int r = 1; r < rows.size(); ++r) {
            QList<QByteArray> a = rowsA[r].split(','), b = rows[r].split(',');
            if (r - 1 == resumedEpoch && resumedAt % 150 != 0) a[1] = b[1];
            QCOMPARE(b, a);
        }
        QVERIFY(!QFileInfo::exists(dirB + QStringLiteral("/backup")));
        QVERIFY(QDir(dirB + QStringLiteral("/tb/train")).entryList({QStringLiteral("events.out.tfevents.*")}).size() == 2);

        // --resume without a backup is a clear error.
        QString outC;
        QCOMPARE(run(common + QStringList{QStringLiteral("--run-dir"), tmp.filePath(QStringLiteral("runs/none")), QStringLiteral("--resume")}, &outC), 2);
        QVERIFY2(outC.contains(QStringLiteral("no training state")), qPrintable(outC));
    }
};

QTEST_GUILESS_MAIN(TstResume)
#include "tst_resume.moc"
