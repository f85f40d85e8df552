// SPDX-License-Identifier: Apache-2.0
// The data workspace's calls over engine/data: the dataset index, the sample sources and the
// TFRecord reader are held behind private structs, and every value they hand out is copied
// (strings and lists moved) into the api's own types (engine/api/datasets.h); errors pass
// through unchanged, with their codes and parameters.
#include "engine/api/datasets.h"

#include <iterator>
#include <utility>

#include "engine/data/csv_table.h"
#include "engine/data/dataset_index.h"
#include "engine/data/example.h"
#include "engine/data/sources.h"
#include "engine/data/tfrecord.h"
#include "engine/data/transforms.h"

namespace kiln::engine::api {

namespace {

// The api's enumerations list the same values as engine/data's; the switches say so to the
// compiler, which warns when one side gains a value the other lacks.
SampleSplit toApi(data::SampleSplit s) {
    switch (s) {
    case data::SampleSplit::Unassigned: return SampleSplit::Unassigned;
    case data::SampleSplit::Train: return SampleSplit::Train;
    case data::SampleSplit::Validation: return SampleSplit::Validation;
    case data::SampleSplit::Test: return SampleSplit::Test;
    }
    return SampleSplit::Unassigned;
}

data::SampleSplit toData(SampleSplit s) {
    switch (s) {
    case SampleSplit::Unassigned: return data::SampleSplit::Unassigned;
    case SampleSplit::Train: return data::SampleSplit::Train;
    case SampleSplit::Validation: return data::SampleSplit::Validation;
    case SampleSplit::Test: return data::SampleSplit::Test;
    }
    return data::SampleSplit::Unassigned;
}

SampleStatus toApi(data::SampleStatus s) {
    switch (s) {
    case data::SampleStatus::Ok: return SampleStatus::Ok;
    case data::SampleStatus::Bad: return SampleStatus::Bad;
    }
    return SampleStatus::Ok;
}

data::SampleStatus toData(SampleStatus s) {
    switch (s) {
    case SampleStatus::Ok: return data::SampleStatus::Ok;
    case SampleStatus::Bad: return data::SampleStatus::Bad;
    }
    return data::SampleStatus::Ok;
}

FolderLayout toApi(data::FolderLayout l) {
    switch (l) {
    case data::FolderLayout::Auto: return FolderLayout::Auto;
    case data::FolderLayout::ClassFolders: return FolderLayout::ClassFolders;
    case data::FolderLayout::SplitFolders: return FolderLayout::SplitFolders;
    }
    return FolderLayout::Auto;
}

data::FolderLayout toData(FolderLayout l) {
    switch (l) {
    case FolderLayout::Auto: return data::FolderLayout::Auto;
    case FolderLayout::ClassFolders: return data::FolderLayout::ClassFolders;
    case FolderLayout::SplitFolders: return data::FolderLayout::SplitFolders;
    }
    return data::FolderLayout::Auto;
}

SplitSpec::Mode toApi(data::SplitSpec::Mode m) {
    switch (m) {
    case data::SplitSpec::Mode::None: return SplitSpec::Mode::None;
    case data::SplitSpec::Mode::Ratio: return SplitSpec::Mode::Ratio;
    case data::SplitSpec::Mode::Folder: return SplitSpec::Mode::Folder;
    }
    return SplitSpec::Mode::None;
}

SampleRecord toApi(data::SampleRecord&& r) {
    SampleRecord out;
    out.id = r.id;
    out.path = std::move(r.path);
    out.label = r.label;
    out.className = std::move(r.className);
    out.byteSize = r.byteSize;
    out.hash = r.hash;
    out.width = r.width;
    out.height = r.height;
    out.split = toApi(r.split);
    out.status = toApi(r.status);
    out.reason = std::move(r.reason);
    return out;
}

data::SampleFilter toData(const SampleFilter& f) {
    data::SampleFilter out;
    out.label = f.label;
    if (f.split) out.split = toData(*f.split);
    if (f.status) out.status = toData(*f.status);
    return out;
}

Feature::Kind toApi(data::Feature::Kind k) {
    switch (k) {
    case data::Feature::Kind::None: return Feature::Kind::None;
    case data::Feature::Kind::Bytes: return Feature::Kind::Bytes;
    case data::Feature::Kind::Float: return Feature::Kind::Float;
    case data::Feature::Kind::Int64: return Feature::Kind::Int64;
    }
    return Feature::Kind::None;
}

data::Feature::Kind toData(Feature::Kind k) {
    switch (k) {
    case Feature::Kind::None: return data::Feature::Kind::None;
    case Feature::Kind::Bytes: return data::Feature::Kind::Bytes;
    case Feature::Kind::Float: return data::Feature::Kind::Float;
    case Feature::Kind::Int64: return data::Feature::Kind::Int64;
    }
    return data::Feature::Kind::None;
}

ScanProgress toApi(const data::ScanProgress& p) {
    return ScanProgress{p.processed, p.total, p.rehashed};
}

}  // namespace

std::string hashHex(uint64_t hash) {
    return data::hashHex(hash);
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

Result<FolderSummary> summarizeImageFolder(const std::string& root, FolderLayout layout, int sampleFiles) {
    KILN_ASSIGN(data::FolderSummary s, data::summarizeImageFolder(root, toData(layout), sampleFiles));
    FolderSummary out;
    out.layout = toApi(s.layout);
    out.classNames = std::move(s.classNames);
    out.fileCounts = std::move(s.fileCounts);
    out.totalFiles = s.totalFiles;
    out.firstFiles = std::move(s.firstFiles);
    return out;
}

ImageHeaderInfo inspectImageHeader(const std::string& path) {
    data::ImageHeaderInfo info = data::inspectImageHeader(path);
    return ImageHeaderInfo{info.ok, std::move(info.format), info.width, info.height, std::move(info.reason)};
}

// ---- DatasetIndex -------------------------------------------------------------------------------

struct DatasetIndex::Impl {
    data::DatasetIndex index;
};

DatasetIndex::DatasetIndex(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
DatasetIndex::DatasetIndex(DatasetIndex&& other) noexcept = default;
DatasetIndex& DatasetIndex::operator=(DatasetIndex&& other) noexcept = default;
DatasetIndex::~DatasetIndex() = default;

Result<DatasetIndex> DatasetIndex::open(const std::string& indexPath) {
    KILN_ASSIGN(auto index, data::DatasetIndex::open(indexPath));
    return DatasetIndex(std::make_unique<Impl>(Impl{std::move(index)}));
}

const std::string& DatasetIndex::indexPath() const {
    return m_impl->index.indexPath();
}

Result<std::string> DatasetIndex::root() const {
    return m_impl->index.root();
}

Result<FolderLayout> DatasetIndex::layout() const {
    KILN_ASSIGN(const data::FolderLayout layout, m_impl->index.layout());
    return toApi(layout);
}

Result<ScanStats> DatasetIndex::scanImageFolder(const std::string& root, const ScanOptions& options) {
    data::ScanOptions scan;
    scan.layout = toData(options.layout);
    scan.cancel = options.cancel;
    if (options.progress) scan.progress = [&progress = options.progress](const data::ScanProgress& p) { progress(toApi(p)); };
    KILN_ASSIGN(const data::ScanStats stats, m_impl->index.scanImageFolder(root, scan));
    ScanStats out;
    out.files = stats.files;
    out.added = stats.added;
    out.changed = stats.changed;
    out.unchanged = stats.unchanged;
    out.removed = stats.removed;
    out.bad = stats.bad;
    out.layout = toApi(stats.layout);
    return out;
}

Status DatasetIndex::assignSplitsByRatio(double train, double validation, double test, uint64_t seed, bool stratify) {
    return m_impl->index.assignSplitsByRatio(train, validation, test, seed, stratify);
}

Status DatasetIndex::assignSplitsByFolder() {
    return m_impl->index.assignSplitsByFolder();
}

Result<SplitSpec> DatasetIndex::splitSpec() const {
    KILN_ASSIGN(const data::SplitSpec spec, m_impl->index.splitSpec());
    SplitSpec out;
    out.mode = toApi(spec.mode);
    out.train = spec.train;
    out.validation = spec.validation;
    out.test = spec.test;
    out.seed = spec.seed;
    out.stratify = spec.stratify;
    return out;
}

Status DatasetIndex::setStatus(int64_t id, SampleStatus status, const std::string& reason) {
    return m_impl->index.setStatus(id, toData(status), reason);
}

Result<std::vector<std::string>> DatasetIndex::classNames() const {
    return m_impl->index.classNames();
}

Result<ClassSplitCounts> DatasetIndex::counts() const {
    KILN_ASSIGN(data::ClassSplitCounts counts, m_impl->index.counts());
    // The columns are the same: splitColumn() numbers the splits alike on both sides.
    return ClassSplitCounts{std::move(counts.classNames), std::move(counts.counts)};
}

Result<int64_t> DatasetIndex::count(const SampleFilter& filter) const {
    return m_impl->index.count(toData(filter));
}

Result<std::vector<SampleRecord>> DatasetIndex::page(const SampleFilter& filter, int64_t offset, int64_t limit) const {
    KILN_ASSIGN(std::vector<data::SampleRecord> rows, m_impl->index.page(toData(filter), offset, limit));
    std::vector<SampleRecord> out;
    out.reserve(rows.size());
    for (data::SampleRecord& r : rows) out.push_back(toApi(std::move(r)));
    return out;
}

Result<bool> DatasetIndex::prepareAnchors(const SampleFilter& filter, int64_t maxRows) const {
    return m_impl->index.prepareAnchors(toData(filter), maxRows);
}

PagingStats DatasetIndex::pagingStats() const {
    const data::PagingStats& s = m_impl->index.pagingStats();
    return PagingStats{s.anchorRowsWalked, s.anchorResets};
}

std::string DatasetIndex::absolutePath(const SampleRecord& record) const {
    data::SampleRecord r;
    r.path = record.path;
    return m_impl->index.absolutePath(r);
}

// ---- Sources the import dialog reads ------------------------------------------------------------

struct SampleSource::Impl {
    std::shared_ptr<const data::SampleSource> source;
};

SampleSource::SampleSource(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SampleSource::SampleSource(SampleSource&& other) noexcept = default;
SampleSource& SampleSource::operator=(SampleSource&& other) noexcept = default;
SampleSource::~SampleSource() = default;

Result<SampleSource> SampleSource::openCsvIndex(const std::string& path, const std::string& splitColumn) {
    data::CsvIndexSource::Options options;
    options.splitColumn = splitColumn;
    KILN_ASSIGN(auto source, data::CsvIndexSource::open(path, options));
    return SampleSource(std::make_unique<Impl>(Impl{std::move(source)}));
}

Result<SampleSource> SampleSource::openIdx(const std::string& imagesPath, const std::string& labelsPath) {
    KILN_ASSIGN(auto source, data::IdxSource::open(imagesPath, labelsPath));
    return SampleSource(std::make_unique<Impl>(Impl{std::move(source)}));
}

Result<SampleSource> SampleSource::openCsvTable(const std::string& path, const CsvTableOptions& options) {
    data::CsvTableOptions read;
    read.skipRows = options.skipRows;
    read.hasHeader = options.hasHeader;
    read.categoricalLabel = options.categoricalLabel;
    read.labelColumn = options.labelColumnName.empty() ? data::CsvColumnRef(options.labelColumn)
                                                       : data::CsvColumnRef(options.labelColumnName);
    KILN_ASSIGN(data::InMemoryDataset table, data::readCsvTable(path, read));
    return SampleSource(std::make_unique<Impl>(Impl{std::make_shared<data::InMemorySource>(std::move(table))}));
}

int64_t SampleSource::size() const {
    return m_impl->source->size();
}

std::vector<ColumnSpec> SampleSource::columnSpecs() const {
    std::vector<ColumnSpec> out;
    for (data::ColumnSpec& c : m_impl->source->columnSpecs())
        out.push_back(ColumnSpec{std::move(c.name), std::move(c.shape), c.image, c.text, std::move(c.classNames)});
    return out;
}

Status SampleSource::load(int64_t index, Sample& out) const {
    data::Sample sample;
    KILN_TRY(m_impl->source->load(index, sample));
    out.index = sample.index;
    out.origin = std::move(sample.origin);
    out.values.clear();
    out.values.reserve(sample.values.size());
    for (data::SampleValue& v : sample.values) {
        SampleValue value;
        switch (v.kind) {
        case data::SampleValue::Kind::Numbers:
            value.kind = SampleValue::Kind::Numbers;
            value.values = std::move(v.values);
            value.shape = std::move(v.shape);
            break;
        case data::SampleValue::Kind::Encoded:
            value.kind = SampleValue::Kind::Encoded;
            value.encoded = std::move(v.encoded);
            break;
        case data::SampleValue::Kind::Image:
            value.kind = SampleValue::Kind::Image;
            value.picture = displayPicture(v.image);
            value.shape = Shape{v.image.rows, v.image.cols, v.image.channels()};
            break;
        }
        out.values.push_back(std::move(value));
    }
    return okStatus();
}

std::vector<int64_t> SampleSource::classCounts() const {
    return data::sourceClassCounts(*m_impl->source);
}

Result<std::pair<std::string, std::string>> findIdxPair(const std::string& path) {
    return data::IdxSource::findPair(path);
}

const char* featureKindName(Feature::Kind kind) {
    return data::featureKindName(toData(kind));
}

const Feature* Example::find(std::string_view key) const {
    const auto it = features.find(std::string(key));
    return it == features.end() ? nullptr : &it->second;
}

struct TfRecordFile::Impl {
    std::unique_ptr<data::TfRecordReader> reader;
    std::string payload;  // the record last read, its buffer kept for the next one
};

TfRecordFile::TfRecordFile(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
TfRecordFile::TfRecordFile(TfRecordFile&& other) noexcept = default;
TfRecordFile& TfRecordFile::operator=(TfRecordFile&& other) noexcept = default;
TfRecordFile::~TfRecordFile() = default;

Result<TfRecordFile> TfRecordFile::open(const std::string& path, const std::string& compression) {
    KILN_ASSIGN(const data::TfRecordCompression c, data::parseTfRecordCompression(compression));
    KILN_ASSIGN(auto reader, data::TfRecordReader::open(path, c));
    return TfRecordFile(std::make_unique<Impl>(Impl{std::move(reader), {}}));
}

Result<bool> TfRecordFile::next(Example& out) {
    KILN_ASSIGN(const bool more, m_impl->reader->next(m_impl->payload));
    if (!more) return false;
    KILN_ASSIGN(data::Example example, data::decodeExample(m_impl->payload));
    // The records of a file mostly have the same keys: those already in `out` keep their entries.
    for (auto it = out.features.begin(); it != out.features.end();)
        it = example.features.count(it->first) != 0 ? std::next(it) : out.features.erase(it);
    for (auto& [key, f] : example.features) {
        Feature& into = out.features[key];
        into.kind = toApi(f.kind);
        into.bytes = std::move(f.bytes);
        into.floats = std::move(f.floats);
        into.ints = std::move(f.ints);
    }
    return true;
}

// ---- Transforms ---------------------------------------------------------------------------------

Status checkTransforms(const nlohmann::json& transforms) {
    KILN_TRY(data::TransformList::fromJson(transforms));
    return okStatus();
}

}  // namespace kiln::engine::api
