// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// The streaming pipeline: determinism across worker counts, shuffle-buffer semantics, drop
// remainder, shards, bounded prefetch, cancellation and shutdown mid-epoch, bad pictures
// (skipped and listed, or fatal in strict mode), caches, statistics, TFRecord sources with
// interleaving and damaged files, and JPEG folders decoded only as far as their crop needs.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/data/example.h"
#include "engine/data/jpeg_decoder.h"
#include "engine/data/pipeline.h"
#include "engine/data/tfrecord_source.h"
#include "jpeg_samples.h"

using namespace kiln::engine;
using namespace kiln::engine::data;
namespace fs = std::filesystem;

namespace {

// Numbers only: x = [i, 2i], label = i % 3. Counts loads; may sleep per load to be slow.
class CountingSource : public SampleSource {
public:
    explicit CountingSource(int64_t n, int sleepMicros = 0) : m_n(n), m_sleep(sleepMicros) {}
    std::string kind() const override { return "counting"; }
    int64_t size() const override { return m_n; }
    std::vector<ColumnSpec> columnSpecs() const override {
        return {ColumnSpec{"x", Shape{2}, false, false, {}}, ColumnSpec{"label", Shape{}, false, false, {}}};
    }
    Status load(int64_t index, Sample& out) const override {
        ++loads;
        if (m_sleep > 0) std::this_thread::sleep_for(std::chrono::microseconds(m_sleep));
        out.index = index;
        out.origin.clear();
        out.values = {SampleValue::numbers({float(index), float(2 * index)}, Shape{2}),
                      SampleValue::scalar(float(index % 3))};
        return okStatus();
    }
    std::vector<float> labels() const override {
        std::vector<float> l;
        for (int64_t i = 0; i < m_n; ++i) l.push_back(float(i % 3));
        return l;
    }
    mutable std::atomic<int64_t> loads{0};

private:
    int64_t m_n;
    int m_sleep;
};

// 8x8 one-channel float pictures whose pixels depend on the index.
std::shared_ptr<InMemorySource> pictureSource(int64_t n) {
    Column image{"image", Shape{8, 8, 1}, {}, {}, {}};
    Column label{"label", Shape{}, {}, {}, {}};
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 64; ++k) image.values.push_back(float(i * 100 + k));
        label.values.push_back(float(i % 4));
    }
    auto data = InMemoryDataset::create(n, {image, label});
    return std::make_shared<InMemorySource>(std::move(data.value()), "table", "label", "image");
}

std::vector<Batch> drain(Pipeline& p, int epoch) {
    std::vector<Batch> out;
    if (!p.startEpoch(epoch).ok()) qFatal("startEpoch failed");
    for (;;) {
        Batch b;
        auto r = p.next(b);
        if (!r.ok()) qFatal("%s", r.error().toString().c_str());
        if (!r.value()) break;
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<int64_t> order(const std::vector<Batch>& batches) {
    std::vector<int64_t> out;
    for (const Batch& b : batches) out.insert(out.end(), b.indices.begin(), b.indices.end());
    return out;
}

std::unique_ptr<Pipeline> make(std::shared_ptr<const SampleSource> src, PipelineOptions o,
                               const char* transforms = "[]") {
    auto t = TransformList::fromJson(nlohmann::json::parse(transforms));
    if (!t.ok()) qFatal("%s", t.error().toString().c_str());
    auto p = Pipeline::create(std::move(src), std::move(t.value()), std::move(o));
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return std::move(p.value());
}

void writeFile(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << bytes;
}

std::string pngBytes(int tag) {
    cv::Mat m(5, 5, CV_8UC1, cv::Scalar(tag));
    std::vector<uchar> buf;
    cv::imencode(".png", m, buf);
    return std::string(buf.begin(), buf.end());
}

// Three TFRecord files of Examples {x: float[2] = (i, -i), label: int64 i % 5}: 5, 7 and 3 records.
std::vector<std::string> writeRecords(const fs::path& dir) {
    std::vector<std::string> files;
    int64_t i = 0;
    for (int f = 0; f < 3; ++f) {
        const std::string path = (dir / ("part-" + std::to_string(f) + ".tfrecord")).string();
        auto w = TfRecordWriter::create(path, f == 1 ? TfRecordCompression::Gzip : TfRecordCompression::None);
        if (!w.ok()) qFatal("%s", w.error().toString().c_str());
        for (int k = 0; k < (f == 0 ? 5 : f == 1 ? 7 : 3); ++k, ++i) {
            Example ex;
            ex.features["x"] = Feature::ofFloats({float(i), float(-i)});
            ex.features["label"] = Feature::ofInt64s({i % 5});
            if (!(*w)->write(encodeExample(ex)).ok()) qFatal("write");
        }
        if (!(*w)->close().ok()) qFatal("close");
        files.push_back(path);
    }
    return files;
}

std::vector<TfFeatureSpec> recordSpec() {
    return {TfFeatureSpec{"x", "x", TfFeatureSpec::Type::Float, Shape{2}},
            TfFeatureSpec{"label", "label", TfFeatureSpec::Type::Int64, Shape{}}};
}

}  // namespace

class TestPipeline : public QObject {
    Q_OBJECT

private slots:
    void sameSeedSameBatchesWhateverTheWorkers() {
        auto src = pictureSource(37);
        const char* transforms =
            R"([{"type": "random_crop", "size": 5, "padding": 1}, {"type": "flip", "vertical": true},
                                     {"type": "rotate", "degrees": 20}, {"type": "normalize", "preset": "centered"}])";
        PipelineOptions o;
        o.batchSize = 5;
        o.shuffleBuffer = 16;
        o.seed = 11;
        std::vector<std::vector<Batch>> runs;
        for (int workers : {1, 2, 4}) {
            o.workers = workers;
            auto p = make(src, o, transforms);
            QCOMPARE(p->outputShapes()[0], (Shape{5, 5, 1}));
            runs.push_back(drain(*p, 2));
        }
        for (size_t r = 1; r < runs.size(); ++r) {
            QCOMPARE(runs[r].size(), runs[0].size());
            for (size_t b = 0; b < runs[0].size(); ++b) {
                QCOMPARE(runs[r][b].indices, runs[0][b].indices);
                QCOMPARE(runs[r][b].columns, runs[0][b].columns);
            }
        }
        QCOMPARE(runs[0].size(), size_t(8));
        QCOMPARE(runs[0].back().size, int64_t(2));
        QCOMPARE(runs[0][0].names, (std::vector<std::string>{"image", "label"}));
        QCOMPARE(runs[0][0].columns[0].size(), size_t(5 * 25));
        // Labels are float class indices matching the source.
        for (const Batch& b : runs[0])
            for (int64_t k = 0; k < b.size; ++k)
                QCOMPARE(b.columns[1][size_t(k)], float(b.indices[size_t(k)] % 4));
        // Another epoch: another order and other augmentations.
        auto p = make(src, o, transforms);
        const auto other = drain(*p, 3);
        QVERIFY(order(other) != order(runs[0]));
    }

    void shuffleBufferSemantics() {
        auto src = std::make_shared<CountingSource>(100);
        PipelineOptions o;
        o.batchSize = 7;
        o.seed = 5;
        // No buffer: the source order.
        auto plain = order(drain(*make(src, o), 0));
        std::vector<int64_t> identity(100);
        std::iota(identity.begin(), identity.end(), 0);
        QCOMPARE(plain, identity);
        // A buffer of 10: a permutation where output i comes from the first i + 10 inputs.
        o.shuffleBuffer = 10;
        auto p = make(src, o);
        auto shuffled = order(drain(*p, 0));
        QVERIFY(shuffled != identity);
        for (size_t i = 0; i < shuffled.size(); ++i) QVERIFY(shuffled[i] <= int64_t(i) + 9);
        auto sorted = shuffled;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(sorted, identity);
        // Same epoch again: the same order; the next epoch: another one.
        QCOMPARE(order(drain(*p, 0)), shuffled);
        QVERIFY(order(drain(*p, 1)) != shuffled);
        // A buffer as large as the data: index 99 may come first.
        o.shuffleBuffer = 1000;
        auto full = make(src, o);
        bool lateEarly = false;
        for (int e = 0; e < 5; ++e) lateEarly = lateEarly || order(drain(*full, e))[0] > 50;
        QVERIFY(lateEarly);
        // Without reshuffling every epoch has the first epoch's order.
        o.reshuffleEachEpoch = false;
        auto fixed = make(src, o);
        QCOMPARE(order(drain(*fixed, 4)), order(drain(*fixed, 0)));
    }

    void dropRemainder() {
        auto src = std::make_shared<CountingSource>(23);
        PipelineOptions o;
        o.batchSize = 5;
        auto keep = make(src, o);
        auto kept = drain(*keep, 0);
        QCOMPARE(kept.size(), size_t(5));
        QCOMPARE(kept.back().size, int64_t(3));
        QCOMPARE(kept.back().columns[0].size(), size_t(6));
        QCOMPARE(keep->batchesPerEpoch(), int64_t(5));
        o.dropRemainder = true;
        auto drop = make(src, o);
        auto dropped = drain(*drop, 0);
        QCOMPARE(dropped.size(), size_t(4));
        for (const Batch& b : dropped) QCOMPARE(b.size, int64_t(5));
        QCOMPARE(drop->batchesPerEpoch(), int64_t(4));
    }

    void shardsAreDisjointAndComplete() {
        auto src = std::make_shared<CountingSource>(50);
        PipelineOptions o;
        o.batchSize = 4;
        o.shuffleBuffer = 8;
        o.indices.clear();
        for (int64_t i = 49; i >= 3; --i) o.indices.push_back(i);  // a split: 47 indices
        std::multiset<int64_t> all;
        int64_t expected = 0;
        for (int s = 0; s < 3; ++s) {
            o.shardCount = 3;
            o.shardIndex = s;
            auto p = make(src, o);
            expected += p->samplesPerEpoch();
            for (int64_t i : order(drain(*p, 1))) all.insert(i);
        }
        QCOMPARE(expected, int64_t(47));
        QCOMPARE(all.size(), size_t(47));
        QCOMPARE(std::set<int64_t>(all.begin(), all.end()).size(), size_t(47));  // disjoint
        QCOMPARE(*all.begin(), int64_t(3));
        QCOMPARE(*all.rbegin(), int64_t(49));
    }

    void prefetchKeepsMemoryBounded() {
        auto src = std::make_shared<CountingSource>(100000);
        PipelineOptions o;
        o.batchSize = 4;
        o.prefetch = 2;
        o.workers = 2;
        auto p = make(src, o);
        const int64_t before = src->loads;  // the probe
        QVERIFY(p->startEpoch(0).ok());
        // Nothing consumed: once the queue is full, wait a little more; then at most prefetch
        // batches, one being assembled and the ring (2*2+2) may have been loaded.
        QTRY_COMPARE_WITH_TIMEOUT(p->stats().queuedBatches, int64_t(2), 5000);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        auto st = p->stats();
        QVERIFY(st.queuedBatches <= 2);
        QVERIFY2(st.samplesLoaded <= 2 * 4 + 4 + 6, std::to_string(st.samplesLoaded).c_str());
        QVERIFY(src->loads - before <= 2 * 4 + 4 + 6);
        QCOMPARE(st.queuedBatches, int64_t(2));
        // Consuming moves it on by about as much as is taken.
        Batch b;
        for (int i = 0; i < 10; ++i) QVERIFY(p->next(b).value());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        st = p->stats();
        QVERIFY(st.samplesLoaded <= 10 * 4 + 2 * 4 + 4 + 6);
        QCOMPARE(st.samples, int64_t(40));
    }

    void cancelAndShutdownMidEpoch() {
        auto src = std::make_shared<CountingSource>(100000, 500);
        PipelineOptions o;
        o.batchSize = 8;
        o.workers = 2;
        auto p = make(src, o);
        QVERIFY(p->startEpoch(0).ok());
        Batch b;
        QVERIFY(p->next(b).value());
        // Cancel from another thread while the consumer may be waiting.
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            p->cancel();
        });
        const auto t0 = std::chrono::steady_clock::now();
        Result<bool> r = true;
        while (r.ok() && r.value()) r = p->next(b);
        canceller.join();
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
        // A new epoch after cancelling works.
        QVERIFY(p->startEpoch(1).ok());
        QVERIFY(p->next(b).value());
        QCOMPARE(b.size, int64_t(8));
        // Destroying mid-epoch joins the threads without waiting for the epoch.
        const auto t1 = std::chrono::steady_clock::now();
        p.reset();
        QVERIFY(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(2));
        // Restarting an epoch mid-way also stops the old one cleanly.
        auto q = make(src, o);
        for (int e = 0; e < 5; ++e) {
            QVERIFY(q->startEpoch(e).ok());
            QVERIFY(q->next(b).value());
        }
    }

    void badPicturesSkippedListedOrFatal() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (int i = 0; i < 6; ++i)
            writeFile(root / (i % 2 ? "b" : "a") / ("good" + std::to_string(i) + ".png"), pngBytes(i * 10));
        cv::Mat big(64, 64, CV_8UC3);
        cv::randu(big, 0, 255);
        std::vector<uchar> jpeg;
        cv::imencode(".jpg", big, jpeg);
        writeFile(root / "a" / "truncated.jpg",
                  std::string(jpeg.begin(), jpeg.begin() + long(jpeg.size() / 2)));
        writeFile(root / "b" / "zero.png", "");
        writeFile(root / "b" / "text.jpg", "this is a text file with a picture's name\n");
        auto src = ImageFolderSource::open(root.string());
        QVERIFY(src.ok());
        QCOMPARE((*src)->size(), int64_t(9));
        PipelineOptions o;
        o.batchSize = 4;
        o.workers = 2;
        auto p = make(*src, o, R"([{"type": "decode", "channels": 1}])");
        auto batches = drain(*p, 0);
        int64_t delivered = 0;
        for (const Batch& b : batches) delivered += b.size;
        QCOMPARE(delivered, int64_t(6));
        QCOMPARE(batches.size(), size_t(2));  // full batches: the bad ones are left out, not holes
        QCOMPARE(p->stats().skipped, int64_t(3));
        auto bad = p->badSamples();
        QCOMPARE(bad.size(), size_t(3));
        std::set<std::string> names;
        for (const auto& b : bad) {
            names.insert(fs::path(b.path).filename().string());
            QVERIFY(!b.reason.empty());
        }
        QCOMPARE(names, (std::set<std::string>{"truncated.jpg", "zero.png", "text.jpg"}));
        // A second epoch lists them once.
        drain(*p, 1);
        QCOMPARE(p->badSampleCount(), int64_t(3));
        // Strict: the first bad file stops the pipeline with an error naming it.
        o.strict = true;
        auto strict = make(*src, o, R"([{"type": "decode", "channels": 1}])");
        QVERIFY(strict->startEpoch(0).ok());
        Batch b;
        Result<bool> r = true;
        int64_t before = 0;
        while (r.ok() && r.value()) {
            r = strict->next(b);
            if (r.ok() && r.value()) before += b.size;
        }
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::DataError);
        QVERIFY(r.error().file.ends_with("truncated.jpg"));  // class a comes first, after good0/2/4
        QCOMPARE(before, int64_t(0));                        // the failure sits inside the first batch
    }

    void jpegFolderCropsLikeFullDecodeWhateverTheWorkers() {
        // Colour and grey JPEG files of odd sizes, written by OpenCV.
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (int i = 0; i < 22; ++i) {
            const cv::Mat pic =
                kiln::test::photoLike(40 + 3 * i, 33 + (5 * i) % 29, i % 4 == 3 ? 1 : 3, uint64_t(i));
            const fs::path p = root / ("c" + std::to_string(i % 3)) / ("p" + std::to_string(i) + ".jpg");
            fs::create_directories(p.parent_path());
            QVERIFY(cv::imwrite(p.string(), pic));
        }
        auto src = ImageFolderSource::open(root.string());
        QVERIFY(src.ok());
        const char* transforms =
            R"([{"type": "decode", "channels": 3}, {"type": "random_crop", "size": [30, 32]}, {"type": "flip"},
                {"type": "normalize", "preset": "imagenet"}])";
        PipelineOptions o;
        o.batchSize = 4;
        o.shuffleBuffer = 8;
        o.seed = 5;
        std::vector<std::vector<Batch>> runs;
        const JpegPathCounts before = jpegPathCounts();
        for (int workers : {1, 2}) {
            o.workers = workers;
            auto p = make(*src, o, transforms);
            QCOMPARE(p->outputShapes()[0], (Shape{30, 32, 3}));
            runs.push_back(drain(*p, 0));
            runs.push_back(drain(*p, 1));
        }
        // Each epoch decoded the 22 crops alone (the probe adds one per pipeline).
        QCOMPARE(jpegPathCounts().cropped - before.cropped, int64_t(2 * (2 * 22 + 1)));
        QCOMPARE(jpegPathCounts().fallback, before.fallback);
        // A memory cache keeps the pictures as decoded before the random crop: the crop then runs
        // on whole pictures. Its batches are the reference.
        o.cache = PipelineOptions::Cache::Memory;
        auto cached = make(*src, o, transforms);
        const std::vector<Batch> reference[2] = {drain(*cached, 0), drain(*cached, 1)};
        for (size_t r = 0; r < runs.size(); ++r) {
            const std::vector<Batch>& want = reference[r % 2];
            QCOMPARE(runs[r].size(), want.size());
            for (size_t b = 0; b < want.size(); ++b) {
                QCOMPARE(runs[r][b].indices, want[b].indices);
                QCOMPARE(runs[r][b].columns, want[b].columns);
            }
        }
        QVERIFY(order(reference[0]) != order(reference[1]));
    }

    void badJpegsReportedWhenOnlyACropIsDecoded() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        const cv::Mat pic = kiln::test::photoLike(64, 160, 3, 8);
        fs::create_directories(root / "a");
        for (int i = 0; i < 5; ++i)
            QVERIFY(cv::imwrite((root / "a" / ("good" + std::to_string(i) + ".jpg")).string(),
                                kiln::test::photoLike(48 + i, 40, 3, uint64_t(i))));
        const std::string whole = kiln::test::cvJpeg(pic);
        // Cut after two thirds: every row of a crop near the top is there, yet the file is bad.
        writeFile(root / "a" / "truncated.jpg", whole.substr(0, whole.size() * 2 / 3));
        writeFile(root / "b" / "text.jpg", "this is a text file with a picture's name\n");
        // Damaged near the end: OpenCV decodes it with a warning, and so it is kept.
        const std::string damaged = kiln::test::damageJpeg(whole, 0.9);
        writeFile(root / "b" / "damaged.jpg", damaged);
        auto src = ImageFolderSource::open(root.string());
        QVERIFY(src.ok());
        QCOMPARE((*src)->size(), int64_t(8));
        PipelineOptions o;
        o.batchSize = 3;
        o.workers = 2;
        const char* transforms = R"([{"type": "center_crop", "size": 16}])";
        auto p = make(*src, o, transforms);
        auto batches = drain(*p, 0);
        int64_t delivered = 0;
        for (const Batch& b : batches) delivered += b.size;
        QCOMPARE(delivered, int64_t(6));
        std::set<std::string> names;
        for (const auto& b : p->badSamples()) names.insert(fs::path(b.path).filename().string());
        QCOMPARE(names, (std::set<std::string>{"truncated.jpg", "text.jpg"}));
        // The damaged file's crop is the one OpenCV's full decode gives.
        auto full = decodeImage(damaged, "damaged.jpg");
        QVERIFY(full.ok());
        const cv::Mat expected = full.value()(cv::Rect((64 - 16) / 2, (160 - 16) / 2, 16, 16));
        bool found = false;
        for (const Batch& b : batches)
            for (int64_t k = 0; k < b.size; ++k) {
                if ((*src)->origin(b.indices[size_t(k)]).find("damaged.jpg") == std::string::npos) continue;
                found = true;
                const float* got = b.columns[0].data() + k * 16 * 16 * 3;
                for (int r = 0; r < 16; ++r)
                    for (int c = 0; c < 16 * 3; ++c)
                        QCOMPARE(got[r * 48 + c], float(expected.ptr<uchar>(r)[c]));
            }
        QVERIFY(found);
        // Strict: the truncated file stops the pipeline with an error naming it.
        o.strict = true;
        o.workers = 1;
        auto strict = make(*src, o, transforms);
        QVERIFY(strict->startEpoch(0).ok());
        Batch b;
        Result<bool> r = true;
        while (r.ok() && r.value()) r = strict->next(b);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::DataError);
        QVERIFY(r.error().file.ends_with("truncated.jpg"));
    }

    void brokenCsvTensorStopsThePipeline() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (int i = 0; i < 5; ++i)
            writeFile(root / ("t" + std::to_string(i) + ".csv"), i == 3 ? "1,2\n3,oops\n" : "1,2\n3,4\n");
        writeFile(root / "index.csv", "t,y\nt0.csv,0\nt1.csv,1\nt2.csv,0\nt3.csv,1\nt4.csv,0\n");
        auto src = CsvIndexSource::open((root / "index.csv").string());
        QVERIFY(src.ok());
        PipelineOptions o;
        o.batchSize = 2;
        auto p = make(*src, o);
        QVERIFY(p->startEpoch(0).ok());
        Batch b;
        QVERIFY(p->next(b).value());  // samples 0, 1
        auto r = p->next(b);          // sample 3 is broken
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::ParseError);
        QVERIFY(r.error().file.ends_with("t3.csv"));
        QCOMPARE(r.error().line, 2);
        QCOMPARE(r.error().column, 2);
    }

    void cachesGiveTheSameBatches() {
        auto src = pictureSource(20);
        const char* transforms =
            R"([{"type": "resize", "size": 4, "interpolation": "area"}, {"type": "flip"}])";
        PipelineOptions o;
        o.batchSize = 6;
        o.seed = 2;
        o.shuffleBuffer = 5;
        auto plain = make(src, o, transforms);
        for (auto mode : {PipelineOptions::Cache::Memory, PipelineOptions::Cache::File}) {
            o.cache = mode;
            auto cached = make(src, o, transforms);
            for (int e = 0; e < 2; ++e) {
                const auto a = drain(*plain, e), b = drain(*cached, e);
                QCOMPARE(a.size(), b.size());
                for (size_t i = 0; i < a.size(); ++i) QCOMPARE(a[i].columns, b[i].columns);
                QCOMPARE(cached->stats().cacheHits, e == 0 ? int64_t(0) : int64_t(20));
            }
        }
    }

    void statsTellWhoWaits() {
        // A slow source and an eager consumer: the consumer waits most of the time.
        auto slow = std::make_shared<CountingSource>(60, 3000);
        PipelineOptions o;
        o.batchSize = 6;
        o.workers = 1;
        auto p = make(slow, o);
        drain(*p, 0);
        auto st = p->stats();
        QCOMPARE(st.samples, int64_t(60));
        QCOMPARE(st.batches, int64_t(10));
        QVERIFY(st.samplesPerSecond > 0 && st.samplesPerSecond < 1000);
        QVERIFY2(st.waitFraction > 0.5, std::to_string(st.waitFraction).c_str());
        // A fast source and a slow consumer: almost no waiting.
        auto fast = std::make_shared<CountingSource>(60);
        auto q = make(fast, o);
        QVERIFY(q->startEpoch(0).ok());
        Batch b;
        while (q->next(b).value()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        QVERIFY2(q->stats().waitFraction < 0.2, std::to_string(q->stats().waitFraction).c_str());
    }

    void recordFilesInterleavedShardedShuffled() {
        QTemporaryDir tmp;
        const auto files = writeRecords(tmp.path().toStdString());
        // Compression is per source: put the gzip file in its own source for this check.
        auto plainSrc = TfRecordSource::open({files[0], files[2]}, recordSpec());
        QVERIFY(plainSrc.ok());
        PipelineOptions o;
        o.batchSize = 3;
        o.cycleLength = 2;
        auto p = Pipeline::create(std::shared_ptr<const RecordSource>(*plainSrc), TransformList(), o);
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
        auto batches = drain(**p, 0);
        std::vector<float> xs;
        for (const Batch& b : batches)
            for (int64_t k = 0; k < b.size; ++k) xs.push_back(b.columns[0][size_t(2 * k)]);
        // Round-robin over two files: 0,12,1,13,2,14,3,4 (file 0 holds 0..4, file 2 holds 12..14).
        QCOMPARE(xs, (std::vector<float>{0, 12, 1, 13, 2, 14, 3, 4}));
        QCOMPARE(batches[0].columns[1], (std::vector<float>{0, 2, 1}));  // labels i % 5

        // The gzip file, auto-detected, with shuffle and shards; same result with 1 and 3 workers.
        auto gz = TfRecordSource::open({files[1]}, recordSpec(), TfRecordSource::guessCompression(files[1]));
        QVERIFY(gz.ok());
        std::multiset<float> seen;
        std::vector<std::vector<float>> perWorkers;
        for (int workers : {1, 3}) {
            std::vector<float> all;
            for (int s = 0; s < 2; ++s) {
                o.shardCount = 2;
                o.shardIndex = s;
                o.shuffleBuffer = 4;
                o.workers = workers;
                auto q = Pipeline::create(std::shared_ptr<const RecordSource>(*gz), TransformList(), o);
                QVERIFY(q.ok());
                for (const Batch& b : drain(**q, 1))
                    for (int64_t k = 0; k < b.size; ++k) all.push_back(b.columns[0][size_t(2 * k)]);
            }
            perWorkers.push_back(all);
        }
        QCOMPARE(perWorkers[0], perWorkers[1]);
        auto sorted = perWorkers[0];
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(sorted, (std::vector<float>{5, 6, 7, 8, 9, 10, 11}));
    }

    void damagedRecordFileNamesFileAndOffset() {
        QTemporaryDir tmp;
        const auto files = writeRecords(tmp.path().toStdString());
        // Flip a payload byte of the third record of file 0.
        std::string bytes;
        {
            std::ifstream in(files[0], std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        const size_t recordSize = bytes.size() / 5;
        bytes[2 * recordSize + 14] ^= 0x55;
        writeFile(files[0], bytes);
        auto src = TfRecordSource::open({files[0]}, recordSpec());
        QVERIFY(src.ok());
        PipelineOptions o;
        o.batchSize = 1;
        auto p = Pipeline::create(std::shared_ptr<const RecordSource>(*src), TransformList(), o);
        QVERIFY(p.ok());
        QVERIFY((*p)->startEpoch(0).ok());
        Batch b;
        QVERIFY((*p)->next(b).value());
        QVERIFY((*p)->next(b).value());
        auto r = (*p)->next(b);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::DataError);
        QCOMPARE(r.error().file, files[0]);
        QCOMPARE(r.error().param("offset"), std::to_string(2 * recordSize));
        // A feature of the wrong length is an error naming the feature.
        auto wrong =
            TfRecordSource::open({files[2]}, {TfFeatureSpec{"x", "x", TfFeatureSpec::Type::Float, Shape{3}}});
        QVERIFY(wrong.ok());
        auto w = Pipeline::create(std::shared_ptr<const RecordSource>(*wrong), TransformList(), o);
        QVERIFY(!w.ok());
        QVERIFY(w.error().message.find("\"x\"") != std::string::npos);
    }

    void pictureRecordsDecodeInWorkers() {
        QTemporaryDir tmp;
        const std::string path = (fs::path(tmp.path().toStdString()) / "pics.tfrecord").string();
        {
            auto w = TfRecordWriter::create(path);
            QVERIFY(w.ok());
            for (int i = 0; i < 10; ++i) {
                Example ex;
                ex.features["image"] = Feature::ofBytes({i == 4 ? std::string("garbage") : pngBytes(i)});
                ex.features["label"] = Feature::ofInt64s({i % 2});
                QVERIFY((*w)->write(encodeExample(ex)).ok());
            }
            QVERIFY((*w)->close().ok());
        }
        auto spec = TfRecordSource::inferFeatures(path, TfRecordCompression::None);
        QVERIFY(spec.ok());
        QCOMPARE(spec->size(), size_t(2));
        QCOMPARE(int((*spec)[0].type), int(TfFeatureSpec::Type::Image));
        auto src = TfRecordSource::open({path}, *spec);
        QVERIFY(src.ok());
        PipelineOptions o;
        o.batchSize = 4;
        auto p = Pipeline::create(std::shared_ptr<const RecordSource>(*src), TransformList(), o);
        QVERIFY(p.ok());
        QCOMPARE((*p)->outputShapes()[0], (Shape{5, 5, 1}));
        auto batches = drain(**p, 0);
        std::vector<float> firstPixels;
        for (const Batch& b : batches)
            for (int64_t k = 0; k < b.size; ++k) firstPixels.push_back(b.columns[0][size_t(k * 25)]);
        QCOMPARE(firstPixels, (std::vector<float>{0, 1, 2, 3, 5, 6, 7, 8, 9}));
        QCOMPARE((*p)->badSampleCount(), int64_t(1));
        QVERIFY((*p)->badSamples()[0].path.find("pics.tfrecord@") != std::string::npos);
    }

    void optionsFromJson() {
        auto o = PipelineOptions::fromJson(nlohmann::json::parse(
            R"({"batch_size": 16, "workers": 3, "prefetch": 4, "shuffle_buffer": 1000, "seed": 9, "shard": {"count": 4, "index": 1},
                "cache": "memory", "drop_remainder": true, "strict": true, "cycle_length": 2, "format": "folder"})"));
        QVERIFY(o.ok());
        QCOMPARE(o->batchSize, int64_t(16));
        QCOMPARE(o->workers, 3);
        QCOMPARE(o->prefetch, 4);
        QCOMPARE(o->shuffleBuffer, int64_t(1000));
        QCOMPARE(o->seed, uint64_t(9));
        QCOMPARE(o->shardCount, 4);
        QCOMPARE(o->shardIndex, 1);
        QVERIFY(o->cache == PipelineOptions::Cache::Memory);
        QVERIFY(o->dropRemainder && o->strict);
        auto bad = PipelineOptions::fromJson(nlohmann::json::parse(R"({"workers": 0})"));
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().param("field"), std::string("data.workers"));
        auto shard =
            PipelineOptions::fromJson(nlohmann::json::parse(R"({"shard": {"count": 2, "index": 2}})"));
        QVERIFY(!shard.ok());
        QCOMPARE(shard.error().param("field"), std::string("data.shard"));
    }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
