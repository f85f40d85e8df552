// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_data
// TFRecord framing: CRC32C known answers (hardware and table paths), exact record bytes, round
// trips uncompressed / ZLIB / GZIP, seeking back, and named errors for corrupt or cut files.
#include <QtTest>

#include <QTemporaryDir>

#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/data/example.h"
#include "engine/data/tfrecord.h"

using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string hex(const std::string& s) {
    static const char* d = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

// Payloads of many sizes, including empty ones and one larger than the 256 KiB buffers.
std::vector<std::string> payloads() {
    std::mt19937 gen(7);
    std::vector<std::string> out;
    std::vector<size_t> sizes = {0, 1, 7, 8, 100, 4095, 0, 300000, 12, 65536};
    for (int i = 0; i < 200; ++i) sizes.push_back(gen() % 2000);
    for (size_t n : sizes) {
        std::string s(n, '\0');
        for (auto& c : s) c = static_cast<char>(gen() & 0xFF);
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::string> readAll(const std::string& path, TfRecordCompression c) {
    auto r = TfRecordReader::open(path, c);
    if (!r.ok()) qFatal("open: %s", r.error().toString().c_str());
    std::vector<std::string> out;
    std::string rec;
    for (;;) {
        auto more = (*r)->next(rec);
        if (!more.ok()) qFatal("next: %s", more.error().toString().c_str());
        if (!*more) break;
        out.push_back(rec);
    }
    return out;
}

}  // namespace

class TstTfRecord : public QObject {
    Q_OBJECT
private slots:
    void crcKnownAnswers() {
        QCOMPARE(crc32c("123456789"), 0xE3069283u);
        QCOMPARE(crc32cSoftware("123456789", 9), 0xE3069283u);
        std::string zeros(32, '\0');
        QCOMPARE(crc32c(zeros), 0x8A9136AAu);
        QCOMPARE(crc32cSoftware(zeros.data(), zeros.size()), 0x8A9136AAu);
        QCOMPARE(crc32c(""), 0u);
        // A real Event{file_version: "CRC test, one two"} payload and its masked CRC.
        QCOMPARE(maskCrc32c(crc32c(std::string("\x1a\x11" "CRC test, one two"))), 0x5794D08Au);
        QCOMPARE(unmaskCrc32c(maskCrc32c(0x12345678u)), 0x12345678u);
        // Empty payload framing constants.
        char len[8] = {};
        QCOMPARE(maskCrc32c(crc32c(len, 8)), 0x07980329u);
        QCOMPARE(maskCrc32c(0), 0xA282EAD8u);
    }

    void crcPathsAgreeAndExtend() {
        std::mt19937 gen(1);
        std::string buf(100003, '\0');
        for (auto& c : buf) c = static_cast<char>(gen() & 0xFF);
        for (size_t n : {0u, 1u, 3u, 8u, 9u, 15u, 64u, 1000u, 100003u})
            QCOMPARE(crc32c(buf.data(), n), crc32cSoftware(buf.data(), n));
        for (size_t split : {1u, 5u, 8u, 4097u}) {
            uint32_t a = crc32c(buf.data(), split);
            QCOMPARE(crc32c(buf.data() + split, buf.size() - split, a), crc32c(buf.data(), buf.size()));
        }
    }

    void crcThroughput() {
        std::string buf(64 << 20, 'x');
        auto t0 = std::chrono::steady_clock::now();
        uint32_t c = crc32c(buf);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        auto t1 = std::chrono::steady_clock::now();
        uint32_t c2 = crc32cSoftware(buf.data(), buf.size());
        double s2 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
        QCOMPARE(c, c2);
        qInfo("crc32c: %.2f GB/s (table path %.2f GB/s)", buf.size() / s / 1e9, buf.size() / s2 / 1e9);
        QVERIFY(buf.size() / s > 0.3e9);
    }

    void exactRecordBytes() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("x.tfrecord").toStdString();
        Example ex;
        ex.features["x"] = Feature::ofFloats({1.0f});
        {
            auto w = TfRecordWriter::create(path);
            QVERIFY(w.ok());
            QVERIFY((*w)->write(encodeExample(ex)).ok());
            QVERIFY((*w)->close().ok());
        }
        QCOMPARE(QString::fromStdString(hex(readFile(path))),
                 QStringLiteral("1100000000000000" "9D6DB52E" "0A0F0A0D0A0178120812060A040000803F" "FCE1BB1B"));
    }

    void roundTrip_data() {
        QTest::addColumn<int>("compression");
        QTest::newRow("none") << static_cast<int>(TfRecordCompression::None);
        QTest::newRow("zlib") << static_cast<int>(TfRecordCompression::Zlib);
        QTest::newRow("gzip") << static_cast<int>(TfRecordCompression::Gzip);
    }
    void roundTrip() {
        QFETCH(int, compression);
        auto c = static_cast<TfRecordCompression>(compression);
        QTemporaryDir dir;
        const std::string path = dir.filePath("r.tfrecord").toStdString();
        auto data = payloads();
        int64_t expectedPos = 0;
        {
            auto w = TfRecordWriter::create(path, c);
            QVERIFY(w.ok());
            for (const auto& p : data) {
                QVERIFY((*w)->write(p).ok());
                expectedPos += kTfRecordOverhead + static_cast<int64_t>(p.size());
            }
            QCOMPARE((*w)->records(), static_cast<int64_t>(data.size()));
            QCOMPARE((*w)->position(), expectedPos);
            QVERIFY((*w)->close().ok());
        }
        std::string raw = readFile(path);
        if (c == TfRecordCompression::Gzip) {
            QCOMPARE(static_cast<uint8_t>(raw[0]), uint8_t{0x1F});
            QCOMPARE(static_cast<uint8_t>(raw[1]), uint8_t{0x8B});
        } else if (c == TfRecordCompression::Zlib) {
            QCOMPARE(static_cast<uint8_t>(raw[0]), uint8_t{0x78});
        } else {
            QCOMPARE(static_cast<int64_t>(raw.size()), expectedPos);
        }
        if (c != TfRecordCompression::None) QVERIFY(static_cast<int64_t>(raw.size()) != expectedPos);
        QCOMPARE(readAll(path, c), data);
        // zlib's own gzip reader sees exactly the uncompressed framing.
        if (c == TfRecordCompression::Gzip) {
            gzFile gz = gzopen(path.c_str(), "rb");
            std::string plain(static_cast<size_t>(expectedPos) + 10, '\0');
            int n = gzread(gz, plain.data(), static_cast<unsigned>(plain.size()));
            gzclose(gz);
            QCOMPARE(static_cast<int64_t>(n), expectedPos);
        }
    }

    void flushMakesRecordsVisible() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("f.tfrecord.gz").toStdString();
        auto w = TfRecordWriter::create(path, TfRecordCompression::Gzip);
        QVERIFY(w.ok());
        QVERIFY((*w)->write("first").ok());
        QVERIFY((*w)->write("second").ok());
        QVERIFY((*w)->flush().ok());
        // The stream is not finished yet, but both records can be read; then the reader reports
        // the unfinished stream as a truncated file.
        auto r = TfRecordReader::open(path, TfRecordCompression::Gzip);
        QVERIFY(r.ok());
        std::string rec;
        QVERIFY(*(*r)->next(rec));
        QCOMPARE(rec, std::string("first"));
        QVERIFY(*(*r)->next(rec));
        QCOMPARE(rec, std::string("second"));
        auto end = (*r)->next(rec);
        QVERIFY(!end.ok());
        QVERIFY(QString::fromStdString(end.error().message).contains(QStringLiteral("truncated")));
        QVERIFY((*w)->close().ok());
        QCOMPARE(readAll(path, TfRecordCompression::Gzip).size(), size_t{2});
    }

    void seekBack_data() { roundTrip_data(); }
    void seekBack() {
        QFETCH(int, compression);
        auto c = static_cast<TfRecordCompression>(compression);
        QTemporaryDir dir;
        const std::string path = dir.filePath("s.tfrecord").toStdString();
        auto data = payloads();
        {
            auto w = TfRecordWriter::create(path, c);
            for (const auto& p : data) QVERIFY((*w)->write(p).ok());
        }
        auto r = TfRecordReader::open(path, c);
        QVERIFY(r.ok());
        std::string rec;
        for (int i = 0; i < 9; ++i) QVERIFY(*(*r)->next(rec));
        const int64_t pos = (*r)->position();
        const int64_t index = (*r)->recordIndex();
        QCOMPARE(index, int64_t{9});
        std::vector<std::string> rest;
        while (*(*r)->next(rec)) rest.push_back(rec);
        QCOMPARE(rest.size(), data.size() - 9);
        QVERIFY((*r)->seek(pos, index).ok());
        QCOMPARE((*r)->recordIndex(), int64_t{9});
        std::vector<std::string> again;
        while (*(*r)->next(rec)) again.push_back(rec);
        QCOMPARE(again, rest);
        // A fresh reader seeking forward lands on the same record.
        auto r2 = TfRecordReader::open(path, c);
        QVERIFY((*r2)->seek(pos, index).ok());
        QVERIFY(*(*r2)->next(rec));
        QCOMPARE(rec, data[9]);
    }

    void missingFile() {
        auto r = TfRecordReader::open("/nonexistent/dir/none.tfrecord");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::FileNotFound);
        QVERIFY(QString::fromStdString(r.error().message).contains(QStringLiteral("/nonexistent/dir/none.tfrecord")));
        QCOMPARE(r.error().file, std::string("/nonexistent/dir/none.tfrecord"));
        auto w = TfRecordWriter::create("/nonexistent/dir/out.tfrecord");
        QVERIFY(!w.ok());
        QCOMPARE(w.error().code, ErrorCode::FileWrite);
    }

    void corruptPayloadNamesOffset() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("c.tfrecord").toStdString();
        {
            auto w = TfRecordWriter::create(path);
            QVERIFY((*w)->write("aaaaaaaa").ok());   // offset 0, 24 bytes
            QVERIFY((*w)->write("bbbbbbbbbb").ok()); // offset 24
            QVERIFY((*w)->write("cc").ok());
        }
        std::string raw = readFile(path);
        raw[24 + 12 + 3] ^= 0x01;  // a payload byte of the second record
        writeFile(path, raw);
        auto r = TfRecordReader::open(path);
        std::string rec;
        QVERIFY(*(*r)->next(rec));
        auto bad = (*r)->next(rec);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code, ErrorCode::DataError);
        QCOMPARE(bad.error().param("offset"), std::string("24"));
        QCOMPARE(bad.error().file, path);
        const QString msg = QString::fromStdString(bad.error().message);
        QVERIFY2(msg.contains(QString::fromStdString(path)) && msg.contains(QStringLiteral("offset 24")) &&
                     msg.contains(QStringLiteral("CRC")), qPrintable(msg));
        // Without payload verification the record comes back as stored.
        auto r2 = TfRecordReader::open(path);
        (*r2)->setVerifyPayload(false);
        QVERIFY(*(*r2)->next(rec));
        QVERIFY(*(*r2)->next(rec));
        QCOMPARE(rec.size(), size_t{10});

        // A damaged length field fails its own CRC.
        raw = readFile(path);
        raw[24 + 1] = 0x7F;
        writeFile(path, raw);
        auto r3 = TfRecordReader::open(path);
        QVERIFY(*(*r3)->next(rec));
        auto badLen = (*r3)->next(rec);
        QVERIFY(!badLen.ok());
        QVERIFY(QString::fromStdString(badLen.error().message).contains(QStringLiteral("length")));
        QCOMPARE(badLen.error().param("offset"), std::string("24"));
    }

    void truncatedNamesOffset_data() {
        QTest::addColumn<int>("cut");
        QTest::addColumn<QString>("what");
        QTest::newRow("in header") << 24 + 5 << QStringLiteral("header");
        QTest::newRow("in data") << 24 + 12 + 4 << QStringLiteral("data");
        QTest::newRow("in crc") << 24 + 12 + 10 + 2 << QStringLiteral("CRC");
    }
    void truncatedNamesOffset() {
        QFETCH(int, cut);
        QFETCH(QString, what);
        QTemporaryDir dir;
        const std::string path = dir.filePath("t.tfrecord").toStdString();
        {
            auto w = TfRecordWriter::create(path);
            QVERIFY((*w)->write("aaaaaaaa").ok());
            QVERIFY((*w)->write("bbbbbbbbbb").ok());
        }
        writeFile(path, readFile(path).substr(0, static_cast<size_t>(cut)));
        auto r = TfRecordReader::open(path);
        std::string rec;
        QVERIFY(*(*r)->next(rec));
        auto bad = (*r)->next(rec);
        QVERIFY(!bad.ok());
        const QString msg = QString::fromStdString(bad.error().message);
        QVERIFY2(msg.contains(QStringLiteral("truncated")) && msg.contains(what) && msg.contains(QStringLiteral("offset 24")) &&
                     msg.contains(QString::fromStdString(path)), qPrintable(msg));
    }

    void truncatedCompressed() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("t.tfrecord.gz").toStdString();
        {
            auto w = TfRecordWriter::create(path, TfRecordCompression::Gzip);
            for (const auto& p : payloads()) QVERIFY((*w)->write(p).ok());
        }
        std::string raw = readFile(path);
        writeFile(path, raw.substr(0, raw.size() / 2));
        auto r = TfRecordReader::open(path, TfRecordCompression::Gzip);
        std::string rec;
        Result<bool> res = true;
        int n = 0;
        while ((res = (*r)->next(rec)).ok() && *res) ++n;
        QVERIFY(!res.ok());
        QVERIFY(n > 0);
        QVERIFY(QString::fromStdString(res.error().message).contains(QStringLiteral("truncated")));
        QCOMPARE(res.error().file, path);
        // Garbage in place of compressed data is reported too.
        writeFile(path, std::string(1000, 'z'));
        auto g = TfRecordReader::open(path, TfRecordCompression::Zlib);
        auto gr = (*g)->next(rec);
        QVERIFY(!gr.ok());
        QVERIFY(QString::fromStdString(gr.error().message).contains(QStringLiteral("compressed")));
    }

    void compressionNames() {
        QCOMPARE(*parseTfRecordCompression(""), TfRecordCompression::None);
        QCOMPARE(*parseTfRecordCompression("gzip"), TfRecordCompression::Gzip);
        QCOMPARE(*parseTfRecordCompression("ZLIB"), TfRecordCompression::Zlib);
        auto bad = parseTfRecordCompression("snappy");
        QVERIFY(!bad.ok());
        QVERIFY(QString::fromStdString(bad.error().message).contains(QStringLiteral("snappy")));
    }
};

QTEST_GUILESS_MAIN(TstTfRecord)
#include "tst_tfrecord.moc"
