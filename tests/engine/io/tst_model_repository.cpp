// SPDX-License-Identifier: Apache-2.0
// Model repository: version numbering (next = max + 1, non-numeric entries ignored), the files of
// a version, kiln-model.json, refusal of an existing version, and no temporary folders left behind.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/core/sha256.h"
#include "engine/io/model_repository.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"

using namespace kiln::engine;
using namespace kiln::engine::io;
namespace fs = std::filesystem;

class TestModelRepository : public QObject {
    Q_OBJECT

    std::string m_base;
    Project m_project;

    RepositoryExport request() const {
        RepositoryExport r;
        r.base = m_base;
        r.name = "mlp";
        r.meta.kilnVersion = "9.9.9";
        r.meta.classNames = {"x", "y"};
        r.meta.preprocessingJson = R"({"pixel_scale":0.5})";
        r.metrics = {{"val_accuracy", 0.75}};
        r.projectText = serializeProject(m_project);
        return r;
    }

private slots:
    void init() {
        m_base = (fs::temp_directory_path() / ("kiln-repo-" + std::to_string(::getpid()))).string();
        fs::remove_all(m_base);
        auto p = loadProject(std::string(KILN_SOURCE_DIR) + "/resources/examples/fashion_mlp.kiln");
        QVERIFY(p.ok());
        m_project = *p;
    }
    void cleanup() { fs::remove_all(m_base); }

    void versions() {
        QCOMPARE(nextVersion(m_base + "/none"), int64_t(1));
        fs::create_directories(m_base + "/m/3");
        fs::create_directories(m_base + "/m/0012");
        fs::create_directories(m_base + "/m/latest");
        fs::create_directories(m_base + "/m/.tmp-13-1");
        std::ofstream(m_base + "/m/99") << "a file, not a version";
        QCOMPARE(listVersions(m_base + "/m"), (std::vector<int64_t>{3, 12}));
        QCOMPARE(nextVersion(m_base + "/m"), int64_t(13));
    }

    void exportTwice() {
        auto model = ops::analyzeModel(m_project.graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 4);
        ThreadPool pool(2);
        std::vector<int> seen;
        auto r1 = exportToRepository(*model, params, request(), pool, [&](int pct, const std::string&) { seen.push_back(pct); });
        QVERIFY2(r1.ok(), r1.ok() ? "" : r1.error().toString().c_str());
        QCOMPARE(r1->version, int64_t(1));
        QVERIFY(!seen.empty() && seen.back() == 100);
        QVERIFY(r1->parityChecked && r1->parity.passed);
        for (const char* f : {"model.onnx", "saved_model.pb", "model.kiln", "weights.safetensors", "kiln-model.json"})
            QVERIFY2(fs::is_regular_file(fs::path(r1->versionDir) / f), f);
        QVERIFY(fs::is_directory(fs::path(r1->versionDir) / "variables"));

        auto r2 = exportToRepository(*model, params, request(), pool);
        QVERIFY(r2.ok());
        QCOMPARE(r2->version, int64_t(2));
        QCOMPARE(r2->versionDir, m_base + "/mlp/2");
        for (const auto& e : fs::directory_iterator(m_base + "/mlp"))
            QVERIFY2(e.path().filename().string().find(".tmp") == std::string::npos, "temporary folder left behind");

        std::ifstream in(r2->versionDir + "/kiln-model.json");
        auto j = nlohmann::json::parse(in);
        QCOMPARE(j["format"].get<std::string>(), std::string("kiln-model"));
        QCOMPARE(j["model_version"].get<int64_t>(), int64_t(2));
        QCOMPARE(j["inputs"][0]["name"].get<std::string>(), std::string("image"));
        QCOMPARE(j["inputs"][0]["shape"], nlohmann::json({-1, 28, 28, 1}));
        QCOMPARE(j["outputs"][0]["name"].get<std::string>(), std::string("logits"));
        QCOMPARE(j["class_names"], nlohmann::json({"x", "y"}));
        QCOMPARE(j["preprocessing"]["pixel_scale"].get<double>(), 0.5);
        QCOMPARE(j["metrics"]["val_accuracy"].get<double>(), 0.75);
        QCOMPARE(j["kiln_version"].get<std::string>(), std::string("9.9.9"));
        QVERIFY(j["parity"]["passed"].get<bool>());
        QCOMPARE(j["files"]["saved_model"].get<std::string>(), std::string("saved_model.pb"));
        // The manifest lists every other file with its size and digest, so a server can tell a
        // version copied in file by file is complete.
        std::vector<std::string> listed;
        for (const auto& f : j["manifest"]) {
            const std::string rel = f["path"].get<std::string>();
            listed.push_back(rel);
            const std::string path = r2->versionDir + "/" + rel;
            QCOMPARE(f["size"].get<uintmax_t>(), fs::file_size(path));
            QCOMPARE(f["sha256"].get<std::string>(), sha256File(path).value());
        }
        QCOMPARE(listed, (std::vector<std::string>{"model.kiln", "model.onnx", "saved_model.pb", "weights.safetensors"}));

        // Kiln's own files reload, and the ONNX file reads back.
        QVERIFY(loadProject(r2->versionDir + "/model.kiln").ok());
        auto w = loadSafetensors(r2->versionDir + "/weights.safetensors");
        QVERIFY(w.ok());
        QCOMPARE(w->tensors.size(), params.params().size());
        QVERIFY(loadOnnx(r2->versionDir + "/model.onnx").ok());

        // An explicit version that exists is refused; a new explicit one is used.
        auto req = request();
        req.version = 2;
        auto r3 = exportToRepository(*model, params, req, pool);
        QVERIFY(!r3.ok());
        QCOMPARE(r3.error().param("field"), std::string("version"));
        req.version = 7;
        req.formats = {true, false, false};
        auto r4 = exportToRepository(*model, params, req, pool);
        QVERIFY(r4.ok());
        QVERIFY(fs::is_regular_file(m_base + "/mlp/7/model.onnx"));
        QVERIFY(!fs::exists(m_base + "/mlp/7/saved_model.pb"));
        QCOMPARE(nextVersion(m_base + "/mlp"), int64_t(8));
    }

    void badRequests() {
        auto model = ops::analyzeModel(m_project.graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 4);
        ThreadPool pool(1);
        auto req = request();
        req.name = "../escape";
        QVERIFY(!exportToRepository(*model, params, req, pool).ok());
        req = request();
        req.projectText.clear();
        QVERIFY(!exportToRepository(*model, params, req, pool).ok());
        QVERIFY(!fs::exists(m_base + "/mlp"));
        QVERIFY(!parseFormats("onnx,pytorch").ok());
        QVERIFY(!parseFormats("").ok());
        auto f = parseFormats("kiln,onnx");
        QVERIFY(f.ok() && f->onnx && f->kiln && !f->savedModel);
    }
};

QTEST_GUILESS_MAIN(TestModelRepository)
#include "tst_model_repository.moc"
