// SPDX-License-Identifier: Apache-2.0
// Hot reload with real copy tools: a version copied in file by file (kiln-model.json first or
// last, with or without a manifest) is loaded only once complete and then served; a truncated
// file that is completed later is loaded after completion; a hostile kiln-model.json fails
// cleanly.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"
#include "engine/serve/serve_test_util.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const fs::path& p, const std::string& bytes, std::ios::openmode mode = std::ios::trunc) {
    std::ofstream out(p, std::ios::binary | mode);
    out << bytes;
}

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(60)); }

// Collects the manager's log lines.
struct Log {
    std::mutex mutex;
    std::vector<std::string> lines;
    std::function<void(const std::string&)> sink() {
        return [this](const std::string& l) {
            std::lock_guard lock(mutex);
            lines.push_back(l);
        };
    }
    int count(const std::string& needle) {
        std::lock_guard lock(mutex);
        int n = 0;
        for (const auto& l : lines) n += l.find(needle) != std::string::npos;
        return n;
    }
};

// One fashion_mlp image as a row-format request.
std::string rowBody(uint32_t seed) {
    const auto x = kiln::test::sampleValues(784, seed);
    json img = json::array();
    for (int r = 0; r < 28; ++r) {
        json row = json::array();
        for (int c = 0; c < 28; ++c) row.push_back(json::array({x[static_cast<size_t>(r * 28 + c)]}));
        img.push_back(row);
    }
    return json{{"instances", json::array({img})}}.dump();
}

}  // namespace

class TestModelManagerCopies : public QObject {
    Q_OBJECT

private:
    static constexpr int kStableMs = 400;

    // A complete version (manifest in kiln-model.json) to copy from.
    static std::string staging(QTemporaryDir& dir, uint64_t seed) {
        const std::string base = dir.filePath("staging").toStdString();
        if (!kiln::test::makeVersion("fashion_mlp", base, 1, seed)) return {};
        return base + "/1";
    }

    static VersionState state(const ModelManager& m, int64_t v) {
        auto st = m.status("m", v, std::nullopt);
        return st.ok() ? (*st)[0].state : VersionState::Unknown;
    }

private slots:
    // cp -r: the folder appears, then each file grows from empty to full, in some order.
    void copiedFileByFile_data() {
        QTest::addColumn<bool>("jsonFirst");
        QTest::addColumn<bool>("manifest");
        QTest::newRow("kiln-model.json first") << true << true;
        QTest::newRow("kiln-model.json last") << false << true;
        QTest::newRow("no manifest, json last") << false << false;
        QTest::newRow("no manifest, json first") << true << false;
    }

    void copiedFileByFile() {
        QFETCH(bool, jsonFirst);
        QFETCH(bool, manifest);
        QTemporaryDir dir;
        const fs::path from = staging(dir, 5);
        QVERIFY(!from.empty());
        const std::string base = dir.filePath("m").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, 1));
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        Log log;
        ManagerOptions options;
        options.pollSeconds = 0;
        options.stableMs = kStableMs;
        options.log = log.sink();
        ModelManager manager(cfg, options, pool);
        manager.start();
        QCOMPARE(manager.find("m", std::nullopt, std::nullopt).value()->servable().version(), int64_t(1));

        json modelJson = json::parse(readAll(from / "kiln-model.json"));
        if (!manifest) modelJson.erase("manifest");
        const fs::path to = fs::path(base) / "2";
        fs::create_directories(to);
        auto copyJson = [&] { writeBytes(to / "kiln-model.json", modelJson.dump(2)); };
        // Every step is followed by a scan: none may load or fail version 2.
        auto step = [&](const std::function<void()>& write) {
            write();
            manager.scanOnce();
            settle();
        };
        step([] {});
        if (jsonFirst) step(copyJson);
        step([&] { writeBytes(to / "model.kiln", ""); });
        step([&] { fs::copy_file(from / "model.kiln", to / "model.kiln", fs::copy_options::overwrite_existing); });
        const std::string weights = readAll(from / "weights.safetensors");
        step([&] { writeBytes(to / "weights.safetensors", weights.substr(0, 100)); });
        step([&] { writeBytes(to / "weights.safetensors", weights.substr(100, weights.size() / 2), std::ios::app); });
        QCOMPARE(state(manager, 2), VersionState::Start);
        QCOMPARE(log.count("version 2 from"), 0);
        QCOMPARE(manager.find("m", std::nullopt, std::nullopt).value()->servable().version(), int64_t(1));
        writeBytes(to / "weights.safetensors", weights.substr(100 + weights.size() / 2), std::ios::app);
        if (!jsonFirst) {
            manager.scanOnce();
            QCOMPARE(state(manager, 2), VersionState::Start);  // files just changed, no manifest yet
            copyJson();
        }
        manager.scanOnce();
        if (!manifest) {
            // Complete, but only known to be so once the files have settled.
            QCOMPARE(state(manager, 2), VersionState::Start);
            std::this_thread::sleep_for(std::chrono::milliseconds(kStableMs + 100));
            manager.scanOnce();
        }
        QCOMPARE(state(manager, 2), VersionState::Available);
        QCOMPARE(log.count("failed"), 0);
        QCOMPARE(log.count("Loading servable m version 2"), 1);
        QCOMPARE(manager.find("m", std::nullopt, std::nullopt).value()->servable().version(), int64_t(2));
        RestApi api(manager, nullptr, {});
        auto r = api.handle("POST", "/v1/models/m/versions/2:predict", rowBody(3));
        QCOMPARE(r.status, 200);
        std::vector<float> got;
        kiln::test::flatten(json::parse(r.body)["predictions"], got);
        const auto want = kiln::test::referenceOutputs("fashion_mlp", 5, {kiln::test::sampleValues(784, 3)}, 1)[0];
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) QVERIFY(std::abs(got[i] - want[i]) < 1e-5f);
    }

    // Without a manifest a truncated file that stays put is loaded (and fails); completing it
    // later loads the version, however many scans have passed.
    void truncatedThenCompleted() {
        QTemporaryDir dir;
        const fs::path from = staging(dir, 6);
        QVERIFY(!from.empty());
        const std::string base = dir.filePath("m").toStdString();
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        Log log;
        ManagerOptions options;
        options.pollSeconds = 0;
        options.stableMs = 150;
        options.maxLoadRetries = 2;
        options.log = log.sink();
        const fs::path to = fs::path(base) / "1";
        fs::create_directories(to);
        fs::copy_file(from / "model.kiln", to / "model.kiln");
        const std::string weights = readAll(from / "weights.safetensors");
        writeBytes(to / "weights.safetensors", weights.substr(0, weights.size() / 3));
        ModelManager manager(cfg, options, pool);
        manager.start();
        QCOMPARE(state(manager, 1), VersionState::Start);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        for (int i = 0; i < 6; ++i) manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::End);
        QCOMPARE(log.count("Loading servable m version 1 failed"), options.maxLoadRetries + 1);  // then it stops trying
        // The copy finishes: the changed files are examined anew.
        writeBytes(to / "weights.safetensors", weights.substr(weights.size() / 3), std::ios::app);
        manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::Start);  // changed just now: waiting for it to settle
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::Available);
        RestApi api(manager, nullptr, {});
        QCOMPARE(api.handle("POST", "/v1/models/m:predict", rowBody(4)).status, 200);
    }

    // With a manifest, a truncated file is waited for (never loaded) while it grows; a file that
    // settles at the wrong size is an error naming it.
    void manifestMismatch() {
        QTemporaryDir dir;
        const fs::path from = staging(dir, 7);
        QVERIFY(!from.empty());
        const std::string base = dir.filePath("m").toStdString();
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        Log log;
        ManagerOptions options;
        options.pollSeconds = 0;
        options.stableMs = 150;
        options.log = log.sink();
        const fs::path to = fs::path(base) / "1";
        fs::create_directories(to);
        fs::copy_file(from / "model.kiln", to / "model.kiln");
        fs::copy_file(from / "kiln-model.json", to / "kiln-model.json");
        const std::string weights = readAll(from / "weights.safetensors");
        writeBytes(to / "weights.safetensors", weights.substr(0, 64));
        ModelManager manager(cfg, options, pool);
        manager.start();
        QCOMPARE(state(manager, 1), VersionState::Start);
        auto st = manager.status("m", 1, std::nullopt);
        QVERIFY((*st)[0].message.find("weights.safetensors has 64 bytes, kiln-model.json lists " + std::to_string(weights.size())) !=
                std::string::npos);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::End);
        QCOMPARE(log.count("version 1 from"), 0);  // never read
        // Same size, other bytes: the sha256 check refuses it.
        std::string wrong = weights;
        wrong[wrong.size() - 1] ^= 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a new modification time, past the clock's tick
        writeBytes(to / "weights.safetensors", wrong);
        manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::End);
        st = manager.status("m", 1, std::nullopt);
        QVERIFY((*st)[0].message.find("does not match the sha256") != std::string::npos);
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        writeBytes(to / "weights.safetensors", weights);
        manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::Available);
    }

    // A version loaded without kiln-model.json is loaded again when the file arrives later.
    void lateModelJsonIsRead() {
        QTemporaryDir dir;
        const fs::path from = staging(dir, 8);
        QVERIFY(!from.empty());
        const std::string base = dir.filePath("m").toStdString();
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        Log log;
        ManagerOptions options;
        options.pollSeconds = 0;
        options.stableMs = 150;
        options.log = log.sink();
        const fs::path to = fs::path(base) / "1";
        fs::create_directories(to);
        fs::copy_file(from / "model.kiln", to / "model.kiln");
        fs::copy_file(from / "weights.safetensors", to / "weights.safetensors");
        ModelManager manager(cfg, options, pool);
        manager.start();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        manager.scanOnce();
        QCOMPARE(state(manager, 1), VersionState::Available);
        RestApi api(manager, nullptr, {});
        const json example = {{"examples", json::array({{{"image", kiln::test::sampleValues(784, 9)}}})}};
        auto firstLabel = [&] {
            auto r = api.handle("POST", "/v1/models/m:classify", example.dump());
            return r.status == 200 ? json::parse(r.body)["results"][0][0][0].get<std::string>() : "HTTP " + std::to_string(r.status);
        };
        QVERIFY(firstLabel() != "c0");
        json modelJson = json::parse(readAll(from / "kiln-model.json"));
        modelJson.erase("manifest");
        modelJson["class_names"] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"};
        writeBytes(to / "kiln-model.json", modelJson.dump(2));
        manager.scanOnce();  // changed just now: the loaded files keep serving meanwhile
        QVERIFY(firstLabel() != "c0");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        manager.scanOnce();
        QCOMPARE(firstLabel(), std::string("c0"));
        QCOMPARE(log.count("Reloading servable m version 1"), 1);
        QCOMPARE(state(manager, 1), VersionState::Available);
    }

    // kiln-model.json nested a million levels deep is a clear load error, not a crash.
    void deeplyNestedModelJson() {
        QTemporaryDir dir;
        const std::string base = dir.filePath("m").toStdString();
        QVERIFY(kiln::test::makeVersion("fashion_mlp", base, 1, 1));
        const size_t depth = 1 << 20;
        writeBytes(fs::path(base) / "1" / "kiln-model.json", "{\"inputs\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
        ModelServerConfig cfg;
        cfg.models.push_back({"m", base, "tensorflow", {}, {}, 0});
        ThreadPool pool(1);
        ManagerOptions options;
        options.pollSeconds = 0;
        options.stableMs = 0;
        options.log = [](const std::string&) {};
        ModelManager manager(cfg, options, pool);
        manager.start();
        auto st = manager.status("m", 1, std::nullopt);
        QVERIFY(st.ok());
        QCOMPARE((*st)[0].state, VersionState::End);
        const std::string& message = (*st)[0].message;
        QVERIFY2(message.find("kiln-model.json") != std::string::npos && message.find("nested deeper than 64 levels") != std::string::npos,
                 message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestModelManagerCopies)
#include "tst_model_manager_copies.moc"
