// SPDX-License-Identifier: Apache-2.0
// Callbacks against Keras' documented behaviour: scripted metric sequences through
// ReduceLROnPlateau (patience, min_delta, cooldown, min_lr, mode), EarlyStopping (patience,
// min_delta, baseline, start_from_epoch, restore_best_weights), ModelCheckpoint (best only,
// every N epochs, file names), CSVLogger, TerminateOnNaN and TensorBoard; then with a real Trainer:
// full-state backups that resume bit-identically, the command queue (pause, learning rate, stop)
// and the "callbacks" configuration errors.
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/data/tfrecord.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "engine/train/callbacks.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"

using namespace kiln::engine;
using namespace kiln::engine::train;
using nlohmann::json;

namespace {

ops::ModelInfo buildModel() {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
      {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "activation": "relu"}},
      {"name": "drop", "op": "Dropout", "inputs": ["h"], "attrs": {"rate": 0.25}},
      {"name": "logits", "op": "Dense", "inputs": ["drop"], "attrs": {"units": 2}}]}})";
    auto p = io::parseProject(text, "test.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

DataBundle blobs(int64_t n) {
    data::Column x{"features", Shape{2}, {}, {}, {}}, y{"label", Shape{}, {}, {}, {}};
    for (int64_t i = 0; i < n; ++i) {
        const int c = static_cast<int>(i % 2);
        y.values.push_back(static_cast<float>(c));
        for (int j = 0; j < 2; ++j)
            x.values.push_back((c ? 1.0f : -1.0f) + 1.5f * rng::normal(5, 1, static_cast<uint64_t>(2 * i + j)));
    }
    DataBundle b;
    b.train = std::move(data::InMemoryDataset::create(n, {x, y})).value();
    return b;
}

TrainingConfig config(const std::string& training, const ops::ModelInfo& m) {
    auto c = parseTrainingConfig(json::parse(training), m.graph);
    if (!c.ok()) qFatal("parseTrainingConfig: %s", c.error().toString().c_str());
    return std::move(c).value();
}

// Drives callbacks with scripted values; weights come from a real ParamStore when one is given.
class ScriptedControl : public TrainControl {
public:
    explicit ScriptedControl(double lr = 0.1, exec::ParamStore* params = nullptr) : lr(lr), store(params) {}
    double learningRate() const override { return lr; }
    void setLearningRate(double v) override { lr = v; }
    void requestStop(const std::string& r) override {
        stop = true;
        reason = r;
    }
    exec::ParamStore* parameters() override { return store; }
    void requestStateSave(const std::string& d) override { saves.push_back(d); }
    void requestRestore(const std::string& d) override { restore = d; }
    void noteCheckpoint(const std::string& p) override { last = p; }
    std::string lastCheckpoint() const override { return last; }
    int64_t globalStep() const override { return step; }

    double lr;
    exec::ParamStore* store;
    bool stop = false;
    std::string reason, last, restore;
    std::vector<std::string> saves;
    int64_t step = 0;
};

// Runs epochs 1..n with logs {monitor: values[i]}; returns the 1-based epoch at which a stop was
// requested (0 if none) and fills the learning rate seen after each epoch.
int drive(Callback& cb, ScriptedControl& c, const std::string& monitor, const std::vector<double>& values,
          std::vector<double>* lrs = nullptr) {
    if (!cb.onTrainBegin(c).ok()) qFatal("onTrainBegin");
    for (size_t i = 0; i < values.size(); ++i) {
        if (!cb.onEpochEnd(c, static_cast<int>(i + 1), {{monitor, values[i]}, {"loss", values[i]}}).ok()) qFatal("onEpochEnd");
        if (lrs) lrs->push_back(c.lr);
        if (c.stop) return static_cast<int>(i + 1);
    }
    return 0;
}

std::unique_ptr<Callback> make(const std::string& spec, const std::string& runDir = {}) {
    auto cb = makeCallback(json::parse(spec), "training.callbacks[0]", CallbackContext{runDir});
    if (!cb.ok()) qFatal("makeCallback: %s", cb.error().toString().c_str());
    return std::move(cb).value();
}

std::vector<float> allWeights(const exec::ParamStore& p) {
    std::vector<float> out;
    for (const auto& prm : p.params()) out.insert(out.end(), prm.value.data<float>(), prm.value.data<float>() + prm.value.numel());
    return out;
}

std::string readText(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

class TstCallbacks : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string dir(const char* name) {
        std::string d = m_dir.filePath(QString::fromLatin1(name)).toStdString();
        std::filesystem::create_directories(d);
        return d;
    }

private slots:
    void reduceLrPatienceAndMinDelta() {
        // min_delta 0.01: 0.995 and 0.992 are not improvements on 1.0; after patience 2 the rate halves.
        ScriptedControl c(0.1);
        auto cb = make(R"({"type": "ReduceLROnPlateau", "monitor": "val_loss", "factor": 0.5, "patience": 2, "min_delta": 0.01})");
        std::vector<double> lrs;
        drive(*cb, c, "val_loss", {1.0, 0.995, 0.992, 0.5, 0.6, 0.7, 0.8}, &lrs);
        QCOMPARE(lrs, (std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025}));
    }

    void reduceLrCooldownAndMinLr() {
        // patience 1, cooldown 2: reduce, then two epochs in cooldown (wait held at 0), then again.
        ScriptedControl c(1.0);
        auto cb = make(R"({"type": "ReduceLROnPlateau", "factor": 0.1, "patience": 1, "cooldown": 2, "min_lr": 0.0005})");
        std::vector<double> lrs;
        drive(*cb, c, "val_loss", {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, &lrs);
        std::vector<double> want = {1.0, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001, 0.001, 0.0005, 0.0005, 0.0005};
        QCOMPARE(lrs.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) QVERIFY2(std::abs(lrs[i] - want[i]) < 1e-12, qPrintable(QString::number(i)));
        // A missing monitor changes nothing.
        ScriptedControl c2(0.3);
        auto cb2 = make(R"({"type": "ReduceLROnPlateau", "patience": 0})");
        QVERIFY(cb2->onTrainBegin(c2).ok());
        QVERIFY(cb2->onEpochEnd(c2, 1, {{"loss", 1.0}}).ok());
        QCOMPARE(c2.lr, 0.3);
    }

    void reduceLrModeMax() {
        // "accuracy" → max by the Keras rule; a falling accuracy is a plateau.
        ScriptedControl c(0.2);
        auto cb = make(R"({"type": "ReduceLROnPlateau", "monitor": "val_accuracy", "factor": 0.5, "patience": 1, "min_delta": 0})");
        std::vector<double> lrs;
        drive(*cb, c, "val_accuracy", {0.5, 0.6, 0.55, 0.7}, &lrs);
        QCOMPARE(lrs, (std::vector<double>{0.2, 0.2, 0.1, 0.1}));
        // mode "min" on an accuracy inverts it.
        ScriptedControl d(0.2);
        auto cbMin = make(R"({"type": "ReduceLROnPlateau", "monitor": "val_accuracy", "mode": "min", "factor": 0.5, "patience": 1, "min_delta": 0})");
        lrs.clear();
        drive(*cbMin, d, "val_accuracy", {0.5, 0.6}, &lrs);
        QCOMPARE(lrs, (std::vector<double>{0.2, 0.1}));
    }

    void earlyStoppingPatience() {
        ScriptedControl c;
        auto cb = make(R"({"type": "EarlyStopping", "monitor": "val_loss", "patience": 2})");
        QCOMPARE(drive(*cb, c, "val_loss", {1.0, 0.9, 0.95, 0.92, 0.91}), 4);
        auto* es = static_cast<EarlyStopping*>(cb.get());
        QCOMPARE(es->stoppedEpoch(), 4);
        QCOMPARE(es->bestEpoch(), 2);
        QCOMPARE(*es->best(), 0.9);
        QVERIFY(QString::fromStdString(c.reason).contains(QStringLiteral("val_loss")));
        // patience 0 stops at the first epoch without improvement, but never at the first epoch.
        ScriptedControl c0;
        auto p0 = make(R"({"type": "EarlyStopping", "patience": 0})");
        QCOMPARE(drive(*p0, c0, "val_loss", {1.0, 0.5, 0.6}), 3);
        // Steady improvement never stops.
        ScriptedControl c1;
        auto p1 = make(R"({"type": "EarlyStopping", "patience": 1})");
        QCOMPARE(drive(*p1, c1, "val_loss", {5, 4, 3, 2, 1}), 0);
    }

    void earlyStoppingMinDelta() {
        // 0.97 is not 0.05 better than 1.0: no improvement.
        ScriptedControl c;
        auto cb = make(R"({"type": "EarlyStopping", "patience": 1, "min_delta": 0.05})");
        QCOMPARE(drive(*cb, c, "val_loss", {1.0, 0.97, 0.96}), 2);
        // A negative min_delta counts as its absolute value (Keras).
        ScriptedControl c2;
        auto neg = make(R"({"type": "EarlyStopping", "patience": 1, "min_delta": -0.05})");
        QCOMPARE(drive(*neg, c2, "val_loss", {1.0, 0.97}), 2);
        // Max mode for accuracy.
        ScriptedControl c3;
        auto acc = make(R"({"type": "EarlyStopping", "monitor": "val_accuracy", "patience": 1, "min_delta": 0.01})");
        QCOMPARE(drive(*acc, c3, "val_accuracy", {0.5, 0.7, 0.705}), 3);
    }

    void earlyStoppingBaseline() {
        // With a baseline of 0.5 never reached, wait is not reset by improvements over the best.
        ScriptedControl c;
        auto cb = make(R"({"type": "EarlyStopping", "patience": 2, "baseline": 0.5})");
        QCOMPARE(drive(*cb, c, "val_loss", {0.9, 0.95, 0.96, 0.97}), 2);
        ScriptedControl c2;
        auto nob = make(R"({"type": "EarlyStopping", "patience": 2})");
        QCOMPARE(drive(*nob, c2, "val_loss", {0.9, 0.95, 0.96, 0.97}), 3);
        // Beating the baseline resets the wait.
        ScriptedControl c3;
        auto beat = make(R"({"type": "EarlyStopping", "patience": 2, "baseline": 0.5})");
        QCOMPARE(drive(*beat, c3, "val_loss", {0.4, 0.45, 0.46, 0.47}), 3);
    }

    void earlyStoppingStartFromEpoch() {
        // Epochs 0 and 1 (Keras numbering) are warm-up: their rising loss is ignored.
        ScriptedControl c;
        auto cb = make(R"({"type": "EarlyStopping", "patience": 1, "start_from_epoch": 2})");
        QCOMPARE(drive(*cb, c, "val_loss", {1.0, 2.0, 3.0, 2.5, 2.6}), 5);
        QCOMPARE(static_cast<EarlyStopping*>(cb.get())->bestEpoch(), 4);
    }

    void earlyStoppingRestoresBestWeights() {
        auto model = buildModel();
        auto store = exec::ParamStore::create(model, 1);
        ScriptedControl c(0.1, &store);
        auto cb = make(R"({"type": "EarlyStopping", "patience": 1, "restore_best_weights": true})");
        QVERIFY(cb->onTrainBegin(c).ok());
        std::vector<std::vector<float>> snapshots;
        const std::vector<double> losses = {1.0, 0.4, 0.6, 0.7};
        int stopped = 0;
        for (size_t e = 0; e < losses.size() && !c.stop; ++e) {
            for (auto& p : store.params())
                for (int64_t i = 0; i < p.value.numel(); ++i) p.value.data<float>()[i] = static_cast<float>(e * 100 + i);
            snapshots.push_back(allWeights(store));
            QVERIFY(cb->onEpochEnd(c, static_cast<int>(e + 1), {{"val_loss", losses[e]}}).ok());
            if (c.stop) stopped = static_cast<int>(e + 1);
        }
        QCOMPARE(stopped, 3);
        QVERIFY(allWeights(store) == snapshots[2]);
        QVERIFY(cb->onTrainEnd(c, TrainEndReason::EarlyStopped).ok());
        QVERIFY(allWeights(store) == snapshots[1]);  // epoch 2 had the best val_loss
    }

    void modelCheckpointBestOnly() {
        const std::string run = dir("ckpt_best");
        auto model = buildModel();
        auto store = exec::ParamStore::create(model, 1);
        ScriptedControl c(0.1, &store);
        auto cb = make(R"({"type": "ModelCheckpoint", "filepath": "best/w.{epoch:02d}-{val_loss:.2f}.safetensors", "save_best_only": true})", run);
        drive(*cb, c, "val_loss", {1.0, 0.8, 0.9, 0.7, 0.75});
        auto* mc = static_cast<ModelCheckpoint*>(cb.get());
        QCOMPARE(mc->saved(), (std::vector<std::string>{run + "/best/w.01-1.00.safetensors", run + "/best/w.02-0.80.safetensors",
                                                         run + "/best/w.04-0.70.safetensors"}));
        for (const auto& f : mc->saved()) QVERIFY(std::filesystem::exists(f));
        QVERIFY(!std::filesystem::exists(run + "/best/w.03-0.90.safetensors"));
        QCOMPARE(c.last, run + "/best/w.04-0.70.safetensors");
        auto loaded = exec::ParamStore::create(model, 99);
        QVERIFY(loadWeights(loaded, mc->saved().back()).ok());
        QVERIFY(allWeights(loaded) == allWeights(store));
        auto meta = io::loadSafetensors(mc->saved().back());
        QCOMPARE(meta->metadata.at("epoch"), std::string("4"));
        // initial_value_threshold: nothing is saved until the value beats it.
        ScriptedControl c2(0.1, &store);
        auto th = make(R"({"type": "ModelCheckpoint", "filepath": "th.{epoch}.safetensors", "save_best_only": true, "initial_value_threshold": 0.85})", run);
        drive(*th, c2, "val_loss", {1.0, 0.9, 0.8});
        QCOMPARE(static_cast<ModelCheckpoint*>(th.get())->saved(), (std::vector<std::string>{run + "/th.3.safetensors"}));
        // Accuracy is maximised.
        ScriptedControl c3(0.1, &store);
        auto acc = make(R"({"type": "ModelCheckpoint", "filepath": "acc.{epoch}.safetensors", "monitor": "val_accuracy", "save_best_only": true})", run);
        drive(*acc, c3, "val_accuracy", {0.5, 0.4, 0.6});
        QCOMPARE(static_cast<ModelCheckpoint*>(acc.get())->saved().size(), size_t{2});
    }

    void modelCheckpointEveryNEpochs() {
        const std::string run = dir("ckpt_every");
        auto model = buildModel();
        auto store = exec::ParamStore::create(model, 1);
        ScriptedControl c(0.1, &store);
        auto cb = make(R"({"type": "ModelCheckpoint", "filepath": "e{epoch:03d}.safetensors", "period": 2})", run);
        drive(*cb, c, "val_loss", {5, 4, 3, 2, 1});
        QCOMPARE(static_cast<ModelCheckpoint*>(cb.get())->saved(),
                 (std::vector<std::string>{run + "/e002.safetensors", run + "/e004.safetensors"}));
        // Every N steps.
        auto steps = make(R"({"type": "ModelCheckpoint", "filepath": "s.{epoch}.safetensors", "save_freq": 3})", run);
        QVERIFY(steps->onTrainBegin(c).ok());
        for (int s = 1; s <= 7; ++s) {
            BatchLogs b;
            b.epoch = 1 + (s - 1) / 4;
            b.step = s;
            b.globalStep = s;
            b.logs = {{"loss", 1.0}};
            QVERIFY(steps->onBatchEnd(c, b).ok());
        }
        QCOMPARE(static_cast<ModelCheckpoint*>(steps.get())->saved(),
                 (std::vector<std::string>{run + "/s.1.safetensors", run + "/s.2.safetensors"}));
    }

    void csvLoggerColumns() {
        const std::string run = dir("csv");
        ScriptedControl c;
        auto cb = make(R"({"type": "CSVLogger", "filename": "log.csv"})", run);
        QVERIFY(cb->onTrainBegin(c).ok());
        QVERIFY(cb->onEpochEnd(c, 1, {{"loss", 0.5}, {"accuracy", 0.75}, {"val_loss", 0.625}, {"val_accuracy", 0.5}, {"learning_rate", 0.001}}).ok());
        QVERIFY(cb->onEpochEnd(c, 2, {{"loss", 0.25}, {"accuracy", 1.0}, {"val_loss", 0.125}, {"val_accuracy", 1}, {"learning_rate", 0.001}}).ok());
        QCOMPARE(readText(run + "/log.csv"), std::string("epoch,accuracy,learning_rate,loss,val_accuracy,val_loss\n"
                                                         "0,0.75,0.001,0.5,0.5,0.625\n"
                                                         "1,1.0,0.001,0.25,1.0,0.125\n"));
        // State restore drops rows written after the backup.
        auto state = cb->saveState(run);
        QVERIFY(cb->onEpochEnd(c, 3, {{"loss", 9}, {"accuracy", 9}, {"val_loss", 9}, {"val_accuracy", 9}, {"learning_rate", 9}}).ok());
        auto again = make(R"({"type": "CSVLogger", "filename": "log.csv", "append": true, "separator": ";"})", run);
        auto fresh = make(R"({"type": "CSVLogger", "filename": "log.csv"})", run);
        QVERIFY(fresh->loadState(*state, run).ok());
        QVERIFY(fresh->onEpochEnd(c, 3, {{"loss", 0.1}, {"accuracy", 1}, {"val_loss", 0.1}, {"val_accuracy", 1}, {"learning_rate", 0.0001}}).ok());
        QCOMPARE(readText(run + "/log.csv"), std::string("epoch,accuracy,learning_rate,loss,val_accuracy,val_loss\n"
                                                         "0,0.75,0.001,0.5,0.5,0.625\n"
                                                         "1,1.0,0.001,0.25,1.0,0.125\n"
                                                         "2,1.0,0.0001,0.1,1.0,0.1\n"));
        Q_UNUSED(again);
        // Python repr formatting of values.
        const std::string fmt = dir("csvfmt");
        auto f = make(R"({"type": "CSVLogger", "filename": "f.csv"})", fmt);
        QVERIFY(f->onTrainBegin(c).ok());
        QVERIFY(f->onEpochEnd(c, 1, {{"a", 1e-05}, {"b", 123.0}, {"c", -0.000123}, {"d", 1e16}, {"e", 0.1 + 0.2}, {"f", 2.5e-300}}).ok());
        QCOMPARE(readText(fmt + "/f.csv"), std::string("epoch,a,b,c,d,e,f\n0,1e-05,123.0,-0.000123,1e+16,0.30000000000000004,2.5e-300\n"));
    }

    void terminateOnNaNNamesStepAndCheckpoint() {
        ScriptedControl c;
        c.last = "/runs/7/backup";
        TerminateOnNaN cb;
        BatchLogs ok;
        ok.batchLoss = 0.5;
        QVERIFY(cb.onBatchEnd(c, ok).ok());
        BatchLogs bad;
        bad.epoch = 3;
        bad.step = 5;
        bad.globalStep = 45;
        bad.batchLoss = std::nan("");
        auto st = cb.onBatchEnd(c, bad);
        QVERIFY(!st.ok());
        QVERIFY(c.stop);
        const QString msg = QString::fromStdString(st.error().message);
        QVERIFY2(msg.contains(QStringLiteral("NaN")) && msg.contains(QStringLiteral("step 45")) &&
                     msg.contains(QStringLiteral("/runs/7/backup")), qPrintable(msg));
        QCOMPARE(st.error().param("step"), std::string("45"));
        bad.batchLoss = INFINITY;
        QVERIFY(QString::fromStdString(cb.onBatchEnd(c, bad).error().message).contains(QStringLiteral("infinite")));
    }

    void tensorBoardWritesTrainAndValidation() {
        const std::string run = dir("tb");
        auto model = buildModel();
        auto store = exec::ParamStore::create(model, 1);
        ScriptedControl c(0.1, &store);
        auto cb = make(R"({"type": "TensorBoard", "update_freq": 2, "histogram_freq": 1})", run);
        QVERIFY(cb->onTrainBegin(c).ok());
        for (int s = 1; s <= 4; ++s) {
            BatchLogs b;
            b.globalStep = s;
            b.logs = {{"loss", 1.0 / s}, {"learning_rate", 0.1}};
            QVERIFY(cb->onBatchEnd(c, b).ok());
        }
        QVERIFY(cb->onEpochEnd(c, 1, {{"loss", 0.5}, {"val_loss", 0.6}, {"learning_rate", 0.1}}).ok());
        QVERIFY(cb->onTrainEnd(c, TrainEndReason::Completed).ok());
        auto count = [](const std::string& d) {
            int n = 0;
            for (const auto& e : std::filesystem::directory_iterator(d)) {
                if (!e.path().filename().string().starts_with("events.out.tfevents.")) return -1;
                auto r = data::TfRecordReader::open(e.path().string());
                std::string rec;
                while (*(*r)->next(rec)) ++n;
            }
            return n;
        };
        // train: version + 2 steps x 2 values + 2 epoch values + 4 histograms; validation: version + 1.
        QCOMPARE(count(run + "/tb/train"), 1 + 4 + 2 + 4);
        QCOMPARE(count(run + "/tb/validation"), 2);
    }

    void configErrorsNameTheField() {
        auto model = buildModel();
        auto bad = [&](const std::string& cbs, const std::string& field) {
            auto c = parseTrainingConfig(json::parse(R"({"loss": "SparseCategoricalCrossentropy", "callbacks": )" + cbs + "}"), model.graph);
            QVERIFY2(!c.ok(), cbs.c_str());
            QCOMPARE(c.error().code, ErrorCode::ConfigError);
            QCOMPARE(c.error().param("field"), field);
        };
        bad(R"({"type": "EarlyStopping"})", "training.callbacks");
        bad(R"([{"type": "EarlyStop"}])", "training.callbacks[0].type");
        bad(R"([{"patience": 3}])", "training.callbacks[0].type");
        bad(R"([{"type": "CSVLogger"}, {"type": "EarlyStopping", "patience": "3"}])", "training.callbacks[1].patience");
        bad(R"([{"type": "EarlyStopping", "patients": 3}])", "training.callbacks[0].patients");
        bad(R"([{"type": "EarlyStopping", "monitor": "val_f1"}])", "training.callbacks[0].mode");
        bad(R"([{"type": "ReduceLROnPlateau", "factor": 1.5}])", "training.callbacks[0].factor");
        bad(R"([{"type": "ReduceLROnPlateau", "mode": "up"}])", "training.callbacks[0].mode");
        bad(R"([{"type": "BackupAndRestore", "save_freq": 0}])", "training.callbacks[0].save_freq");
        bad(R"([{"type": "ModelCheckpoint", "filepath": "w.{epoch:.2f}.safetensors"}])", "training.callbacks[0].filepath");
        auto good = parseTrainingConfig(json::parse(R"({"loss": "SparseCategoricalCrossentropy", "callbacks": [
            {"type": "EarlyStopping", "monitor": "val_f1", "mode": "max"}, {"type": "TerminateOnNaN"},
            {"type": "BackupAndRestore", "save_freq": 10}]})"), model.graph);
        QVERIFY2(good.ok(), good.ok() ? "" : good.error().toString().c_str());
        QCOMPARE(good->callbacks.size(), size_t{3});
    }

    // The full state saved mid-epoch (and with callbacks that change the learning rate and keep
    // best weights) continues bit-identically, including dropout and the shuffled order.
    void backupResumesBitIdentically() {
        auto model = buildModel();
        const std::string training = R"({"epochs": 6, "batch_size": 16, "seed": 9, "validation_split": 0.25,
            "optimizer": {"type": "adam", "learning_rate": 0.01}, "metrics": ["accuracy"],
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true},
            "callbacks": [{"type": "ReduceLROnPlateau", "monitor": "loss", "patience": 1, "factor": 0.5, "min_delta": 0.05},
                          {"type": "EarlyStopping", "monitor": "val_loss", "patience": 10, "restore_best_weights": true},
                          {"type": "BackupAndRestore", "save_freq": 7, "delete_checkpoint": false}]})";
        auto cfg = config(training, model);
        ThreadPool pool(2);

        const std::string runA = dir("resume_a");
        auto a = std::move(Trainer::create(model, cfg, blobs(200), pool)).value();
        QVERIFY(a->addConfiguredCallbacks({runA}).ok());
        std::vector<double> lossesA;
        auto fa = a->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) lossesA.push_back(e.loss);
        });
        QVERIFY2(fa.ok(), fa.ok() ? "" : fa.error().toString().c_str());
        QCOMPARE(fa->history.size(), size_t{6});

        // B: stopped by a Stop command at global step 23 (mid epoch 3), state saved to the backup folder.
        const std::string runB = dir("resume_b");
        TrainCommandQueue queue;
        auto b = std::move(Trainer::create(model, cfg, blobs(200), pool)).value();
        QVERIFY(b->addConfiguredCallbacks({runB}).ok());
        b->setCommandQueue(&queue);
        b->setStopStateDir(runB + "/backup");
        std::vector<TrainEvent::Kind> acks;
        auto fb = b->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step && e.globalStep == 23) queue.post({TrainCommand::Kind::Stop, 0, 42});
            if (e.kind == TrainEvent::Kind::Stopped) {
                acks.push_back(e.kind);
                QCOMPARE(e.requestId, uint64_t{42});
            }
        });
        QVERIFY(fb.ok());
        QVERIFY(fb->stopped);
        QCOMPARE(acks.size(), size_t{1});
        QCOMPARE(fb->stopStateDir, runB + "/backup");
        QVERIFY(Trainer::hasState(runB + "/backup"));
        QCOMPARE(b->position().globalStep, int64_t{23});

        // C: a new trainer (new process in real life) continues from B's backup automatically.
        auto c = std::move(Trainer::create(model, cfg, blobs(200), pool)).value();
        QVERIFY(c->addConfiguredCallbacks({runB}).ok());
        std::vector<double> lossesC;
        int64_t firstStep = -1;
        auto fc = c->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) {
                if (firstStep < 0) firstStep = e.globalStep;
                lossesC.push_back(e.loss);
            }
        });
        QVERIFY2(fc.ok(), fc.ok() ? "" : fc.error().toString().c_str());
        QCOMPARE(fc->resumedFromStep, int64_t{23});
        QCOMPARE(firstStep, int64_t{24});
        QCOMPARE(fc->history.size(), size_t{6});
        QVERIFY(allWeights(c->params()) == allWeights(a->params()));
        // The running loss curve continues exactly where the uninterrupted run was.
        QCOMPARE(lossesC.size(), lossesA.size() - 23);
        for (size_t i = 0; i < lossesC.size(); ++i) QCOMPARE(lossesC[i], lossesA[i + 23]);
        for (size_t e = 0; e < 6; ++e) {
            QCOMPARE(fc->history[e].train.loss, fa->history[e].train.loss);
            QCOMPARE(fc->history[e].validation->loss, fa->history[e].validation->loss);
        }
        QCOMPARE(c->learningRate(), a->learningRate());

        // A state from another configuration is refused with the field named.
        auto other = config(R"({"epochs": 6, "batch_size": 8, "seed": 9, "validation_split": 0.25, "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})", model);
        auto d = std::move(Trainer::create(model, other, blobs(200), pool)).value();
        QVERIFY(d->restoreFrom(runB + "/backup").ok());
        auto fd = d->fit();
        QVERIFY(!fd.ok());
        QCOMPARE(fd.error().param("field"), std::string("training.batch_size"));
        QVERIFY(!d->restoreFrom(runB + "/nothing-here").ok());
    }

    void commandQueuePauseLearningRateStop() {
        auto model = buildModel();
        auto cfg = config(R"({"epochs": 50, "batch_size": 8, "seed": 1,
            "optimizer": {"type": "sgd", "learning_rate": 0.1},
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}})", model);
        ThreadPool pool(1);
        auto t = std::move(Trainer::create(model, cfg, blobs(64), pool)).value();
        TrainCommandQueue queue;
        t->setCommandQueue(&queue);
        std::vector<std::pair<int64_t, double>> lrs;
        std::vector<TrainEvent::Kind> acks;
        std::atomic<bool> paused{false};
        std::thread gui([&] {
            while (!paused.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            queue.post({TrainCommand::Kind::SetLearningRate, 0.0125, 2});
            queue.post({TrainCommand::Kind::Resume, 0, 3});
        });
        int64_t stepsWhilePaused = -1, stepAtPause = -1;
        auto r = t->fit([&](const TrainEvent& e) {
            acks.push_back(e.kind);
            if (e.kind == TrainEvent::Kind::Paused) {
                stepAtPause = e.globalStep;
                paused = true;
            }
            if (e.kind == TrainEvent::Kind::Resumed) stepsWhilePaused = e.globalStep - stepAtPause;
            if (e.kind == TrainEvent::Kind::Step) {
                lrs.push_back({e.globalStep, e.learningRate});
                if (e.globalStep == 3) queue.post({TrainCommand::Kind::Pause, 0, 1});
                if (stepAtPause >= 0 && e.globalStep == stepAtPause + 5) queue.post({TrainCommand::Kind::Stop, 0, 4});
            }
        });
        gui.join();
        QVERIFY(r.ok());
        QVERIFY(r->stopped && r->cancelled);
        QCOMPARE(stepsWhilePaused, int64_t{0});  // no step ran while paused
        QCOMPARE(stepAtPause, int64_t{3});      // acted within one step
        QCOMPARE(lrs[2].second, 0.1);
        QCOMPARE(lrs[3].second, 0.0125);
        QCOMPARE(lrs.back().first, stepAtPause + 5);  // stopped within one step
        QCOMPARE(lrs.front().second, 0.1);
        QCOMPARE(lrs.back().second, 0.0125);
        QVERIFY(std::find(acks.begin(), acks.end(), TrainEvent::Kind::LearningRateChanged) != acks.end());
        QVERIFY(std::find(acks.begin(), acks.end(), TrainEvent::Kind::Stopped) != acks.end());
        QCOMPARE(r->stopStateDir, std::string());
    }

    void terminateOnNaNInTraining() {
        // A learning rate of 1e30 blows the loss up; the error names the step and the backup.
        auto model = buildModel();
        const std::string run = dir("nan");
        auto cfg = config(R"({"epochs": 20, "batch_size": 8, "seed": 1, "optimizer": {"type": "sgd", "learning_rate": 1e30},
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true},
            "callbacks": [{"type": "BackupAndRestore", "save_freq": 1}, {"type": "TerminateOnNaN"}]})", model);
        ThreadPool pool(1);
        auto t = std::move(Trainer::create(model, cfg, blobs(64), pool)).value();
        QVERIFY(t->addConfiguredCallbacks({run}).ok());
        auto r = t->fit();
        QVERIFY(!r.ok());
        const QString msg = QString::fromStdString(r.error().message);
        QVERIFY2(msg.contains(QStringLiteral("at step ")) && msg.contains(QString::fromStdString(run + "/backup")), qPrintable(msg));
        QVERIFY(Trainer::hasState(run + "/backup"));  // kept: training failed
    }
};

QTEST_GUILESS_MAIN(TstCallbacks)
#include "tst_callbacks.moc"
