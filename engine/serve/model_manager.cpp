// SPDX-License-Identifier: Apache-2.0
// Version discovery, loading, warm-up, atomic swap and policy-driven unloading.
#include "engine/serve/model_manager.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <set>

#include "engine/core/json_checked.h"
#include "engine/core/sha256.h"

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

// What a scan sees of a version folder: every entry's relative path, type, size and modification
// time (symbolic links followed), sorted, as one string; and the age of the newest of them.
struct VersionFiles {
    std::string print;
    int64_t newestAgeMs = 0;  // negative when a time lies in the future
    std::string problem;      // a dangling link or an unreadable entry
};

constexpr size_t kMaxVersionEntries = 10000;

VersionFiles inspectVersion(const fs::path& folder) {
    VersionFiles out;
    std::vector<std::string> entries;
    auto newest = fs::file_time_type::min();
    auto add = [&](const fs::path& path, const std::string& rel) {
        std::error_code ec;
        const fs::file_status st = fs::status(path, ec);
        if (ec || !fs::exists(st)) {
            if (out.problem.empty()) out.problem = (rel.empty() ? folder.string() : rel) + " is a dangling link or cannot be read";
            entries.push_back(rel + "\t?");
            return;
        }
        const auto mtime = fs::last_write_time(path, ec);
        if (!ec) newest = std::max(newest, mtime);
        const uintmax_t size = fs::is_regular_file(st) ? fs::file_size(path, ec) : 0;
        entries.push_back(rel + "\t" + std::to_string(static_cast<int>(st.type())) + "\t" + std::to_string(size) + "\t" +
                          std::to_string(mtime.time_since_epoch().count()));
    };
    add(folder, "");
    std::error_code ec;
    for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end && entries.size() < kMaxVersionEntries; it.increment(ec))
        add(it->path(), fs::relative(it->path(), folder, ec).generic_string());
    if (ec && out.problem.empty()) out.problem = "cannot list " + folder.string() + ": " + ec.message();
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) out.print += e + "\n";
    out.newestAgeMs = std::chrono::duration_cast<std::chrono::milliseconds>(fs::file_time_type::clock::now() - newest).count();
    return out;
}

// Whether a version folder may be loaded now. Ready: kiln-model.json lists a manifest and every
// file in it has its size, or (without a manifest) the files have settled. Waiting: files are
// missing or still changing. Failed: they settled in a state that cannot load (a file missing or
// not matching the manifest, kiln-model.json unreadable); retried when the files change.
struct Readiness {
    enum class Kind { Ready, Waiting, Failed } kind = Kind::Ready;
    std::string reason;
    nlohmann::json manifest;  // the manifest, when there is one
};

Readiness readiness(const fs::path& folder, const VersionFiles& files, int64_t unchangedMs, int stableMs) {
    const bool settled = unchangedMs >= stableMs || files.newestAgeMs >= stableMs;
    auto notYet = [&](std::string reason) {
        return Readiness{settled ? Readiness::Kind::Failed : Readiness::Kind::Waiting, std::move(reason), nullptr};
    };
    if (!files.problem.empty()) return notYet(files.problem);
    std::error_code ec;
    for (const char* required : {kModelGraphFile, kModelWeightsFile})
        if (!fs::is_regular_file(folder / required, ec)) return notYet(std::string(required) + " is missing");
    const fs::path jsonPath = folder / kModelJsonFile;
    if (fs::exists(jsonPath, ec)) {
        auto j = readJsonFileChecked(jsonPath.string(), modelJsonLimits());
        if (!j) return notYet(j.error().toString());
        if (j->is_object() && j->contains("manifest")) {
            const nlohmann::json& manifest = (*j)["manifest"];
            if (!manifest.is_array())
                return {Readiness::Kind::Failed, jsonPath.string() + ": \"manifest\" must be a list of {path, size, sha256}", nullptr};
            for (const auto& f : manifest) {
                const bool wellFormed = f.is_object() && f.contains("path") && f["path"].is_string() && f.contains("size") &&
                                        f["size"].is_number_unsigned();
                const fs::path rel = wellFormed ? fs::path(f["path"].get<std::string>()) : fs::path();
                bool inside = wellFormed && !rel.empty() && rel.is_relative();
                for (const auto& part : rel) inside = inside && part != "..";
                if (!inside)
                    return {Readiness::Kind::Failed,
                            jsonPath.string() + ": every \"manifest\" entry needs a relative \"path\" inside the version and a \"size\"",
                            nullptr};
                const uintmax_t want = f["size"].get<uintmax_t>();
                const uintmax_t have = fs::is_regular_file(folder / rel, ec) ? fs::file_size(folder / rel, ec) : 0;
                if (!fs::is_regular_file(folder / rel, ec))
                    return notYet(rel.generic_string() + " (listed in " + kModelJsonFile + ") is missing");
                if (have != want)
                    return notYet(rel.generic_string() + " has " + std::to_string(have) + " bytes, " + kModelJsonFile + " lists " +
                                  std::to_string(want));
            }
            return {Readiness::Kind::Ready, {}, manifest};
        }
    }
    if (!settled)
        return {Readiness::Kind::Waiting, "the files changed less than " + std::to_string(stableMs) + " ms ago", nullptr};
    return {};
}

// Checks the files of a manifest that carry a "sha256".
Status verifyManifest(const fs::path& folder, const nlohmann::json& manifest) {
    if (!manifest.is_array()) return okStatus();
    for (const auto& f : manifest) {
        if (!f.contains("sha256") || !f["sha256"].is_string()) continue;
        const fs::path path = folder / f["path"].get<std::string>();
        KILN_ASSIGN(std::string digest, sha256File(path.string()));
        std::string want = f["sha256"].get<std::string>();
        std::transform(want.begin(), want.end(), want.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (digest != want)
            return Error(ErrorCode::DataError, path.string() + " does not match the sha256 listed in " + kModelJsonFile)
                .withFile(path.string())
                .with("reason", "sha256 mismatch");
    }
    return okStatus();
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

    // 3. Load what is wanted and not loaded (newest first), outside the lock. A version is loaded
    //    only once its files are complete and settled (see readiness()); an available version
    //    whose files changed is loaded anew the same way and swapped in.
    std::vector<std::shared_ptr<LoadedVersion>> released;
    for (auto it = wanted.rbegin(); it != wanted.rend(); ++it) {
        const int64_t v = *it;
        // The folder may be named "0007": find the real child name.
        fs::path folder = fs::path(config.basePath) / std::to_string(v);
        for (fs::directory_iterator di(config.basePath, ec), end; !ec && di != end; di.increment(ec))
            if (parseVersion(di->path().filename().string()) == v) folder = di->path();
        const VersionFiles files = inspectVersion(folder);
        const std::string vname = "servable " + name + " version " + std::to_string(v);
        bool reload = false;
        int64_t unchangedMs = 0;
        {
            std::lock_guard lock(m_mutex);
            auto& ve = m_models.at(name).versions[v];
            const auto now = std::chrono::steady_clock::now();
            if (files.print != ve.seenPrint) {
                ve.seenPrint = files.print;
                ve.seenSince = now;
            }
            unchangedMs = std::chrono::duration_cast<std::chrono::milliseconds>(now - ve.seenSince).count();
            if (files.print != ve.attemptPrint) ve.failures = 0;  // new files: a fresh set of retries
            if (ve.state == VersionState::Available) {
                if (files.print == ve.attemptPrint) continue;
                reload = true;
            } else if (ve.state == VersionState::End && ve.failures > m_options.maxLoadRetries) {
                continue;
            }
        }
        const Readiness ready = readiness(folder, files, unchangedMs, m_options.stableMs);
        if (ready.kind != Readiness::Kind::Ready) {
            std::lock_guard lock(m_mutex);
            auto& ve = m_models.at(name).versions[v];
            if (ready.kind == Readiness::Kind::Failed) {
                ve.attemptPrint = files.print;
                ++ve.failures;
                if (!reload) {
                    ve.state = VersionState::End;
                    ve.code = TfCode::FailedPrecondition;
                    ve.message = ready.reason;
                }
                logLine("Not loading " + vname + " (attempt " + std::to_string(ve.failures) + "): " + ready.reason);
            } else if (!reload) {
                const std::string message = "waiting for the version's files to be complete and unchanged: " + ready.reason;
                if (ve.message != message) logLine("Not loading " + vname + " yet: " + ready.reason);
                ve.state = VersionState::Start;
                ve.code = TfCode::Ok;
                ve.message = message;
            }
            continue;
        }
        if (!reload) {
            std::lock_guard lock(m_mutex);
            m_models.at(name).versions[v].state = VersionState::Loading;
        }
        logLine((reload ? "Reloading " : "Loading ") + vname + " from " + folder.string());
        Status verified = verifyManifest(folder, ready.manifest);
        auto servable = verified.ok() ? Servable::load(folder.string(), name, v, *m_pool)
                                      : Result<std::shared_ptr<Servable>>(verified.error());
        Status warm = servable ? servable.value()->warmUp(m_options.batching ? m_options.batching->maxBatchSize : 1)
                               : Status(servable.error());
        // Files that changed while they were read may have given half a model: drop it and wait.
        const VersionFiles after = inspectVersion(folder);
        std::lock_guard lock(m_mutex);
        auto& ve = m_models.at(name).versions[v];
        if (after.print != files.print) {
            ve.seenPrint = after.print;
            ve.seenSince = std::chrono::steady_clock::now();
            if (!reload) {
                ve.state = VersionState::Start;
                ve.code = TfCode::Ok;
                ve.message = "waiting for the version's files to be complete and unchanged: they changed while loading";
            }
            logLine("The files of " + vname + " changed while loading; waiting for them to settle");
            continue;
        }
        ve.attemptPrint = files.print;
        if (!warm.ok()) {
            ++ve.failures;
            const TfCode code = tfCodeOf(warm.error());
            const std::string message = warm.error().toString();
            if (reload) {
                logLine("Reloading " + vname + " failed (attempt " + std::to_string(ve.failures) +
                        "); the loaded files keep serving: " + message);
                continue;
            }
            ve.state = VersionState::End;
            ve.code = code == TfCode::Ok ? TfCode::Unknown : code;
            ve.message = message;
            logLine("Loading " + vname + " failed (attempt " + std::to_string(ve.failures) + "): " + message);
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
        if (ve.loaded) released.push_back(std::move(ve.loaded));
        ve.loaded = std::make_shared<LoadedVersion>(std::move(servable.value()), std::move(batcher));
        ve.state = VersionState::Available;
        ve.code = TfCode::Ok;
        ve.message.clear();
        ve.failures = 0;
        logLine("Successfully loaded servable version {name: " + name + " version: " + std::to_string(v) + "}");
    }

    // 4. Unload versions no longer wanted, but never the last available one while no wanted
    //    version is available (availability preserving). A version whose folder is gone goes.
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
            } else if (ve.state == VersionState::Start) {
                ve.state = VersionState::End;  // was waiting for its files, no longer wanted
                ve.message.clear();
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

bool ModelManager::hasWaitingVersions() const {
    std::lock_guard lock(m_mutex);
    for (const auto& [n, e] : m_models)
        for (const auto& [v, ve] : e.versions)
            if (ve.state == VersionState::Start) return true;
    return false;
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
