// SPDX-License-Identifier: Apache-2.0
// The REST API without sockets: routing, predict (row and columnar, one and two inputs, b64
// images), classify, regress, status and metadata JSON, and every documented error with its
// HTTP code; predictions are compared with the engine's own plan.
#include <QtTest>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

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
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
    }
    if (i + 1 == bytes.size()) {
        const uint32_t v = uint8_t(bytes[i]) << 16;
        out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == bytes.size()) {
        const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
    }
    return out;
}

void expectClose(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > tol * std::max(1.0f, std::abs(want[i])))
            QFAIL(qPrintable(QStringLiteral("value %1: got %2, want %3").arg(i).arg(got[i]).arg(want[i])));
}
}  // namespace

class TestRestApi : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<ThreadPool> m_pool;
    std::unique_ptr<ModelManager> m_manager;
    Metrics m_metrics;
    std::unique_ptr<RestApi> m_api;

    RestResponse post(const std::string& path, const std::string& body) { return m_api->handle("POST", path, body); }
    RestResponse get(const std::string& path) { return m_api->handle("GET", path, ""); }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const std::string root = m_dir.path().toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", root + "/mlp", 1, 7));
        QVERIFY(kiln::test::makeVersion("two_tower", root + "/tower", 3, 11));
        ModelServerConfig cfg;
        cfg.models.push_back({"mlp", root + "/mlp", "tensorflow", {}, {{"stable", 1}}, 0});
        cfg.models.push_back({"tower", root + "/tower", "tensorflow", {}, {}, 0});
        ManagerOptions options;
        options.pollSeconds = 0;
        options.log = [](const std::string&) {};
        m_pool = std::make_unique<ThreadPool>(2);
        m_manager = std::make_unique<ModelManager>(cfg, options, *m_pool);
        m_manager->start();
        m_api = std::make_unique<RestApi>(*m_manager, &m_metrics, RestOptions{});
    }

    void status() {
        auto r = get("/v1/models/mlp");
        QCOMPARE(r.status, 200);
        const json j = json::parse(r.body);
        QCOMPARE(j["model_version_status"].size(), size_t(1));
        QCOMPARE(j["model_version_status"][0]["version"], json("1"));
        QCOMPARE(j["model_version_status"][0]["state"], json("AVAILABLE"));
        QCOMPARE(j["model_version_status"][0]["status"]["error_code"], json("OK"));
        QCOMPARE(j["model_version_status"][0]["status"]["error_message"], json(""));
        QCOMPARE(get("/v1/models/mlp/versions/1").status, 200);
        QCOMPARE(get("/v1/models/mlp/labels/stable").status, 200);
        auto missing = get("/v1/models/mlp/versions/9");
        QCOMPARE(missing.status, 404);
        QCOMPARE(json::parse(missing.body)["error"], json("Could not find version 9 of model mlp"));
        auto unknown = get("/v1/models/nope");
        QCOMPARE(unknown.status, 404);
        QCOMPARE(json::parse(unknown.body)["error"], json("Could not find any versions of model nope"));
        QCOMPARE(get("/v1/models").status, 400);
        QCOMPARE(json::parse(get("/v1/models").body)["error"], json("Missing model name in request."));
        QCOMPARE(get("/v1/models/mlp/labels/nolabel").status, 400);
    }

    void metadata() {
        auto r = get("/v1/models/tower/metadata");
        QCOMPARE(r.status, 200);
        const json j = json::parse(r.body);
        QCOMPARE(j["model_spec"]["name"], json("tower"));
        QCOMPARE(j["model_spec"]["version"], json("3"));
        const json& sig = j["metadata"]["signature_def"]["signature_def"]["serving_default"];
        QCOMPARE(sig["method_name"], json("tensorflow/serving/predict"));
        QCOMPARE(sig["inputs"].size(), size_t(2));
        QCOMPARE(sig["inputs"]["tower_a"]["dtype"], json("DT_FLOAT"));
        QCOMPARE(sig["inputs"]["tower_a"]["name"], json("tower_a:0"));
        QCOMPARE(sig["inputs"]["tower_a"]["tensor_shape"]["dim"][0]["size"], json("-1"));
        QCOMPARE(sig["inputs"]["tower_a"]["tensor_shape"]["dim"][1]["size"], json("15"));
        QCOMPARE(sig["outputs"]["malignant"]["tensor_shape"]["dim"][1]["size"], json("1"));
        QCOMPARE(get("/v1/models/tower/versions/3/metadata").status, 200);
        QCOMPARE(get("/v1/models/tower/versions/4/metadata").status, 404);
    }

    void predictRowMatchesPlan() {
        const int64_t batch = 3;
        const auto x = kiln::test::sampleValues(batch * 784, 1);
        json instances = json::array();
        for (int64_t b = 0; b < batch; ++b) {
            json img = json::array();
            for (int r = 0; r < 28; ++r) {
                json row = json::array();
                for (int c = 0; c < 28; ++c) row.push_back(json::array({x[static_cast<size_t>(b * 784 + r * 28 + c)]}));
                img.push_back(row);
            }
            instances.push_back(img);
        }
        auto r = post("/v1/models/mlp:predict", json{{"instances", instances}}.dump());
        QCOMPARE(r.status, 200);
        const json j = json::parse(r.body);
        QVERIFY(j.contains("predictions"));
        QCOMPARE(j["predictions"].size(), size_t(batch));
        QCOMPARE(j["predictions"][0].size(), size_t(10));
        std::vector<float> got;
        kiln::test::flatten(j["predictions"], got);
        const auto want = kiln::test::referenceOutputs("fashion_mlp", 7, {x}, batch);
        expectClose(got, want[0]);
        // Columnar gives the same numbers under "outputs".
        auto c = post("/v1/models/mlp/versions/1:predict", json{{"inputs", instances}}.dump());
        QCOMPARE(c.status, 200);
        std::vector<float> got2;
        kiln::test::flatten(json::parse(c.body)["outputs"], got2);
        expectClose(got2, want[0]);
        QCOMPARE(post("/v1/models/mlp/labels/stable:predict", json{{"inputs", instances}}.dump()).status, 200);
        QCOMPARE(post("/v1/models/mlp:predict", json{{"signature_name", "serving_default"}, {"instances", instances}}.dump()).status, 200);
    }

    void predictTwoInputs() {
        const auto a = kiln::test::sampleValues(2 * 15, 2), b = kiln::test::sampleValues(2 * 15, 3);
        json rows = json::array();
        for (int i = 0; i < 2; ++i)
            rows.push_back({{"tower_a", std::vector<float>(a.begin() + i * 15, a.begin() + (i + 1) * 15)},
                            {"tower_b", std::vector<float>(b.begin() + i * 15, b.begin() + (i + 1) * 15)}});
        auto r = post("/v1/models/tower:predict", json{{"instances", rows}}.dump());
        QCOMPARE(r.status, 200);
        std::vector<float> got;
        kiln::test::flatten(json::parse(r.body)["predictions"], got);
        const auto want = kiln::test::referenceOutputs("two_tower", 11, {a, b}, 2);
        expectClose(got, want[0]);
        json cols = {{"tower_a", json::array({std::vector<float>(a.begin(), a.begin() + 15), std::vector<float>(a.begin() + 15, a.end())})},
                     {"tower_b", json::array({std::vector<float>(b.begin(), b.begin() + 15), std::vector<float>(b.begin() + 15, b.end())})}};
        auto c = post("/v1/models/tower:predict", json{{"inputs", cols}}.dump());
        QCOMPARE(c.status, 200);
        got.clear();
        kiln::test::flatten(json::parse(c.body)["outputs"], got);
        expectClose(got, want[0]);
        // Classify: a binary classifier's sigmoid output becomes two classes.
        json examples = json::array();
        for (int i = 0; i < 2; ++i)
            examples.push_back({{"tower_a", std::vector<float>(a.begin() + i * 15, a.begin() + (i + 1) * 15)},
                                {"tower_b", std::vector<float>(b.begin() + i * 15, b.begin() + (i + 1) * 15)}});
        auto k = post("/v1/models/tower:classify", json{{"examples", examples}}.dump());
        QCOMPARE(k.status, 200);
        const json res = json::parse(k.body)["results"];
        QCOMPARE(res.size(), size_t(2));
        QCOMPARE(res[0].size(), size_t(2));
        QCOMPARE(res[0][1][0], json("1"));
        QVERIFY(std::abs(res[0][1][1].get<float>() - want[0][0]) < 1e-5f);
        QVERIFY(std::abs(res[0][0][1].get<float>() - (1 - want[0][0])) < 1e-5f);
        auto g = post("/v1/models/tower:regress", json{{"examples", examples}}.dump());
        QCOMPARE(g.status, 200);
        QVERIFY(std::abs(json::parse(g.body)["results"][1].get<float>() - want[0][1]) < 1e-5f);
    }

    void classifyWithClassNames() {
        const auto x = kiln::test::sampleValues(784, 4);
        auto r = post("/v1/models/mlp:classify", json{{"examples", json::array({{{"image", x}}})}}.dump());
        QCOMPARE(r.status, 200);
        const json res = json::parse(r.body)["results"][0];
        QCOMPARE(res.size(), size_t(10));
        QCOMPARE(res[0][0], json("T-shirt/top"));
        QCOMPARE(res[9][0], json("Ankle boot"));
        // Softmax of the logits (the example trains with from_logits).
        const auto logits = kiln::test::referenceOutputs("fashion_mlp", 7, {x}, 1)[0];
        float m = *std::max_element(logits.begin(), logits.end()), sum = 0;
        for (float v : logits) sum += std::exp(v - m);
        float total = 0;
        for (int c = 0; c < 10; ++c) {
            QVERIFY(std::abs(res[c][1].get<float>() - std::exp(logits[c] - m) / sum) < 1e-5f);
            total += res[c][1].get<float>();
        }
        QVERIFY(std::abs(total - 1) < 1e-4f);
        QCOMPARE(post("/v1/models/mlp:regress", json{{"examples", json::array({{{"image", x}}})}}.dump()).status, 400);
    }

    void b64Image() {
        cv::Mat img(28, 28, CV_8UC1);
        for (int r = 0; r < 28; ++r)
            for (int c = 0; c < 28; ++c) img.at<uint8_t>(r, c) = static_cast<uint8_t>((r * 9 + c * 5) % 256);
        std::vector<uint8_t> png;
        QVERIFY(cv::imencode(".png", img, png));
        const std::string b64 = base64(std::string(png.begin(), png.end()));
        auto r = post("/v1/models/mlp:predict", json{{"instances", json::array({{{"b64", b64}}})}}.dump());
        QCOMPARE(r.status, 200);
        std::vector<float> x(784);
        for (int i = 0; i < 784; ++i) x[static_cast<size_t>(i)] = img.data[i] / 255.0f;
        std::vector<float> got;
        kiln::test::flatten(json::parse(r.body)["predictions"], got);
        expectClose(got, kiln::test::referenceOutputs("fashion_mlp", 7, {x}, 1)[0]);
        // A colour image of another size is converted to gray and resized.
        cv::Mat colour(56, 56, CV_8UC3, cv::Scalar(10, 200, 30));
        QVERIFY(cv::imencode(".png", colour, png));
        QCOMPARE(post("/v1/models/mlp:predict", json{{"inputs", {{"b64", base64(std::string(png.begin(), png.end()))}}}}.dump()).status, 200);
        auto bad = post("/v1/models/mlp:predict", json{{"instances", json::array({{{"b64", base64("not an image")}}})}}.dump());
        QCOMPARE(bad.status, 400);
        QVERIFY(json::parse(bad.body)["error"].get<std::string>().find("instances[0]") != std::string::npos);
        auto notB64 = post("/v1/models/mlp:predict", R"({"instances": [{"b64": "@@@"}]})");
        QCOMPARE(notB64.status, 400);
        auto towerImage = post("/v1/models/tower:predict", json{{"instances", json::array({{{"tower_a", {{"b64", b64}}}, {"tower_b", std::vector<float>(15)}}})}}.dump());
        QCOMPARE(towerImage.status, 400);
    }

    void errors_data() {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("message");
        const QString one15 = QStringLiteral("[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14]");
        QTest::newRow("unknown model") << "POST" << "/v1/models/nope:predict" << R"({"instances": [[1]]})" << 404
                                       << "Servable not found for request: Latest(nope)";
        QTest::newRow("unknown version") << "POST" << "/v1/models/mlp/versions/5:predict" << R"({"instances": [[1]]})" << 404
                                         << "Servable not found for request: Specific(mlp, 5)";
        QTest::newRow("bad json") << "POST" << "/v1/models/mlp:predict" << "{\"instances\": [1,}" << 400 << "JSON Parse error";
        QTest::newRow("not an object") << "POST" << "/v1/models/mlp:predict" << "[1,2]" << 400 << "must be a JSON object";
        QTest::newRow("neither key") << "POST" << "/v1/models/mlp:predict" << R"({"foo": 1})" << 400 << "Missing 'inputs' or 'instances' key";
        QTest::newRow("both keys") << "POST" << "/v1/models/mlp:predict" << R"({"inputs": [1], "instances": [1]})" << 400 << "Not both";
        QTest::newRow("empty instances") << "POST" << "/v1/models/mlp:predict" << R"({"instances": []})" << 400 << "empty list";
        QTest::newRow("wrong shape") << "POST" << "/v1/models/tower:predict"
                                     << QStringLiteral(R"({"instances": [{"tower_a": %1, "tower_b": [1,2,3]}]})").arg(one15) << 400
                                     << "instances[0].tower_b: input \"tower_b\" expects shape [15] per instance; dimension 0 has 3 values";
        QTest::newRow("string value") << "POST" << "/v1/models/tower:predict"
                                      << QStringLiteral(R"({"inputs": {"tower_a": [%1], "tower_b": [[0,1,2,"x",4,5,6,7,8,9,10,11,12,13,14]]}})").arg(one15)
                                      << 400 << "inputs.tower_b[0][3]: input \"tower_b\" (DT_FLOAT) needs a number, found a string";
        QTest::newRow("missing input") << "POST" << "/v1/models/tower:predict" << QStringLiteral(R"({"instances": [{"tower_a": %1}]})").arg(one15)
                                       << 400 << "instances[0]: input \"tower_b\" is missing";
        QTest::newRow("extra input") << "POST" << "/v1/models/tower:predict"
                                     << QStringLiteral(R"({"instances": [{"tower_a": %1, "tower_b": %1, "c": 1}]})").arg(one15) << 400
                                     << "\"c\" is not an input";
        QTest::newRow("plain list for two inputs") << "POST" << "/v1/models/tower:predict" << R"({"instances": [[1,2]]})" << 400
                                                   << "keyed by input name";
        QTest::newRow("batch mismatch") << "POST" << "/v1/models/tower:predict"
                                        << QStringLiteral(R"({"inputs": {"tower_a": [%1, %1], "tower_b": [%1]}})").arg(one15) << 400
                                        << "must agree";
        QTest::newRow("signature") << "POST" << "/v1/models/mlp:predict" << R"({"signature_name": "other", "instances": [[1]]})" << 400
                                   << "Serving signature name: \"other\" not found in signature def";
        QTest::newRow("signature type") << "POST" << "/v1/models/mlp:predict" << R"({"signature_name": 3, "instances": [[1]]})" << 400
                                        << "'signature_name' key must be a string value.";
        QTest::newRow("malformed path") << "POST" << "/v1/models/mlp:explain" << "{}" << 400 << "Malformed request: POST /v1/models/mlp:explain";
        QTest::newRow("wrong method") << "PUT" << "/v1/models/mlp" << "" << 400 << "Malformed request: PUT /v1/models/mlp";
        QTest::newRow("escape") << "GET" << "/v1/models/../versions/1" << "" << 400 << "Invalid model name: ..";
        QTest::newRow("escape post") << "POST" << "/v1/models/..:predict" << "{}" << 400 << "Invalid model name: ..";
        QTest::newRow("version and label") << "GET" << "/v1/models/mlp/versions/1/labels/stable" << "" << 400 << "Malformed request";
        QTest::newRow("examples missing") << "POST" << "/v1/models/mlp:classify" << R"({"instances": []})" << 400 << "Missing 'examples' key";
        QTest::newRow("feature length") << "POST" << "/v1/models/tower:classify" << R"({"examples": [{"tower_a": [1], "tower_b": [1]}]})"
                                        << 400 << "examples[0].tower_a: feature has 1 values, input \"tower_a\" takes 15";
        QTest::newRow("huge version") << "GET" << "/v1/models/mlp/versions/99999999999999999999999" << "" << 400 << "Failed to convert version";
    }

    void errors() {
        QFETCH(QString, method);
        QFETCH(QString, path);
        QFETCH(QString, body);
        QFETCH(int, status);
        QFETCH(QString, message);
        auto r = m_api->handle(method.toStdString(), path.toStdString(), body.toStdString());
        QCOMPARE(r.status, status);
        QCOMPARE(r.contentType, std::string("application/json"));
        const json j = json::parse(r.body);
        QVERIFY(j.contains("error"));
        const std::string text = j["error"].get<std::string>();
        if (text.find(message.toStdString()) == std::string::npos) QFAIL(qPrintable(QString::fromStdString(text)));
    }

    void floatFormatting() {
        ModelSignature sig;
        sig.outputs.push_back({"y", {-1, 3}});
        Tensor t = Tensor::fromVector(Shape{1, 3}, {3.0f, 0.1f, -2.5e-8f});
        const std::string row = formatPredictResponse({t}, sig, false);
        QVERIFY2(row.find("[[3.0, 0.1, -2.5e-08]]") != std::string::npos, row.c_str());
        const std::string col = formatPredictResponse({t}, sig, true);
        QVERIFY2(col.find("\"outputs\": [[3.0, 0.1, -2.5e-08]]") != std::string::npos, col.c_str());
        Tensor nan = Tensor::fromVector(Shape{1, 3}, {NAN, INFINITY, -INFINITY});
        QVERIFY(formatPredictResponse({nan}, sig, false).find("[[NaN, Infinity, -Infinity]]") != std::string::npos);
    }

    void base64Decoding() {
        std::string out;
        QVERIFY(decodeBase64("aGVsbG8=", out));
        QCOMPARE(out, std::string("hello"));
        QVERIFY(decodeBase64("aGVsbG8", out));
        QCOMPARE(out, std::string("hello"));
        QVERIFY(decodeBase64("-_8=", out));  // URL-safe alphabet
        QCOMPARE(out, std::string("\xfb\xff", 2));
        QVERIFY(!decodeBase64("aGV$bG8=", out));
        QVERIFY(!decodeBase64("aG=Vs", out));
    }

    void metricsCountRequests() {
        const std::string text = m_metrics.render(m_manager.get());
        QVERIFY(text.find(":tensorflow:serving:request_count{model_name=\"mlp\",API=\"predict\",entrypoint=\"REST\",status=\"OK\"}") !=
                std::string::npos);
        QVERIFY(text.find("status=\"NOT_FOUND\"") != std::string::npos);
        QVERIFY(text.find("kiln_serve_loaded_versions{model_name=\"tower\"} 1") != std::string::npos);
        QVERIFY(text.find(":tensorflow:serving:request_latency_bucket{model_name=\"mlp\",API=\"predict\",entrypoint=\"REST\",le=\"+Inf\"}") !=
                std::string::npos);
        // Unknown model names do not create label values.
        QVERIFY(text.find("nope") == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRestApi)
#include "tst_rest_api.moc"
