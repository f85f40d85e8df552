// SPDX-License-Identifier: Apache-2.0
// A persistent index of a data set's sample files (path, label, size, content hash, dimensions,
// split, status) in a SQLite file, so that reopening and rescanning a large folder is quick.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.h"

struct sqlite3;

namespace kiln::engine::data {

// Which part of the data a sample belongs to. Stored as these numbers.
enum class SampleSplit : int { Unassigned = -1, Train = 0, Validation = 1, Test = 2 };
enum class SampleStatus : int { Ok = 0, Bad = 1 };

const char* sampleSplitName(SampleSplit split);  // "train", "validation", "test", "unassigned"

// One indexed file.
struct SampleRecord {
    int64_t id = 0;
    std::string path;       // relative to the data set root, '/' separators
    int label = -1;         // index of the class in the sorted class names
    std::string className;  // the class folder's name
    int64_t byteSize = 0;
    int64_t mtimeNs = 0;  // modification time, nanoseconds since the epoch
    uint64_t hash = 0;    // contentHash() of the file's bytes
    int width = 0;        // pixels, 0 when unknown
    int height = 0;
    SampleSplit split = SampleSplit::Unassigned;
    SampleStatus status = SampleStatus::Ok;
    std::string reason;  // why the sample is bad (English), empty when ok
};

// A 64-bit non-cryptographic hash of a byte string: four multiply-xor lanes over 8-byte words,
// then a final avalanche. Used to notice changed or duplicate files, not for security.
uint64_t contentHash(const void* data, size_t size);
// contentHash() formatted as 16 lower-case hex digits.
std::string hashHex(uint64_t hash);

// What a cheap look at a file's first and last bytes says about it.
struct ImageHeaderInfo {
    bool ok = false;
    std::string format;  // "png", "jpeg", "bmp", "tiff" when recognised
    int width = 0;       // 0 when the header does not say cheaply
    int height = 0;
    std::string reason;  // why it is not a readable image, when !ok
};

// Checks a file's signature (by content, not by extension), reads the dimensions where the header
// gives them, and notices truncation that the tail shows (a PNG without IEND, a JPEG without the
// end-of-image marker, a BMP shorter than its header says). It does not decode pixels.
ImageHeaderInfo inspectImageHeader(const std::string& path);
// The same on bytes already in memory (the whole file).
ImageHeaderInfo inspectImageBytes(const unsigned char* data, size_t size);

// True for the extensions an image folder scan picks up: jpg jpeg png bmp tif tiff, any case.
bool isImageFileName(const std::string& name);

// How a folder is laid out.
enum class FolderLayout {
    Auto,          // SplitFolders when the root holds train/ and val/, validation/ or test/
    ClassFolders,  // root/<class>/**/<image>  (Keras flow_from_directory)
    SplitFolders,  // root/<train|val|validation|test>/<class>/**/<image>
    // Names starting with "." (files and folders) are skipped, as by ImageFolderSource.
};

// Classes found in a folder without reading any file: a quick preview for import dialogs.
struct FolderSummary {
    FolderLayout layout = FolderLayout::ClassFolders;
    std::vector<std::string> classNames;  // sorted by name
    std::vector<int64_t> fileCounts;      // image files per class (all split folders together)
    int64_t totalFiles = 0;
    std::vector<std::string> firstFiles;  // up to `sampleFiles` relative paths, for a preview
};
Result<FolderSummary> summarizeImageFolder(const std::string& root, FolderLayout layout = FolderLayout::Auto,
                                           int sampleFiles = 16);

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
    int batchSize = 512;  // rows per write transaction
    // Called on the scanning thread every 256 files or 1/20 s, whichever comes first, and at the end.
    std::function<void(const ScanProgress&)> progress;
    // Set from any thread to stop the scan; it then returns ErrorCode::Cancelled. Work already
    // committed stays in the index (a later rescan continues from there); nothing is removed.
    const std::atomic<bool>* cancel = nullptr;
};

// Filter for queries; an unset field matches everything.
struct SampleFilter {
    std::optional<int> label;
    std::optional<SampleSplit> split;
    std::optional<SampleStatus> status;
    bool operator==(const SampleFilter&) const = default;
};

// Per class and split counts: counts[label][split index 0..3] with 3 = unassigned.
struct ClassSplitCounts {
    std::vector<std::string> classNames;
    std::vector<std::array<int64_t, 4>> counts;
    int64_t total(SampleSplit split) const;
    int64_t classTotal(int label) const;
    int64_t total() const;
};
inline constexpr int splitColumn(SampleSplit s) {
    return s == SampleSplit::Unassigned ? 3 : static_cast<int>(s);
}

// How splits were made; kept in the index and written into the project's "data" section.
struct SplitSpec {
    enum class Mode { None, Ratio, Folder } mode = Mode::None;
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

// The index file. Each object owns one SQLite connection; open one per thread (WAL mode lets a
// scanner write while other connections read). Not copyable, movable.
//
// Paging: page() does not make SQLite walk the rows before a page (OFFSET). Per filter it keeps
// the (label, path) key of every kAnchorStride-th row, recorded by one walk over the covering
// index and extended as far as a request needs; a page then starts at the nearest anchor at or
// below it. Anchors are dropped when the data changes: through this connection, or a commit of
// any other connection (PRAGMA data_version), e.g. a scan writing through its own DatasetIndex.
class DatasetIndex {
public:
    static constexpr int kSchemaVersion = 1;

    // Opens or creates the index at `indexPath`. A file from a newer Kiln is UnsupportedFormat.
    static Result<DatasetIndex> open(const std::string& indexPath);

    DatasetIndex(DatasetIndex&& other) noexcept;
    DatasetIndex& operator=(DatasetIndex&& other) noexcept;
    DatasetIndex(const DatasetIndex&) = delete;
    DatasetIndex& operator=(const DatasetIndex&) = delete;
    ~DatasetIndex();

    const std::string& indexPath() const { return m_path; }
    // The folder last scanned ("" before the first scan).
    Result<std::string> root() const;
    Result<FolderLayout> layout() const;

    // Scans an image folder into the index. A rescan of the same root compares (path, size,
    // modification time) and reads only new or changed files; rows of vanished files are removed.
    // Scanning a different root clears the index first. Classes are the class folders sorted by
    // name; a file whose header is not a known image is kept, marked bad with the reason.
    Result<ScanStats> scanImageFolder(const std::string& root, const ScanOptions& options = {});

    // Assigns every sample to train/validation/test: seeded, stratified by class on request, the
    // same for the same files and seed whatever the scan order, and the same assignment as
    // training makes from {"split": {"validation": v, "test": t}} with that seed (samples in
    // (class, path) order, bad ones included: training skips them). Fractions as splitIndices().
    Status assignSplitsByRatio(double train, double validation, double test, uint64_t seed,
                               bool stratify = true);
    // Uses the split folders of a SplitFolders layout (val/ and validation/ → validation).
    Status assignSplitsByFolder();
    Result<SplitSpec> splitSpec() const;

    // Marks a sample bad (e.g. when the full decode for a thumbnail fails) or ok again; its split
    // stays (the split is over files, as in training).
    Status setStatus(int64_t id, SampleStatus status, const std::string& reason);

    Result<std::vector<std::string>> classNames() const;
    // Counts read the tally of rows per (class, split, status) when the file has it (every index
    // made or scanned by this Kiln), and count the rows otherwise: either way the numbers are exact.
    Result<ClassSplitCounts> counts() const;
    Result<int64_t> count(const SampleFilter& filter = {}) const;
    // Adds the tally to an index made before it had one (writes; a no-op when present). open() of
    // a new file and scanImageFolder() call it.
    Status ensureTally();
    Result<bool> hasTally() const;
    // Rows between two anchors.
    static constexpr int64_t kAnchorStride = 256;

    // Rows matching `filter` ordered by (label, path), rows [offset, offset + limit). Costs about
    // the same at any offset once the anchors reach it; the first read past the recorded anchors
    // walks the index from the last anchor to the page (see prepareAnchors()).
    Result<std::vector<SampleRecord>> page(const SampleFilter& filter, int64_t offset, int64_t limit) const;
    // The same rows read with LIMIT/OFFSET, whose cost grows with the offset: the reference that
    // page() is checked and measured against.
    Result<std::vector<SampleRecord>> pageByOffset(const SampleFilter& filter, int64_t offset,
                                                   int64_t limit) const;
    // Records page anchors for `filter`, walking at most `maxRows` index rows from where the last
    // call stopped, so that a caller can spread the walk over idle moments. True once every row is
    // covered (until the data changes).
    Result<bool> prepareAnchors(const SampleFilter& filter, int64_t maxRows) const;
    const PagingStats& pagingStats() const { return m_pagingStats; }

    // Adds rows without reading any file (synthetic sets for tests and benchmarks). Each record's
    // class joins the class table under its label; ids are assigned (the record's id is ignored).
    // A path already present is an error naming it, and nothing of the call is kept.
    Status insertRecords(const std::vector<SampleRecord>& records);
    Result<SampleRecord> sample(int64_t id) const;
    // The absolute path of a sample's file.
    std::string absolutePath(const SampleRecord& record) const;

private:
    DatasetIndex() = default;
    Status exec(const char* sql) const;
    // Inside a write transaction that changes most rows: drops the tally's triggers (true when the
    // file has a tally); resumeTally() recounts and makes them again before the commit.
    Result<bool> suspendTally();
    Status resumeTally();
    Error sqlError(const std::string& what) const;
    Result<std::string> meta(const std::string& key) const;
    Status setMeta(const std::string& key, const std::string& value);
    Status writeSplits(const std::vector<std::pair<int64_t, SampleSplit>>& assignment);
    Status setSplitSpec(const SplitSpec& spec);

    // Anchors of one filter: keys[k] is the (label, path) of row k * kAnchorStride.
    struct PageAnchors {
        SampleFilter filter;
        std::vector<std::pair<int64_t, std::string>> keys;
        bool complete = false;  // the walk reached the last row
        uint64_t lastUse = 0;
    };
    // Drops every anchor when the data changed since they were recorded. Call inside a read
    // transaction, so that the check and the reads after it see the same snapshot.
    Status checkDataVersion() const;
    PageAnchors& anchorsFor(const SampleFilter& filter) const;
    // Walks on from the last anchor until keys.size() > `key` or `maxRows` rows were walked.
    Status extendAnchors(PageAnchors& anchors, int64_t key, int64_t maxRows) const;

    sqlite3* m_db = nullptr;
    std::string m_path;
    mutable std::string m_rootCache;
    mutable std::vector<PageAnchors> m_anchors;  // a few filters, least recently used dropped
    mutable uint64_t m_anchorClock = 0;
    mutable int64_t m_dataVersion = -1;  // PRAGMA data_version when the anchors were recorded
    mutable int64_t m_ownChanges = -1;   // sqlite3_total_changes64() then
    mutable PagingStats m_pagingStats;
};

}  // namespace kiln::engine::data
