// SPDX-License-Identifier: Apache-2.0
// Stored predictions of a run. The file is binary, little-endian:
//   "KILNEVAL", u32 version, then the key (weights path, size, modification time, hash, split,
//   data and model fingerprints), the creation time, and the Predictions: counts, loss type,
//   metrics, class names, sources, then the raw float32 outputs and targets.
// Strings are u32 length + bytes (file names need not be UTF-8); every count is checked against
// the bytes left, so a damaged file reads as "no stored result".
#include "engine/api/evaluation_cache.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/data/sources.h"
#include "engine/store/run_store.h"

namespace kiln::engine::api {

namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little, "the evaluation cache is written little-endian");

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'E', 'V', 'A', 'L'};

int64_t modifiedNs(const fs::path& p) {
    std::error_code ec;
    const auto t = fs::last_write_time(p, ec);
    if (ec) return 0;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// What the data fingerprint is made of: one line per file (path, size, modification time), and
// the files themselves, hashed when the set is small enough to read quickly.
struct Stamps {
    std::vector<std::string> lines;
    std::vector<fs::path> files;
    uintmax_t bytes = 0;
};

void stampFile(const fs::path& p, Stamps& out) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(p, ec);
    if (ec) return;
    out.lines.push_back("f|" + p.string() + "|" + std::to_string(size) + "|" + std::to_string(modifiedNs(p)));
    out.files.push_back(p);
    out.bytes += size;
}

// A file, or every file below a folder (at any depth; files and folders whose names start with
// "." are left out, as the data sources leave them out): adding, removing, renaming or rewriting a
// picture changes the stamps. Folders alone carry no stamp of their own.
void stamp(const fs::path& p, Stamps& out) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
        stampFile(p, out);
        return;
    }
    if (!fs::is_directory(p, ec)) return;
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::error_code e2;
        if (!name.empty() && name[0] == '.') {
            if (it->is_directory(e2)) it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(e2)) stampFile(it->path(), out);
    }
}

// Every string of the data section that names an existing file or folder (paths of sources,
// class-name files, ...), stamped.
void stampPaths(const nlohmann::json& j, const std::string& projectPath, const fs::path& projectDir, Stamps& out) {
    if (j.is_object() || j.is_array()) {
        for (const auto& v : j) stampPaths(v, projectPath, projectDir, out);
        return;
    }
    if (!j.is_string()) return;
    const std::string raw = j.get<std::string>();
    if (raw.empty()) return;
    std::error_code ec;
    const fs::path p = fs::path(io::resolveDataPath(raw, projectPath)).lexically_normal();
    // The project's own folder changes whenever a file is saved beside the project.
    if (!projectDir.empty() && fs::equivalent(p, projectDir, ec)) return;
    if (fs::exists(p, ec)) stamp(p, out);
}

// The pictures and tensor files a CSV index names (they live outside the index file).
void stampCsvIndex(const std::string& path, const std::string& splitColumn, Stamps& out) {
    data::CsvIndexSource::Options o;
    o.splitColumn = splitColumn;
    auto src = data::CsvIndexSource::open(path, o);
    // Other data need not carry the project's split column (as evaluation reads it).
    if (!src.ok() && !splitColumn.empty()) src = data::CsvIndexSource::open(path);
    if (!src.ok()) return;  // evaluation reports the error, naming the file
    std::error_code ec;
    for (int64_t i = 0; i < (*src)->size(); ++i) {
        const fs::path f = (*src)->origin(i);
        if (fs::is_regular_file(f, ec)) stampFile(f, out);
    }
}

// The fingerprint text: the sorted stamps, then a hash of each file's bytes when the files are
// few and small enough (kHashedBytes, kHashedFiles): a picture rewritten within the file
// system's time resolution, or copied with its old time kept, is noticed too. Measured on the
// 2-core build machine under load: 20,000 pictures (11 MiB) take about 0.13 s to stamp and
// 0.25 s more to hash; 50 MiB in two files 0.22 s to hash.
std::string fingerprintText(Stamps& s) {
    std::sort(s.lines.begin(), s.lines.end());
    s.lines.erase(std::unique(s.lines.begin(), s.lines.end()), s.lines.end());
    std::string out;
    for (const auto& l : s.lines) out += l + "\n";
    std::sort(s.files.begin(), s.files.end());
    s.files.erase(std::unique(s.files.begin(), s.files.end()), s.files.end());
    if (s.bytes > kHashedBytes || s.files.size() > kHashedFiles) return out + "unhashed\n";
    std::string bytes;
    for (const auto& f : s.files) {
        std::error_code ec;
        std::ifstream in(f, std::ios::binary);
        bytes.resize(static_cast<size_t>(fs::file_size(f, ec)));
        in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        bytes.resize(static_cast<size_t>(in.gcount()));
        out += "h|" + f.string() + "|" + store::contentHash(bytes) + "\n";
    }
    return out;
}

std::string isoNow(int64_t* ms) {
    const auto now = std::chrono::system_clock::now();
    *ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

class Writer {
public:
    template <typename T>
    void put(T v) {
        const char* p = reinterpret_cast<const char*>(&v);
        bytes.append(p, sizeof v);
    }
    void str(const std::string& s) {
        put<uint32_t>(static_cast<uint32_t>(s.size()));
        bytes += s;
    }
    void floats(const std::vector<float>& v) {
        put<uint64_t>(v.size());
        bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    }
    std::string bytes;
};

class Reader {
public:
    explicit Reader(const std::string& b) : m_b(b) {}
    template <typename T>
    bool get(T& v) {
        if (m_b.size() - m_at < sizeof v) return false;
        std::memcpy(&v, m_b.data() + m_at, sizeof v);
        m_at += sizeof v;
        return true;
    }
    bool str(std::string& s) {
        uint32_t n = 0;
        if (!get(n) || m_b.size() - m_at < n) return false;
        s.assign(m_b.data() + m_at, n);
        m_at += n;
        return true;
    }
    bool floats(std::vector<float>& v) {
        uint64_t n = 0;
        if (!get(n) || (m_b.size() - m_at) / sizeof(float) < n) return false;
        v.resize(n);
        std::memcpy(v.data(), m_b.data() + m_at, n * sizeof(float));
        m_at += n * sizeof(float);
        return true;
    }
    bool strings(std::vector<std::string>& v) {
        uint64_t n = 0;
        if (!get(n) || (m_b.size() - m_at) / sizeof(uint32_t) < n) return false;  // each needs its length at least
        v.resize(n);
        for (auto& s : v)
            if (!str(s)) return false;
        return true;
    }
    bool atEnd() const { return m_at == m_b.size(); }

private:
    const std::string& m_b;
    size_t m_at = 0;
};

void putKey(Writer& w, const EvaluationCacheKey& k) {
    w.str(k.weightsPath);
    w.put<int64_t>(k.weightsSize);
    w.put<int64_t>(k.weightsModifiedNs);
    w.str(k.weightsHash);
    w.str(k.split);
    w.str(k.dataFingerprint);
    w.str(k.modelFingerprint);
}

bool getKey(Reader& r, EvaluationCacheKey& k) {
    return r.str(k.weightsPath) && r.get(k.weightsSize) && r.get(k.weightsModifiedNs) && r.str(k.weightsHash) &&
           r.str(k.split) && r.str(k.dataFingerprint) && r.str(k.modelFingerprint);
}

}  // namespace

Result<EvaluationCacheKey> evaluationCacheKey(const io::Project& project, const std::string& projectPath,
                                              const EvaluationOptions& options) {
    if (!options.imageFiles.empty())
        return Error(ErrorCode::InvalidArgument, "predictions of single pictures are not stored").with("field", "imageFiles");
    EvaluationCacheKey key;
    KILN_ASSIGN(std::string weights, resolveWeights(options.weights));
    std::error_code ec;
    const fs::path weightsPath = fs::absolute(weights, ec).lexically_normal();
    key.weightsPath = weightsPath.string();
    std::ifstream in(weightsPath, std::ios::binary);
    if (!in) return Error(ErrorCode::FileRead, "cannot read the weights file").withFile(key.weightsPath).with("path", key.weightsPath);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    key.weightsSize = static_cast<int64_t>(bytes.size());
    key.weightsModifiedNs = modifiedNs(weightsPath);
    key.weightsHash = store::contentHash(bytes);

    std::string data = project.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const fs::path projectDir = projectPath.empty() ? fs::path() : fs::absolute(projectPath, ec).parent_path().lexically_normal();
    Stamps stamps;
    stampPaths(project.data, projectPath, projectDir, stamps);
    const bool csvIndex = project.data.is_object() && project.data.value("format", std::string()) == "csv_index";
    const std::string splitColumn = csvIndex ? project.data.value("split_column", std::string()) : std::string();
    if (csvIndex && project.data.contains("path") && project.data["path"].is_string())
        stampCsvIndex(io::resolveDataPath(project.data["path"].get<std::string>(), projectPath), splitColumn, stamps);
    const std::string& split = options.split;
    if (split == "test" || split == "train") key.split = split;
    else if (split == "val" || split == "validation") key.split = "validation";
    else {
        key.split = fs::absolute(io::resolveDataPath(split, projectPath), ec).lexically_normal().string();
        stamp(key.split, stamps);
        if (csvIndex && fs::is_regular_file(key.split, ec)) stampCsvIndex(key.split, splitColumn, stamps);
    }
    key.dataFingerprint = store::contentHash(data + fingerprintText(stamps));

    io::Project model;
    model.graph = project.graph;
    model.layers = project.layers;
    model.training = nlohmann::json::object();
    for (const char* field : {"loss", "losses", "metrics"})
        if (project.training.contains(field)) model.training[field] = project.training[field];
    key.modelFingerprint = store::contentHash(io::serializeProject(model));
    return key;
}

std::string evaluationCachePath(const EvaluationCacheKey& key) {
    const fs::path weights(key.weightsPath);
    std::string split = key.split;
    if (split != "test" && split != "validation" && split != "train") split = "data-" + store::contentHash(split);
    return (weights.parent_path() / "evaluations" / (weights.filename().string() + "." + split + ".kiln-eval")).string();
}

std::optional<CachedPredictions> loadCachedPredictions(const EvaluationCacheKey& key) {
    std::ifstream in(evaluationCachePath(key), std::ios::binary);
    if (!in) return std::nullopt;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
    const std::string body = bytes.substr(sizeof kMagic);
    Reader r(body);
    uint32_t version = 0;
    if (!r.get(version) || version != kEvaluationCacheVersion) return std::nullopt;
    EvaluationCacheKey stored;
    if (!getKey(r, stored) || !(stored == key)) return std::nullopt;
    CachedPredictions out;
    Predictions& p = out.predictions;
    uint8_t fromLogits = 0;
    uint32_t metrics = 0;
    if (!r.str(out.created) || !r.get(out.createdMs) || !r.get(p.samples) || !r.get(p.width) || !r.get(p.targetWidth) ||
        !r.str(p.lossType) || !r.get(fromLogits) || !r.get(p.loss) || !r.get(metrics))
        return std::nullopt;
    p.fromLogits = fromLogits != 0;
    for (uint32_t i = 0; i < metrics; ++i) {
        std::string name;
        double value = 0;
        if (!r.str(name) || !r.get(value)) return std::nullopt;
        p.metrics.emplace_back(std::move(name), value);
    }
    if (!r.strings(p.classNames) || !r.str(p.split) || !r.str(p.weightsPath) || !r.strings(p.sources) ||
        !r.floats(p.outputs) || !r.floats(p.targets) || !r.atEnd())
        return std::nullopt;
    if (p.samples < 0 || p.width < 0 || p.targetWidth < 0 || p.outputs.size() != static_cast<size_t>(p.samples * p.width) ||
        p.targets.size() != static_cast<size_t>(p.samples * p.targetWidth) || p.sources.size() != static_cast<size_t>(p.samples))
        return std::nullopt;
    return out;
}

Status storeCachedPredictions(const EvaluationCacheKey& key, const Predictions& p) {
    Writer w;
    w.bytes.append(kMagic, sizeof kMagic);
    w.put<uint32_t>(kEvaluationCacheVersion);
    putKey(w, key);
    int64_t ms = 0;
    w.str(isoNow(&ms));
    w.put<int64_t>(ms);
    w.put<int64_t>(p.samples);
    w.put<int64_t>(p.width);
    w.put<int64_t>(p.targetWidth);
    w.str(p.lossType);
    w.put<uint8_t>(p.fromLogits ? 1 : 0);
    w.put<double>(p.loss);
    w.put<uint32_t>(static_cast<uint32_t>(p.metrics.size()));
    for (const auto& [name, value] : p.metrics) {
        w.str(name);
        w.put<double>(value);
    }
    w.put<uint64_t>(p.classNames.size());
    for (const auto& s : p.classNames) w.str(s);
    w.str(p.split);
    w.str(p.weightsPath);
    w.put<uint64_t>(p.sources.size());
    for (const auto& s : p.sources) w.str(s);
    w.floats(p.outputs);
    w.floats(p.targets);
    const std::string path = evaluationCachePath(key);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec)
        return Error(ErrorCode::FileWrite, "cannot make the folder for stored evaluations: " + ec.message())
            .withFile(path)
            .with("path", fs::path(path).parent_path().string())
            .with("reason", ec.message());
    return io::writeFileAtomic(path, w.bytes);
}

}  // namespace kiln::engine::api
