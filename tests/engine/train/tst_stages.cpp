// SPDX-License-Identifier: Apache-2.0
// Staged fine-tuning: training.stages parsing (errors name the stage and field), which nodes each
// choice trains, frozen parts that stay put (BatchNormalization in inference mode), the stage's
// learning rate, stage boundaries in events, history and TensorBoard, and BackupAndRestore
// resuming inside a stage and across a stage boundary bit-identically, and the discriminative
// learning-rate multipliers.
#include <QtTest>

#include <QTemporaryDir>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/config.h"
#include "engine/train/stages.h"
#include "engine/train/trainer.h"

using namespace kiln::engine;
using namespace kiln::engine::train;
using nlohmann::json;

namespace {

// Input -> Dense "h" -> BatchNormalization "bn" -> Dropout -> Dense "mid" -> Dense "logits", with
// a side branch "side" from the input that joins at "cat".
ops::ModelInfo buildModel() {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": [
      {"name": "x", "op": "Input", "attrs": {"shape": [2]}},
      {"name": "h", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8, "activation": "relu"}},
      {"name": "bn", "op": "BatchNormalization", "inputs": ["h"]},
      {"name": "drop", "op": "Dropout", "inputs": ["bn"], "attrs": {"rate": 0.25}},
      {"name": "side", "op": "Dense", "inputs": ["x"], "attrs": {"units": 4, "activation": "relu"}},
      {"name": "cat", "op": "Concatenate", "inputs": ["drop", "side"]},
      {"name": "mid", "op": "Dense", "inputs": ["cat"], "attrs": {"units": 6, "activation": "relu"}},
      {"name": "logits", "op": "Dense", "inputs": ["mid"], "attrs": {"units": 2}}]}})";
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

std::string training(const std::string& stages, const std::string& extra = {}) {
    return R"({"batch_size": 16, "seed": 4, "validation_split": 0.25,
        "optimizer": {"type": "adam", "learning_rate": 0.01}, "metrics": ["accuracy"],
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, )" +
           extra + R"("stages": )" + stages + "}";
}

Result<TrainingConfig> parse(const std::string& text, const ops::ModelInfo& m) {
    return parseTrainingConfig(json::parse(text), m.graph);
}

TrainingConfig config(const std::string& text, const ops::ModelInfo& m) {
    auto c = parse(text, m);
    if (!c.ok()) qFatal("parseTrainingConfig: %s", c.error().toString().c_str());
    return std::move(c).value();
}

std::unique_ptr<Trainer> trainer(const ops::ModelInfo& m, const TrainingConfig& c, ThreadPool& pool) {
    auto t = Trainer::create(m, c, blobs(200), pool);
    if (!t.ok()) qFatal("Trainer::create: %s", t.error().toString().c_str());
    return std::move(t).value();
}

std::vector<float> values(const exec::ParamStore& ps, const std::string& name) {
    for (const auto& p : ps.params())
        if (p.name == name) {
            const float* v = p.value.data<float>();
            return {v, v + p.value.numel()};
        }
    qFatal("no parameter %s", name.c_str());
}

// Every weight, as bytes.
QByteArray allWeights(const exec::ParamStore& ps) {
    QByteArray out;
    for (const auto& p : ps.params()) out.append(static_cast<const char*>(p.value.raw()), static_cast<qsizetype>(p.value.bytes()));
    return out;
}

std::vector<std::string> trainableNames(const ops::ModelInfo& m, const TrainingStage& st) {
    const auto mask = stageTrainableNodes(m, st);
    std::vector<std::string> out;
    for (size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) out.push_back(m.graph.nodes[i].name);
    return out;
}

}  // namespace

class TestStages : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string dir(const char* name) { return (std::filesystem::path(m_dir.path().toStdString()) / name).string(); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void parsesStages() {
        auto m = buildModel();
        auto c = config(training(R"([{"name": "warm", "epochs": 2, "trainable": "head", "lr": 0.001},
            {"epochs": 3, "trainable": {"from": "mid"}, "lr_factor": 0.1, "optimizer": "keep"},
            {"name": "some", "epochs": 1, "trainable": {"nodes": ["h", "bn"]}},
            {"name": "all", "epochs": 1}])"),
                        m);
        QCOMPARE(c.stages.size(), size_t{4});
        QCOMPARE(c.epochs, 7);  // the sum of the stages
        QCOMPARE(c.stages[0].name, std::string("warm"));
        QVERIFY(c.stages[0].select == TrainingStage::Select::Head);
        QCOMPARE(*c.stages[0].lr, 0.001);
        QVERIFY(c.stages[0].resetOptimizer);
        QCOMPARE(c.stages[1].name, std::string("stage 2"));
        QVERIFY(c.stages[1].select == TrainingStage::Select::From);
        QCOMPARE(c.stages[1].from, std::string("mid"));
        QCOMPARE(c.stages[1].lrFactor, 0.1);
        QVERIFY(!c.stages[1].resetOptimizer);
        QVERIFY(c.stages[2].select == TrainingStage::Select::Nodes);
        QCOMPARE(c.stages[2].nodes, (std::vector<std::string>{"h", "bn"}));
        QVERIFY(c.stages[3].select == TrainingStage::Select::All);
        QCOMPARE(c.stageOfEpoch(1), 0);
        QCOMPARE(c.stageOfEpoch(2), 0);
        QCOMPARE(c.stageOfEpoch(3), 1);
        QCOMPARE(c.stageOfEpoch(5), 1);
        QCOMPARE(c.stageOfEpoch(6), 2);
        QCOMPARE(c.stageOfEpoch(7), 3);
        QCOMPARE(c.stageOfEpoch(9), 3);  // a longer run stays in the last stage
        QCOMPARE(c.firstEpochOfStage(2), 6);
        QCOMPARE(config(training("[]"), m).stageOfEpoch(1), -1);
    }

    void stageErrorsNameTheStageAndField_data() {
        QTest::addColumn<QString>("stages");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("words");
        QTest::newRow("not a list") << R"({"epochs": 1})" << "training.stages" << "list";
        QTest::newRow("not an object") << R"([{"epochs": 1}, 3])" << "training.stages[1]" << "object";
        QTest::newRow("no epochs") << R"([{"name": "a"}])" << "training.stages[0].epochs" << "missing";
        QTest::newRow("zero epochs") << R"([{"epochs": 1}, {"epochs": 0}])" << "training.stages[1].epochs" << "at least 1";
        QTest::newRow("negative epochs") << R"([{"epochs": -2}])" << "training.stages[0].epochs" << "at least 1";
        QTest::newRow("unknown from") << R"([{"epochs": 1}, {"epochs": 1, "trainable": {"from": "conv9"}}])"
                                      << "training.stages[1].trainable.from" << "conv9";
        QTest::newRow("unknown node") << R"([{"epochs": 1, "trainable": {"nodes": ["h", "nope"]}}])"
                                      << "training.stages[0].trainable.nodes[1]" << "nope";
        QTest::newRow("empty nodes") << R"([{"epochs": 1, "trainable": {"nodes": []}}])"
                                     << "training.stages[0].trainable.nodes" << "non-empty";
        QTest::newRow("bad choice") << R"([{"epochs": 1, "trainable": "body"}])" << "training.stages[0].trainable" << "body";
        QTest::newRow("bad lr") << R"([{"epochs": 1, "lr": 0}])" << "training.stages[0].lr" << "greater than 0";
        QTest::newRow("lr and factor") << R"([{"epochs": 1, "lr": 0.1, "lr_factor": 0.5}])"
                                       << "training.stages[0].lr_factor" << "together";
        QTest::newRow("bad factor") << R"([{"epochs": 1, "lr_factor": -1}])" << "training.stages[0].lr_factor" << "greater than 0";
        QTest::newRow("bad optimizer") << R"([{"epochs": 1, "optimizer": "fresh"}])" << "training.stages[0].optimizer" << "reset";
        QTest::newRow("unknown key") << R"([{"epochs": 1, "freeze": true}])" << "training.stages[0].freeze" << "not a known";
        QTest::newRow("same name") << R"([{"name": "a", "epochs": 1}, {"name": "a", "epochs": 1}])"
                                   << "training.stages[1].name" << "repeats";
    }
    void stageErrorsNameTheStageAndField() {
        QFETCH(QString, stages);
        QFETCH(QString, field);
        QFETCH(QString, words);
        auto m = buildModel();
        auto c = parse(training(stages.toStdString()), m);
        QVERIFY(!c.ok());
        QVERIFY(c.error().code == ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(c.error().param("field")), field);
        QVERIFY2(QString::fromStdString(c.error().message).contains(words), c.error().message.c_str());
    }

    void choosesTrainableNodes() {
        auto m = buildModel();
        TrainingStage st;
        st.select = TrainingStage::Select::All;
        QCOMPARE(trainableNames(m, st).size(), m.nodes.size());
        st.select = TrainingStage::Select::Head;
        QCOMPARE(trainableNames(m, st), (std::vector<std::string>{"logits"}));
        QCOMPARE(headNodes(m), (std::vector<std::string>{"logits"}));
        // "from": the node and everything downstream; the parallel branch "side" stays frozen.
        st.select = TrainingStage::Select::From;
        st.from = "bn";
        QCOMPARE(trainableNames(m, st), (std::vector<std::string>{"bn", "drop", "cat", "mid", "logits"}));
        st.from = "side";
        QCOMPARE(trainableNames(m, st), (std::vector<std::string>{"side", "cat", "mid", "logits"}));
        st.select = TrainingStage::Select::Nodes;
        st.nodes = {"side", "h"};
        QCOMPARE(trainableNames(m, st), (std::vector<std::string>{"h", "side"}));
        auto frozen = stageModel(m, st);
        QVERIFY(frozen.ok());
        QVERIFY(frozen->info("h").trainable);
        QVERIFY(!frozen->info("bn").trainable);
        QVERIFY(!frozen->graph.nodes[static_cast<size_t>(frozen->graph.find("logits"))].trainable);
        // 2*8+8 + 2*4+4 trainable; the rest frozen.
        QCOMPARE(frozen->parameterCount(true), int64_t{36});
    }

    // Depth in layers with parameters: h 1, bn 2, side 1, mid 3, logits 4; four blocks.
    void discriminativeMultipliersByDepth() {
        auto m = buildModel();
        const auto mult = discriminativeMultipliers(m);
        QCOMPARE(mult.size(), size_t{5});
        QCOMPARE(mult.at("logits"), 1.0);
        QCOMPARE(mult.at("mid"), 0.3846);
        QCOMPARE(mult.at("bn"), 0.1479);
        QCOMPARE(mult.at("h"), 0.0569);
        QCOMPARE(mult.at("side"), 0.0569);
        // Two blocks: the deeper half at the full rate.
        const auto two = discriminativeMultipliers(m, 2, 10.0);
        QCOMPARE(two.at("h"), 0.1);
        QCOMPARE(two.at("bn"), 0.1);
        QCOMPARE(two.at("mid"), 1.0);
        QCOMPARE(two.at("logits"), 1.0);
    }

    // Frozen parts do not move, a frozen BatchNormalization keeps its statistics (inference
    // mode), the stage's learning rate applies, and the boundary is in events and history.
    void stagesFreezeAndUnfreeze() {
        auto m = buildModel();
        auto c = config(training(R"([{"name": "head", "epochs": 2, "trainable": "head", "lr": 0.02},
            {"name": "body", "epochs": 2, "trainable": {"from": "bn"}, "lr_factor": 0.1, "optimizer": "keep"}])"),
                        m);
        ThreadPool pool(2);
        auto t = trainer(m, c, pool);
        QCOMPARE(t->activeStage(), 0);
        const auto h0 = values(t->params(), "h/kernel"), mean0 = values(t->params(), "bn/moving_mean"),
                   mid0 = values(t->params(), "mid/kernel"), side0 = values(t->params(), "side/kernel"),
                   logits0 = values(t->params(), "logits/kernel");
        std::vector<float> hAfter1, meanAfter1, midAfter1, logitsAfter1;
        std::vector<std::pair<int, double>> stageLr;  // per Step event: stage, learning rate
        std::vector<int64_t> starts;
        auto fit = t->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) {
                stageLr.emplace_back(e.stage, e.learningRate);
                if (starts.empty() || starts.back() != e.stageStartStep) starts.push_back(e.stageStartStep);
            }
            if (e.kind == TrainEvent::Kind::Epoch && e.epoch == 2) {
                hAfter1 = values(t->params(), "h/kernel");
                meanAfter1 = values(t->params(), "bn/moving_mean");
                midAfter1 = values(t->params(), "mid/kernel");
                logitsAfter1 = values(t->params(), "logits/kernel");
            }
        });
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.error().toString().c_str());
        // Stage 1 trained only the head.
        QCOMPARE(hAfter1, h0);
        QCOMPARE(meanAfter1, mean0);
        QCOMPARE(midAfter1, mid0);
        QVERIFY(logitsAfter1 != logits0);
        // Stage 2 trained from bn on, BatchNormalization in training mode; "side" stayed frozen,
        // as did "h" upstream of bn.
        QCOMPARE(values(t->params(), "h/kernel"), h0);
        QCOMPARE(values(t->params(), "side/kernel"), side0);
        QVERIFY(values(t->params(), "bn/moving_mean") != mean0);
        QVERIFY(values(t->params(), "mid/kernel") != mid0);
        QCOMPARE(t->activeStage(), 1);
        // 10 steps per epoch (150 training samples, batches of 16).
        QCOMPARE(stageLr.size(), size_t{40});
        QCOMPARE(stageLr[0], std::make_pair(0, 0.02));
        QCOMPARE(stageLr[19], std::make_pair(0, 0.02));
        QCOMPARE(stageLr[20].first, 1);
        QVERIFY(std::abs(stageLr[20].second - 0.001) < 1e-12);
        QCOMPARE(starts, (std::vector<int64_t>{0, 20}));
        QCOMPARE(fit->history.size(), size_t{4});
        QCOMPARE(fit->history[1].stage, 0);
        QCOMPARE(fit->history[2].stage, 1);
    }

    // "keep" continues the optimizer as if no boundary were there: two stages of the same nodes
    // give the weights of one stage of their length, byte for byte; "reset" starts Adam afresh.
    void keepContinuesTheOptimizer() {
        auto m = buildModel();
        ThreadPool pool(2);
        auto run = [&](const std::string& stages) {
            auto t = trainer(m, config(training(stages), m), pool);
            auto f = t->fit();
            if (!f.ok()) qFatal("fit: %s", f.error().toString().c_str());
            return allWeights(t->params());
        };
        const QByteArray one = run(R"([{"epochs": 4, "trainable": {"from": "mid"}}])");
        const QByteArray kept = run(R"([{"epochs": 2, "trainable": {"from": "mid"}},
            {"epochs": 2, "trainable": {"from": "mid"}, "optimizer": "keep"}])");
        const QByteArray reset = run(R"([{"epochs": 2, "trainable": {"from": "mid"}},
            {"epochs": 2, "trainable": {"from": "mid"}, "optimizer": "reset"}])");
        QVERIFY(kept == one);
        QVERIFY(reset != one);
        // Widening the trainable part keeps the moments of "mid" and "logits": the result differs
        // from a reset at the same boundary.
        const QByteArray widenKeep = run(R"([{"epochs": 2, "trainable": {"from": "mid"}},
            {"epochs": 2, "trainable": "all", "optimizer": "keep"}])");
        const QByteArray widenReset = run(R"([{"epochs": 2, "trainable": {"from": "mid"}},
            {"epochs": 2, "trainable": "all", "optimizer": "reset"}])");
        QVERIFY(widenKeep != widenReset);
    }

    // BackupAndRestore: a run interrupted inside stage 2, and one interrupted right at the
    // boundary (its last backup closes stage 1), continue to the same weights byte for byte.
    void resumesInsideAndAcrossStages_data() {
        QTest::addColumn<QString>("backup");
        QTest::addColumn<int>("cancelAt");
        QTest::addColumn<int>("resumedFrom");
        QTest::newRow("inside stage 2") << R"({"type": "BackupAndRestore", "save_freq": 7})" << 33 << 28;
        QTest::newRow("at the boundary") << R"({"type": "BackupAndRestore"})" << 22 << 20;
        QTest::newRow("inside stage 3") << R"({"type": "BackupAndRestore", "save_freq": 6})" << 55 << 54;
    }
    void resumesInsideAndAcrossStages() {
        QFETCH(QString, backup);
        QFETCH(int, cancelAt);
        QFETCH(int, resumedFrom);
        auto m = buildModel();
        const std::string text = training(R"([{"name": "head", "epochs": 2, "trainable": "head"},
            {"name": "body", "epochs": 3, "trainable": {"from": "bn"}, "lr_factor": 0.2, "optimizer": "keep"},
            {"name": "all", "epochs": 1, "trainable": "all", "lr": 0.001, "optimizer": "reset"}])",
                                          R"("callbacks": [{"type": "ReduceLROnPlateau", "monitor": "loss", "patience": 1, "factor": 0.5},
                          )" + backup.toStdString() + "], ");
        auto c = config(text, m);
        ThreadPool pool(2);
        const std::string tag = QTest::currentDataTag();
        const std::string runA = dir(("a " + tag).c_str()), runB = dir(("b " + tag).c_str());

        auto a = trainer(m, c, pool);
        QVERIFY(a->addConfiguredCallbacks({runA}).ok());
        std::vector<double> lossesA;
        auto fa = a->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) lossesA.push_back(e.loss);
        });
        QVERIFY2(fa.ok(), fa.ok() ? "" : fa.error().toString().c_str());
        QCOMPARE(fa->history.size(), size_t{6});

        // B: the process dies at step cancelAt (the cancel flag leaves the backup in place).
        std::atomic<bool> cancel{false};
        auto b = trainer(m, c, pool);
        QVERIFY(b->addConfiguredCallbacks({runB}).ok());
        auto fb = b->fit(
            [&](const TrainEvent& e) {
                if (e.kind == TrainEvent::Kind::Step && e.globalStep == cancelAt) cancel = true;
            },
            &cancel);
        QVERIFY(fb.ok());
        QVERIFY(fb->cancelled);

        // C: a new trainer picks the backup up and trains to the end.
        auto c2 = trainer(m, c, pool);
        QVERIFY(c2->addConfiguredCallbacks({runB}).ok());
        std::vector<double> lossesC;
        auto fc = c2->fit([&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) lossesC.push_back(e.loss);
        });
        QVERIFY2(fc.ok(), fc.ok() ? "" : fc.error().toString().c_str());
        QCOMPARE(fc->resumedFromStep, int64_t(resumedFrom));
        QCOMPARE(fc->history.size(), size_t{6});
        QVERIFY(allWeights(c2->params()) == allWeights(a->params()));
        QCOMPARE(lossesC.size(), lossesA.size() - static_cast<size_t>(resumedFrom));
        for (size_t i = 0; i < lossesC.size(); ++i) QCOMPARE(lossesC[i], lossesA[i + static_cast<size_t>(resumedFrom)]);
        for (size_t e = 0; e < 6; ++e) {
            QCOMPARE(fc->history[e].stage, fa->history[e].stage);
            QCOMPARE(fc->history[e].validation->loss, fa->history[e].validation->loss);
        }
        QCOMPARE(c2->activeStage(), 2);
    }

    // A state saved in a stage the run's configuration does not have is refused, naming the field.
    void stateFromOtherStagesIsRefused() {
        auto m = buildModel();
        auto c = config(training(R"([{"epochs": 1, "trainable": "head"}, {"epochs": 1}])"), m);
        ThreadPool pool(2);
        auto a = trainer(m, c, pool);
        QVERIFY(a->fit().ok());
        const std::string state = dir("two-stages");
        QVERIFY(a->saveState(state).ok());
        auto one = config(training(R"([{"epochs": 2}])"), m);
        auto b = trainer(m, one, pool);
        QVERIFY(b->restoreFrom(state).ok());
        auto fb = b->fit();
        QVERIFY(!fb.ok());
        QCOMPARE(fb.error().param("field"), std::string("training.stages"));
    }
};

QTEST_GUILESS_MAIN(TestStages)
#include "tst_stages.moc"
