// SPDX-License-Identifier: Apache-2.0
// Hostile requests over real HTTP on 127.0.0.1: deeply nested bodies, element counts past the
// budget and images whose headers promise huge sizes get 400 with a clear message, and the server
// keeps answering afterwards.
#include <QtTest>

#include <httplib.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/serve/http_server.h"
#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"
#include "engine/serve/serve_test_util.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;
using nlohmann::json;

namespace {

std::string base64(const std::string& bytes) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (unsigned char c : bytes) {
        acc = (acc << 8) | c;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += t[(acc >> bits) & 63];
        }
    }
    if (bits) out += t[(acc << (6 - bits)) & 63];
    while (out.size() % 4) out += '=';
    return out;
}

void put32(std::string& s, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
}

// A PNG signature and IHDR chunk announcing width x height (no image data follows).
std::string pngHeader(uint32_t width, uint32_t height) {
    std::string s("\x89PNG\r\n\x1a\n", 8);
    put32(s, 13);
    s += "IHDR";
    put32(s, width);
    put32(s, height);
    s += std::string("\x08\x00\x00\x00\x00", 5);  // 8-bit gray, no interlace
    put32(s, 0);                                    // CRC (never reached)
    return s;
}

// A JPEG start with an APP0 segment and a baseline frame header announcing width x height.
std::string jpegHeader(uint16_t width, uint16_t height) {
    std::string s("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00", 20);
    s += std::string("\xFF\xC0\x00\x0B\x08", 5);
    s += static_cast<char>(height >> 8);
    s += static_cast<char>(height & 0xff);
    s += static_cast<char>(width >> 8);
    s += static_cast<char>(width & 0xff);
    s += std::string("\x01\x01\x11\x00", 4);
    return s;
}

std::string errorText(const httplib::Result& r) {
    if (!r) return "no response";
    const json j = json::parse(r->body, nullptr, false);
    return j.is_object() && j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : r->body;
}

}  // namespace

class TestRequestLimits : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<ThreadPool> m_pool;
    std::unique_ptr<ModelManager> m_manager;
    Metrics m_metrics;
    std::unique_ptr<RestApi> m_api;
    std::unique_ptr<HttpServer> m_http;
    std::unique_ptr<httplib::Client> m_client;

    httplib::Result post(const std::string& path, const std::string& body) {
        return m_client->Post(path.c_str(), body, "application/json");
    }
    // A 400 whose error message holds `want`.
    void expect400(const httplib::Result& r, const std::string& want) {
        QVERIFY(r);
        const std::string text = errorText(r);
        if (r->status != 400 || text.find(want) == std::string::npos)
            QFAIL(qPrintable(QStringLiteral("status %1, error: %2").arg(r->status).arg(QString::fromStdString(text.substr(0, 400)))));
    }
    void expectAlive() {
        auto r = m_client->Get("/v1/models/mlp");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY(kiln::test::makeVersion("fashion_mlp", m_dir.path().toStdString() + "/mlp", 1, 7));
        ModelServerConfig cfg;
        cfg.models.push_back({"mlp", m_dir.path().toStdString() + "/mlp", "tensorflow", {}, {}, 0});
        ManagerOptions options;
        options.pollSeconds = 0;
        options.log = [](const std::string&) {};
        m_pool = std::make_unique<ThreadPool>(2);
        m_manager = std::make_unique<ModelManager>(cfg, options, *m_pool);
        m_manager->start();
        m_api = std::make_unique<RestApi>(*m_manager, &m_metrics, RestOptions{});
        HttpOptions http;
        http.bindAddress = "127.0.0.1";
        http.port = 0;
        http.threads = 2;
        m_http = std::make_unique<HttpServer>(*m_api, &m_metrics, m_manager.get(), http);
        auto port = m_http->start();
        QVERIFY(port.ok());
        m_client = std::make_unique<httplib::Client>("127.0.0.1", port.value());
        m_client->set_read_timeout(60, 0);
        expectAlive();
    }

    void cleanupTestCase() {
        m_client.reset();
        if (m_http) m_http->stop();
        if (m_manager) m_manager->stop();
    }

    // About 1 MiB of nesting: the parser stops at the depth limit, the tree is never built.
    void deeplyNestedClassify() {
        const size_t depth = 512 * 1024;
        std::string body = "{\"examples\": [{\"image\": 0}], \"context\": {\"x\": ";
        body += std::string(depth, '[') + std::string(depth, ']') + "}}";
        QVERIFY(body.size() > 1000000);
        expect400(post("/v1/models/mlp:classify", body), "nested deeper than 64 levels");
        expect400(post("/v1/models/mlp/versions/1:classify", body), "($.context.x[0][0][0][0][0][0]... (64 levels))");
        expectAlive();
    }

    void deeplyNestedPredict() {
        const size_t depth = 512 * 1024;
        const std::string body = "{\"instances\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
        auto r = post("/v1/models/mlp:predict", body);
        expect400(r, "JSON Parse error: JSON nested deeper than 64 levels at byte 77");
        // Objects nest as deep as lists.
        std::string objects;
        for (size_t i = 0; i < 100000; ++i) objects += "{\"a\":";
        objects += "1" + std::string(100000, '}');
        expect400(post("/v1/models/mlp:predict", objects), "nested deeper than 64 levels");
        expectAlive();
    }

    // Bodies of a few hundred KiB asking for more values than the budget: refused before any
    // tensor exists (the budget is checked before the instances' shapes, which are wrong here).
    void elementBudget() {
        std::string zeros;
        for (int i = 0; i < 65536; ++i) zeros += i ? ",0" : "0";
        expect400(post("/v1/models/mlp:predict", "{\"instances\": [" + zeros + "]}"),
                  "the request has 65536 instances of 784 input values each, more than the limit of 16777216 values per request");
        expect400(post("/v1/models/mlp:predict", "{\"inputs\": [" + zeros + "]}"),
                  "the request has 65536 rows of 784 input values each, more than the limit of 16777216 values per request");
        std::string examples;
        for (int i = 0; i < 30000; ++i) examples += i ? ",{}" : "{}";
        expect400(post("/v1/models/mlp:classify", "{\"examples\": [" + examples + "]}"),
                  "the request has 30000 examples of 784 input values each, more than the limit");
        expect400(post("/v1/models/mlp:predict", "{\"instances\": [0," + zeros + "]}"),
                  "more than 65536 instances in one request (65537)");
        expectAlive();
    }

    // The budget comes from RestOptions: a server with a small one refuses a request it would
    // otherwise run, and runs one within it.
    void configuredBudget() {
        json img = json::array();
        for (int y = 0; y < 28; ++y) {
            json row = json::array();
            for (int x = 0; x < 28; ++x) row.push_back(json::array({0.25}));
            img.push_back(row);
        }
        const std::string one = json{{"instances", json::array({img})}}.dump();
        const std::string two = json{{"instances", json::array({img, img})}}.dump();
        RestOptions options;
        options.limits.maxElements = 784;  // exactly one fashion_mlp image
        RestApi api(*m_manager, nullptr, options);
        QCOMPARE(api.handle("POST", "/v1/models/mlp:predict", one).status, 200);
        auto r = api.handle("POST", "/v1/models/mlp:predict", two);
        QCOMPARE(r.status, 400);
        QVERIFY(r.body.find("the request has 2 instances of 784 input values each, more than the limit of 784 values per request") !=
                std::string::npos);
        // The parsed tree itself is bounded: two images' worth of JSON values at most here
        // (2 x 1599 + 64), so 4000 numbers are refused while the body is parsed.
        QCOMPARE(jsonValueBudget(m_manager->find("mlp", 1, std::nullopt).value()->servable().signature(), options.limits),
                 uint64_t(3262));
        std::string zeros = "{\"instances\": [0";
        for (int i = 1; i < 4000; ++i) zeros += ",0";
        r = api.handle("POST", "/v1/models/mlp:predict", zeros + "]}");
        QCOMPARE(r.status, 400);
        QVERIFY2(r.body.find("JSON Parse error: JSON has more than 3262 values (at $.instances[3260])") != std::string::npos, r.body.c_str());
        options.limits.maxJsonDepth = 3;  // {"instances": [image]} needs 6 levels
        RestApi shallow(*m_manager, nullptr, options);
        r = shallow.handle("POST", "/v1/models/mlp:predict", one);
        QCOMPARE(r.status, 400);
        QVERIFY(r.body.find("nested deeper than 3 levels") != std::string::npos);
    }

    void imageHeaders() {
        auto predictImage = [&](const std::string& bytes) {
            return post("/v1/models/mlp:predict", json{{"instances", json::array({{{"b64", base64(bytes)}}})}}.dump());
        };
        expect400(predictImage(pngHeader(100000, 100000)),
                  "instances[0]: input \"image\": the PNG image is 100000x100000 pixels, more than the limit of 16777216 pixels");
        expect400(predictImage(pngHeader(4097, 4096)), "more than the limit of 16777216 pixels");
        expect400(predictImage(pngHeader(0, 10)), "the PNG header gives a size of 0x10");
        expect400(predictImage(jpegHeader(60000, 60000)), "the JPEG image is 60000x60000 pixels");
        expect400(predictImage("GIF89a\x10\x00\x10\x00"), "the b64 data is not a PNG, JPEG or BMP image");
        expect400(predictImage(std::string("\xFF\xD8\xFF\xD9", 4)), "the JPEG data has no readable frame header");
        // Real images of the three formats still decode, whatever segments precede the size.
        cv::Mat img(28, 28, CV_8UC1, cv::Scalar(77));
        for (const char* ext : {".png", ".jpg", ".bmp"}) {
            std::vector<uint8_t> bytes;
            QVERIFY(cv::imencode(ext, img, bytes));
            auto header = readImageHeader(std::string(bytes.begin(), bytes.end()));
            QVERIFY2(header.ok(), ext);
            QCOMPARE(header->width, int64_t(28));
            QCOMPARE(header->height, int64_t(28));
            auto r = predictImage(std::string(bytes.begin(), bytes.end()));
            QVERIFY(r);
            QCOMPARE(r->status, 200);
        }
        expectAlive();
    }
};

QTEST_GUILESS_MAIN(TestRequestLimits)
#include "tst_request_limits.moc"
