// SPDX-License-Identifier: Apache-2.0
// kiln-serve end to end: the real program on a loopback port answers TF Serving's documented REST
// requests (status, metadata, predict row/columnar, classify, b64 image, two inputs) with the
// engine's numbers, gives each documented error its code, hot-reloads a new version under load
// with no failed request, serves Prometheus metrics, rejects bad flags and config files with
// exit 2, and shuts down cleanly on SIGTERM.
// kiln-test-labels: slow
#include <QtTest>

#include <QProcess>

#include <atomic>
#include <fstream>
#include <thread>

#include <httplib.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/serve/serve_test_util.h"
#include "serve_process.h"

using kiln::test::freePort;
using kiln::test::serveProgram;
using nlohmann::json;

namespace {
std::string base64(const std::vector<uint8_t>& bytes) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
    }
    if (i + 1 == bytes.size()) out += {t[bytes[i] >> 2], t[(bytes[i] & 3) << 4], '=', '='};
    if (i + 2 == bytes.size()) {
        const uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8);
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
    }
    return out;
}

json image28(const std::vector<float>& x) {
    json img = json::array();
    for (int r = 0; r < 28; ++r) {
        json row = json::array();
        for (int c = 0; c < 28; ++c) row.push_back(json::array({x[static_cast<size_t>(r) * 28 + static_cast<size_t>(c)]}));
        img.push_back(row);
    }
    return img;
}

struct Result {
    int exitCode = -1;
    QString err;
};

Result runToEnd(const QStringList& args) {
    QProcess p;
    p.start(serveProgram(), args);
    p.waitForFinished(30000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromLocal8Bit(p.readAllStandardError())};
}

void expectClose(const std::vector<float>& got, const std::vector<float>& want) {
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-5f * std::max(1.0f, std::abs(want[i])))
            QFAIL(qPrintable(QStringLiteral("value %1: got %2, want %3").arg(i).arg(got[i]).arg(want[i])));
}
}  // namespace

class TestKilnServe : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    kiln::test::ServeProcess m_server;

    bool startServer(const QStringList& extra) { return m_server.start(extra, "/v1/models/mlp"); }

    httplib::Result post(const std::string& path, const std::string& body) {
        return m_server.client->Post(path.c_str(), body, "application/json");
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(serveProgram())) QSKIP("kiln-serve is not built");
        QVERIFY(m_dir.isValid());
        const std::string root = m_dir.path().toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", root + "/mlp", 1, 7));
        QVERIFY(kiln::test::makeVersion("two_tower", root + "/tower", 1, 11));
        std::ofstream cfg(root + "/models.config");
        cfg << "model_config_list {\n"
               "  config { name: \"mlp\" base_path: \"" << root << "/mlp\" model_platform: \"tensorflow\"\n"
               "           version_labels { key: \"stable\" value: 1 } }\n"
               "  config { name: \"tower\" base_path: \"" << root << "/tower\" }\n"
               "}\n";
        cfg.close();
        QVERIFY(startServer({QStringLiteral("--model_config_file=%1/models.config").arg(m_dir.path()),
                             QStringLiteral("--file_system_poll_wait_seconds=1"), QStringLiteral("--rest_api_max_body_bytes=200000")}));
    }

    void cleanupTestCase() {
        if (m_server.client) QCOMPARE(m_server.stop(), 0);
    }

    void statusAndMetadata() {
        auto r = m_server.client->Get("/v1/models/mlp");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QCOMPARE(r->get_header_value("Content-Type"), std::string("application/json"));
        json j = json::parse(r->body);
        QCOMPARE(j["model_version_status"][0]["version"], json("1"));
        QCOMPARE(j["model_version_status"][0]["state"], json("AVAILABLE"));
        QCOMPARE(j["model_version_status"][0]["status"]["error_code"], json("OK"));
        QCOMPARE(m_server.client->Get("/v1/models/mlp/labels/stable")->status, 200);
        auto m = m_server.client->Get("/v1/models/tower/versions/1/metadata");
        QCOMPARE(m->status, 200);
        j = json::parse(m->body);
        const json& sig = j["metadata"]["signature_def"]["signature_def"]["serving_default"];
        QCOMPARE(sig["inputs"]["tower_b"]["dtype"], json("DT_FLOAT"));
        QCOMPARE(sig["inputs"]["tower_b"]["tensor_shape"]["dim"][0]["size"], json("-1"));
        QCOMPARE(sig["outputs"]["malignant"]["name"], json("malignant:0"));
    }

    void predict() {
        const auto x = kiln::test::sampleValues(2 * 784, 3);
        const auto want = kiln::test::referenceOutputs("fashion_mlp", 7, {x}, 2)[0];
        const json images = json::array({image28({x.begin(), x.begin() + 784}), image28({x.begin() + 784, x.end()})});
        auto r = post("/v1/models/mlp:predict", json{{"instances", images}}.dump());
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        std::vector<float> got;
        kiln::test::flatten(json::parse(r->body)["predictions"], got);
        expectClose(got, want);
        auto c = post("/v1/models/mlp/versions/1:predict", json{{"inputs", images}}.dump());
        QCOMPARE(c->status, 200);
        got.clear();
        kiln::test::flatten(json::parse(c->body)["outputs"], got);
        expectClose(got, want);
    }

    void twoInputsAndClassify() {
        const auto a = kiln::test::sampleValues(15, 8), b = kiln::test::sampleValues(15, 9);
        const float p = kiln::test::referenceOutputs("two_tower", 11, {a, b}, 1)[0][0];
        auto r = post("/v1/models/tower:predict", json{{"instances", json::array({{{"tower_a", a}, {"tower_b", b}}})}}.dump());
        QCOMPARE(r->status, 200);
        QVERIFY(std::abs(json::parse(r->body)["predictions"][0][0].get<float>() - p) < 1e-5f);
        auto k = post("/v1/models/tower:classify", json{{"examples", json::array({{{"tower_a", a}}})}, {"context", {{"tower_b", b}}}}.dump());
        QCOMPARE(k->status, 200);
        const json res = json::parse(k->body)["results"][0];
        QCOMPARE(res[1][0], json("1"));
        QVERIFY(std::abs(res[1][1].get<float>() - p) < 1e-5f);
    }

    void b64Image() {
        cv::Mat img(28, 28, CV_8UC1);
        for (int i = 0; i < 784; ++i) img.data[i] = static_cast<uint8_t>(i * 7 % 256);
        std::vector<uint8_t> png;
        QVERIFY(cv::imencode(".png", img, png));
        auto r = post("/v1/models/mlp:predict", json{{"instances", json::array({{{"b64", base64(png)}}})}}.dump());
        QCOMPARE(r->status, 200);
        std::vector<float> x(784);
        for (int i = 0; i < 784; ++i) x[static_cast<size_t>(i)] = img.data[i] / 255.0f;
        std::vector<float> got;
        kiln::test::flatten(json::parse(r->body)["predictions"], got);
        expectClose(got, kiln::test::referenceOutputs("fashion_mlp", 7, {x}, 1)[0]);
    }

    void errors() {
        auto check = [&](httplib::Result r, int status, const std::string& fragment) {
            QVERIFY(r);
            QCOMPARE(r->status, status);
            QCOMPARE(r->get_header_value("Content-Type"), std::string("application/json"));
            const json j = json::parse(r->body);
            const std::string text = j["error"].get<std::string>();
            if (text.find(fragment) == std::string::npos) QFAIL(text.c_str());
        };
        check(post("/v1/models/nope:predict", R"({"instances": [1]})"), 404, "Servable not found for request: Latest(nope)");
        check(m_server.client->Get("/v1/models/nope"), 404, "Could not find any versions of model nope");
        check(post("/v1/models/mlp:predict", "{\"instances\": [1,"), 400, "JSON Parse error");
        check(post("/v1/models/tower:predict", R"({"instances": [{"tower_a": [1,2], "tower_b": [3]}]})"), 400,
              "input \"tower_a\" expects shape [15] per instance");
        check(post("/v1/models/mlp:predict", std::string(300000, ' ')), 413, "larger than the limit of 200000 bytes");
        check(m_server.client->Get("/v1/models/..%2F..%2Fetc/metadata"), 400, "Malformed request");
        check(m_server.client->Get("/v1/models/../metadata"), 400, "");
        check(post("/v1/models/mlp:frobnicate", "{}"), 400, "Malformed request: POST /v1/models/mlp:frobnicate");
        check(m_server.client->Delete("/v1/models/mlp"), 400, "Malformed request: DELETE /v1/models/mlp");
    }

    void metrics() {
        auto r = m_server.client->Get("/monitoring/prometheus/metrics");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QVERIFY(r->body.find(":tensorflow:serving:request_count{model_name=\"mlp\",API=\"predict\",entrypoint=\"REST\",status=\"OK\"}") !=
                std::string::npos);
        QVERIFY(r->body.find("status=\"INVALID_ARGUMENT\"") != std::string::npos);
        QVERIFY(r->body.find("kiln_serve_loaded_versions{model_name=\"mlp\"} 1") != std::string::npos);
    }

    void hotReloadUnderLoad() {
        const auto a = kiln::test::sampleValues(15, 21), b = kiln::test::sampleValues(15, 22);
        const float v1 = kiln::test::referenceOutputs("two_tower", 11, {a, b}, 1)[0][0];
        const float v2 = kiln::test::referenceOutputs("two_tower", 12, {a, b}, 1)[0][0];
        const std::string body = json{{"instances", json::array({{{"tower_a", a}, {"tower_b", b}}})}}.dump();
        std::atomic<int> failures{0}, sawV2{0}, total{0};
        httplib::Client c("127.0.0.1", m_server.port);
        c.set_read_timeout(30, 0);
        kiln::test::LoadThread client([&] {
            auto r = c.Post("/v1/models/tower:predict", body, "application/json");
            ++total;
            if (!r || r->status != 200) {
                ++failures;
                return;
            }
            const float y = json::parse(r->body)["predictions"][0][0].get<float>();
            if (std::abs(y - v2) < 1e-5f) ++sawV2;
            else if (std::abs(y - v1) >= 1e-5f) ++failures;
        });
        QVERIFY(kiln::test::makeVersion("two_tower", m_dir.path().toStdString() + "/tower", 2, 12));
        QTRY_VERIFY_WITH_TIMEOUT(sawV2 > 20, 30000);
        client.stop();
        QCOMPARE(failures.load(), 0);
        QVERIFY(total > sawV2);
        // latest(1): version 1 ends, version 2 is available.
        const json j = json::parse(m_server.client->Get("/v1/models/tower")->body);
        QCOMPARE(j["model_version_status"].size(), size_t(2));
        QCOMPARE(j["model_version_status"][0]["version"], json("2"));
        QCOMPARE(j["model_version_status"][0]["state"], json("AVAILABLE"));
        QCOMPARE(j["model_version_status"][1]["state"], json("END"));
        QCOMPARE(post("/v1/models/tower/versions/1:predict", body)->status, 404);
    }

    void badFlagsAndConfig() {
        auto unknown = runToEnd({QStringLiteral("--no_such_flag=1")});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains(QStringLiteral("--no_such_flag")));
        auto nothing = runToEnd({QStringLiteral("--rest_api_port=%1").arg(freePort())});
        QCOMPARE(nothing.exitCode, 2);
        auto badPort = runToEnd({QStringLiteral("--rest_api_port=99999"), QStringLiteral("--model_base_path=/x")});
        QCOMPARE(badPort.exitCode, 2);
        QVERIFY(badPort.err.contains(QStringLiteral("--rest_api_port")));
        const QString cfg = m_dir.filePath(QStringLiteral("bad.config"));
        QFile f(cfg);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("model_config_list {\n  config {\n    name: \"a\"\n    base_pth: \"/x\"\n  }\n}\n");
        f.close();
        auto bad = runToEnd({QStringLiteral("--rest_api_port=%1").arg(freePort()), QStringLiteral("--model_config_file=") + cfg});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(cfg + QStringLiteral(":4:5:")), qPrintable(bad.err));
        QVERIFY(bad.err.contains(QStringLiteral("base_pth")));
        auto escape = runToEnd({QStringLiteral("--rest_api_port=%1").arg(freePort()), QStringLiteral("--model_name=../x"),
                                QStringLiteral("--model_base_path=/tmp")});
        QCOMPARE(escape.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestKilnServe)
#include "tst_kiln_serve.moc"
