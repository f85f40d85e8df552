// SPDX-License-Identifier: Apache-2.0
// Version discovery, loading, warm-up, atomic swap and policy-driven unloading.
#include "engine/serve/model_manager.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <set>

namespace kiln::engine::serve {
namespace fs = std::filesystem;

const char* versionStateName(VersionState s) {
    switch (s) {
    case VersionState::Unknown: return "UNKNOWN";
    case VersionState::Start: return "START";
    case VersionState::Loading: return "LOADING";
    case VersionState::Available: return "AVAILABLE";
    case VersionState::Unloading: return "UNLOADING";
    case VersionState::End: return "END";
    }
    return "UNKNOWN";
}

Result<std::vector<Tensor>> LoadedVersion::run(std::vector<Tensor> inputs, std::chrono::steady_clock::time_point deadline) {
    if (m_batcher) return m_batcher->run(std::move(inputs), deadline);
    return m_servable->run(inputs);
}

namespace {

// A child folder name counts as a version if it parses as a non-negative int64 ("00042" = 42).
std::optional<int64_t> parseVersion(const std::string& s) {
    if (s.empty()) return std::nullopt;
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
    return v;
}

}  // namespace

ModelManager::ModelManager(ModelServerConfig config, ManagerOptions options, ThreadPool& pool)
    : m_options(std::move(options)), m_pool(&pool) {
    for (auto& m : config.models) {
        ModelEntry e;
        e.config = std::move(m);
        m_models.emplace(e.config.name, std::move(e));
    }
}

ModelManager::~ModelManager() { stop(); }

void ModelManager::logLine(const std::string& line) const {
    if (m_options.log) m_options.log(line);
    else std::fprintf(stderr, "kiln-serve: %s\n", line.c_str());
}

void ModelManager::start() {
    scanOnce();
    if (m_options.pollSeconds > 0) m_poller = std::thread([this] { pollLoop(); });
}

void ModelManager::stop() {
    {
        std::lock_guard lock(m_stopMutex);
        m_stop = true;
    }
    m_stopWake.notify_all();
    if (m_poller.joinable()) m_poller.join();
}

void ModelManager::pollLoop() {
    std::unique_lock lock(m_stopMutex);
    while (!m_stop) {
        if (m_stopWake.wait_for(lock, std::chrono::seconds(m_options.pollSeconds), [&] { return m_stop; })) break;
        lock.unlock();
        scanOnce();
        lock.lock();
    }
}

void ModelManager::scanOnce() {
    std::lock_guard scan(m_scanMutex);
    for (const auto& name : modelNames()) scanModel(name);
}

void ModelManager::scanModel(const std::string& name) {
    ModelConfig config;
    {
        std::lock_guard lock(m_mutex);
        config = m_models.at(name).config;
    }
    // 1. Which versions exist on disk?
    std::set<int64_t> onDisk;
    std::error_code ec;
    std::string scanError;
    if (!fs::is_directory(config.basePath, ec)) {
        scanError = "Could not find base path " + config.basePath + " for servable " + name;
    } else {
        for (fs::directory_iterator it(config.basePath, ec), end; !ec && it != end; it.increment(ec)) {
            std::error_code dirEc;
            if (!it->is_directory(dirEc)) continue;
            if (auto v = parseVersion(it->path().filename().string())) onDisk.insert(*v);
        }
        if (ec) scanError = "Could not list base path " + config.basePath + ": " + ec.message();
        else if (onDisk.empty())
            scanError = "No versions of servable " + name + " found under base path " + config.basePath +
                        ". Did you forget to name your leaf directory as a number (eg. '/1/')?";
    }
    {
        std::lock_guard lock(m_mutex);
        auto& entry = m_models.at(name);
        if (scanError != entry.lastScanError && !scanError.empty()) logLine(scanError);
        entry.lastScanError = scanError;
    }
    if (!scanError.empty() && onDisk.empty()) return;  // keep serving what is loaded

    // 2. Which versions does the policy want?
    std::set<int64_t> wanted;
    switch (config.policy.kind) {
    case VersionPolicy::Kind::Latest: {
        auto it = onDisk.rbegin();
        for (uint32_t i = 0; i < config.policy.numVersions && it != onDisk.rend(); ++i, ++it) wanted.insert(*it);
        break;
    }
    case VersionPolicy::Kind::All: wanted = onDisk; break;
    case VersionPolicy::Kind::Specific:
        for (int64_t v : config.policy.versions)
            if (onDisk.count(v)) wanted.insert(v);
        break;
    }

    // 3. Load what is wanted and not loaded (newest first), outside the lock.
    for (auto it = wanted.rbegin(); it != wanted.rend(); ++it) {
        const int64_t v = *it;
        {
            std::lock_guard lock(m_mutex);
            auto& ve = m_models.at(name).versions[v];
            if (ve.state == VersionState::Available) continue;
            if (ve.state == VersionState::End && ve.failures > m_options.maxLoadRetries) continue;
            if (ve.state == VersionState::End && ve.failures == 0) {
                // Unloaded earlier and wanted again (e.g. the policy changed back): load anew.
            }
            ve.state = VersionState::Loading;
        }
        const std::string dir = (fs::path(config.basePath) / std::to_string(v)).string();
        // The folder may be named "0007": find the real child name.
        std::string folder = dir;
        for (fs::directory_iterator di(config.basePath, ec), end; !ec && di != end; di.increment(ec))
            if (parseVersion(di->path().filename().string()) == v) folder = di->path().string();
        logLine("Loading servable " + name + " version " + std::to_string(v) + " from " + folder);
        auto servable = Servable::load(folder, name, v, *m_pool);
        Status warm = servable ? servable.value()->warmUp(m_options.batching ? m_options.batching->maxBatchSize : 1)
                               : Status(servable.error());
        std::lock_guard lock(m_mutex);
        auto& ve = m_models.at(name).versions[v];
        if (!warm.ok()) {
            ++ve.failures;
            ve.state = VersionState::End;
            ve.code = tfCodeOf(warm.error());
            if (ve.code == TfCode::Ok) ve.code = TfCode::Unknown;
            ve.message = warm.error().toString();
            logLine("Loading servable " + name + " version " + std::to_string(v) + " failed (attempt " +
                    std::to_string(ve.failures) + "): " + ve.message);
            continue;
        }
        std::unique_ptr<Batcher> batcher;
        if (m_options.batching) {
            auto onBatch = m_options.onBatch;
            batcher = std::make_unique<Batcher>(servable.value(), *m_options.batching, [onBatch, name](int64_t rows) {
                if (onBatch) onBatch(name, rows);
            });
        }
        // The swap: requests that look the version up from now on get the new one; requests in
        // flight keep their shared_ptr to whatever they found.
        ve.loaded = std::make_shared<LoadedVersion>(std::move(servable.value()), std::move(batcher));
        ve.state = VersionState::Available;
        ve.code = TfCode::Ok;
        ve.message.clear();
        ve.failures = 0;
        logLine("Successfully loaded servable version {name: " + name + " version: " + std::to_string(v) + "}");
    }

    // 4. Unload versions no longer wanted, but never the last available one while no wanted
    //    version is available (availability preserving). A version whose folder is gone goes.
    std::vector<std::shared_ptr<LoadedVersion>> released;
    {
        std::lock_guard lock(m_mutex);
        auto& entry = m_models.at(name);
        bool wantedAvailable = false;
        for (int64_t v : wanted) {
            auto it = entry.versions.find(v);
            if (it != entry.versions.end() && it->second.state == VersionState::Available) wantedAvailable = true;
        }
        for (auto& [v, ve] : entry.versions) {
            if (wanted.count(v)) continue;
            if (ve.state == VersionState::Available && (wantedAvailable || !onDisk.count(v))) {
                released.push_back(std::move(ve.loaded));
                ve.loaded.reset();
                ve.state = VersionState::End;
                ve.code = TfCode::Ok;
                ve.message.clear();
                logLine("Unloaded servable version {name: " + name + " version: " + std::to_string(v) + "}");
            } else if (ve.state == VersionState::End && ve.failures > 0 && !onDisk.count(v)) {
                ve.failures = 0;  // a failed version folder was removed: forget the failures
            }
        }
    }
    // `released` drops here, outside the lock: the last request using an old version frees it.
}

std::vector<std::string> ModelManager::modelNames() const {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> names;
    for (const auto& [n, e] : m_models) names.push_back(n);
    return names;
}

bool ModelManager::hasModel(const std::string& name) const {
    std::lock_guard lock(m_mutex);
    return m_models.count(name) > 0;
}

std::map<std::string, std::vector<int64_t>> ModelManager::availableVersions() const {
    std::lock_guard lock(m_mutex);
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& [n, e] : m_models) {
        auto& list = out[n];
        for (const auto& [v, ve] : e.versions)
            if (ve.state == VersionState::Available) list.push_back(v);
    }
    return out;
}

Status ModelManager::applyLabel(const ModelEntry& e, const std::optional<std::string>& label,
                                std::optional<int64_t>& version) {
    if (!label) return {};
    auto l = e.config.versionLabels.find(*label);
    if (l == e.config.versionLabels.end())
        return serveError(TfCode::InvalidArgument, "Unrecognized servable version label: " + *label);
    version = l->second;
    return {};
}

Result<std::shared_ptr<LoadedVersion>> ModelManager::find(const std::string& name, std::optional<int64_t> version,
                                                          const std::optional<std::string>& label) const {
    std::lock_guard lock(m_mutex);
    auto it = m_models.find(name);
    if (it == m_models.end())
        return serveError(TfCode::NotFound, "Servable not found for request: Latest(" + name + ")");
    const ModelEntry& e = it->second;
    KILN_TRY(applyLabel(e, label, version));
    if (version) {
        auto v = e.versions.find(*version);
        if (v == e.versions.end() || v->second.state != VersionState::Available)
            return serveError(TfCode::NotFound, "Servable not found for request: Specific(" + name + ", " +
                                                    std::to_string(*version) + ")");
        return v->second.loaded;
    }
    for (auto v = e.versions.rbegin(); v != e.versions.rend(); ++v)
        if (v->second.state == VersionState::Available) return v->second.loaded;
    return serveError(TfCode::NotFound, "Servable not found for request: Latest(" + name + ")");
}

Result<std::vector<VersionStatus>> ModelManager::status(const std::string& name, std::optional<int64_t> version,
                                                        const std::optional<std::string>& label) const {
    std::lock_guard lock(m_mutex);
    auto it = m_models.find(name);
    if (it == m_models.end() || (it->second.versions.empty() && !version && !label))
        return serveError(TfCode::NotFound, "Could not find any versions of model " + name);
    const ModelEntry& e = it->second;
    KILN_TRY(applyLabel(e, label, version));
    std::vector<VersionStatus> out;
    for (auto v = e.versions.rbegin(); v != e.versions.rend(); ++v) {
        if (version && v->first != *version) continue;
        out.push_back({v->first, v->second.state, v->second.code, v->second.message});
    }
    if (out.empty())
        return serveError(TfCode::NotFound, "Could not find version " + std::to_string(version.value_or(0)) +
                                                " of model " + name);
    return out;
}

}  // namespace kiln::engine::serve
