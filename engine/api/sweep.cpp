// SPDX-License-Identifier: Apache-2.0
// Running a sweep: trials one after another, each a TrainingJob on the project with the trial's
// parameters, watched per epoch by a callback that records the objective and applies the median
// stopping rule; successive halving trains rungs of growing length and keeps the best fraction.
#include "engine/api/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "engine/api/internal/training_job_access.h"
#include "engine/api/internal/training_setup.h"
#include "engine/api/run_location.h"
#include "engine/api/training_job.h"
#include "engine/store/run_store.h"
#include "engine/train/callbacks.h"

namespace kiln::engine::api {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Watches one trial's epochs: the objective per epoch, the median stopping rule, and a missing
// objective (a failure naming the values there are).
class TrialObserver : public train::Callback {
public:
    TrialObserver(const SweepSpec& spec, const std::vector<std::vector<double>>& finished, TrialResult& trial,
                  const std::function<void(int epoch, double value)>& onEpoch)
        : m_spec(spec), m_finished(finished), m_trial(trial), m_onEpoch(onEpoch)
    {
    }
    std::string type() const override { return "SweepTrial"; }
    Status onEpochEnd(train::TrainControl& control, int epoch, const train::Logs& logs) override
    {
        const auto it = logs.find(m_spec.objective);
        if (it == logs.end()) {
            std::string names;
            for (const auto& [name, value] : logs) {
                names += (names.empty() ? "" : ", ") + name;
            }
            missing = Error(ErrorCode::ConfigError, "the objective \"" + m_spec.objective +
                                                        "\" is not among the epoch's values (" + names + ")")
                          .with("field", "objective.metric")
                          .with("reason", "not an epoch value");
            control.requestStop(missing->message);
            return {};
        }
        m_trial.curve.push_back(it->second);
        if (m_onEpoch) {
            m_onEpoch(epoch, it->second);
        }
        if (m_spec.pruning == SweepPruning::Median &&
            medianStoppingRule(m_trial.curve, m_finished, m_spec.mode, m_spec.minEpochs, m_spec.minTrials)) {
            pruned = true;
            m_trial.stopReason = "below the median of the finished trials at epoch " + std::to_string(epoch);
            control.requestStop(m_trial.stopReason);
        }
        return {};
    }

    bool pruned = false;
    std::optional<Error> missing;

private:
    const SweepSpec& m_spec;
    const std::vector<std::vector<double>>& m_finished;
    TrialResult& m_trial;
    std::function<void(int, double)> m_onEpoch;
};

void summarize(TrialResult& t, ObjectiveMode mode)
{
    t.objective.reset();
    t.bestEpoch = 0;
    for (size_t k = 0; k < t.curve.size(); ++k) {
        const double v = t.curve[k];
        if (!std::isfinite(v)) {
            continue;
        }
        if (!t.objective || (mode == ObjectiveMode::Max ? v > *t.objective : v < *t.objective)) {
            t.objective = v;
            t.bestEpoch = int(k) + 1;
        }
    }
    t.epochs = int(t.curve.size());
}

class SweepRunner {
public:
    SweepRunner(const io::Project& project, const std::string& projectPath, const SweepSpec& spec,
                const SweepOptions& options, const std::function<void(const SweepEvent&)>& onEvent,
                const std::atomic<bool>* cancel)
        : m_project(project), m_projectPath(projectPath), m_spec(spec), m_options(options), m_onEvent(onEvent),
          m_cancel(cancel)
    {
    }

    Result<SweepOutcome> run()
    {
        const auto started = std::chrono::steady_clock::now();
        KILN_TRY(checkSweepSpec(m_spec, m_project));
        m_outcome.sweepId = m_options.sweepId.empty() ? "sweep-" + localTimestamp("%Y%m%d-%H%M%S") : m_options.sweepId;
        m_runsDir = m_options.runsDir;
        if (m_runsDir.empty()) {
            const std::string base = m_project.name.empty() ? "project" : m_project.name;
            m_runsDir = (fs::path(runsHome(fs::path(m_projectPath).parent_path().string())) / "runs" /
                         (base + "-" + m_outcome.sweepId))
                            .string();
        }
        if (m_options.recordRuns) {
            auto store = store::RunStore::open(m_options.storePath.empty() ? runStorePath(m_projectPath)
                                                                           : m_options.storePath);
            if (!store.ok()) {
                return store.error();
            }
            m_store = std::move(store.value());
        }
        const auto configs = sweepConfigurations(m_spec);
        m_planned = int(configs.size());
        for (size_t i = 0; i < configs.size(); ++i) {
            TrialResult t;
            t.number = int(i) + 1;
            t.params = configs[i];
            m_outcome.trials.push_back(std::move(t));
        }
        Status status = m_spec.pruning == SweepPruning::SuccessiveHalving ? runHalving() : runPlain();
        if (!status.ok()) {
            return status.error();
        }
        m_outcome.best = bestTrial(m_outcome.trials, m_spec.mode);
        m_outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return std::move(m_outcome);
    }

private:
    bool cancelled() const { return m_cancel && m_cancel->load(); }

    Status runPlain()
    {
        for (auto& t : m_outcome.trials) {
            if (cancelled()) {
                m_outcome.cancelled = true;
                break;
            }
            KILN_TRY(runTrial(t, m_spec.epochs, -1));
            if (t.status == TrialStatus::Completed && !t.curve.empty()) {
                m_finished.push_back(t.curve);
            }
        }
        // Trials never started are left out of the results.
        if (m_outcome.cancelled) {
            std::erase_if(m_outcome.trials, [](const TrialResult& t) { return t.runDir.empty(); });
        }
        return {};
    }

    Status runHalving()
    {
        int maxEpochs = m_spec.epochs.value_or(0);
        if (maxEpochs <= 0) {
            KILN_ASSIGN(train::TrainingConfig config, projectTrainingConfig(m_project, m_projectPath));
            maxEpochs = config.epochs;
        }
        const auto rungs = successiveHalvingRungs(m_spec.minEpochs, maxEpochs, m_spec.reduction);
        std::vector<int> active(m_outcome.trials.size());
        for (size_t i = 0; i < active.size(); ++i) {
            active[i] = int(i);
        }
        // Runs planned: each rung keeps ceil(n / reduction).
        {
            int n = int(active.size()), total = 0;
            for (size_t r = 0; r < rungs.size(); ++r) {
                total += n;
                n = (n + m_spec.reduction - 1) / m_spec.reduction;
            }
            m_planned = total;
        }
        std::vector<bool> started(m_outcome.trials.size(), false);
        for (size_t r = 0; r < rungs.size() && !active.empty(); ++r) {
            for (int i : active) {
                if (cancelled()) {
                    m_outcome.cancelled = true;
                    break;
                }
                started[size_t(i)] = true;
                KILN_TRY(runTrial(m_outcome.trials[size_t(i)], rungs[r], int(r)));
            }
            if (m_outcome.cancelled || r + 1 == rungs.size()) {
                break;
            }
            std::vector<std::optional<double>> scores;
            for (int i : active) {
                const auto& t = m_outcome.trials[size_t(i)];
                scores.push_back(t.status == TrialStatus::Completed ? t.objective : std::nullopt);
            }
            const auto keep = successiveHalvingPromote(scores, m_spec.reduction, m_spec.mode);
            std::vector<int> next;
            for (size_t k = 0; k < active.size(); ++k) {
                auto& t = m_outcome.trials[size_t(active[k])];
                if (std::find(keep.begin(), keep.end(), int(k)) != keep.end()) {
                    next.push_back(active[k]);
                } else if (t.status == TrialStatus::Completed) {
                    t.status = TrialStatus::Pruned;
                    t.stopReason = "not among the best 1/" + std::to_string(m_spec.reduction) + " after " +
                                   std::to_string(rungs[r]) + " epoch(s)";
                    markPruned(t);
                }
            }
            active = std::move(next);
        }
        if (m_outcome.cancelled) {
            std::vector<TrialResult> kept;
            for (size_t i = 0; i < m_outcome.trials.size(); ++i) {
                if (started[i]) {
                    kept.push_back(std::move(m_outcome.trials[i]));
                }
            }
            m_outcome.trials = std::move(kept);
        }
        return {};
    }

    json sweepRecord(const TrialResult& t) const
    {
        json record = {{"id", m_outcome.sweepId}, {"trial", t.number}, {"params", t.params}, {"objective", m_spec.objective}};
        if (m_spec.pruning == SweepPruning::SuccessiveHalving) {
            record["rung"] = t.rung;
        }
        return record;
    }

    // The trial's record: its status and the sweep's view of it next to the run's results.
    void updateRecord(const TrialResult& t, std::optional<store::RunStatus> status)
    {
        if (!m_store || t.runId == 0) {
            return;
        }
        json results = json::object();
        if (auto info = m_store->run(t.runId); info.ok()) {
            results = json::parse(info->resultsJson, nullptr, false);
            if (!results.is_object()) {
                results = json::object();
            }
        }
        json sweep = sweepRecord(t);
        sweep["status"] = trialStatusName(t.status);
        if (t.objective) {
            sweep["value"] = *t.objective;
        }
        if (!t.stopReason.empty()) {
            sweep["reason"] = t.stopReason;
        }
        results["sweep"] = sweep;
        (void)m_store->setResults(t.runId, results.dump());
        if (status) {
            (void)m_store->setStatus(t.runId, *status);
        }
    }

    void markPruned(const TrialResult& t) { updateRecord(t, store::RunStatus::Stopped); }

    void emit(SweepEvent::Kind kind, const TrialResult& t, int epoch = 0, int epochs = 0, double value = 0)
    {
        if (!m_onEvent) {
            return;
        }
        SweepEvent e;
        e.kind = kind;
        e.trial = t;
        e.trials = m_planned;
        e.epoch = epoch;
        e.epochs = epochs;
        e.value = value;
        m_onEvent(e);
    }

    void fail(TrialResult& t, const Error& e)
    {
        t.status = TrialStatus::Failed;
        t.failure = e;
        t.error = e.toString();
        if (m_store) {
            if (t.runId == 0) {
                store::NewRun run;
                run.name = m_outcome.sweepId + " trial " + std::to_string(t.number);
                run.configJson = json{{"training", m_project.training}, {"data", m_project.data}, {"sweep", sweepRecord(t)}}.dump();
                run.datasetFingerprint = store::contentHash(m_project.data.dump());
                run.runDir = t.runDir;
                if (auto id = m_store->createRun(run); id.ok()) {
                    t.runId = *id;
                }
            }
            if (t.runId != 0) {
                json results = {{"error", e.message}, {"error_code", errorCodeName(e.code)}};
                json sweep = sweepRecord(t);
                sweep["status"] = "failed";
                results["sweep"] = sweep;
                (void)m_store->setResults(t.runId, results.dump());
                (void)m_store->setStatus(t.runId, store::RunStatus::Failed);
            }
        }
    }

    // One training run of a trial: `epochs` overrides the project's (successive halving's rung).
    Status runTrial(TrialResult& t, std::optional<int> epochs, int rung)
    {
        t.curve.clear();
        t.objective.reset();
        t.error.clear();
        t.stopReason.clear();
        t.runId = 0;
        t.status = TrialStatus::Completed;
        if (rung >= 0) {
            t.rung = rung;
        }
        char name[32];
        std::snprintf(name, sizeof name, rung > 0 ? "trial-%03d-rung%d" : "trial-%03d", t.number, rung);
        t.runDir = (fs::path(m_runsDir) / name).string();
        emit(SweepEvent::Kind::TrialStarted, t);

        const auto started = std::chrono::steady_clock::now();
        auto finish = [&] {
            t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            summarize(t, m_spec.mode);
            emit(SweepEvent::Kind::TrialFinished, t);
        };
        auto applied = applySweepParameters(m_project, t.params);
        if (!applied.ok()) {
            fail(t, applied.error());
            finish();
            return {};
        }
        TrainingOptions o;
        o.runDir = t.runDir;
        o.runName = m_outcome.sweepId + " trial " + std::to_string(t.number) +
                    (rung >= 0 ? " rung " + std::to_string(rung + 1) : std::string());
        o.threads = m_options.threads;
        o.recordRun = m_options.recordRuns;
        o.storePath = m_store ? m_store->path() : std::string();
        o.epochs = epochs;
        o.recordExtra = {{"sweep", sweepRecord(t)}};
        auto job = TrainingJob::prepare(*applied, m_projectPath, o);
        if (!job.ok()) {
            fail(t, job.error());
            finish();
            return {};
        }
        t.runId = (*job)->runId();
        int runEpochs = TrainingJobAccess::config(**job).epochs;
        auto observer = std::make_unique<TrialObserver>(m_spec, m_finished, t, [&](int epoch, double value) {
            emit(SweepEvent::Kind::Epoch, t, epoch, runEpochs, value);
        });
        TrialObserver* watch = observer.get();
        TrainingJobAccess::trainer(**job).addCallback(std::move(observer));
        auto outcome = (*job)->run({}, nullptr, m_cancel);
        const bool pruned = watch->pruned;
        const std::optional<Error> missing = watch->missing;
        job.value().reset();  // closes the job's connection to the run store before ours writes
        if (!outcome.ok()) {
            fail(t, outcome.error());
            finish();
            return {};
        }
        if (missing) {
            // Every trial would fail the same way: the sweep stops with the spec's problem.
            fail(t, *missing);
            finish();
            return *missing;
        }
        if (outcome->fit.cancelled && cancelled()) {
            t.status = TrialStatus::Cancelled;
            m_outcome.cancelled = true;
            finish();
            updateRecord(t, store::RunStatus::Stopped);
            return {};
        }
        t.status = pruned ? TrialStatus::Pruned : TrialStatus::Completed;
        finish();
        updateRecord(t, pruned ? std::optional(store::RunStatus::Stopped) : std::nullopt);
        return {};
    }

    const io::Project& m_project;
    std::string m_projectPath;
    const SweepSpec& m_spec;
    SweepOptions m_options;
    std::function<void(const SweepEvent&)> m_onEvent;
    const std::atomic<bool>* m_cancel;
    std::unique_ptr<store::RunStore> m_store;
    std::string m_runsDir;
    std::vector<std::vector<double>> m_finished;  // objective curves of completed trials
    int m_planned = 0;
    SweepOutcome m_outcome;
};

}  // namespace

const char* trialStatusName(TrialStatus status)
{
    switch (status) {
    case TrialStatus::Completed: return "completed";
    case TrialStatus::Pruned: return "pruned";
    case TrialStatus::Failed: return "failed";
    case TrialStatus::Cancelled: return "cancelled";
    }
    return "failed";
}

int bestTrial(const std::vector<TrialResult>& trials, ObjectiveMode mode)
{
    for (TrialStatus wanted : {TrialStatus::Completed, TrialStatus::Pruned}) {
        int best = -1;
        for (size_t i = 0; i < trials.size(); ++i) {
            const auto& t = trials[i];
            if (t.status != wanted || !t.objective) {
                continue;
            }
            if (best < 0 || (mode == ObjectiveMode::Max ? *t.objective > *trials[size_t(best)].objective
                                                        : *t.objective < *trials[size_t(best)].objective)) {
                best = int(i);
            }
        }
        if (best >= 0) {
            return best;
        }
    }
    return -1;
}

json trialJson(const TrialResult& t)
{
    json j = {{"trial", t.number},   {"params", t.params}, {"status", trialStatusName(t.status)},
              {"epochs", t.epochs},  {"seconds", t.seconds}, {"curve", t.curve},
              {"run_dir", t.runDir}, {"run_id", t.runId}};
    j["objective"] = t.objective ? json(*t.objective) : json(nullptr);
    if (t.bestEpoch > 0) {
        j["best_epoch"] = t.bestEpoch;
    }
    if (t.rung > 0) {
        j["rung"] = t.rung;
    }
    if (!t.error.empty()) {
        j["error"] = t.error;
    }
    if (!t.stopReason.empty()) {
        j["reason"] = t.stopReason;
    }
    return j;
}

Result<SweepOutcome> runSweep(const io::Project& project, const std::string& projectPath, const SweepSpec& spec,
                              const SweepOptions& options, const std::function<void(const SweepEvent&)>& onEvent,
                              const std::atomic<bool>* cancel)
{
    try {
        SweepRunner runner(project, projectPath, spec, options, onEvent, cancel);
        return runner.run();
    } catch (const std::exception& e) {
        return Error(ErrorCode::Internal, std::string("the sweep stopped on an unexpected error: ") + e.what());
    }
}

}  // namespace kiln::engine::api
