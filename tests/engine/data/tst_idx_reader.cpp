// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// IDX reader: small plain and gzipped files written here, other element types, every error
// message, the DataSource interface, and the real Fashion-MNIST test set when it is cached.
#include <QtTest>

#include <zlib.h>

#include <QTemporaryDir>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/data/idx_reader.h"

using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

std::vector<unsigned char> idxBytes(uint8_t type, const std::vector<uint32_t>& dims,
                                    const std::vector<unsigned char>& payload) {
    std::vector<unsigned char> b = {0, 0, type, static_cast<unsigned char>(dims.size())};
    for (uint32_t d : dims) {
        b.push_back(static_cast<unsigned char>(d >> 24));
        b.push_back(static_cast<unsigned char>(d >> 16));
        b.push_back(static_cast<unsigned char>(d >> 8));
        b.push_back(static_cast<unsigned char>(d));
    }
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

void writeFile(const std::string& path, const std::vector<unsigned char>& bytes) {
    if (path.ends_with(".gz")) {
        gzFile f = gzopen(path.c_str(), "wb");
        QVERIFY(f != nullptr);
        if (!bytes.empty())
            QCOMPARE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
                     static_cast<int>(bytes.size()));
        QCOMPARE(gzclose(f), Z_OK);
        return;
    }
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    QVERIFY(out.good());
}

std::string dataDir() {
    if (const char* env = std::getenv("KILN_DATA"); env != nullptr && *env != '\0') return env;
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + "/.cache/kiln/data";
}

// Three 2x3 images with pixels 0..17 scaled by 14 (so 0..238), labels 2, 0, 1.
std::vector<unsigned char> imagePixels() {
    std::vector<unsigned char> p;
    for (int i = 0; i < 18; ++i) p.push_back(static_cast<unsigned char>(i * 14));
    return p;
}

}  // namespace

class TestIdxReader : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

    void checkSmallSet(const InMemoryDataset& set, bool scaled) {
        QCOMPARE(set.count(), int64_t{3});
        QCOMPARE(set.size(), int64_t{3});
        const Column* image = set.column("image");
        const Column* label = set.column("label");
        QVERIFY(image != nullptr);
        QVERIFY(label != nullptr);
        QCOMPARE(image->sampleShape, (Shape{2, 3, 1}));
        QCOMPARE(label->sampleShape, Shape{});
        QCOMPARE(image->values.size(), size_t{18});
        for (int i = 0; i < 18; ++i) {
            const float expected = scaled ? static_cast<float>(i * 14) / 255.0f : static_cast<float>(i * 14);
            QCOMPARE(image->values[static_cast<size_t>(i)], expected);
        }
        QCOMPARE(label->values, (std::vector<float>{2, 0, 1}));
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const auto images = idxBytes(0x08, {3, 2, 3}, imagePixels());
        const auto labels = idxBytes(0x08, {3}, {2, 0, 1});
        writeFile(path("img"), images);
        writeFile(path("lbl"), labels);
        writeFile(path("img.gz"), images);
        writeFile(path("lbl.gz"), labels);
    }

    void plainFiles() {
        auto set = readIdx(path("img"), path("lbl"));
        QVERIFY2(set.ok(), set.ok() ? "" : set.error().toString().c_str());
        checkSmallSet(*set, true);
    }

    void gzippedFiles() {
        auto set = readIdx(path("img.gz"), path("lbl.gz"));
        QVERIFY2(set.ok(), set.ok() ? "" : set.error().toString().c_str());
        checkSmallSet(*set, true);
        // The gzip file really is compressed data, not a copy of the plain one.
        std::ifstream in(path("img.gz"), std::ios::binary);
        unsigned char head[2] = {};
        in.read(reinterpret_cast<char*>(head), 2);
        QCOMPARE(int{head[0]}, 0x1f);
        QCOMPARE(int{head[1]}, 0x8b);
    }

    void unscaledAndLimited() {
        IdxOptions options;
        options.scaleToUnit = false;
        auto set = readIdx(path("img.gz"), path("lbl"), options);
        QVERIFY(set.ok());
        checkSmallSet(*set, false);

        options.limit = 2;
        options.imageColumn = std::string("x");  // not = "x": GCC 12 -Wrestrict false positive
        options.labelColumn = std::string("y");
        auto two = readIdx(path("img"), path("lbl.gz"), options);
        QVERIFY(two.ok());
        QCOMPARE(two->count(), int64_t{2});
        QCOMPARE(two->column("x")->values.size(), size_t{12});
        QCOMPARE(two->column("y")->values, (std::vector<float>{2, 0}));
        QVERIFY(two->column("image") == nullptr);
    }

    void otherElementTypes() {
        // Big-endian float32 images with 4 dimensions (2 channels) and int16 labels.
        const std::vector<float> pixels = {0.5f, -1.25f, 3.0f, 1e-3f, 7.0f, -0.0f, 2.5f, 100.0f};
        std::vector<unsigned char> payload;
        for (float v : pixels) {
            uint32_t u = 0;
            std::memcpy(&u, &v, 4);
            for (int s = 24; s >= 0; s -= 8) payload.push_back(static_cast<unsigned char>(u >> s));
        }
        writeFile(path("f32.idx"), idxBytes(0x0D, {2, 1, 2, 2}, payload));
        writeFile(path("i16.idx"), idxBytes(0x0B, {2}, {0x01, 0x02, 0xFF, 0xFE}));
        auto set = readIdx(path("f32.idx"), path("i16.idx"));
        QVERIFY2(set.ok(), set.ok() ? "" : set.error().toString().c_str());
        QCOMPARE(set->column("image")->sampleShape, (Shape{1, 2, 2}));
        QCOMPARE(set->column("image")->values, pixels);
        QCOMPARE(set->column("label")->values, (std::vector<float>{258, -2}));

        // Signed bytes, int32 and float64 through readIdxArray.
        writeFile(path("i8.idx"), idxBytes(0x09, {3}, {0x7F, 0x80, 0xFF}));
        auto i8 = readIdxArray(path("i8.idx"));
        QVERIFY(i8.ok());
        QCOMPARE(i8->values, (std::vector<float>{127, -128, -1}));
        writeFile(path("i32.idx"), idxBytes(0x0C, {1}, {0xFF, 0xFF, 0xFF, 0xF6}));
        auto i32 = readIdxArray(path("i32.idx"));
        QVERIFY(i32.ok());
        QCOMPARE(i32->values, (std::vector<float>{-10}));
        writeFile(path("f64.idx"), idxBytes(0x0E, {1}, {0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18}));
        auto f64 = readIdxArray(path("f64.idx"));
        QVERIFY(f64.ok());
        QCOMPARE(f64->type, IdxType::F64);
        QCOMPARE(f64->values[0], 3.14159265f);
    }

    void missingFile() {
        auto set = readIdx(path("nope.gz"), path("lbl"));
        QVERIFY(!set.ok());
        QCOMPARE(set.error().code, ErrorCode::FileNotFound);
        QCOMPARE(set.error().file, path("nope.gz"));
    }

    void badMagic() {
        writeFile(path("bad.idx"), {0x50, 0x4B, 0x03, 0x04, 0, 0, 0, 0});
        auto set = readIdx(path("bad.idx"), path("lbl"));
        QVERIFY(!set.ok());
        QCOMPARE(set.error().code, ErrorCode::DataError);
        QCOMPARE(set.error().file, path("bad.idx"));
        QVERIFY2(set.error().message.find("magic 0x504B0304") != std::string::npos,
                 set.error().message.c_str());
    }

    void wrongRole() {
        // A labels file where the images belong, and the other way round.
        auto swapped = readIdx(path("lbl"), path("img"));
        QVERIFY(!swapped.ok());
        QCOMPARE(swapped.error().file, path("lbl"));
        QVERIFY(swapped.error().message.find("0x00000803") != std::string::npos);
        auto twice = readIdx(path("img"), path("img"));
        QVERIFY(!twice.ok());
        QCOMPARE(twice.error().file, path("img"));
        QVERIFY(twice.error().message.find("label array") != std::string::npos);
    }

    void truncated() {
        // Plain: header says 3 images of 6 bytes (34 bytes in all) but only 16 bytes follow the header.
        auto full = idxBytes(0x08, {3, 2, 3}, imagePixels());
        full.resize(full.size() - 2);
        writeFile(path("short.idx"), full);
        auto set = readIdx(path("short.idx"), path("lbl"));
        QVERIFY(!set.ok());
        QCOMPARE(set.error().code, ErrorCode::DataError);
        QCOMPARE(set.error().file, path("short.idx"));
        QVERIFY2(set.error().message.find("truncated at byte 32") != std::string::npos,
                 set.error().message.c_str());

        // Gzipped data that is complete but too short for its header.
        writeFile(path("short.idx.gz"), full);
        auto gz = readIdx(path("short.idx.gz"), path("lbl"));
        QVERIFY(!gz.ok());
        QVERIFY2(gz.error().message.find("truncated at byte 32") != std::string::npos,
                 gz.error().message.c_str());

        // A gzip stream cut in the middle.
        std::vector<unsigned char> big;
        for (int i = 0; i < 4000; ++i) big.push_back(static_cast<unsigned char>((i * 7919) % 251));
        writeFile(path("big.gz"), idxBytes(0x08, {1000, 2, 2}, big));
        std::ifstream in(path("big.gz"), std::ios::binary);
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        bytes.resize(bytes.size() / 2);
        std::ofstream(path("cut.gz"), std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        auto cut = readIdxArray(path("cut.gz"));
        QVERIFY(!cut.ok());
        QCOMPARE(cut.error().file, path("cut.gz"));
        QVERIFY2(cut.error().message.find("truncated at byte") != std::string::npos,
                 cut.error().message.c_str());

        // A header claiming absurd sizes is refused before anything is allocated.
        writeFile(path("huge.idx"), idxBytes(0x08, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, {1, 2, 3}));
        auto huge = readIdxArray(path("huge.idx"));
        QVERIFY(!huge.ok());
        QCOMPARE(huge.error().code, ErrorCode::DataError);
        writeFile(path("long.idx"), idxBytes(0x08, {0x00FFFFFFu, 28, 28}, {1, 2, 3}));
        auto longer = readIdxArray(path("long.idx"));
        QVERIFY(!longer.ok());
        QVERIFY(longer.error().message.find("truncated at byte 19") != std::string::npos);

        // Not even a whole magic number.
        writeFile(path("tiny.idx"), {0, 0});
        auto tiny = readIdxArray(path("tiny.idx"));
        QVERIFY(!tiny.ok());
        QVERIFY(tiny.error().message.find("truncated at byte 2") != std::string::npos);
    }

    void countMismatch() {
        writeFile(path("lbl4"), idxBytes(0x08, {4}, {1, 2, 3, 4}));
        auto set = readIdx(path("img"), path("lbl4"));
        QVERIFY(!set.ok());
        QCOMPARE(set.error().code, ErrorCode::DataError);
        QCOMPARE(set.error().file, path("lbl4"));
        QVERIFY2(set.error().message.find("3 images") != std::string::npos &&
                     set.error().message.find("4 labels") != std::string::npos,
                 set.error().message.c_str());
        // A limit does not hide the mismatch.
        IdxOptions options;
        options.limit = 1;
        QVERIFY(!readIdx(path("img"), path("lbl4"), options).ok());
    }

    void dataSourceInterface() {
        auto set = readIdx(path("img"), path("lbl"));
        QVERIFY(set.ok());
        const DataSource& source = *set;
        const auto cols = source.columns();
        QCOMPARE(cols.size(), size_t{2});
        QCOMPARE(cols[0].first, std::string("image"));
        QCOMPARE(cols[0].second, (Shape{2, 3, 1}));
        QCOMPARE(cols[1].first, std::string("label"));

        std::vector<float> image(6), label(1);
        float* out[] = {image.data(), label.data()};
        QVERIFY(source.read(1, out).ok());
        QCOMPARE(label[0], 0.0f);
        QCOMPARE(image[0], static_cast<float>(6 * 14) / 255.0f);
        QVERIFY(!source.read(3, out).ok());

        // Batches through the base-class loop and through the in-memory override agree.
        const int64_t picks[] = {2, 0, 2};
        std::vector<float> images(18), labels(3), images2(18), labels2(3);
        float* batch[] = {images.data(), labels.data()};
        float* batch2[] = {images2.data(), labels2.data()};
        QVERIFY(source.readBatch(picks, batch).ok());
        QVERIFY(source.DataSource::readBatch(picks, batch2).ok());
        QCOMPARE(labels, (std::vector<float>{1, 2, 1}));
        QCOMPARE(images, images2);
        QCOMPARE(labels, labels2);

        auto counts = classCounts(*set->column("label"));
        QVERIFY(counts.ok());
        QCOMPARE(*counts, (std::vector<int64_t>{1, 1, 1}));
    }

    void realFashionMnist() {
        const std::string dir = dataDir() + "/fashion-mnist";
        if (!std::filesystem::exists(dir + "/t10k-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not cached (run tools/fetch_data.sh)");
        auto set = readIdx(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
        QVERIFY2(set.ok(), set.ok() ? "" : set.error().toString().c_str());
        QCOMPARE(set->count(), int64_t{10000});
        const Column* image = set->column("image");
        QCOMPARE(image->sampleShape, (Shape{28, 28, 1}));
        QCOMPARE(image->values.size(), size_t{10000} * 784);
        float lo = 1.0f, hi = 0.0f;
        double sum = 0.0;
        for (float v : image->values) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            sum += v;
        }
        QCOMPARE(lo, 0.0f);
        QCOMPARE(hi, 1.0f);
        const double mean = sum / static_cast<double>(image->values.size());
        QVERIFY2(mean > 0.25 && mean < 0.33, std::to_string(mean).c_str());  // about 0.286
        auto counts = classCounts(*set->column("label"));
        QVERIFY(counts.ok());
        QCOMPARE(*counts, std::vector<int64_t>(10, 1000));
    }
};

QTEST_APPLESS_MAIN(TestIdxReader)
#include "tst_idx_reader.moc"
