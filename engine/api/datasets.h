// SPDX-License-Identifier: Apache-2.0
// The data workspace's view of the engine: the dataset index (a folder scanned once, then browsed,
// filtered and split), the folder summary, sources and TFRecord reader that the import dialog
// inspects, and the check of the transform list the transform form edits (the pipeline's runs are
// in data_preview.h). The types here belong to this header; the index, sources and readers behind
// them (engine/data's) stay inside the engine, and their values are copied into these at the
// boundary.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/api/data_preview.h"
#include "engine/core/error.h"
#include "engine/core/shape.h"

namespace kiln::engine::api {

// ---- The dataset index --------------------------------------------------------------------------

// Which part of the data a sample belongs to, and whether it can be read. The numbers are those
// the index stores (the studio keeps them in its models' roles and filter menus).
enum class SampleSplit : int {
    Unassigned = -1,
    Train = 0,
    Validation = 1,
    Test = 2,
};
enum class SampleStatus : int {
    Ok = 0,
    Bad = 1,
};

// One indexed file.
struct SampleRecord {
    int64_t id = 0;
    std::string path;       // relative to the data set root, '/' separators
    int label = -1;         // index of the class in the sorted class names
    std::string className;  // the class folder's name
    int64_t byteSize = 0;
    uint64_t hash = 0;  // a 64-bit hash of the file's bytes (hashHex() shows it)
    int width = 0;      // pixels, 0 when unknown
    int height = 0;
    SampleSplit split = SampleSplit::Unassigned;
    SampleStatus status = SampleStatus::Ok;
    std::string reason;  // why the sample is bad (English), empty when ok
};

// A record's hash as 16 lower-case hex digits.
std::string hashHex(uint64_t hash);

// How a folder is laid out.
enum class FolderLayout {
    Auto,          // SplitFolders when the root holds train/ and val/, validation/ or test/
    ClassFolders,  // root/<class>/**/<image>
    SplitFolders,  // root/<train|val|validation|test>/<class>/**/<image>
};

struct ScanProgress {
    int64_t processed = 0;  // files looked at so far
    int64_t total = 0;      // files found (known once the listing is done)
    int64_t rehashed = 0;   // files read and hashed so far (new or changed)
};

struct ScanStats {
    int64_t files = 0;      // image files in the folder
    int64_t added = 0;      // new files
    int64_t changed = 0;    // files whose size or modification time changed (rehashed)
    int64_t unchanged = 0;  // files skipped: same path, size and modification time
    int64_t removed = 0;    // rows whose file is gone
    int64_t bad = 0;        // samples marked bad, in all
    FolderLayout layout = FolderLayout::ClassFolders;
};

struct ScanOptions {
    FolderLayout layout = FolderLayout::Auto;
    // Called on the scanning thread every 256 files or 1/20 s, whichever comes first, and at the end.
    std::function<void(const ScanProgress&)> progress;
    // Set from any thread to stop the scan; it then returns ErrorCode::Cancelled. Work already
    // committed stays in the index (a later rescan continues from there); nothing is removed.
    const std::atomic<bool>* cancel = nullptr;
};

// Which rows a query returns; an unset field matches everything.
struct SampleFilter {
    std::optional<int> label;
    std::optional<SampleSplit> split;
    std::optional<SampleStatus> status;
    bool operator==(const SampleFilter&) const = default;
};

// Per class and split counts: counts[label][splitColumn(split)].
struct ClassSplitCounts {
    std::vector<std::string> classNames;
    std::vector<std::array<int64_t, 4>> counts;
    int64_t total(SampleSplit split) const;
    int64_t classTotal(int label) const;
    int64_t total() const;
};
// The column of a split in ClassSplitCounts::counts: 0 train, 1 validation, 2 test, 3 unassigned.
inline constexpr int splitColumn(SampleSplit s) {
    return s == SampleSplit::Unassigned ? 3 : static_cast<int>(s);
}

// How splits were made; kept in the index and written into the project's "data" section.
struct SplitSpec {
    enum class Mode {
        None,
        Ratio,
        Folder,
    };
    Mode mode = Mode::None;
    double train = 0.8;
    double validation = 0.1;
    double test = 0.1;
    uint64_t seed = 1;
    bool stratify = true;
};

// What page() and prepareAnchors() did to find rows, for benchmarks and tests.
struct PagingStats {
    int64_t anchorRowsWalked = 0;  // rows stepped over to record page anchors, in all
    int64_t anchorResets = 0;      // times the anchors were dropped because the data changed
};

// Classes found in a folder without reading any file: a quick preview for import dialogs.
struct FolderSummary {
    FolderLayout layout = FolderLayout::ClassFolders;
    std::vector<std::string> classNames;  // sorted by name
    std::vector<int64_t> fileCounts;      // image files per class (all split folders together)
    int64_t totalFiles = 0;
    std::vector<std::string> firstFiles;  // up to `sampleFiles` relative paths, for a preview
};
// Names starting with "." (files and folders) are skipped, as a scan skips them.
Result<FolderSummary> summarizeImageFolder(const std::string& root, FolderLayout layout = FolderLayout::Auto,
                                           int sampleFiles = 16);

// What a cheap look at a file's first and last bytes says about it.
struct ImageHeaderInfo {
    bool ok = false;
    std::string format;  // "png", "jpeg", "bmp", "tiff" when recognised
    int width = 0;       // 0 when the header does not say cheaply
    int height = 0;
    std::string reason;  // why it is not a readable image, when !ok (English, as the index stores it)
};
// Checks a file's signature (by content, not by extension), reads the dimensions where the header
// gives them and notices truncation that the tail shows. It does not decode pixels.
ImageHeaderInfo inspectImageHeader(const std::string& path);

// A persistent index of a data set's sample files (path, label, size, content hash, dimensions,
// split, status) in a SQLite file, so that reopening and rescanning a large folder is quick. Each
// object holds one connection of its own; open one per thread (a scan may write through one while
// others read). Not copyable, movable; a moved-from index may only be assigned to or destroyed.
class DatasetIndex {
public:
    // Opens or creates the index at `indexPath`. A file from a newer Kiln is UnsupportedFormat.
    static Result<DatasetIndex> open(const std::string& indexPath);

    DatasetIndex(DatasetIndex&& other) noexcept;
    DatasetIndex& operator=(DatasetIndex&& other) noexcept;
    DatasetIndex(const DatasetIndex&) = delete;
    DatasetIndex& operator=(const DatasetIndex&) = delete;
    ~DatasetIndex();

    const std::string& indexPath() const;
    // The folder last scanned ("" before the first scan), and its layout.
    Result<std::string> root() const;
    Result<FolderLayout> layout() const;

    // Scans an image folder into the index. A rescan of the same root reads only new or changed
    // files; rows of vanished files are removed. Scanning a different root clears the index
    // first. A file whose header is not a known image is kept, marked bad with the reason.
    Result<ScanStats> scanImageFolder(const std::string& root, const ScanOptions& options = {});

    // Assigns every sample to train/validation/test: seeded, stratified by class on request, the
    // same assignment as training makes from {"split": {"validation": v, "test": t}} with that seed.
    Status assignSplitsByRatio(double train, double validation, double test, uint64_t seed,
                               bool stratify = true);
    // Uses the split folders of a SplitFolders layout (val/ and validation/ → validation).
    Status assignSplitsByFolder();
    Result<SplitSpec> splitSpec() const;

    // Marks a sample bad (e.g. when the full decode for a thumbnail fails) or ok again.
    Status setStatus(int64_t id, SampleStatus status, const std::string& reason);

    Result<std::vector<std::string>> classNames() const;
    Result<ClassSplitCounts> counts() const;
    Result<int64_t> count(const SampleFilter& filter = {}) const;

    // Rows matching `filter` ordered by (label, path), rows [offset, offset + limit). Costs about
    // the same at any offset once the page anchors reach it (see prepareAnchors()).
    Result<std::vector<SampleRecord>> page(const SampleFilter& filter, int64_t offset, int64_t limit) const;
    // Records page anchors for `filter`, walking at most `maxRows` index rows from where the last
    // call stopped, so that a caller can spread the walk over idle moments. True once every row is
    // covered (until the data changes).
    Result<bool> prepareAnchors(const SampleFilter& filter, int64_t maxRows) const;
    PagingStats pagingStats() const;

    // The absolute path of a sample's file.
    std::string absolutePath(const SampleRecord& record) const;

private:
    struct Impl;
    explicit DatasetIndex(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// ---- Sources the import dialog reads ------------------------------------------------------------

// What a source column holds.
struct ColumnSpec {
    std::string name;
    // Per-sample shape. Images: [H,W,C] when every image has that size; dimensions that vary
    // between files are 0.
    Shape shape;
    bool image = false;                   // stored as an encoded or decoded picture
    bool text = false;                    // raw bytes that are no picture (a file name)
    std::vector<std::string> classNames;  // for a label column: one name per class index
};

// One column of one sample.
struct SampleValue {
    enum class Kind { Numbers,
                      Encoded,
                      Image };
    Kind kind = Kind::Numbers;
    std::string encoded;        // Kind::Encoded: the bytes of a PNG/JPEG/BMP/TIFF file
    DisplayPicture picture;     // Kind::Image: the decoded picture, as displayPicture() shows it
    Shape shape;                // Kind::Numbers: the shape of `values`; Kind::Image: [H,W,C]
    std::vector<float> values;  // Kind::Numbers
};

struct Sample {
    int64_t index = -1;               // position in the source
    std::string origin;               // the file the sample (or its picture) came from
    std::vector<SampleValue> values;  // one per column, in columnSpecs() order
};

// How a numeric CSV table is read (a project's "csv" data section).
struct CsvTableOptions {
    int skipRows = 0;               // physical lines skipped before anything else
    bool hasHeader = false;         // the first row after the skipped ones names the columns
    bool categoricalLabel = false;  // labels are names, numbered in sorted order
    // The class column: by 0-based position (negative counts from the end, -1 = last), or by its
    // header name when `labelColumnName` is not empty.
    int64_t labelColumn = -1;
    std::string labelColumnName;
};

// A data set whose samples are addressed by index and read on demand, from any thread: what a
// CSV index, a pair of IDX files or a numeric CSV table holds. Pictures stay encoded where the
// source stores them encoded. Not copyable, movable.
class SampleSource {
public:
    // A CSV index in Neural Network Console style; `splitColumn` names the variable that assigns
    // rows to splits ("" for none). Problems in the index are ParseError with file, line and column.
    static Result<SampleSource> openCsvIndex(const std::string& path, const std::string& splitColumn = {});
    // IDX image and label files (MNIST, Fashion-MNIST).
    static Result<SampleSource> openIdx(const std::string& imagesPath, const std::string& labelsPath);
    // A numeric CSV table read whole: ParseError naming the file, line and column of a bad cell,
    // InvalidArgument for an option that names no column.
    static Result<SampleSource> openCsvTable(const std::string& path, const CsvTableOptions& options);

    SampleSource(SampleSource&& other) noexcept;
    SampleSource& operator=(SampleSource&& other) noexcept;
    SampleSource(const SampleSource&) = delete;
    SampleSource& operator=(const SampleSource&) = delete;
    ~SampleSource();

    int64_t size() const;
    std::vector<ColumnSpec> columnSpecs() const;
    // Fills `out` (index, origin, one value per column). A picture that cannot be read is
    // DataError naming the file.
    Status load(int64_t index, Sample& out) const;
    // Samples per class of the label column (empty without one), read without loading pictures.
    std::vector<int64_t> classCounts() const;

private:
    struct Impl;
    explicit SampleSource(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// Finds "<prefix>-images-idx3-ubyte[.gz]" and the matching labels file given either one of them
// or a folder holding exactly one such pair (train-* is preferred): {images, labels}.
Result<std::pair<std::string, std::string>> findIdxPair(const std::string& path);

// One feature of a tf.train.Example.
struct Feature {
    enum class Kind { None,
                      Bytes,
                      Float,
                      Int64 };
    Kind kind = Kind::None;  // None: a feature with no list set
    std::vector<std::string> bytes;
    std::vector<float> floats;
    std::vector<int64_t> ints;
};
const char* featureKindName(Feature::Kind kind);  // "none", "bytes", "float", "int64"

struct Example {
    std::map<std::string, Feature> features;  // sorted by key
    // nullptr when absent.
    const Feature* find(std::string_view key) const;
};

// The records of a TFRecord file of tf.train.Example, one after another. Not copyable, movable.
class TfRecordFile {
public:
    // `compression`: "" or "NONE", "ZLIB", "GZIP" (any case, as tf.data's compression_type);
    // InvalidArgument naming the value otherwise.
    static Result<TfRecordFile> open(const std::string& path, const std::string& compression = {});

    TfRecordFile(TfRecordFile&& other) noexcept;
    TfRecordFile& operator=(TfRecordFile&& other) noexcept;
    TfRecordFile(const TfRecordFile&) = delete;
    TfRecordFile& operator=(const TfRecordFile&) = delete;
    ~TfRecordFile();

    // Reads and decodes the next record into `out`: false at the end of the file. A damaged
    // record is DataError naming the file and the offset; a record that is no Example is DataError
    // with the parameters "feature" (when known), "offset" and "reason".
    Result<bool> next(Example& out);

private:
    struct Impl;
    explicit TfRecordFile(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// ---- Transforms ---------------------------------------------------------------------------------

// Checks the "transforms" array of a project's data section (docs/project-format.md) as training
// reads it. Unknown types or settings and bad values are ConfigError naming the field, e.g.
// "data.transforms[2].size".
Status checkTransforms(const nlohmann::json& transforms);

}  // namespace kiln::engine::api
