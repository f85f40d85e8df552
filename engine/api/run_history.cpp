// SPDX-License-Identifier: Apache-2.0
// The run history over engine/store's RunStore: each record is copied into the api's own types.
#include "engine/api/run_history.h"

#include "engine/store/run_store.h"

namespace kiln::engine::api {

namespace {

// The two enumerations list the same statuses and scopes in the same order; the switches say so
// to the compiler, which warns when one gains a value the other lacks.
RunStatus toApi(store::RunStatus s) {
    switch (s) {
    case store::RunStatus::Running: return RunStatus::Running;
    case store::RunStatus::Completed: return RunStatus::Completed;
    case store::RunStatus::Stopped: return RunStatus::Stopped;
    case store::RunStatus::Failed: return RunStatus::Failed;
    case store::RunStatus::Interrupted: return RunStatus::Interrupted;
    }
    return RunStatus::Interrupted;
}

store::MetricScope toStore(MetricScope s) {
    switch (s) {
    case MetricScope::Step: return store::MetricScope::Step;
    case MetricScope::Epoch: return store::MetricScope::Epoch;
    }
    return store::MetricScope::Step;
}

RunInfo toApi(store::RunInfo r) {
    RunInfo out;
    out.id = r.id;
    out.name = std::move(r.name);
    out.created = std::move(r.created);
    out.createdMs = r.createdMs;
    out.updated = std::move(r.updated);
    out.status = toApi(r.status);
    out.configJson = std::move(r.configJson);
    out.graphHash = std::move(r.graphHash);
    out.datasetFingerprint = std::move(r.datasetFingerprint);
    out.resultsJson = std::move(r.resultsJson);
    out.runDir = std::move(r.runDir);
    out.lastStep = r.lastStep;
    out.lastEpoch = r.lastEpoch;
    return out;
}

}  // namespace

RunHistory::RunHistory(std::unique_ptr<store::RunStore> store) : m_store(std::move(store)) {}

RunHistory::~RunHistory() = default;

Result<std::unique_ptr<RunHistory>> RunHistory::open(const std::string& path) {
    KILN_ASSIGN(auto store, store::RunStore::open(path));
    return std::unique_ptr<RunHistory>(new RunHistory(std::move(store)));
}

const std::string& RunHistory::path() const { return m_store->path(); }

Result<std::vector<RunInfo>> RunHistory::runs() {
    KILN_ASSIGN(auto runs, m_store->listRuns());
    std::vector<RunInfo> out;
    out.reserve(runs.size());
    for (auto& r : runs) out.push_back(toApi(std::move(r)));
    return out;
}

Result<RunInfo> RunHistory::run(int64_t id) {
    KILN_ASSIGN(auto r, m_store->run(id));
    return toApi(std::move(r));
}

Status RunHistory::rename(int64_t id, const std::string& name) { return m_store->rename(id, name); }

Status RunHistory::remove(int64_t id) { return m_store->deleteRun(id); }

Result<std::vector<std::string>> RunHistory::metricNames(int64_t id, MetricScope scope) {
    return m_store->metricNames(id, toStore(scope));
}

Result<std::vector<MetricPoint>> RunHistory::series(int64_t id, MetricScope scope, const std::string& name) {
    KILN_ASSIGN(auto points, m_store->series(id, toStore(scope), name));
    std::vector<MetricPoint> out;
    out.reserve(points.size());
    for (const auto& p : points) out.push_back({p.step, p.value, p.wallTime});
    return out;
}

}  // namespace kiln::engine::api
