// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_store
// RunStore on a real SQLite file: schema and WAL, create/rename/status/results/delete, listing with
// filter and sort, artifacts, metric series (replacement, truncation, NaN), reopening, a newer
// schema refused, a second connection reading while the first writes, and write throughput.
#include <QtTest>

#include <QTemporaryDir>

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "engine/store/run_store.h"

using namespace kiln::engine;
using namespace kiln::engine::store;

class TstRunStore : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string path(const char* name) { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }

private slots:
    void schemaAndWal() {
        const std::string p = path("sub/dir/runs.sqlite");
        {
            auto s = RunStore::open(p);
            QVERIFY2(s.ok(), s.ok() ? "" : s.error().toString().c_str());
            QVERIFY((*s)->createRun({"first"}).ok());
        }
        sqlite3* d = nullptr;
        QCOMPARE(sqlite3_open(p.c_str(), &d), SQLITE_OK);
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(d, "PRAGMA journal_mode", -1, &st, nullptr);
        QCOMPARE(sqlite3_step(st), SQLITE_ROW);
        QCOMPARE(QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), QStringLiteral("wal"));
        sqlite3_finalize(st);
        sqlite3_prepare_v2(d, "SELECT version FROM schema_version", -1, &st, nullptr);
        QCOMPARE(sqlite3_step(st), SQLITE_ROW);
        QCOMPARE(sqlite3_column_int(st, 0), RunStore::kSchemaVersion);
        QCOMPARE(sqlite3_step(st), SQLITE_DONE);  // one row, also after reopening
        sqlite3_finalize(st);
        // A newer schema is refused with a clear error.
        sqlite3_exec(d, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr);
        sqlite3_close(d);
        auto again = RunStore::open(p);
        QVERIFY(!again.ok());
        QCOMPARE(again.error().code, ErrorCode::UnsupportedFormat);
        QVERIFY(QString::fromStdString(again.error().message).contains(QStringLiteral("99")));
        // Not a database at all.
        const std::string junk = path("junk.sqlite");
        std::ofstream(junk) << std::string(5000, 'x');
        auto bad = RunStore::open(junk);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().file, junk);
    }

    void runsLifecycle() {
        auto s = RunStore::open(path("life.sqlite"));
        QVERIFY(s.ok());
        RunStore& st = **s;
        NewRun nr{"mnist baseline", R"({"epochs":3})", contentHash("graph"), contentHash("data"), "/tmp/runs/1"};
        auto a = st.createRun(nr);
        QVERIFY(a.ok());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        auto b = st.createRun({"Cifar wide", "{}", "", "", ""});
        auto c = st.createRun({"mnist dropout", "{}", "", "", ""});
        QVERIFY(b.ok() && c.ok());
        QVERIFY(*a != *b && *b != *c);

        auto ra = st.run(*a);
        QVERIFY(ra.ok());
        QCOMPARE(ra->name, std::string("mnist baseline"));
        QCOMPARE(ra->status, RunStatus::Running);
        QCOMPARE(ra->configJson, std::string(R"({"epochs":3})"));
        QCOMPARE(ra->graphHash, contentHash("graph"));
        QCOMPARE(ra->graphHash.size(), size_t{16});
        QVERIFY(ra->graphHash != contentHash("graph2"));
        QCOMPARE(ra->runDir, std::string("/tmp/runs/1"));
        QCOMPARE(ra->resultsJson, std::string("{}"));
        QVERIFY(ra->created.size() == 20 && ra->created.back() == 'Z');

        QVERIFY(st.setStatus(*a, RunStatus::Completed).ok());
        QVERIFY(st.setResults(*a, R"({"val_accuracy":0.91})").ok());
        QVERIFY(st.rename(*b, "cifar wide v2").ok());
        QVERIFY(st.setStatus(*c, RunStatus::Failed).ok());
        QCOMPARE(st.run(*a)->status, RunStatus::Completed);
        QCOMPARE(st.run(*a)->resultsJson, std::string(R"({"val_accuracy":0.91})"));
        QCOMPARE(st.run(*b)->name, std::string("cifar wide v2"));
        QVERIFY(!st.rename(12345, "x").ok());
        QVERIFY(!st.run(12345).ok());

        // Listing: newest first by default; filter by name (case-insensitive) and status; sort by name.
        auto all = st.listRuns();
        QCOMPARE(all->size(), size_t{3});
        QCOMPARE(all->front().id, *c);
        RunFilter f;
        f.nameContains = "MNIST";
        QCOMPARE(st.listRuns(f)->size(), size_t{2});
        f.status = RunStatus::Failed;
        auto failed = st.listRuns(f);
        QCOMPARE(failed->size(), size_t{1});
        QCOMPARE(failed->front().id, *c);
        RunFilter byName;
        byName.sortBy = RunFilter::SortBy::Name;
        byName.descending = false;
        auto named = st.listRuns(byName);
        QCOMPARE(named->at(0).name, std::string("cifar wide v2"));
        QCOMPARE(named->at(2).name, std::string("mnist dropout"));
        byName.limit = 1;
        QCOMPARE(st.listRuns(byName)->size(), size_t{1});

        QVERIFY(st.addArtifact(*a, "weights", "/tmp/runs/1/weights.safetensors").ok());
        QVERIFY(st.addArtifact(*a, "tensorboard", "/tmp/runs/1/tb").ok());
        QVERIFY(st.addArtifact(*a, "weights", "/tmp/runs/1/weights.safetensors").ok());  // no duplicate
        QCOMPARE(st.artifacts(*a)->size(), size_t{2});

        QVERIFY(st.logMetrics(*a, MetricScope::Step, 1, {{"loss", 1.0}}).ok());
        QVERIFY(st.deleteRun(*a).ok());
        QVERIFY(!st.run(*a).ok());
        QCOMPARE(st.artifacts(*a)->size(), size_t{0});
        QCOMPARE(st.series(*a, MetricScope::Step, "loss")->size(), size_t{0});
        QCOMPARE(st.listRuns()->size(), size_t{2});
        QVERIFY(!st.deleteRun(*a).ok());
    }

    void metricSeries() {
        const std::string p = path("metrics.sqlite");
        int64_t id = 0;
        {
            auto s = RunStore::open(p);
            id = *(*s)->createRun({"m"});
            for (int step = 1; step <= 100; ++step)
                QVERIFY((*s)->logMetrics(id, MetricScope::Step, step, {{"loss", 1.0 / step}, {"accuracy", step / 100.0}}, 1000.0 + step).ok());
            for (int e = 1; e <= 4; ++e)
                QVERIFY((*s)->logMetrics(id, MetricScope::Epoch, e, {{"loss", 1.0 / e}, {"val_loss", 2.0 / e}}).ok());
            QVERIFY((*s)->logMetrics(id, MetricScope::Step, 101, {{"loss", std::nan("")}}).ok());
            // Not flushed explicitly: the destructor writes the rest.
        }
        auto s = RunStore::open(p);
        RunStore& st = **s;
        auto loss = st.series(id, MetricScope::Step, "loss");
        QCOMPARE(loss->size(), size_t{101});
        QCOMPARE(loss->at(0).step, int64_t{1});
        QCOMPARE(loss->at(9).value, 0.1);
        QCOMPARE(loss->at(9).wallTime, 1010.0);
        QVERIFY(std::isnan(loss->back().value));
        QCOMPARE(*st.metricNames(id, MetricScope::Step), (std::vector<std::string>{"accuracy", "loss"}));
        QCOMPARE(*st.metricNames(id, MetricScope::Epoch), (std::vector<std::string>{"loss", "val_loss"}));
        QCOMPARE(st.series(id, MetricScope::Step, "loss", 95)->size(), size_t{7});
        QCOMPARE(st.series(id, MetricScope::Step, "accuracy", INT64_MIN, 10)->size(), size_t{10});
        auto info = st.run(id);
        QCOMPARE(info->lastStep, int64_t{101});
        QCOMPARE(info->lastEpoch, 4);
        // A resumed run drops what came after its backup and rewrites those steps.
        QVERIFY(st.truncateMetrics(id, 50, 2).ok());
        QCOMPARE(st.series(id, MetricScope::Step, "loss")->size(), size_t{50});
        QCOMPARE(st.series(id, MetricScope::Epoch, "val_loss")->size(), size_t{2});
        QVERIFY(st.logMetrics(id, MetricScope::Step, 50, {{"loss", 7.0}}).ok());
        QCOMPARE(st.series(id, MetricScope::Step, "loss")->back().value, 7.0);
    }

    void readerWhileWriting() {
        const std::string p = path("concurrent.sqlite");
        auto writer = RunStore::open(p);
        auto reader = RunStore::open(p);
        QVERIFY(writer.ok() && reader.ok());
        int64_t id = *(*writer)->createRun({"live"});
        for (int step = 1; step <= 10; ++step) QVERIFY((*writer)->logMetrics(id, MetricScope::Step, step, {{"loss", step}}).ok());
        QVERIFY((*writer)->flush().ok());
        QCOMPARE((*reader)->series(id, MetricScope::Step, "loss")->size(), size_t{10});
        QCOMPARE((*reader)->listRuns()->size(), size_t{1});
    }

    void throughput() {
        auto s = RunStore::open(path("speed.sqlite"));
        int64_t id = *(*s)->createRun({"fast"});
        const int steps = 20000;
        auto t0 = std::chrono::steady_clock::now();
        for (int step = 1; step <= steps; ++step)
            QVERIFY((*s)->logMetrics(id, MetricScope::Step, step, {{"loss", 1.0 / step}, {"accuracy", 0.5}, {"learning_rate", 1e-3}}).ok());
        QVERIFY((*s)->flush().ok());
        double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        qInfo("run store: %.0f steps/s with 3 metrics each (%.0f rows/s)", steps / sec, 3 * steps / sec);
        QVERIFY(steps / sec > 1000);
        QCOMPARE((*s)->series(id, MetricScope::Step, "accuracy")->size(), size_t{steps});
    }
};

QTEST_GUILESS_MAIN(TstRunStore)
#include "tst_run_store.moc"
