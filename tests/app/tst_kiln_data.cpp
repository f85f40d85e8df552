// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// kiln-data end to end: inspect (text and JSON: kind, counts, classes, shapes, bad files),
// convert folder -> TFRecord -> folder with compression, bench --json, and exit codes 0/2 with
// messages naming the file (and line and column for a broken CSV index).
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>

#include <opencv2/imgcodecs.hpp>

#include "app_test_util.h"

namespace fs = std::filesystem;

namespace {

using kiln::test::Run;

QString binary() {
    return kiln::test::program("kiln-data");
}

Run kilnData(const QStringList& args) {
    return kiln::test::runProgram("kiln-data", args);
}

void writeFile(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << bytes;
}

// cats: 3 good + truncated JPEG; dogs: 2 good + zero-byte PNG + text named .jpg.
void makeCorpus(const fs::path& root) {
    for (int i = 0; i < 5; ++i) {
        cv::Mat m(12, 16, CV_8UC3, cv::Scalar(i * 40, 100, 200 - i * 30));
        const fs::path p = root / (i < 3 ? "cats" : "dogs") / ("p" + std::to_string(i) + ".png");
        fs::create_directories(p.parent_path());
        QVERIFY(cv::imwrite(p.string(), m));
    }
    cv::Mat noise(48, 48, CV_8UC3);
    cv::randu(noise, 0, 255);
    std::vector<uchar> jpeg;
    cv::imencode(".jpg", noise, jpeg);
    writeFile(root / "cats" / "cut.jpg", std::string(jpeg.begin(), jpeg.begin() + long(jpeg.size() / 3)));
    writeFile(root / "dogs" / "empty.png", "");
    writeFile(root / "dogs" / "notes.jpg", "plain text, not a picture\n");
}

}  // namespace

class TestKilnData : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(binary())) QFAIL("kiln-data is not built");
    }

    void inspectListsClassesShapesAndBadFiles() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        makeCorpus(root / "pics");
        Run text = kilnData({QStringLiteral("inspect"), QString::fromStdString((root / "pics").string())});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains(QStringLiteral("image-folder")));
        QVERIFY(text.out.contains(QStringLiteral("5 readable, 3 bad")));
        QVERIFY(text.out.contains(QStringLiteral("cut.jpg")));

        Run r = kilnData({QStringLiteral("inspect"), QString::fromStdString((root / "pics").string()),
                          QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j[QStringLiteral("kind")].toString(), QStringLiteral("image-folder"));
        QCOMPARE(j[QStringLiteral("samples")].toInt(), 5);
        QCOMPARE(j[QStringLiteral("bad_count")].toInt(), 3);
        const QJsonArray classes = j[QStringLiteral("classes")].toArray();
        QCOMPARE(classes.size(), 2);
        QCOMPARE(classes[0].toObject()[QStringLiteral("name")].toString(), QStringLiteral("cats"));
        QCOMPARE(classes[0].toObject()[QStringLiteral("count")].toInt(), 4);  // counts cover every file
        QCOMPARE(j[QStringLiteral("shapes")].toObject()[QStringLiteral("image [12,16,3]")].toInt(), 5);
        QStringList badNames;
        for (const auto& b : j[QStringLiteral("bad")].toArray()) {
            badNames << QFileInfo(b.toObject()[QStringLiteral("path")].toString()).fileName();
            QVERIFY(!b.toObject()[QStringLiteral("reason")].toString().isEmpty());
        }
        badNames.sort();
        QCOMPARE(badNames, (QStringList{QStringLiteral("cut.jpg"), QStringLiteral("empty.png"),
                                        QStringLiteral("notes.jpg")}));
    }

    void convertRoundTripAndBench() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        makeCorpus(root / "pics");
        const QString records = QString::fromStdString((root / "out" / "pics.tfrecord").string());
        Run to = kilnData({QStringLiteral("convert"), QString::fromStdString((root / "pics").string()),
                           records, QStringLiteral("--compression"), QStringLiteral("zlib")});
        QCOMPARE(to.exitCode, 0);
        QVERIFY(to.out.contains(QStringLiteral("5 sample(s) converted")));
        QVERIFY(to.err.contains(QStringLiteral("3 bad file(s) left out")));
        QVERIFY(to.err.contains(QStringLiteral("notes.jpg")));

        Run info = kilnData({QStringLiteral("inspect"), records, QStringLiteral("--json")});
        QCOMPARE(info.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(info.out.toUtf8()).object();
        QCOMPARE(j[QStringLiteral("kind")].toString(), QStringLiteral("tfrecord"));
        QCOMPARE(j[QStringLiteral("compression")].toString(), QStringLiteral("ZLIB"));
        QCOMPARE(j[QStringLiteral("samples")].toInt(), 5);
        QCOMPARE(j[QStringLiteral("classes")].toArray()[1].toObject()[QStringLiteral("name")].toString(),
                 QStringLiteral("dogs"));

        const QString back = QString::fromStdString((root / "back").string());
        Run from = kilnData({QStringLiteral("convert"), records, back});
        QCOMPARE(from.exitCode, 0);
        QVERIFY(fs::exists(root / "back" / "cats" / "p0.png"));
        QVERIFY(fs::exists(root / "back" / "dogs" / "p4.png"));
        const cv::Mat a = cv::imread((root / "pics" / "dogs" / "p4.png").string(), cv::IMREAD_UNCHANGED);
        const cv::Mat b = cv::imread((root / "back" / "dogs" / "p4.png").string(), cv::IMREAD_UNCHANGED);
        QCOMPARE(cv::norm(a, b, cv::NORM_INF), 0.0);

        Run bench =
            kilnData({QStringLiteral("bench"), back, QStringLiteral("--json"), QStringLiteral("--workers"),
                      QStringLiteral("2"), QStringLiteral("--batch-size"), QStringLiteral("2"),
                      QStringLiteral("--transforms"), QStringLiteral("unit"), QStringLiteral("--epochs"),
                      QStringLiteral("2")});
        QCOMPARE(bench.exitCode, 0);
        const QJsonObject bj = QJsonDocument::fromJson(bench.out.toUtf8()).object();
        const QJsonArray epochs = bj[QStringLiteral("epochs")].toArray();
        QCOMPARE(epochs.size(), 2);
        QCOMPARE(epochs[0].toObject()[QStringLiteral("samples")].toInt(), 5);
        QCOMPARE(epochs[0].toObject()[QStringLiteral("batches")].toInt(), 3);
        QVERIFY(epochs[1].toObject()[QStringLiteral("samples_per_second")].toDouble() > 0);
        QVERIFY(bj[QStringLiteral("peak_rss_bytes")].toDouble() > 0);

        // Strict mode on the corrupt corpus: exit 2 naming a bad file.
        Run strict = kilnData({QStringLiteral("bench"), QString::fromStdString((root / "pics").string()),
                               QStringLiteral("--strict")});
        QCOMPARE(strict.exitCode, 2);
        QVERIFY(strict.err.contains(QStringLiteral("cut.jpg")));
    }

    void errorsExitTwoNamingTheProblem() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFile(root / "index.csv", "x:image,y:label\na.png,1\nb.png,zwei\n");
        Run csv =
            kilnData({QStringLiteral("inspect"), QString::fromStdString((root / "index.csv").string())});
        QCOMPARE(csv.exitCode, 2);
        QVERIFY2(csv.err.contains(QStringLiteral("index.csv:3:2")), qPrintable(csv.err));
        QVERIFY(csv.err.contains(QStringLiteral("\"zwei\" is not a number")));

        QCOMPARE(kilnData({QStringLiteral("inspect"), QStringLiteral("/no/such/data")}).exitCode, 2);
        QCOMPARE(kilnData({}).exitCode, 2);
        QCOMPARE(kilnData({QStringLiteral("frobnicate"), QStringLiteral("x")}).exitCode, 2);
        QCOMPARE(
            kilnData({QStringLiteral("inspect"), QStringLiteral("--no-such-option"), QStringLiteral("x")})
                .exitCode,
            2);
        Run workers = kilnData(
            {QStringLiteral("bench"), QStringLiteral("x"), QStringLiteral("--workers"), QStringLiteral("0")});
        QCOMPARE(workers.exitCode, 2);
        QVERIFY(workers.err.contains(QStringLiteral("--workers")));
        Run comp = kilnData({QStringLiteral("convert"), QStringLiteral("a"), QStringLiteral("b.tfrecord"),
                             QStringLiteral("--compression"), QStringLiteral("lz4")});
        QCOMPARE(comp.exitCode, 2);
        Run transforms = kilnData({QStringLiteral("bench"), QString::fromStdString(root.string()),
                                   QStringLiteral("--transforms"), QStringLiteral("[{\"type\": \"blur\"}]")});
        QCOMPARE(transforms.exitCode, 2);
        QVERIFY(transforms.err.contains(QStringLiteral("--transforms[0].type")));
        Run help = kilnData({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains(QStringLiteral("inspect PATH")));
    }
};

QTEST_GUILESS_MAIN(TestKilnData)
#include "tst_kiln_data.moc"
