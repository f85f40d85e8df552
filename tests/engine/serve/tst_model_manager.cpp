// SPDX-License-Identifier: Apache-2.0
// The model repository watcher: hot reload under load with zero failed requests, version
// policies (latest N, all, specific), labels, failed loads that keep the old version, removal,
// and request batching that merges concurrent requests into one run.
// kiln-test-labels: fast
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <thread>

#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"
#include "engine/serve/serve_test_util.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
ManagerOptions quiet(int poll = 0) {
    ManagerOptions o;
    o.pollSeconds = poll;
    // Versions here are complete when they appear; a broken one must fail on its first scan.
    o.stableMs = 0;
    o.log = [](const std::string&) {};
    return o;
}

std::vector<int64_t> available(const ModelManager& m, const std::string& name) {
    auto v = m.availableVersions();
    return v[name];
}

// One 28x28x1 image as a row-format request.
std::string rowBody(const std::vector<float>& x) {
    json img = json::array();
    for (int r = 0; r < 28; ++r) {
        json row = json::array();
        for (int c = 0; c < 28; ++c) row.push_back(json::array({x[static_cast<size_t>(r * 28 + c)]}));
        img.push_back(row);
    }
    return json{{"instances", json::array({img})}}.dump();
}
}  // namespace

class TestModelManager : public QObject {
    Q_OBJECT

private slots:
    void hotReloadUnderLoad() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("tower").toStdString();
        QVERIFY(kiln::test::makeVersion("two_tower", base, 1, 1));
        ModelServerConfig cfg;
        cfg.models.push_back({"tower", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(2);
        ModelManager manager(cfg, quiet(0), pool);
        manager.start();
        QCOMPARE(available(manager, "tower"), std::vector<int64_t>{1});
        RestApi api(manager, nullptr, {});
        const auto a = kiln::test::sampleValues(15, 5), b = kiln::test::sampleValues(15, 6);
        const std::string body = json{{"instances", json::array({{{"tower_a", a}, {"tower_b", b}}})}}.dump();
        const float v1 = kiln::test::referenceOutputs("two_tower", 1, {a, b}, 1)[0][0];
        const float v2 = kiln::test::referenceOutputs("two_tower", 2, {a, b}, 1)[0][0];
        QVERIFY(std::abs(v1 - v2) > 1e-4f);

        // A client thread sends requests while version 2 is dropped in and swapped.
        std::atomic<int> ok{0}, failed{0}, sawV1{0}, sawV2{0}, wrong{0};
        kiln::test::LoadThread client([&] {
            auto r = api.handle("POST", "/v1/models/tower:predict", body);
            if (r.status != 200) {
                ++failed;
                return;
            }
            ++ok;
            const float y = json::parse(r.body)["predictions"][0][0].get<float>();
            if (std::abs(y - v1) < 1e-5f) ++sawV1;
            else if (std::abs(y - v2) < 1e-5f) ++sawV2;
            else ++wrong;
        });
        QTest::qWait(100);
        QVERIFY(kiln::test::makeVersion("two_tower", base, 2, 2));
        manager.scanOnce();
        QTest::qWait(100);
        client.stop();
        QCOMPARE(failed.load(), 0);
        QCOMPARE(wrong.load(), 0);
        QVERIFY(sawV1 > 0);
        QVERIFY(sawV2 > 0);
        // latest(1): version 1 is unloaded and listed as END.
        QCOMPARE(available(manager, "tower"), std::vector<int64_t>{2});
        auto st = manager.status("tower", std::nullopt, std::nullopt);
        QVERIFY(st.ok());
        QCOMPARE(st->size(), size_t(2));
        QCOMPARE((*st)[0].version, int64_t(2));
        QCOMPARE((*st)[0].state, VersionState::Available);
        QCOMPARE((*st)[1].version, int64_t(1));
        QCOMPARE((*st)[1].state, VersionState::End);
        QCOMPARE(manager.find("tower", 1, std::nullopt).ok(), false);
    }

    void failedLoadKeepsOldVersion() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("m").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, 1));
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        auto options = quiet(0);
        options.maxLoadRetries = 1;
        ModelManager manager(cfg, options, pool);
        manager.start();
        // Version 5 has weights of another model: the load fails, version 1 keeps serving.
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 5, 1));
        fs::copy_file(kiln::test::examplePath("two_tower"), fs::path(base) / "5" / "model.kiln", fs::copy_options::overwrite_existing);
        manager.scanOnce();
        QCOMPARE(available(manager, "m"), std::vector<int64_t>{1});
        auto st = manager.status("m", 5, std::nullopt);
        QVERIFY(st.ok());
        QCOMPARE((*st)[0].state, VersionState::End);
        QVERIFY((*st)[0].code != TfCode::Ok);
        QVERIFY(!(*st)[0].message.empty());
        // Removing the broken folder and writing a good one loads it.
        fs::remove_all(fs::path(base) / "5");
        manager.scanOnce();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 6, 3));
        manager.scanOnce();
        QCOMPARE(available(manager, "m"), std::vector<int64_t>{6});
        // Removing the only version folder unloads it.
        fs::remove_all(fs::path(base) / "6");
        manager.scanOnce();
        QVERIFY(available(manager, "m").empty() || available(manager, "m") == std::vector<int64_t>{1});
    }

    void policies() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("m").toStdString();
        for (int v : {1, 2, 3}) QVERIFY(kiln::test::makeVersion("fashion_mlp", base, v, static_cast<uint64_t>(v)));
        fs::create_directories(fs::path(base) / "notaversion");
        ThreadPool pool(1);
        {
            ModelServerConfig cfg;
            ModelConfig m{"m", base, "tensorflow", {}, {}, 0};
            m.policy.numVersions = 2;
            cfg.models.push_back(m);
            ModelManager manager(cfg, quiet(0), pool);
            manager.start();
            QCOMPARE(available(manager, "m"), (std::vector<int64_t>{2, 3}));
            QCOMPARE(manager.find("m", std::nullopt, std::nullopt).value()->servable().version(), int64_t(3));
        }
        {
            ModelServerConfig cfg;
            ModelConfig m{"m", base, "tensorflow", {}, {{"stable", 1}, {"canary", 3}}, 0};
            m.policy.kind = VersionPolicy::Kind::Specific;
            m.policy.versions = {1, 3, 9};
            cfg.models.push_back(m);
            ModelManager manager(cfg, quiet(0), pool);
            manager.start();
            QCOMPARE(available(manager, "m"), (std::vector<int64_t>{1, 3}));
            QCOMPARE(manager.find("m", std::nullopt, std::string("stable")).value()->servable().version(), int64_t(1));
            QCOMPARE(manager.find("m", std::nullopt, std::string("canary")).value()->servable().version(), int64_t(3));
            QCOMPARE(tfCodeOf(manager.find("m", std::nullopt, std::string("beta")).error()), TfCode::InvalidArgument);
            QCOMPARE(tfCodeOf(manager.find("m", 2, std::nullopt).error()), TfCode::NotFound);
        }
        {
            ModelServerConfig cfg;
            ModelConfig m{"m", base, "tensorflow", {}, {}, 0};
            m.policy.kind = VersionPolicy::Kind::All;
            cfg.models.push_back(m);
            ModelManager manager(cfg, quiet(0), pool);
            manager.start();
            QCOMPARE(available(manager, "m"), (std::vector<int64_t>{1, 2, 3}));
        }
        {
            ModelServerConfig cfg;
            cfg.models.push_back({"gone", dir.filePath("missing").toStdString(), "tensorflow", {}, {}, 0});
            std::vector<std::string> lines;
            auto options = quiet(0);
            options.log = [&](const std::string& l) { lines.push_back(l); };
            ModelManager manager(cfg, options, pool);
            manager.start();
            QVERIFY(available(manager, "gone").empty());
            QVERIFY(!lines.empty());
            QVERIFY(lines[0].find("Could not find base path") != std::string::npos);
            QCOMPARE(tfCodeOf(manager.status("gone", std::nullopt, std::nullopt).error()), TfCode::NotFound);
        }
    }

    void pollingThreadPicksUpVersions() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("m").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, 1));
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        ModelManager manager(cfg, quiet(1), pool);
        manager.start();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 7, 2));
        QTRY_COMPARE_WITH_TIMEOUT(available(manager, "m"), std::vector<int64_t>{7}, 10000);
        manager.stop();
    }

    void batchingMergesRequests() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("m").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, 9));
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        Metrics metrics;
        auto options = quiet(0);
        BatchingParameters params;
        params.maxBatchSize = 8;
        params.batchTimeoutMicros = 200000;  // long enough for all clients to queue up
        options.batching = params;
        std::mutex mutex;
        std::vector<int64_t> batches;
        options.onBatch = [&](const std::string& model, int64_t rows) {
            metrics.observeBatch(model, rows);
            std::lock_guard lock(mutex);
            batches.push_back(rows);
        };
        ModelManager manager(cfg, options, pool);
        manager.start();
        RestApi api(manager, &metrics, {});
        constexpr int kClients = 8;
        std::vector<std::thread> clients;
        std::atomic<int> good{0};
        for (int c = 0; c < kClients; ++c)
            clients.emplace_back([&, c] {
                const auto x = kiln::test::sampleValues(784, static_cast<uint32_t>(100 + c));
                auto r = api.handle("POST", "/v1/models/m:predict", rowBody(x));
                if (r.status != 200) return;
                std::vector<float> got;
                kiln::test::flatten(json::parse(r.body)["predictions"], got);
                const auto want = kiln::test::referenceOutputs("fashion_mlp", 9, {x}, 1)[0];
                for (size_t i = 0; i < want.size(); ++i)
                    if (std::abs(got[i] - want[i]) > 1e-5f) return;
                ++good;
            });
        for (auto& t : clients) t.join();
        QCOMPARE(good.load(), kClients);
        // Fewer runs than requests: at least one merged batch.
        int64_t total = 0, largest = 0;
        for (int64_t b : batches) {
            total += b;
            largest = std::max(largest, b);
        }
        QCOMPARE(total, int64_t(kClients));
        QVERIFY2(largest > 1, "no request was merged");
        QVERIFY(metrics.render(&manager).find(":tensorflow:serving:batching_session:processed_batch_size_count{model_name=\"m\"}") !=
                std::string::npos);
        // A deadline that passes while queued gives DEADLINE_EXCEEDED.
        auto loaded = manager.find("m", std::nullopt, std::nullopt);
        std::vector<Tensor> in;
        in.emplace_back(Shape{1, 28, 28, 1});
        auto late = loaded.value()->run(in, std::chrono::steady_clock::now() + std::chrono::milliseconds(1));
        QVERIFY(!late.ok());
        QCOMPARE(tfCodeOf(late.error()), TfCode::DeadlineExceeded);
    }
};

QTEST_GUILESS_MAIN(TestModelManager)
#include "tst_model_manager.moc"
