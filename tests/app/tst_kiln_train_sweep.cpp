// kiln-test-timeout: 300
// SPDX-License-Identifier: Apache-2.0
// kiln-train --sweep end to end on the bundled two-tower example: the results table and the best
// trial, the JSON line, --apply-best -o writing the project with the best parameters, every trial
// recorded in the project's run store with the sweep id, and bad input exiting 2 with the JSON
// path of the problem. Started as one of several processes of an MPI launch (the launcher's
// variables set), a sweep is refused with exit 2 before any trial runs.
#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "app_test_util.h"
#include "engine/io/project.h"
#include "engine/store/run_store.h"

namespace {

using kiln::test::program;
using kiln::test::Run;
using kiln::test::runProgram;
using kiln::test::writeFile;

const QByteArray kSpec = R"({
  "parameters": [
    {"path": "learning_rate", "kind": "choice", "values": [0.0002, 0.004]},
    {"path": "nodes.a_fc1.units", "kind": "int_uniform", "min": 8, "max": 24}
  ],
  "strategy": "grid", "grid_points": 2, "epochs": 5,
  "objective": {"metric": "val_accuracy", "mode": "max"}
})";

}  // namespace

class TestKilnTrainSweep : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(QFileInfo::exists(program("kiln-train")));
        const QString data = qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!QFileInfo::exists(data + QStringLiteral("/sklearn/breast_cancer.csv")))
            QSKIP("the breast-cancer table is not cached: run tools/fetch_data.sh");
        QVERIFY(m_dir.isValid());
        m_project = m_dir.filePath(QStringLiteral("two_tower.kiln"));
        QVERIFY(QFile::copy(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/two_tower.kiln"), m_project));
        m_spec = m_dir.filePath(QStringLiteral("sweep.json"));
        writeFile(m_spec, kSpec);
    }

    void tableAndApplyBest() {
        const QString out = m_dir.filePath(QStringLiteral("best.kiln"));
        Run r = runProgram("kiln-train", {m_project, QStringLiteral("--sweep"), m_spec, QStringLiteral("--threads"),
                                          QStringLiteral("1"), QStringLiteral("--apply-best"), QStringLiteral("-o"), out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QLatin1String("trial 4/4")), qPrintable(r.out));
        QVERIFY(r.out.contains(QLatin1String("val_accuracy")));
        // One table row per trial, then the best one.
        const QStringList lines = r.out.split(QLatin1Char('\n'));
        int header = -1;
        for (int i = 0; i < lines.size(); ++i)
            if (lines[i].trimmed().startsWith(QLatin1String("trial ")) && lines[i].contains(QLatin1String("parameters"))) header = i;
        QVERIFY2(header >= 0, qPrintable(r.out));
        for (int k = 1; k <= 4; ++k) {
            QVERIFY(lines[header + k].trimmed().startsWith(QString::number(k)));
            QVERIFY(lines[header + k].contains(QLatin1String("completed")));
        }
        QRegularExpression best(QStringLiteral("Best: trial (\\d), val_accuracy ([0-9.]+)"));
        const auto m = best.match(r.out);
        QVERIFY2(m.hasMatch(), qPrintable(r.out));

        // The written project carries the best trial's parameters and differs from the original.
        auto written = kiln::engine::io::loadProject(out.toStdString());
        QVERIFY(written.ok());
        const int bestTrial = m.captured(1).toInt();
        const double lrs[] = {0.0002, 0.0002, 0.004, 0.004};
        const int64_t units[] = {8, 24, 8, 24};
        QCOMPARE(written->training["optimizer"]["learning_rate"].get<double>(), lrs[bestTrial - 1]);
        QCOMPARE(written->graph.node("a_fc1")->attrs.getInt("units"), units[bestTrial - 1]);

        // Every trial is a run of the project's store, with the sweep's id and parameters.
        auto store = kiln::engine::store::RunStore::open(m_dir.filePath(QStringLiteral(".kiln/runs.sqlite")).toStdString());
        QVERIFY(store.ok());
        auto runs = (*store)->listRuns();
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t(4));
        const auto config = nlohmann::json::parse(runs->front().configJson);
        QVERIFY(config["sweep"]["id"].get<std::string>().rfind("sweep-", 0) == 0);
        QVERIFY(config["sweep"]["params"].contains("nodes.a_fc1.units"));
    }

    void jsonLine() {
        Run r = runProgram("kiln-train", {m_project, QStringLiteral("--sweep"), m_spec, QStringLiteral("--json"),
                                          QStringLiteral("--run-store"), QStringLiteral("none"), QStringLiteral("--threads"),
                                          QStringLiteral("1")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = r.out.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1);
        const QJsonObject j = QJsonDocument::fromJson(lines.last().toUtf8()).object();
        QCOMPARE(j[QStringLiteral("objective")].toString(), QStringLiteral("val_accuracy"));
        QCOMPARE(j[QStringLiteral("mode")].toString(), QStringLiteral("max"));
        const QJsonArray trials = j[QStringLiteral("trials")].toArray();
        QCOMPARE(trials.size(), 4);
        double bestSeen = -1;
        for (const auto& t : trials) {
            const QJsonObject o = t.toObject();
            QCOMPARE(o[QStringLiteral("status")].toString(), QStringLiteral("completed"));
            QCOMPARE(o[QStringLiteral("epochs")].toInt(), 5);
            QCOMPARE(o[QStringLiteral("curve")].toArray().size(), 5);
            bestSeen = std::max(bestSeen, o[QStringLiteral("objective")].toDouble());
        }
        QCOMPARE(j[QStringLiteral("best")].toObject()[QStringLiteral("objective")].toDouble(), bestSeen);
    }

    void badInput_data() {
        QTest::addColumn<QByteArray>("spec");
        QTest::addColumn<QString>("words");
        QTest::newRow("bad kind") << QByteArray(R"({"parameters": [{"path": "learning_rate", "kind": "gauss"}]})")
                                  << QStringLiteral("parameters[0].kind");
        QTest::newRow("no node") << QByteArray(R"({"parameters": [{"path": "nodes.c_fc1.units", "values": [4]}]})")
                                 << QStringLiteral("parameters[0].path");
        QTest::newRow("objective") << QByteArray(R"({"parameters": [{"path": "epochs", "values": [1]}], "objective": "val_f1"})")
                                   << QStringLiteral("objective.metric");
        QTest::newRow("syntax") << QByteArray("{\"parameters\": [\n  {\"path\": }]}") << QStringLiteral("bad.json:2");
    }

    void badInput() {
        QFETCH(QByteArray, spec);
        QFETCH(QString, words);
        const QString path = m_dir.filePath(QStringLiteral("bad.json"));
        writeFile(path, spec);
        Run r = runProgram("kiln-train", {m_project, QStringLiteral("--sweep"), path, QStringLiteral("--run-store"), QStringLiteral("none")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(words), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("bad.json")), qPrintable(r.err));
    }

    void refusedAsOneOfSeveralRanks() {
        QTemporaryDir dir;
        const QString project = dir.filePath(QStringLiteral("two_tower.kiln"));
        QVERIFY(QFile::copy(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/two_tower.kiln"), project));
        // What mpirun -np 2 (Open MPI) or mpiexec (MPICH) tells each process it starts.
        for (const auto& [sizeName, rankName] : {std::pair{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                                 std::pair{"PMI_SIZE", "PMI_RANK"}}) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QLatin1String(sizeName), QStringLiteral("2"));
            env.insert(QLatin1String(rankName), QStringLiteral("1"));
            p.setProcessEnvironment(env);
            p.start(program("kiln-train"), {project, QStringLiteral("--sweep"), m_spec});
            QVERIFY(p.waitForFinished(60000));
            const QString err = QString::fromLocal8Bit(p.readAllStandardError());
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QCOMPARE(p.exitCode(), 2);
            QVERIFY2(err.contains(QLatin1String("sweep")) && err.contains(QLatin1String("mpirun")), qPrintable(err));
            QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("runs"))));
            QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral(".kiln"))));
        }
    }

    void applyBestNeedsOutput() {
        Run r = runProgram("kiln-train", {m_project, QStringLiteral("--sweep"), m_spec, QStringLiteral("--apply-best")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QLatin1String("--output")));
        r = runProgram("kiln-train", {m_project, QStringLiteral("--apply-best"), QStringLiteral("-o"), m_dir.filePath(QStringLiteral("x.kiln"))});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QLatin1String("--sweep")));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("x.kiln"))));
    }

private:
    QTemporaryDir m_dir;
    QString m_project, m_spec;
};

QTEST_GUILESS_MAIN(TestKilnTrainSweep)
#include "tst_kiln_train_sweep.moc"
