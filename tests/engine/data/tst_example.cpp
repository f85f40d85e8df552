// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_data
// tf.train.Example on the wire: the exact bytes TensorFlow writes, round trips of every list kind,
// packed and unpacked lists, unknown fields, and malformed input giving named errors (never a crash).
#include <QtTest>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "engine/data/example.h"

using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

std::string bytes(std::initializer_list<int> b) {
    std::string s;
    for (int v : b) s.push_back(static_cast<char>(v));
    return s;
}

// Wraps a serialized Feature as Example{features{feature{key, value}}}.
std::string wrap(const std::string& key, const std::string& feature) {
    auto len = [](const std::string& s) { return bytes({static_cast<int>(s.size())}); };
    std::string entry = bytes({0x0A}) + len(key) + key + bytes({0x12}) + len(feature) + feature;
    std::string features = bytes({0x0A}) + len(entry) + entry;
    return bytes({0x0A}) + len(features) + features;
}

}  // namespace

class TstExample : public QObject {
    Q_OBJECT
private slots:
    void exactBytes() {
        Example ex;
        ex.features["x"] = Feature::ofFloats({1.0f});
        QCOMPARE(encodeExample(ex), bytes({0x0A, 0x0F, 0x0A, 0x0D, 0x0A, 0x01, 0x78, 0x12, 0x08, 0x12, 0x06, 0x0A, 0x04,
                                           0x00, 0x00, 0x80, 0x3F}));
        // int64 -1 is a 10-byte varint, not zigzag.
        Example neg;
        neg.features["n"] = Feature::ofInt64s({-1});
        std::string enc = encodeExample(neg);
        QVERIFY(enc.find(bytes({0x0A, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01})) != std::string::npos);
    }

    void roundTrip() {
        Example ex;
        ex.features["image/encoded"] = Feature::ofBytes({std::string("\x89PNG\0\x01", 6), "", "abc"});
        ex.features["label"] = Feature::ofInt64s({0, 1, -1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
        ex.features["pixels"] = Feature::ofFloats({0.0f, -2.5f, 1e-30f, std::numeric_limits<float>::infinity(), 3.25f});
        ex.features["empty_floats"] = Feature::ofFloats({});
        ex.features["empty_ints"] = Feature::ofInt64s({});
        ex.features["nothing"] = Feature{};
        ex.features["名前"] = Feature::ofBytes({"値"});
        ex.features[""] = Feature::ofInt64s({42});
        auto back = decodeExample(encodeExample(ex));
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QVERIFY(*back == ex);
        QCOMPARE(back->find("label")->size(), size_t{5});
        QCOMPARE(back->find("missing"), nullptr);
        QCOMPARE(QString(featureKindName(back->find("pixels")->kind)), QStringLiteral("float"));
        // NaN survives bit for bit.
        Example nan;
        nan.features["v"] = Feature::ofFloats({std::nanf("")});
        auto nb = decodeExample(encodeExample(nan));
        QVERIFY(std::isnan(nb->find("v")->floats[0]));
        // An empty message is an empty Example.
        QVERIFY(decodeExample("")->features.empty());
    }

    void unpackedLists() {
        // FloatList with two unpacked (fixed32) values, then a packed chunk: all concatenated.
        std::string floatList = bytes({0x0D, 0x00, 0x00, 0x80, 0x3F, 0x0D, 0x00, 0x00, 0x00, 0x40, 0x0A, 0x04, 0x00, 0x00, 0x40, 0x40});
        std::string feature = bytes({0x12, static_cast<int>(floatList.size())}) + floatList;
        auto f = decodeExample(wrap("f", feature));
        QVERIFY(f.ok());
        QCOMPARE(f->find("f")->floats, (std::vector<float>{1.0f, 2.0f, 3.0f}));
        // Int64List unpacked varints and two packed chunks.
        std::string intList = bytes({0x08, 0x05, 0x08, 0x96, 0x01, 0x0A, 0x02, 0x07, 0x08, 0x0A, 0x01, 0x09});
        feature = bytes({0x1A, static_cast<int>(intList.size())}) + intList;
        auto i = decodeExample(wrap("i", feature));
        QVERIFY(i.ok());
        QCOMPARE(i->find("i")->ints, (std::vector<int64_t>{5, 150, 7, 8, 9}));
    }

    void unknownFieldsAndDuplicates() {
        // Unknown fields of every wire type inside the Feature, the entry, and the Example.
        std::string list = bytes({0x0A, 0x01, 0x07});
        std::string feature = bytes({0x1A, 0x03}) + list + bytes({0x20, 0x05, 0x29, 1, 2, 3, 4, 5, 6, 7, 8, 0x35, 1, 2, 3, 4});
        std::string ex = wrap("k", feature) + bytes({0x12, 0x02, 0x41, 0x42, 0x18, 0x01});
        auto d = decodeExample(ex);
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
        QCOMPARE(d->find("k")->ints, (std::vector<int64_t>{7}));
        // Same key twice: the last entry wins.
        std::string twice = wrap("k", bytes({0x1A, 0x03, 0x0A, 0x01, 0x01})) + wrap("k", bytes({0x1A, 0x03, 0x0A, 0x01, 0x02}));
        QCOMPARE(decodeExample(twice)->find("k")->ints, (std::vector<int64_t>{2}));
    }

    void malformedNamesFeatureAndOffset() {
        // Packed float list of 3 bytes in feature "px".
        std::string floatList = bytes({0x0A, 0x03, 1, 2, 3});
        std::string feature = bytes({0x12, static_cast<int>(floatList.size())}) + floatList;
        auto bad = decodeExample(wrap("px", feature));
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code, ErrorCode::DataError);
        QCOMPARE(bad.error().param("feature"), std::string("px"));
        QVERIFY(!bad.error().param("offset").empty());
        QVERIFY2(QString::fromStdString(bad.error().message).contains(QStringLiteral("\"px\"")), bad.error().message.c_str());
        // Wrong wire type for an int64 value.
        std::string intList = bytes({0x0D, 1, 2, 3, 4});
        auto wt = decodeExample(wrap("n", bytes({0x1A, 0x05}) + intList));
        QVERIFY(!wt.ok());
        QCOMPARE(wt.error().param("feature"), std::string("n"));
        // A length running past the end.
        auto past = decodeExample(bytes({0x0A, 0x7F, 0x0A}));
        QVERIFY(!past.ok());
        QCOMPARE(past.error().param("offset"), std::string("0"));
        // An 11-byte varint.
        auto longVarint = decodeExample(bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
        QVERIFY(!longVarint.ok());
        // Wire types 3/4 (groups) are not accepted.
        QVERIFY(!decodeExample(bytes({0x0B})).ok());
    }

    void everyPrefixAndMutationIsSafe() {
        Example ex;
        ex.features["a"] = Feature::ofBytes({"hello", "world"});
        ex.features["b"] = Feature::ofFloats({1, 2, 3, 4});
        ex.features["c"] = Feature::ofInt64s({1, -300, 1LL << 40});
        const std::string enc = encodeExample(ex);
        int errors = 0;
        for (size_t n = 0; n < enc.size(); ++n) {
            auto r = decodeExample(std::string_view(enc).substr(0, n));
            if (!r.ok()) ++errors;
        }
        QVERIFY(errors > static_cast<int>(enc.size()) / 2);
        std::mt19937 gen(3);
        int decoded = 0;
        for (int trial = 0; trial < 20000; ++trial) {
            std::string m = enc;
            int flips = 1 + static_cast<int>(gen() % 4);
            for (int k = 0; k < flips; ++k) m[gen() % m.size()] = static_cast<char>(gen() & 0xFF);
            if (decodeExample(m).ok()) ++decoded;
        }
        std::string random(64, '\0');
        for (int trial = 0; trial < 20000; ++trial) {
            for (auto& c : random) c = static_cast<char>(gen() & 0xFF);
            (void)decodeExample(random);
        }
        qInfo("%d of 20000 mutated examples still decoded", decoded);
        QVERIFY(decoded < 20000);
    }
};

QTEST_GUILESS_MAIN(TstExample)
#include "tst_example.moc"
