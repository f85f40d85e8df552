// SPDX-License-Identifier: Apache-2.0
// A project's run history as the studio sees it: the runs recorded in its run store (status,
// configuration, results, metrics), listed, renamed and deleted. The types here belong to this
// header; the store behind it (engine/store's RunStore) stays inside the engine, and its records
// are copied into these at the boundary. runStorePath() (engine/api/training_job.h) names a
// project's store.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::store {
class RunStore;
}

namespace kiln::engine::api {

// Where a run stands; the order is that of the store's statuses (a sort key).
enum class RunStatus { Running,
                       Completed,
                       Stopped,
                       Failed,
                       Interrupted };

// Step metrics are logged per global step, epoch metrics (validation included) per epoch.
enum class MetricScope { Step,
                         Epoch };

struct RunInfo {
    int64_t id = 0;
    std::string name;
    std::string created;    // ISO 8601 UTC, e.g. "2026-11-29T22:40:01Z"
    int64_t createdMs = 0;  // milliseconds since the Unix epoch (sort key)
    std::string updated;    // ISO 8601 UTC of the last change of status or results
    RunStatus status = RunStatus::Running;
    std::string configJson;  // snapshot of the project's "training" (and more) as JSON text
    std::string graphHash;
    std::string datasetFingerprint;
    std::string resultsJson;  // "{}" until set
    std::string runDir;
    int64_t lastStep = 0;  // highest step with a step metric
    int lastEpoch = 0;     // highest epoch with an epoch metric
};

struct MetricPoint {
    int64_t step = 0;  // global step (Step scope) or epoch number (Epoch scope)
    double value = 0;
    double wallTime = 0;  // seconds since the Unix epoch
};

// One open run store. Reads see what training processes have written (they write through their
// own connections); the studio only reads, renames and deletes.
class RunHistory {
public:
    // Opens (or creates) the store at `path`. UnsupportedFormat for a store of a newer Kiln,
    // FileRead/FileWrite naming the path otherwise.
    static Result<std::unique_ptr<RunHistory>> open(const std::string& path);
    ~RunHistory();
    RunHistory(const RunHistory&) = delete;
    RunHistory& operator=(const RunHistory&) = delete;

    const std::string& path() const;
    // Every run, newest first.
    Result<std::vector<RunInfo>> runs();
    Result<RunInfo> run(int64_t id);
    Status rename(int64_t id, const std::string& name);
    // Deletes the run's record with its metrics (not its files on disk).
    Status remove(int64_t id);
    Result<std::vector<std::string>> metricNames(int64_t id, MetricScope scope);
    // The points of one series in step order.
    Result<std::vector<MetricPoint>> series(int64_t id, MetricScope scope, const std::string& name);

private:
    explicit RunHistory(std::unique_ptr<store::RunStore> store);
    std::unique_ptr<store::RunStore> m_store;
};

}  // namespace kiln::engine::api
