// SPDX-License-Identifier: Apache-2.0
// Sweeps: grid enumeration, seeded random draws (range, spread over decades, the same for the
// same seed), the median stopping rule and successive halving on synthetic curves, spec and path
// errors naming the JSON path, applying parameters to a project, and real sweeps on the bundled
// two-tower example that record every trial (failed ones too) in the run store and stop on cancel.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/api/sweep.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/store/run_store.h"

using namespace kiln::engine;
using namespace kiln::engine::api;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

SweepSpec parse(const json& j) {
    auto s = parseSweepSpec(j);
    if (!s.ok()) qFatal("parseSweepSpec: %s", s.error().toString().c_str());
    return std::move(s).value();
}

std::string dataDir() {
    const char* env = std::getenv("KILN_DATA");
    return env ? env : std::string(std::getenv("HOME") ? std::getenv("HOME") : "") + "/.cache/kiln/data";
}

}  // namespace

class TestSweep : public QObject {
    Q_OBJECT

private slots:
    void gridEnumeration() {
        const SweepSpec spec = parse({{"strategy", "grid"},
                                      {"grid_points", 3},
                                      {"parameters",
                                       {{{"path", "optimizer"}, {"kind", "choice"}, {"values", {"adam", "sgd"}}},
                                        {{"path", "nodes.fc.units"}, {"kind", "int_uniform"}, {"min", 1}, {"max", 10}}}}});
        QCOMPARE(gridSize(spec), int64_t(6));
        const auto configs = sweepConfigurations(spec);
        QCOMPARE(configs.size(), size_t(6));
        // The last parameter varies fastest; 1..10 in three points is 1, 6 (5.5 rounded), 10.
        const int64_t units[] = {1, 6, 10, 1, 6, 10};
        for (size_t i = 0; i < 6; ++i) {
            QCOMPARE(configs[i]["optimizer"].get<std::string>(), std::string(i < 3 ? "adam" : "sgd"));
            QCOMPARE(configs[i]["nodes.fc.units"].get<int64_t>(), units[i]);
            QVERIFY(configs[i]["nodes.fc.units"].is_number_integer());
        }
        // A budget below the grid's size runs its first points.
        SweepSpec fewer = spec;
        fewer.trials = 4;
        QCOMPARE(sweepConfigurations(fewer).size(), size_t(4));
        // Small integer ranges give every integer; log ranges are even in log.
        SweepParameter small{"batch_size", SweepParamKind::IntUniform, {}, 2, 3};
        QCOMPARE(gridValues(small, 5).size(), size_t(2));
        SweepParameter lr{"learning_rate", SweepParamKind::LogUniform, {}, 1e-4, 1e-2};
        const auto lrs = gridValues(lr, 3);
        QCOMPARE(lrs.size(), size_t(3));
        QCOMPARE(lrs[0].get<double>(), 1e-4);
        QVERIFY(std::abs(lrs[1].get<double>() - 1e-3) < 1e-12);
        QCOMPARE(lrs[2].get<double>(), 1e-2);
        SweepParameter u{"nodes.d.rate", SweepParamKind::Uniform, {}, 0.0, 0.5};
        const auto us = gridValues(u, 3);
        QCOMPARE(us[1].get<double>(), 0.25);
    }

    void randomSamplingRangeAndSeed() {
        const json j = {{"strategy", "random"},
                        {"seed", 7},
                        {"trials", 2000},
                        {"parameters",
                         {{{"path", "learning_rate"}, {"kind", "log_uniform"}, {"min", 1e-5}, {"max", 1e-1}},
                          {{"path", "nodes.fc.units"}, {"kind", "int_uniform"}, {"min", 8}, {"max", 12}},
                          {{"path", "nodes.d.rate"}, {"kind", "uniform"}, {"min", 0.1}, {"max", 0.4}},
                          {{"path", "optimizer"}, {"kind", "choice"}, {"values", {"adam", "sgd", "rmsprop"}}}}}};
        const auto a = sweepConfigurations(parse(j));
        QCOMPARE(a.size(), size_t(2000));
        int decades[4] = {0, 0, 0, 0};
        std::set<int64_t> units;
        std::set<std::string> optimizers;
        for (const auto& c : a) {
            const double lr = c["learning_rate"].get<double>();
            QVERIFY(lr >= 1e-5 && lr <= 1e-1);
            ++decades[std::clamp(int(std::floor(std::log10(lr) + 5)), 0, 3)];
            const int64_t n = c["nodes.fc.units"].get<int64_t>();
            QVERIFY(n >= 8 && n <= 12);
            units.insert(n);
            const double r = c["nodes.d.rate"].get<double>();
            QVERIFY(r >= 0.1 && r <= 0.4);
            optimizers.insert(c["optimizer"].get<std::string>());
        }
        // Log-uniform: each of the four decades holds about a quarter of the draws.
        for (int d : decades) QVERIFY2(d > 400 && d < 600, qPrintable(QString::number(d)));
        QCOMPARE(units.size(), size_t(5));  // both bounds are drawn
        QCOMPARE(optimizers.size(), size_t(3));
        // The same seed gives the same trials; another seed others.
        QCOMPARE(sweepConfigurations(parse(j)), a);
        json other = j;
        other["seed"] = 8;
        QVERIFY(sweepConfigurations(parse(other)) != a);
    }

    void medianStopping() {
        const std::vector<std::vector<double>> finished = {{0.5, 0.6, 0.7}, {0.6, 0.7, 0.8}, {0.55, 0.65, 0.75}};
        // Running averages at epoch 2: 0.55, 0.65, 0.60 -> median 0.60.
        QVERIFY(medianStoppingRule({0.4, 0.5}, finished, ObjectiveMode::Max, 1, 3));
        QVERIFY(!medianStoppingRule({0.4, 0.62}, finished, ObjectiveMode::Max, 1, 3));
        // The best value so far counts, not the last one.
        QVERIFY(!medianStoppingRule({0.61, 0.3}, finished, ObjectiveMode::Max, 1, 3));
        // Not before min_epochs, nor with fewer finished trials than min_trials.
        QVERIFY(!medianStoppingRule({0.4, 0.5}, finished, ObjectiveMode::Max, 3, 3));
        QVERIFY(!medianStoppingRule({0.4, 0.5}, finished, ObjectiveMode::Max, 1, 4));
        // Losses: lower is better. Averages at epoch 1: 1.0, 0.8, 0.9 -> median 0.9.
        const std::vector<std::vector<double>> losses = {{1.0, 0.7}, {0.8, 0.5}, {0.9, 0.6}};
        QVERIFY(medianStoppingRule({0.95}, losses, ObjectiveMode::Min, 1, 2));
        QVERIFY(!medianStoppingRule({0.85}, losses, ObjectiveMode::Min, 1, 2));
        // A shorter finished curve (it stopped early) is averaged over what it has.
        QVERIFY(medianStoppingRule({0.9, 0.9, 0.9}, {{0.5}, {0.4}, {0.6}}, ObjectiveMode::Min, 1, 3));
        // Nothing finite so far is worse than any finished trial.
        QVERIFY(medianStoppingRule({NAN, NAN}, finished, ObjectiveMode::Max, 1, 3));
    }

    void successiveHalving() {
        QCOMPARE(successiveHalvingRungs(1, 9, 3), (std::vector<int>{1, 3, 9}));
        QCOMPARE(successiveHalvingRungs(2, 10, 3), (std::vector<int>{2, 6, 10}));
        QCOMPARE(successiveHalvingRungs(1, 4, 2), (std::vector<int>{1, 2, 4}));
        QCOMPARE(successiveHalvingRungs(5, 3, 3), (std::vector<int>{3}));
        const std::vector<std::optional<double>> scores = {0.1, 0.9, std::nullopt, 0.5, 0.7, 0.3};
        // ceil(6 / 3) = 2 advance; a missing score (a failed trial) never does.
        QCOMPARE(successiveHalvingPromote(scores, 3, ObjectiveMode::Max), (std::vector<int>{1, 4}));
        QCOMPARE(successiveHalvingPromote(scores, 3, ObjectiveMode::Min), (std::vector<int>{0, 5}));
        QCOMPARE(successiveHalvingPromote(scores, 2, ObjectiveMode::Max), (std::vector<int>{1, 3, 4}));
        QCOMPARE(successiveHalvingPromote({std::nullopt, 0.2}, 2, ObjectiveMode::Max), (std::vector<int>{1}));
        QCOMPARE(successiveHalvingPromote({std::nullopt, std::nullopt}, 2, ObjectiveMode::Max), (std::vector<int>{}));
    }

    void specErrorsNameTheJsonPath_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("field");
        QTest::newRow("no parameters") << R"({"trials": 3})" << "parameters";
        QTest::newRow("unknown key") << R"({"parameters": [{"path": "epochs", "values": [1]}], "trails": 3})" << "trails";
        QTest::newRow("path missing") << R"({"parameters": [{"kind": "choice", "values": [1]}]})" << "parameters[0].path";
        QTest::newRow("bad path") << R"({"parameters": [{"path": "epochs", "values": [1]}, {"path": "graph.x", "values": [1]}]})"
                                  << "parameters[1].path";
        QTest::newRow("not a training field") << R"({"parameters": [{"path": "training.epoch", "values": [1]}]})"
                                              << "parameters[0].path";
        QTest::newRow("swept twice") << R"({"parameters": [{"path": "learning_rate", "values": [1]}, {"path": "training.optimizer.learning_rate", "values": [2]}]})"
                                     << "parameters[1].path";
        QTest::newRow("bad kind") << R"({"parameters": [{"path": "epochs", "kind": "normal", "min": 1, "max": 2}]})"
                                  << "parameters[0].kind";
        QTest::newRow("empty choice") << R"({"parameters": [{"path": "epochs", "kind": "choice", "values": []}]})"
                                      << "parameters[0].values";
        QTest::newRow("object value") << R"({"parameters": [{"path": "epochs", "kind": "choice", "values": [1, {}]}]})"
                                      << "parameters[0].values[1]";
        QTest::newRow("max missing") << R"({"parameters": [{"path": "learning_rate", "kind": "uniform", "min": 0.1}]})"
                                     << "parameters[0].max";
        QTest::newRow("max below min") << R"({"parameters": [{"path": "learning_rate", "kind": "uniform", "min": 0.1, "max": 0.01}]})"
                                       << "parameters[0].max";
        QTest::newRow("log from zero") << R"({"parameters": [{"path": "learning_rate", "kind": "log_uniform", "min": 0, "max": 1}]})"
                                       << "parameters[0].min";
        QTest::newRow("int bounds") << R"({"parameters": [{"path": "batch_size", "kind": "int_uniform", "min": 8, "max": 32.5}]})"
                                    << "parameters[0].max";
        QTest::newRow("strategy") << R"({"parameters": [{"path": "epochs", "values": [1]}], "strategy": "bayes"})" << "strategy";
        QTest::newRow("trials") << R"({"parameters": [{"path": "epochs", "values": [1]}], "trials": 0})" << "trials";
        QTest::newRow("mode") << R"({"parameters": [{"path": "epochs", "values": [1]}], "objective": {"metric": "loss", "mode": "up"}})"
                              << "objective.mode";
        QTest::newRow("pruning type") << R"({"parameters": [{"path": "epochs", "values": [1]}], "early_stopping": {"type": "asha"}})"
                                      << "early_stopping.type";
        QTest::newRow("reduction") << R"({"parameters": [{"path": "learning_rate", "values": [1]}], "early_stopping": {"type": "successive_halving", "reduction": 1}})"
                                   << "early_stopping.reduction";
        QTest::newRow("halving epochs") << R"({"parameters": [{"path": "epochs", "values": [1, 2]}], "early_stopping": {"type": "successive_halving"}})"
                                        << "parameters[0].path";
    }

    void specErrorsNameTheJsonPath() {
        QFETCH(QString, spec);
        QFETCH(QString, field);
        auto r = parseSweepSpec(json::parse(spec.toStdString()));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(r.error().param("field")), field);
    }

    void specFileErrors() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("s.json")).toStdString();
        std::ofstream(path) << "{\"parameters\": [\n  {\"path\": \"epochs\",, }\n]}";
        auto r = loadSweepSpec(path);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ParseError);
        QCOMPARE(r.error().file, path);
        QCOMPARE(r.error().line, 2);
        std::ofstream(path) << R"({"parameters": [{"path": "epochs", "kind": "choice", "values": [1]}], "grid_points": 1})";
        r = loadSweepSpec(path);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().file, path);
        QCOMPARE(r.error().param("field"), std::string("grid_points"));
        QCOMPARE(loadSweepSpec(path + ".missing").error().code, ErrorCode::FileNotFound);
        // A spec written back reads the same.
        const SweepSpec spec = parse({{"strategy", "grid"},
                                      {"objective", "val_accuracy"},
                                      {"epochs", 4},
                                      {"early_stopping", {{"type", "median"}, {"min_epochs", 2}, {"min_trials", 2}}},
                                      {"parameters", {{{"path", "learning_rate"}, {"kind", "log_uniform"}, {"min", 1e-4}, {"max", 1e-2}},
                                                      {{"path", "nodes.fc.units"}, {"kind", "int_uniform"}, {"min", 8}, {"max", 64}}}}});
        QCOMPARE(spec.mode, ObjectiveMode::Max);
        const SweepSpec again = parse(sweepSpecToJson(spec));
        QCOMPARE(sweepSpecToJson(again), sweepSpecToJson(spec));
        QCOMPARE(sweepConfigurations(again), sweepConfigurations(spec));
    }

    void pathsCheckedAgainstTheProject_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("words");
        QTest::newRow("no node") << "nodes.nope.rate" << "parameters[1].path" << "no node \"nope\"";
        QTest::newRow("no attribute") << "nodes.h.rate" << "parameters[1].path" << "Dense has no attribute \"rate\"";
        QTest::newRow("no callback") << "callbacks.ReduceLROnPlateau.factor" << "parameters[1].path"
                                     << "no ReduceLROnPlateau callback";
        QTest::newRow("scalar on the way") << "training.epochs.count" << "parameters[1].path" << "not an object";
    }

    void pathsCheckedAgainstTheProject() {
        QFETCH(QString, path);
        QFETCH(QString, field);
        QFETCH(QString, words);
        const io::Project project = smallProject();
        const SweepSpec spec = parse({{"parameters", {{{"path", "learning_rate"}, {"values", {0.1}}},
                                                      {{"path", path.toStdString()}, {"values", {1}}}}}});
        auto r = checkSweepSpec(spec, project);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().param("field")), field);
        QVERIFY2(QString::fromStdString(r.error().message).contains(words), r.error().message.c_str());
        // The objective must be an epoch value of the project.
        SweepSpec objective = parse({{"parameters", {{{"path", "learning_rate"}, {"values", {0.1}}}}}, {"objective", "val_auc"}});
        r = checkSweepSpec(objective, project);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().param("field"), std::string("objective.metric"));
        objective.objective = "val_accuracy";
        QVERIFY(checkSweepSpec(objective, project).ok());
    }

    void applyParameters() {
        const io::Project project = smallProject();
        auto applied = applySweepParameters(project, {{"learning_rate", 0.05},
                                                      {"optimizer", "sgd"},
                                                      {"nodes.h.units", 32},
                                                      {"callbacks.EarlyStopping.patience", 7},
                                                      {"training.optimizer.weight_decay", 0.001}});
        QVERIFY2(applied.ok(), applied.ok() ? "" : applied.error().toString().c_str());
        QCOMPARE(applied->training["optimizer"]["learning_rate"].get<double>(), 0.05);
        QCOMPARE(applied->training["optimizer"]["type"].get<std::string>(), std::string("sgd"));
        QCOMPARE(applied->training["optimizer"]["weight_decay"].get<double>(), 0.001);
        QCOMPARE(applied->training["callbacks"][0]["patience"].get<int>(), 7);
        QCOMPARE(applied->graph.node("h")->attrs.getInt("units"), int64_t(32));
        // The original is untouched.
        QCOMPARE(project.graph.node("h")->attrs.getInt("units"), int64_t(16));
        // A value the attribute refuses is set as written; the model's check names the node.
        auto bad = applySweepParameters(project, {{"nodes.h.units", "many"}});
        QVERIFY(bad.ok());
        auto graph = io::modelGraph(*bad);
        QVERIFY(graph.ok());
        auto model = ops::analyzeModel(*graph);
        QVERIFY(!model.ok());
        QCOMPARE(model.error().node, std::string("h"));
    }

    void realSweepRecordsTrials() {
        QTemporaryDir dir;
        const std::string projectPath = exampleCopy(dir);
        if (projectPath.empty()) QSKIP("the breast-cancer table is not cached: run tools/fetch_data.sh");
        auto project = io::loadProject(projectPath);
        QVERIFY(project.ok());
        // A grid of 4: a_drop.rate 1.5 is out of range, so two trials fail and the sweep goes on.
        const SweepSpec spec = parse({{"strategy", "grid"},
                                      {"epochs", 4},
                                      {"objective", {{"metric", "val_accuracy"}, {"mode", "max"}}},
                                      {"parameters", {{{"path", "nodes.a_drop.rate"}, {"values", {0.1, 1.5}}},
                                                      {{"path", "learning_rate"}, {"values", {0.0003, 0.003}}}}}});
        SweepOptions options;
        options.threads = 1;
        options.storePath = dir.filePath(QStringLiteral("runs.sqlite")).toStdString();
        options.runsDir = dir.filePath(QStringLiteral("sweep")).toStdString();
        std::vector<SweepEvent::Kind> kinds;
        int epochEvents = 0;
        auto outcome = runSweep(*project, projectPath, spec, options, [&](const SweepEvent& e) {
            kinds.push_back(e.kind);
            if (e.kind == SweepEvent::Kind::Epoch) {
                ++epochEvents;
                QCOMPARE(e.trials, 4);
                QCOMPARE(e.epochs, 4);
            }
        });
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().toString().c_str());
        QVERIFY(!outcome->sweepId.empty());
        QCOMPARE(outcome->trials.size(), size_t(4));
        QCOMPARE(epochEvents, 8);
        QCOMPARE(kinds.front(), SweepEvent::Kind::TrialStarted);
        QCOMPARE(kinds.back(), SweepEvent::Kind::TrialFinished);
        for (int i : {0, 1}) {
            const auto& t = outcome->trials[size_t(i)];
            QCOMPARE(t.status, TrialStatus::Completed);
            QCOMPARE(t.epochs, 4);
            QCOMPARE(t.curve.size(), size_t(4));
            QVERIFY(t.objective && *t.objective > 0.3 && *t.objective <= 1.0);
            QVERIFY(fs::exists(fs::path(t.runDir) / "weights.safetensors"));
        }
        for (int i : {2, 3}) {
            const auto& t = outcome->trials[size_t(i)];
            QCOMPARE(t.status, TrialStatus::Failed);
            QCOMPARE(t.failure.node, std::string("a_drop"));
            QVERIFY2(QString::fromStdString(t.error).contains(QLatin1String("rate")), t.error.c_str());
        }
        // The faster rate learns more in four epochs.
        QCOMPARE(outcome->best, 1);

        auto store = store::RunStore::open(options.storePath);
        QVERIFY(store.ok());
        auto runs = (*store)->listRuns();
        QVERIFY(runs.ok());
        QCOMPARE(runs->size(), size_t(4));
        int failed = 0;
        for (const auto& r : *runs) {
            const json config = json::parse(r.configJson);
            QCOMPARE(config["sweep"]["id"].get<std::string>(), outcome->sweepId);
            const int trial = config["sweep"]["trial"].get<int>();
            QCOMPARE(config["sweep"]["params"], outcome->trials[size_t(trial - 1)].params);
            const json results = json::parse(r.resultsJson);
            if (r.status == store::RunStatus::Failed) {
                ++failed;
                QVERIFY(results.contains("error"));
                QCOMPARE(results["sweep"]["status"].get<std::string>(), std::string("failed"));
            } else {
                QCOMPARE(r.status, store::RunStatus::Completed);
                QCOMPARE(results["sweep"]["value"].get<double>(), *outcome->trials[size_t(trial - 1)].objective);
                QCOMPARE((*store)->run(r.id)->lastEpoch, 4);
            }
        }
        QCOMPARE(failed, 2);
    }

    void medianRulePrunesInARealSweep() {
        QTemporaryDir dir;
        const std::string projectPath = exampleCopy(dir);
        if (projectPath.empty()) QSKIP("the breast-cancer table is not cached: run tools/fetch_data.sh");
        auto project = io::loadProject(projectPath);
        QVERIFY(project.ok());
        // Two good rates first, then a rate too small to learn anything in time: it falls below
        // the median of the finished trials and stops at min_epochs.
        const SweepSpec spec = parse({{"strategy", "grid"},
                                      {"epochs", 6},
                                      {"objective", "val_loss"},
                                      {"early_stopping", {{"type", "median"}, {"min_epochs", 2}, {"min_trials", 2}}},
                                      {"parameters", {{{"path", "learning_rate"}, {"values", {0.003, 0.002, 1e-6}}}}}});
        QCOMPARE(spec.mode, ObjectiveMode::Min);
        SweepOptions options;
        options.threads = 1;
        options.recordRuns = false;
        options.runsDir = dir.filePath(QStringLiteral("sweep")).toStdString();
        auto outcome = runSweep(*project, projectPath, spec, options);
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().toString().c_str());
        QCOMPARE(outcome->trials.size(), size_t(3));
        QCOMPARE(outcome->trials[0].status, TrialStatus::Completed);
        QCOMPARE(outcome->trials[1].status, TrialStatus::Completed);
        QCOMPARE(outcome->trials[2].status, TrialStatus::Pruned);
        QCOMPARE(outcome->trials[2].epochs, 2);
        QVERIFY(!outcome->trials[2].stopReason.empty());
    }

    void successiveHalvingInARealSweep() {
        QTemporaryDir dir;
        const std::string projectPath = exampleCopy(dir);
        if (projectPath.empty()) QSKIP("the breast-cancer table is not cached: run tools/fetch_data.sh");
        auto project = io::loadProject(projectPath);
        QVERIFY(project.ok());
        const SweepSpec spec = parse({{"strategy", "grid"},
                                      {"epochs", 4},
                                      {"objective", "val_accuracy"},
                                      {"early_stopping", {{"type", "successive_halving"}, {"min_epochs", 1}, {"reduction", 2}}},
                                      {"parameters", {{{"path", "learning_rate"}, {"values", {1e-6, 0.003, 2e-6, 0.002}}}}}});
        SweepOptions options;
        options.threads = 1;
        options.storePath = dir.filePath(QStringLiteral("runs.sqlite")).toStdString();
        options.runsDir = dir.filePath(QStringLiteral("sweep")).toStdString();
        int runsStarted = 0;
        auto outcome = runSweep(*project, projectPath, spec, options, [&](const SweepEvent& e) {
            if (e.kind == SweepEvent::Kind::TrialStarted) ++runsStarted;
            QCOMPARE(e.trials, 7);  // rungs of 1, 2 and 4 epochs: 4 + 2 + 1 runs
        });
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().toString().c_str());
        QCOMPARE(runsStarted, 7);
        int completed = 0;
        for (const auto& t : outcome->trials) {
            if (t.status == TrialStatus::Completed) {
                ++completed;
                QCOMPARE(t.epochs, 4);
                QCOMPARE(t.rung, 2);
            } else {
                QCOMPARE(t.status, TrialStatus::Pruned);
                QVERIFY(t.epochs < 4);
            }
        }
        QCOMPARE(completed, 1);
        // The tiny rates never pass the first rung.
        QCOMPARE(outcome->trials[0].epochs, 1);
        QCOMPARE(outcome->trials[2].epochs, 1);
        auto store = store::RunStore::open(options.storePath);
        QVERIFY(store.ok());
        QCOMPARE((*store)->listRuns()->size(), size_t(7));
    }

    void cancelStopsInsideATrial() {
        QTemporaryDir dir;
        const std::string projectPath = exampleCopy(dir);
        if (projectPath.empty()) QSKIP("the breast-cancer table is not cached: run tools/fetch_data.sh");
        auto project = io::loadProject(projectPath);
        QVERIFY(project.ok());
        const SweepSpec spec = parse({{"strategy", "random"}, {"trials", 5}, {"epochs", 50},
                                      {"parameters", {{{"path", "learning_rate"}, {"kind", "log_uniform"}, {"min", 1e-4}, {"max", 1e-2}}}}});
        SweepOptions options;
        options.threads = 1;
        options.storePath = dir.filePath(QStringLiteral("runs.sqlite")).toStdString();
        options.runsDir = dir.filePath(QStringLiteral("sweep")).toStdString();
        std::atomic<bool> cancel{false};
        auto outcome = runSweep(*project, projectPath, spec, options, [&](const SweepEvent& e) {
            if (e.kind == SweepEvent::Kind::Epoch && e.trial.number == 2 && e.epoch == 3) cancel = true;
        }, &cancel);
        QVERIFY(outcome.ok());
        QVERIFY(outcome->cancelled);
        QCOMPARE(outcome->trials.size(), size_t(2));
        QCOMPARE(outcome->trials[0].status, TrialStatus::Completed);
        QCOMPARE(outcome->trials[1].status, TrialStatus::Cancelled);
        QVERIFY(outcome->trials[1].epochs < 50);
        auto store = store::RunStore::open(options.storePath);
        auto runs = (*store)->listRuns();
        QCOMPARE(runs->size(), size_t(2));
    }

private:
    static io::Project smallProject() {
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "small"},
            {"graph",
             {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                                     {{"name", "h"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 16}, {"activation", "relu"}}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"h"}}, {"attrs", {{"units", 3}}}}})}}},
            {"data", {{"format", "csv"}, {"path", "blobs.csv"}}},
            {"training",
             {{"epochs", 2},
              {"batch_size", 16},
              {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
              {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
              {"metrics", {"accuracy"}},
              {"callbacks", {{{"type", "EarlyStopping"}, {"patience", 3}}}}}}};
        auto p = io::parseProject(j.dump(), "small.kiln");
        if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
        return std::move(p).value();
    }

    // The bundled two-tower example copied into `dir` (its data comes from the data cache); ""
    // when the table is not cached.
    static std::string exampleCopy(const QTemporaryDir& dir) {
        if (!fs::exists(dataDir() + "/sklearn/breast_cancer.csv")) return {};
        const std::string path = dir.filePath(QStringLiteral("two_tower.kiln")).toStdString();
        fs::copy_file(KILN_SOURCE_DIR "/resources/examples/two_tower.kiln", path);
        return path;
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
