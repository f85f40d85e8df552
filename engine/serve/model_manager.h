// SPDX-License-Identifier: Apache-2.0
// The model repository watcher: scans each model's base path for numeric version folders, loads
// and warms up the versions its policy asks for once their files are complete and settled, swaps
// them in atomically, and unloads the ones it no longer wants only once a wanted version is
// available (availability preserving).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/serve/batching.h"
#include "engine/serve/model_config.h"
#include "engine/serve/servable.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {

enum class VersionState { Unknown = 0, Start = 10, Loading = 20, Available = 30, Unloading = 40, End = 50 };
const char* versionStateName(VersionState s);

struct VersionStatus {
    int64_t version = 0;
    VersionState state = VersionState::Unknown;
    TfCode code = TfCode::Ok;
    std::string message;
};

// A loaded version as handed to a request: keeps the servable (and its batcher) alive while the
// request runs, even if a newer version is swapped in meanwhile.
class LoadedVersion {
public:
    LoadedVersion(std::shared_ptr<Servable> servable, std::unique_ptr<Batcher> batcher)
        : m_servable(std::move(servable)), m_batcher(std::move(batcher)) {}
    Servable& servable() { return *m_servable; }
    const std::shared_ptr<Servable>& servablePtr() const { return m_servable; }
    // Runs through the batcher when batching is on, else directly.
    Result<std::vector<Tensor>> run(std::vector<Tensor> inputs, std::chrono::steady_clock::time_point deadline);
    // The batcher when batching is on (a request may then queue without a waiting thread, with
    // Batcher::runAsync), else null.
    Batcher* batcher() { return m_batcher.get(); }

private:
    std::shared_ptr<Servable> m_servable;
    std::unique_ptr<Batcher> m_batcher;
};

struct ManagerOptions {
    int pollSeconds = 1;             // <= 0: scan once at start
    int maxLoadRetries = 5;          // a failed load is retried this many times while its files stay the same
    // A version without a file manifest is loaded once its files (names, sizes, modification
    // times) were seen unchanged for this long, or all were last modified at least this long ago.
    int stableMs = 2000;
    std::optional<BatchingParameters> batching;
    std::function<void(const std::string& model, int64_t rows)> onBatch;  // batch-size metric
    std::function<void(const std::string& line)> log;                      // stderr by default
};

class ModelManager {
public:
    ModelManager(ModelServerConfig config, ManagerOptions options, ThreadPool& pool);
    ~ModelManager();
    ModelManager(const ModelManager&) = delete;
    ModelManager& operator=(const ModelManager&) = delete;

    // Scans every model once (loading synchronously), then polls on a thread when
    // pollSeconds > 0.
    void start();
    void stop();
    // One scan of every base path (also what the polling thread runs).
    void scanOnce();

    // The version a request asks for: a specific version, a label, or the latest available.
    // Errors: NOT_FOUND for unknown models/versions, INVALID_ARGUMENT for unknown labels.
    Result<std::shared_ptr<LoadedVersion>> find(const std::string& name, std::optional<int64_t> version,
                                                const std::optional<std::string>& label) const;
    // Status of all versions of a model (newest first), or of one version / label.
    Result<std::vector<VersionStatus>> status(const std::string& name, std::optional<int64_t> version,
                                              const std::optional<std::string>& label) const;
    std::vector<std::string> modelNames() const;
    bool hasModel(const std::string& name) const;
    // Whether a wanted version is waiting for its files to be complete and settled (START).
    bool hasWaitingVersions() const;
    // Available version numbers per model (for metrics).
    std::map<std::string, std::vector<int64_t>> availableVersions() const;

private:
    struct VersionEntry {
        VersionState state = VersionState::Unknown;
        TfCode code = TfCode::Ok;
        std::string message;
        int failures = 0;        // failed loads of the files in attemptPrint
        std::shared_ptr<LoadedVersion> loaded;
        std::string seenPrint;   // the version folder's listing at the last scan
        std::chrono::steady_clock::time_point seenSince;  // when seenPrint was first seen
        std::string attemptPrint;  // the listing the last load (or failed load) read
    };
    struct ModelEntry {
        ModelConfig config;
        std::map<int64_t, VersionEntry> versions;
        std::string lastScanError;
    };

    // A version label replaces `version` with the version it names; InvalidArgument when unknown.
    static Status applyLabel(const ModelEntry& e, const std::optional<std::string>& label,
                             std::optional<int64_t>& version);
    void scanModel(const std::string& name);
    void logLine(const std::string& line) const;
    void pollLoop();

    ManagerOptions m_options;
    ThreadPool* m_pool;
    mutable std::mutex m_mutex;                 // guards m_models (short sections only)
    std::map<std::string, ModelEntry> m_models;
    std::mutex m_scanMutex;                     // one scan at a time
    std::thread m_poller;
    std::mutex m_stopMutex;
    std::condition_variable m_stopWake;
    bool m_stop = false;
};

}  // namespace kiln::engine::serve
