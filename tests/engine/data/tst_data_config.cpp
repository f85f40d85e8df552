// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// The data section to pipelines: split folders, seeded stratified ratio splits (disjoint,
// complete), CSV split columns, standardisation fitted on the training split, evaluation
// transforms, TFRecord parts, and errors naming the field.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/data/data_config.h"
#include "engine/data/example.h"
#include "engine/data/tfrecord.h"

using namespace kiln::engine;
using namespace kiln::engine::data;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << bytes;
}

void writePicture(const fs::path& p, int h, int w) {
    fs::create_directories(p.parent_path());
    cv::Mat m(h, w, CV_8UC3, cv::Scalar(1, 2, 3));
    QVERIFY(cv::imwrite(p.string(), m));
}

std::vector<int64_t> indicesOf(Pipeline& p, int epoch = 0) {
    std::vector<int64_t> out;
    if (!p.startEpoch(epoch).ok()) return out;
    Batch b;
    while (p.next(b).value()) out.insert(out.end(), b.indices.begin(), b.indices.end());
    return out;
}

PathResolver in(const fs::path& dir) {
    return [dir](const std::string& p) { return (dir / p).string(); };
}

}  // namespace

class TestDataConfig : public QObject {
    Q_OBJECT

private slots:
    void splitFoldersAndEvalTransforms() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (int i = 0; i < 4; ++i)
            writePicture(root / "d" / "train" / (i % 2 ? "b" : "a") / (std::to_string(i) + ".png"), 10, 12);
        writePicture(root / "d" / "val" / "b" / "v.png", 10, 12);
        const json data = json::parse(R"({"format": "folder", "path": "d", "shuffle_buffer": 100,
            "transforms": [{"type": "random_crop", "size": 8}, {"type": "flip"}, {"type": "normalize", "preset": "unit"}]})");
        auto d = openDataPipelines(data, in(root), 3, 2);
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
        QCOMPARE(d->kind, std::string("image-folder"));
        QCOMPARE(d->classNames, (std::vector<std::string>{"a", "b"}));
        QVERIFY(d->validation != nullptr);
        QVERIFY(d->test == nullptr);
        QCOMPARE(d->train->outputShapes()[0], (Shape{8, 8, 3}));
        QCOMPARE(d->validation->outputShapes()[0], (Shape{8, 8, 3}));  // random crop -> centre crop
        QCOMPARE(indicesOf(*d->validation).size(), size_t(1));
        QCOMPARE(indicesOf(*d->train).size(), size_t(4));

        TransformList t = TransformList::fromJson(data["transforms"]).value();
        TransformList e = evaluationTransforms(t);
        QCOMPARE(e.items().size(), size_t(2));
        QVERIFY(e.items()[0].kind == TransformKind::CenterCrop);
        QVERIFY(e.items()[1].kind == TransformKind::Normalize);
    }

    void ratioSplitIsStratifiedSeededDisjoint() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (int i = 0; i < 40; ++i)
            writePicture(root / "d" / (i < 30 ? "many" : "few") / (std::to_string(i) + ".png"), 4, 4);
        const json data =
            json::parse(R"({"format": "folder", "path": "d", "split": {"validation": 0.2, "test": 0.1}})");
        auto d = openDataPipelines(data, in(root), 7, 4);
        QVERIFY(d.ok());
        const auto tr = indicesOf(*d->train), va = indicesOf(*d->validation), te = indicesOf(*d->test);
        QCOMPARE(tr.size() + va.size() + te.size(), size_t(40));
        std::set<int64_t> all(tr.begin(), tr.end());
        all.insert(va.begin(), va.end());
        all.insert(te.begin(), te.end());
        QCOMPARE(all.size(), size_t(40));
        QCOMPARE(va.size(), size_t(8));
        // Stratified: 20 % of the 10 "few" (indices 0..9, class 0 sorts first) is 2.
        QCOMPARE(std::count_if(va.begin(), va.end(), [](int64_t i) { return i < 10; }), 2);
        auto again = openDataPipelines(data, in(root), 7, 4);
        QCOMPARE(indicesOf(*again->validation), va);
        auto other = openDataPipelines(data, in(root), 8, 4);
        QVERIFY(indicesOf(*other->validation) != va);
    }

    void csvSplitColumnAndStandardize() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFile(root / "index.csv",
                  "f__0,f__1,y,split\n"
                  "1,10,0,train\n3,30,1,train\n100,1000,0,validation\n50,500,1,test\n");
        const json data = json::parse(R"({"format": "csv_index", "path": "index.csv", "split_column": "split",
            "transforms": [{"type": "standardize", "column": "f"}]})");
        auto d = openDataPipelines(data, in(root), 1, 8);
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
        QVERIFY(d->validation && d->test);
        QVERIFY(d->validation->startEpoch(0).ok());
        Batch b;
        QVERIFY(d->validation->next(b).value());
        // Fitted on train only: mean (2, 20), std (1, 10).
        QCOMPARE(b.columns[0], (std::vector<float>{98.0f, 98.0f}));
        QVERIFY(d->train->startEpoch(0).ok());
        QVERIFY(d->train->next(b).value());
        QCOMPARE(b.columns[0], (std::vector<float>{-1, -1, 1, 1}));
        QCOMPARE(b.names, (std::vector<std::string>{"f", "y"}));
    }

    void tfrecordParts() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (const char* part : {"train", "test"}) {
            auto w = TfRecordWriter::create((root / (std::string(part) + ".tfrecord.gz")).string(),
                                            TfRecordCompression::Gzip);
            QVERIFY(w.ok());
            for (int i = 0; i < 5; ++i) {
                Example ex;
                ex.features["v"] = Feature::ofFloats({float(i), 1, 2});
                ex.features["label"] = Feature::ofInt64s({i % 2});
                QVERIFY((*w)->write(encodeExample(ex)).ok());
            }
            QVERIFY((*w)->close().ok());
        }
        const json data =
            json::parse(R"({"format": "tfrecord", "train": "train.tfrecord.gz", "test": "test.tfrecord.gz",
            "features": {"v": {"type": "float", "shape": [3], "column": "x"}, "label": {"type": "int64", "shape": []}}})");
        auto d = openDataPipelines(data, in(root), 1, 2);
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
        QVERIFY(d->test && !d->validation);
        QCOMPARE(d->train->outputNames(), (std::vector<std::string>{"label", "x"}));
        QVERIFY(d->test->startEpoch(0).ok());
        Batch b;
        int64_t n = 0;
        while (d->test->next(b).value()) n += b.size;
        QCOMPARE(n, int64_t(5));
    }

    // standardize on TFRecord numbers is fitted on the training records and applied to every
    // split: train holds x = (i, 10 i) for i = 0..4, so mean (2, 20) and std (√2, 10√2).
    void tfrecordStandardize() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        for (const char* part : {"train", "test"}) {
            auto w = TfRecordWriter::create((root / (std::string(part) + ".tfrecord")).string());
            QVERIFY(w.ok());
            for (int i = 0; i < 5; ++i) {
                Example ex;
                ex.features["x"] = Feature::ofFloats({float(i), 10.0f * float(i)});
                ex.features["label"] = Feature::ofInt64s({i % 2});
                QVERIFY((*w)->write(encodeExample(ex)).ok());
            }
            QVERIFY((*w)->close().ok());
        }
        const json data = json::parse(R"({"format": "tfrecord", "train": "train.tfrecord", "test": "test.tfrecord",
            "features": {"x": {"type": "float", "shape": [2]}, "label": {"type": "int64", "shape": []}},
            "transforms": [{"type": "standardize", "column": "x"}]})");
        auto d = openDataPipelines(data, in(root), 1, 8);
        QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
        for (BatchStream* stream : {d->train.get(), d->test.get()}) {
            QVERIFY(stream->startEpoch(0).ok());
            Batch b;
            auto more = stream->next(b);
            QVERIFY2(more.ok(), more.ok() ? "" : more.error().toString().c_str());
            QCOMPARE(b.size, int64_t(5));
            const float* x = b.data("x");
            QVERIFY(x != nullptr);
            for (int i = 0; i < 5; ++i) {
                const float want = float((i - 2) / std::sqrt(2.0));
                QVERIFY2(std::abs(x[2 * i] - want) < 1e-5f && std::abs(x[2 * i + 1] - want) < 1e-5f,
                         qPrintable(QStringLiteral("sample %1: %2, %3").arg(i).arg(x[2 * i]).arg(x[2 * i + 1])));
            }
        }
    }

    void errorsNameTheField_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::newRow("format") << R"({"format": "parquet", "path": "x"})"
                                << "data.format";
        QTest::newRow("path") << R"({"format": "folder"})"
                              << "data.path";
        QTest::newRow("split")
            << R"({"format": "folder", "path": "d", "split": {"validation": 0.6, "test": 0.5}})"
            << "data.split";
        QTest::newRow("workers") << R"({"format": "folder", "path": "d", "workers": -1})"
                                 << "data.workers";
        QTest::newRow("transform") << R"({"format": "folder", "path": "d", "transforms": [{"type": "zoom"}]})"
                                   << "data.transforms[0].type";
    }

    void errorsNameTheField() {
        QFETCH(QString, text);
        QFETCH(QString, field);
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writePicture(root / "d" / "a" / "1.png", 4, 4);
        auto d = openDataPipelines(json::parse(text.toStdString()), in(root), 1, 2);
        QVERIFY(!d.ok());
        QCOMPARE(QString::fromStdString(d.error().param("field")), field);
    }
};

QTEST_GUILESS_MAIN(TestDataConfig)
#include "tst_data_config.moc"
