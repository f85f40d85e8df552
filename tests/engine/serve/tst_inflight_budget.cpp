// SPDX-License-Identifier: Apache-2.0
// The in-flight cap: leases add up and are given back, one that does not fit is refused at once
// with RESOURCE_EXHAUSTED, concurrent leases never pass the cap, and over real HTTP on 127.0.0.1
// a large request arriving while others hold the cap gets 503 at once while those still finish
// with the right numbers, counted in the metrics.
// kiln-test-timeout: 300
#include <QtTest>

#include <httplib.h>

#include <chrono>
#include <future>
#include <limits>
#include <random>
#include <thread>

#include "engine/serve/http_server.h"
#include "engine/serve/inflight_budget.h"
#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"
#include "engine/serve/serve_test_util.h"
#include "engine/serve/status.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kRows = 256;             // rows of one large request
constexpr uint64_t kRowBytes = (784 + 10) * 4;  // fashion_mlp: a 28x28x1 image in, 10 scores out

std::string predictBody(const std::vector<float>& values, int64_t rows) {
    json instances = json::array();
    for (int64_t r = 0; r < rows; ++r) {
        json img = json::array();
        for (int y = 0; y < 28; ++y) {
            json row = json::array();
            for (int x = 0; x < 28; ++x) row.push_back(json::array({values[static_cast<size_t>(r * 784 + y * 28 + x)]}));
            img.push_back(row);
        }
        instances.push_back(img);
    }
    return json{{"instances", instances}}.dump();
}

bool waitFor(const std::function<bool()>& condition, int ms) {
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    while (!condition()) {
        if (Clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

}  // namespace

class TestInflightBudget : public QObject {
    Q_OBJECT

private slots:
    void leasesAddUpAndReturn() {
        InflightBudget budget(1000);
        auto a = budget.acquire(600);
        QVERIFY(a.ok());
        QCOMPARE(budget.inUseBytes(), uint64_t(600));
        auto b = budget.acquire(401);
        QVERIFY(!b.ok());
        QCOMPARE(tfCodeOf(b.error()), TfCode::ResourceExhausted);
        QVERIFY(isInflightRefusal(b.error()));
        QCOMPARE(b.error().param("bytes"), std::string("401"));
        QCOMPARE(b.error().param("in_use"), std::string("600"));
        QCOMPARE(b.error().param("cap"), std::string("1000"));
        QVERIFY2(b.error().message.find("600 of 1000 bytes are held by requests in flight; retry later") != std::string::npos,
                 b.error().message.c_str());
        auto c = budget.acquire(400);
        QVERIFY(c.ok());
        QCOMPARE(budget.inUseBytes(), uint64_t(1000));
        {
            InflightLease moved = std::move(a.value());
            QCOMPARE(moved.bytes(), uint64_t(600));
            QCOMPARE(budget.inUseBytes(), uint64_t(1000));
        }  // the moved-to lease gives the bytes back, the moved-from one nothing more
        QCOMPARE(budget.inUseBytes(), uint64_t(400));
        a = Result<InflightLease>(InflightLease());
        QCOMPARE(budget.inUseBytes(), uint64_t(400));
        c.value() = InflightLease();
        QCOMPARE(budget.inUseBytes(), uint64_t(0));
        QCOMPARE(budget.peakBytes(), uint64_t(1000));
        QCOMPARE(budget.rejected(), uint64_t(1));
        // One request larger than the whole cap says so, whatever is in use.
        auto huge = budget.acquire(1001);
        QVERIFY(!huge.ok());
        QVERIFY2(huge.error().message.find("more than the server's in-flight cap of 1000 bytes") != std::string::npos,
                 huge.error().message.c_str());
        QCOMPARE(budget.rejected(), uint64_t(2));
        // No cap: everything fits, and is still counted.
        InflightBudget open(0);
        auto big = open.acquire(uint64_t(1) << 60);
        QVERIFY(big.ok());
        QCOMPARE(open.inUseBytes(), uint64_t(1) << 60);
    }

    void requestBytes() {
        ModelSignature sig;
        sig.inputs.push_back({"a", {-1, 28, 28, 1}});
        sig.inputs.push_back({"b", {-1, 3}});
        sig.outputs.push_back({"y", {-1, 10}});
        QCOMPARE(requestTensorBytes(sig, 1), uint64_t((784 + 3 + 10) * 4));
        QCOMPARE(requestTensorBytes(sig, 100), uint64_t(100 * (784 + 3 + 10) * 4));
        QCOMPARE(requestTensorBytes(sig, std::numeric_limits<int64_t>::max()), std::numeric_limits<uint64_t>::max());
        QVERIFY(defaultInflightCap() >= (uint64_t(256) << 20));
    }

    // Four threads lease and return random sizes; the bytes held at once never pass the cap
    // (checked by an independent count) and everything is back at the end.
    void concurrentLeasesStayUnderTheCap() {
        constexpr uint64_t kCap = 10000;
        InflightBudget budget(kCap);
        std::atomic<uint64_t> held{0}, worst{0}, granted{0}, refused{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                std::mt19937 rng(static_cast<unsigned>(t + 1));
                std::uniform_int_distribution<uint64_t> size(1, 4000);
                for (int i = 0; i < 20000; ++i) {
                    const uint64_t n = size(rng);
                    auto lease = budget.acquire(n);
                    if (!lease.ok()) {
                        ++refused;
                        continue;
                    }
                    ++granted;
                    const uint64_t now = held.fetch_add(n) + n;
                    uint64_t w = worst.load();
                    while (now > w && !worst.compare_exchange_weak(w, now)) {
                    }
                    if (i % 7 == 0) std::this_thread::yield();
                    held.fetch_sub(n);
                }
            });
        for (auto& t : threads) t.join();
        QVERIFY(worst.load() <= kCap);
        QVERIFY(budget.peakBytes() <= kCap);
        QVERIFY(granted.load() > 0);
        QCOMPARE(budget.rejected(), refused.load());
        QCOMPARE(budget.inUseBytes(), uint64_t(0));
    }

    // Real HTTP: batching holds two large requests for 3 s (the batch timeout) with the cap full;
    // a third, and one larger than the cap, get 503 while those two still wait (so nothing queued
    // behind them); the two then answer with the engine's numbers, the bytes come back, and the
    // next request runs.
    void httpRefusesWhileTheCapIsHeld() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(kiln::test::makeVersion("fashion_mlp", dir.path().toStdString() + "/mlp", 1, 7));
        ModelServerConfig cfg;
        cfg.models.push_back({"mlp", dir.path().toStdString() + "/mlp", "tensorflow", {}, {}, 0});
        ManagerOptions options;
        options.pollSeconds = 0;
        options.log = [](const std::string&) {};
        BatchingParameters batching;
        batching.maxBatchSize = 4096;
        batching.batchTimeoutMicros = 3000000;
        options.batching = batching;
        ThreadPool pool(2);
        ModelManager manager(cfg, options, pool);
        manager.start();
        const uint64_t requestBytes = kRows * kRowBytes;
        InflightBudget budget(2 * requestBytes);
        Metrics metrics;
        metrics.setInflightBudget(&budget);
        RestOptions rest;
        rest.inflight = &budget;
        RestApi api(manager, &metrics, rest);
        HttpOptions http;
        http.port = 0;
        http.threads = 4;
        HttpServer server(api, &metrics, &manager, http);
        auto port = server.start();
        QVERIFY(port.ok());

        const std::vector<float> values = kiln::test::sampleValues(kRows * 784, 11);
        const std::string body = predictBody(values, kRows);
        auto post = [&](const std::string& b) {
            httplib::Client client("127.0.0.1", port.value());
            client.set_read_timeout(60, 0);
            auto r = client.Post("/v1/models/mlp:predict", b, "application/json");
            return r ? std::make_pair(r->status, r->body) : std::make_pair(-1, std::string());
        };
        auto first = std::async(std::launch::async, post, body);
        auto second = std::async(std::launch::async, post, body);
        QVERIFY2(waitFor([&] { return budget.inUseBytes() == 2 * requestBytes; }, 20000), "the two requests never held the cap");

        auto start = Clock::now();
        auto third = post(body);
        const double refusedMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        QCOMPARE(third.first, 503);
        QVERIFY2(third.second.find("the server is at its in-flight memory cap") != std::string::npos, third.second.c_str());
        // Refused without waiting for the held requests: they are still in the batcher. The time
        // is mostly the transfer and parsing of the 1.5 MB body.
        qInfo("refused in %.1f ms while the cap was held", refusedMs);
        QVERIFY(first.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
        QVERIFY(second.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
        QCOMPARE(budget.inUseBytes(), 2 * requestBytes);

        const std::vector<float> oneRow(values.begin(), values.begin() + 784);
        QCOMPARE(post(predictBody(oneRow, 1)).first, 503);  // even one row does not fit now

        const auto a = first.get(), b = second.get();
        QCOMPARE(a.first, 200);
        QCOMPARE(b.first, 200);
        const auto want = kiln::test::referenceOutputs("fashion_mlp", 7, {values}, kRows);
        QCOMPARE(want.size(), size_t(1));
        for (const auto* res : {&a, &b}) {
            std::vector<float> got;
            kiln::test::flatten(json::parse(res->second)["predictions"], got);
            QCOMPARE(got.size(), want[0].size());
            for (size_t i = 0; i < got.size(); ++i) QVERIFY(std::abs(got[i] - want[0][i]) <= 1e-5f + 1e-5f * std::abs(want[0][i]));
        }
        QCOMPARE(budget.inUseBytes(), uint64_t(0));

        // Larger than the whole cap: refused at once, whatever is free.
        const std::vector<float> many = kiln::test::sampleValues(3 * kRows * 784, 12);
        start = Clock::now();
        const auto tooLarge = post(predictBody(many, 3 * kRows));
        QCOMPARE(tooLarge.first, 503);
        QVERIFY2(tooLarge.second.find("more than the server's in-flight cap of " + std::to_string(2 * requestBytes) + " bytes") !=
                     std::string::npos,
                 tooLarge.second.c_str());

        // With the cap free again the same request runs.
        QCOMPARE(post(body).first, 200);
        QCOMPARE(budget.inUseBytes(), uint64_t(0));

        const std::string text = metrics.render(&manager);
        QVERIFY2(text.find("kiln_serve_inflight_rejected_total{entrypoint=\"REST\"} 3\n") != std::string::npos, text.c_str());
        QVERIFY(text.find("kiln_serve_inflight_rejected_total{entrypoint=\"GRPC\"} 0\n") != std::string::npos);
        QVERIFY(text.find("kiln_serve_inflight_peak_bytes " + std::to_string(2 * requestBytes) + "\n") != std::string::npos);
        QVERIFY(text.find("kiln_serve_inflight_cap_bytes " + std::to_string(2 * requestBytes) + "\n") != std::string::npos);
        QVERIFY(text.find("kiln_serve_inflight_bytes 0\n") != std::string::npos);
        QCOMPARE(budget.rejected(), uint64_t(3));
        server.stop();
        manager.stop();
    }
};

QTEST_GUILESS_MAIN(TestInflightBudget)
#include "tst_inflight_budget.moc"
