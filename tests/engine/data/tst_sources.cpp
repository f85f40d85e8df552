// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// Sample sources: image folder discovery and class order, split folders, CSV indexes (relative
// paths, numbers, vectors, per-sample CSV tensors, errors with line and column), IDX, source
// detection, and the decoder's handling of corrupt pictures.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <opencv2/imgcodecs.hpp>

#include "engine/data/sources.h"

using namespace kiln::engine;
using namespace kiln::engine::data;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << bytes;
}

// A small colour picture whose pixel (0,0) encodes `tag` (as BGR on disk).
void writePicture(const fs::path& p, int tag, int h = 6, int w = 8) {
    fs::create_directories(p.parent_path());
    cv::Mat m(h, w, CV_8UC3, cv::Scalar(10, 20, 30));
    m.at<cv::Vec3b>(0, 0) = cv::Vec3b(static_cast<uchar>(tag), 0, 255);
    QVERIFY(cv::imwrite(p.string(), m));
}

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

class TestSources : public QObject {
    Q_OBJECT

private slots:
    void imageFolderClassesSortedAndFilesFiltered() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        // Class folders created out of order; "Zebra" sorts before "ant" (byte order, as Keras).
        writePicture(root / "dog" / "b.PNG", 1);
        writePicture(root / "dog" / "a.jpg", 2);
        writePicture(root / "dog" / "nested" / "c.jpeg", 3);
        writePicture(root / "Zebra" / "z.bmp", 4);
        writePicture(root / "ant" / "x.tiff", 5);
        writePicture(root / "ant" / "y.TIF", 6);
        writeFile(root / "ant" / "notes.txt", "not a picture");
        writeFile(root / "ant" / ".hidden.png", "hidden");
        writeFile(root / "README.md", "top-level file");
        fs::create_directories(root / ".git");

        auto src = ImageFolderSource::open(root.string());
        QVERIFY2(src.ok(), src.ok() ? "" : src.error().toString().c_str());
        const auto& classes = (*src)->classNames();
        QCOMPARE(classes, (std::vector<std::string>{"Zebra", "ant", "dog"}));
        QCOMPARE((*src)->size(), int64_t(6));
        QCOMPARE((*src)->labels(), (std::vector<float>{0, 1, 1, 2, 2, 2}));
        // Within a class, files sorted by path: a.jpg, b.PNG, nested/c.jpeg.
        QVERIFY((*src)->origin(3).ends_with("dog/a.jpg"));
        QVERIFY((*src)->origin(4).ends_with("dog/b.PNG"));
        QVERIFY((*src)->origin(5).ends_with("dog/nested/c.jpeg"));
        QCOMPARE(sourceClassCounts(**src), (std::vector<int64_t>{1, 2, 3}));

        Sample s;
        QVERIFY((*src)->load(4, s).ok());  // dog/b.PNG, lossless
        QCOMPARE(s.values.size(), size_t(2));
        QCOMPARE(int(s.values[0].kind), int(SampleValue::Kind::Encoded));
        QCOMPARE(s.values[1].values.at(0), 2.0f);
        auto img = decodeImage(s.values[0].encoded, s.origin);
        QVERIFY(img.ok());
        QCOMPARE(img->rows, 6);
        QCOMPARE(img->cols, 8);
        QCOMPARE(img->channels(), 3);
        // RGB order after decoding: (R,G,B) = (255, 0, tag).
        QCOMPARE(img->at<cv::Vec3b>(0, 0), cv::Vec3b(255, 0, 1));
        QCOMPARE(img->at<cv::Vec3b>(1, 1), cv::Vec3b(30, 20, 10));
        // The JPEG decodes too.
        QVERIFY((*src)->load(3, s).ok());
        QVERIFY(decodeImage(s.values[0].encoded, s.origin).ok());
    }

    void imageFolderErrors() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        auto missing = ImageFolderSource::open((root / "nope").string());
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
        fs::create_directories(root / "empty");
        auto noClasses = ImageFolderSource::open((root / "empty").string());
        QVERIFY(!noClasses.ok());
        QVERIFY(noClasses.error().message.find("no class subfolders") != std::string::npos);
        writeFile(root / "nopics" / "a" / "x.txt", "x");
        auto noPics = ImageFolderSource::open((root / "nopics").string());
        QVERIFY(!noPics.ok());
        QVERIFY(noPics.error().message.find("no pictures") != std::string::npos);
    }

    void splitFolders() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writePicture(root / "train" / "cat" / "1.png", 1);
        writePicture(root / "train" / "dog" / "2.png", 2);
        writePicture(root / "train" / "dog" / "3.png", 3);
        writePicture(root / "val" / "dog" / "4.png", 4);  // no "cat" here: indices must still follow train
        writePicture(root / "test" / "cat" / "5.png", 5);
        auto splits = ImageFolderSource::openSplits(root.string());
        QVERIFY(splits.ok());
        QCOMPARE(splits->size(), size_t(3));
        QCOMPARE(splits->at("train")->size(), int64_t(3));
        QCOMPARE(splits->at("validation")->labels(), (std::vector<float>{1}));
        QCOMPARE(splits->at("test")->labels(), (std::vector<float>{0}));
        QCOMPARE(splits->at("validation")->classNames(), (std::vector<std::string>{"cat", "dog"}));
        // A plain class folder is not a split layout.
        auto plain = ImageFolderSource::openSplits((root / "train").string());
        QVERIFY(plain.ok());
        QVERIFY(plain->empty());
        // openSource picks the training split.
        auto detected = openSource(root.string());
        QVERIFY(detected.ok());
        QCOMPARE((*detected)->kind(), std::string("image-folder"));
        QCOMPARE((*detected)->size(), int64_t(3));
    }

    void csvIndexPathsNumbersTensors() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writePicture(root / "img" / "a.png", 7);
        writePicture(root / "img" / "b.png", 8);
        writeFile(root / "t" / "a.csv", "1,2,3\n4,5,6\n");
        writeFile(root / "t" / "b.csv", "7,8,9\n10,11,12\n");
        writeFile(root / "index.csv",
                  "x:image,t:tensor,f__0:first,f__1:second,y:label\n"
                  "img/a.png,t/a.csv,0.5,-1,1\n"
                  "\"img/b.png\",t/b.csv, 2.5 ,3e2,0\n");
        auto src = CsvIndexSource::open((root / "index.csv").string());
        QVERIFY2(src.ok(), src.ok() ? "" : src.error().toString().c_str());
        const auto specs = (*src)->columnSpecs();
        QCOMPARE(specs.size(), size_t(4));
        QCOMPARE(specs[0].name, std::string("x"));
        QVERIFY(specs[0].image);
        QCOMPARE(specs[1].name, std::string("t"));
        QCOMPARE(specs[1].shape, (Shape{2, 3}));
        QCOMPARE(specs[2].name, std::string("f"));
        QCOMPARE(specs[2].shape, (Shape{2}));
        QCOMPARE(specs[3].name, std::string("y"));
        QCOMPARE(specs[3].shape, Shape{});
        QCOMPARE((*src)->labels(), (std::vector<float>{1, 0}));

        Sample s;
        QVERIFY((*src)->load(1, s).ok());
        QVERIFY(s.origin.ends_with("img/b.png"));
        QCOMPARE(int(s.values[0].kind), int(SampleValue::Kind::Encoded));
        QCOMPARE(s.values[0].encoded, readAll(root / "img" / "b.png"));
        QCOMPARE(s.values[1].values, (std::vector<float>{7, 8, 9, 10, 11, 12}));
        QCOMPARE(s.values[2].values, (std::vector<float>{2.5f, 300.0f}));
        QCOMPARE(s.values[3].values, (std::vector<float>{0}));
    }

    void csvIndexErrorsNameLineAndColumn_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("words");
        QTest::newRow("missing cell") << QByteArray("x,y\n1,2\n3\n") << 3 << 2 << "missing";
        QTest::newRow("empty cell") << QByteArray("x,y\n1,2\n3,\n") << 3 << 2 << "is empty";
        QTest::newRow("bad number") << QByteArray("x,y\n1,2\n3,abc\n") << 3 << 2 << "\"abc\" is not a number";
        QTest::newRow("extra cell") << QByteArray("x,y\n1,2,3\n") << 2 << 3 << "the header has 2";
        QTest::newRow("empty name") << QByteArray("x,,y\n1,2,3\n") << 1 << 2 << "has no name";
        QTest::newRow("kind changes") << QByteArray("x,y\na.png,1\n2,1\n") << 3 << 1 << "not an image path";
    }

    void csvIndexErrorsNameLineAndColumn() {
        QFETCH(QByteArray, text);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, words);
        QTemporaryDir tmp;
        const fs::path path = fs::path(tmp.path().toStdString()) / "bad.csv";
        writeFile(path, text.toStdString());
        auto src = CsvIndexSource::open(path.string());
        QVERIFY(!src.ok());
        const Error& e = src.error();
        QCOMPARE(e.code, ErrorCode::ParseError);
        QCOMPARE(e.file, path.string());
        QCOMPARE(e.line, line);
        QCOMPARE(e.column, column);
        QVERIFY2(e.message.find(words.toStdString()) != std::string::npos, e.message.c_str());
        QVERIFY(e.toString().find("bad.csv:" + std::to_string(line)) != std::string::npos);
    }

    void csvTensorErrorsAtLoad() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFile(root / "a.csv", "1,2\n3,4\n");
        writeFile(root / "b.csv", "1,2\n3,x\n");
        writeFile(root / "index.csv", "t,y\na.csv,0\nb.csv,1\nmissing.csv,0\n");
        auto src = CsvIndexSource::open((root / "index.csv").string());
        QVERIFY(src.ok());
        Sample s;
        QVERIFY((*src)->load(0, s).ok());
        Status bad = (*src)->load(1, s);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code, ErrorCode::ParseError);
        QCOMPARE(bad.error().file, (root / "b.csv").string());
        QCOMPARE(bad.error().line, 2);
        QCOMPARE(bad.error().column, 2);
        QVERIFY(!isBadSampleError(bad.error()));
        Status missing = (*src)->load(2, s);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
        QVERIFY(missing.error().message.find("line 4") != std::string::npos);
    }

    void corruptPicturesAreBadSamples() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        cv::Mat m(40, 50, CV_8UC3, cv::Scalar(1, 2, 3));
        cv::randu(m, 0, 255);
        std::vector<uchar> jpeg;
        QVERIFY(cv::imencode(".jpg", m, jpeg));
        const std::string full(jpeg.begin(), jpeg.end());
        QVERIFY(decodeImage(full, "good.jpg").ok());

        auto truncated = decodeImage(full.substr(0, full.size() / 2), "cut.jpg");
        QVERIFY(!truncated.ok());
        QVERIFY(isBadSampleError(truncated.error()));
        QCOMPARE(truncated.error().file, std::string("cut.jpg"));
        QVERIFY(truncated.error().param("reason").find("truncated") != std::string::npos);

        auto empty = decodeImage("", "zero.png");
        QVERIFY(!empty.ok());
        QVERIFY(empty.error().param("reason").find("empty") != std::string::npos);

        auto text = decodeImage("hello, I am text\n", "text.jpg");
        QVERIFY(!text.ok());
        QVERIFY(text.error().param("reason").find("not a JPEG") != std::string::npos);

        std::vector<uchar> png;
        QVERIFY(cv::imencode(".png", m, png));
        auto cutPng =
            decodeImage(std::string(png.begin(), png.begin() + static_cast<long>(png.size() / 2)), "cut.png");
        QVERIFY(!cutPng.ok());
        QVERIFY(isBadSampleError(cutPng.error()));

        // A picture file that does not exist is reported by the source as a bad sample too.
        writePicture(root / "c" / "ok.png", 1);
        auto src = ImageFolderSource::open(root.string());
        QVERIFY(src.ok());
        fs::remove(root / "c" / "ok.png");
        Sample s;
        Status gone = (*src)->load(0, s);
        QVERIFY(!gone.ok());
        QVERIFY(isBadSampleError(gone.error()));
    }

    void decodeChannels() {
        cv::Mat grey(3, 4, CV_8UC1, cv::Scalar(77));
        std::vector<uchar> png;
        QVERIFY(cv::imencode(".png", grey, png));
        const std::string bytes(png.begin(), png.end());
        auto asStored = decodeImage(bytes, "g.png");
        QVERIFY(asStored.ok());
        QCOMPARE(asStored->channels(), 1);
        auto rgb = decodeImage(bytes, "g.png", DecodeOptions{3});
        QVERIFY(rgb.ok());
        QCOMPARE(rgb->channels(), 3);
        QCOMPARE(int(rgb->at<cv::Vec3b>(2, 3)[1]), 77);
    }

    void tableAndIdxSources() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFile(root / "t.csv", "a,b,label\n1,2,0\n3,4,1\n5,6,1\n");
        auto table = openSource((root / "t.csv").string());
        QVERIFY2(table.ok(), table.ok() ? "" : table.error().toString().c_str());
        QCOMPARE((*table)->kind(), std::string("table"));
        QCOMPARE((*table)->size(), int64_t(3));
        QCOMPARE((*table)->labels(), (std::vector<float>{0, 1, 1}));
        std::vector<float> features(2), label(1);
        std::vector<float*> out{features.data(), label.data()};
        QVERIFY((*table)->read(1, out).ok());
        QCOMPARE(features, (std::vector<float>{3, 4}));

        const std::string fashion = "/usr/share/datasets/fashion-mnist";
        if (!fs::exists(fashion + "/t10k-images-idx3-ubyte.gz")) QSKIP("Fashion-MNIST is not installed");
        auto idx = IdxSource::open(fashion + "/t10k-images-idx3-ubyte.gz",
                                   fashion + "/t10k-labels-idx1-ubyte.gz", 50);
        QVERIFY(idx.ok());
        QCOMPARE((*idx)->size(), int64_t(50));
        QCOMPARE((*idx)->columnSpecs()[0].shape, (Shape{28, 28, 1}));
        auto pair = IdxSource::findPair(fashion);
        QVERIFY(pair.ok());
        QVERIFY(pair->first.find("train-images") != std::string::npos);
        // As a DataSource: raw 0..255 pixels.
        std::vector<float> img(784), lab(1);
        std::vector<float*> o{img.data(), lab.data()};
        QVERIFY((*idx)->read(0, o).ok());
        QCOMPARE(lab[0], 9.0f);  // the first test picture is an ankle boot
        QVERIFY(*std::max_element(img.begin(), img.end()) > 200.0f);
    }
};

QTEST_GUILESS_MAIN(TestSources)
#include "tst_sources.moc"
