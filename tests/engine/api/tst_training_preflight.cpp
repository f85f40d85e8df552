// SPDX-License-Identifier: Apache-2.0
// The check before a run: the memory predicted for the project's device, batch and precision
// against the device's free memory, the largest batch that fits when it does not, and a few timed
// real steps that give the time of an epoch; errors name the setting at fault.
#include <QtTest>

#include <filesystem>
#include <string>

#include <opencv2/imgcodecs.hpp>

#include "engine/api/training_preflight.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

using namespace kiln::engine;
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

io::Project project(const std::string& device, int64_t batch, int filters = 4) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "name": "pre",
      "graph": {"nodes": [
        {"name": "image", "op": "Input", "attrs": {"shape": [6, 6, 1]}},
        {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": )" + std::to_string(filters) +
                             R"(, "kernel_size": 3, "padding": "same", "activation": "relu"}},
        {"name": "flat", "op": "Flatten", "inputs": ["conv"]},
        {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 2}}]},
      "data": {"format": "folder", "path": "pics", "transforms": [{"type": "normalize", "preset": "unit"}]},
      "training": {"epochs": 1, "batch_size": )" + std::to_string(batch) + R"(, "seed": 3, "device": ")" + device +
                             R"(", "optimizer": {"type": "adam", "learning_rate": 0.01},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}}})";
    auto p = io::parseProject(text, "pre.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

}  // namespace

class TestTrainingPreflight : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string projectPath() const { return (fs::path(m_dir.path().toStdString()) / "pre.kiln").string(); }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        writePictures(fs::path(m_dir.path().toStdString()) / "pics" / "dark", 60, 20);
        writePictures(fs::path(m_dir.path().toStdString()) / "pics" / "light", 190, 20);
    }

    void memoryAgainstTheHost() {
        QVERIFY(api::hostAvailableMemory() > 0);
        auto r = api::preflightTraining(project("cpu", 8), projectPath(), {});
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->device, std::string("cpu"));
        QCOMPARE(r->batch, int64_t{8});
        QCOMPARE(r->peakBytes, r->memory.total());
        QVERIFY(r->memory.parameters > 0 && r->memory.activations > 0);
        QVERIFY(r->budgetBytes > 0);
        QVERIFY(r->fits);
        QCOMPARE(r->suggestedBatch, int64_t{0});
        QCOMPARE(r->measuredSteps, 0);  // no timing asked for
        // The same numbers as the memory assistant's for this model and batch.
        auto graph = io::modelGraph(project("cpu", 8));
        QVERIFY(graph.ok());
        auto model = ops::analyzeModel(*graph);
        QVERIFY(model.ok());
        QCOMPARE(r->memory.parameters, uint64_t((6 * 6 * 4 * 2 + 2) + (3 * 3 * 1 * 4 + 4)) * 4);
    }

    void aBatchTooLargeGetsOneThatFits() {
        // A batch whose activations alone exceed any machine's memory.
        api::PreflightRequest request;
        request.batchSize = int64_t{1} << 40;
        auto r = api::preflightTraining(project("cpu", 8, 64), projectPath(), request);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->batch, int64_t{1} << 40);
        QVERIFY(!r->fits);
        QVERIFY(r->peakBytes > r->budgetBytes);
        QVERIFY(r->suggestedBatch > 0 && r->suggestedBatch < r->batch);
        // The suggestion fits.
        request.batchSize = r->suggestedBatch;
        auto again = api::preflightTraining(project("cpu", 8, 64), projectPath(), request);
        QVERIFY(again.ok());
        QVERIFY(again->peakBytes <= r->budgetBytes);
    }

    void timedStepsGiveTheEpochTime() {
        api::PreflightRequest request;
        request.calibrationSteps = 3;
        request.threads = 1;
        auto r = api::preflightTraining(project("cpu", 8), projectPath(), request);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(r->measuredSteps, 3);
        QVERIFY(r->secondsPerStep > 0);
        QVERIFY(r->firstStepSeconds > 0);
        QVERIFY(r->trainingSamples > 0 && r->trainingSamples <= 40);
        QCOMPARE(r->stepsPerEpoch, (r->trainingSamples + 7) / 8);
        QCOMPARE(r->epochSeconds, double(r->stepsPerEpoch) * r->secondsPerStep);
        QCOMPARE(r->samplesPerSecond, 8.0 / r->secondsPerStep);
        // More steps asked for than one epoch has (40 pictures, batch 8, one epoch): the steps
        // there are, after the first.
        request.calibrationSteps = 50;
        auto shorter = api::preflightTraining(project("cpu", 8), projectPath(), request);
        QVERIFY(shorter.ok());
        QCOMPARE(int64_t(shorter->measuredSteps), shorter->stepsPerEpoch - 1);
    }

    void errorsNameTheSetting() {
        api::PreflightRequest request;
        request.calibrationSteps = 2;
        auto gpu = api::preflightTraining(project("cuda:7", 8), projectPath(), request);
        QVERIFY(!gpu.ok());
        QVERIFY2(gpu.error().toString().find("cuda:7") != std::string::npos, gpu.error().toString().c_str());
        auto bad = api::preflightTraining(project("tpu", 8), projectPath(), {});
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().toString().find("device") != std::string::npos, bad.error().toString().c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainingPreflight)
#include "tst_training_preflight.moc"
