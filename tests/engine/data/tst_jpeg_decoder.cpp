// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// The direct JPEG decoder: every region equals the same rectangle of a full OpenCV decode (sizes
// odd and even, grey, 4:2:0, 4:2:2, 4:4:4, progressive, restart markers), DCT-scaled sizes and
// their closeness to an area downscale, and the files it leaves to OpenCV (CMYK, truncated,
// damaged below the region, not a JPEG), each counted.
#include <QtTest>

#include "engine/core/rng.h"
#include "engine/data/jpeg_decoder.h"
#include "engine/data/sample.h"
#include "jpeg_samples.h"

using namespace kiln;
using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

enum class Kind { Grey, Cv420, Cv420Progressive, Jpeg444, Jpeg422, Jpeg444Progressive, Jpeg420Restarts };

std::string makeJpeg(Kind kind, int width, int height, uint64_t seed) {
    const cv::Mat pic = test::photoLike(width, height, kind == Kind::Grey ? 1 : 3, seed);
    test::LibjpegOptions o;
    switch (kind) {
    case Kind::Grey:
        return test::cvJpeg(pic);
    case Kind::Cv420:
        return test::cvJpeg(pic);
    case Kind::Cv420Progressive:
        return test::cvJpeg(pic, true);
    case Kind::Jpeg444:
        break;
    case Kind::Jpeg422:
        o.hSampling = 2;
        break;
    case Kind::Jpeg444Progressive:
        o.progressive = true;
        break;
    case Kind::Jpeg420Restarts:
        o.hSampling = o.vSampling = 2;
        o.restartRows = 1;
        break;
    }
    return test::libjpegJpeg(pic, o);
}

cv::Mat fullDecode(const std::string& bytes) {
    auto img = decodeImage(bytes, "test.jpg");
    if (!img.ok()) qFatal("%s", img.error().toString().c_str());
    return img.value();
}

bool same(const cv::Mat& a, const cv::Mat& b) {
    return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

}  // namespace

class TestJpegDecoder : public QObject {
    Q_OBJECT

private slots:
    void regionEqualsFullDecode_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        const std::pair<const char*, Kind> kinds[] = {{"grey", Kind::Grey},
                                                      {"4:2:0", Kind::Cv420},
                                                      {"4:2:0 progressive", Kind::Cv420Progressive},
                                                      {"4:4:4", Kind::Jpeg444},
                                                      {"4:2:2", Kind::Jpeg422},
                                                      {"4:4:4 progressive", Kind::Jpeg444Progressive},
                                                      {"4:2:0 restarts", Kind::Jpeg420Restarts}};
        const int sizes[][2] = {{500, 375}, {37, 29}, {64, 64}, {231, 257}, {17, 300}};
        for (const auto& [name, kind] : kinds)
            for (const auto& s : sizes)
                QTest::addRow("%s %dx%d", name, s[0], s[1]) << int(kind) << s[0] << s[1];
    }

    void regionEqualsFullDecode() {
        QFETCH(int, kind);
        QFETCH(int, width);
        QFETCH(int, height);
        const std::string bytes = makeJpeg(Kind(kind), width, height, uint64_t(width * 1000 + height));
        const cv::Mat full = fullDecode(bytes);
        QCOMPARE(full.cols, width);
        QCOMPARE(full.rows, height);
        // The whole picture, the four corners, 1x1 corners, full-width and full-height strips, then
        // regions of random size at random places.
        std::vector<cv::Rect> regions{{0, 0, width, height},
                                      {0, 0, width / 2, height / 2},
                                      {width - width / 2, 0, width / 2, height / 2},
                                      {0, height - height / 2, width / 2, height / 2},
                                      {width - width / 2, height - height / 2, width / 2, height / 2},
                                      {0, 0, 1, 1},
                                      {width - 1, height - 1, 1, 1},
                                      {0, height / 3, width, 1 + height / 3},
                                      {width / 3, 0, 1 + width / 3, height}};
        for (uint64_t k = 0; k < 40; ++k) {
            const int w = 1 + int(rng::bits(5, k, 0) % uint32_t(width));
            const int h = 1 + int(rng::bits(5, k, 1) % uint32_t(height));
            regions.emplace_back(int(rng::bits(5, k, 2) % uint32_t(width - w + 1)),
                                 int(rng::bits(5, k, 3) % uint32_t(height - h + 1)), w, h);
        }
        const JpegPathCounts before = jpegPathCounts();
        for (const cv::Rect& r : regions) {
            JpegRegionDecoder jpeg;
            QVERIFY(jpeg.open(bytes));
            QCOMPARE(jpeg.width(), width);
            QCOMPARE(jpeg.height(), height);
            cv::Mat region;
            QVERIFY(jpeg.decodeRegion(r, region));
            if (!same(region, full(r)))
                QFAIL(qPrintable(
                    QString("region %1,%2 %3x%4 differs by up to %5")
                        .arg(r.x)
                        .arg(r.y)
                        .arg(r.width)
                        .arg(r.height)
                        .arg(region.size() == r.size() ? cv::norm(region, full(r), cv::NORM_INF) : -1.0)));
        }
        QCOMPARE(jpegPathCounts().cropped - before.cropped, int64_t(regions.size()));
        QCOMPARE(jpegPathCounts().fallback, before.fallback);
    }

    void oneDecoderReadsManyFiles() {
        // open() after a decode, and open() after open() without a decode, start afresh.
        const std::string a = makeJpeg(Kind::Cv420, 80, 60, 1), b = makeJpeg(Kind::Grey, 50, 70, 2);
        JpegRegionDecoder jpeg;
        QVERIFY(jpeg.open(a));
        QVERIFY(jpeg.open(b));
        cv::Mat out;
        QVERIFY(jpeg.decodeRegion(cv::Rect(3, 5, 20, 30), out));
        QVERIFY(same(out, fullDecode(b)(cv::Rect(3, 5, 20, 30))));
        QVERIFY(!jpeg.decodeRegion(cv::Rect(3, 5, 20, 30), out));  // one decode per header
        QVERIFY(jpeg.open(a));
        QVERIFY(!jpeg.decodeRegion(cv::Rect(70, 0, 20, 10), out));  // outside the picture
        QVERIFY(jpeg.open(a));
        QVERIFY(jpeg.decodeRegion(cv::Rect(70, 50, 10, 10), out));
        QVERIFY(same(out, fullDecode(a)(cv::Rect(70, 50, 10, 10))));
    }

    void exifOrientationIgnoredByBothPaths() {
        // decodeImage reads pictures as stored (OpenCV's IMREAD_UNCHANGED ignores the EXIF
        // orientation), so the header's size is the size random crops are drawn in.
        const std::string bytes = test::withExifOrientation(makeJpeg(Kind::Cv420, 60, 30, 3), 6);
        const cv::Mat full = fullDecode(bytes);
        QCOMPARE(full.size(), cv::Size(60, 30));
        JpegRegionDecoder jpeg;
        QVERIFY(jpeg.open(bytes));
        QCOMPARE(jpeg.width(), 60);
        cv::Mat out;
        QVERIFY(jpeg.decodeRegion(cv::Rect(20, 3, 33, 21), out));
        QVERIFY(same(out, full(cv::Rect(20, 3, 33, 21))));
    }

    void scaledSizesAndQuality() {
        const cv::Mat pic = test::photoLike(1001, 763, 3, 9);
        const std::string bytes = test::cvJpeg(pic);
        const cv::Mat full = fullDecode(bytes);
        for (int denom : {2, 4, 8}) {
            const JpegPathCounts before = jpegPathCounts();
            JpegRegionDecoder jpeg;
            QVERIFY(jpeg.open(bytes));
            const cv::Size expected((1001 + denom - 1) / denom, (763 + denom - 1) / denom);
            QCOMPARE(jpeg.scaledSize(denom), expected);
            cv::Mat scaled;
            QVERIFY(jpeg.decodeScaled(denom, scaled));
            QCOMPARE(scaled.size(), expected);
            QCOMPARE(scaled.type(), CV_8UC3);
            const JpegPathCounts after = jpegPathCounts();
            QCOMPARE(after.scaledHalf - before.scaledHalf, int64_t(denom == 2));
            QCOMPARE(after.scaledQuarter - before.scaledQuarter, int64_t(denom == 4));
            QCOMPARE(after.scaledEighth - before.scaledEighth, int64_t(denom == 8));
            // The scaled inverse DCT averages each 8x8 block down to 8/denom pixels: it is an area
            // downscale of the full decode up to JPEG's own rounding (the odd last row and
            // column hold a partial block and are left out here). Measured: 0.24-0.28 grey levels.
            const cv::Rect whole(0, 0, 1001 / denom, 763 / denom);
            cv::Mat area;
            cv::resize(full(cv::Rect(0, 0, whole.width * denom, whole.height * denom)), area, whole.size(), 0,
                       0, cv::INTER_AREA);
            cv::Mat diff;
            cv::absdiff(scaled(whole), area, diff);
            const double meanDiff = cv::mean(cv::mean(diff))[0];
            QVERIFY2(meanDiff < 1.0,
                     qPrintable(QString("1/%1: mean difference %2").arg(denom).arg(meanDiff)));
        }
        JpegRegionDecoder jpeg;
        QVERIFY(jpeg.open(bytes));
        cv::Mat out;
        QVERIFY(!jpeg.decodeScaled(3, out));
    }

    void leavesToOpenCvWhatItDoesNotHandle() {
        const cv::Mat rgb = test::photoLike(96, 200, 3, 4);
        JpegRegionDecoder jpeg;
        cv::Mat out;

        // CMYK: OpenCV converts it to RGB its own way.
        cv::Mat cmyk(rgb.rows, rgb.cols, CV_8UC4);
        const int fromTo[] = {0, 0, 1, 1, 2, 2, 0, 3};
        cv::mixChannels(&rgb, 1, &cmyk, 1, fromTo, 4);
        test::LibjpegOptions o;
        o.cmyk = true;
        const std::string cmykBytes = test::libjpegJpeg(cmyk, o);
        JpegPathCounts before = jpegPathCounts();
        QVERIFY(!jpeg.open(cmykBytes));
        QCOMPARE(jpegPathCounts().fallback - before.fallback, int64_t(1));
        QCOMPARE(fullDecode(cmykBytes).channels(), 3);

        // Cut short: the top rows are all there, but the file is reported as truncated.
        const std::string whole = test::cvJpeg(rgb);
        const std::string cut = whole.substr(0, whole.size() * 2 / 3);
        before = jpegPathCounts();
        QVERIFY(!jpeg.open(cut));
        QCOMPARE(jpegPathCounts().fallback - before.fallback, int64_t(1));
        auto truncated = decodeImage(cut, "cut.jpg");
        QVERIFY(!truncated.ok());
        QVERIFY(isBadSampleError(truncated.error()));

        // Damaged far below the region: the rows it needs decode cleanly, yet libjpeg's warning
        // about the rest sends the file to OpenCV, which decodes it as it always did.
        const std::string damaged = test::damageJpeg(whole, 0.85);
        before = jpegPathCounts();
        QVERIFY(jpeg.open(damaged));
        QVERIFY(!jpeg.decodeRegion(cv::Rect(0, 0, 32, 16), out));
        QVERIFY(out.empty());
        QVERIFY(jpeg.open(damaged));
        QVERIFY(!jpeg.decodeScaled(2, out));
        QCOMPARE(jpegPathCounts().fallback - before.fallback, int64_t(2));
        QCOMPARE(jpegPathCounts().cropped, before.cropped);

        // Not a JPEG at all: refused without counting a fallback.
        std::vector<uchar> png;
        cv::imencode(".png", rgb, png);
        before = jpegPathCounts();
        QVERIFY(!jpeg.open(std::string(png.begin(), png.end())));
        QVERIFY(!jpeg.open(std::string()));
        QCOMPARE(jpegPathCounts().fallback, before.fallback);
    }
};

QTEST_GUILESS_MAIN(TestJpegDecoder)
#include "tst_jpeg_decoder.moc"
