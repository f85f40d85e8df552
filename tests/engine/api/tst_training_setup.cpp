// SPDX-License-Identifier: Apache-2.0
// prepareModel / prepareTraining, the set-up every use of a project's training shares: a CSV
// project prepared with the project's values and with overrides (epochs, batch, seed, shuffle,
// histograms, device and precision checked as a pair, linear learning-rate scaling with a warm-up
// in epochs) trains for real; errors name the file and line of a bad node, the configuration
// field, an empty data section, a device that is not there, and come before the data is read
// when they can; a data check of the caller stops the set-up before the trainer is made.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/api/internal/training_setup.h"
#include "engine/data/example.h"
#include "engine/data/tfrecord.h"
#include "engine/io/project.h"

using namespace kiln::engine;
namespace fs = std::filesystem;

namespace {

std::string param(const Error& e, const std::string& key) { return e.param(key); }

// 40 rows of two features and a class, then a project naming them, in `dir`.
std::string writeProject(const fs::path& dir, const std::string& nodes, const std::string& data = "") {
    fs::create_directories(dir);
    std::ofstream csv(dir / "rows.csv");
    for (int i = 0; i < 40; ++i) csv << (i % 2 ? 1.0 : -1.0) + 0.01 * i << "," << 0.5 - 0.02 * i << "," << i % 2 << "\n";
    csv.close();
    const std::string text = R"({"format": "kiln-project", "version": 2, "name": "rows",
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [2]}},)" +
                             nodes + R"(]},
  "data": )" + (data.empty() ? std::string(R"({"format": "csv", "path": "rows.csv"})") : data) + R"(,
  "training": {"epochs": 2, "batch_size": 8, "seed": 3, "validation_split": 0.25,
    "optimizer": {"type": "sgd", "learning_rate": 0.05},
    "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]}
})";
    const std::string path = (dir / "rows.kiln").string();
    std::ofstream(path) << text;
    return path;
}

const char* kDense = R"(
    {"name": "logits", "op": "Dense", "inputs": ["x"], "attrs": {"units": 2}})";

io::Project load(const std::string& path) {
    auto p = io::loadProject(path);
    if (!p.ok()) qFatal("loadProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

}  // namespace

class TestTrainingSetup : public QObject {
    Q_OBJECT

    fs::path m_dir;

private slots:
    void initTestCase() {
        m_dir = fs::temp_directory_path() / ("kiln-training-setup-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
    }
    void cleanupTestCase() { fs::remove_all(m_dir); }

    void projectValuesAndATrainingThatRuns() {
        const std::string path = writeProject(m_dir / "plain", kDense);
        const io::Project project = load(path);
        api::PrepareOptions options;
        options.threads = 1;
        auto prepared = api::prepareTraining(project, path, options);
        QVERIFY2(prepared.ok(), prepared.ok() ? "" : prepared.error().toString().c_str());
        QCOMPARE(prepared->config.epochs, 2);
        QCOMPARE(prepared->config.batchSize, int64_t(8));
        QCOMPARE(prepared->projectBatch, int64_t(8));
        QCOMPARE(prepared->config.seed, uint64_t(3));
        QCOMPARE(prepared->model.parameterCount(true), int64_t(2 * 2 + 2));
        QCOMPARE(int(prepared->pool->size()), 1);
        // The trainer holds out training.validation_split (a quarter of the 40 rows).
        QCOMPARE(prepared->trainer->data().train.count(), int64_t(30));
        QCOMPARE(prepared->trainer->data().validation->count(), int64_t(10));
        auto fit = prepared->trainer->fit({}, nullptr);
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        QCOMPARE(fit->history.size(), size_t(2));
        QVERIFY(std::isfinite(fit->history.back().train.loss));

        // The configuration alone, as the sweep reads its epochs.
        auto config = api::projectTrainingConfig(project, path);
        QVERIFY(config.ok());
        QCOMPARE(config->epochs, 2);
        // The names the studio's sweep dialog offers as objectives.
        auto metrics = api::projectMetricNames(project, path);
        QVERIFY2(metrics.ok(), metrics.ok() ? "" : metrics.error().toString().c_str());
        QCOMPARE(*metrics, std::vector<std::string>{"accuracy"});
        io::Project notAList = project;
        notAList.training["metrics"] = "accuracy";
        auto bad = api::projectMetricNames(notAList, path);
        QVERIFY(!bad.ok());
        QCOMPARE(param(bad.error(), "field"), std::string("training.metrics"));
        QCOMPARE(bad.error().file, path);
    }

    void overridesReachTheTrainer() {
        const std::string path = writeProject(m_dir / "overrides", kDense);
        const io::Project project = load(path);
        api::PrepareOptions options;
        options.epochs = 1;
        options.batchSize = 16;
        options.seed = 11;
        options.shuffle = false;
        options.histograms = false;
        options.device = "cpu";
        options.precision = "float32";
        options.lrScaling = "linear";
        options.warmupEpochs = 1;
        options.threads = 1;
        auto prepared = api::prepareTraining(project, path, options);
        QVERIFY2(prepared.ok(), prepared.ok() ? "" : prepared.error().toString().c_str());
        const auto& c = prepared->trainer->config();
        QCOMPARE(c.epochs, 1);
        QCOMPARE(c.batchSize, int64_t(16));
        QCOMPARE(prepared->projectBatch, int64_t(8));
        QCOMPARE(c.seed, uint64_t(11));
        QVERIFY(!c.shuffle);
        QCOMPARE(c.histogramFreq, 0);
        // Linear scaling: twice the batch, twice the rate, reached after one epoch of warm-up
        // (30 training rows after the 25 % validation split: 2 steps of 16).
        QCOMPARE(c.schedule.initial, 0.1);
        QCOMPARE(c.optimizer.learningRate, 0.1);
        QCOMPARE(c.schedule.warmupStart, 0.05);
        QCOMPARE(c.schedule.warmupSteps, int64_t(2));
        auto fit = prepared->trainer->fit({}, nullptr);
        QVERIFY(fit.ok());
        QCOMPARE(fit->history.size(), size_t(1));
    }

    // Streamed data batches at its own data.batch_size: that is the batch the configuration,
    // the step count and the rate scaling see; a --batch-size override replaces both.
    void theDataSectionsBatchSizeIsTheBatch() {
        const fs::path dir = m_dir / "streamed";
        fs::create_directories(dir);
        {
            auto w = data::TfRecordWriter::create((dir / "rows.tfrecord").string());
            QVERIFY(w.ok());
            for (int i = 0; i < 40; ++i) {
                data::Example ex;
                ex.features["x"] = data::Feature::ofFloats({(i % 2 ? 1.0f : -1.0f) + 0.01f * i, 0.5f - 0.02f * i});
                ex.features["label"] = data::Feature::ofInt64s({i % 2});
                QVERIFY((*w)->write(data::encodeExample(ex)).ok());
            }
            QVERIFY((*w)->close().ok());
        }
        const std::string section = R"({"format": "tfrecord", "path": "rows.tfrecord", "batch_size": 5,
            "features": {"x": {"type": "float", "shape": [2]}, "label": {"type": "int64", "shape": []}}})";
        const std::string path = writeProject(dir, kDense, section);
        io::Project project = load(path);
        project.training.erase("validation_split");  // streamed data splits in its data section
        QCOMPARE(api::streamedDataBatchSize(project.data), int64_t(5));
        api::PrepareOptions options;
        options.threads = 1;
        options.epochs = 1;
        auto prepared = api::prepareTraining(project, path, options);
        QVERIFY2(prepared.ok(), prepared.ok() ? "" : prepared.error().toString().c_str());
        QCOMPARE(prepared->config.batchSize, int64_t(5));
        QCOMPARE(prepared->projectBatch, int64_t(5));
        auto fit = prepared->trainer->fit({}, nullptr);
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        QCOMPARE(prepared->trainer->globalStep(), int64_t(8));  // 40 rows in batches of 5

        options.batchSize = 10;
        auto overridden = api::prepareTraining(project, path, options);
        QVERIFY2(overridden.ok(), overridden.ok() ? "" : overridden.error().toString().c_str());
        QCOMPARE(overridden->config.batchSize, int64_t(10));
        QCOMPARE(overridden->projectBatch, int64_t(5));
        auto fit2 = overridden->trainer->fit({}, nullptr);
        QVERIFY(fit2.ok());
        QCOMPARE(overridden->trainer->globalStep(), int64_t(4));

        // Data read into memory takes training.batch_size whatever its section says.
        QCOMPARE(api::streamedDataBatchSize(nlohmann::json{{"format", "csv"}, {"batch_size", 5}}), int64_t(0));
        QCOMPARE(api::streamedDataBatchSize(nlohmann::json{{"format", "idx"}, {"batch_size", 5}}), int64_t(0));
        QCOMPARE(api::streamedDataBatchSize(nlohmann::json{{"format", "folder"}}), int64_t(0));
    }

    void badOverridesNameTheField() {
        const std::string path = writeProject(m_dir / "fields", kDense);
        const io::Project project = load(path);
        {
            api::PrepareOptions options;
            options.device = "tpu";
            auto r = api::prepareModel(project, path, options);
            QVERIFY(!r.ok());
            QCOMPARE(r.error().code, ErrorCode::ConfigError);
            QCOMPARE(param(r.error(), "field"), std::string("training.device"));
        }
        {
            api::PrepareOptions options;
            options.precision = "mixed_float16";  // on the project's CPU
            auto r = api::prepareModel(project, path, options);
            QVERIFY(!r.ok());
            QCOMPARE(param(r.error(), "field"), std::string("training.precision"));
            QVERIFY(r.error().message.find("GPU") != std::string::npos);
        }
        {
            api::PrepareOptions options;
            options.lrScaling = "cubic";
            auto r = api::prepareTraining(project, path, options);
            QVERIFY(!r.ok());
            QCOMPARE(param(r.error(), "field"), std::string("lr_scaling"));
        }
        {
            // A GPU that is not there is refused before the data is read: the data file is gone.
            api::PrepareOptions options;
            options.device = "cuda:9";
            fs::remove(m_dir / "fields" / "rows.csv");
            auto r = api::prepareTraining(project, path, options);
            QVERIFY(!r.ok());
            QVERIFY(r.error().code == ErrorCode::DeviceUnavailable || r.error().code == ErrorCode::Unsupported);
            QCOMPARE(param(r.error(), "field"), std::string("training.device"));
            QCOMPARE(r.error().file, path);
            // On the CPU the missing file is what stops it, named.
            options.device = "cpu";
            auto missing = api::prepareTraining(project, path, options);
            QVERIFY(!missing.ok());
            QVERIFY(missing.error().file.find("rows.csv") != std::string::npos);
        }
    }

    void modelAndDataErrorsAreLocated() {
        // A Dense layer of no units, on the fourth line of the file: file and line of that node.
        const std::string path = writeProject(m_dir / "badnode", R"(
    {"name": "logits", "op": "Dense", "inputs": ["x"], "attrs": {"units": 0}})");
        const io::Project project = load(path);
        auto r = api::prepareModel(project, path, {});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().node, std::string("logits"));
        QCOMPARE(r.error().file, path);
        QCOMPARE(r.error().line, 4);

        const std::string empty = writeProject(m_dir / "nodata", kDense, "{}");
        api::PrepareOptions options;
        options.requireData = true;
        auto noData = api::prepareTraining(load(empty), empty, options);
        QVERIFY(!noData.ok());
        QCOMPARE(param(noData.error(), "field"), std::string("data"));
    }

    void theCallersDataCheckStopsTheSetUp() {
        const std::string path = writeProject(m_dir / "check", kDense);
        const io::Project project = load(path);
        api::PrepareOptions options;
        int64_t rows = -1;
        options.checkData = [&](const train::DataBundle& data) -> Status {
            rows = data.train.count();
            if (!data.test) return Error(ErrorCode::ConfigError, "split: no test split").with("field", "split");
            return {};
        };
        auto r = api::prepareTraining(project, path, options);
        QCOMPARE(rows, int64_t(40));
        QVERIFY(!r.ok());
        QCOMPARE(param(r.error(), "field"), std::string("split"));
    }
};

QTEST_GUILESS_MAIN(TestTrainingSetup)
#include "tst_training_setup.moc"
