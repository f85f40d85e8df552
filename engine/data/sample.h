// SPDX-License-Identifier: Apache-2.0
// One sample as it travels through the streaming pipeline: per column either the bytes of an
// encoded image, a decoded image (OpenCV matrix, HWC) or plain numbers; plus where it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "engine/core/error.h"
#include "engine/core/shape.h"

namespace kiln::engine::data {

// What a source column holds.
struct ColumnSpec {
    std::string name;
    // Per-sample shape. Images: [H,W,C] when every image has that size; dimensions that vary
    // between files are 0 (they are fixed by a resize or crop transform).
    Shape shape;
    bool image = false;                   // stored as an encoded or decoded picture
    bool text = false;                    // raw bytes that are no picture (a file name); never batched
    std::vector<std::string> classNames;  // for a label column: one name per class index
};

// One column of one sample.
struct SampleValue {
    enum class Kind { Numbers, Encoded, Image };
    Kind kind = Kind::Numbers;
    std::string encoded;        // Kind::Encoded: the bytes of a PNG/JPEG/BMP/TIFF file
    cv::Mat image;              // Kind::Image: rows x cols x channels, CV_8U or CV_32F, RGB order
    std::vector<float> values;  // Kind::Numbers
    Shape shape;                // Kind::Numbers: the shape of `values`

    static SampleValue numbers(std::vector<float> v, Shape s) {
        SampleValue out;
        out.values = std::move(v);
        out.shape = std::move(s);
        return out;
    }
    static SampleValue scalar(float v) { return numbers({v}, Shape{}); }
};

struct Sample {
    int64_t index = -1;               // position in the source (the key of per-sample randomness)
    std::string origin;               // the file the sample (or its image) came from, for reports
    std::vector<SampleValue> values;  // one per source column, in ColumnSpec order
};

// A sample that could not be read or decoded and was left out.
struct BadSample {
    int64_t index = -1;
    std::string path;
    std::string reason;
};

// How an encoded picture is turned into pixels.
struct DecodeOptions {
    // 0 keeps the file's own channels (grey stays 1, colour becomes RGB, alpha is dropped);
    // 1 converts to grey; 3 to RGB.
    int channels = 0;
};

// Errors about one sample that the pipeline may skip (an unreadable or corrupt picture) carry
// the parameter bad_sample=1; every other error stops the pipeline.
Error badSampleError(const std::string& path, const std::string& reason);
bool isBadSampleError(const Error& error);

// Decodes PNG/JPEG/BMP/TIFF bytes into an HWC image in RGB order (8-bit, or 32-bit float for
// files with 16-bit or float samples). DataError with `origin` as the file when the bytes are
// empty, truncated or not a picture.
Result<cv::Mat> decodeImage(const std::string& bytes, const std::string& origin,
                            const DecodeOptions& options = {});

// libjpeg fills a truncated picture with grey and only warns; a complete baseline or progressive
// JPEG has an end-of-image marker after its last start-of-scan marker. False for bytes cut short.
bool jpegComplete(const std::string& bytes);

// The per-sample shape of a value: [H,W,C] for an image, `shape` for numbers. Encoded values
// have no shape yet (an empty Shape with rank 0 and `known` false).
Shape valueShape(const SampleValue& value, bool* known = nullptr);

// Appends the value's elements as floats (images row-major HWC) to `out`, which must hold
// exactly valueShape().numel() floats. Encoded values must be decoded first.
void copyValue(const SampleValue& value, float* out);

}  // namespace kiln::engine::data
