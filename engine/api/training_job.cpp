// SPDX-License-Identifier: Apache-2.0
// TrainingJob: the set-up, recording and results of one training run, shared by every front end.
#include "engine/api/training_job.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "engine/api/guard.h"
#include "engine/api/histogram_log.h"
#include "engine/api/internal/training_setup.h"
#include "engine/api/run_location.h"
#include "engine/store/run_store.h"
#include "engine/train/run_summary.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double wallSeconds() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

Histogram toApi(const io::Histogram& h) {
    return Histogram{h.min, h.max, h.num, h.sum, h.sumSquares, h.bucketLimit, h.bucket};
}

std::vector<ParamHistogram> toApi(const std::vector<train::ParamHistogram>& params) {
    std::vector<ParamHistogram> out;
    out.reserve(params.size());
    for (const auto& p : params) out.push_back({p.name, toApi(p.weights), toApi(p.gradients)});
    return out;
}

fs::file_time_type modified(const std::string& dir) {
    std::error_code ec;
    const auto t = fs::last_write_time(dir, ec);
    return ec ? fs::file_time_type::min() : t;
}

}  // namespace

std::string runStorePath(const std::string& projectPath) {
    return (fs::path(runsHome(fs::path(projectPath).parent_path().string())) / ".kiln" / "runs.sqlite").string();
}

std::string stopStateDir(const std::string& runDir) {
    return (fs::path(runDir) / "stopped").string();
}

TrainingJob::~TrainingJob() = default;

int TrainingJob::threads() const {
    return m_pool ? int(m_pool->size()) : 0;
}

Result<std::unique_ptr<TrainingJob>> TrainingJob::prepare(const io::Project& project, const std::string& projectPath,
                                                          TrainingOptions options) {
    return guarded("preparing the training", [&] { return prepareUnguarded(project, projectPath, std::move(options)); });
}

Result<std::unique_ptr<TrainingJob>> TrainingJob::prepareUnguarded(const io::Project& project,
                                                                   const std::string& projectPath, TrainingOptions options) {
    std::unique_ptr<TrainingJob> job(new TrainingJob());
    job->m_project = project;
    job->m_projectPath = projectPath;
    job->m_options = options;

    PrepareOptions setup;
    setup.epochs = options.epochs;
    setup.batchSize = options.batchSize;
    setup.seed = options.seed;
    setup.device = options.device;
    setup.precision = options.precision;
    setup.lrScaling = options.lrScaling;
    setup.warmupEpochs = options.warmupEpochs;
    setup.refusePlaceholdersFor = "train";
    setup.threads = options.threads;
    setup.group = options.group;
    KILN_ASSIGN(PreparedTraining prepared, prepareTraining(project, projectPath, setup));
    job->m_model = std::move(prepared.model);
    job->m_config = std::move(prepared.config);
    job->m_pool = std::move(prepared.pool);
    job->m_trainer = std::move(prepared.trainer);
    if (!options.weightsPath.empty()) {
        KILN_ASSIGN(job->m_weightsReport,
                    train::loadWeightsByName(job->m_trainer->params(), options.weightsPath, options.weightsPartial));
    }

    // The run folder.
    std::string runDir = options.runDir;
    if (runDir.empty()) {
        if (options.resume) {
            return Error(ErrorCode::ConfigError, "resuming needs the run folder to continue").with("field", "run_dir");
        }
        const std::string base = project.name.empty() ? "run" : project.name;
        runDir = (fs::path(runsHome(fs::path(projectPath).parent_path().string())) / "runs" /
                  (base + "-" + localTimestamp("%Y%m%d-%H%M%S")))
                     .string();
    }
    std::error_code ec;
    if (job->writesFiles()) {
        fs::create_directories(runDir, ec);
    }
    if (ec) {
        return Error(ErrorCode::FileWrite, "cannot create the run folder: " + ec.message())
            .withFile(runDir)
            .with("path", runDir)
            .with("reason", ec.message());
    }
    job->m_runDir = runDir;
    KILN_TRY(job->m_trainer->addConfiguredCallbacks(train::CallbackContext{runDir, !job->writesFiles()}));
    if (job->writesFiles()) {
        job->m_trainer->setStopStateDir(stopStateDir(runDir));
    }

    // Resume: a state left by Stop is restored here when it is newer than the periodic backup;
    // BackupAndRestore restores its own backup when training begins, as in Keras.
    if (options.resume) {
        const std::string stopped = stopStateDir(runDir);
        std::string backup;
        for (const auto& cb : job->m_trainer->callbacks()) {
            if (auto* b = dynamic_cast<const train::BackupAndRestore*>(cb.get())) {
                backup = b->dir();
            }
        }
        const bool haveStopped = train::Trainer::hasState(stopped);
        const bool haveBackup = !backup.empty() && train::Trainer::hasState(backup);
        if (!haveStopped && !haveBackup) {
            return Error(ErrorCode::FileNotFound, "no training state to resume from in " + runDir)
                .withFile(runDir)
                .with("path", runDir);
        }
        if (haveStopped && (!haveBackup || modified(stopped) >= modified(backup))) {
            KILN_TRY(job->m_trainer->restoreFrom(stopped));
        }
    }

    if (options.recordRun && job->writesFiles()) {
        auto store = store::RunStore::open(options.storePath.empty() ? runStorePath(projectPath) : options.storePath);
        if (!store.ok()) {
            return store.error();
        }
        job->m_store = std::move(store.value());
        // A resumed run keeps its record; a new one gets a new record.
        if (options.resume) {
            auto runs = job->m_store->listRuns();
            if (runs.ok()) {
                for (const auto& r : *runs) {
                    if (fs::path(r.runDir) == fs::path(runDir)) {
                        job->m_runId = r.id;
                    }
                }
            }
        }
        if (job->m_runId == 0) {
            store::NewRun run;
            run.name = options.runName.empty()
                           ? (project.name.empty() ? std::string("run") : project.name) + " " + localTimestamp("%Y-%m-%d %H:%M")
                           : options.runName;
            json snapshot = {{"training", project.training}, {"data", project.data}};
            snapshot["training"]["epochs"] = job->m_config.epochs;
            snapshot["training"]["batch_size"] = job->m_config.batchSize;
            snapshot["training"]["seed"] = job->m_config.seed;
            if (options.recordExtra.is_object()) {
                for (const auto& [key, value] : options.recordExtra.items()) {
                    snapshot[key] = value;
                }
            }
            run.configJson = snapshot.dump();
            run.graphHash = store::contentHash(io::serializeProject([&] {
                io::Project graphOnly;
                // The expanded graph: a change to a layer definition is a change of the model.
                graphOnly.graph = job->m_model.graph;
                return graphOnly;
            }()));
            run.datasetFingerprint = store::contentHash(project.data.dump());
            run.runDir = runDir;
            KILN_ASSIGN(job->m_runId, job->m_store->createRun(run));
        } else {
            KILN_TRY(job->m_store->setStatus(job->m_runId, store::RunStatus::Running));
        }
    }
    return job;
}

void TrainingJob::record(const train::TrainEvent& e) {
    if (!m_store || m_runId == 0) {
        return;
    }
    const double now = wallSeconds();
    switch (e.kind) {
    case train::TrainEvent::Kind::Begin:
        if (m_options.resume) {
            // Curves continue from the restored position: drop what was logged after it.
            const train::TrainPosition p = m_trainer->position();
            (void)m_store->truncateMetrics(m_runId, p.globalStep, p.epoch - 1);
        }
        break;
    case train::TrainEvent::Kind::SavingState:
        // Everything logged so far belongs to the state being saved: a resume after a crash then
        // continues the curves without a gap.
        (void)m_store->flush();
        break;
    case train::TrainEvent::Kind::Step: {
        if (m_options.stepMetricsEvery > 1 && e.globalStep % m_options.stepMetricsEvery != 0) {
            break;
        }
        std::vector<std::pair<std::string, double>> values = {
            {"loss", e.loss}, {"learning_rate", e.learningRate}, {"samples_per_second", e.samplesPerSecond}};
        for (const auto& m : e.metrics) {
            values.emplace_back(m.name, m.value);
        }
        (void)m_store->logMetrics(m_runId, store::MetricScope::Step, e.globalStep, values, now);
        break;
    }
    case train::TrainEvent::Kind::Epoch: {
        std::vector<std::pair<std::string, double>> values = {{"loss", e.loss}, {"learning_rate", e.learningRate}};
        for (const auto& m : e.metrics) {
            values.emplace_back(m.name, m.value);
        }
        if (e.validation) {
            values.emplace_back("val_loss", e.validation->loss);
            for (const auto& m : e.validation->metrics) {
                values.emplace_back("val_" + m.name, m.value);
            }
        }
        if (e.stage >= 0) {
            values.emplace_back("stage", e.stage);  // the curves' stage boundaries
        }
        (void)m_store->logMetrics(m_runId, store::MetricScope::Epoch, e.epoch, values, now);
        (void)m_store->flush();
        break;
    }
    default:
        break;
    }
}

void TrainingJob::markFailed(const Error& error) {
    if (m_store && m_runId) {
        (void)m_store->flush();
        (void)m_store->setStatus(m_runId, store::RunStatus::Failed);
        (void)m_store->setResults(m_runId, json{{"error", error.message}}.dump());
    }
}

Result<TrainingOutcome> TrainingJob::run(const std::function<void(const train::TrainEvent&)>& onEvent,
                                         train::TrainCommandQueue* queue, const std::atomic<bool>* cancel) {
    if (m_ran) {
        return Error(ErrorCode::Internal, "a training job runs once");
    }
    m_ran = true;
    try {
        return runUnguarded(onEvent, queue, cancel);
    } catch (...) {
        // Thrown, not returned: the trainer could not mark the record itself. The store may be
        // what threw; marking it must not throw again.
        const Error error = errorFromException(std::current_exception(), "training");
        try {
            markFailed(error);
        } catch (...) {
        }
        return error;
    }
}

Result<TrainingOutcome> TrainingJob::runUnguarded(const std::function<void(const train::TrainEvent&)>& onEvent,
                                                  train::TrainCommandQueue* queue, const std::atomic<bool>* cancel) {
    m_trainer->setCommandQueue(queue);
    auto fit = m_trainer->fit(
        [&](const train::TrainEvent& e) {
            // The run folder keeps the histograms for the studio once the run is over; a resumed
            // run that repeats an epoch appends it again and readers keep the later line.
            if (e.kind == train::TrainEvent::Kind::Epoch && !e.histograms.empty() && writesFiles()) {
                (void)appendHistograms(histogramLogPath(m_runDir), e.epoch, toApi(e.histograms));
            }
            record(e);
            if (onEvent) {
                onEvent(e);
            }
        },
        cancel);
    if (!fit.ok()) {
        markFailed(fit.error());
        return fit.error();
    }
    m_resumedFrom = fit->resumedFromStep;

    TrainingOutcome outcome;
    outcome.runDir = m_runDir;
    outcome.runId = m_runId;
    if (!writesFiles()) {
        outcome.results = train::resultsJson(*fit);
        outcome.fit = std::move(fit.value());
        return outcome;
    }
    const std::string weights = (fs::path(m_runDir) / "weights.safetensors").string();
    KILN_TRY(train::saveWeights(m_trainer->params(), weights, {{"project", m_projectPath}}));

    json out = train::resultsJson(*fit);
    if (m_weightsReport) {
        out["weights_report"] = m_weightsReport->toJson();
    }
    if (m_store && m_runId) {
        out["run_id"] = m_runId;
    }
    train::RunRecord record{&m_project, m_projectPath, &m_model, &m_config, m_config.device, threads(),
                            m_trainer->data().classNames};
    const json runJsonValue = train::runJson(record, *fit, out);
    KILN_TRY(io::writeFileAtomic((fs::path(m_runDir) / "run.json").string(), runJsonValue.dump(2) + "\n"));

    if (m_store && m_runId) {
        (void)m_store->flush();
        (void)m_store->setResults(m_runId, out.dump());
        (void)m_store->addArtifact(m_runId, "weights", weights);
        (void)m_store->addArtifact(m_runId, "summary", (fs::path(m_runDir) / "run.json").string());
        for (const auto& cb : m_trainer->callbacks()) {
            if (auto* t = dynamic_cast<const train::TensorBoard*>(cb.get())) {
                (void)m_store->addArtifact(m_runId, "tensorboard", t->logDir());
            } else if (auto* b = dynamic_cast<const train::BackupAndRestore*>(cb.get()); b && train::Trainer::hasState(b->dir())) {
                (void)m_store->addArtifact(m_runId, "backup", b->dir());
            } else if (auto* m = dynamic_cast<const train::ModelCheckpoint*>(cb.get())) {
                for (const auto& f : m->saved()) {
                    (void)m_store->addArtifact(m_runId, "checkpoint", f);
                }
            }
        }
        if (train::Trainer::hasState(stopStateDir(m_runDir))) {
            (void)m_store->addArtifact(m_runId, "stopped_state", stopStateDir(m_runDir));
        }
        (void)m_store->setStatus(m_runId, fit->stopped ? store::RunStatus::Stopped : store::RunStatus::Completed);
    }
    outcome.results = std::move(out);
    outcome.fit = std::move(fit.value());
    return outcome;
}

}  // namespace kiln::engine::api
