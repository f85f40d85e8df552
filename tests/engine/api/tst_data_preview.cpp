// SPDX-License-Identifier: Apache-2.0
// The data workspace's api calls: a decoded picture in display form (8-bit copied, float
// stretched), one picture through the transforms (a certain flip mirrors every pass exactly; bad
// transforms and missing files are errors that name them), and a measuring run of the pipeline
// over an image folder (shape from the first picture, one epoch at most, a stop flag, and the
// errors for an undecodable folder and bad settings).
#include <QtTest>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/api/data_preview.h"

using namespace kiln::engine;
namespace fs = std::filesystem;

namespace {

// A 20x30 BGR picture whose every pixel differs from its mirror image: blue = column, green =
// row, red = class.
cv::Mat picture(int cls) {
    cv::Mat m(20, 30, CV_8UC3);
    for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; ++x) m.at<cv::Vec3b>(y, x) = cv::Vec3b(uchar(x * 8), uchar(y * 10), uchar(100 + cls));
    return m;
}

// <root>/<class>/<n>.png, `perClass` pictures in each of two classes.
std::string imageFolder(const QTemporaryDir& dir, int perClass) {
    const fs::path root = dir.path().toStdString() + "/images";
    for (int cls = 0; cls < 2; ++cls) {
        fs::create_directories(root / ("class" + std::to_string(cls)));
        for (int i = 0; i < perClass; ++i)
            cv::imwrite((root / ("class" + std::to_string(cls)) / (std::to_string(i) + ".png")).string(), picture(cls));
    }
    return root.string();
}

}  // namespace

class TestDataPreview : public QObject {
    Q_OBJECT
private slots:
    void displayPictureCopiesAndStretches() {
        cv::Mat rgb(2, 3, CV_8UC3);
        for (int i = 0; i < 18; ++i) rgb.data[i] = uchar(i * 10);
        const api::DisplayPicture shown = api::displayPicture(rgb);
        QCOMPARE(shown.height, 2);
        QCOMPARE(shown.width, 3);
        QCOMPARE(shown.channels, 3);
        QCOMPARE(shown.pixels.size(), size_t{18});
        for (int i = 0; i < 18; ++i) QCOMPARE(int(shown.pixels[size_t(i)]), i * 10);

        // Float grey from -1 to 3 lands on 0..255.
        cv::Mat grey(1, 3, CV_32FC1);
        grey.at<float>(0, 0) = -1.f;
        grey.at<float>(0, 1) = 1.f;
        grey.at<float>(0, 2) = 3.f;
        const api::DisplayPicture stretched = api::displayPicture(grey);
        QCOMPARE(stretched.channels, 1);
        QCOMPARE(int(stretched.pixels[0]), 0);
        QVERIFY(std::abs(int(stretched.pixels[1]) - 128) <= 1);
        QCOMPARE(int(stretched.pixels[2]), 255);

        // Two channels have no display form.
        QCOMPARE(api::displayPicture(cv::Mat(2, 2, CV_8UC2, cv::Scalar(1, 2))).channels, 0);
        QCOMPARE(api::displayPicture(cv::Mat()).channels, 0);
    }

    void augmentPictureMirrorsEveryPass() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("one.png").toStdString();
        QVERIFY(cv::imwrite(path, picture(1)));
        const auto flipped = api::augmentPicture(path, nlohmann::json::parse(R"([{"type": "flip", "horizontal": true, "probability": 1}])"),
                                                 7, 3);
        QVERIFY2(flipped.ok(), flipped.ok() ? "" : flipped.error().toString().c_str());
        QCOMPARE(flipped->size(), size_t{3});
        const cv::Mat bgr = picture(1);
        for (const api::DisplayPicture& p : *flipped) {
            QCOMPARE(p.height, 20);
            QCOMPARE(p.width, 30);
            QCOMPARE(p.channels, 3);
            // RGB order, mirrored: pixel (y, x) is the file's (y, 29 - x).
            for (int y = 0; y < 20; ++y)
                for (int x = 0; x < 30; ++x) {
                    const cv::Vec3b& want = bgr.at<cv::Vec3b>(y, 29 - x);
                    const uint8_t* got = &p.pixels[(size_t(y) * 30 + size_t(x)) * 3];
                    QVERIFY(got[0] == want[2] && got[1] == want[1] && got[2] == want[0]);
                }
        }
        // No transforms: the picture as it is.
        const auto plain = api::augmentPicture(path, nlohmann::json::array(), 7, 1);
        QVERIFY(plain.ok());
        QCOMPARE(int((*plain)[0].pixels[0]), int(bgr.at<cv::Vec3b>(0, 0)[2]));
    }

    void augmentPictureErrors() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("one.png").toStdString();
        QVERIFY(cv::imwrite(path, picture(0)));
        const auto bad = api::augmentPicture(path, nlohmann::json::parse(R"([{"type": "flip", "probability": 2}])"), 1, 2);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code, ErrorCode::ConfigError);
        QVERIFY2(bad.error().toString().find("transforms[0].probability") != std::string::npos, bad.error().toString().c_str());

        const std::string gone = dir.filePath("gone.png").toStdString();
        const auto missing = api::augmentPicture(gone, nlohmann::json::array(), 1, 2);
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().toString().find("gone.png") != std::string::npos, missing.error().toString().c_str());

        const std::string text = dir.filePath("text.png").toStdString();
        {
            std::FILE* f = std::fopen(text.c_str(), "w");
            std::fputs("not a picture", f);
            std::fclose(f);
        }
        const auto undecodable = api::augmentPicture(text, nlohmann::json::array(), 1, 2);
        QVERIFY(!undecodable.ok());
        QCOMPARE(undecodable.error().code, ErrorCode::DataError);
    }

    void measuresOneEpochAtMost() {
        QTemporaryDir dir;
        const std::string root = imageFolder(dir, 6);
        std::atomic<bool> stop{false};
        const auto rate = api::measureImageFolderPipeline(root, nlohmann::json::array(),
                                                          {{"batch_size", 4}, {"workers", 2}, {"shuffle_buffer", 0}}, 60, stop);
        QVERIFY2(rate.ok(), rate.ok() ? "" : rate.error().toString().c_str());
        // The size of the first picture, resized to because no transform sizes the pictures.
        QCOMPARE(rate->sampleShape, (std::vector<int64_t>{20, 30, 3}));
        QCOMPARE(rate->samples, int64_t{12});  // one epoch, well inside the 60 s
        QCOMPARE(rate->batches, int64_t{3});
        QCOMPARE(rate->skipped, int64_t{0});
        QVERIFY(rate->seconds > 0 && rate->seconds < 60);
        QVERIFY(rate->samplesPerSecond > 0);

        // A resize among the transforms sets the shape; a stop flag already set delivers nothing.
        stop = true;
        const auto stopped = api::measureImageFolderPipeline(
            root, nlohmann::json::parse(R"([{"type": "resize", "size": [8, 10]}])"), {{"batch_size", 4}}, 60, stop);
        QVERIFY2(stopped.ok(), stopped.ok() ? "" : stopped.error().toString().c_str());
        QCOMPARE(stopped->sampleShape, (std::vector<int64_t>{8, 10, 3}));
        QCOMPARE(stopped->samples, int64_t{0});
    }

    void measureErrors() {
        QTemporaryDir dir;
        std::atomic<bool> stop{false};
        const std::string root = imageFolder(dir, 1);
        const auto badSettings = api::measureImageFolderPipeline(root, nlohmann::json::array(), {{"batch_size", 0}}, 1, stop);
        QVERIFY(!badSettings.ok());
        QVERIFY2(badSettings.error().toString().find("batch_size") != std::string::npos,
                 badSettings.error().toString().c_str());

        // A folder whose only pictures cannot be decoded.
        const fs::path broken = dir.path().toStdString() + "/broken/class0";
        fs::create_directories(broken);
        for (const char* name : {"a.png", "b.png"}) {
            std::FILE* f = std::fopen((broken / name).string().c_str(), "w");
            std::fputs("not a picture", f);
            std::fclose(f);
        }
        const auto undecodable = api::measureImageFolderPipeline(broken.parent_path().string(), nlohmann::json::array(),
                                                                 {{"batch_size", 2}}, 1, stop);
        QVERIFY(!undecodable.ok());
        QCOMPARE(undecodable.error().code, ErrorCode::DataError);
        QCOMPARE(QString::fromStdString(undecodable.error().param("problem")), QStringLiteral("undecodable"));
    }
};

QTEST_GUILESS_MAIN(TestDataPreview)
#include "tst_data_preview.moc"
