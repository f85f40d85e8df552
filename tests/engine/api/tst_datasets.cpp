// SPDX-License-Identifier: Apache-2.0
// engine/api/datasets.h against engine/data: the api's dataset index scans, splits, counts and
// pages exactly what the engine's index does (record by record, every filter), its errors keep
// the engine's code and parameters, and a scan reports progress and stops when cancelled.
#include <QtTest>

#include <opencv2/imgcodecs.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "engine/api/datasets.h"
#include "engine/data/dataset_index.h"

using namespace kiln::engine;
namespace fs = std::filesystem;

namespace {

void writeBytes(const fs::path& p, const std::vector<unsigned char>& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void writeText(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f << text;
}

std::vector<unsigned char> png(int w, int h, int seed) {
    cv::Mat m(h, w, CV_8UC3, cv::Scalar(seed % 256, (seed * 7) % 256, (seed * 13) % 256));
    std::vector<unsigned char> out;
    cv::imencode(".png", m, out);
    return out;
}

// root/<train|val|test>/<class>/...: three classes of 8, 5 and 11 pictures per split folder, and
// one file that is no picture.
void makeSplitFolders(const fs::path& root) {
    const char* splits[] = {"train", "val", "test"};
    const char* classes[] = {"ant", "bee", "wasp"};
    const int sizes[] = {8, 5, 11};
    int seed = 0;
    for (const char* s : splits)
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < sizes[c]; ++i)
                writeBytes(root / s / classes[c] / ("p" + std::to_string(i) + ".png"), png(6 + c, 4 + i % 3, ++seed));
    writeText(root / "train" / "bee" / "broken.png", "no picture here");
}

void compareRecords(const std::vector<api::SampleRecord>& a, const std::vector<data::SampleRecord>& e) {
    QCOMPARE(a.size(), e.size());
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].id, e[i].id);
        QCOMPARE(a[i].path, e[i].path);
        QCOMPARE(a[i].label, e[i].label);
        QCOMPARE(a[i].className, e[i].className);
        QCOMPARE(a[i].byteSize, e[i].byteSize);
        QCOMPARE(a[i].hash, e[i].hash);
        QCOMPARE(a[i].width, e[i].width);
        QCOMPARE(a[i].height, e[i].height);
        QCOMPARE(static_cast<int>(a[i].split), static_cast<int>(e[i].split));
        QCOMPARE(static_cast<int>(a[i].status), static_cast<int>(e[i].status));
        QCOMPARE(a[i].reason, e[i].reason);
    }
}

}  // namespace

class TestDatasets : public QObject {
    Q_OBJECT

private slots:
    void indexMatchesTheEngine() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const fs::path root = fs::path(tmp.path().toStdString()) / "bugs";
        makeSplitFolders(root);
        const std::string indexPath = (fs::path(tmp.path().toStdString()) / "bugs.kindex").string();

        auto opened = api::DatasetIndex::open(indexPath);
        QVERIFY(opened.ok());
        // A moved index keeps its connection.
        api::DatasetIndex index = std::move(opened).value();
        QCOMPARE(index.indexPath(), indexPath);
        QCOMPARE(*index.root(), std::string());

        std::vector<api::ScanProgress> progress;
        api::ScanOptions options;
        options.progress = [&](const api::ScanProgress& p) { progress.push_back(p); };
        auto stats = index.scanImageFolder(root.string(), options);
        QVERIFY2(stats.ok(), stats.ok() ? "" : stats.error().toString().c_str());
        QCOMPARE(stats->files, int64_t{73});
        QCOMPARE(stats->added, int64_t{73});
        QCOMPARE(stats->bad, int64_t{1});
        QVERIFY(stats->layout == api::FolderLayout::SplitFolders);
        QVERIFY(!progress.empty());
        QCOMPARE(progress.back().processed, int64_t{73});
        QCOMPARE(progress.back().total, int64_t{73});
        QVERIFY(*index.layout() == api::FolderLayout::SplitFolders);
        QCOMPARE(*index.root(), root.string());
        QCOMPARE(*index.classNames(), (std::vector<std::string>{"ant", "bee", "wasp"}));

        QVERIFY(index.assignSplitsByFolder().ok());
        auto spec = index.splitSpec();
        QVERIFY(spec.ok());
        QVERIFY(spec->mode == api::SplitSpec::Mode::Folder);
        auto counts = index.counts();
        QVERIFY(counts.ok());
        QCOMPARE(counts->classNames, (std::vector<std::string>{"ant", "bee", "wasp"}));
        QCOMPARE(counts->counts[1], (std::array<int64_t, 4>{6, 5, 5, 0}));  // bee, with the broken file
        QCOMPARE(counts->total(api::SampleSplit::Validation), int64_t{24});
        QCOMPARE(counts->classTotal(2), int64_t{33});
        QCOMPARE(counts->total(), int64_t{73});

        // The engine's own connection to the same file sees the same rows, page by page, for
        // every filter the browser offers.
        auto engine = data::DatasetIndex::open(indexPath);
        QVERIFY(engine.ok());
        const std::optional<int> labels[] = {std::nullopt, 0, 1, 2};
        const std::optional<api::SampleSplit> splits[] = {std::nullopt, api::SampleSplit::Train, api::SampleSplit::Validation,
                                                          api::SampleSplit::Test, api::SampleSplit::Unassigned};
        const std::optional<api::SampleStatus> statuses[] = {std::nullopt, api::SampleStatus::Ok, api::SampleStatus::Bad};
        int filters = 0;
        for (const auto& label : labels)
            for (const auto& split : splits)
                for (const auto& status : statuses) {
                    const api::SampleFilter f{label, split, status};
                    data::SampleFilter ef;
                    ef.label = label;
                    if (split) ef.split = static_cast<data::SampleSplit>(static_cast<int>(*split));
                    if (status) ef.status = static_cast<data::SampleStatus>(static_cast<int>(*status));
                    QCOMPARE(*index.count(f), *engine->count(ef));
                    for (int64_t offset : {0, 5, 40}) {
                        auto mine = index.page(f, offset, 16);
                        auto theirs = engine->page(ef, offset, 16);
                        QVERIFY(mine.ok() && theirs.ok());
                        compareRecords(*mine, *theirs);
                    }
                    ++filters;
                }
        QCOMPARE(filters, 60);

        // The bad file, with the reason the engine gave it; marking a sample bad goes through.
        auto bad = index.page({std::nullopt, std::nullopt, api::SampleStatus::Bad}, 0, 10);
        QCOMPARE(bad->size(), size_t{1});
        QCOMPARE(bad->front().path, std::string("train/bee/broken.png"));
        QVERIFY(!bad->front().reason.empty());
        QCOMPARE(index.absolutePath(bad->front()), (root / "train/bee/broken.png").string());
        QCOMPARE(api::hashHex(bad->front().hash), data::hashHex(bad->front().hash));
        QCOMPARE(api::hashHex(0x1234), std::string("0000000000001234"));
        auto first = index.page({0, api::SampleSplit::Train, std::nullopt}, 0, 1);
        QVERIFY(index.setStatus(first->front().id, api::SampleStatus::Bad, "decode failed: test").ok());
        QCOMPARE(*index.count({std::nullopt, std::nullopt, api::SampleStatus::Bad}), int64_t{2});
        QCOMPARE(engine->sample(first->front().id)->reason, std::string("decode failed: test"));

        // Splits by ratio: the same seeded assignment as the engine's, and the spec read back.
        QVERIFY(index.assignSplitsByRatio(0.5, 0.25, 0.25, 7, false).ok());
        spec = index.splitSpec();
        QVERIFY(spec->mode == api::SplitSpec::Mode::Ratio);
        QCOMPARE(spec->validation, 0.25);
        QCOMPARE(spec->seed, uint64_t{7});
        QVERIFY(!spec->stratify);
        auto all = index.page({}, 0, 100);
        auto allEngine = engine->page({}, 0, 100);
        compareRecords(*all, *allEngine);

        // Anchors recorded through the api are counted by its paging statistics.
        const api::PagingStats before = index.pagingStats();
        auto done = index.prepareAnchors({}, 1000);
        QVERIFY(done.ok() && *done);
        QVERIFY(index.pagingStats().anchorRowsWalked > before.anchorRowsWalked);
    }

    void folderPreviewMatchesTheEngine() {
        QTemporaryDir tmp;
        const fs::path root = fs::path(tmp.path().toStdString()) / "bugs";
        makeSplitFolders(root);
        auto mine = api::summarizeImageFolder(root.string(), api::FolderLayout::Auto, 5);
        auto theirs = data::summarizeImageFolder(root.string(), data::FolderLayout::Auto, 5);
        QVERIFY(mine.ok() && theirs.ok());
        QVERIFY(mine->layout == api::FolderLayout::SplitFolders);
        QCOMPARE(mine->classNames, theirs->classNames);
        QCOMPARE(mine->fileCounts, (std::vector<int64_t>{24, 16, 33}));
        QCOMPARE(mine->fileCounts, theirs->fileCounts);
        QCOMPARE(mine->totalFiles, int64_t{73});
        QCOMPARE(mine->firstFiles, theirs->firstFiles);
        QCOMPARE(mine->firstFiles.size(), size_t{5});
        // Read as class folders, the split folders are the classes.
        mine = api::summarizeImageFolder(root.string(), api::FolderLayout::ClassFolders);
        QVERIFY(mine->layout == api::FolderLayout::ClassFolders);
        QCOMPARE(mine->classNames, (std::vector<std::string>{"test", "train", "val"}));

        const api::ImageHeaderInfo good = api::inspectImageHeader((root / "val/wasp/p2.png").string());
        QVERIFY(good.ok);
        QCOMPARE(good.format, std::string("png"));
        QCOMPARE(good.width, 8);
        QCOMPARE(good.height, 6);
        const std::string broken = (root / "train/bee/broken.png").string();
        const api::ImageHeaderInfo bad = api::inspectImageHeader(broken);
        QVERIFY(!bad.ok);
        QCOMPARE(bad.reason, data::inspectImageHeader(broken).reason);

        // A folder that is not there: the engine's error, code and file.
        auto missing = api::summarizeImageFolder((root / "nope").string());
        auto engineMissing = data::summarizeImageFolder((root / "nope").string());
        QVERIFY(!missing.ok() && !engineMissing.ok());
        QCOMPARE(static_cast<int>(missing.error().code), static_cast<int>(engineMissing.error().code));
        QCOMPARE(missing.error().toString(), engineMissing.error().toString());
    }

    void errorsKeepTheirCodeAndParameters() {
        QTemporaryDir tmp;
        const std::string missing = (fs::path(tmp.path().toStdString()) / "no" / "such" / "x.kindex").string();
        auto mine = api::DatasetIndex::open(missing);
        auto theirs = data::DatasetIndex::open(missing);
        QVERIFY(!mine.ok() && !theirs.ok());
        QCOMPARE(static_cast<int>(mine.error().code), static_cast<int>(theirs.error().code));
        QCOMPARE(mine.error().toString(), theirs.error().toString());

        auto index = api::DatasetIndex::open((fs::path(tmp.path().toStdString()) / "a.kindex").string());
        QVERIFY(index.ok());
        auto engineIndex = data::DatasetIndex::open((fs::path(tmp.path().toStdString()) / "b.kindex").string());
        QVERIFY(engineIndex.ok());
        const std::string nothing = (fs::path(tmp.path().toStdString()) / "nothing-here").string();
        auto scan = index->scanImageFolder(nothing);
        auto engineScan = engineIndex->scanImageFolder(nothing);
        QVERIFY(!scan.ok() && !engineScan.ok());
        QCOMPARE(static_cast<int>(scan.error().code), static_cast<int>(engineScan.error().code));
        QCOMPARE(scan.error().file, engineScan.error().file);
        QCOMPARE(scan.error().params, engineScan.error().params);
        QCOMPARE(scan.error().toString(), engineScan.error().toString());

        // A cancelled scan ends with Cancelled, as the engine's does.
        makeSplitFolders(fs::path(tmp.path().toStdString()) / "bugs");
        std::atomic<bool> stop{true};
        api::ScanOptions options;
        options.cancel = &stop;
        scan = index->scanImageFolder((fs::path(tmp.path().toStdString()) / "bugs").string(), options);
        QVERIFY(!scan.ok());
        QVERIFY(scan.error().code == ErrorCode::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestDatasets)
#include "tst_datasets.moc"
