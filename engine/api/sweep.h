// SPDX-License-Identifier: Apache-2.0
// Hyper-parameter sweeps: a spec (JSON, docs/sweeps.md) names parameters of a project by path
// (training settings, node attributes, callback settings) with a choice list or a range; trials
// are drawn on a grid or at random (seeded) and trained one after another as real, recorded
// training runs; bad trials stop early by the median stopping rule or successive halving.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/io/project.h"

namespace kiln::engine::api {

enum class SweepParamKind { Choice, Uniform, LogUniform, IntUniform };
const char* sweepParamKindName(SweepParamKind kind);  // "choice", "uniform", "log_uniform", "int_uniform"

struct SweepParameter {
    std::string path;    // as written: "learning_rate", "training.optimizer.learning_rate", "nodes.fc1.units"...
    SweepParamKind kind = SweepParamKind::Choice;
    std::vector<nlohmann::json> values;  // Choice: numbers, strings or booleans
    double min = 0;      // Uniform, LogUniform (> 0), IntUniform (integers, inclusive)
    double max = 0;
};

enum class SweepStrategy { Grid, Random };
enum class ObjectiveMode { Min, Max };
enum class SweepPruning { None, Median, SuccessiveHalving };

struct SweepSpec {
    std::vector<SweepParameter> parameters;
    SweepStrategy strategy = SweepStrategy::Random;
    uint64_t seed = 0;
    // Trials to run: random draws this many; grid runs this many of its points in order (0: all).
    // With successive halving: the configurations of the first rung.
    int trials = 0;
    int gridPoints = 3;  // grid: points per continuous range
    std::string objective = "val_loss";  // an epoch value: loss, val_loss, <metric>, val_<metric>
    ObjectiveMode mode = ObjectiveMode::Min;
    std::optional<int> epochs;  // epochs of every trial (else the project's, or a swept value)
    SweepPruning pruning = SweepPruning::None;
    // Median rule: epochs before a trial may stop, and finished trials needed to compare with.
    // Successive halving: the epochs of the first rung.
    int minEpochs = 1;
    int minTrials = 3;
    int reduction = 3;  // successive halving: keep the best 1/reduction at each rung
};

// Parses a spec; errors are ConfigError whose "field" is the JSON path ("parameters[1].min").
Result<SweepSpec> parseSweepSpec(const nlohmann::json& j);
// Reads and parses a spec file; errors name the file (and line for JSON syntax).
Result<SweepSpec> loadSweepSpec(const std::string& path);
nlohmann::json sweepSpecToJson(const SweepSpec& spec);
// Writes a spec file (sweepSpecToJson, two-space indented) atomically; errors name the file.
Status saveSweepSpec(const SweepSpec& spec, const std::string& path);
// Where the studio keeps the last sweep spec of a project: <runs home>/.kiln/<project file
// name>.sweep.json (runsHome of the project's folder, as the run store).
std::string lastSweepSpecPath(const std::string& projectPath);

// The parameter's place in the project file: "training.optimizer.learning_rate" for the
// shorthand "learning_rate"; node and callback paths as written.
std::string resolvedSweepPath(const std::string& path);
// Checks every parameter path against the project (the node, its op's attribute, the callback,
// the training field exist) and the objective against the configured metrics; errors are
// ConfigError with "field" parameters[i].path or objective.metric.
Status checkSweepSpec(const SweepSpec& spec, const io::Project& project);

// The values a grid takes for one parameter: the choices; int ranges all integers when there are
// at most gridPoints of them, else gridPoints evenly spaced; uniform ranges gridPoints evenly
// spaced, log-uniform ones evenly spaced in log.
std::vector<nlohmann::json> gridValues(const SweepParameter& p, int gridPoints);
// Number of points of the full grid.
int64_t gridSize(const SweepSpec& spec);
// The configurations the spec's strategy gives, in trial order: objects path -> value. Random
// draws are the same for the same seed on every machine.
std::vector<nlohmann::json> sweepConfigurations(const SweepSpec& spec);

// The project with the parameters set; errors name the parameter path (and the node).
Result<io::Project> applySweepParameters(const io::Project& project, const nlohmann::json& params);

// Median stopping rule: a trial that has trained `curve.size()` epochs (>= minEpochs) stops when
// its best value so far is worse than the median, over the finished trials, of their running
// averages up to the same epoch. Needs at least minTrials finished curves.
bool medianStoppingRule(const std::vector<double>& curve, const std::vector<std::vector<double>>& finished,
                        ObjectiveMode mode, int minEpochs, int minTrials);
// Successive halving: the epochs of each rung, minEpochs x reduction^k, the last one maxEpochs.
std::vector<int> successiveHalvingRungs(int minEpochs, int maxEpochs, int reduction);
// The indices (ascending) of the ceil(n / reduction) best scores; missing scores never advance.
std::vector<int> successiveHalvingPromote(const std::vector<std::optional<double>>& scores, int reduction,
                                          ObjectiveMode mode);

enum class TrialStatus { Completed, Pruned, Failed, Cancelled };
const char* trialStatusName(TrialStatus status);  // "completed", "pruned", "failed", "cancelled"

struct TrialResult {
    int number = 0;                  // 1-based
    nlohmann::json params = nlohmann::json::object();  // path -> value
    TrialStatus status = TrialStatus::Completed;
    std::optional<double> objective;  // the best epoch value of its last run
    int bestEpoch = 0;
    std::vector<double> curve;       // the objective per epoch of its last run
    int epochs = 0;                  // epochs its last run trained
    int rung = 0;                    // successive halving: the last rung it ran in (0-based)
    double seconds = 0;              // training time over all its runs
    int64_t runId = 0;               // the last run's record (0 when not recorded)
    std::string runDir;
    std::string error;               // Failed: why (English; errorCode and errorField for words)
    Error failure;
    std::string stopReason;          // Pruned: the rule's words
};

struct SweepEvent {
    enum class Kind { TrialStarted, Epoch, TrialFinished };
    Kind kind = Kind::TrialStarted;
    TrialResult trial;   // as it stands
    int trials = 0;      // runs planned in all (trials, plus the promoted ones of later rungs)
    int epoch = 0;       // Epoch: 1-based
    int epochs = 0;      // Epoch: of this run
    double value = 0;    // Epoch: the objective
};

struct SweepOptions {
    int threads = 0;             // CPU threads; 0: all cores
    bool recordRuns = true;      // record every trial in the run store
    std::string storePath;       // "" : runStorePath(project)
    std::string runsDir;         // "" : <runs home>/runs/<project>-<sweep id>
    std::string sweepId;         // "" : "sweep-<yyyyMMdd-HHmmss>"
};

struct SweepOutcome {
    std::string sweepId;
    std::vector<TrialResult> trials;
    int best = -1;               // index into trials, -1 when no trial has an objective
    bool cancelled = false;
    double seconds = 0;
};

// Runs the sweep: every trial a training run of the project with its parameters, recorded in
// the run store with the sweep id and parameters ("sweep" in the configuration snapshot); a
// trial that fails is recorded as failed and the sweep goes on. `cancel` stops inside the
// running trial and before the next. The spec is checked against the project first.
Result<SweepOutcome> runSweep(const io::Project& project, const std::string& projectPath, const SweepSpec& spec,
                              const SweepOptions& options, const std::function<void(const SweepEvent&)>& onEvent = {},
                              const std::atomic<bool>* cancel = nullptr);

// The best trial of results (completed ones first, then pruned), -1 when none has an objective.
int bestTrial(const std::vector<TrialResult>& trials, ObjectiveMode mode);
// A trial as JSON (the results of kiln-train --sweep --json).
nlohmann::json trialJson(const TrialResult& trial);

}  // namespace kiln::engine::api
