// SPDX-License-Identifier: Apache-2.0
// RunStore: a project's training runs in SQLite (WAL mode, schema version table): each run's
// name, status, configuration snapshot, graph hash, data fingerprint, results and artifacts, and
// its metrics per step and per epoch (buffered, written in batched transactions).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::store {

enum class RunStatus { Running, Completed, Stopped, Failed, Interrupted };
const char* runStatusName(RunStatus s);  // "running", "completed", "stopped", "failed", "interrupted"
std::optional<RunStatus> parseRunStatus(std::string_view s);

enum class MetricScope { Step, Epoch };

struct RunInfo {
    int64_t id = 0;
    std::string name;
    std::string created;     // ISO 8601 UTC, e.g. "2026-11-29T22:40:01Z"
    int64_t createdMs = 0;   // milliseconds since the Unix epoch (sort key)
    std::string updated;     // ISO 8601 UTC of the last change of status or results
    RunStatus status = RunStatus::Running;
    std::string configJson;  // snapshot of the project's "training" (and more) as JSON text
    std::string graphHash;
    std::string datasetFingerprint;
    std::string resultsJson; // "{}" until set
    std::string runDir;
    int64_t lastStep = 0;    // highest step with a step metric
    int lastEpoch = 0;       // highest epoch with an epoch metric
};

struct NewRun {
    std::string name;
    std::string configJson = "{}";
    std::string graphHash;
    std::string datasetFingerprint;
    std::string runDir;
};

struct Artifact {
    std::string kind;  // "weights", "checkpoint", "backup", "tensorboard", "export", ...
    std::string path;
    std::string created;
};

struct MetricPoint {
    int64_t step = 0;  // global step (Step scope) or epoch number (Epoch scope)
    double value = 0;
    double wallTime = 0;  // seconds since the Unix epoch
};

struct RunFilter {
    std::string nameContains;           // case-insensitive substring; empty: all
    std::optional<RunStatus> status;
    enum class SortBy { Created, Name, Status, Updated } sortBy = SortBy::Created;
    bool descending = true;
    int limit = -1;                      // -1: no limit
};

class RunStore {
public:
    static constexpr int kSchemaVersion = 1;

    // Opens or creates the database (and its folder). UnsupportedFormat when the file has a newer
    // schema than this Kiln knows; FileRead/FileWrite naming the path on SQLite errors.
    static Result<std::unique_ptr<RunStore>> open(const std::string& path);
    ~RunStore();  // flushes buffered metrics
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    const std::string& path() const { return m_path; }

    Result<int64_t> createRun(const NewRun& run);
    Result<RunInfo> run(int64_t id);
    Result<std::vector<RunInfo>> listRuns(const RunFilter& filter = {});
    Status rename(int64_t id, const std::string& name);
    Status setStatus(int64_t id, RunStatus status);
    Status setResults(int64_t id, const std::string& resultsJson);
    // Deletes the run with its metrics and artifact records (not the files on disk).
    Status deleteRun(int64_t id);

    Status addArtifact(int64_t id, const std::string& kind, const std::string& path);
    Result<std::vector<Artifact>> artifacts(int64_t id);

    // Queues metric values at `step` (global step or epoch); written by flush(), which also runs
    // by itself every kFlushRows rows or kFlushInterval. A value logged again for the same run,
    // scope, name and step replaces the old one (a resumed run rewrites the steps after its
    // backup).
    Status logMetrics(int64_t id, MetricScope scope, int64_t step,
                      const std::vector<std::pair<std::string, double>>& values, double wallTime = -1);
    Status flush();
    // Removes metrics with step > `step` (Step scope) or epoch > `epoch` (Epoch scope), so that a
    // run resumed from a backup continues its curves from there.
    Status truncateMetrics(int64_t id, int64_t step, int epoch);

    Result<std::vector<std::string>> metricNames(int64_t id, MetricScope scope);
    // Points of one series in step order, those with step >= fromStep; stride > 1 keeps every
    // stride-th point (for overview charts).
    Result<std::vector<MetricPoint>> series(int64_t id, MetricScope scope, const std::string& name,
                                            int64_t fromStep = INT64_MIN, int stride = 1);

    static constexpr size_t kFlushRows = 4096;
    static constexpr std::chrono::milliseconds kFlushInterval{1000};

private:
    RunStore() = default;
    Status exec(const char* sql);
    Error sqlError(const std::string& what) const;
    Status requireRun(int64_t id);

    struct PendingRow {
        int64_t run;
        int scope;
        std::string name;
        int64_t step;
        double value;
        double wallTime;
    };

    std::string m_path;
    void* m_db = nullptr;  // sqlite3*
    std::vector<PendingRow> m_pending;
    std::chrono::steady_clock::time_point m_lastFlush = std::chrono::steady_clock::now();
};

// A short stable hash (16 hex digits, FNV-1a 64) for graph hashes and data fingerprints.
std::string contentHash(std::string_view bytes);

}  // namespace kiln::engine::store
