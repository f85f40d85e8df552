// SPDX-License-Identifier: Apache-2.0
// kiln-serve --plugin end to end: a model version whose GroupNorm node comes from the example
// plugin, loaded only through --plugin (a ':'-separated list), is served by the real program on a
// loopback port; its status and metadata are TF Serving's, and predict (row and columnar) returns
// the numbers of group normalisation with the saved gamma and beta followed by the Dense layer,
// recomputed here from the formula. Without the plugin the version does not load, its status
// names the operation, and predict is refused.
// kiln-test-labels: slow
#include <QtTest>

#include <QProcess>

#include <filesystem>
#include <fstream>

#include <httplib.h>

#include "engine/serve/serve_test_util.h"
#include "plugin_model.h"
#include "serve_process.h"

using nlohmann::json;

namespace {

const QString kPlugin = QStringLiteral(KILN_TEST_PLUGIN_DIR "/group_norm.so");
const QString kOtherPlugin = QStringLiteral(KILN_TEST_PLUGIN_DIR "/huber_fbeta.so");

// One kiln-serve process serving model "gn" from `base`, and a client for it.
struct Server : kiln::test::ServeProcess {
    // Starts it with no plugin of the user's (an empty plugin folder in `home`) and waits until
    // the model's status answers (loaded or not).
    bool start(const QString& base, const QString& home, const QStringList& extra) {
        const QStringList args = {QStringLiteral("--model_name=gn"), QStringLiteral("--model_base_path=%1").arg(base),
                                  QStringLiteral("--file_system_poll_wait_seconds=0")};
        return ServeProcess::start(args + extra, "/v1/models/gn", kiln::test::isolatedPluginEnvironment(home), 30000);
    }

    // The state of version 1, once it is no longer loading (or the last seen after 30 s).
    json settledStatus() {
        json v;
        for (int i = 0; i < 600; ++i) {
            if (auto r = client->Get("/v1/models/gn"); r && r->status == 200) {
                v = json::parse(r->body)["model_version_status"][0];
                const std::string state = v["state"].get<std::string>();
                if (state == "AVAILABLE" || state == "END") return v;
            }
            QTest::qWait(50);
        }
        return v;
    }
};

}  // namespace

class TestKilnServePlugin : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_home, m_base;
    kiln::test::GroupNormWeights m_saved;
    Server m_server;

    void expectPredictions(const std::vector<float>& got, const std::vector<float>& x, int n) {
        const std::vector<double> want = kiln::test::groupNormReference(m_saved, x, n);
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i)
            if (std::abs(got[i] - want[i]) > 1e-5 * std::max(1.0, std::abs(want[i])))
                QFAIL(qPrintable(QStringLiteral("value %1: got %2, want %3").arg(i).arg(got[i]).arg(want[i])));
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kiln::test::serveProgram())) QSKIP("kiln-serve is not built");
        QVERIFY(m_dir.isValid());
        m_home = m_dir.filePath("home");
        QVERIFY(QDir().mkpath(m_home));
        // The version folder as an exporter writes it: the project, its weights and
        // kiln-model.json with the file manifest.
        m_base = m_dir.filePath("gn");
        const std::string version = (m_base + "/1").toStdString();
        std::filesystem::create_directories(version);
        std::ofstream(version + "/model.kiln") << kiln::test::kGroupNormProject;
        std::string error;
        m_saved = kiln::test::writeGroupNormWeights(kPlugin, version + "/weights.safetensors", error);
        QVERIFY2(error.empty(), error.c_str());
        const json manifest = {
            {"format", "kiln-model"},
            {"name", "gn"},
            {"version", 1},
            {"inputs", json::array({{{"name", "x"}, {"shape", {-1, 3, 4}}, {"dtype", "float32"}}})},
            {"outputs", json::array({{{"name", "y"}, {"shape", {-1, 2}}, {"dtype", "float32"}}})},
            {"manifest", kiln::test::fileManifest(version, {"model.kiln", "weights.safetensors"})}};
        std::ofstream(version + "/kiln-model.json") << manifest.dump(2);
        QVERIFY(m_server.start(m_base, m_home, {QStringLiteral("--plugin=%1:%2").arg(kOtherPlugin, kPlugin)}));
    }

    void cleanupTestCase() {
        if (m_server.client) QCOMPARE(m_server.stop(), 0);
    }

    void statusAndMetadata() {
        const json v = m_server.settledStatus();
        QCOMPARE(v["version"], json("1"));
        QCOMPARE(v["state"], json("AVAILABLE"));
        QCOMPARE(v["status"]["error_code"], json("OK"));
        auto m = m_server.client->Get("/v1/models/gn/metadata");
        QVERIFY(m);
        QCOMPARE(m->status, 200);
        const json sig = json::parse(m->body)["metadata"]["signature_def"]["signature_def"]["serving_default"];
        const json& dims = sig["inputs"]["x"]["tensor_shape"]["dim"];
        QCOMPARE(dims.size(), size_t{3});
        QCOMPARE(dims[1]["size"], json("3"));
        QCOMPARE(dims[2]["size"], json("4"));
        QCOMPARE(sig["outputs"]["y"]["tensor_shape"]["dim"][1]["size"], json("2"));
    }

    // Three samples with different scales and offsets per group, so that each group's own mean
    // and variance matter.
    void predictRunsThePlugin() {
        constexpr int n = 3, per = kiln::test::kPositions * kiln::test::kChannels;
        std::vector<float> x = kiln::test::sampleValues(n * per, 4);
        for (size_t i = 0; i < x.size(); ++i) {
            const size_t sample = i / per;
            x[i] = x[i] * (1.0f + static_cast<float>(i % 4)) + static_cast<float>(sample);
        }
        json instances = json::array();
        for (int s = 0; s < n; ++s) {
            json rows = json::array();
            for (int p = 0; p < kiln::test::kPositions; ++p) {
                const auto* row = x.data() + s * per + p * kiln::test::kChannels;
                rows.push_back(std::vector<float>(row, row + kiln::test::kChannels));
            }
            instances.push_back(rows);
        }
        auto r = m_server.client->Post("/v1/models/gn:predict", json{{"instances", instances}}.dump(), "application/json");
        QVERIFY(r);
        QVERIFY2(r->status == 200, r->body.c_str());
        std::vector<float> got;
        kiln::test::flatten(json::parse(r->body)["predictions"], got);
        expectPredictions(got, x, n);
        if (QTest::currentTestFailed()) return;
        // Columnar request, one version named.
        auto c = m_server.client->Post("/v1/models/gn/versions/1:predict", json{{"inputs", {{"x", instances}}}}.dump(),
                                       "application/json");
        QVERIFY(c);
        QVERIFY2(c->status == 200, c->body.c_str());
        got.clear();
        kiln::test::flatten(json::parse(c->body)["outputs"], got);
        expectPredictions(got, x, n);
    }

    // The same version served without the plugin: it does not load, and says why.
    void withoutThePluginTheVersionDoesNotLoad() {
        Server plain;
        QVERIFY(plain.start(m_base, m_home, {QStringLiteral("--max_num_load_retries=0")}));
        const json v = plain.settledStatus();
        QVERIFY2(v["state"] == json("END"), v.dump().c_str());
        QVERIFY2(v["status"]["error_code"] != json("OK"), v.dump().c_str());
        const std::string message = v["status"]["error_message"].get<std::string>();
        qInfo("without the plugin: %s, %s", v["state"].get<std::string>().c_str(), message.c_str());
        QVERIFY2(message.find("/1/model.kiln:4: ") != std::string::npos &&
                     message.find("uses the plugin operation example.GroupNorm, which no loaded plugin provides") != std::string::npos,
                 message.c_str());
        auto r = plain.client->Post("/v1/models/gn:predict", R"({"instances": [[[0,0,0,0],[0,0,0,0],[0,0,0,0]]]})",
                                    "application/json");
        QVERIFY(r);
        QVERIFY2(r->status != 200, r->body.c_str());
        QCOMPARE(plain.stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestKilnServePlugin)
#include "tst_kiln_serve_plugin.moc"
