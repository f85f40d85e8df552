// SPDX-License-Identifier: Apache-2.0
// RunStore on the SQLite C API: prepared statements, WAL journal, metrics as a WITHOUT ROWID
// table keyed by (run, scope, name, step) so a series is one index range scan.
#include "engine/store/run_store.h"

#include <sqlite3.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>

namespace kiln::engine::store {
namespace {

sqlite3* db(void* p) { return static_cast<sqlite3*>(p); }

// A prepared statement that finalizes itself.
class Stmt {
public:
    Stmt(sqlite3* d, const char* sql) { m_rc = sqlite3_prepare_v2(d, sql, -1, &m_s, nullptr); }
    ~Stmt() { sqlite3_finalize(m_s); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    bool ok() const { return m_rc == SQLITE_OK && m_s; }
    sqlite3_stmt* get() const { return m_s; }
    Stmt& bind(int i, int64_t v) {
        sqlite3_bind_int64(m_s, i, v);
        return *this;
    }
    Stmt& bind(int i, double v) {
        if (std::isnan(v)) sqlite3_bind_null(m_s, i);  // SQLite has no NaN; NULL reads back as NaN
        else sqlite3_bind_double(m_s, i, v);
        return *this;
    }
    Stmt& bind(int i, const std::string& v) {
        sqlite3_bind_text(m_s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    int step() { return sqlite3_step(m_s); }
    void reset() {
        sqlite3_reset(m_s);
        sqlite3_clear_bindings(m_s);
    }
    std::string text(int c) const {
        const auto* t = sqlite3_column_text(m_s, c);
        return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(m_s, c))) : std::string();
    }
    int64_t integer(int c) const { return sqlite3_column_int64(m_s, c); }
    double real(int c) const {
        if (sqlite3_column_type(m_s, c) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
        return sqlite3_column_double(m_s, c);
    }

private:
    sqlite3_stmt* m_s = nullptr;
    int m_rc = SQLITE_ERROR;
};

int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double nowSeconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string isoUtc(int64_t ms) {
    std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated TEXT NOT NULL,
  status TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  graph_hash TEXT NOT NULL DEFAULT '',
  dataset_fingerprint TEXT NOT NULL DEFAULT '',
  results TEXT NOT NULL DEFAULT '{}',
  run_dir TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS artifacts (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  path TEXT NOT NULL,
  created TEXT NOT NULL,
  PRIMARY KEY (run_id, kind, path)
);
CREATE TABLE IF NOT EXISTS metrics (
  run_id INTEGER NOT NULL,
  scope INTEGER NOT NULL,
  name TEXT NOT NULL,
  step INTEGER NOT NULL,
  value REAL,
  wall_time REAL NOT NULL,
  PRIMARY KEY (run_id, scope, name, step)
) WITHOUT ROWID;
)sql";

constexpr const char* kRunColumns =
    "id, name, created, created_ms, updated, status, config, graph_hash, dataset_fingerprint, results, run_dir";

RunInfo readRun(const Stmt& s) {
    RunInfo r;
    r.id = s.integer(0);
    r.name = s.text(1);
    r.created = s.text(2);
    r.createdMs = s.integer(3);
    r.updated = s.text(4);
    r.status = parseRunStatus(s.text(5)).value_or(RunStatus::Failed);
    r.configJson = s.text(6);
    r.graphHash = s.text(7);
    r.datasetFingerprint = s.text(8);
    r.resultsJson = s.text(9);
    r.runDir = s.text(10);
    return r;
}

}  // namespace

const char* runStatusName(RunStatus s) {
    switch (s) {
    case RunStatus::Running: return "running";
    case RunStatus::Completed: return "completed";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::Failed: return "failed";
    case RunStatus::Interrupted: return "interrupted";
    }
    return "failed";
}

std::optional<RunStatus> parseRunStatus(std::string_view s) {
    for (auto st : {RunStatus::Running, RunStatus::Completed, RunStatus::Stopped, RunStatus::Failed, RunStatus::Interrupted})
        if (s == runStatusName(st)) return st;
    return std::nullopt;
}

std::string contentHash(std::string_view bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

Error RunStore::sqlError(const std::string& what) const {
    std::string reason = m_db ? sqlite3_errmsg(db(m_db)) : "cannot open";
    return Error(ErrorCode::FileWrite, "run store " + m_path + ": " + what + ": " + reason)
        .withFile(m_path)
        .with("path", m_path)
        .with("reason", what + ": " + reason);
}

Status RunStore::exec(const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db(m_db), sql, nullptr, nullptr, &msg) != SQLITE_OK) {
        std::string m = msg ? msg : "error";
        sqlite3_free(msg);
        return Error(ErrorCode::FileWrite, "run store " + m_path + ": " + m).withFile(m_path).with("path", m_path).with("reason", m);
    }
    return {};
}

Result<std::unique_ptr<RunStore>> RunStore::open(const std::string& path) {
    std::unique_ptr<RunStore> s(new RunStore());
    s->m_path = path;
    std::error_code ec;
    auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    sqlite3* d = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
    s->m_db = d;
    if (rc != SQLITE_OK) {
        Error e = s->sqlError("cannot open");
        e.code = ErrorCode::FileRead;
        return e;
    }
    sqlite3_busy_timeout(d, 5000);
    if (Status st = s->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"); !st.ok()) {
        st.error().code = ErrorCode::FileRead;
        st.error().message += " (is it an SQLite database?)";
        return st.error();
    }
    KILN_TRY(s->exec("BEGIN IMMEDIATE"));
    Status schema = s->exec(kSchema);
    if (!schema.ok()) {
        (void)s->exec("ROLLBACK");
        return schema.error();
    }
    Stmt v(d, "SELECT MAX(version) FROM schema_version");
    int64_t version = 0;
    if (v.ok() && v.step() == SQLITE_ROW && sqlite3_column_type(v.get(), 0) != SQLITE_NULL) version = v.integer(0);
    if (version > kSchemaVersion) {
        (void)s->exec("ROLLBACK");
        return Error(ErrorCode::UnsupportedFormat, "run store " + path + " has schema version " + std::to_string(version) +
                                                       "; this Kiln knows up to " + std::to_string(kSchemaVersion))
            .withFile(path)
            .with("file", path)
            .with("format", "run store")
            .with("version", std::to_string(version));
    }
    if (version == 0) {
        Stmt ins(d, "INSERT INTO schema_version(version) VALUES (?)");
        ins.bind(1, static_cast<int64_t>(kSchemaVersion));
        if (ins.step() != SQLITE_DONE) {
            (void)s->exec("ROLLBACK");
            return s->sqlError("cannot write the schema version");
        }
    }
    KILN_TRY(s->exec("COMMIT"));
    return s;
}

RunStore::~RunStore() {
    (void)flush();
    if (m_db) sqlite3_close_v2(db(m_db));
}

Status RunStore::requireRun(int64_t id) {
    Stmt s(db(m_db), "SELECT 1 FROM runs WHERE id = ?");
    s.bind(1, id);
    if (s.step() != SQLITE_ROW)
        return Error(ErrorCode::InvalidArgument, "run " + std::to_string(id) + " does not exist in " + m_path)
            .with("run", std::to_string(id));
    return {};
}

Result<int64_t> RunStore::createRun(const NewRun& run) {
    const int64_t ms = nowMs();
    Stmt s(db(m_db),
           "INSERT INTO runs(name, created, created_ms, updated, status, config, graph_hash, dataset_fingerprint, run_dir) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!s.ok()) return sqlError("cannot prepare");
    s.bind(1, run.name).bind(2, isoUtc(ms)).bind(3, ms).bind(4, isoUtc(ms)).bind(5, std::string(runStatusName(RunStatus::Running)));
    s.bind(6, run.configJson.empty() ? std::string("{}") : run.configJson).bind(7, run.graphHash).bind(8, run.datasetFingerprint);
    s.bind(9, run.runDir);
    if (s.step() != SQLITE_DONE) return sqlError("cannot create a run");
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db(m_db)));
}

Result<RunInfo> RunStore::run(int64_t id) {
    KILN_TRY(flush());
    Stmt s(db(m_db), (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?").c_str());
    s.bind(1, id);
    if (s.step() != SQLITE_ROW)
        return Error(ErrorCode::InvalidArgument, "run " + std::to_string(id) + " does not exist in " + m_path)
            .with("run", std::to_string(id));
    RunInfo r = readRun(s);
    Stmt m(db(m_db), "SELECT scope, MAX(step) FROM metrics WHERE run_id = ? GROUP BY scope");
    m.bind(1, id);
    while (m.step() == SQLITE_ROW) {
        if (m.integer(0) == static_cast<int>(MetricScope::Step)) r.lastStep = m.integer(1);
        else r.lastEpoch = static_cast<int>(m.integer(1));
    }
    return r;
}

Result<std::vector<RunInfo>> RunStore::listRuns(const RunFilter& f) {
    std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs WHERE 1";
    if (!f.nameContains.empty()) sql += " AND instr(lower(name), lower(?1)) > 0";
    if (f.status) sql += " AND status = ?2";
    const char* order = "created_ms";
    switch (f.sortBy) {
    case RunFilter::SortBy::Created: order = "created_ms"; break;
    case RunFilter::SortBy::Name: order = "name COLLATE NOCASE"; break;
    case RunFilter::SortBy::Status: order = "status"; break;
    case RunFilter::SortBy::Updated: order = "updated"; break;
    }
    sql += std::string(" ORDER BY ") + order + (f.descending ? " DESC" : " ASC") + ", id" + (f.descending ? " DESC" : " ASC");
    if (f.limit >= 0) sql += " LIMIT " + std::to_string(f.limit);
    Stmt s(db(m_db), sql.c_str());
    if (!s.ok()) return sqlError("cannot list runs");
    if (!f.nameContains.empty()) s.bind(1, f.nameContains);
    if (f.status) s.bind(2, std::string(runStatusName(*f.status)));
    std::vector<RunInfo> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) out.push_back(readRun(s));
    if (rc != SQLITE_DONE) return sqlError("cannot list runs");
    return out;
}

Status RunStore::rename(int64_t id, const std::string& name) {
    KILN_TRY(requireRun(id));
    Stmt s(db(m_db), "UPDATE runs SET name = ? WHERE id = ?");
    s.bind(1, name).bind(2, id);
    if (s.step() != SQLITE_DONE) return sqlError("cannot rename run " + std::to_string(id));
    return {};
}

Status RunStore::setStatus(int64_t id, RunStatus status) {
    KILN_TRY(requireRun(id));
    Stmt s(db(m_db), "UPDATE runs SET status = ?, updated = ? WHERE id = ?");
    s.bind(1, std::string(runStatusName(status))).bind(2, isoUtc(nowMs())).bind(3, id);
    if (s.step() != SQLITE_DONE) return sqlError("cannot set the status of run " + std::to_string(id));
    return {};
}

Status RunStore::setResults(int64_t id, const std::string& resultsJson) {
    KILN_TRY(requireRun(id));
    Stmt s(db(m_db), "UPDATE runs SET results = ?, updated = ? WHERE id = ?");
    s.bind(1, resultsJson).bind(2, isoUtc(nowMs())).bind(3, id);
    if (s.step() != SQLITE_DONE) return sqlError("cannot store the results of run " + std::to_string(id));
    return {};
}

Status RunStore::deleteRun(int64_t id) {
    KILN_TRY(flush());
    KILN_TRY(requireRun(id));
    KILN_TRY(exec("BEGIN IMMEDIATE"));
    bool ok = true;
    for (const char* sql : {"DELETE FROM metrics WHERE run_id = ?", "DELETE FROM artifacts WHERE run_id = ?",
                            "DELETE FROM runs WHERE id = ?"}) {
        Stmt s(db(m_db), sql);
        s.bind(1, id);
        ok = ok && s.step() == SQLITE_DONE;
    }
    if (!ok) {
        Error e = sqlError("cannot delete run " + std::to_string(id));
        (void)exec("ROLLBACK");
        return e;
    }
    return exec("COMMIT");
}

Status RunStore::addArtifact(int64_t id, const std::string& kind, const std::string& path) {
    KILN_TRY(requireRun(id));
    Stmt s(db(m_db), "INSERT OR REPLACE INTO artifacts(run_id, kind, path, created) VALUES (?, ?, ?, ?)");
    s.bind(1, id).bind(2, kind).bind(3, path).bind(4, isoUtc(nowMs()));
    if (s.step() != SQLITE_DONE) return sqlError("cannot record an artifact");
    return {};
}

Result<std::vector<Artifact>> RunStore::artifacts(int64_t id) {
    Stmt s(db(m_db), "SELECT kind, path, created FROM artifacts WHERE run_id = ? ORDER BY created, kind, path");
    s.bind(1, id);
    std::vector<Artifact> out;
    while (s.step() == SQLITE_ROW) out.push_back({s.text(0), s.text(1), s.text(2)});
    return out;
}

Status RunStore::logMetrics(int64_t id, MetricScope scope, int64_t step,
                            const std::vector<std::pair<std::string, double>>& values, double wallTime) {
    if (wallTime < 0) wallTime = nowSeconds();
    for (const auto& [name, v] : values) m_pending.push_back({id, static_cast<int>(scope), name, step, v, wallTime});
    if (m_pending.size() >= kFlushRows || std::chrono::steady_clock::now() - m_lastFlush >= kFlushInterval) return flush();
    return {};
}

Status RunStore::flush() {
    m_lastFlush = std::chrono::steady_clock::now();
    if (m_pending.empty() || !m_db) return {};
    KILN_TRY(exec("BEGIN IMMEDIATE"));
    Stmt s(db(m_db), "INSERT OR REPLACE INTO metrics(run_id, scope, name, step, value, wall_time) VALUES (?, ?, ?, ?, ?, ?)");
    bool ok = s.ok();
    for (const auto& r : m_pending) {
        if (!ok) break;
        s.bind(1, r.run).bind(2, static_cast<int64_t>(r.scope)).bind(3, r.name).bind(4, r.step).bind(5, r.value).bind(6, r.wallTime);
        ok = s.step() == SQLITE_DONE;
        s.reset();
    }
    if (!ok) {
        Error e = sqlError("cannot write metrics");
        (void)exec("ROLLBACK");
        return e;
    }
    m_pending.clear();
    return exec("COMMIT");
}

Status RunStore::truncateMetrics(int64_t id, int64_t step, int epoch) {
    KILN_TRY(flush());
    Stmt a(db(m_db), "DELETE FROM metrics WHERE run_id = ? AND scope = ? AND step > ?");
    a.bind(1, id).bind(2, static_cast<int64_t>(MetricScope::Step)).bind(3, step);
    if (a.step() != SQLITE_DONE) return sqlError("cannot truncate metrics");
    Stmt b(db(m_db), "DELETE FROM metrics WHERE run_id = ? AND scope = ? AND step > ?");
    b.bind(1, id).bind(2, static_cast<int64_t>(MetricScope::Epoch)).bind(3, static_cast<int64_t>(epoch));
    if (b.step() != SQLITE_DONE) return sqlError("cannot truncate metrics");
    return {};
}

Result<std::vector<std::string>> RunStore::metricNames(int64_t id, MetricScope scope) {
    KILN_TRY(flush());
    Stmt s(db(m_db), "SELECT DISTINCT name FROM metrics WHERE run_id = ? AND scope = ? ORDER BY name");
    s.bind(1, id).bind(2, static_cast<int64_t>(scope));
    std::vector<std::string> out;
    while (s.step() == SQLITE_ROW) out.push_back(s.text(0));
    return out;
}

Result<std::vector<MetricPoint>> RunStore::series(int64_t id, MetricScope scope, const std::string& name, int64_t fromStep,
                                                  int stride) {
    KILN_TRY(flush());
    Stmt s(db(m_db),
           "SELECT step, value, wall_time FROM metrics WHERE run_id = ? AND scope = ? AND name = ? AND step >= ? ORDER BY step");
    s.bind(1, id).bind(2, static_cast<int64_t>(scope)).bind(3, name).bind(4, fromStep);
    std::vector<MetricPoint> out;
    int64_t k = 0;
    const int64_t every = std::max(1, stride);
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        if (k++ % every) continue;
        out.push_back({s.integer(0), s.real(1), s.real(2)});
    }
    if (rc != SQLITE_DONE) return sqlError("cannot read metrics");
    return out;
}

}  // namespace kiln::engine::store
