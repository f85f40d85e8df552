// SPDX-License-Identifier: Apache-2.0
// :predict calls to a batching version over real HTTP, which the event loop parses and queues
// without a worker: answers carry the engine's numbers and the same JSON as the worker path,
// errors are byte-for-byte those of a server without batching, a deadline that passes in the
// queue gives 504 on time, stopping the server answers the requests still queued, and a lone
// client stops waiting out the batch timeout until requests overlap again.
// kiln-test-timeout: 300
#include <QtTest>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "engine/serve/batching.h"
#include "engine/serve/http_server.h"
#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"
#include "engine/serve/serve_test_util.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kSeed = 5;

std::string imageBody(const std::vector<float>& x) {
    json img = json::array();
    for (size_t r = 0; r < 28; ++r) {
        json row = json::array();
        for (size_t c = 0; c < 28; ++c) row.push_back(json::array({x[r * 28 + c]}));
        img.push_back(row);
    }
    return json{{"instances", json::array({img})}}.dump();
}

// A model manager (batching or not), its REST API and an HTTP server on a free port.
struct Served {
    ThreadPool pool{1};
    Metrics metrics;
    std::atomic<int64_t> batchedRows{0};   // rows run by the batcher
    std::atomic<int64_t> largestBatch{0};  // most rows in one run
    std::unique_ptr<ModelManager> manager;
    std::unique_ptr<RestApi> api;
    std::unique_ptr<HttpServer> server;
    int port = 0;

    Served(const std::string& base, std::optional<BatchingParameters> batching, int timeoutMs = 30000) {
        ModelServerConfig cfg;
        cfg.models.push_back({"mlp", base, "tensorflow", {}, {}, 0});
        ManagerOptions options;
        options.pollSeconds = 0;
        options.log = [](const std::string&) {};
        options.batching = batching;
        options.onBatch = [this](const std::string&, int64_t rows) {
            batchedRows += rows;
            int64_t seen = largestBatch.load();
            while (rows > seen && !largestBatch.compare_exchange_weak(seen, rows)) {
            }
        };
        manager = std::make_unique<ModelManager>(cfg, options, pool);
        manager->start();
        RestOptions rest;
        rest.timeoutMs = timeoutMs;
        api = std::make_unique<RestApi>(*manager, &metrics, rest);
        HttpOptions http;
        http.port = 0;
        http.threads = 2;
        http.timeoutMs = timeoutMs;
        server = std::make_unique<HttpServer>(*api, &metrics, manager.get(), http);
        auto started = server->start();
        port = started.ok() ? started.value() : 0;
    }
    ~Served() {
        server->stop();
        manager->stop();
    }
};

BatchingParameters batching(int64_t maxBatch, int64_t timeoutMicros) {
    BatchingParameters p;
    p.maxBatchSize = maxBatch;
    p.batchTimeoutMicros = timeoutMicros;
    return p;
}

struct Answer {
    int status = -1;
    std::string body;
    std::string contentType;
};

Answer post(httplib::Client& client, const std::string& path, const std::string& body) {
    auto r = client.Post(path, body, "application/json");
    if (!r) return {};
    return {r->status, r->body, r->get_header_value("Content-Type")};
}

}  // namespace

class TestRestBatched : public QObject {
    Q_OBJECT
private slots:
    // 16 keep-alive clients, 6 requests each, against a batching server: every answer has the
    // engine's outputs for its own input (so rows are never mixed up between requests) in the
    // JSON form the server without batching writes, and every request ran once in the batcher.
    void concurrentRequestsGetTheirOwnRows() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        Served batched(base, batching(8, 2000));
        Served plain(base, std::nullopt);
        QVERIFY(batched.port > 0 && plain.port > 0);

        constexpr int kClients = 16, kEach = 6;
        std::atomic<int> good{0};
        std::vector<std::string> failures(kClients);
        std::vector<std::thread> clients;
        for (int c = 0; c < kClients; ++c)
            clients.emplace_back([&, c] {
                httplib::Client client("127.0.0.1", batched.port);
                httplib::Client reference("127.0.0.1", plain.port);
                client.set_read_timeout(60, 0);
                for (int i = 0; i < kEach; ++i) {
                    const auto x = kiln::test::sampleValues(784, static_cast<uint32_t>(1000 + c * kEach + i));
                    const Answer a = post(client, "/v1/models/mlp:predict", imageBody(x));
                    const Answer b = post(reference, "/v1/models/mlp:predict", imageBody(x));
                    if (a.status != 200 || b.status != 200 || a.contentType != "application/json") {
                        failures[static_cast<size_t>(c)] = "status " + std::to_string(a.status) + ": " + a.body;
                        return;
                    }
                    std::vector<float> got, ref;
                    const json ja = json::parse(a.body), jb = json::parse(b.body);
                    kiln::test::flatten(ja["predictions"], got);
                    kiln::test::flatten(jb["predictions"], ref);
                    const auto want = kiln::test::referenceOutputs("fashion_mlp", kSeed, {x}, 1)[0];
                    // Same keys, nesting and layout ("{\n    \"predictions\": [[...]]\n}") as the worker path.
                    if (ja.size() != jb.size() || ja["predictions"].size() != 1 || got.size() != want.size() ||
                        a.body.substr(0, 21) != b.body.substr(0, 21) || a.body.substr(a.body.size() - 3) != b.body.substr(b.body.size() - 3)) {
                        failures[static_cast<size_t>(c)] = "shape: " + a.body + " vs " + b.body;
                        return;
                    }
                    for (size_t k = 0; k < want.size(); ++k)
                        if (std::abs(got[k] - want[k]) > 1e-5f + 1e-5f * std::abs(want[k])) {
                            failures[static_cast<size_t>(c)] = "value " + std::to_string(k) + ": " + a.body;
                            return;
                        }
                    ++good;
                }
            });
        for (auto& t : clients) t.join();
        for (const auto& f : failures) QVERIFY2(f.empty(), f.c_str());
        QCOMPARE(good.load(), kClients * kEach);
        QCOMPARE(batched.batchedRows.load(), int64_t(kClients * kEach));
        const std::string text = batched.metrics.render(batched.manager.get());
        QVERIFY2(text.find("request_count{model_name=\"mlp\",API=\"predict\",entrypoint=\"REST\",status=\"OK\"} " +
                           std::to_string(kClients * kEach)) != std::string::npos,
                 text.c_str());
    }

    // Bad requests get the same status and the same bytes from both paths.
    void errorsMatchTheWorkerPath() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        Served batched(base, batching(8, 1000));
        Served plain(base, std::nullopt);
        httplib::Client a("127.0.0.1", batched.port), b("127.0.0.1", plain.port);
        std::string deep = "{\"instances\": ";
        for (int i = 0; i < 100; ++i) deep += "[";
        const std::vector<std::string> bodies = {
            "", "{", "[]", R"({"instances": []})", R"({"instances": [[1, 2, 3]]})", R"({"instances": [NaN]})",
            R"({"instances": [[[[1e999]]]]})", R"({"signature_name": "other", "instances": [[1]]})",
            R"({"instances": [{"b64": "not base64!"}]})", R"({"inputs": {"nope": [1]}})", deep};
        for (const auto& body : bodies) {
            const Answer x = post(a, "/v1/models/mlp:predict", body), y = post(b, "/v1/models/mlp:predict", body);
            QCOMPARE(x.status, 400);
            QCOMPARE(x.status, y.status);
            QCOMPARE(QString::fromStdString(x.body), QString::fromStdString(y.body));
        }
        // Unknown versions and models, and names the server refuses, are answered by the worker
        // path on both servers.
        for (const char* path : {"/v1/models/mlp/versions/9:predict", "/v1/models/nope:predict", "/v1/models/mlp/labels/x:predict",
                                 "/v1/models/..:predict", "/v1/models/.:predict", "/v1/models/m%01p:predict",
                                 "/v1/models/mlp%2Fx:predict", "/v1/models/:predict", "/v1/models/mlp:predict:predict",
                                 "/v1/models/mlp:Predict", "/v1/models/mlp/:predict"}) {
            const Answer x = post(a, path, "{}"), y = post(b, path, "{}");
            QCOMPARE(x.status, y.status);
            QCOMPARE(QString::fromStdString(x.body), QString::fromStdString(y.body));
        }
    }

    // The plain route and the one naming a version both go through the batcher.
    void versionedRouteIsBatchedToo() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        Served batched(base, batching(8, 1000));
        httplib::Client client("127.0.0.1", batched.port);
        const std::string body = imageBody(kiln::test::sampleValues(784, 77));
        const Answer a = post(client, "/v1/models/mlp:predict", body);
        QCOMPARE(a.status, 200);
        QCOMPARE(batched.batchedRows.load(), int64_t(1));
        const Answer b = post(client, "/v1/models/mlp/versions/1:predict", body);
        QCOMPARE(b.status, 200);
        QCOMPARE(batched.batchedRows.load(), int64_t(2));
        QCOMPARE(QString::fromStdString(a.body), QString::fromStdString(b.body));
    }

    // A model whose single run takes longer than the budget (0 here: every model) is never run on
    // the calling thread: each lone request waits out the batch timeout (100 ms) as before.
    void slowModelNeverRunsOnTheCallingThread() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        BatchingParameters params = batching(8, 100000);
        params.inlineRunBudgetMicros = 0;
        Served batched(base, params);
        QVERIFY(batched.port > 0);
        httplib::Client client("127.0.0.1", batched.port);
        const std::string body = imageBody(kiln::test::sampleValues(784, 79));
        for (int i = 0; i < Batcher::kLoneBatchesBeforeInline + 3; ++i) {
            const auto t0 = Clock::now();
            QCOMPARE(post(client, "/v1/models/mlp:predict", body).status, 200);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            QVERIFY2(ms >= 95, std::to_string(ms).c_str());
        }
        QCOMPARE(batched.largestBatch.load(), int64_t(1));
    }

    // One client at a time: after kLoneBatchesBeforeInline single-request batches, requests run
    // at once instead of waiting out the batch timeout (400 ms here), except every
    // (kInlineRunsPerProbe + 1)-th, which is queued again; the answers stay the engine's. Clients
    // that overlap are batched together again. The run-time budget is lifted so that a slow build
    // (sanitizers) takes the same path.
    void loneClientSkipsTheBatchWait() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        BatchingParameters params = batching(8, 400000);
        params.inlineRunBudgetMicros = 60'000'000;
        Served batched(base, params);
        Served plain(base, std::nullopt);
        QVERIFY(batched.port > 0 && plain.port > 0);
        const std::string path = "/v1/models/mlp:predict";
        const std::string body = imageBody(kiln::test::sampleValues(784, 78));
        httplib::Client reference("127.0.0.1", plain.port);
        const Answer expected = post(reference, path, body);
        QCOMPARE(expected.status, 200);

        constexpr int kLone = Batcher::kLoneBatchesBeforeInline, kInline = Batcher::kInlineRunsPerProbe;
        httplib::Client client("127.0.0.1", batched.port);
        std::vector<double> ms;
        for (int i = 0; i < kLone + kInline + 1; ++i) {
            const auto t0 = Clock::now();
            const Answer a = post(client, path, body);
            ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            QCOMPARE(a.status, 200);
            QCOMPARE(QString::fromStdString(a.body), QString::fromStdString(expected.body));
        }
        for (int i = 0; i < kLone; ++i) QVERIFY2(ms[static_cast<size_t>(i)] >= 390, std::to_string(ms[static_cast<size_t>(i)]).c_str());
        // Each of these would have waited 400 ms; run at once they take a few milliseconds (about
        // 50 under the sanitizers on a busy machine).
        for (int i = kLone; i < kLone + kInline; ++i)
            QVERIFY2(ms[static_cast<size_t>(i)] < 390, std::to_string(ms[static_cast<size_t>(i)]).c_str());
        QVERIFY2(ms.back() >= 390, std::to_string(ms.back()).c_str());  // the probe
        QCOMPARE(batched.batchedRows.load(), int64_t(kLone + kInline + 1));
        QCOMPARE(batched.largestBatch.load(), int64_t(1));

        // Eight clients at once: a probe gets company, and requests are merged again (rows of a
        // merged run may differ from a lone run's in the last bits).
        std::vector<float> want;
        kiln::test::flatten(json::parse(expected.body)["predictions"], want);
        constexpr int kClients = 8, kEach = 3;
        std::atomic<int> same{0};
        std::vector<std::thread> clients;
        for (int c = 0; c < kClients; ++c)
            clients.emplace_back([&] {
                httplib::Client cl("127.0.0.1", batched.port);
                for (int k = 0; k < kEach; ++k) {
                    const Answer a = post(cl, path, body);
                    if (a.status != 200) continue;
                    std::vector<float> got;
                    kiln::test::flatten(json::parse(a.body)["predictions"], got);
                    bool close = got.size() == want.size();
                    for (size_t k = 0; close && k < want.size(); ++k)
                        close = std::abs(got[k] - want[k]) <= 1e-5f + 1e-5f * std::abs(want[k]);
                    if (close) ++same;
                }
            });
        for (auto& t : clients) t.join();
        QCOMPARE(same.load(), kClients * kEach);
        QCOMPARE(batched.batchedRows.load(), int64_t(kLone + kInline + 1 + kClients * kEach));
        QVERIFY2(batched.largestBatch.load() > 1, std::to_string(batched.largestBatch.load()).c_str());
    }

    // The batch timeout (5 s) is longer than the request deadline (300 ms): the request is
    // answered 504 at its deadline, not when the batch would have run.
    void deadlineInTheQueue() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        Served batched(base, batching(64, 5000000), 300);
        httplib::Client client("127.0.0.1", batched.port);
        client.set_read_timeout(30, 0);
        const auto start = Clock::now();
        const Answer late = post(client, "/v1/models/mlp:predict", imageBody(kiln::test::sampleValues(784, 3)));
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        QCOMPARE(late.status, 504);
        QVERIFY2(late.body.find("the request timed out waiting for its batch") != std::string::npos, late.body.c_str());
        QVERIFY2(ms >= 250 && ms < 3000, std::to_string(ms).c_str());
    }

    // Stopping the server while requests wait for their batch: stop() returns once the batch has
    // run and every one of them has been answered.
    void stopAnswersQueuedRequests() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("mlp").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, kSeed));
        auto served = std::make_unique<Served>(base, batching(64, 800000));
        const int port = served->port;
        std::vector<std::future<Answer>> pending;
        for (int i = 0; i < 4; ++i)
            pending.push_back(std::async(std::launch::async, [port, i] {
                httplib::Client client("127.0.0.1", port);
                client.set_read_timeout(30, 0);
                return post(client, "/v1/models/mlp:predict", imageBody(kiln::test::sampleValues(784, static_cast<uint32_t>(i))));
            }));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // all four wait in the batcher
        const auto start = Clock::now();
        served->server->stop();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        for (auto& p : pending) {
            const Answer a = p.get();
            QCOMPARE(a.status, 200);
            QVERIFY(a.body.find("predictions") != std::string::npos);
        }
        QVERIFY2(ms < 5000, std::to_string(ms).c_str());
        served.reset();
    }
};

QTEST_GUILESS_MAIN(TestRestBatched)
#include "tst_rest_batched.moc"
