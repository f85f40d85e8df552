// SPDX-License-Identifier: Apache-2.0
// TrainingJob, the way the studio starts a run: the device setting picks the compute backend (or
// is refused naming training.device), and an image-folder project trains from the streaming
// pipeline into a run folder whose results list the unreadable file that was left out; the run
// is recorded with its step metrics. A project in a read-only folder keeps its runs and run store
// in the user's data folder.
#include <QtTest>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/api/internal/training_job_access.h"
#include "engine/api/internal/training_setup.h"
#include "engine/api/run_location.h"
#include "engine/api/training_job.h"
#include "engine/io/project.h"
#include "engine/store/run_store.h"

using namespace kiln::engine;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void writePictures(const fs::path& dir, int level, int n) {
    fs::create_directories(dir);
    for (int i = 0; i < n; ++i) {
        cv::Mat m(6, 6, CV_8UC1);
        for (int p = 0; p < 36; ++p) m.data[p] = static_cast<unsigned char>(level + (p * 7 + i * 13) % 41 - 20);
        cv::imwrite((dir / (std::to_string(i) + ".png")).string(), m);
    }
}

const char* kFlatNodes = R"(
        {"name": "flat", "op": "Flatten", "inputs": ["image"]},
        {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 2}})";

// `nodes` follow the Input node "image" [6, 6, 1].
io::Project folderProject(const std::string& device, const std::string& nodes = kFlatNodes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "name": "folder",
      "graph": {"nodes": [
        {"name": "image", "op": "Input", "attrs": {"shape": [6, 6, 1]}},)" + nodes + R"(]},
      "data": {"format": "folder", "path": "pics", "transforms": [{"type": "normalize", "preset": "symmetric"}]},
      "training": {"epochs": 3, "batch_size": 8, "seed": 2, "device": ")" +
                             device + R"(", "optimizer": {"type": "adam", "learning_rate": 0.01},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]}})";
    auto p = io::parseProject(text, "folder.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

}  // namespace

class TestTrainingJob : public QObject {
    Q_OBJECT

private slots:
    void deviceChoosesTheBackend() {
        train::TrainingConfig c;
        auto cpu = api::backendFor(c);
        QVERIFY(cpu.ok());
        QVERIFY(!*cpu);  // the CPU: the Trainer's default backend
        c.device = "cuda:9";
        auto missing = api::backendFor(c);
        QVERIFY(!missing.ok());  // no ninth GPU here (or no CUDA in this build)
        QVERIFY(missing.error().code == ErrorCode::DeviceUnavailable || missing.error().code == ErrorCode::Unsupported);
        bool named = false;
        for (const auto& [k, v] : missing.error().params) named = named || (k == "field" && v == "training.device");
        QVERIFY(named);
        c.device = "tpu:0";
        QVERIFY(!api::backendFor(c).ok());
    }

    void folderProjectTrainsAndIsRecorded() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writePictures(root / "pics" / "train" / "dark", 50, 12);
        writePictures(root / "pics" / "train" / "light", 200, 12);
        writePictures(root / "pics" / "val" / "dark", 50, 3);
        writePictures(root / "pics" / "val" / "light", 200, 3);
        std::ofstream(root / "pics" / "train" / "light" / "zero.png");  // zero bytes: left out
        const std::string path = (root / "folder.kiln").string();
        api::TrainingOptions o;
        o.threads = 2;
        auto job = api::TrainingJob::prepare(folderProject("cpu"), path, o);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().toString().c_str());
        QCOMPARE(api::TrainingJobAccess::trainer(**job).backend().device(), std::string("cpu"));
        double wait = -1;
        auto out = (*job)->run([&](const api::TrainEvent& e) {
            if (e.kind == api::TrainEvent::Kind::Step) wait = e.inputWaitFraction;
        });
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().toString().c_str());
        QVERIFY(wait >= 0);
        QCOMPARE(out->fit.history.size(), size_t(3));
        QVERIFY(out->results.contains("val_accuracy"));
        QVERIFY(out->results.at("val_accuracy").get<double>() > 0.9);
        QCOMPARE(out->results.at("bad_samples").size(), size_t(1));
        QVERIFY(out->results.at("bad_samples")[0].at("path").get<std::string>().find("zero.png") != std::string::npos);
        QVERIFY(fs::exists(fs::path(out->runDir) / "weights.safetensors"));
        QVERIFY(fs::exists(fs::path(out->runDir) / "run.json"));
        QVERIFY(out->runId > 0);
        // Recorded in the project's run store as completed, with its results.
        auto store = store::RunStore::open(api::runStorePath(path));
        QVERIFY(store.ok());
        auto runs = (*store)->listRuns();
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t(1));
        QCOMPARE(runs->front().id, out->runId);
        QVERIFY(runs->front().status == store::RunStatus::Completed);
    }

    void userDataDirFollowsXdg() {
        const QByteArray xdg = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", "/srv/xdg");
        QCOMPARE(api::userDataDir(), std::string("/srv/xdg/kiln"));
        qputenv("XDG_DATA_HOME", "relative/ignored");
        QVERIFY(api::userDataDir().ends_with("/.local/share/kiln"));
        if (xdg.isNull()) qunsetenv("XDG_DATA_HOME");
        else qputenv("XDG_DATA_HOME", xdg);
    }

    void readOnlyFolderTrainsIntoUserData() {
        QTemporaryDir tmp, data;
        const fs::path root = fs::path(tmp.path().toStdString()) / "shared";
        writePictures(root / "pics" / "train" / "dark", 50, 8);
        writePictures(root / "pics" / "train" / "light", 200, 8);
        writePictures(root / "pics" / "val" / "dark", 50, 2);
        writePictures(root / "pics" / "val" / "light", 200, 2);
        const std::string path = (root / "folder.kiln").string();
        std::ofstream(path) << io::serializeProject(folderProject("cpu"));
        QVERIFY(api::canWriteInto(root.string()));
        QCOMPARE(api::runsHome(root.string()), root.string());
        QVERIFY(::chmod(root.c_str(), 0555) == 0);
        const QByteArray xdg = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", data.path().toUtf8());

        QVERIFY(!api::canWriteInto(root.string()));
        QVERIFY(!api::canWriteInto((root / "not" / "yet").string()));
        const std::string home = api::runsHome(root.string());
        QVERIFY2(home.starts_with(data.path().toStdString() + "/kiln/projects/shared-"), home.c_str());
        // Another read-only folder of the same name has a history of its own.
        const fs::path other = fs::path(tmp.path().toStdString()) / "elsewhere" / "shared";
        fs::create_directories(other);
        QVERIFY(::chmod(other.c_str(), 0555) == 0);
        QVERIFY(api::runsHome(other.string()) != home);
        QCOMPARE(api::runsHome(root.string() + "/"), home);
        QCOMPARE(api::runsHome(root.string() + "/./pics/.."), home);

        api::TrainingOptions o;
        o.threads = 2;
        o.epochs = 1;
        auto job = api::TrainingJob::prepare(folderProject("cpu"), path, o);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().toString().c_str());
        auto out = (*job)->run([](const api::TrainEvent&) {});
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().toString().c_str());
        QVERIFY2(out->runDir.starts_with(home + "/runs/folder-"), out->runDir.c_str());
        QVERIFY(fs::exists(fs::path(out->runDir) / "weights.safetensors"));
        QCOMPARE(api::runStorePath(path), home + "/.kiln/runs.sqlite");
        auto store = store::RunStore::open(api::runStorePath(path));
        QVERIFY(store.ok());
        auto runs = (*store)->listRuns();
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t(1));
        QCOMPARE(runs->front().runDir, out->runDir);
        // Nothing was written next to the project.
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(root)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        QCOMPARE(names, (std::vector<std::string>{"folder.kiln", "pics"}));

        if (xdg.isNull()) qunsetenv("XDG_DATA_HOME");
        else qputenv("XDG_DATA_HOME", xdg);
        fs::permissions(root, fs::perms::owner_all);
        fs::permissions(other, fs::perms::owner_all);
    }

    // The job trains the expanded graph of a project using composite layers; their errors come
    // back naming the node and the attribute.
    void compositeLayersTrain() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writePictures(root / "pics" / "train" / "dark", 50, 8);
        writePictures(root / "pics" / "train" / "light", 200, 8);
        const std::string path = (root / "folder.kiln").string();
        const std::string nodes = R"(
        {"name": "stem", "op": "ConvBNReLU", "inputs": ["image"], "attrs": {"filters": 3}},
        {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["stem"]},
        {"name": "logits", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 2}})";
        api::TrainingOptions o;
        o.threads = 2;
        o.epochs = 1;
        auto job = api::TrainingJob::prepare(folderProject("cpu", nodes), path, o);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().toString().c_str());
        QVERIFY(api::TrainingJobAccess::trainer(**job).model().graph.find("stem/conv") >= 0);
        auto out = (*job)->run({});
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().toString().c_str());
        std::ifstream weights(fs::path(out->runDir) / "weights.safetensors", std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(weights)), std::istreambuf_iterator<char>());
        QVERIFY(bytes.find("stem/conv/kernel") != std::string::npos);

        std::string bad = nodes;
        bad.replace(bad.find("\"filters\": 3"), 12, "\"filters\": 0");
        auto refused = api::TrainingJob::prepare(folderProject("cpu", bad), path, o);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().node, std::string("stem"));
        QCOMPARE(refused.error().param("attribute"), std::string("filters"));
        QCOMPARE(refused.error().file, std::string("folder.kiln"));
    }

    void unavailableGpuIsRefusedBeforeTheData() {
        QTemporaryDir tmp;
        const std::string path = tmp.filePath(QStringLiteral("folder.kiln")).toStdString();
        // No data folder at all: the device is checked first, so the error is about the device.
        auto job = api::TrainingJob::prepare(folderProject("cuda:9"), path, api::TrainingOptions{});
        QVERIFY(!job.ok());
        QVERIFY2(job.error().toString().find("cuda:9") != std::string::npos, job.error().toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainingJob)
#include "tst_training_job.moc"
