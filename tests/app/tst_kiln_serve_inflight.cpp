// SPDX-License-Identifier: Apache-2.0
// kiln-serve's in-flight cap end to end: the real program on loopback ports, with batching
// holding requests for 3 s. A large gRPC and a large REST request together fill the
// --max-inflight-bytes cap; further REST requests get 503 and gRPC calls RESOURCE_EXHAUSTED while
// the two held ones still wait (nothing is queued behind them); those then answer with the
// engine's numbers, and the metrics count each refusal.
// kiln-test-libs: kiln_engine_all kiln_serve_grpc
#include <QtTest>

#include <QProcess>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include "engine/serve/serve_test_util.h"
#include "serve_process.h"
#include "serving_apis.grpc.pb.h"

using kiln::test::freePort;
using kiln::test::serveProgram;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace tfs = ::tensorflow::serving;

namespace {
constexpr int64_t kRows = 256;
constexpr uint64_t kRowBytes = (784 + 10) * 4;  // fashion_mlp: 28x28x1 in, 10 scores out
constexpr uint64_t kRequestBytes = kRows * kRowBytes;

std::string restBody(const std::vector<float>& values, int64_t rows) {
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

tfs::PredictRequest grpcRequest(const std::vector<float>& values, int64_t rows) {
    tfs::PredictRequest req;
    req.mutable_model_spec()->set_name("mlp");
    auto& t = (*req.mutable_inputs())["image"];
    t.set_dtype(::tensorflow::DT_FLOAT);
    for (int64_t d : {rows, int64_t(28), int64_t(28), int64_t(1)}) t.mutable_tensor_shape()->add_dim()->set_size(d);
    t.set_tensor_content(std::string(reinterpret_cast<const char*>(values.data()), static_cast<size_t>(rows) * 784 * 4));
    return req;
}

void expectClose(const std::vector<float>& got, const std::vector<float>& want) {
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-5f * std::max(1.0f, std::abs(want[i])))
            QFAIL(qPrintable(QStringLiteral("value %1: got %2, want %3").arg(i).arg(got[i]).arg(want[i])));
}

double msSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }
}  // namespace

class TestKilnServeInflight : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    kiln::test::ServeProcess m_server;
    int m_grpcPort = 0;
    std::unique_ptr<tfs::PredictionService::Stub> m_stub;

    std::string metrics() {
        httplib::Client c("127.0.0.1", m_server.port);
        auto r = c.Get("/monitoring/prometheus/metrics");
        return r && r->status == 200 ? r->body : std::string();
    }
    std::pair<int, std::string> post(const std::string& body) {
        httplib::Client c("127.0.0.1", m_server.port);
        c.set_read_timeout(60, 0);
        auto r = c.Post("/v1/models/mlp:predict", body, "application/json");
        return r ? std::make_pair(r->status, r->body) : std::make_pair(-1, std::string());
    }
    std::pair<grpc::Status, tfs::PredictResponse> predict(const tfs::PredictRequest& req) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        tfs::PredictResponse res;
        grpc::Status st = m_stub->Predict(&ctx, req, &res);
        return {st, res};
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(serveProgram())) QSKIP("kiln-serve is not built");
        QVERIFY(m_dir.isValid());
        const std::string root = m_dir.path().toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", root + "/mlp", 1, 7));
        // Requests wait up to 3 s for a batch to fill: long enough to send more meanwhile.
        std::ofstream(root + "/batching.config") << "max_batch_size { value: 4096 }\nbatch_timeout_micros { value: 3000000 }\n";
        m_server.port = freePort();
        do m_grpcPort = freePort();
        while (m_grpcPort == m_server.port);
        // The dashed spelling of --max_inflight_bytes, as documented.
        QVERIFY(m_server.start({QStringLiteral("--port=%1").arg(m_grpcPort), QStringLiteral("--model_name=mlp"),
                                QStringLiteral("--model_base_path=%1/mlp").arg(m_dir.path()),
                                QStringLiteral("--file_system_poll_wait_seconds=0"), QStringLiteral("--enable_batching"),
                                QStringLiteral("--batching_parameters_file=%1/batching.config").arg(m_dir.path()),
                                QStringLiteral("--max-inflight-bytes=%1").arg(2 * kRequestBytes)},
                               "/v1/models/mlp", QProcessEnvironment(), 20000));
        m_stub = tfs::PredictionService::NewStub(
            grpc::CreateChannel("127.0.0.1:" + std::to_string(m_grpcPort), grpc::InsecureChannelCredentials()));
        QVERIFY(metrics().find("kiln_serve_inflight_cap_bytes " + std::to_string(2 * kRequestBytes) + "\n") != std::string::npos);
    }

    void cleanupTestCase() {
        if (m_server.process.state() == QProcess::Running) QCOMPARE(m_server.stop(), 0);
    }

    void refusesWhileTheCapIsHeld() {
        const std::vector<float> values = kiln::test::sampleValues(kRows * 784, 21);
        const std::string body = restBody(values, kRows);
        const tfs::PredictRequest req = grpcRequest(values, kRows);
        // One gRPC and one REST request fill the cap between them.
        auto heldGrpc = std::async(std::launch::async, [&] { return predict(req); });
        auto heldRest = std::async(std::launch::async, [&] { return post(body); });
        const std::string full = "kiln_serve_inflight_bytes " + std::to_string(2 * kRequestBytes) + "\n";
        bool filled = false;
        for (int i = 0; i < 2000 && !filled; ++i) {
            filled = metrics().find(full) != std::string::npos;
            if (!filled) QTest::qWait(5);
        }
        QVERIFY2(filled, "the two requests never held the cap");

        auto start = Clock::now();
        const auto rest = post(body);
        const double restMs = msSince(start);
        QCOMPARE(rest.first, 503);
        QVERIFY2(rest.second.find("in-flight memory cap") != std::string::npos, rest.second.c_str());
        start = Clock::now();
        const auto grpcRefused = predict(req);
        const double grpcMs = msSince(start);
        QCOMPARE(grpcRefused.first.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(grpcRefused.first.error_message().find("in-flight memory cap") != std::string::npos,
                 grpcRefused.first.error_message().c_str());
        // Answered while the held requests still wait for their batch: not queued behind them.
        // The REST time is mostly the transfer and parsing of the 1.5 MB body.
        qInfo("refused while the cap was held: REST in %.1f ms, gRPC in %.1f ms", restMs, grpcMs);
        QVERIFY(heldGrpc.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
        QVERIFY(heldRest.wait_for(std::chrono::seconds(0)) != std::future_status::ready);

        const auto want = kiln::test::referenceOutputs("fashion_mlp", 7, {values}, kRows);
        QCOMPARE(want.size(), size_t(1));
        const auto [grpcStatus, grpcRes] = heldGrpc.get();
        QVERIFY2(grpcStatus.ok(), grpcStatus.error_message().c_str());
        const auto& out = grpcRes.outputs().begin()->second;
        expectClose(std::vector<float>(out.float_val().begin(), out.float_val().end()), want[0]);
        const auto restHeld = heldRest.get();
        QCOMPARE(restHeld.first, 200);
        std::vector<float> got;
        kiln::test::flatten(json::parse(restHeld.second)["predictions"], got);
        expectClose(got, want[0]);

        // A call larger than the whole cap: refused at once over gRPC too.
        const std::vector<float> many = kiln::test::sampleValues(3 * kRows * 784, 22);
        const auto huge = predict(grpcRequest(many, 3 * kRows));
        QCOMPARE(huge.first.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(huge.first.error_message().find("more than the server's in-flight cap") != std::string::npos,
                 huge.first.error_message().c_str());
        // Everything was given back: the same calls run now.
        QVERIFY(predict(req).first.ok());
        QCOMPARE(post(body).first, 200);

        const std::string text = metrics();
        QVERIFY2(text.find("kiln_serve_inflight_rejected_total{entrypoint=\"GRPC\"} 2\n") != std::string::npos, text.c_str());
        QVERIFY(text.find("kiln_serve_inflight_rejected_total{entrypoint=\"REST\"} 1\n") != std::string::npos);
        QVERIFY(text.find("kiln_serve_inflight_bytes 0\n") != std::string::npos);
        QVERIFY(text.find("kiln_serve_inflight_peak_bytes " + std::to_string(2 * kRequestBytes) + "\n") != std::string::npos);
        QVERIFY(text.find(":tensorflow:serving:request_count{model_name=\"mlp\",API=\"predict\",entrypoint=\"GRPC\",status=\"RESOURCE_EXHAUSTED\"} 2") !=
                std::string::npos);
    }

    void badCap() {
        QProcess p;
        p.start(serveProgram(), {QStringLiteral("--rest_api_port=1"), QStringLiteral("--model_base_path=/nonexistent"),
                                 QStringLiteral("--max_inflight_bytes=lots")});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains(QStringLiteral("--max_inflight_bytes")));
    }
};

QTEST_GUILESS_MAIN(TestKilnServeInflight)
#include "tst_kiln_serve_inflight.moc"
