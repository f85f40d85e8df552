// SPDX-License-Identifier: Apache-2.0
// Decoding of encoded pictures (with checks OpenCV leaves out, such as a JPEG cut short) and
// the conversion of sample values to floats.
#include "engine/data/sample.h"

#include <cstring>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace kiln::engine::data {

Error badSampleError(const std::string& path, const std::string& reason) {
    return Error(ErrorCode::DataError, path + ": " + reason + ".")
        .withFile(path)
        .with("file", path)
        .with("reason", reason)
        .with("bad_sample", "1");
}

bool isBadSampleError(const Error& error) {
    return error.param("bad_sample") == "1";
}

namespace {

bool startsWith(const std::string& s, const char* prefix, size_t n) {
    return s.size() >= n && std::memcmp(s.data(), prefix, n) == 0;
}

}  // namespace

bool jpegComplete(const std::string& bytes) {
    const size_t sos = bytes.rfind("\xFF\xDA");
    if (sos == std::string::npos) return false;
    const size_t eoi = bytes.rfind("\xFF\xD9");
    return eoi != std::string::npos && eoi > sos;
}

Result<cv::Mat> decodeImage(const std::string& bytes, const std::string& origin,
                            const DecodeOptions& options) {
    if (bytes.empty()) return badSampleError(origin, "the file is empty");
    const bool jpeg = startsWith(bytes, "\xFF\xD8\xFF", 3);
    const bool png = startsWith(bytes, "\x89PNG\r\n\x1A\n", 8);
    const bool bmp = startsWith(bytes, "BM", 2);
    const bool tiff = startsWith(bytes, "II*\0", 4) || startsWith(bytes, "MM\0*", 4);
    if (!jpeg && !png && !bmp && !tiff) return badSampleError(origin, "not a JPEG, PNG, BMP or TIFF picture");
    if (jpeg && !jpegComplete(bytes)) return badSampleError(origin, "the JPEG data is truncated");
    if (png && bytes.size() < 12 + 8 + 12) return badSampleError(origin, "the PNG data is truncated");
    cv::Mat raw;
    try {
        const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
        raw = cv::imdecode(buffer, cv::IMREAD_UNCHANGED);
    } catch (const cv::Exception& e) {
        return badSampleError(origin, std::string("the picture cannot be decoded (") + e.what() + ")");
    }
    if (raw.empty() || raw.dims != 2)
        return badSampleError(origin, "the picture data is corrupt or truncated");

    cv::Mat img;
    switch (raw.channels()) {
    case 1:
        img = raw;
        break;
    case 2:
        cv::extractChannel(raw, img, 0);
        break;  // grey + alpha
    case 3:
        cv::cvtColor(raw, img, cv::COLOR_BGR2RGB);
        break;
    case 4:
        cv::cvtColor(raw, img, cv::COLOR_BGRA2RGB);
        break;
    default:
        return badSampleError(origin, "the picture has " + std::to_string(raw.channels()) + " channels");
    }
    if (options.channels == 1 && img.channels() == 3) {
        cv::Mat grey;
        cv::cvtColor(img, grey, cv::COLOR_RGB2GRAY);
        img = grey;
    } else if (options.channels == 3 && img.channels() == 1) {
        cv::Mat rgb;
        cv::cvtColor(img, rgb, cv::COLOR_GRAY2RGB);
        img = rgb;
    }
    if (img.depth() != CV_8U && img.depth() != CV_32F) {
        cv::Mat f;
        img.convertTo(f, CV_32F);
        img = f;
    }
    return img;
}

Shape valueShape(const SampleValue& value, bool* known) {
    if (known) *known = value.kind != SampleValue::Kind::Encoded;
    switch (value.kind) {
    case SampleValue::Kind::Numbers:
        return value.shape;
    case SampleValue::Kind::Image:
        return Shape{value.image.rows, value.image.cols, value.image.channels()};
    case SampleValue::Kind::Encoded:
        break;
    }
    return Shape{};
}

void copyValue(const SampleValue& value, float* out) {
    if (value.kind == SampleValue::Kind::Numbers) {
        std::memcpy(out, value.values.data(), value.values.size() * sizeof(float));
        return;
    }
    if (value.kind != SampleValue::Kind::Image) return;
    const cv::Mat& m = value.image;
    const size_t rowElems = static_cast<size_t>(m.cols) * static_cast<size_t>(m.channels());
    for (int r = 0; r < m.rows; ++r) {
        float* dst = out + static_cast<size_t>(r) * rowElems;
        if (m.depth() == CV_32F) {
            std::memcpy(dst, m.ptr<float>(r), rowElems * sizeof(float));
        } else {
            const uint8_t* src = m.ptr<uint8_t>(r);
            for (size_t i = 0; i < rowElems; ++i) dst[i] = static_cast<float>(src[i]);
        }
    }
}

}  // namespace kiln::engine::data
