// SPDX-License-Identifier: Apache-2.0
// TrainingJob: the set-up, recording and results of one training run, shared by every front end.
#include "engine/api/training_job.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "engine/api/guard.h"
#include "engine/api/histogram_log.h"
#include "engine/api/internal/training_job_access.h"
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

std::vector<MetricValue> toApi(const std::vector<train::MetricValue>& metrics) {
    std::vector<MetricValue> out;
    out.reserve(metrics.size());
    for (const auto& m : metrics) out.push_back({m.name, m.value});
    return out;
}

EvalResult toApi(const train::EvalResult& r) {
    EvalResult out;
    out.loss = r.loss;
    out.metrics = toApi(r.metrics);
    out.samples = r.samples;
    if (r.confusion) {
        const auto counts = r.confusion->counts();
        out.confusion = ConfusionCounts{r.confusion->numClasses(), std::vector<int64_t>(counts.begin(), counts.end())};
    }
    return out;
}

std::optional<EvalResult> toApi(const std::optional<train::EvalResult>& r) {
    if (!r) return std::nullopt;
    return toApi(*r);
}

TrainEvent::Kind toApi(train::TrainEvent::Kind kind) {
    using K = train::TrainEvent::Kind;
    switch (kind) {
    case K::Begin: return TrainEvent::Kind::Begin;
    case K::Step: return TrainEvent::Kind::Step;
    case K::Epoch: return TrainEvent::Kind::Epoch;
    case K::End: return TrainEvent::Kind::End;
    case K::Paused: return TrainEvent::Kind::Paused;
    case K::Resumed: return TrainEvent::Kind::Resumed;
    case K::Stopped: return TrainEvent::Kind::Stopped;
    case K::LearningRateChanged: return TrainEvent::Kind::LearningRateChanged;
    case K::SavingState: return TrainEvent::Kind::SavingState;
    }
    return TrainEvent::Kind::Step;
}

// The trainer's event as the api's; `histograms` are the event's, already copied (they are the
// one large part of an event, copied once for the run folder and the listener both).
TrainEvent toApi(const train::TrainEvent& e, std::vector<ParamHistogram> histograms) {
    TrainEvent out;
    out.kind = toApi(e.kind);
    out.epoch = e.epoch;
    out.epochs = e.epochs;
    out.step = e.step;
    out.stepsPerEpoch = e.stepsPerEpoch;
    out.globalStep = e.globalStep;
    out.loss = e.loss;
    out.metrics = toApi(e.metrics);
    out.learningRate = e.learningRate;
    out.samplesPerSecond = e.samplesPerSecond;
    out.etaSeconds = e.etaSeconds;
    out.elapsedSeconds = e.elapsedSeconds;
    out.validation = toApi(e.validation);
    out.requestId = e.requestId;
    out.message = e.message;
    out.inputWaitFraction = e.inputWaitFraction;
    out.badSamples = e.badSamples;
    const exec::DeviceMemory& m = e.deviceMemory;
    out.deviceMemory = DeviceMemory{m.inUse, m.reserved, m.peak, m.limit, m.total};
    out.stage = e.stage;
    out.stageName = e.stageName;
    out.stageStartStep = e.stageStartStep;
    out.histograms = std::move(histograms);
    return out;
}

FitResult toApi(const train::FitResult& f) {
    FitResult out;
    out.history.reserve(f.history.size());
    for (const auto& h : f.history) {
        out.history.push_back({h.epoch, toApi(h.train), toApi(h.validation), h.seconds, h.samplesPerSecond, h.stage});
    }
    out.test = toApi(f.test);
    out.seconds = f.seconds;
    out.samplesPerSecond = f.samplesPerSecond;
    out.cancelled = f.cancelled;
    out.stopped = f.stopped;
    out.earlyStopped = f.earlyStopped;
    out.stopReason = f.stopReason;
    out.stopStateDir = f.stopStateDir;
    out.resumedFromStep = f.resumedFromStep;
    out.skippedSteps = f.skippedSteps;
    out.badSamples.reserve(f.badSamples.size());
    for (const auto& b : f.badSamples) out.badSamples.push_back({b.index, b.path, b.reason});
    return out;
}

WeightsReport toApi(const train::WeightsReport& r) {
    WeightsReport out;
    out.file = r.file;
    out.loaded = r.loaded;
    out.initialised = r.initialised;
    out.mismatched.reserve(r.mismatched.size());
    for (const auto& m : r.mismatched) out.mismatched.push_back({m.name, m.fileShape, m.modelShape});
    out.unused = r.unused;
    out.loadedValues = r.loadedValues;
    return out;
}

train::TrainCommand::Kind toTrain(TrainCommand::Kind kind) {
    switch (kind) {
    case TrainCommand::Kind::Pause: return train::TrainCommand::Kind::Pause;
    case TrainCommand::Kind::Resume: return train::TrainCommand::Kind::Resume;
    case TrainCommand::Kind::Stop: return train::TrainCommand::Kind::Stop;
    case TrainCommand::Kind::SetLearningRate: return train::TrainCommand::Kind::SetLearningRate;
    }
    return train::TrainCommand::Kind::Stop;
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

struct TrainingJob::State {
    io::Project m_project;
    std::string m_projectPath;
    TrainingOptions m_options;
    ops::ModelInfo m_model;
    train::TrainingConfig m_config;
    std::unique_ptr<ThreadPool> m_pool;
    std::unique_ptr<train::Trainer> m_trainer;
    std::unique_ptr<store::RunStore> m_store;
    std::string m_runDir;
    int64_t m_runId = 0;
    int64_t m_resumedFrom = -1;
    std::optional<train::WeightsReport> m_weightsReport;  // the trainer's, for run.json
    std::optional<WeightsReport> m_apiWeightsReport;      // the same, as TrainingJob hands it out
    std::optional<train::FitResult> m_fit;                // the trainer's result, once run
    bool m_ran = false;

    void record(const train::TrainEvent& e);
    void markFailed(const Error& error);
};

TrainCommandQueue::TrainCommandQueue() : m_queue(std::make_unique<train::TrainCommandQueue>()) {}

TrainCommandQueue::~TrainCommandQueue() = default;

void TrainCommandQueue::post(const TrainCommand& command) {
    m_queue->post({toTrain(command.kind), command.learningRate, command.requestId});
}

void TrainCommandQueue::clear() {
    m_queue->clear();
}

double EvalResult::metric(const std::string& name, double fallback) const {
    if (name == "loss") return loss;
    for (const auto& m : metrics) {
        if (m.name == name) return m.value;
    }
    return fallback;
}

TrainingJob::TrainingJob() : m_state(std::make_unique<State>()) {}

TrainingJob::~TrainingJob() = default;

const std::string& TrainingJob::runDir() const {
    return m_state->m_runDir;
}

int64_t TrainingJob::runId() const {
    return m_state->m_runId;
}

const ops::ModelInfo& TrainingJob::model() const {
    return m_state->m_model;
}

int64_t TrainingJob::resumedFromStep() const {
    return m_state->m_resumedFrom;
}

bool TrainingJob::writesFiles() const {
    return !m_state->m_options.group || m_state->m_options.group->rank() == 0;
}

const std::optional<WeightsReport>& TrainingJob::weightsReport() const {
    return m_state->m_apiWeightsReport;
}

train::Trainer& TrainingJobAccess::trainer(TrainingJob& job) {
    return *job.m_state->m_trainer;
}

const train::TrainingConfig& TrainingJobAccess::config(const TrainingJob& job) {
    return job.m_state->m_config;
}

const train::FitResult* TrainingJobAccess::fitResult(const TrainingJob& job) {
    return job.m_state->m_fit ? &*job.m_state->m_fit : nullptr;
}

int TrainingJob::threads() const {
    return m_state->m_pool ? int(m_state->m_pool->size()) : 0;
}

Result<std::unique_ptr<TrainingJob>> TrainingJob::prepare(const io::Project& project, const std::string& projectPath,
                                                          TrainingOptions options) {
    return guarded("preparing the training", [&] { return prepareUnguarded(project, projectPath, std::move(options)); });
}

Result<std::unique_ptr<TrainingJob>> TrainingJob::prepareUnguarded(const io::Project& project,
                                                                   const std::string& projectPath, TrainingOptions options) {
    std::unique_ptr<TrainingJob> job(new TrainingJob());
    State& st = *job->m_state;
    st.m_project = project;
    st.m_projectPath = projectPath;
    st.m_options = options;

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
    st.m_model = std::move(prepared.model);
    st.m_config = std::move(prepared.config);
    st.m_pool = std::move(prepared.pool);
    st.m_trainer = std::move(prepared.trainer);
    if (!options.weightsPath.empty()) {
        KILN_ASSIGN(st.m_weightsReport,
                    train::loadWeightsByName(st.m_trainer->params(), options.weightsPath, options.weightsPartial));
        st.m_apiWeightsReport = toApi(*st.m_weightsReport);
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
    st.m_runDir = runDir;
    KILN_TRY(st.m_trainer->addConfiguredCallbacks(train::CallbackContext{runDir, !job->writesFiles()}));
    if (job->writesFiles()) {
        st.m_trainer->setStopStateDir(stopStateDir(runDir));
    }

    // Resume: a state left by Stop is restored here when it is newer than the periodic backup;
    // BackupAndRestore restores its own backup when training begins, as in Keras.
    if (options.resume) {
        const std::string stopped = stopStateDir(runDir);
        std::string backup;
        for (const auto& cb : st.m_trainer->callbacks()) {
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
            KILN_TRY(st.m_trainer->restoreFrom(stopped));
        }
    }

    if (options.recordRun && job->writesFiles()) {
        auto store = store::RunStore::open(options.storePath.empty() ? runStorePath(projectPath) : options.storePath);
        if (!store.ok()) {
            return store.error();
        }
        st.m_store = std::move(store.value());
        // A resumed run keeps its record; a new one gets a new record.
        if (options.resume) {
            auto runs = st.m_store->listRuns();
            if (runs.ok()) {
                for (const auto& r : *runs) {
                    if (fs::path(r.runDir) == fs::path(runDir)) {
                        st.m_runId = r.id;
                    }
                }
            }
        }
        if (st.m_runId == 0) {
            store::NewRun run;
            run.name = options.runName.empty()
                           ? (project.name.empty() ? std::string("run") : project.name) + " " + localTimestamp("%Y-%m-%d %H:%M")
                           : options.runName;
            json snapshot = {{"training", project.training}, {"data", project.data}};
            snapshot["training"]["epochs"] = st.m_config.epochs;
            snapshot["training"]["batch_size"] = st.m_config.batchSize;
            snapshot["training"]["seed"] = st.m_config.seed;
            if (options.recordExtra.is_object()) {
                for (const auto& [key, value] : options.recordExtra.items()) {
                    snapshot[key] = value;
                }
            }
            run.configJson = snapshot.dump();
            run.graphHash = store::contentHash(io::serializeProject([&] {
                io::Project graphOnly;
                // The expanded graph: a change to a layer definition is a change of the model.
                graphOnly.graph = st.m_model.graph;
                return graphOnly;
            }()));
            run.datasetFingerprint = store::contentHash(project.data.dump());
            run.runDir = runDir;
            KILN_ASSIGN(st.m_runId, st.m_store->createRun(run));
        } else {
            KILN_TRY(st.m_store->setStatus(st.m_runId, store::RunStatus::Running));
        }
    }
    return job;
}

void TrainingJob::State::record(const train::TrainEvent& e) {
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

void TrainingJob::State::markFailed(const Error& error) {
    if (m_store && m_runId) {
        (void)m_store->flush();
        (void)m_store->setStatus(m_runId, store::RunStatus::Failed);
        (void)m_store->setResults(m_runId, json{{"error", error.message}}.dump());
    }
}

Result<TrainingOutcome> TrainingJob::run(const EventListener& onEvent, TrainCommandQueue* queue,
                                         const std::atomic<bool>* cancel) {
    if (m_state->m_ran) {
        return Error(ErrorCode::Internal, "a training job runs once");
    }
    m_state->m_ran = true;
    try {
        return runUnguarded(onEvent, queue, cancel);
    } catch (...) {
        // Thrown, not returned: the trainer could not mark the record itself. The store may be
        // what threw; marking it must not throw again.
        const Error error = errorFromException(std::current_exception(), "training");
        try {
            m_state->markFailed(error);
        } catch (...) {
        }
        return error;
    }
}

Result<TrainingOutcome> TrainingJob::runUnguarded(const EventListener& onEvent, TrainCommandQueue* queue,
                                                  const std::atomic<bool>* cancel) {
    State& st = *m_state;
    st.m_trainer->setCommandQueue(queue ? queue->m_queue.get() : nullptr);
    const bool writes = writesFiles();
    auto fit = st.m_trainer->fit(
        [&](const train::TrainEvent& e) {
            // The histograms are copied once, for the run folder and the listener both, and then
            // moved along with the event.
            std::vector<ParamHistogram> histograms;
            if (e.kind == train::TrainEvent::Kind::Epoch && !e.histograms.empty() && (writes || onEvent)) {
                histograms = toApi(e.histograms);
            }
            // The run folder keeps the histograms for the studio once the run is over; a resumed
            // run that repeats an epoch appends it again and readers keep the later line.
            if (writes && !histograms.empty()) {
                (void)appendHistograms(histogramLogPath(st.m_runDir), e.epoch, histograms);
            }
            st.record(e);
            if (onEvent) {
                onEvent(toApi(e, std::move(histograms)));
            }
        },
        cancel);
    if (!fit.ok()) {
        st.markFailed(fit.error());
        return fit.error();
    }
    st.m_resumedFrom = fit->resumedFromStep;

    TrainingOutcome outcome;
    outcome.runDir = st.m_runDir;
    outcome.runId = st.m_runId;
    if (!writes) {
        outcome.results = train::resultsJson(*fit);
        outcome.fit = toApi(*fit);
        st.m_fit = std::move(fit.value());
        return outcome;
    }
    const std::string weights = (fs::path(st.m_runDir) / "weights.safetensors").string();
    KILN_TRY(train::saveWeights(st.m_trainer->params(), weights, {{"project", st.m_projectPath}}));

    json out = train::resultsJson(*fit);
    if (st.m_weightsReport) {
        out["weights_report"] = st.m_weightsReport->toJson();
    }
    if (st.m_store && st.m_runId) {
        out["run_id"] = st.m_runId;
    }
    train::RunRecord record{&st.m_project, st.m_projectPath, &st.m_model, &st.m_config, st.m_config.device, threads(),
                            st.m_trainer->data().classNames};
    const json runJsonValue = train::runJson(record, *fit, out);
    KILN_TRY(io::writeFileAtomic((fs::path(st.m_runDir) / "run.json").string(), runJsonValue.dump(2) + "\n"));

    if (st.m_store && st.m_runId) {
        (void)st.m_store->flush();
        (void)st.m_store->setResults(st.m_runId, out.dump());
        (void)st.m_store->addArtifact(st.m_runId, "weights", weights);
        (void)st.m_store->addArtifact(st.m_runId, "summary", (fs::path(st.m_runDir) / "run.json").string());
        for (const auto& cb : st.m_trainer->callbacks()) {
            if (auto* t = dynamic_cast<const train::TensorBoard*>(cb.get())) {
                (void)st.m_store->addArtifact(st.m_runId, "tensorboard", t->logDir());
            } else if (auto* b = dynamic_cast<const train::BackupAndRestore*>(cb.get()); b && train::Trainer::hasState(b->dir())) {
                (void)st.m_store->addArtifact(st.m_runId, "backup", b->dir());
            } else if (auto* m = dynamic_cast<const train::ModelCheckpoint*>(cb.get())) {
                for (const auto& f : m->saved()) {
                    (void)st.m_store->addArtifact(st.m_runId, "checkpoint", f);
                }
            }
        }
        if (train::Trainer::hasState(stopStateDir(st.m_runDir))) {
            (void)st.m_store->addArtifact(st.m_runId, "stopped_state", stopStateDir(st.m_runDir));
        }
        (void)st.m_store->setStatus(st.m_runId, fit->stopped ? store::RunStatus::Stopped : store::RunStatus::Completed);
    }
    outcome.results = std::move(out);
    outcome.fit = toApi(*fit);
    st.m_fit = std::move(fit.value());
    return outcome;
}

}  // namespace kiln::engine::api
