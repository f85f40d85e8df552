// SPDX-License-Identifier: Apache-2.0
// Training from the streaming pipeline: an image folder project trains and validates without
// being loaded into memory, reports the input wait and the unreadable files it left out, and a
// run stopped in the middle of an epoch resumes bit-identically.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::train;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

ops::ModelInfo buildModel(const std::string& nodes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

// 8x8 grey pictures: "dark" around 50, "light" around 200, with per-pixel noise.
void writeFolder(const fs::path& root, int perClass) {
    for (int c = 0; c < 2; ++c) {
        const fs::path dir = root / (c ? "light" : "dark");
        fs::create_directories(dir);
        for (int i = 0; i < perClass; ++i) {
            cv::Mat m(8, 8, CV_8UC1);
            for (int p = 0; p < 64; ++p) {
                const float v = (c ? 200.0f : 50.0f) +
                                40.0f * rng::normal(5, static_cast<uint64_t>(c * 1000 + i), static_cast<uint64_t>(p));
                m.data[p] = static_cast<unsigned char>(std::clamp(v, 0.0f, 255.0f));
            }
            cv::imwrite((dir / (std::to_string(i) + ".png")).string(), m);
        }
    }
}

const char* kModel = R"([
  {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 1]}},
  {"name": "flat", "op": "Flatten", "inputs": ["image"]},
  {"name": "h", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 16, "activation": "relu"}},
  {"name": "logits", "op": "Dense", "inputs": ["h"], "attrs": {"units": 2}}
])";

TrainingConfig config(const ops::ModelInfo& m, int epochs) {
    auto c = parseTrainingConfig(json::parse(R"({"epochs": )" + std::to_string(epochs) + R"(, "batch_size": 8,
        "seed": 11, "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]})"),
                                 m.graph);
    if (!c.ok()) qFatal("parseTrainingConfig: %s", c.error().toString().c_str());
    return std::move(c).value();
}

json folderData() {
    return json::parse(R"({"format": "folder", "path": "pics", "workers": 2, "split": {"validation": 0.25},
        "transforms": [{"type": "normalize", "preset": "unit"}]})");
}

std::vector<float> weightsOf(Trainer& t) {
    std::vector<float> w;
    for (const auto& p : t.params().params())
        w.insert(w.end(), p.value.data<float>(), p.value.data<float>() + p.value.numel());
    return w;
}

// Saves the full state and stops after global step `at`.
class StopAt final : public Callback {
public:
    StopAt(int64_t at, std::string dir) : m_at(at), m_dir(std::move(dir)) {}
    std::string type() const override { return "StopAt"; }
    Status onBatchEnd(TrainControl& c, const BatchLogs& logs) override {
        if (logs.globalStep == m_at) {
            c.requestStateSave(m_dir);
            c.requestStop("test stop");
        }
        return {};
    }

private:
    int64_t m_at;
    std::string m_dir;
};

}  // namespace

class TestTrainerStreaming : public QObject {
    Q_OBJECT

private slots:
    void folderProjectTrains() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFolder(root / "pics" / "train", 24);
        writeFolder(root / "pics" / "val", 8);
        // Two unreadable files: left out, listed, training goes on.
        std::ofstream(root / "pics" / "train" / "dark" / "broken.png") << "not a picture";
        std::ofstream(root / "pics" / "train" / "light" / "empty.png");
        const auto m = buildModel(kModel);
        const auto c = config(m, 4);
        json d = folderData();
        d.erase("split");  // split by folder: train/ and val/
        auto data = openData(d, (root / "p.kiln").string(), c.seed, c.batchSize, c.shuffle);
        QVERIFY2(data.ok(), data.ok() ? "" : data.error().toString().c_str());
        QVERIFY(data->trainStream != nullptr);
        QVERIFY(data->validationStream != nullptr);
        QCOMPARE(data->classNames, (std::vector<std::string>{"dark", "light"}));
        ThreadPool pool(2);
        auto t = Trainer::create(m, c, std::move(data.value()), pool);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        double wait = -1;
        int64_t steps = 0, announced = 0;
        auto r = (*t)->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) {
                wait = e.inputWaitFraction;
                ++steps;
                announced = e.stepsPerEpoch;
            }
        });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->history.size(), size_t(4));
        QVERIFY(wait >= 0 && wait <= 1);  // reported for streamed data
        // 48 readable pictures in batches of 8; the announced count (before the two unreadable
        // files were met) is corrected after the first epoch.
        QCOMPARE(steps, int64_t(4 * 6));
        QCOMPARE(announced, int64_t(6));
        const auto& last = r->history.back();
        QVERIFY(last.validation.has_value());
        QVERIFY2(last.train.loss < 0.5 * r->history.front().train.loss + 0.2,
                 qPrintable(QString("loss %1 -> %2").arg(r->history.front().train.loss).arg(last.train.loss)));
        QVERIFY(last.validation->metric("accuracy") >= 0.9);
        // The two bad files, each listed once with its reason although every epoch met them.
        QCOMPARE(r->badSamples.size(), size_t(2));
        for (const auto& b : r->badSamples) {
            QVERIFY(b.path.find("broken.png") != std::string::npos || b.path.find("empty.png") != std::string::npos);
            QVERIFY(!b.reason.empty());
        }
    }

    void strictModeFailsNamingTheFile() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFolder(root / "pics", 8);
        std::ofstream(root / "pics" / "dark" / "broken.png") << "not a picture";
        const auto m = buildModel(kModel);
        const auto c = config(m, 1);
        json d = folderData();
        d["strict"] = true;
        d.erase("split");
        auto data = openData(d, (root / "p.kiln").string(), c.seed, c.batchSize);
        ThreadPool pool(2);
        if (!data.ok()) {  // the probe may already meet the broken file
            QVERIFY(data.error().toString().find("broken.png") != std::string::npos);
            return;
        }
        auto t = Trainer::create(m, c, std::move(data.value()), pool);
        QVERIFY(t.ok());
        auto r = (*t)->fit();
        QVERIFY(!r.ok());
        QVERIFY2(r.error().toString().find("broken.png") != std::string::npos, r.error().toString().c_str());
    }

    void stoppedMidEpochResumesBitIdentically() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFolder(root / "pics", 20);
        const auto m = buildModel(kModel);
        const auto c = config(m, 3);
        ThreadPool pool(2);
        auto open = [&] {
            auto d = openData(folderData(), (root / "p.kiln").string(), c.seed, c.batchSize, c.shuffle);
            if (!d.ok()) qFatal("openData: %s", d.error().toString().c_str());
            return std::move(d).value();
        };
        auto whole = std::move(Trainer::create(m, c, open(), pool)).value();
        auto a = whole->fit();
        QVERIFY(a.ok());
        const auto reference = weightsOf(*whole);

        const std::string state = (root / "state").string();
        auto first = std::move(Trainer::create(m, c, open(), pool)).value();
        // 30 training pictures in batches of 8: 4 steps per epoch; step 6 is inside epoch 2.
        first->addCallback(std::make_unique<StopAt>(6, state));
        auto b = first->fit();
        QVERIFY(b.ok());
        QVERIFY(Trainer::hasState(state));

        auto second = std::move(Trainer::create(m, c, open(), pool)).value();
        QVERIFY(second->restoreFrom(state).ok());
        auto r = second->fit();
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->resumedFromStep, int64_t(6));
        QVERIFY(weightsOf(*second) == reference);
    }

    void validationSplitNeedsDataSplit() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFolder(root / "pics", 4);
        const auto m = buildModel(kModel);
        auto c = config(m, 1);
        c.validationSplit = 0.2;
        json d = folderData();
        d.erase("split");
        auto data = openData(d, (root / "p.kiln").string(), c.seed, c.batchSize);
        QVERIFY(data.ok());
        ThreadPool pool(1);
        auto t = Trainer::create(m, c, std::move(data.value()), pool);
        QVERIFY(!t.ok());
        QVERIFY(t.error().toString().find("data.split") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTrainerStreaming)
#include "tst_trainer_streaming.moc"
