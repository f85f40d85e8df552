// SPDX-License-Identifier: Apache-2.0
// {"b64": ...} images for the REST API: the format and pixel count checked from the header, then
// decoded with OpenCV, converted to the input's channels and size, then the model's preprocessing.
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "engine/serve/json_tensor.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {
namespace {

Error invalid(const std::string& message) { return serveError(TfCode::InvalidArgument, message); }

std::string shapeText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

uint32_t be16(std::string_view b, size_t i) { return (uint32_t(uint8_t(b[i])) << 8) | uint8_t(b[i + 1]); }
uint32_t be32(std::string_view b, size_t i) { return (be16(b, i) << 16) | be16(b, i + 2); }
uint32_t le16(std::string_view b, size_t i) { return (uint32_t(uint8_t(b[i + 1])) << 8) | uint8_t(b[i]); }
uint32_t le32(std::string_view b, size_t i) { return (le16(b, i + 2) << 16) | le16(b, i); }

// JPEG: the frame header (SOFn) gives the size; markers before it are skipped by their lengths.
Result<ImageHeader> jpegHeader(std::string_view b) {
    size_t i = 2;
    while (i + 1 < b.size()) {
        if (uint8_t(b[i]) != 0xFF) break;
        while (i < b.size() && uint8_t(b[i]) == 0xFF) ++i;  // fill bytes
        if (i >= b.size()) break;
        const uint8_t marker = uint8_t(b[i++]);
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length field
        if (marker == 0xD9 || marker == 0xDA || i + 2 > b.size()) break;     // image data before any frame header
        const uint32_t length = be16(b, i);
        if (length < 2) break;
        const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (frame) {
            if (i + 7 > b.size()) break;
            return ImageHeader{"JPEG", be16(b, i + 5), be16(b, i + 3)};
        }
        i += length;
    }
    return Error(ErrorCode::InvalidArgument, "the JPEG data has no readable frame header");
}

}  // namespace

Result<ImageHeader> readImageHeader(std::string_view b) {
    static constexpr char kPng[] = "\x89PNG\r\n\x1a\n";
    if (b.size() >= 8 && b.substr(0, 8) == std::string_view(kPng, 8)) {
        if (b.size() < 24 || b.substr(12, 4) != "IHDR") return Error(ErrorCode::InvalidArgument, "the PNG data has no IHDR header");
        return ImageHeader{"PNG", be32(b, 16), be32(b, 20)};
    }
    if (b.size() >= 3 && uint8_t(b[0]) == 0xFF && uint8_t(b[1]) == 0xD8 && uint8_t(b[2]) == 0xFF) return jpegHeader(b);
    if (b.size() >= 2 && b[0] == 'B' && b[1] == 'M') {
        if (b.size() < 26) return Error(ErrorCode::InvalidArgument, "the BMP data is too short for its header");
        const uint32_t headerSize = le32(b, 14);
        if (headerSize == 12) return ImageHeader{"BMP", le16(b, 18), le16(b, 20)};
        // Height is negative for top-down bitmaps.
        const auto height = static_cast<int32_t>(le32(b, 22));
        return ImageHeader{"BMP", static_cast<int32_t>(le32(b, 18)), height < 0 ? -int64_t(height) : int64_t(height)};
    }
    return Error(ErrorCode::InvalidArgument, "the b64 data is not a PNG, JPEG or BMP image");
}

Status decodeImageInto(const std::string& bytes, const TensorSpec& spec, float* out, const std::string& where,
                       int64_t maxPixels) {
    const auto dims = spec.itemShape();
    if (dims.size() != 2 && dims.size() != 3)
        return invalid(where + ": input \"" + spec.name + "\" has shape " + shapeText(dims) +
                       " and does not take images ({\"b64\": ...} needs an input of shape [height, width, channels])");
    const int height = static_cast<int>(dims[0]);
    const int width = static_cast<int>(dims[1]);
    const int channels = dims.size() == 3 ? static_cast<int>(dims[2]) : 1;
    if (channels != 1 && channels != 3 && channels != 4)
        return invalid(where + ": input \"" + spec.name + "\" has " + std::to_string(channels) + " channels; images need 1, 3 or 4");
    // Only the three whitelisted decoders ever see request bytes, and only for images whose
    // header promises no more than maxPixels pixels.
    auto header = readImageHeader(bytes);
    if (!header) return invalid(where + ": input \"" + spec.name + "\": " + header.error().message);
    const ImageHeader& h = header.value();
    if (h.width <= 0 || h.height <= 0)
        return invalid(where + ": input \"" + spec.name + "\": the " + h.format + " header gives a size of " +
                       std::to_string(h.width) + "x" + std::to_string(h.height));
    if (h.width > maxPixels / h.height)
        return invalid(where + ": input \"" + spec.name + "\": the " + h.format + " image is " + std::to_string(h.width) + "x" +
                       std::to_string(h.height) + " pixels, more than the limit of " + std::to_string(maxPixels) + " pixels");
    cv::Mat decoded;
    try {
        const cv::Mat raw(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
        decoded = bytes.empty() ? cv::Mat() : cv::imdecode(raw, cv::IMREAD_UNCHANGED);
    } catch (const cv::Exception&) {
        decoded = cv::Mat();
    }
    if (decoded.empty())
        return invalid(where + ": input \"" + spec.name + "\": the b64 data is not a decodable image");
    try {
        if (decoded.depth() != CV_8U) {
            cv::Mat eight;
            decoded.convertTo(eight, CV_8U, decoded.depth() == CV_16U ? 1.0 / 257.0 : 1.0);
            decoded = eight;
        }
        cv::Mat converted;
        const int have = decoded.channels();
        if (channels == 1) {
            if (have == 1) converted = decoded;
            else cv::cvtColor(decoded, converted, have == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY);
        } else if (channels == 3) {
            if (have == 1) cv::cvtColor(decoded, converted, cv::COLOR_GRAY2RGB);
            else cv::cvtColor(decoded, converted, have == 4 ? cv::COLOR_BGRA2RGB : cv::COLOR_BGR2RGB);
        } else {
            if (have == 1) cv::cvtColor(decoded, converted, cv::COLOR_GRAY2RGBA);
            else cv::cvtColor(decoded, converted, have == 4 ? cv::COLOR_BGRA2RGBA : cv::COLOR_BGR2RGBA);
        }
        if (converted.rows != height || converted.cols != width) {
            cv::Mat resized;
            const bool shrink = converted.rows > height || converted.cols > width;
            cv::resize(converted, resized, cv::Size(width, height), 0, 0, shrink ? cv::INTER_AREA : cv::INTER_LINEAR);
            converted = resized;
        }
        if (!converted.isContinuous()) converted = converted.clone();
        const ImagePreprocessing& p = spec.image;
        const uint8_t* px = converted.ptr<uint8_t>();
        const int64_t n = static_cast<int64_t>(height) * width;
        for (int64_t i = 0; i < n; ++i)
            for (int c = 0; c < channels; ++c) {
                float v = px[i * channels + c] * p.scale + p.offset;
                if (!p.mean.empty()) v -= p.mean[static_cast<size_t>(c)];
                if (!p.std.empty()) v /= p.std[static_cast<size_t>(c)];
                out[i * channels + c] = v;
            }
    } catch (const cv::Exception& e) {
        return invalid(where + ": input \"" + spec.name + "\": the image could not be converted: " + e.what());
    }
    return okStatus();
}

}  // namespace kiln::engine::serve
