// SPDX-License-Identifier: Apache-2.0
// `mpirun -np 2 kiln-train`: two CPU processes, each training on half of every global batch,
// end with the same weights as one process with the same global batch (a model with a
// synchronised BatchNormalization, shuffled data, Adam, validation each epoch); only rank 0
// prints and writes (run folder, checkpoints, TensorBoard, CSV log, run store); a global batch
// that does not split over the ranks is an error naming both numbers; a sweep is refused (exit 2)
// instead of running once per rank. Skips without mpirun.
// kiln-test-labels: mpi slow
// kiln-test-timeout: 600
#include <QtTest>

#include <QDir>
#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>

#include "app_test_util.h"
#include "engine/io/safetensors.h"

namespace {

using kiln::test::Run;

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) qFatal("cannot write %s", qPrintable(path));
    return path;
}

// 200 samples (150 for training after the validation split), batches of 16: steps of 16 rows and
// a last one of 6, all of which split evenly over 2 processes.
QByteArray project() {
    return R"({
  "format": "kiln-project", "version": 2, "name": "mpi-blobs",
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [4]}},
    {"name": "hidden", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "use_bias": false}},
    {"name": "bn", "op": "BatchNormalization", "inputs": ["hidden"], "attrs": {"synchronized": true}},
    {"name": "act", "op": "ReLU", "inputs": ["bn"]},
    {"name": "logits", "op": "Dense", "inputs": ["act"], "attrs": {"units": 2}}]},
  "data": {"format": "csv", "path": "blobs.csv", "split": {"validation": 0.25}},
  "training": {"epochs": 3, "batch_size": 16, "seed": 5, "shuffle": true,
    "optimizer": {"type": "adam", "learning_rate": 0.01},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"],
    "callbacks": [
      {"type": "ModelCheckpoint", "filepath": "checkpoints/epoch{epoch}.safetensors"},
      {"type": "TensorBoard", "log_dir": "tb"},
      {"type": "CSVLogger", "filename": "log.csv"},
      {"type": "EarlyStopping", "monitor": "val_loss", "patience": 5}]}
})";
}

QStringList filesUnder(const QString& dir) {
    QStringList out;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) out << it.next();
    return out;
}

}  // namespace

class TestKilnTrainMpi : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_mpirun;
    QString m_project;

    // mpirun with one program line per rank (Open MPI's "A : B" form); merged output.
    Run mpirun(const QList<QStringList>& ranks) {
        QStringList args{QStringLiteral("--oversubscribe")};
        for (const auto& rank : ranks) {
            if (args.size() > 1) args << QStringLiteral(":");
            args << QStringLiteral("-np") << QStringLiteral("1") << kiln::test::program("kiln-train") << rank;
        }
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
        env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
        env.insert(QStringLiteral("OMPI_MCA_rmaps_base_oversubscribe"), QStringLiteral("1"));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(m_dir.path());
        p.start(m_mpirun, args);
        Run r;
        if (!p.waitForFinished(300000)) {
            p.kill();
            p.waitForFinished();
            return r;
        }
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
        r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
        r.err = QString::fromLocal8Bit(p.readAllStandardError());
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_mpirun = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
        if (m_mpirun.isEmpty()) QSKIP("mpirun is not installed");
        QByteArray csv;
        for (int i = 0; i < 200; ++i) {
            const int label = i % 2;
            for (int f = 0; f < 4; ++f)
                csv += QByteArray::number((label ? 1.0 : -1.0) + std::sin(i * 12.9898 + f * 78.233) * 1.2, 'f', 4) + ',';
            csv += QByteArray::number(label) + '\n';
        }
        write(m_dir, QStringLiteral("blobs.csv"), csv);
        m_project = write(m_dir, QStringLiteral("blobs.kiln"), project());
    }

    void twoRanksMatchOneProcess() {
        const QString single = m_dir.filePath(QStringLiteral("single"));
        const Run one = kiln::test::runProgram(
            "kiln-train", {m_project, QStringLiteral("--quiet"), QStringLiteral("--threads"), QStringLiteral("1"),
                           QStringLiteral("--run-dir"), single, QStringLiteral("--run-store"), QStringLiteral("none")});
        QVERIFY2(one.exitCode == 0, qPrintable(one.err));

        // Each rank is told its own run folder and run store: rank 1 must create neither.
        const QString dir0 = m_dir.filePath(QStringLiteral("rank0")), dir1 = m_dir.filePath(QStringLiteral("rank1"));
        const QString store0 = m_dir.filePath(QStringLiteral("store0.sqlite"));
        const QString store1 = m_dir.filePath(QStringLiteral("store1.sqlite"));
        const Run two = mpirun({{m_project, QStringLiteral("--json"), QStringLiteral("--run-dir"), dir0,
                                 QStringLiteral("--run-store"), store0},
                                {m_project, QStringLiteral("--json"), QStringLiteral("--run-dir"), dir1,
                                 QStringLiteral("--run-store"), store1}});
        QVERIFY2(two.exitCode == 0, qPrintable(two.out + two.err));
        QVERIFY2(two.out.contains(QStringLiteral("Data parallel over 2 processes")), qPrintable(two.out));
        // Only rank 0 prints: one progress line per epoch, one JSON line.
        QCOMPARE(two.out.count(QStringLiteral("Epoch 3/3")), 1);
        int jsonLines = 0;
        QJsonObject results;
        for (const QString& line : two.out.split(QLatin1Char('\n')))
            if (line.startsWith(QLatin1Char('{'))) {
                ++jsonLines;
                results = QJsonDocument::fromJson(line.toUtf8()).object();
            }
        QCOMPARE(jsonLines, 1);
        QCOMPARE(results.value(QStringLiteral("run_dir")).toString(), dir0);

        // Rank 0 wrote the run; rank 1 wrote nothing at all.
        for (const char* f : {"weights.safetensors", "run.json", "log.csv", "checkpoints/epoch3.safetensors"})
            QVERIFY2(QFileInfo::exists(dir0 + QLatin1Char('/') + QLatin1String(f)), f);
        QVERIFY(!filesUnder(dir0 + QStringLiteral("/tb")).isEmpty());
        QVERIFY(QFileInfo::exists(store0));
        QVERIFY2(!QFileInfo::exists(dir1), qPrintable(filesUnder(dir1).join(QLatin1Char(' '))));
        QVERIFY(!QFileInfo::exists(store1));

        auto a = kiln::engine::io::loadSafetensors((single + QStringLiteral("/weights.safetensors")).toStdString());
        auto b = kiln::engine::io::loadSafetensors((dir0 + QStringLiteral("/weights.safetensors")).toStdString());
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->tensors.size(), b->tensors.size());
        QVERIFY(a->tensors.size() >= 6);  // two Dense layers, gamma, beta and the moving statistics
        double worst = 0, moved = 0;
        for (size_t t = 0; t < a->tensors.size(); ++t) {
            QCOMPARE(a->tensors[t].name, b->tensors[t].name);
            const auto& x = a->tensors[t].tensor;
            const auto& y = b->tensors[t].tensor;
            QCOMPARE(x.numel(), y.numel());
            double scale = 0;
            for (int64_t i = 0; i < x.numel(); ++i) scale = std::max(scale, double(std::abs(x.data<float>()[i])));
            for (int64_t i = 0; i < x.numel(); ++i)
                worst = std::max(worst, std::abs(double(x.data<float>()[i]) - double(y.data<float>()[i])) /
                                            std::max(scale, 1e-3));
            moved = std::max(moved, scale);
        }
        qInfo("largest difference between 1 x 16 and 2 x 8 rows, relative to each tensor's largest value: %.3g",
              worst);
        QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
        QVERIFY(moved > 0.1);

        // The printed results are those of the whole batch: the same as one process's.
        QFile run(single + QStringLiteral("/run.json"));
        QVERIFY(run.open(QIODevice::ReadOnly));
        const QJsonObject summary = QJsonDocument::fromJson(run.readAll()).object();
        const QJsonObject oneResults = summary.value(QStringLiteral("results")).toObject();
        for (const char* key : {"train_loss", "val_loss", "val_accuracy"})
            QVERIFY2(std::abs(oneResults.value(QLatin1String(key)).toDouble() - results.value(QLatin1String(key)).toDouble()) <
                         1e-4,
                     key);
    }

    void batchMustSplitOverRanks() {
        const Run r = mpirun({{m_project, QStringLiteral("--quiet"), QStringLiteral("--batch-size"), QStringLiteral("15"),
                               QStringLiteral("--run-store"), QStringLiteral("none")},
                              {m_project, QStringLiteral("--quiet"), QStringLiteral("--batch-size"), QStringLiteral("15"),
                               QStringLiteral("--run-store"), QStringLiteral("none")}});
        QVERIFY2(r.exitCode != 0, qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("15")) && r.err.contains(QStringLiteral("2 processes")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("rank")), qPrintable(r.err));
    }

    void sweepIsRefused() {
        const QString spec = write(m_dir, QStringLiteral("sweep.json"),
                                   R"({"parameters": [{"path": "learning_rate", "kind": "choice", "values": [0.01, 0.1]}],
                                       "strategy": "grid", "epochs": 1, "objective": "val_loss"})");
        QStringList args{m_project, QStringLiteral("--sweep"), spec, QStringLiteral("--run-store"), QStringLiteral("none")};
        const Run r = mpirun({args, args});
        // mpirun passes on the ranks' exit status 2.
        QVERIFY2(r.exitCode == 2, qPrintable(QString::number(r.exitCode) + r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("sweep")) && r.err.contains(QStringLiteral("mpirun")), qPrintable(r.err));
        QVERIFY2(!r.out.contains(QStringLiteral("trial")), qPrintable(r.out));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("runs"))) ||
                QDir(m_dir.filePath(QStringLiteral("runs"))).entryList({QStringLiteral("blobs-sweep-*")}, QDir::Dirs).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestKilnTrainMpi)
#include "tst_kiln_train_mpi.moc"
