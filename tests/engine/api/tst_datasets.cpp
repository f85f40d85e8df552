// SPDX-License-Identifier: Apache-2.0
// engine/api/datasets.h against engine/data: the api's dataset index scans, splits, counts and
// pages exactly what the engine's index does (record by record, every filter); its sources (CSV
// index, IDX pair, CSV table) and TFRecord reader hand out the engine's samples and examples;
// transforms are checked as training reads them; errors keep the engine's code and parameters; a
// scan reports progress and stops when cancelled.
#include <QtTest>

#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include "engine/api/datasets.h"
#include "engine/data/csv_table.h"
#include "engine/data/dataset_index.h"
#include "engine/data/example.h"
#include "engine/data/sources.h"
#include "engine/data/tfrecord.h"
#include "engine/data/transforms.h"
#include "tests/test_files.h"

using namespace kiln::engine;
namespace fs = std::filesystem;
using kiln::test::writeBytes;
using kiln::test::writeText;

namespace {

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

// IDX files of `n` 3x2 grey pictures (pixel value i * 10 + k) and labels i % 3.
void writeIdxPair(const fs::path& folder, int n) {
    auto be32 = [](std::string& out, uint32_t v) {
        for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
    };
    std::string images("\0\0\x08\x03", 4), labels("\0\0\x08\x01", 4);
    be32(images, static_cast<uint32_t>(n));
    be32(images, 3);
    be32(images, 2);
    be32(labels, static_cast<uint32_t>(n));
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 6; ++k) images.push_back(static_cast<char>(i * 10 + k));
        labels.push_back(static_cast<char>(i % 3));
    }
    writeText(folder / "train-images-idx3-ubyte", images);
    writeText(folder / "train-labels-idx1-ubyte", labels);
}

void compareSources(const api::SampleSource& mine, const data::SampleSource& theirs) {
    QCOMPARE(mine.size(), theirs.size());
    const auto specs = mine.columnSpecs();
    const auto engineSpecs = theirs.columnSpecs();
    QCOMPARE(specs.size(), engineSpecs.size());
    for (size_t c = 0; c < specs.size(); ++c) {
        QCOMPARE(specs[c].name, engineSpecs[c].name);
        QCOMPARE(specs[c].shape, engineSpecs[c].shape);
        QCOMPARE(specs[c].image, engineSpecs[c].image);
        QCOMPARE(specs[c].text, engineSpecs[c].text);
        QCOMPARE(specs[c].classNames, engineSpecs[c].classNames);
    }
    QCOMPARE(mine.classCounts(), data::sourceClassCounts(theirs));
    for (int64_t i = 0; i < mine.size(); ++i) {
        api::Sample a;
        data::Sample e;
        QVERIFY(mine.load(i, a).ok());
        QVERIFY(theirs.load(i, e).ok());
        QCOMPARE(a.index, e.index);
        QCOMPARE(a.origin, e.origin);
        QCOMPARE(a.values.size(), e.values.size());
        for (size_t c = 0; c < a.values.size(); ++c) {
            const api::SampleValue& v = a.values[c];
            const data::SampleValue& w = e.values[c];
            QCOMPARE(static_cast<int>(v.kind), static_cast<int>(w.kind));
            QCOMPARE(v.encoded, w.encoded);
            QCOMPARE(v.values, w.values);
            if (w.kind == data::SampleValue::Kind::Image) {
                QCOMPARE(v.shape, (Shape{w.image.rows, w.image.cols, w.image.channels()}));
                const api::DisplayPicture shown = api::displayPicture(w.image);
                QCOMPARE(v.picture.width, shown.width);
                QCOMPARE(v.picture.height, shown.height);
                QCOMPARE(v.picture.channels, shown.channels);
                QCOMPARE(v.picture.pixels, shown.pixels);
            } else {
                QCOMPARE(v.shape, w.shape);
                QVERIFY(v.picture.pixels.empty());
            }
        }
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

    void sourcesMatchTheEngine() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();

        // A CSV index of encoded pictures and numbers, with a split column.
        writeBytes(root / "img" / "a.png", png(5, 4, 1));
        writeBytes(root / "img" / "b.png", png(3, 7, 2));
        writeText(root / "index.csv", "x:image,f__0,f__1,y:label,part\nimg/a.png,0.5,-1,1,train\nimg/b.png,2.5,3,0,test\n");
        auto index = api::SampleSource::openCsvIndex((root / "index.csv").string(), "part");
        data::CsvIndexSource::Options options;
        options.splitColumn = "part";
        auto engineIndex = data::CsvIndexSource::open((root / "index.csv").string(), options);
        QVERIFY2(index.ok(), index.ok() ? "" : index.error().toString().c_str());
        QVERIFY(engineIndex.ok());
        QCOMPARE(index->columnSpecs().size(), size_t{3});  // the split column is no data column
        compareSources(*index, **engineIndex);

        // IDX: decoded pictures, handed over ready to show, and the pair found from one file.
        writeIdxPair(root / "idx", 7);
        auto pair = api::findIdxPair((root / "idx" / "train-images-idx3-ubyte").string());
        QVERIFY2(pair.ok(), pair.ok() ? "" : pair.error().toString().c_str());
        QVERIFY(pair->second.ends_with("train-labels-idx1-ubyte"));
        QCOMPARE(*pair, *data::IdxSource::findPair((root / "idx" / "train-images-idx3-ubyte").string()));
        auto fromFolder = api::findIdxPair((root / "idx").string());
        QVERIFY(fromFolder.ok());
        QCOMPARE(*fromFolder, *data::IdxSource::findPair((root / "idx").string()));
        auto idx = api::SampleSource::openIdx(pair->first, pair->second);
        auto engineIdx = data::IdxSource::open(pair->first, pair->second);
        QVERIFY(idx.ok() && engineIdx.ok());
        QCOMPARE(idx->classCounts(), (std::vector<int64_t>{3, 2, 2}));
        compareSources(*idx, **engineIdx);
        api::Sample third;
        QVERIFY(idx->load(2, third).ok());
        QVERIFY(third.values[0].kind == api::SampleValue::Kind::Image);
        QCOMPARE(third.values[0].shape, (Shape{3, 2, 1}));
        QCOMPARE(third.values[0].picture.channels, 1);

        // A CSV table: labels by position, by name, and as names.
        writeText(root / "table.csv", "a,b,kind\n1,2,x\n3,4,y\n5,6,x\n");
        api::CsvTableOptions byName;
        byName.hasHeader = true;
        byName.labelColumnName = "kind";
        byName.categoricalLabel = true;
        auto table = api::SampleSource::openCsvTable((root / "table.csv").string(), byName);
        data::CsvTableOptions engineByName;
        engineByName.hasHeader = true;
        engineByName.labelColumn = data::CsvColumnRef("kind");
        engineByName.categoricalLabel = true;
        auto engineTable = data::readCsvTable((root / "table.csv").string(), engineByName);
        QVERIFY2(table.ok(), table.ok() ? "" : table.error().toString().c_str());
        QVERIFY(engineTable.ok());
        const data::InMemorySource engineSource(std::move(engineTable).value());
        compareSources(*table, engineSource);
        QCOMPARE(table->classCounts(), (std::vector<int64_t>{2, 1}));
        const auto tableSpecs = table->columnSpecs();
        const auto label = std::find_if(tableSpecs.begin(), tableSpecs.end(), [](const api::ColumnSpec& c) { return c.name == "label"; });
        QVERIFY(label != tableSpecs.end());
        QCOMPARE(label->classNames, (std::vector<std::string>{"x", "y"}));

        writeText(root / "numbers.csv", "9,1,2\n8,3,4\n");
        api::CsvTableOptions first;
        first.labelColumn = 0;
        auto numbers = api::SampleSource::openCsvTable((root / "numbers.csv").string(), first);
        QVERIFY(numbers.ok());
        api::Sample row;
        QVERIFY(numbers->load(1, row).ok());
        QCOMPARE(row.values[0].values, (std::vector<float>{3, 4}));
        QCOMPARE(row.values[1].values, (std::vector<float>{8}));

        // Errors as the engine gives them: a bad cell names the file, line and column; an unknown
        // label column is InvalidArgument.
        writeText(root / "bad.csv", "1,2\n3,abc\n");
        auto bad = api::SampleSource::openCsvTable((root / "bad.csv").string(), {});
        auto engineBad = data::readCsvTable((root / "bad.csv").string(), {});
        QVERIFY(!bad.ok() && !engineBad.ok());
        QVERIFY(bad.error().code == ErrorCode::ParseError);
        QCOMPARE(bad.error().line, 2);
        QCOMPARE(bad.error().column, 2);
        QCOMPARE(bad.error().params, engineBad.error().params);
        QCOMPARE(bad.error().toString(), engineBad.error().toString());
        api::CsvTableOptions unknown;
        unknown.hasHeader = true;
        unknown.labelColumnName = "nope";
        auto noColumn = api::SampleSource::openCsvTable((root / "table.csv").string(), unknown);
        QVERIFY(!noColumn.ok());
        QVERIFY(noColumn.error().code == ErrorCode::InvalidArgument);
        auto noPair = api::findIdxPair((root / "img").string());
        QVERIFY(!noPair.ok());
        QCOMPARE(noPair.error().toString(), data::IdxSource::findPair((root / "img").string()).error().toString());

        // A source outlives a move.
        api::SampleSource moved = std::move(idx).value();
        QCOMPARE(moved.size(), int64_t{7});
    }

    void tfRecordMatchesTheEngine() {
        QTemporaryDir tmp;
        const std::string path = (fs::path(tmp.path().toStdString()) / "data.tfrecord").string();
        std::vector<data::Example> written;
        {
            auto writer = data::TfRecordWriter::create(path, data::TfRecordCompression::Gzip);
            QVERIFY(writer.ok());
            for (int i = 0; i < 5; ++i) {
                data::Example e;
                e.features["image/encoded"] = data::Feature::ofBytes({std::string("bytes ") + char('a' + i)});
                e.features["label"] = data::Feature::ofInt64s({i % 2});
                e.features["x"] = data::Feature::ofFloats({0.5f * float(i), -1.0f});
                if (i == 3) e.features["empty"] = data::Feature{};
                QVERIFY((*writer)->write(data::encodeExample(e)).ok());
                written.push_back(std::move(e));
            }
            QVERIFY((*writer)->close().ok());
        }
        auto file = api::TfRecordFile::open(path, "gzip");
        QVERIFY2(file.ok(), file.ok() ? "" : file.error().toString().c_str());
        api::TfRecordFile records = std::move(file).value();
        api::Example example;
        for (const data::Example& e : written) {
            auto more = records.next(example);
            QVERIFY(more.ok() && *more);
            QCOMPARE(example.features.size(), e.features.size());
            for (const auto& [key, f] : e.features) {
                const api::Feature* mine = example.find(key);
                QVERIFY(mine != nullptr);
                QCOMPARE(std::string(api::featureKindName(mine->kind)), std::string(data::featureKindName(f.kind)));
                QCOMPARE(mine->bytes, f.bytes);
                QCOMPARE(mine->floats, f.floats);
                QCOMPARE(mine->ints, f.ints);
            }
            QVERIFY(example.find("absent") == nullptr);
        }
        auto end = records.next(example);
        QVERIFY(end.ok() && !*end);

        // An unknown compression names the value; a missing file is FileNotFound naming it; a
        // record that is no Example is DataError with the engine's parameters.
        auto badName = api::TfRecordFile::open(path, "zip");
        QVERIFY(!badName.ok());
        QCOMPARE(badName.error().toString(), data::parseTfRecordCompression("zip").error().toString());
        auto missing = api::TfRecordFile::open(path + ".nope");
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().code == ErrorCode::FileNotFound);
        const std::string junk = path + ".junk";
        {
            auto writer = data::TfRecordWriter::create(junk);
            QVERIFY((*writer)->write(std::string("\x0a\x05\x0a\x01", 4)).ok());
            QVERIFY((*writer)->close().ok());
        }
        auto junkFile = api::TfRecordFile::open(junk);
        QVERIFY(junkFile.ok());
        auto decoded = junkFile->next(example);
        QVERIFY(!decoded.ok());
        auto engineDecoded = data::decodeExample(std::string("\x0a\x05\x0a\x01", 4));
        QVERIFY(!engineDecoded.ok());
        QVERIFY(decoded.error().code == ErrorCode::DataError);
        QCOMPARE(decoded.error().params, engineDecoded.error().params);
    }

    void transformsAreCheckedAsTrainingReadsThem() {
        const auto good = nlohmann::json::parse(R"([{"type": "resize", "size": [8, 8]}, {"type": "flip", "horizontal": true}])");
        QVERIFY(api::checkTransforms(good).ok());
        QVERIFY(api::checkTransforms(nlohmann::json::array()).ok());
        for (const char* text : {R"([{"type": "resize", "size": [8, 8]}, {"type": "resize", "size": "big"}])",
                                 R"([{"type": "warp"}])", R"([{"type": "flip", "sideways": true}])"}) {
            const auto bad = nlohmann::json::parse(text);
            const Status mine = api::checkTransforms(bad);
            auto theirs = data::TransformList::fromJson(bad);
            QVERIFY2(!mine.ok(), text);
            QVERIFY(!theirs.ok());
            QVERIFY(mine.error().code == ErrorCode::ConfigError);
            QCOMPARE(mine.error().params, theirs.error().params);
            QCOMPARE(mine.error().toString(), theirs.error().toString());
        }
        const Status second = api::checkTransforms(nlohmann::json::parse(R"([{"type": "flip"}, {"type": "resize", "size": "big"}])"));
        QVERIFY(!second.ok());
        QVERIFY2(second.error().toString().find("data.transforms[1]") != std::string::npos, second.error().toString().c_str());
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
