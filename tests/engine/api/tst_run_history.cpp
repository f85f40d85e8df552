// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_api kiln_store
// The studio's run history (engine/api/run_history.h) over a real run store written by
// engine/store's RunStore, as training writes it: every field of every run, each status and both
// metric scopes arrive in the api's own types; renames and deletions reach the store; a store of
// a newer Kiln is refused naming the file.
#include <QtTest>

#include <QTemporaryDir>

#include <sqlite3.h>

#include "engine/api/run_history.h"
#include "engine/store/run_store.h"

using namespace kiln::engine;

class TstRunHistory : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string path(const char* name) { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }

private slots:
    void copiesEveryFieldAndStatus() {
        const std::string p = path("runs.sqlite");
        std::vector<int64_t> ids;
        {
            auto s = store::RunStore::open(p);
            QVERIFY(s.ok());
            const store::RunStatus statuses[] = {store::RunStatus::Running, store::RunStatus::Completed,
                                                 store::RunStatus::Stopped, store::RunStatus::Failed,
                                                 store::RunStatus::Interrupted};
            for (int i = 0; i < 5; ++i) {
                store::NewRun run{"run " + std::to_string(i), "{\"epochs\": " + std::to_string(i) + "}", "g" + std::to_string(i),
                                  "d" + std::to_string(i), "/runs/" + std::to_string(i)};
                auto id = (*s)->createRun(run);
                QVERIFY(id.ok());
                ids.push_back(*id);
                QVERIFY((*s)->setStatus(*id, statuses[i]).ok());
            }
            QVERIFY((*s)->setResults(ids[1], "{\"train_loss\": 0.5}").ok());
            QVERIFY((*s)->logMetrics(ids[1], store::MetricScope::Step, 1, {{"loss", 2.0}}, 10.0).ok());
            QVERIFY((*s)->logMetrics(ids[1], store::MetricScope::Step, 2, {{"loss", 1.0}}, 11.0).ok());
            QVERIFY((*s)->logMetrics(ids[1], store::MetricScope::Epoch, 1, {{"val_loss", 1.5}, {"val_accuracy", 0.25}}, 12.0).ok());
            QVERIFY((*s)->flush().ok());
        }
        auto opened = api::RunHistory::open(p);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().toString().c_str());
        api::RunHistory& history = **opened;
        QCOMPARE(history.path(), p);

        auto runs = history.runs();
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t(5));
        auto direct = store::RunStore::open(p);
        QVERIFY(direct.ok());
        auto stored = (*direct)->listRuns();
        QVERIFY(stored.ok());
        const api::RunStatus expected[] = {api::RunStatus::Running, api::RunStatus::Completed, api::RunStatus::Stopped,
                                           api::RunStatus::Failed, api::RunStatus::Interrupted};
        for (size_t i = 0; i < runs->size(); ++i) {
            const api::RunInfo& a = (*runs)[i];
            const store::RunInfo& s = (*stored)[i];  // the same order: newest first
            QCOMPARE(a.id, s.id);
            QCOMPARE(a.name, s.name);
            QCOMPARE(a.created, s.created);
            QCOMPARE(a.createdMs, s.createdMs);
            QCOMPARE(a.updated, s.updated);
            QCOMPARE(a.configJson, s.configJson);
            QCOMPARE(a.graphHash, s.graphHash);
            QCOMPARE(a.datasetFingerprint, s.datasetFingerprint);
            QCOMPARE(a.resultsJson, s.resultsJson);
            QCOMPARE(a.runDir, s.runDir);
            QCOMPARE(a.lastStep, s.lastStep);
            QCOMPARE(a.lastEpoch, s.lastEpoch);
            const auto k = size_t(std::find(ids.begin(), ids.end(), a.id) - ids.begin());
            QVERIFY(k < ids.size());
            QCOMPARE(int(a.status), int(expected[k]));
            QCOMPARE(a.name, "run " + std::to_string(k));
        }

        auto one = history.run(ids[1]);
        QVERIFY(one.ok());
        QCOMPARE(one->status, api::RunStatus::Completed);
        QCOMPARE(one->resultsJson, std::string("{\"train_loss\": 0.5}"));
        QCOMPARE(one->lastStep, int64_t(2));
        QCOMPARE(one->lastEpoch, 1);
        QVERIFY(!history.run(12345).ok());

        auto stepNames = history.metricNames(ids[1], api::MetricScope::Step);
        QVERIFY(stepNames.ok());
        QCOMPARE(*stepNames, std::vector<std::string>{"loss"});
        auto epochNames = history.metricNames(ids[1], api::MetricScope::Epoch);
        QVERIFY(epochNames.ok());
        QCOMPARE(epochNames->size(), size_t(2));
        auto loss = history.series(ids[1], api::MetricScope::Step, "loss");
        QVERIFY(loss.ok());
        QCOMPARE(loss->size(), size_t(2));
        QCOMPARE((*loss)[0].step, int64_t(1));
        QCOMPARE((*loss)[0].value, 2.0);
        QCOMPARE((*loss)[0].wallTime, 10.0);
        QCOMPARE((*loss)[1].value, 1.0);
        auto val = history.series(ids[1], api::MetricScope::Epoch, "val_loss");
        QVERIFY(val.ok());
        QCOMPARE(val->size(), size_t(1));
        QCOMPARE((*val)[0].value, 1.5);
        QVERIFY(history.series(ids[1], api::MetricScope::Step, "val_loss")->empty());

        // Renames and deletions reach the store.
        QVERIFY(history.rename(ids[0], "renamed").ok());
        QCOMPARE((*direct)->run(ids[0])->name, std::string("renamed"));
        QVERIFY(history.remove(ids[4]).ok());
        QVERIFY(!(*direct)->run(ids[4]).ok());
        QCOMPARE(history.runs()->size(), size_t(4));
        QVERIFY(!history.rename(ids[4], "gone").ok());
    }

    void newerStoreIsRefused() {
        const std::string p = path("newer.sqlite");
        QVERIFY(store::RunStore::open(p).ok());
        sqlite3* d = nullptr;
        QCOMPARE(sqlite3_open(p.c_str(), &d), SQLITE_OK);
        sqlite3_exec(d, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr);
        sqlite3_close(d);
        auto opened = api::RunHistory::open(p);
        QVERIFY(!opened.ok());
        QCOMPARE(opened.error().code, ErrorCode::UnsupportedFormat);
        QCOMPARE(opened.error().file, p);
    }
};

QTEST_GUILESS_MAIN(TstRunHistory)
#include "tst_run_history.moc"
