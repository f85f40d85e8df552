// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// Conversions: Fashion-MNIST IDX -> PNG class folder -> TFRecord (GZIP) -> PNG class folder keeps
// every pixel and label; bad pictures are left out of a TFRecord and listed.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <map>

#include <opencv2/imgcodecs.hpp>

#include "engine/data/convert.h"
#include "engine/data/pipeline.h"
#include "engine/data/tfrecord_source.h"

using namespace kiln::engine;
using namespace kiln::engine::data;
namespace fs = std::filesystem;

namespace {

std::string fashionDir() {
    for (std::string d :
         {std::string("/usr/share/datasets/fashion-mnist"),
          std::string(std::getenv("KILN_DATA") ? std::getenv("KILN_DATA") : "") + "/fashion-mnist",
          std::string(std::getenv("HOME") ? std::getenv("HOME") : "") + "/.cache/kiln/data/fashion-mnist"})
        if (fs::exists(d + "/train-images-idx3-ubyte.gz")) return d;
    return {};
}

}  // namespace

class TestConvert : public QObject {
    Q_OBJECT

private slots:
    void fashionMnistRoundTrip() {
        const std::string dir = fashionDir();
        if (dir.empty()) QSKIP("Fashion-MNIST is not installed");
        const int64_t n = 2000;
        auto idx =
            IdxSource::open(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz", n);
        QVERIFY(idx.ok());
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();

        // IDX -> PNG class folder: classes "0".."9", files named by position.
        auto folder = convertToImageFolder(**idx, (root / "png").string(), {});
        QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().toString().c_str());
        QCOMPARE(folder->written, n);
        QVERIFY(fs::exists(root / "png" / "9" / "00000000.png"));  // sample 0 is an ankle boot

        // PNG folder -> TFRecord (GZIP, 3 shards) -> PNG folder.
        auto pngSource = ImageFolderSource::open((root / "png").string());
        QVERIFY(pngSource.ok());
        QCOMPARE((*pngSource)->size(), n);
        ConvertOptions o;
        o.compression = TfRecordCompression::Gzip;
        o.shards = 3;
        auto records = convertToTfRecord(**pngSource, (root / "fashion.tfrecord").string(), o);
        QVERIFY2(records.ok(), records.ok() ? "" : records.error().toString().c_str());
        QCOMPARE(records->written, n);
        QCOMPARE(records->files.size(), size_t(3));
        QVERIFY(fs::exists(root / "fashion-00001-of-00003.tfrecord"));
        QVERIFY(fs::exists(classNamesPath((root / "fashion-00000-of-00003.tfrecord").string())));

        auto files = TfRecordSource::listFiles(root.string());
        QVERIFY(files.ok());
        QCOMPARE(files->size(), size_t(3));
        const auto compression = TfRecordSource::guessCompression(files->front());
        QVERIFY(compression == TfRecordCompression::Gzip);
        auto spec = TfRecordSource::inferFeatures(files->front(), compression, true);
        QVERIFY(spec.ok());
        auto tf = TfRecordSource::open(*files, *spec, compression);
        QVERIFY(tf.ok());
        auto back = convertToImageFolder(**tf, (root / "back").string(), {});
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QCOMPARE(back->written, n);

        // Every picture and label of the result equals the IDX sample its name points to.
        auto result = ImageFolderSource::open((root / "back").string());
        QVERIFY(result.ok());
        QCOMPARE((*result)->size(), n);
        QCOMPARE((*result)->classNames().size(), size_t(10));
        std::vector<bool> seen(static_cast<size_t>(n), false);
        Sample got, want;
        for (int64_t i = 0; i < n; ++i) {
            QVERIFY((*result)->load(i, got).ok());
            const int64_t original = std::stoll(fs::path(got.origin).stem().string());
            QVERIFY(original >= 0 && original < n);
            QVERIFY(!seen[static_cast<size_t>(original)]);
            seen[static_cast<size_t>(original)] = true;
            QVERIFY((*idx)->load(original, want).ok());
            QCOMPARE(got.values[1].values[0], want.values[1].values[0]);
            auto pixels = decodeImage(got.values[0].encoded, got.origin);
            QVERIFY(pixels.ok());
            QCOMPARE(pixels->channels(), 1);
            QCOMPARE(cv::norm(pixels.value(), want.values[0].image, cv::NORM_INF), 0.0);
        }

        // The same records through the pipeline: 2000 samples in batches, labels intact.
        std::vector<TfFeatureSpec> pipeSpec;
        for (const auto& f : *spec)
            if (f.type != TfFeatureSpec::Type::Bytes) pipeSpec.push_back(f);
        auto pipeSource = TfRecordSource::open(*files, pipeSpec, compression);
        QVERIFY(pipeSource.ok());
        PipelineOptions po;
        po.batchSize = 256;
        po.cycleLength = 3;
        po.shuffleBuffer = 500;
        auto p = Pipeline::create(std::shared_ptr<const RecordSource>(*pipeSource), TransformList(), po);
        QVERIFY(p.ok());
        QVERIFY((*p)->startEpoch(0).ok());
        Batch b;
        int64_t total = 0;
        std::map<int, int64_t> perClass;
        while ((*p)->next(b).value()) {
            total += b.size;
            for (int64_t k = 0; k < b.size; ++k)
                ++perClass[static_cast<int>(b.columns[1][static_cast<size_t>(k)])];
        }
        QCOMPARE(total, n);
        std::map<int, int64_t> expected;
        for (float l : (*idx)->labels()) ++expected[static_cast<int>(l)];
        QCOMPARE(perClass, expected);
    }

    void badPicturesLeftOutOfRecords() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        fs::create_directories(root / "in" / "a");
        cv::Mat m(4, 4, CV_8UC3, cv::Scalar(1, 2, 3));
        QVERIFY(cv::imwrite((root / "in" / "a" / "ok.png").string(), m));
        std::ofstream(root / "in" / "a" / "bad.jpg") << "text";
        auto src = ImageFolderSource::open((root / "in").string());
        QVERIFY(src.ok());
        auto r = convertToTfRecord(**src, (root / "out.tfrecord").string(), {});
        QVERIFY(r.ok());
        QCOMPARE(r->written, int64_t(1));
        QCOMPARE(r->bad.size(), size_t(1));
        QVERIFY(r->bad[0].path.ends_with("bad.jpg"));
        std::ifstream classes(classNamesPath((root / "out.tfrecord").string()));
        std::string line;
        QVERIFY(std::getline(classes, line));
        QCOMPARE(line, std::string("a"));
    }
};

QTEST_GUILESS_MAIN(TestConvert)
#include "tst_convert.moc"
