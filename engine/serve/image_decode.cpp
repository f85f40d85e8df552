// SPDX-License-Identifier: Apache-2.0
// {"b64": ...} images for the REST API: decoded with OpenCV, converted to the input's channels and
// size, then the model's preprocessing.
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

}  // namespace

Status decodeImageInto(const std::string& bytes, const TensorSpec& spec, float* out, const std::string& where) {
    const auto dims = spec.itemShape();
    if (dims.size() != 2 && dims.size() != 3)
        return invalid(where + ": input \"" + spec.name + "\" has shape " + shapeText(dims) +
                       " and does not take images ({\"b64\": ...} needs an input of shape [height, width, channels])");
    const int height = static_cast<int>(dims[0]);
    const int width = static_cast<int>(dims[1]);
    const int channels = dims.size() == 3 ? static_cast<int>(dims[2]) : 1;
    if (channels != 1 && channels != 3 && channels != 4)
        return invalid(where + ": input \"" + spec.name + "\" has " + std::to_string(channels) + " channels; images need 1, 3 or 4");
    cv::Mat decoded;
    try {
        const cv::Mat raw(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
        decoded = bytes.empty() ? cv::Mat() : cv::imdecode(raw, cv::IMREAD_UNCHANGED);
    } catch (const cv::Exception&) {
        decoded = cv::Mat();
    }
    if (decoded.empty())
        return invalid(where + ": input \"" + spec.name + "\": the b64 data is not an image OpenCV can decode");
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
