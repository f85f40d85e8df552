// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// The dataset index on real files in a temporary folder: scans, incremental rescans, cancelling,
// bad files and their reasons, splits (stratified, deterministic, by folder), a 100k reopen, and
// anchored page reads checked against LIMIT/OFFSET for every filter, across connections.
#include <QtTest>

#include <opencv2/imgcodecs.hpp>

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/data/dataset_index.h"
#include "tests/test_files.h"

using namespace kiln::engine;
using namespace kiln::engine::data;
namespace fs = std::filesystem;
using kiln::test::writeBytes;
using kiln::test::writeText;

namespace {

std::vector<unsigned char> encode(const std::string& ext, int w, int h, int seed) {
    cv::Mat m(h, w, CV_8UC3);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            m.at<cv::Vec3b>(y, x) = cv::Vec3b(uchar(x * 9 + seed), uchar(y * 7 + seed * 3), uchar(seed));
    std::vector<unsigned char> out;
    cv::imencode(ext, m, out);
    return out;
}

// bird: 10 jpg, cat: 30 png (2 with upper-case extensions), dog: 20 png 12x10. Plus bad files
// and files the scan must ignore.
void makeClassFolders(const fs::path& root) {
    for (int i = 0; i < 10; ++i)
        writeBytes(root / "bird" / ("b" + std::to_string(i) + ".jpg"), encode(".jpg", 16, 8, i));
    for (int i = 0; i < 30; ++i) {
        const std::string ext = i < 2 ? ".PNG" : ".png";
        writeBytes(root / "cat" / ("c" + std::to_string(i) + ext), encode(".png", 8, 8, i));
    }
    for (int i = 0; i < 20; ++i)
        writeBytes(root / "dog" / "nested" / ("d" + std::to_string(i) + ".png"), encode(".png", 12, 10, i));
    writeText(root / "cat" / "readme.txt", "not an image");
    writeText(root / "cat" / ".hidden.png", "hidden files are not samples");
    writeBytes(root / "cat" / ".thumbs" / "t.png", encode(".png", 8, 8, 1));
    writeText(root / "stray.png", "files at the root belong to no class");
}

int64_t n(const Result<int64_t>& r) {
    return r.ok() ? *r : -1;
}

// `rows` synthetic samples in 7 classes. Paths do not sort with the labels (class 0's files are
// under "z/"), names differ in case and length, splits and statuses follow different periods.
std::vector<SampleRecord> syntheticRows(int rows, int firstNumber = 0, const std::string& prefix = "") {
    std::vector<SampleRecord> out;
    for (int i = 0; i < rows; ++i) {
        const int k = firstNumber + i;
        SampleRecord r;
        r.label = k % 7;
        r.className = "class" + std::to_string(r.label);
        const char* dir = r.label == 0 ? "z/" : r.label == 3 ? "A/" : "m/";
        r.path = prefix + dir + r.className + "/" + ((k % 3 == 0) ? "Img" : "img") +
                 std::to_string(k * 7919 % 100003) + ".png";
        r.byteSize = 1000 + k;
        static const SampleSplit kSplits[5] = {SampleSplit::Unassigned, SampleSplit::Train,
                                               SampleSplit::Train, SampleSplit::Validation,
                                               SampleSplit::Test};
        r.split = kSplits[k % 5];
        r.status = k % 11 == 4 ? SampleStatus::Bad : SampleStatus::Ok;
        if (r.status == SampleStatus::Bad) r.reason = "empty file";
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<SampleFilter> everyFilter() {
    std::vector<SampleFilter> filters;
    const std::vector<std::optional<int>> labels = {std::nullopt, 0, 3, 6};
    const std::vector<std::optional<SampleSplit>> splits = {std::nullopt, SampleSplit::Unassigned,
                                                            SampleSplit::Train, SampleSplit::Validation,
                                                            SampleSplit::Test};
    const std::vector<std::optional<SampleStatus>> statuses = {std::nullopt, SampleStatus::Ok,
                                                               SampleStatus::Bad};
    for (const auto& l : labels)
        for (const auto& sp : splits)
            for (const auto& st : statuses) filters.push_back({l, sp, st});
    return filters;
}

QByteArray describe(const SampleFilter& f) {
    return QByteArray("label ") + (f.label ? QByteArray::number(*f.label) : "any") + ", split " +
           (f.split ? sampleSplitName(*f.split) : "any") + ", status " +
           (f.status ? QByteArray::number(static_cast<int>(*f.status)) : "any");
}

// The same rows (ids and every field the browser shows), in the same order.
bool samePage(const std::vector<SampleRecord>& a, const std::vector<SampleRecord>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].id != b[i].id || a[i].path != b[i].path || a[i].label != b[i].label ||
            a[i].split != b[i].split || a[i].status != b[i].status || a[i].byteSize != b[i].byteSize)
            return false;
    return true;
}

}  // namespace

class TestDatasetIndex : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    fs::path tmp(const std::string& name) const { return fs::path(m_tmp.path().toStdString()) / name; }

private slots:
    void hashIsStableAndSensitive() {
        const std::string a = "the quick brown fox jumps over the lazy dog, twice over and over";
        std::string b = a;
        b[40] ^= 1;
        QCOMPARE(contentHash(a.data(), a.size()), contentHash(a.data(), a.size()));
        QVERIFY(contentHash(a.data(), a.size()) != contentHash(b.data(), b.size()));
        QVERIFY(contentHash(a.data(), a.size()) != contentHash(a.data(), a.size() - 1));
        QVERIFY(contentHash("", 0) != contentHash("\0", 1));
        QCOMPARE(hashHex(0x1234).size(), size_t{16});
    }

    void headerChecks() {
        const auto png = encode(".png", 8, 6, 1);
        auto info = inspectImageBytes(png.data(), png.size());
        QVERIFY2(info.ok, info.reason.c_str());
        QCOMPARE(info.format, std::string("png"));
        QCOMPARE(info.width, 8);
        QCOMPARE(info.height, 6);
        const auto jpg = encode(".jpg", 20, 11, 2);
        info = inspectImageBytes(jpg.data(), jpg.size());
        QVERIFY2(info.ok, info.reason.c_str());
        QCOMPARE(info.width, 20);
        QCOMPARE(info.height, 11);
        const auto bmp = encode(".bmp", 5, 7, 3);
        info = inspectImageBytes(bmp.data(), bmp.size());
        QVERIFY(info.ok);
        QCOMPARE(info.width, 5);
        QCOMPARE(info.height, 7);
        const auto tif = encode(".tiff", 9, 4, 3);
        info = inspectImageBytes(tif.data(), tif.size());
        QVERIFY(info.ok);
        QCOMPARE(info.width, 9);
        QCOMPARE(info.height, 4);

        info = inspectImageBytes(png.data(), png.size() - 12);
        QVERIFY(!info.ok);
        QVERIFY(info.reason.find("IEND") != std::string::npos);
        info = inspectImageBytes(jpg.data(), jpg.size() / 2);
        QVERIFY(!info.ok);
        QVERIFY(info.reason.find("truncated JPEG") != std::string::npos);
        info = inspectImageBytes(bmp.data(), bmp.size() - 10);
        QVERIFY(!info.ok);
        const std::string text = "hello, I am text";
        info = inspectImageBytes(reinterpret_cast<const unsigned char*>(text.data()), text.size());
        QVERIFY(!info.ok);
        QVERIFY(info.reason.find("not an image") != std::string::npos);
        QVERIFY(!inspectImageBytes(nullptr, 0).ok);
        QVERIFY(isImageFileName("a.JPeG") && isImageFileName("x.tif") && !isImageFileName("x.gif") &&
                !isImageFileName("png"));
    }

    void scanClassFolders() {
        const fs::path root = tmp("classes");
        makeClassFolders(root);
        // Bad files: a zero-byte PNG, text named .jpg, a JPEG cut in half.
        writeText(root / "cat" / "empty.png", "");
        writeText(root / "dog" / "text.jpg", "this is not a JPEG at all");
        const auto jpg = encode(".jpg", 32, 32, 5);
        writeBytes(root / "bird" / "cut.jpg",
                   std::vector<unsigned char>(jpg.begin(), jpg.begin() + jpg.size() / 2));

        auto summary = summarizeImageFolder(root.string());
        QVERIFY(summary.ok());
        QCOMPARE(summary->classNames, (std::vector<std::string>{"bird", "cat", "dog"}));
        QCOMPARE(summary->fileCounts, (std::vector<int64_t>{11, 31, 21}));
        QCOMPARE(summary->firstFiles.size(), size_t{16});

        auto index = DatasetIndex::open(tmp("classes.kindex").string());
        QVERIFY2(index.ok(), index.ok() ? "" : index.error().toString().c_str());
        int64_t lastProcessed = 0;
        ScanOptions options;
        options.progress = [&](const ScanProgress& p) { lastProcessed = p.processed; };
        auto stats = index->scanImageFolder(root.string(), options);
        QVERIFY2(stats.ok(), stats.ok() ? "" : stats.error().toString().c_str());
        QCOMPARE(stats->files, int64_t{63});
        QCOMPARE(stats->added, int64_t{63});
        QCOMPARE(stats->bad, int64_t{3});
        QCOMPARE(lastProcessed, int64_t{63});
        QCOMPARE(stats->layout, FolderLayout::ClassFolders);
        QCOMPARE(*index->classNames(), (std::vector<std::string>{"bird", "cat", "dog"}));

        auto counts = index->counts();
        QVERIFY(counts.ok());
        QCOMPARE(counts->classTotal(0), int64_t{11});
        QCOMPARE(counts->classTotal(1), int64_t{31});
        QCOMPARE(counts->classTotal(2), int64_t{21});
        QCOMPARE(counts->total(SampleSplit::Unassigned), int64_t{63});

        auto bads = index->page({std::nullopt, std::nullopt, SampleStatus::Bad}, 0, 100);
        QVERIFY(bads.ok());
        QCOMPARE(bads->size(), size_t{3});
        std::map<std::string, std::string> reasons;
        for (const auto& r : *bads) reasons[r.path] = r.reason;
        QVERIFY(reasons["cat/empty.png"].find("empty") != std::string::npos);
        QVERIFY(reasons["dog/text.jpg"].find("not an image") != std::string::npos);
        QVERIFY(reasons["bird/cut.jpg"].find("truncated JPEG") != std::string::npos);

        auto dogs = index->page({2, std::nullopt, SampleStatus::Ok}, 0, 100);
        QVERIFY(dogs.ok());
        QCOMPARE(dogs->size(), size_t{20});
        const SampleRecord& d = dogs->front();
        QCOMPARE(d.className, std::string("dog"));
        QCOMPARE(d.label, 2);
        QCOMPARE(d.width, 12);
        QCOMPARE(d.height, 10);
        QVERIFY(d.path.rfind("dog/nested/", 0) == 0);
        std::ifstream f(index->absolutePath(d), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        QCOMPARE(d.hash, contentHash(bytes.data(), bytes.size()));
        QCOMPARE(d.byteSize, static_cast<int64_t>(bytes.size()));
        auto same = index->sample(d.id);
        QVERIFY(same.ok());
        QCOMPARE(same->path, d.path);
        QVERIFY(!index->sample(999999).ok());

        // Paging: ordered by label then path, pages tile the whole set.
        auto all = index->page({}, 0, 1000);
        QCOMPARE(all->size(), size_t{63});
        auto p2 = index->page({}, 10, 5);
        QCOMPARE(p2->size(), size_t{5});
        QCOMPARE((*p2)[0].id, (*all)[10].id);
        QCOMPARE((*p2)[4].id, (*all)[14].id);
        QCOMPARE(n(index->count({1, std::nullopt, std::nullopt})), int64_t{31});
    }

    void rescanIsIncremental() {
        const fs::path root = tmp("rescan");
        makeClassFolders(root);
        const std::string indexPath = tmp("rescan.kindex").string();
        {
            auto index = DatasetIndex::open(indexPath);
            QVERIFY(index.ok());
            QVERIFY(index->scanImageFolder(root.string()).ok());
        }
        auto index = DatasetIndex::open(indexPath);
        QVERIFY(index.ok());
        auto again = index->scanImageFolder(root.string());
        QVERIFY(again.ok());
        QCOMPARE(again->unchanged, int64_t{60});
        QCOMPARE(again->added + again->changed + again->removed, int64_t{0});

        // One changed (new content and time), one new, one removed, one new class.
        const fs::path changed = root / "cat" / "c5.png";
        writeBytes(changed, encode(".png", 4, 4, 99));
        fs::last_write_time(changed, fs::last_write_time(changed) + std::chrono::seconds(5));
        writeBytes(root / "dog" / "new.png", encode(".png", 8, 8, 77));
        fs::remove(root / "bird" / "b3.jpg");
        writeBytes(root / "ant" / "a0.png", encode(".png", 8, 8, 11));
        int64_t rehashed = 0;
        ScanOptions options;
        options.progress = [&](const ScanProgress& p) { rehashed = p.rehashed; };
        auto stats = index->scanImageFolder(root.string(), options);
        QVERIFY(stats.ok());
        QCOMPARE(stats->changed, int64_t{1});
        QCOMPARE(stats->added, int64_t{2});
        QCOMPARE(stats->removed, int64_t{1});
        QCOMPARE(stats->unchanged, int64_t{58});
        QCOMPARE(rehashed, int64_t{3});
        // Labels follow the new sorted class list: ant, bird, cat, dog.
        QCOMPARE(*index->classNames(), (std::vector<std::string>{"ant", "bird", "cat", "dog"}));
        auto cats = index->page({2, std::nullopt, std::nullopt}, 0, 100);
        QCOMPARE(cats->size(), size_t{30});
        for (const auto& r : *cats) QCOMPARE(r.className, std::string("cat"));
        auto c5 = std::find_if(cats->begin(), cats->end(),
                               [](const SampleRecord& r) { return r.path == "cat/c5.png"; });
        QVERIFY(c5 != cats->end());
        QCOMPARE(c5->width, 4);
    }

    void cancelKeepsCommittedWork() {
        const fs::path root = tmp("cancel");
        const auto png = encode(".png", 8, 8, 3);
        writeBytes(root / "a" / "0.png", png);
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < 1000; ++i) {
                const fs::path p = root / (c == 0 ? "a" : "b") / (std::to_string(i) + ".png");
                if (fs::exists(p)) continue;
                fs::create_directories(p.parent_path());
                fs::create_hard_link(root / "a" / "0.png", p);
            }
        auto index = DatasetIndex::open(tmp("cancel.kindex").string());
        QVERIFY(index.ok());
        std::atomic<bool> cancel{false};
        ScanOptions options;
        options.batchSize = 100;
        options.cancel = &cancel;
        options.progress = [&](const ScanProgress& p) {
            if (p.processed >= 512) cancel = true;
        };
        auto stats = index->scanImageFolder(root.string(), options);
        QVERIFY(!stats.ok());
        QCOMPARE(stats.error().code, ErrorCode::Cancelled);
        const int64_t kept = n(index->count());
        QVERIFY2(kept >= 500 && kept <= 513, std::to_string(kept).c_str());

        cancel = false;
        options.progress = nullptr;
        auto rest = index->scanImageFolder(root.string(), options);
        QVERIFY(rest.ok());
        QCOMPARE(rest->unchanged, kept);
        QCOMPARE(rest->added, 2000 - kept);
        QCOMPARE(n(index->count()), int64_t{2000});
    }

    void splitsAreStratifiedAndDeterministic() {
        const fs::path root = tmp("split");
        const auto png = encode(".png", 8, 8, 4);
        const int sizes[3] = {100, 50, 250};
        writeBytes(root / "c0" / "0.png", png);
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < sizes[c]; ++i) {
                const fs::path p = root / ("c" + std::to_string(c)) / (std::to_string(i) + ".png");
                if (fs::exists(p)) continue;
                fs::create_directories(p.parent_path());
                fs::create_hard_link(root / "c0" / "0.png", p);
            }
        auto index = DatasetIndex::open(tmp("split.kindex").string());
        QVERIFY(index.ok());
        QVERIFY(index->scanImageFolder(root.string()).ok());
        QVERIFY(index->assignSplitsByRatio(0.7, 0.2, 0.1, 42).ok());
        auto counts = index->counts();
        for (int c = 0; c < 3; ++c) {
            const auto& row = counts->counts[static_cast<size_t>(c)];
            QVERIFY(std::abs(row[0] - 0.7 * sizes[c]) <= 2);
            QVERIFY(std::abs(row[1] - 0.2 * sizes[c]) <= 2);
            QVERIFY(std::abs(row[2] - 0.1 * sizes[c]) <= 2);
            QCOMPARE(row[3], int64_t{0});
        }
        auto spec = index->splitSpec();
        QVERIFY(spec.ok());
        QCOMPARE(spec->mode, SplitSpec::Mode::Ratio);
        QCOMPARE(spec->seed, uint64_t{42});
        QCOMPARE(spec->validation, 0.2);

        auto assignment = [](const DatasetIndex& idx) {
            std::map<std::string, SampleSplit> m;
            const auto rows = idx.page({}, 0, 10000);
            for (const auto& r : *rows) m[r.path] = r.split;
            return m;
        };
        const auto first = assignment(*index);
        // A second index, filled in another order (a cancelled first pass), same seed: same split.
        auto other = DatasetIndex::open(tmp("split2.kindex").string());
        std::atomic<bool> cancel{true};
        ScanOptions options;
        options.cancel = &cancel;
        QVERIFY(!other->scanImageFolder(root.string(), options).ok());
        QVERIFY(other->scanImageFolder(root.string()).ok());
        QVERIFY(other->assignSplitsByRatio(0.7, 0.2, 0.1, 42).ok());
        QVERIFY(assignment(*other) == first);
        QVERIFY(other->assignSplitsByRatio(0.7, 0.2, 0.1, 43).ok());
        QVERIFY(assignment(*other) != first);
        // Not stratified still gives the overall sizes.
        QVERIFY(other->assignSplitsByRatio(0.5, 0.5, 0.0, 1, false).ok());
        QCOMPARE(n(other->count({std::nullopt, SampleSplit::Train, std::nullopt})), int64_t{200});
        QCOMPARE(n(other->count({std::nullopt, SampleSplit::Test, std::nullopt})), int64_t{0});
        QVERIFY(!other->assignSplitsByRatio(0.9, 0.2, 0.1, 1).ok());  // adds up to more than 1
        QVERIFY(!other->assignSplitsByFolder().ok());                 // no split folders here
    }

    void splitsByFolder() {
        const fs::path root = tmp("folders");
        for (int i = 0; i < 6; ++i)
            writeBytes(root / "train" / "x" / (std::to_string(i) + ".png"), encode(".png", 8, 8, i));
        for (int i = 0; i < 4; ++i)
            writeBytes(root / "train" / "y" / (std::to_string(i) + ".png"), encode(".png", 8, 8, i));
        for (int i = 0; i < 2; ++i)
            writeBytes(root / "val" / "x" / (std::to_string(i) + ".png"), encode(".png", 8, 8, i));
        for (int i = 0; i < 3; ++i)
            writeBytes(root / "test" / "y" / (std::to_string(i) + ".png"), encode(".png", 8, 8, i));
        writeText(root / "val" / "y" / "bad.png", "");
        auto index = DatasetIndex::open(tmp("folders.kindex").string());
        auto stats = index->scanImageFolder(root.string());
        QVERIFY(stats.ok());
        QCOMPARE(stats->layout, FolderLayout::SplitFolders);
        QCOMPARE(*index->classNames(), (std::vector<std::string>{"x", "y"}));
        QVERIFY(index->assignSplitsByFolder().ok());
        auto c = index->counts();
        QCOMPARE(c->counts[0][0], int64_t{6});
        QCOMPARE(c->counts[0][1], int64_t{2});
        QCOMPARE(c->counts[1][0], int64_t{4});
        QCOMPARE(c->counts[1][2], int64_t{3});
        QCOMPARE(c->counts[1][1], int64_t{1});  // the bad file keeps its folder's split
        QCOMPARE(c->counts[1][3], int64_t{0});
        QCOMPARE(index->splitSpec()->mode, SplitSpec::Mode::Folder);
    }

    void setStatusAndSchemaVersion() {
        const std::string path = tmp("status.kindex").string();
        {
            auto index = DatasetIndex::open(path);
            QVERIFY(index->scanImageFolder(tmp("split").string()).ok());
            auto row = index->page({}, 0, 1);
            QVERIFY(index->assignSplitsByRatio(1.0, 0, 0, 1).ok());
            QVERIFY(index->setStatus(row->front().id, SampleStatus::Bad, "decode failed").ok());
            auto s = index->sample(row->front().id);
            QCOMPARE(s->status, SampleStatus::Bad);
            QCOMPARE(s->split, SampleSplit::Train);
            QCOMPARE(s->reason, std::string("decode failed"));
        }
        {
            auto index = DatasetIndex::open(path);  // reopening keeps the status
            QVERIFY(index.ok());
            QCOMPARE(*index->count({std::nullopt, std::nullopt, SampleStatus::Bad}), int64_t{1});
        }
        // A file from a newer Kiln is refused with a clear error.
        const std::string newer = tmp("newer.kindex").string();
        QVERIFY(DatasetIndex::open(newer).ok());
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(db);
        auto refused = DatasetIndex::open(newer);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, ErrorCode::UnsupportedFormat);
        QVERIFY(!DatasetIndex::open(tmp("no/such/dir/x.kindex").string()).ok());
        auto missing = DatasetIndex::open(tmp("missing.kindex").string());
        auto r = missing->scanImageFolder(tmp("does-not-exist").string());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::FileNotFound);
    }

    void anchoredPagesMatchOffset() {
        const std::string path = tmp("anchors.kindex").string();
        auto index = DatasetIndex::open(path);
        QVERIFY(index.ok());
        QVERIFY(index->insertRecords(syntheticRows(6000)).ok());
        QCOMPARE(n(index->count()), int64_t{6000});
        QCOMPARE(index->classNames()->size(), size_t{7});
        const int64_t stride = DatasetIndex::kAnchorStride;
        int compared = 0;
        for (const SampleFilter& f : everyFilter()) {
            const int64_t rows = n(index->count(f));
            QVERIFY(rows >= 0);
            // Deepest first (the anchors are recorded on demand), then back, across anchors, a
            // page cut by the end, and past the end.
            const std::vector<std::pair<int64_t, int64_t>> reads = {
                {std::max<int64_t>(0, rows - stride), stride},
                {0, stride},
                {rows / 2, stride},
                {stride, stride},
                {stride - 1, 2},
                {3 * stride + 17, 300},
                {rows - 5, stride},
                {rows, stride},
                {rows + 1000, stride},
                {0, 1},
                {rows / 3, 7}};
            for (const auto& [offset, limit] : reads) {
                auto anchored = index->page(f, offset, limit);
                auto plain = index->pageByOffset(f, offset, limit);
                QVERIFY2(anchored.ok() && plain.ok(), describe(f));
                QVERIFY2(samePage(*anchored, *plain),
                         describe(f) + " at " + QByteArray::number(static_cast<qlonglong>(offset)) + ": " +
                             QByteArray::number(static_cast<qulonglong>(anchored->size())) + " vs " +
                             QByteArray::number(static_cast<qulonglong>(plain->size())) + " rows");
                ++compared;
            }
            // Page by page, the pages cover every row of the filter once, in order.
            std::vector<SampleRecord> all;
            for (int64_t at = 0; at < rows; at += stride) {
                auto p = index->page(f, at, stride);
                QVERIFY(p.ok());
                all.insert(all.end(), p->begin(), p->end());
            }
            QVERIFY2(samePage(all, *index->pageByOffset(f, 0, rows + 1)), describe(f));
        }
        QCOMPARE(compared, 60 * 11);
        // With the anchors recorded, a deep page walks nothing; the first read on a new
        // connection walks up to it once, the second does not.
        auto other = DatasetIndex::open(path);
        QCOMPARE(other->pagingStats().anchorRowsWalked, int64_t{0});
        QVERIFY(other->page({}, 5888, stride).ok());
        const int64_t walked = other->pagingStats().anchorRowsWalked;
        QVERIFY2(walked >= 5888 && walked < 5888 + stride, std::to_string(walked).c_str());
        QVERIFY(samePage(*other->page({}, 5888, stride), *other->pageByOffset({}, 5888, stride)));
        QVERIFY(samePage(*other->page({}, 5120, stride), *other->pageByOffset({}, 5120, stride)));
        QCOMPARE(other->pagingStats().anchorRowsWalked, walked);
        // Negative offsets and limits keep SQLite's meaning (none, and no limit).
        QVERIFY(samePage(*other->page({}, -5, 3), *other->pageByOffset({}, 0, 3)));
        QCOMPARE(other->page({}, 5990, -1)->size(), size_t{10});
        QVERIFY(other->page({}, 0, 0)->empty());
    }

    void preparedInSlices() {
        const std::string path = tmp("slices.kindex").string();
        {
            auto index = DatasetIndex::open(path);
            QVERIFY(index->insertRecords(syntheticRows(5000)).ok());
        }
        auto index = DatasetIndex::open(path);
        const SampleFilter train{std::nullopt, SampleSplit::Train, std::nullopt};
        const int64_t rows = n(index->count(train));
        int slices = 0;
        for (;;) {
            auto done = index->prepareAnchors(train, 300);
            QVERIFY(done.ok());
            ++slices;
            if (*done) break;
            QVERIFY(slices < 100);
        }
        QVERIFY2(slices >= rows / 300, std::to_string(slices).c_str());
        const int64_t walked = index->pagingStats().anchorRowsWalked;
        for (int64_t at = 0; at < rows; at += 256)
            QVERIFY(samePage(*index->page(train, at, 256), *index->pageByOffset(train, at, 256)));
        QCOMPARE(index->pagingStats().anchorRowsWalked, walked);  // every page had its anchor
        QCOMPARE(*index->prepareAnchors(train, 1), true);
    }

    void anchorsFollowWritesOfAnotherConnection() {
        const std::string path = tmp("twoconn.kindex").string();
        auto reader = DatasetIndex::open(path);
        auto writer = DatasetIndex::open(path);
        QVERIFY(reader.ok() && writer.ok());
        QVERIFY(writer->insertRecords(syntheticRows(3000)).ok());
        const SampleFilter bad{std::nullopt, std::nullopt, SampleStatus::Bad};
        QVERIFY(*reader->prepareAnchors({}, 1 << 20));
        QVERIFY(*reader->prepareAnchors(bad, 1 << 20));
        const auto before = *reader->page({}, 2048, 256);
        QCOMPARE(reader->pagingStats().anchorResets, int64_t{0});

        // Rows that sort first (class 0's files are under "z/", so "a/..." of class 0 comes
        // before them) shift every later row: stale anchors would return the old rows.
        QVERIFY(writer->insertRecords(syntheticRows(300, 10000, "a")).ok());
        for (int64_t at : {int64_t{0}, int64_t{256}, int64_t{2048}, int64_t{3072}}) {
            auto p = reader->page({}, at, 256);
            QVERIFY(p.ok());
            QVERIFY2(samePage(*p, *reader->pageByOffset({}, at, 256)), std::to_string(at).c_str());
        }
        QCOMPARE(reader->pagingStats().anchorResets, int64_t{1});
        QVERIFY(!samePage(*reader->page({}, 2048, 256), before));
        QCOMPARE(reader->page({}, 3200, 256)->size(), size_t{100});

        // A status change through the other connection moves rows in and out of the filter.
        const auto first = *reader->page({}, 0, 40);
        for (const SampleRecord& r : first)
            QVERIFY(writer->setStatus(r.id, SampleStatus::Bad, "decode failed: synthetic").ok());
        const int64_t bads = n(reader->count(bad));
        for (int64_t at = 0; at < bads; at += 64)
            QVERIFY(samePage(*reader->page(bad, at, 64), *reader->pageByOffset(bad, at, 64)));

        // Writes through the reader's own connection (which leave data_version alone) count too.
        const int64_t resets = reader->pagingStats().anchorResets;
        QVERIFY(*reader->prepareAnchors(bad, 1 << 20));
        for (const SampleRecord& r : first) QVERIFY(reader->setStatus(r.id, SampleStatus::Ok, "").ok());
        for (int64_t at = 0; at < n(reader->count(bad)); at += 64)
            QVERIFY(samePage(*reader->page(bad, at, 64), *reader->pageByOffset(bad, at, 64)));
        QCOMPARE(reader->pagingStats().anchorResets, resets + 1);

        // A reader that only reads keeps its anchors.
        const int64_t walked = reader->pagingStats().anchorRowsWalked;
        QVERIFY(reader->page(bad, 0, 64).ok());
        QVERIFY(reader->count().ok());
        QVERIFY(reader->page(bad, 0, 64).ok());
        QCOMPARE(reader->pagingStats().anchorRowsWalked, walked);
    }

    void insertRecordsRefusesDuplicates() {
        auto index = DatasetIndex::open(tmp("dups.kindex").string());
        QVERIFY(index->insertRecords(syntheticRows(10)).ok());
        auto rows = syntheticRows(5, 100);
        rows.push_back(syntheticRows(1).front());  // already there
        const auto st = index->insertRecords(rows);
        QVERIFY(!st.ok());
        QCOMPARE(st.error().code, ErrorCode::DataError);
        QVERIFY2(st.error().message.find(rows.back().path) != std::string::npos, st.error().message.c_str());
        QCOMPARE(n(index->count()), int64_t{10});  // nothing of the failed call is kept
        QVERIFY(index->insertRecords(syntheticRows(5, 100)).ok());
        QCOMPARE(n(index->count()), int64_t{15});
    }

    void olderFilesGetTheSplitStatusIndexOnScan() {
        const std::string path = tmp("older.kindex").string();
        { QVERIFY(DatasetIndex::open(path).ok()); }
        auto hasIndex = [&] {
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            sqlite3_stmt* s = nullptr;
            sqlite3_prepare_v2(db,
                               "SELECT COUNT(*) FROM sqlite_master WHERE name = 'samples_by_split_status'",
                               -1, &s, nullptr);
            sqlite3_step(s);
            const bool has = sqlite3_column_int(s, 0) == 1;
            sqlite3_finalize(s);
            sqlite3_close(db);
            return has;
        };
        QVERIFY(hasIndex());
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "DROP INDEX samples_by_split_status", nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(db);
        QVERIFY(!hasIndex());
        // Opening writes nothing (the browser opens on its GUI thread); the next scan adds it.
        auto reopened = DatasetIndex::open(path);
        QVERIFY(reopened.ok());
        QVERIFY(!hasIndex());
        writeBytes(tmp("older_folder") / "a" / "x.png", encode(".png", 4, 4, 1));
        QVERIFY(reopened->scanImageFolder(tmp("older_folder").string()).ok());
        QVERIFY(hasIndex());
    }

    // Counts come from the tally when the file has it; they must equal a count of the rows after
    // every kind of write: inserts, split assignment, status changes, rescans that add, change and
    // remove files, and a scan of another root that clears the index.
    void tallyCountsMatchTheRows() {
        const fs::path root = tmp("tally");
        makeClassFolders(root);
        const std::string path = tmp("tally.kindex").string();
        auto index = DatasetIndex::open(path);
        QVERIFY(index.ok());
        QVERIFY(*index->hasTally());
        auto direct = [&](const SampleFilter& f) {
            // The same filter, counted over the rows by SQL of its own.
            std::string sql = "SELECT COUNT(*) FROM samples WHERE 1";
            if (f.label) sql += " AND label = " + std::to_string(*f.label);
            if (f.split) sql += " AND split = " + std::to_string(static_cast<int>(*f.split));
            if (f.status) sql += " AND status = " + std::to_string(static_cast<int>(*f.status));
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            sqlite3_stmt* s = nullptr;
            sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
            sqlite3_step(s);
            const int64_t rows = sqlite3_column_int64(s, 0);
            sqlite3_finalize(s);
            sqlite3_close(db);
            return rows;
        };
        auto check = [&](const char* after) {
            for (const SampleFilter& f : everyFilter())
                QVERIFY2(n(index->count(f)) == direct(f), QByteArray(after) + ": " + describe(f));
            auto c = index->counts();
            QVERIFY(c.ok());
            for (int label = 0; label < static_cast<int>(c->classNames.size()); ++label)
                for (SampleSplit sp : {SampleSplit::Train, SampleSplit::Validation, SampleSplit::Test,
                                       SampleSplit::Unassigned})
                    QVERIFY2(c->counts[size_t(label)][size_t(splitColumn(sp))] ==
                                 direct({label, sp, std::nullopt}),
                             QByteArray(after) + ": counts() of label " + QByteArray::number(label));
        };
        QVERIFY(index->scanImageFolder(root.string()).ok());
        check("first scan");
        if (QTest::currentTestFailed()) return;
        QVERIFY(index->assignSplitsByRatio(0.6, 0.2, 0.2, 7, true).ok());
        check("split by ratio");
        if (QTest::currentTestFailed()) return;
        auto cats = index->page({2, std::nullopt, std::nullopt}, 0, 3);
        QVERIFY(cats.ok() && cats->size() == 3);
        QVERIFY(index->setStatus((*cats)[0].id, SampleStatus::Bad, "decode failed").ok());
        QVERIFY(index->setStatus((*cats)[1].id, SampleStatus::Bad, "decode failed").ok());
        QVERIFY(index->setStatus((*cats)[1].id, SampleStatus::Ok, "").ok());
        check("status changes");
        if (QTest::currentTestFailed()) return;
        writeBytes(root / "dog" / "new.png", encode(".png", 8, 8, 77));
        fs::remove(root / "bird" / "b3.jpg");
        fs::remove(root / "cat" / "c7.png");
        writeBytes(root / "ant" / "a0.png", encode(".png", 8, 8, 11));
        QVERIFY(index->scanImageFolder(root.string()).ok());
        check("rescan");
        if (QTest::currentTestFailed()) return;
        // Another connection writes; this one reads the tally it kept.
        {
            auto other = DatasetIndex::open(path);
            QVERIFY(other.ok());
            QVERIFY(other->insertRecords(syntheticRows(40, 0, "extra/")).ok());
        }
        check("insert through another connection");
        if (QTest::currentTestFailed()) return;
        const fs::path other = tmp("tally_other");
        writeBytes(other / "x" / "x0.png", encode(".png", 4, 4, 3));
        writeBytes(other / "y" / "y0.png", encode(".png", 4, 4, 4));
        QVERIFY(index->scanImageFolder(other.string()).ok());
        check("scan of another root");
        QCOMPARE(n(index->count()), int64_t{2});
    }

    // An index made before the tally counts its rows, and its next scan adds the tally.
    void olderFilesGetTheTallyOnScan() {
        const std::string path = tmp("older_tally.kindex").string();
        {
            auto index = DatasetIndex::open(path);
            QVERIFY(index.ok());
            QVERIFY(index->insertRecords(syntheticRows(50)).ok());
        }
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db,
                              "DROP TRIGGER sample_tally_insert; DROP TRIGGER sample_tally_delete;"
                              "DROP TRIGGER sample_tally_update; DROP TABLE sample_tally;",
                              nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(db);
        auto index = DatasetIndex::open(path);
        QVERIFY(index.ok());
        QVERIFY(!*index->hasTally());
        const SampleFilter bad{std::nullopt, std::nullopt, SampleStatus::Bad};
        const int64_t badRows = n(index->count(bad));
        QCOMPARE(n(index->count()), int64_t{50});
        QVERIFY(badRows > 0);
        QVERIFY(index->ensureTally().ok());
        QVERIFY(*index->hasTally());
        QCOMPARE(n(index->count()), int64_t{50});
        QCOMPARE(n(index->count(bad)), badRows);
        QVERIFY(index->insertRecords(syntheticRows(10, 50)).ok());
        QCOMPARE(n(index->count()), int64_t{60});
    }

    void reopen100k() {
        const fs::path root = tmp("big");
        QElapsedTimer t;
        t.start();
        // One source file per class: file systems cap the links to one file (ext4: 65,000).
        for (int c = 0; c < 10; ++c) {
            const fs::path dir = root / ("class" + std::to_string(c));
            writeBytes(dir / "0.png", encode(".png", 8, 8, c));
            for (int i = 1; i < 10000; ++i)
                fs::create_hard_link(dir / "0.png", dir / (std::to_string(i) + ".png"));
        }
        qInfo("made 100k hard links in %lld ms", static_cast<long long>(t.restart()));
        const std::string indexPath = tmp("big.kindex").string();
        {
            auto index = DatasetIndex::open(indexPath);
            auto stats = index->scanImageFolder(root.string());
            QVERIFY(stats.ok());
            QCOMPARE(stats->added, int64_t{100000});
            qInfo("first scan of 100k files: %lld ms", static_cast<long long>(t.restart()));
        }
        auto index = DatasetIndex::open(indexPath);
        QVERIFY(index.ok());
        auto counts = index->counts();
        auto last = index->page({}, 99900, 100);
        auto one = index->count({7, std::nullopt, std::nullopt});
        const qint64 reopenMs = t.restart();
        qInfo("reopen + counts + last page + filtered count: %lld ms", static_cast<long long>(reopenMs));
        QCOMPARE(counts->total(), int64_t{100000});
        QCOMPARE(last->size(), size_t{100});
        QCOMPARE(*one, int64_t{10000});
        QVERIFY2(reopenMs < 1000, std::to_string(reopenMs).c_str());

        auto stats = index->scanImageFolder(root.string());
        QVERIFY(stats.ok());
        const qint64 rescanMs = t.restart();
        qInfo("rescan of 100k unchanged files: %lld ms", static_cast<long long>(rescanMs));
        QCOMPARE(stats->unchanged, int64_t{100000});
        QCOMPARE(stats->added + stats->changed, int64_t{0});
        QVERIFY(index->assignSplitsByRatio(0.8, 0.1, 0.1, 3).ok());
        qInfo("split of 100k samples: %lld ms", static_cast<long long>(t.restart()));
        QCOMPARE(n(index->count({std::nullopt, SampleSplit::Train, std::nullopt})), int64_t{80000});
    }
};

QTEST_GUILESS_MAIN(TestDatasetIndex)
#include "tst_dataset_index.moc"
