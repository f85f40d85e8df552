// SPDX-License-Identifier: Apache-2.0
// The dataset index: folder listing, cheap image header checks, a content hash, and the SQLite
// tables (schema_version, meta, classes, samples) with incremental rescans and split assignment.
#include "engine/data/dataset_index.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/data/split.h"

namespace fs = std::filesystem;

namespace kiln::engine::data {

namespace {

uint64_t rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

uint64_t load64(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// Odd 64-bit constants with well-spread bits (from the golden ratio and sqrt(3)).
constexpr uint64_t kMulA = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMulB = 0xBB67AE8584CAA73Bull;

uint64_t mixWord(uint64_t lane, uint64_t word) {
    return rotl(lane ^ (word * kMulB), 29) * kMulA;
}

uint64_t avalanche(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

uint32_t be32(const unsigned char* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
uint16_t be16(const unsigned char* p) {
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
uint32_t le32(const unsigned char* p) {
    return (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | uint32_t{p[0]};
}
uint16_t le16(const unsigned char* p) {
    return static_cast<uint16_t>((p[1] << 8) | p[0]);
}

ImageHeaderInfo bad(std::string format, std::string reason) {
    ImageHeaderInfo info;
    info.format = std::move(format);
    info.reason = std::move(reason);
    return info;
}

ImageHeaderInfo inspectPng(const unsigned char* d, size_t n) {
    if (n < 33 || std::memcmp(d + 12, "IHDR", 4) != 0)
        return bad("png", "truncated PNG: the header chunk is missing");
    ImageHeaderInfo info;
    info.format = "png";
    info.width = static_cast<int>(be32(d + 16));
    info.height = static_cast<int>(be32(d + 20));
    if (info.width <= 0 || info.height <= 0) return bad("png", "PNG header gives a zero or negative size");
    if (n < 45 || std::memcmp(d + n - 8, "IEND", 4) != 0)
        return bad("png", "truncated PNG: the file does not end with the IEND chunk");
    info.ok = true;
    return info;
}

ImageHeaderInfo inspectJpeg(const unsigned char* d, size_t n) {
    ImageHeaderInfo info;
    info.format = "jpeg";
    size_t pos = 2;
    size_t scanStart = 0;
    while (pos + 4 <= n) {
        if (d[pos] != 0xFF)
            return bad("jpeg", "corrupt JPEG: segment marker expected at byte " + std::to_string(pos));
        while (pos < n && d[pos] == 0xFF) ++pos;  // fill bytes
        if (pos >= n) break;
        const unsigned char marker = d[pos++];
        if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
        if (marker == 0xD9) break;
        if (pos + 2 > n) break;
        const size_t len = be16(d + pos);
        if (len < 2) return bad("jpeg", "corrupt JPEG: bad segment length at byte " + std::to_string(pos));
        const bool sof =
            marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (sof && pos + 7 <= n) {
            info.height = be16(d + pos + 3);
            info.width = be16(d + pos + 5);
        }
        if (marker == 0xDA) {
            scanStart = pos + len;
            break;
        }
        pos += len;
    }
    if (scanStart == 0 || scanStart > n) return bad("jpeg", "truncated JPEG: no image data");
    // Entropy-coded data never holds FF D9 (FF is stuffed with 00), so the marker past the scan
    // start is the real end of image. Some writers pad after it; look at the last kilobyte.
    const size_t from = std::max(scanStart, n > 1024 ? n - 1024 : size_t{0});
    bool end = false;
    for (size_t i = from; i + 1 < n; ++i)
        if (d[i] == 0xFF && d[i + 1] == 0xD9) {
            end = true;
            break;
        }
    if (!end) return bad("jpeg", "truncated JPEG: no end-of-image marker");
    info.ok = true;
    return info;
}

ImageHeaderInfo inspectBmp(const unsigned char* d, size_t n) {
    if (n < 26) return bad("bmp", "truncated BMP: the header is incomplete");
    const uint32_t declared = le32(d + 2);
    const uint32_t dib = le32(d + 14);
    ImageHeaderInfo info;
    info.format = "bmp";
    if (dib == 12) {
        info.width = le16(d + 18);
        info.height = le16(d + 20);
    } else {
        info.width = static_cast<int32_t>(le32(d + 18));
        info.height = std::abs(static_cast<int32_t>(le32(d + 22)));
    }
    if (declared > n)
        return bad("bmp",
                   "truncated BMP: " + std::to_string(n) + " of " + std::to_string(declared) + " bytes");
    info.ok = true;
    return info;
}

ImageHeaderInfo inspectTiff(const unsigned char* d, size_t n) {
    const bool little = d[0] == 'I';
    auto u16 = [&](size_t at) { return little ? le16(d + at) : be16(d + at); };
    auto u32 = [&](size_t at) { return little ? le32(d + at) : be32(d + at); };
    if (n < 8) return bad("tiff", "truncated TIFF: the header is incomplete");
    const size_t ifd = u32(4);
    if (ifd + 2 > n) return bad("tiff", "truncated TIFF: the first directory lies past the end");
    const size_t entries = u16(ifd);
    if (ifd + 2 + entries * 12 > n) return bad("tiff", "truncated TIFF: the first directory is cut off");
    ImageHeaderInfo info;
    info.format = "tiff";
    for (size_t e = 0; e < entries; ++e) {
        const size_t at = ifd + 2 + e * 12;
        const uint16_t tag = u16(at);
        const uint16_t type = u16(at + 2);
        const uint32_t value = type == 3 ? u16(at + 8) : u32(at + 8);
        if (tag == 256) info.width = static_cast<int>(value);
        if (tag == 257) info.height = static_cast<int>(value);
    }
    info.ok = true;
    return info;
}

struct FileEntry {
    std::string rel;
    std::string className;
    SampleSplit folderSplit = SampleSplit::Unassigned;
};

std::optional<SampleSplit> splitFolder(const std::string& name) {
    const std::string n = lower(name);
    if (n == "train") return SampleSplit::Train;
    if (n == "val" || n == "validation") return SampleSplit::Validation;
    if (n == "test") return SampleSplit::Test;
    return std::nullopt;
}

std::vector<fs::path> sortedSubdirs(const fs::path& dir, std::error_code& ec) {
    std::vector<fs::path> out;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_directory(e2) && it->path().filename().string().front() != '.') out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

FolderLayout detectLayout(const fs::path& root) {
    std::error_code ec;
    bool train = false, other = false;
    for (const auto& d : sortedSubdirs(root, ec)) {
        const auto s = splitFolder(d.filename().string());
        if (s == SampleSplit::Train)
            train = true;
        else if (s)
            other = true;
    }
    return train && other ? FolderLayout::SplitFolders : FolderLayout::ClassFolders;
}

// Image files under one class folder (recursively, as Keras), appended as relative paths.
void listClassFolder(const fs::path& root, const fs::path& classDir, const std::string& className,
                     SampleSplit folderSplit, std::vector<FileEntry>& out) {
    std::error_code ec;
    std::string rootPrefix = root.generic_string();
    if (rootPrefix.empty() || rootPrefix.back() != '/') rootPrefix += '/';
    for (fs::recursive_directory_iterator it(classDir, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        const std::string name = it->path().filename().string();
        if (!name.empty() && name.front() == '.') {  // hidden files and folders are not samples
            if (it->is_directory(e2)) it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file(e2)) continue;
        if (!isImageFileName(name)) continue;
        // The iterator yields root/..., so the relative path is a suffix (fs::relative would
        // resolve every component on disk, which costs more than the whole listing).
        const std::string full = it->path().generic_string();
        out.push_back({full.substr(std::min(full.size(), rootPrefix.size())), className, folderSplit});
    }
}

Result<std::vector<FileEntry>> listFolder(const fs::path& root, FolderLayout layout) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        return Error(ErrorCode::FileNotFound, "The folder " + root.string() + " does not exist.")
            .withFile(root.string())
            .with("path", root.string());
    std::vector<FileEntry> files;
    if (layout == FolderLayout::SplitFolders) {
        for (const auto& s : sortedSubdirs(root, ec)) {
            const auto split = splitFolder(s.filename().string());
            if (!split) continue;
            for (const auto& c : sortedSubdirs(s, ec))
                listClassFolder(root, c, c.filename().string(), *split, files);
        }
    } else {
        for (const auto& c : sortedSubdirs(root, ec))
            listClassFolder(root, c, c.filename().string(), SampleSplit::Unassigned, files);
    }
    if (ec)
        return Error(ErrorCode::FileRead, "Cannot list " + root.string() + ": " + ec.message())
            .withFile(root.string())
            .with("path", root.string())
            .with("reason", ec.message());
    std::sort(files.begin(), files.end(),
              [](const FileEntry& a, const FileEntry& b) { return a.rel < b.rel; });
    return files;
}

const char* layoutName(FolderLayout l) {
    return l == FolderLayout::SplitFolders ? "split_folders" : "class_folders";
}

// A prepared statement, finalized on scope exit.
class Stmt {
public:
    Stmt(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_s, nullptr); }
    ~Stmt() { sqlite3_finalize(m_s); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    bool ok() const { return m_rc == SQLITE_OK && m_s != nullptr; }
    sqlite3_stmt* get() const { return m_s; }
    void bind(int i, int64_t v) { sqlite3_bind_int64(m_s, i, v); }
    void bind(int i, const std::string& v) {
        sqlite3_bind_text(m_s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    }
    int step() { return sqlite3_step(m_s); }
    void reset() {
        sqlite3_reset(m_s);
        sqlite3_clear_bindings(m_s);
    }
    int64_t i64(int c) const { return sqlite3_column_int64(m_s, c); }
    std::string text(int c) const {
        const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(m_s, c));
        return t != nullptr ? std::string(t, static_cast<size_t>(sqlite3_column_bytes(m_s, c)))
                            : std::string();
    }

private:
    sqlite3_stmt* m_s = nullptr;
    int m_rc = SQLITE_ERROR;
};

// A read transaction for the life of the object, unless the connection is in one already: the
// data version check and the reads after it then see one snapshot.
class ReadTransaction {
public:
    explicit ReadTransaction(sqlite3* db) : m_db(db) {
        if (sqlite3_get_autocommit(m_db) != 0)
            m_mine = sqlite3_exec(m_db, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
    }
    ~ReadTransaction() {
        if (m_mine) sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr);
    }
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;

private:
    sqlite3* m_db;
    bool m_mine = false;
};

// Filters whose anchors one connection keeps (class, split and status choices a user flips
// between); the least recently used beyond that are dropped.
constexpr size_t kMaxAnchorSets = 8;

constexpr const char* kSampleColumns =
    "id, path, label, class, size, mtime, hash, width, height, split, status, reason";

SampleRecord readRecord(const Stmt& s) {
    SampleRecord r;
    r.id = s.i64(0);
    r.path = s.text(1);
    r.label = static_cast<int>(s.i64(2));
    r.className = s.text(3);
    r.byteSize = s.i64(4);
    r.mtimeNs = s.i64(5);
    r.hash = static_cast<uint64_t>(s.i64(6));
    r.width = static_cast<int>(s.i64(7));
    r.height = static_cast<int>(s.i64(8));
    r.split = static_cast<SampleSplit>(s.i64(9));
    r.status = static_cast<SampleStatus>(s.i64(10));
    r.reason = s.text(11);
    return r;
}

// "WHERE ..." for a filter; parameters bound from index 1 in the order label, split, status.
// `extra`, when given, is one more condition after them (its parameters bound after the filter's).
std::string whereClause(const SampleFilter& f, const char* extra = nullptr) {
    std::string w;
    auto add = [&](const char* cond) {
        w += w.empty() ? " WHERE " : " AND ";
        w += cond;
    };
    if (f.label) add("label = ?");
    if (f.split) add("split = ?");
    if (f.status) add("status = ?");
    if (extra != nullptr) add(extra);
    return w;
}

int bindFilter(Stmt& s, const SampleFilter& f) {
    int i = 1;
    if (f.label) s.bind(i++, *f.label);
    if (f.split) s.bind(i++, static_cast<int64_t>(*f.split));
    if (f.status) s.bind(i++, static_cast<int64_t>(*f.status));
    return i;
}

// The condition "key at or past an anchor" for a filter. With a label in the filter every key
// has that label and the condition is on the path alone: SQLite then seeks in the index by
// (label, path); with the row value (label, path) >= (?, ?) beside "label = ?" it would walk the
// whole label. Returns the SQL; bindKey() binds the key after the filter's parameters.
const char* keyCondition(const SampleFilter& f, bool strict) {
    if (f.label) return strict ? "path > ?" : "path >= ?";
    return strict ? "(label, path) > (?, ?)" : "(label, path) >= (?, ?)";
}

int bindKey(Stmt& s, int at, const SampleFilter& f, const std::pair<int64_t, std::string>& key) {
    if (!f.label) s.bind(at++, key.first);
    s.bind(at++, key.second);
    return at;
}

bool readWholeFile(const std::string& path, std::vector<unsigned char>& out, std::string& reason) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        reason = std::strerror(errno);
        return false;
    }
    out.clear();
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + got);
    const bool err = std::ferror(f) != 0;
    std::fclose(f);
    if (err) reason = "read error";
    return !err;
}

}  // namespace

const char* sampleSplitName(SampleSplit split) {
    switch (split) {
    case SampleSplit::Train:
        return "train";
    case SampleSplit::Validation:
        return "validation";
    case SampleSplit::Test:
        return "test";
    case SampleSplit::Unassigned:
        break;
    }
    return "unassigned";
}

uint64_t contentHash(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t lanes[4] = {kMulA, kMulB, ~kMulA, ~kMulB};
    size_t i = 0;
    for (; i + 32 <= size; i += 32)
        for (int l = 0; l < 4; ++l) lanes[l] = mixWord(lanes[l], load64(p + i + 8 * l));
    uint64_t h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18);
    for (; i + 8 <= size; i += 8) h = mixWord(h, load64(p + i));
    uint64_t tail = 0;
    for (size_t k = 0; i < size; ++i, ++k) tail |= uint64_t{p[i]} << (8 * k);
    h = mixWord(h, tail);
    return avalanche(h ^ (static_cast<uint64_t>(size) * kMulB));
}

std::string hashHex(uint64_t hash) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
    return buf;
}

bool isImageFileName(const std::string& name) {
    const auto dot = name.rfind('.');
    if (dot == std::string::npos) return false;
    const std::string ext = lower(name.substr(dot + 1));
    return ext == "jpg" || ext == "jpeg" || ext == "png" || ext == "bmp" || ext == "tif" || ext == "tiff";
}

ImageHeaderInfo inspectImageBytes(const unsigned char* d, size_t n) {
    if (n == 0) return bad("", "empty file");
    static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (n >= 8 && std::memcmp(d, kPng, 8) == 0) return inspectPng(d, n);
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return inspectJpeg(d, n);
    if (n >= 2 && d[0] == 'B' && d[1] == 'M') return inspectBmp(d, n);
    if (n >= 4 && ((d[0] == 'I' && d[1] == 'I' && d[2] == 42 && d[3] == 0) ||
                   (d[0] == 'M' && d[1] == 'M' && d[2] == 0 && d[3] == 42)))
        return inspectTiff(d, n);
    return bad("", "not an image: the content is not PNG, JPEG, BMP or TIFF");
}

ImageHeaderInfo inspectImageHeader(const std::string& path) {
    std::vector<unsigned char> bytes;
    std::string reason;
    if (!readWholeFile(path, bytes, reason)) return bad("", "cannot read the file: " + reason);
    return inspectImageBytes(bytes.data(), bytes.size());
}

Result<FolderSummary> summarizeImageFolder(const std::string& rootPath, FolderLayout layout,
                                           int sampleFiles) {
    const fs::path root(rootPath);
    FolderSummary summary;
    summary.layout = layout == FolderLayout::Auto ? detectLayout(root) : layout;
    KILN_ASSIGN(auto files, listFolder(root, summary.layout));
    std::map<std::string, int64_t> perClass;
    for (const auto& f : files) ++perClass[f.className];
    for (const auto& [name, n] : perClass) {
        summary.classNames.push_back(name);
        summary.fileCounts.push_back(n);
    }
    summary.totalFiles = static_cast<int64_t>(files.size());
    // Spread the preview over the classes: round-robin over their first files.
    std::map<std::string, std::vector<const FileEntry*>> byClass;
    for (const auto& f : files) byClass[f.className].push_back(&f);
    for (size_t k = 0; static_cast<int>(summary.firstFiles.size()) < sampleFiles; ++k) {
        bool any = false;
        for (const auto& [name, list] : byClass)
            if (k < list.size() && static_cast<int>(summary.firstFiles.size()) < sampleFiles) {
                summary.firstFiles.push_back(list[k]->rel);
                any = true;
            }
        if (!any) break;
    }
    return summary;
}

int64_t ClassSplitCounts::total(SampleSplit split) const {
    int64_t n = 0;
    for (const auto& c : counts) n += c[static_cast<size_t>(splitColumn(split))];
    return n;
}

int64_t ClassSplitCounts::classTotal(int label) const {
    if (label < 0 || label >= static_cast<int>(counts.size())) return 0;
    const auto& c = counts[static_cast<size_t>(label)];
    return c[0] + c[1] + c[2] + c[3];
}

int64_t ClassSplitCounts::total() const {
    int64_t n = 0;
    for (size_t k = 0; k < counts.size(); ++k) n += classTotal(static_cast<int>(k));
    return n;
}

// ---------------------------------------------------------------------------------------------

Result<DatasetIndex> DatasetIndex::open(const std::string& indexPath) {
    DatasetIndex index;
    index.m_path = indexPath;
    const int rc = sqlite3_open_v2(indexPath.c_str(), &index.m_db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        const std::string why = index.m_db != nullptr ? sqlite3_errmsg(index.m_db) : sqlite3_errstr(rc);
        return Error(ErrorCode::FileWrite, "Cannot open the dataset index " + indexPath + ": " + why)
            .withFile(indexPath)
            .with("path", indexPath)
            .with("reason", why);
    }
    sqlite3_busy_timeout(index.m_db, 5000);
    KILN_TRY(index.exec("PRAGMA journal_mode=WAL"));
    KILN_TRY(index.exec("PRAGMA synchronous=NORMAL"));
    KILN_TRY(index.exec("CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)"));
    int version = 0;
    {
        Stmt s(index.m_db, "SELECT version FROM schema_version LIMIT 1");
        if (!s.ok()) return index.sqlError("read the schema version");
        if (s.step() == SQLITE_ROW) version = static_cast<int>(s.i64(0));
    }
    if (version > kSchemaVersion)
        return Error(ErrorCode::UnsupportedFormat, "The dataset index " + indexPath +
                                                       " was written by a newer Kiln (schema " +
                                                       std::to_string(version) + ").")
            .withFile(indexPath)
            .with("file", indexPath)
            .with("format", "dataset index")
            .with("version", std::to_string(version));
    if (version == 0) {
        KILN_TRY(index.exec(
            "BEGIN;"
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS classes(label INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
            "CREATE TABLE IF NOT EXISTS samples("
            " id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, class TEXT NOT NULL, label INTEGER NOT NULL,"
            " size INTEGER NOT NULL, mtime INTEGER NOT NULL, hash INTEGER NOT NULL,"
            " width INTEGER NOT NULL DEFAULT 0, height INTEGER NOT NULL DEFAULT 0,"
            " folder_split INTEGER NOT NULL DEFAULT -1, split INTEGER NOT NULL DEFAULT -1,"
            " status INTEGER NOT NULL DEFAULT 0, reason TEXT NOT NULL DEFAULT '');"
            "CREATE INDEX IF NOT EXISTS samples_by_label ON samples(label, path);"
            "CREATE INDEX IF NOT EXISTS samples_by_split ON samples(split, label, path);"
            "CREATE INDEX IF NOT EXISTS samples_by_status ON samples(status, label, path);"
            "CREATE INDEX IF NOT EXISTS samples_by_split_status ON samples(split, status, label, path);"
            "DELETE FROM schema_version;"
            "INSERT INTO schema_version(version) VALUES (1);"
            "COMMIT;"));
        KILN_TRY(index.ensureTally());
    }
    return index;
}

DatasetIndex::DatasetIndex(DatasetIndex&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)),
      m_path(std::move(other.m_path)),
      m_rootCache(std::move(other.m_rootCache)),
      m_anchors(std::move(other.m_anchors)),
      m_anchorClock(other.m_anchorClock),
      m_dataVersion(other.m_dataVersion),
      m_ownChanges(other.m_ownChanges),
      m_pagingStats(other.m_pagingStats) {}

DatasetIndex& DatasetIndex::operator=(DatasetIndex&& other) noexcept {
    if (this != &other) {
        if (m_db != nullptr) sqlite3_close_v2(m_db);
        m_db = std::exchange(other.m_db, nullptr);
        m_path = std::move(other.m_path);
        m_rootCache = std::move(other.m_rootCache);
        m_anchors = std::move(other.m_anchors);
        m_anchorClock = other.m_anchorClock;
        m_dataVersion = other.m_dataVersion;
        m_ownChanges = other.m_ownChanges;
        m_pagingStats = other.m_pagingStats;
    }
    return *this;
}

DatasetIndex::~DatasetIndex() {
    if (m_db != nullptr) sqlite3_close_v2(m_db);
}

Error DatasetIndex::sqlError(const std::string& what) const {
    const std::string why = m_db != nullptr ? sqlite3_errmsg(m_db) : "no database";
    return Error(ErrorCode::FileWrite, "Dataset index " + m_path + ": cannot " + what + ": " + why)
        .withFile(m_path)
        .with("path", m_path)
        .with("reason", why);
}

Status DatasetIndex::exec(const char* sql) const {
    char* msg = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
        const std::string why = msg != nullptr ? msg : "unknown";
        sqlite3_free(msg);
        sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
        return Error(ErrorCode::FileWrite, "Dataset index " + m_path + ": " + why)
            .withFile(m_path)
            .with("path", m_path)
            .with("reason", why);
    }
    return okStatus();
}

Result<std::string> DatasetIndex::meta(const std::string& key) const {
    Stmt s(m_db, "SELECT value FROM meta WHERE key = ?");
    if (!s.ok()) return sqlError("read settings");
    s.bind(1, key);
    return s.step() == SQLITE_ROW ? s.text(0) : std::string();
}

Status DatasetIndex::setMeta(const std::string& key, const std::string& value) {
    Stmt s(
        m_db,
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    if (!s.ok()) return sqlError("write settings");
    s.bind(1, key);
    s.bind(2, value);
    if (s.step() != SQLITE_DONE) return sqlError("write settings");
    return okStatus();
}

Result<std::string> DatasetIndex::root() const {
    return meta("root");
}

Result<FolderLayout> DatasetIndex::layout() const {
    KILN_ASSIGN(const std::string l, meta("layout"));
    return l == "split_folders" ? FolderLayout::SplitFolders : FolderLayout::ClassFolders;
}

std::string DatasetIndex::absolutePath(const SampleRecord& record) const {
    if (m_rootCache.empty()) {
        auto r = root();
        if (r.ok()) m_rootCache = *r;
    }
    return (fs::path(m_rootCache) / record.path).string();
}

Result<ScanStats> DatasetIndex::scanImageFolder(const std::string& rootPath, const ScanOptions& options) {
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(fs::absolute(rootPath, ec), ec);
    ScanStats stats;
    stats.layout = options.layout == FolderLayout::Auto ? detectLayout(root) : options.layout;
    KILN_ASSIGN(const auto files, listFolder(root, stats.layout));
    stats.files = static_cast<int64_t>(files.size());
    auto cancelled = [&] {
        return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
    };

    // Indexes made before the split-and-status filter had an index of its own get it here (open()
    // writes nothing to an existing file, so that the browser can show it at once). An extra
    // index changes nothing for a Kiln that does not know it, so the schema version stays.
    KILN_TRY(
        exec("CREATE INDEX IF NOT EXISTS samples_by_split_status ON samples(split, status, label, path)"));
    KILN_TRY(ensureTally());
    KILN_ASSIGN(const std::string oldRoot, meta("root"));
    KILN_ASSIGN(const std::string oldLayout, meta("layout"));
    if (oldRoot != root.string() || (!oldLayout.empty() && oldLayout != layoutName(stats.layout))) {
        KILN_TRY(exec("BEGIN; DELETE FROM samples; DELETE FROM classes; DELETE FROM meta; COMMIT;"));
    }
    KILN_TRY(setMeta("root", root.string()));
    KILN_TRY(setMeta("layout", layoutName(stats.layout)));
    m_rootCache = root.string();

    // Classes: the sorted distinct class folder names; labels are positions in that list.
    std::map<std::string, int> labelOf;
    for (const auto& f : files) labelOf.emplace(f.className, 0);
    {
        int k = 0;
        for (auto& [name, label] : labelOf) label = k++;
    }
    KILN_TRY(exec("BEGIN; DELETE FROM classes;"));
    {
        Stmt ins(m_db, "INSERT INTO classes(label, name) VALUES (?, ?)");
        if (!ins.ok()) return sqlError("write classes");
        for (const auto& [name, label] : labelOf) {
            ins.bind(1, label);
            ins.bind(2, name);
            if (ins.step() != SQLITE_DONE) return sqlError("write classes");
            ins.reset();
        }
    }
    KILN_TRY(exec("COMMIT"));

    struct Known {
        int64_t id;
        int64_t size;
        int64_t mtime;
        bool seen;
    };
    std::unordered_map<std::string, Known> known;
    {
        Stmt s(m_db, "SELECT id, path, size, mtime FROM samples");
        if (!s.ok()) return sqlError("read samples");
        while (s.step() == SQLITE_ROW) known.emplace(s.text(1), Known{s.i64(0), s.i64(2), s.i64(3), false});
    }

    Stmt upsert(
        m_db,
        "INSERT INTO samples(path, class, label, size, mtime, hash, width, height, folder_split, status, "
        "reason)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET class = excluded.class,"
        " label = excluded.label, size = excluded.size, mtime = excluded.mtime, hash = excluded.hash,"
        " width = excluded.width, height = excluded.height, folder_split = excluded.folder_split,"
        " status = excluded.status, reason = excluded.reason");
    if (!upsert.ok()) return sqlError("prepare the sample insert");

    ScanProgress progress;
    progress.total = stats.files;
    auto lastReport = std::chrono::steady_clock::now();
    auto report = [&](bool force) {
        if (!options.progress) return;
        const auto now = std::chrono::steady_clock::now();
        // At least every 256 files as well, so callers can act at a predictable point.
        if (!force && progress.processed % 256 != 0 && now - lastReport < std::chrono::milliseconds(50))
            return;
        lastReport = now;
        options.progress(progress);
    };

    std::vector<unsigned char> bytes;
    const int batch = std::max(1, options.batchSize);
    int inBatch = 0;
    bool open = false;
    for (const auto& f : files) {
        if (cancelled()) {
            if (open) KILN_TRY(exec("COMMIT"));
            report(true);
            return Error(ErrorCode::Cancelled, "The scan of " + root.string() + " was cancelled.");
        }
        const std::string abs = (root / f.rel).string();
        struct stat st {};
        ++progress.processed;
        if (::stat(abs.c_str(), &st) != 0) continue;  // vanished while scanning
        const int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
        const int64_t size = st.st_size;
        auto it = known.find(f.rel);
        if (it != known.end()) {
            it->second.seen = true;
            if (it->second.size == size && it->second.mtime == mtime) {
                ++stats.unchanged;
                report(false);
                continue;
            }
            ++stats.changed;
        } else {
            ++stats.added;
        }
        if (!open) {
            KILN_TRY(exec("BEGIN"));
            open = true;
        }
        std::string readReason;
        ImageHeaderInfo info;
        uint64_t hash = 0;
        if (readWholeFile(abs, bytes, readReason)) {
            hash = contentHash(bytes.data(), bytes.size());
            info = inspectImageBytes(bytes.data(), bytes.size());
        } else {
            info = bad("", "cannot read the file: " + readReason);
        }
        ++progress.rehashed;
        upsert.bind(1, f.rel);
        upsert.bind(2, f.className);
        upsert.bind(3, labelOf[f.className]);
        upsert.bind(4, size);
        upsert.bind(5, mtime);
        upsert.bind(6, static_cast<int64_t>(hash));
        upsert.bind(7, info.width);
        upsert.bind(8, info.height);
        upsert.bind(9, static_cast<int64_t>(f.folderSplit));
        upsert.bind(10, static_cast<int64_t>(info.ok ? SampleStatus::Ok : SampleStatus::Bad));
        upsert.bind(11, info.reason);
        if (upsert.step() != SQLITE_DONE) {
            Error e = sqlError("write a sample");
            (void)exec("ROLLBACK");
            return e;
        }
        upsert.reset();
        if (++inBatch >= batch) {
            KILN_TRY(exec("COMMIT"));
            open = false;
            inBatch = 0;
        }
        report(false);
    }
    if (open) KILN_TRY(exec("COMMIT"));

    // Rows of files that are gone; labels of kept rows follow the (possibly new) class list.
    KILN_TRY(exec("BEGIN"));
    {
        Stmt del(m_db, "DELETE FROM samples WHERE id = ?");
        if (!del.ok()) return sqlError("remove samples");
        for (const auto& [path, k] : known)
            if (!k.seen) {
                del.bind(1, k.id);
                if (del.step() != SQLITE_DONE) return sqlError("remove samples");
                del.reset();
                ++stats.removed;
            }
    }
    KILN_TRY(
        exec("UPDATE samples SET label = (SELECT label FROM classes WHERE classes.name = samples.class) "
             "WHERE label IS NOT (SELECT label FROM classes WHERE classes.name = samples.class)"));
    KILN_TRY(exec("COMMIT"));
    KILN_ASSIGN(stats.bad, count(SampleFilter{std::nullopt, std::nullopt, SampleStatus::Bad}));
    report(true);
    return stats;
}

Status DatasetIndex::writeSplits(const std::vector<std::pair<int64_t, SampleSplit>>& assignment) {
    // Every row changes: one count of all rows at the end costs less than the tally's trigger on
    // each of them (twice each here).
    KILN_TRY(exec("BEGIN"));
    KILN_ASSIGN(const bool tally, suspendTally());
    KILN_TRY(exec("UPDATE samples SET split = -1"));
    Stmt s(m_db, "UPDATE samples SET split = ? WHERE id = ?");
    if (!s.ok()) return sqlError("write splits");
    for (const auto& [id, split] : assignment) {
        s.bind(1, static_cast<int64_t>(split));
        s.bind(2, id);
        if (s.step() != SQLITE_DONE) {
            Error e = sqlError("write splits");
            (void)exec("ROLLBACK");
            return e;
        }
        s.reset();
    }
    if (tally) KILN_TRY(resumeTally());
    return exec("COMMIT");
}

Status DatasetIndex::setSplitSpec(const SplitSpec& spec) {
    const char* mode = spec.mode == SplitSpec::Mode::Ratio    ? "ratio"
                       : spec.mode == SplitSpec::Mode::Folder ? "folder"
                                                              : "none";
    KILN_TRY(setMeta("split_mode", mode));
    KILN_TRY(setMeta("split_train", std::to_string(spec.train)));
    KILN_TRY(setMeta("split_validation", std::to_string(spec.validation)));
    KILN_TRY(setMeta("split_test", std::to_string(spec.test)));
    KILN_TRY(setMeta("split_seed", std::to_string(spec.seed)));
    return setMeta("split_stratify", spec.stratify ? "1" : "0");
}

Status DatasetIndex::assignSplitsByRatio(double train, double validation, double test, uint64_t seed,
                                         bool stratify) {
    // In the order of the image folder source (class, then path), over every file, bad ones
    // included (training skips them when it reads them): the same files and seed give the same
    // split here and in training, whatever order the scan found them in.
    std::vector<int64_t> ids;
    std::vector<float> labels;
    {
        Stmt s(m_db, "SELECT id, label FROM samples ORDER BY label, path");
        if (!s.ok()) return sqlError("read samples");
        while (s.step() == SQLITE_ROW) {
            ids.push_back(s.i64(0));
            labels.push_back(static_cast<float>(s.i64(1)));
        }
    }
    const double fractions[3] = {train, validation, test};
    KILN_ASSIGN(const auto lists, splitIndices(static_cast<int64_t>(ids.size()), fractions, seed,
                                               stratify && !labels.empty() ? labels.data() : nullptr));
    std::vector<std::pair<int64_t, SampleSplit>> assignment;
    assignment.reserve(ids.size());
    for (size_t k = 0; k < 3 && k < lists.size(); ++k)
        for (int64_t i : lists[k])
            assignment.emplace_back(ids[static_cast<size_t>(i)], static_cast<SampleSplit>(k));
    KILN_TRY(writeSplits(assignment));
    SplitSpec spec;
    spec.mode = SplitSpec::Mode::Ratio;
    spec.train = train;
    spec.validation = validation;
    spec.test = test;
    spec.seed = seed;
    spec.stratify = stratify;
    return setSplitSpec(spec);
}

Status DatasetIndex::assignSplitsByFolder() {
    KILN_ASSIGN(const FolderLayout l, layout());
    if (l != FolderLayout::SplitFolders)
        return Error(ErrorCode::InvalidArgument,
                     "The folder has no train/ and val/ (or test/) subfolders, so it cannot be split by "
                     "folder.")
            .with("what", "split by folder");
    KILN_TRY(exec("BEGIN"));
    KILN_ASSIGN(const bool tally, suspendTally());
    KILN_TRY(exec("UPDATE samples SET split = folder_split"));
    if (tally) KILN_TRY(resumeTally());
    KILN_TRY(exec("COMMIT"));
    SplitSpec spec;
    spec.mode = SplitSpec::Mode::Folder;
    return setSplitSpec(spec);
}

Result<SplitSpec> DatasetIndex::splitSpec() const {
    SplitSpec spec;
    KILN_ASSIGN(const std::string mode, meta("split_mode"));
    spec.mode = mode == "ratio"    ? SplitSpec::Mode::Ratio
                : mode == "folder" ? SplitSpec::Mode::Folder
                                   : SplitSpec::Mode::None;
    if (spec.mode == SplitSpec::Mode::None) return spec;
    KILN_ASSIGN(const std::string t, meta("split_train"));
    KILN_ASSIGN(const std::string v, meta("split_validation"));
    KILN_ASSIGN(const std::string te, meta("split_test"));
    KILN_ASSIGN(const std::string seed, meta("split_seed"));
    KILN_ASSIGN(const std::string strat, meta("split_stratify"));
    spec.train = t.empty() ? 0.0 : std::stod(t);
    spec.validation = v.empty() ? 0.0 : std::stod(v);
    spec.test = te.empty() ? 0.0 : std::stod(te);
    spec.seed = seed.empty() ? 0 : std::stoull(seed);
    spec.stratify = strat == "1";
    return spec;
}

Status DatasetIndex::setStatus(int64_t id, SampleStatus status, const std::string& reason) {
    Stmt s(m_db, "UPDATE samples SET status = ?, reason = ? WHERE id = ?");
    if (!s.ok()) return sqlError("update a sample");
    s.bind(1, static_cast<int64_t>(status));
    s.bind(2, reason);
    s.bind(3, id);
    if (s.step() != SQLITE_DONE) return sqlError("update a sample");
    return okStatus();
}

Result<std::vector<std::string>> DatasetIndex::classNames() const {
    std::vector<std::string> names;
    Stmt s(m_db, "SELECT name FROM classes ORDER BY label");
    if (!s.ok()) return sqlError("read classes");
    while (s.step() == SQLITE_ROW) names.push_back(s.text(0));
    return names;
}

// The tally: rows per (label, split, status), kept exact by triggers on `samples`, so that the
// counts a browser shows cost a few rows of reading instead of a walk over all samples (a
// million rows took 67-140 ms per count). The triggers belong to the file: any writer keeps the
// tally right, also a Kiln that does not know it.
namespace {

constexpr const char* kTallyTable =
    "CREATE TABLE IF NOT EXISTS sample_tally("
    " label INTEGER NOT NULL, split INTEGER NOT NULL, status INTEGER NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY(label, split, status)) WITHOUT ROWID;";

// Counts every row again; with the triggers made after it, in the same transaction.
constexpr const char* kTallyRefill =
    "DELETE FROM sample_tally;"
    "INSERT INTO sample_tally(label, split, status, n)"
    " SELECT label, split, status, COUNT(*) FROM samples GROUP BY label, split, status;";

constexpr const char* kTallyTriggers =
    "CREATE TRIGGER IF NOT EXISTS sample_tally_insert AFTER INSERT ON samples BEGIN"
    " INSERT INTO sample_tally(label, split, status, n) VALUES (NEW.label, NEW.split, NEW.status, 1)"
    "  ON CONFLICT(label, split, status) DO UPDATE SET n = n + 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS sample_tally_delete AFTER DELETE ON samples BEGIN"
    " UPDATE sample_tally SET n = n - 1"
    "  WHERE label = OLD.label AND split = OLD.split AND status = OLD.status;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS sample_tally_update AFTER UPDATE OF label, split, status ON samples"
    " WHEN OLD.label IS NOT NEW.label OR OLD.split IS NOT NEW.split OR OLD.status IS NOT NEW.status"
    " BEGIN"
    " UPDATE sample_tally SET n = n - 1"
    "  WHERE label = OLD.label AND split = OLD.split AND status = OLD.status;"
    " INSERT INTO sample_tally(label, split, status, n) VALUES (NEW.label, NEW.split, NEW.status, 1)"
    "  ON CONFLICT(label, split, status) DO UPDATE SET n = n + 1;"
    " END;";

constexpr const char* kTallyDropTriggers =
    "DROP TRIGGER IF EXISTS sample_tally_insert;"
    "DROP TRIGGER IF EXISTS sample_tally_delete;"
    "DROP TRIGGER IF EXISTS sample_tally_update;";

}  // namespace

Status DatasetIndex::ensureTally() {
    KILN_ASSIGN(const bool present, hasTally());
    if (present) return okStatus();
    return exec((std::string("BEGIN IMMEDIATE;") + kTallyTable + kTallyRefill + kTallyTriggers + "COMMIT;")
                    .c_str());
}

Result<bool> DatasetIndex::suspendTally() {
    auto present = hasTally();
    if (!present.ok()) {
        (void)exec("ROLLBACK");
        return present.error();
    }
    if (*present) KILN_TRY(exec(kTallyDropTriggers));
    return *present;
}

Status DatasetIndex::resumeTally() {
    return exec((std::string(kTallyRefill) + kTallyTriggers).c_str());
}

Result<bool> DatasetIndex::hasTally() const {
    Stmt s(m_db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sample_tally'");
    if (!s.ok()) return sqlError("read the schema");
    const int rc = s.step();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sqlError("read the schema");
    return rc == SQLITE_ROW;
}

Result<ClassSplitCounts> DatasetIndex::counts() const {
    ClassSplitCounts out;
    KILN_ASSIGN(out.classNames, classNames());
    out.counts.assign(out.classNames.size(), {0, 0, 0, 0});
    KILN_ASSIGN(const bool tally, hasTally());
    Stmt s(m_db, tally ? "SELECT label, split, SUM(n) FROM sample_tally GROUP BY label, split"
                       : "SELECT label, split, COUNT(*) FROM samples GROUP BY label, split");
    if (!s.ok()) return sqlError("count samples");
    while (s.step() == SQLITE_ROW) {
        const int64_t label = s.i64(0);
        if (label < 0 || label >= static_cast<int64_t>(out.counts.size())) continue;
        const auto split = static_cast<SampleSplit>(s.i64(1));
        out.counts[static_cast<size_t>(label)][static_cast<size_t>(splitColumn(split))] += s.i64(2);
    }
    return out;
}

Result<int64_t> DatasetIndex::count(const SampleFilter& filter) const {
    KILN_ASSIGN(const bool tally, hasTally());
    const std::string sql = (tally ? "SELECT COALESCE(SUM(n), 0) FROM sample_tally"
                                   : "SELECT COUNT(*) FROM samples") +
                            whereClause(filter);
    Stmt s(m_db, sql.c_str());
    if (!s.ok()) return sqlError("count samples");
    bindFilter(s, filter);
    if (s.step() != SQLITE_ROW) return sqlError("count samples");
    return s.i64(0);
}

Result<std::vector<SampleRecord>> DatasetIndex::pageByOffset(const SampleFilter& filter, int64_t offset,
                                                             int64_t limit) const {
    const std::string sql = std::string("SELECT ") + kSampleColumns + " FROM samples" + whereClause(filter) +
                            " ORDER BY label, path LIMIT ? OFFSET ?";
    Stmt s(m_db, sql.c_str());
    if (!s.ok()) return sqlError("read samples");
    const int next = bindFilter(s, filter);
    s.bind(next, limit);
    s.bind(next + 1, offset);
    std::vector<SampleRecord> rows;
    rows.reserve(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(limit, 4096))));
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) rows.push_back(readRecord(s));
    if (rc != SQLITE_DONE) return sqlError("read samples");
    return rows;
}

Status DatasetIndex::checkDataVersion() const {
    // data_version changes when another connection commits; this connection's own writes show in
    // its change counter instead.
    Stmt s(m_db, "PRAGMA data_version");
    if (!s.ok() || s.step() != SQLITE_ROW) return sqlError("read the data version");
    const int64_t version = s.i64(0);
    const int64_t own = sqlite3_total_changes64(m_db);
    if (version != m_dataVersion || own != m_ownChanges) {
        if (!m_anchors.empty()) ++m_pagingStats.anchorResets;
        m_anchors.clear();
        m_dataVersion = version;
        m_ownChanges = own;
    }
    return okStatus();
}

DatasetIndex::PageAnchors& DatasetIndex::anchorsFor(const SampleFilter& filter) const {
    ++m_anchorClock;
    for (auto& a : m_anchors)
        if (a.filter == filter) {
            a.lastUse = m_anchorClock;
            return a;
        }
    if (m_anchors.size() >= kMaxAnchorSets)
        m_anchors.erase(std::min_element(
            m_anchors.begin(), m_anchors.end(),
            [](const PageAnchors& a, const PageAnchors& b) { return a.lastUse < b.lastUse; }));
    PageAnchors& a = m_anchors.emplace_back();
    a.filter = filter;
    a.lastUse = m_anchorClock;
    return a;
}

Status DatasetIndex::extendAnchors(PageAnchors& anchors, int64_t key, int64_t maxRows) const {
    if (anchors.complete || static_cast<int64_t>(anchors.keys.size()) > key) return okStatus();
    // The filter's index ((label, path), or (split|status, label, path)) holds both key columns,
    // so this walk never reads the table. It resumes at the last anchor: the rows walked after it
    // by a call that ran out of budget are walked again (fewer than kAnchorStride).
    const bool resume = !anchors.keys.empty();
    const std::string sql =
        "SELECT label, path FROM samples" +
        whereClause(anchors.filter, resume ? keyCondition(anchors.filter, true) : nullptr) +
        " ORDER BY label, path";
    Stmt s(m_db, sql.c_str());
    if (!s.ok()) return sqlError("read samples");
    const int next = bindFilter(s, anchors.filter);
    if (resume) bindKey(s, next, anchors.filter, anchors.keys.back());
    // Rows since the last anchor; the first row of all is anchor 0.
    int64_t since = resume ? 0 : kAnchorStride - 1;
    int64_t walked = 0;
    int rc = SQLITE_ROW;
    while (static_cast<int64_t>(anchors.keys.size()) <= key && walked < maxRows &&
           (rc = s.step()) == SQLITE_ROW) {
        ++walked;
        if (++since == kAnchorStride) {
            anchors.keys.emplace_back(s.i64(0), s.text(1));
            since = 0;
        }
    }
    m_pagingStats.anchorRowsWalked += walked;
    if (rc == SQLITE_DONE)
        anchors.complete = true;
    else if (rc != SQLITE_ROW)
        return sqlError("read samples");
    return okStatus();
}

Result<bool> DatasetIndex::prepareAnchors(const SampleFilter& filter, int64_t maxRows) const {
    ReadTransaction txn(m_db);
    KILN_TRY(checkDataVersion());
    PageAnchors& anchors = anchorsFor(filter);
    KILN_TRY(extendAnchors(anchors, std::numeric_limits<int64_t>::max(), std::max<int64_t>(1, maxRows)));
    return anchors.complete;
}

Result<std::vector<SampleRecord>> DatasetIndex::page(const SampleFilter& filter, int64_t offset,
                                                     int64_t limit) const {
    // SQLite's own meaning of a negative LIMIT (no limit) or OFFSET (none) is kept as it was.
    if (offset < 0 || limit < 0) return pageByOffset(filter, offset, limit);
    std::vector<SampleRecord> rows;
    if (limit == 0) return rows;
    ReadTransaction txn(m_db);
    KILN_TRY(checkDataVersion());
    PageAnchors& anchors = anchorsFor(filter);
    const int64_t key = offset / kAnchorStride;
    KILN_TRY(extendAnchors(anchors, key, std::numeric_limits<int64_t>::max()));
    if (key >= static_cast<int64_t>(anchors.keys.size())) return rows;  // past the last row
    // (label, path) is unique (path is), so ">= anchor" starts exactly at row key * kAnchorStride.
    const std::string sql = std::string("SELECT ") + kSampleColumns + " FROM samples" +
                            whereClause(filter, keyCondition(filter, false)) +
                            " ORDER BY label, path LIMIT ? OFFSET ?";
    Stmt s(m_db, sql.c_str());
    if (!s.ok()) return sqlError("read samples");
    const int next = bindKey(s, bindFilter(s, filter), filter, anchors.keys[static_cast<size_t>(key)]);
    s.bind(next, limit);
    s.bind(next + 1, offset - key * kAnchorStride);
    rows.reserve(static_cast<size_t>(std::min<int64_t>(limit, 4096)));
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) rows.push_back(readRecord(s));
    if (rc != SQLITE_DONE) return sqlError("read samples");
    return rows;
}

Status DatasetIndex::insertRecords(const std::vector<SampleRecord>& records) {
    KILN_TRY(exec("BEGIN"));
    Stmt cls(m_db, "INSERT OR IGNORE INTO classes(label, name) VALUES (?, ?)");
    Stmt ins(
        m_db,
        "INSERT INTO samples(path, class, label, size, mtime, hash, width, height, split, status, reason)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    auto fail = [&](Error e) {
        cls.reset();
        ins.reset();
        (void)exec("ROLLBACK");
        return e;
    };
    if (!cls.ok() || !ins.ok()) return fail(sqlError("prepare the sample insert"));
    int lastLabel = std::numeric_limits<int>::min();
    for (const SampleRecord& r : records) {
        if (r.label != lastLabel) {
            cls.bind(1, r.label);
            cls.bind(2, r.className);
            if (cls.step() != SQLITE_DONE) return fail(sqlError("write classes"));
            cls.reset();
            lastLabel = r.label;
        }
        ins.bind(1, r.path);
        ins.bind(2, r.className);
        ins.bind(3, r.label);
        ins.bind(4, r.byteSize);
        ins.bind(5, r.mtimeNs);
        ins.bind(6, static_cast<int64_t>(r.hash));
        ins.bind(7, r.width);
        ins.bind(8, r.height);
        ins.bind(9, static_cast<int64_t>(r.split));
        ins.bind(10, static_cast<int64_t>(r.status));
        ins.bind(11, r.reason);
        const int rc = ins.step();
        if (rc == SQLITE_CONSTRAINT)
            return fail(Error(ErrorCode::DataError,
                              "Dataset index " + m_path + ": the sample " + r.path + " is already in it.")
                            .withFile(m_path)
                            .with("file", m_path)
                            .with("reason", "duplicate sample path " + r.path));
        if (rc != SQLITE_DONE) return fail(sqlError("write a sample"));
        ins.reset();
    }
    return exec("COMMIT");
}

Result<SampleRecord> DatasetIndex::sample(int64_t id) const {
    const std::string sql = std::string("SELECT ") + kSampleColumns + " FROM samples WHERE id = ?";
    Stmt s(m_db, sql.c_str());
    if (!s.ok()) return sqlError("read a sample");
    s.bind(1, id);
    if (s.step() != SQLITE_ROW)
        return Error(ErrorCode::InvalidArgument,
                     "The dataset index has no sample " + std::to_string(id) + ".")
            .with("id", std::to_string(id));
    return readRecord(s);
}

}  // namespace kiln::engine::data
