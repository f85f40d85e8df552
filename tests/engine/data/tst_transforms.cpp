// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// Each transform against values worked out by hand (resize, crops, flips, rotation,
// brightness/contrast, normalisation presets, standardisation fitted on the training part only),
// determinism of the random ones, the JSON form with its errors, and JPEG decoding fused with the
// crop or resize after it (the same pixels as decoding first, or within the resize tolerance).
#include <QtTest>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "engine/core/rng.h"
#include "engine/data/jpeg_decoder.h"
#include "engine/data/sources.h"
#include "engine/data/transforms.h"
#include "jpeg_samples.h"

using namespace kiln;
using namespace kiln::engine;
using namespace kiln::engine::data;
using nlohmann::json;

namespace {

const std::vector<ColumnSpec> kImageSpec{ColumnSpec{"image", Shape{0, 0, 0}, true, false, {}}};

Sample imageSample(const cv::Mat& m, int64_t index = 0) {
    Sample s;
    s.index = index;
    s.origin = "test.png";
    SampleValue v;
    v.kind = SampleValue::Kind::Image;
    v.image = m.clone();
    s.values.push_back(std::move(v));
    return s;
}

// A rows x cols float picture with value r*cols + c + 1.
cv::Mat ramp(int rows, int cols) {
    cv::Mat m(rows, cols, CV_32FC1);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) m.at<float>(r, c) = static_cast<float>(r * cols + c + 1);
    return m;
}

TransformList parse(const char* text) {
    auto t = TransformList::fromJson(json::parse(text));
    if (!t.ok()) qFatal("%s", t.error().toString().c_str());
    return t.value();
}

cv::Mat run(const char* transforms, const cv::Mat& in, int64_t index = 0, uint64_t seed = 1, int epoch = 0) {
    Sample s = imageSample(in, index);
    Status st = parse(transforms).apply(s, kImageSpec, seed, epoch);
    if (!st.ok()) qFatal("%s", st.error().toString().c_str());
    return s.values[0].image;
}

Sample encodedSample(const std::string& bytes, int64_t index = 0) {
    Sample s;
    s.index = index;
    s.origin = "photo.jpg";
    SampleValue v;
    v.kind = SampleValue::Kind::Encoded;
    v.encoded = bytes;
    s.values.push_back(std::move(v));
    return s;
}

// The transforms on the encoded picture (the decoder may do the first crop or resize itself) and
// on the picture decoded in full beforehand (the crop or resize runs on pixels): both results.
std::pair<cv::Mat, cv::Mat> fusedAndPlain(const TransformList& list, const std::string& bytes, int channels,
                                          int64_t index, int epoch) {
    Sample fused = encodedSample(bytes, index);
    Status st = list.apply(fused, kImageSpec, 3, epoch);
    if (!st.ok()) qFatal("%s", st.error().toString().c_str());
    DecodeOptions o;
    o.channels = channels;
    auto full = decodeImage(bytes, "photo.jpg", o);
    if (!full.ok()) qFatal("%s", full.error().toString().c_str());
    Sample plain = imageSample(full.value(), index);
    st = list.apply(plain, kImageSpec, 3, epoch);
    if (!st.ok()) qFatal("%s", st.error().toString().c_str());
    return {fused.values[0].image, plain.values[0].image};
}

double meanAbsDiff(const cv::Mat& a, const cv::Mat& b) {
    cv::Mat d;
    cv::absdiff(a, b, d);
    return cv::mean(cv::mean(d))[0];
}

std::vector<float> values(const cv::Mat& m) {
    cv::Mat f;
    m.convertTo(f, CV_32F);
    f = f.clone();
    return std::vector<float>(f.ptr<float>(0),
                              f.ptr<float>(0) + f.total() * static_cast<size_t>(f.channels()));
}

}  // namespace

class TestTransforms : public QObject {
    Q_OBJECT

private slots:
    void resize() {
        const cv::Mat m = ramp(2, 2);  // 1 2 / 3 4
        const cv::Mat up = run(R"([{"type": "resize", "size": 4, "interpolation": "nearest"}])", m);
        QCOMPARE(values(up), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
        // Area downsampling by 2 averages 2x2 blocks: ramp(4,4) blocks -> 3.5 5.5 / 11.5 13.5.
        const cv::Mat down =
            run(R"([{"type": "resize", "size": [2, 2], "interpolation": "area"}])", ramp(4, 4));
        QCOMPARE(values(down), (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
        // The shorter side to 2 keeps the aspect ratio: 4x8 -> 2x4.
        const cv::Mat shorter = run(R"([{"type": "resize", "shorter_side": 2}])", ramp(4, 8));
        QCOMPARE(shorter.rows, 2);
        QCOMPARE(shorter.cols, 4);
    }

    void centerCrop() {
        // 5x5 ramp, crop 3: rows and columns 1..3.
        const cv::Mat c = run(R"([{"type": "center_crop", "size": 3}])", ramp(5, 5));
        QCOMPARE(values(c), (std::vector<float>{7, 8, 9, 12, 13, 14, 17, 18, 19}));
        // 4x5 to 2x2: top (4-2)/2 = 1, left (5-2)/2 = 1 (rounded down).
        const cv::Mat d = run(R"([{"type": "center_crop", "size": [2, 2]}])", ramp(4, 5));
        QCOMPARE(values(d), (std::vector<float>{7, 8, 12, 13}));
        // Too small: a bad sample naming the file.
        Sample s = imageSample(ramp(2, 2));
        Status st = parse(R"([{"type": "center_crop", "size": 3}])").apply(s, kImageSpec, 1, 0);
        QVERIFY(!st.ok());
        QVERIFY(isBadSampleError(st.error()));
        QCOMPARE(st.error().file, std::string("test.png"));
    }

    void randomCrop() {
        const char* spec = R"([{"type": "random_crop", "size": 2}])";
        const cv::Mat m = ramp(4, 4);
        std::set<std::pair<int, int>> offsets;
        for (int64_t i = 0; i < 200; ++i) {
            const cv::Mat c = run(spec, m, i, 7, 3);
            // The offsets from Philox keyed by (seed 7, epoch 3, sample i, transform 0).
            const uint64_t epochSeed = rng::mix(7, 3), stream = rng::mix(static_cast<uint64_t>(i), 0);
            const int top = static_cast<int>(rng::uniform(epochSeed, stream, 0) * 3.0f);
            const int left = static_cast<int>(rng::uniform(epochSeed, stream, 1) * 3.0f);
            const float first = static_cast<float>(top * 4 + left + 1);
            QCOMPARE(values(c), (std::vector<float>{first, first + 1, first + 4, first + 5}));
            offsets.insert({top, left});
            // Same key, same crop; another epoch usually differs.
            QCOMPARE(values(run(spec, m, i, 7, 3)), values(c));
        }
        QCOMPARE(offsets.size(), size_t(9));  // all 3x3 positions occur
        // Padding 1 around a 2x2 picture, crop 2x2: some crops hold the zero border.
        bool sawZero = false;
        for (int64_t i = 0; i < 50; ++i) {
            const auto v =
                values(run(R"([{"type": "random_crop", "size": 2, "padding": 1}])", ramp(2, 2), i));
            sawZero = sawZero || std::count(v.begin(), v.end(), 0.0f) > 0;
        }
        QVERIFY(sawZero);
    }

    void flips() {
        const cv::Mat m = ramp(2, 3);  // 1 2 3 / 4 5 6
        QCOMPARE(values(run(R"([{"type": "flip", "probability": 1}])", m)),
                 (std::vector<float>{3, 2, 1, 6, 5, 4}));
        QCOMPARE(
            values(run(R"([{"type": "flip", "horizontal": false, "vertical": true, "probability": 1}])", m)),
            (std::vector<float>{4, 5, 6, 1, 2, 3}));
        QCOMPARE(values(run(R"([{"type": "flip", "vertical": true, "probability": 1}])", m)),
                 (std::vector<float>{6, 5, 4, 3, 2, 1}));
        QCOMPARE(values(run(R"([{"type": "flip", "probability": 0}])", m)), values(m));
        int flipped = 0;
        for (int64_t i = 0; i < 1000; ++i)
            flipped += values(run(R"([{"type": "flip"}])", m, i))[0] == 3.0f ? 1 : 0;
        QVERIFY2(flipped > 430 && flipped < 570, std::to_string(flipped).c_str());
    }

    void rotate() {
        // 90 degrees counter-clockwise about the centre: 1 2 3 / 4 5 6 / 7 8 9 -> 3 6 9 / 2 5 8 / 1 4 7.
        const cv::Mat r =
            run(R"([{"type": "rotate", "range": [90, 90], "interpolation": "nearest"}])", ramp(3, 3));
        QCOMPARE(values(r), (std::vector<float>{3, 6, 9, 2, 5, 8, 1, 4, 7}));
        // 180 degrees.
        const cv::Mat h =
            run(R"([{"type": "rotate", "range": [180, 180], "interpolation": "nearest"}])", ramp(3, 3));
        QCOMPARE(values(h), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1}));
        // 45 degrees on a 3x3: the corners leave, the fill value comes in.
        const cv::Mat f = run(
            R"([{"type": "rotate", "range": [45, 45], "fill": -1, "interpolation": "nearest"}])", ramp(5, 5));
        QCOMPARE(f.at<float>(0, 0), -1.0f);
        QCOMPARE(f.at<float>(2, 2), 13.0f);  // the centre stays
    }

    void brightnessContrast() {
        const cv::Mat m = ramp(3, 4);  // mean 6.5
        const char* spec = R"([{"type": "brightness_contrast", "brightness": 0.3, "contrast": 0.5}])";
        std::set<float> seenB;
        for (int64_t i = 0; i < 20; ++i) {
            const auto in = values(m), out = values(run(spec, m, i));
            double meanIn = 0, meanOut = 0;
            for (size_t k = 0; k < in.size(); ++k) meanIn += in[k], meanOut += out[k];
            meanIn /= static_cast<double>(in.size());
            meanOut /= static_cast<double>(in.size());
            // x' = c*b*x + (1-c)*b*m: the mean scales by b, deviations by c*b.
            const double b = meanOut / meanIn;
            const double cb = (out[11] - out[0]) / (in[11] - in[0]);
            const double c = cb / b;
            QVERIFY(b >= 0.7 - 1e-5 && b <= 1.3 + 1e-5);
            QVERIFY(c >= 0.5 - 1e-5 && c <= 1.5 + 1e-5);
            for (size_t k = 0; k < in.size(); ++k)
                QVERIFY(std::abs(out[k] - (cb * in[k] + (1 - c) * b * meanIn)) < 1e-3);
            seenB.insert(static_cast<float>(b));
        }
        QVERIFY(seenB.size() > 10);
        // 8-bit pictures saturate at 255.
        cv::Mat bytes(1, 2, CV_8UC1);
        bytes.at<uchar>(0, 0) = 250;
        bytes.at<uchar>(0, 1) = 10;
        bool clipped = false;
        for (int64_t i = 0; i < 20; ++i) {
            const cv::Mat o = run(R"([{"type": "brightness_contrast", "brightness": 0.5}])", bytes, i);
            QCOMPARE(o.depth(), CV_8U);
            clipped = clipped || o.at<uchar>(0, 0) == 255;
        }
        QVERIFY(clipped);
    }

    void normalizePresets() {
        cv::Mat px(1, 1, CV_8UC3, cv::Scalar(255, 0, 51));  // R G B as stored in the sample
        auto one = [&](const char* t) { return values(run(t, px)); };
        auto near = [](const std::vector<float>& a, const std::vector<float>& b) {
            for (size_t i = 0; i < a.size(); ++i)
                if (std::abs(a[i] - b[i]) > 1e-5f) return false;
            return a.size() == b.size();
        };
        QVERIFY(near(one(R"([{"type": "normalize", "preset": "unit"}])"), {1.0f, 0.0f, 0.2f}));
        QVERIFY(near(one(R"([{"type": "normalize", "preset": "imagenet"}])"),
                     {(1.0f - 0.485f) / 0.229f, (0.0f - 0.456f) / 0.224f, (0.2f - 0.406f) / 0.225f}));
        QVERIFY(near(one(R"([{"type": "normalize", "preset": "symmetric"}])"),
                     {1.0f, -1.0f, 51.0f / 127.5f - 1.0f}));
        QVERIFY(near(one(R"([{"type": "normalize", "preset": "centered"}])"),
                     {1.0f, -127.0f / 128.0f, -76.0f / 128.0f}));
        QVERIFY(near(one(R"([{"type": "normalize", "scale": 1, "mean": [5, 0, 1], "std": [2, 1, 10]}])"),
                     {125.0f, 0.0f, 5.0f}));
        // Mean of the wrong length.
        Sample s = imageSample(px);
        QVERIFY(
            !parse(R"([{"type": "normalize", "mean": [1, 2], "std": 1}])").apply(s, kImageSpec, 1, 0).ok());
    }

    void standardizeFitsOnTrainingOnly() {
        Column features{"features", Shape{2}, {1, 10, 3, 30, 100, 1000}, {}, {}};
        Column label{"label", Shape{}, {0, 1, 0}, {}, {}};
        auto data = InMemoryDataset::create(3, {features, label});
        QVERIFY(data.ok());
        InMemorySource src(std::move(data.value()));
        TransformList list = parse(R"([{"type": "standardize", "column": "features"}])");
        QVERIFY(list.needsFit());
        const std::vector<int64_t> train{0, 1};
        QVERIFY(list.fit(src, train).ok());
        // Training mean (2, 20), population std (1, 10); sample 2 is not part of the fit.
        Sample s;
        QVERIFY(src.load(2, s).ok());
        QVERIFY(list.apply(s, src.columnSpecs(), 1, 0).ok());
        QCOMPARE(s.values[0].values, (std::vector<float>{98.0f, 98.0f}));
        QCOMPARE(s.values[1].values, (std::vector<float>{0.0f}));  // the label is left alone
        TransformList unknown = parse(R"([{"type": "standardize", "column": "nope"}])");
        QVERIFY(!unknown.fit(src, train).ok());
    }

    void decodeAndChannels() {
        cv::Mat bgr(2, 2, CV_8UC3, cv::Scalar(10, 20, 30));
        std::vector<uchar> png;
        QVERIFY(cv::imencode(".png", bgr, png));
        Sample s;
        s.index = 0;
        s.origin = "x.png";
        SampleValue v;
        v.kind = SampleValue::Kind::Encoded;
        v.encoded.assign(png.begin(), png.end());
        s.values.push_back(v);
        TransformList grey = parse(R"([{"type": "decode", "channels": 1}])");
        QVERIFY(grey.apply(s, kImageSpec, 0, 0).ok());
        QCOMPARE(s.values[0].image.channels(), 1);
        // A grey picture from a source that hands out pixels becomes RGB with channels 3.
        const cv::Mat rgb =
            run(R"([{"type": "decode", "channels": 3}])", cv::Mat(2, 2, CV_8UC1, cv::Scalar(9)));
        QCOMPARE(rgb.channels(), 3);
        QCOMPARE(rgb.at<cv::Vec3b>(1, 1), cv::Vec3b(9, 9, 9));
    }

    void jpegDecodeAndCropEqualsDecodeThenCrop_data() {
        QTest::addColumn<QString>("transforms");
        QTest::addColumn<int>("channels");
        QTest::newRow("random crop") << R"([{"type": "random_crop", "size": [24, 40]}])" << 0;
        QTest::newRow("decode rgb, centre crop, flip")
            << R"([{"type": "decode", "channels": 3}, {"type": "center_crop", "size": 31},
                  {"type": "flip"}])"
            << 3;
        QTest::newRow("decode grey, random crop, normalize")
            << R"([{"type": "decode", "channels": 1}, {"type": "random_crop", "size": [17, 33]},
                  {"type": "normalize", "preset": "unit"}])"
            << 1;
        QTest::newRow("decode, decode again, random crop")
            << R"([{"type": "decode", "channels": 3}, {"type": "decode", "channels": 3},
                  {"type": "random_crop", "size": 16}])"
            << 3;
    }

    void jpegDecodeAndCropEqualsDecodeThenCrop() {
        QFETCH(QString, transforms);
        QFETCH(int, channels);
        const TransformList list = parse(transforms.toStdString().c_str());
        // Grey and colour pictures, 4:2:0 from OpenCV and 4:4:4 from libjpeg, odd and even sizes.
        std::vector<std::string> files;
        const int sizes[][2] = {{61, 45}, {100, 41}, {48, 48}, {143, 97}};
        for (const auto& sz : sizes) {
            const cv::Mat colour = test::photoLike(sz[0], sz[1], 3, uint64_t(sz[0] + sz[1]));
            files.push_back(test::cvJpeg(colour));
            files.push_back(test::cvJpeg(test::photoLike(sz[0], sz[1], 1, uint64_t(sz[0]))));
            files.push_back(test::libjpegJpeg(colour, {}));
        }
        const JpegPathCounts before = jpegPathCounts();
        int64_t samples = 0;
        for (const std::string& bytes : files)
            for (int64_t index = 0; index < 6; ++index)
                for (int epoch = 0; epoch < 2; ++epoch) {
                    const auto [fused, plain] = fusedAndPlain(list, bytes, channels, index, epoch);
                    QCOMPARE(fused.size(), plain.size());
                    QCOMPARE(fused.type(), plain.type());
                    QCOMPARE(cv::norm(fused, plain, cv::NORM_INF), 0.0);
                    ++samples;
                }
        const JpegPathCounts after = jpegPathCounts();
        QCOMPARE(after.cropped - before.cropped, samples);
        QCOMPARE(after.fallback, before.fallback);
        QCOMPARE(after.scaled(), before.scaled());
    }

    void jpegCropsDecodedInFullWhenTheyMust() {
        const std::string bytes = test::cvJpeg(test::photoLike(40, 30, 3, 1));
        JpegPathCounts before = jpegPathCounts();
        // A padded random crop needs the whole picture; a decode that converts the channels twice
        // and a flip before the crop are not passed over. All still give the plain result.
        for (const char* list :
             {R"([{"type": "random_crop", "size": 20, "padding": 4}])",
              R"([{"type": "decode", "channels": 3}, {"type": "decode", "channels": 1},
                                     {"type": "center_crop", "size": 8}])",
              R"([{"type": "flip", "probability": 1}, {"type": "center_crop", "size": 8}])"}) {
            const auto [fused, plain] = fusedAndPlain(parse(list), bytes, 3, 5, 0);
            QCOMPARE(cv::norm(fused, plain, cv::NORM_INF), 0.0);
        }
        QCOMPARE(jpegPathCounts().cropped, before.cropped);
        // A crop larger than the picture: the same bad-sample error as after a full decode.
        Sample s = encodedSample(bytes);
        Status st = parse(R"([{"type": "random_crop", "size": 32}])").apply(s, kImageSpec, 1, 0);
        QVERIFY(!st.ok());
        QVERIFY(isBadSampleError(st.error()));
        QCOMPARE(st.error().file, std::string("photo.jpg"));
        QVERIFY(st.error().message.find("40x30") != std::string::npos);
        // PNG files are decoded by OpenCV as before.
        std::vector<uchar> png;
        cv::imencode(".png", test::photoLike(40, 30, 3, 1), png);
        before = jpegPathCounts();
        Sample p = encodedSample(std::string(png.begin(), png.end()));
        QVERIFY(parse(R"([{"type": "center_crop", "size": 8}])").apply(p, kImageSpec, 1, 0).ok());
        QCOMPARE(p.values[0].image.size(), cv::Size(8, 8));
        QCOMPARE(jpegPathCounts().cropped, before.cropped);
        QCOMPARE(jpegPathCounts().fallback, before.fallback);
        // A cached prefix that ends before the crop keeps the whole picture.
        Sample c = encodedSample(bytes);
        QVERIFY(parse(R"([{"type": "decode"}, {"type": "random_crop", "size": 8}])")
                    .apply(c, kImageSpec, 1, 0, 0, 1)
                    .ok());
        QCOMPARE(c.values[0].image.size(), cv::Size(40, 30));
    }

    void jpegScaledDecodeBeforeLargeDownscale() {
        // 1000x1000 resized to 224: decoded at 1/4 (250 px), the largest reduction that leaves at
        // least 224, then resized 250 -> 224.
        const std::string square = test::cvJpeg(test::photoLike(1000, 1000, 3, 21));
        JpegPathCounts before = jpegPathCounts();
        const auto [fused, plain] =
            fusedAndPlain(parse(R"([{"type": "resize", "size": 224}])"), square, 0, 0, 0);
        QCOMPARE(jpegPathCounts().scaledQuarter - before.scaledQuarter, int64_t(1));
        QCOMPARE(fused.size(), cv::Size(224, 224));
        QCOMPARE(plain.size(), cv::Size(224, 224));
        // Tolerance. Bilinear resizing by 4.5x from the full picture samples 2x2 pixels per
        // output pixel and aliases the grain; decoding at 1/4 averages 4x4 blocks first. The two
        // differ by that aliasing, so each is held against the picture an area (box) downscale
        // of the full decode gives: the scaled path must be at least as close to it as the plain
        // path (measured: 0.45 against 1.3 grey levels on average), and the two must stay within a
        // few grey levels of each other on average (measured 1.4).
        const auto full = decodeImage(square, "photo.jpg");
        QVERIFY(full.ok());
        cv::Mat area;
        cv::resize(full.value(), area, cv::Size(224, 224), 0, 0, cv::INTER_AREA);
        QVERIFY2(meanAbsDiff(fused, area) <= meanAbsDiff(plain, area),
                 qPrintable(QString("scaled %1, plain %2 from the area reference")
                                .arg(meanAbsDiff(fused, area))
                                .arg(meanAbsDiff(plain, area))));
        QVERIFY2(meanAbsDiff(fused, plain) < 3.0, qPrintable(QString::number(meanAbsDiff(fused, plain))));
        // With area interpolation both paths average; they agree to within a grey level (measured
        // 0.44).
        const auto [fusedArea, plainArea] = fusedAndPlain(
            parse(R"([{"type": "resize", "size": 224, "interpolation": "area"}])"), square, 0, 0, 0);
        QVERIFY2(meanAbsDiff(fusedArea, plainArea) < 1.0,
                 qPrintable(QString::number(meanAbsDiff(fusedArea, plainArea))));

        // The shorter side of 1001x763 to 256, grey output: 1/2 (501x382) is the largest reduction
        // that leaves 256 rows; the output size is the one the full picture gives (336x256).
        const std::string wide = test::cvJpeg(test::photoLike(1001, 763, 3, 22));
        before = jpegPathCounts();
        const TransformList eval =
            parse(R"([{"type": "decode", "channels": 1}, {"type": "resize", "shorter_side": 256},
                                             {"type": "center_crop", "size": 224}])");
        const auto [fusedEval, plainEval] = fusedAndPlain(eval, wide, 1, 0, 0);
        QCOMPARE(jpegPathCounts().scaledHalf - before.scaledHalf, int64_t(1));
        QCOMPARE(fusedEval.size(), cv::Size(224, 224));
        QCOMPARE(fusedEval.type(), CV_8UC1);
        QCOMPARE(plainEval.size(), fusedEval.size());
        QVERIFY2(meanAbsDiff(fusedEval, plainEval) < 3.0,  // measured 0.38
                 qPrintable(QString::number(meanAbsDiff(fusedEval, plainEval))));

        // Less than half the size: no reduction fits, the picture is decoded in full and the
        // result is exactly the plain one (500x375 to the shorter side 256).
        const std::string small = test::cvJpeg(test::photoLike(500, 375, 3, 23));
        before = jpegPathCounts();
        const auto [fusedSmall, plainSmall] =
            fusedAndPlain(parse(R"([{"type": "resize", "shorter_side": 256}])"), small, 0, 0, 0);
        QCOMPARE(jpegPathCounts().scaled(), before.scaled());
        QCOMPARE(fusedSmall.size(), cv::Size(341, 256));
        QCOMPARE(cv::norm(fusedSmall, plainSmall, cv::NORM_INF), 0.0);
    }

    void jsonErrorsNameTheField_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("field");
        QTest::newRow("unknown type") << R"([{"type": "blur"}])"
                                      << "data.transforms[0].type";
        QTest::newRow("unknown key") << R"([{"type": "flip"}, {"type": "resize", "size": 3, "sise": 4}])"
                                     << "data.transforms[1].sise";
        QTest::newRow("bad size") << R"([{"type": "center_crop", "size": -2}])"
                                  << "data.transforms[0].size";
        QTest::newRow("bad probability") << R"([{"type": "flip", "probability": 2}])"
                                         << "data.transforms[0].probability";
        QTest::newRow("bad preset") << R"([{"type": "normalize", "preset": "imagenett"}])"
                                    << "data.transforms[0].preset";
        QTest::newRow("not a list") << R"({"type": "flip"})"
                                    << "data.transforms";
    }

    void jsonErrorsNameTheField() {
        QFETCH(QString, text);
        QFETCH(QString, field);
        auto t = TransformList::fromJson(json::parse(text.toStdString()));
        QVERIFY(!t.ok());
        QCOMPARE(t.error().code, ErrorCode::ConfigError);
        QCOMPARE(QString::fromStdString(t.error().param("field")), field);
    }

    void presetsAndPrefix() {
        auto train = TransformList::preset("imagenet-train");
        QVERIFY(train.ok());
        QCOMPARE(train->items().size(), size_t(4));
        QCOMPARE(train->deterministicPrefix(), size_t(1));  // decode only: the crop is random
        auto eval = TransformList::preset("imagenet-eval");
        QVERIFY(eval.ok());
        QCOMPARE(eval->deterministicPrefix(), size_t(4));
        QVERIFY(!TransformList::preset("fancy").ok());
    }
};

QTEST_GUILESS_MAIN(TestTransforms)
#include "tst_transforms.moc"
