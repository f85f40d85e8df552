// SPDX-License-Identifier: Apache-2.0
// Int8 post-training quantisation of a trained project: calibration on samples of its training
// data (read through the project's own pipeline with the evaluation transforms, no augmentation),
// then the float model and its int8 simulations (ONNX QDQ, TensorFlow Lite full integer) side by
// side on the validation split (else the test split), for the report kiln-export and the studio's
// export dialog show. One calibration serves every layout.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/io/project.h"

namespace kiln::engine::api {

// Which values an int8 model holds in int8 (engine/io/quantize.h says which per layout).
enum class Int8Scheme {
    Qdq,          // ONNX QDQ: the inputs and outputs of Dense, Conv2D and DepthwiseConv2D
    FullInteger,  // TensorFlow Lite full integer: every value between the model's inputs and outputs
};

// Smallest and largest value a tensor took over the calibration samples.
struct CalibrationRange {
    float min = 0.0f;
    float max = 0.0f;
};

// value ≈ (q − zeroPoint) · scale with q an int8.
struct Int8Params {
    float scale = 1.0f;
    int32_t zeroPoint = 0;
};

// The quantisation of one model: parameters per quantised value and how weights are quantised.
struct Int8Quantization {
    std::map<std::string, Int8Params> values;  // node name → parameters of its output
    bool perChannel = true;
    Int8Scheme scheme = Int8Scheme::Qdq;
};

constexpr int64_t kDefaultCalibrationSamples = 200;
constexpr double kDefaultCalibrationPercentile = 99.99;

struct QuantizationOptions {
    std::string weights;                                     // a run's weights.safetensors (or run folder)
    int64_t calibrationSamples = kDefaultCalibrationSamples;  // training samples whose ranges are collected
    bool perChannel = true;                                  // per-output-channel weight scales
    // Calibration: 0 takes each value's smallest and largest value; a percentile P (50 < P <= 100,
    // e.g. kDefaultCalibrationPercentile) clips each range to ±(the Pth percentile of |x|).
    double percentile = 0.0;
    int threads = 0;                                         // CPU threads; 0: all cores
    // The int8 layouts to make and compare (at least one; each at most once).
    std::vector<Int8Scheme> schemes{Int8Scheme::Qdq};
};

// One int8 layout against the float model.
struct Int8Comparison {
    Int8Scheme scheme = Int8Scheme::Qdq;
    Int8Quantization quantization;
    double int8Metric = 0.0;
    double agreement = 0.0;      // classification: share of samples with the same top-1 class
    double maxAbsDiff = 0.0;     // largest |float − int8| difference of an output value
};

struct QuantizationReport {
    std::map<std::string, CalibrationRange> ranges;  // per calibrated value
    int64_t calibrationSamples = 0;                // samples actually used (the split may hold fewer)
    double percentile = 0.0;                       // the calibration's percentile; 0: min/max
    std::string split;                             // "validation" or "test": where the models were compared
    int64_t samples = 0;                           // samples of that split
    bool classification = false;
    std::string metric;          // "accuracy" (classification) or "mean_squared_error"
    double floatMetric = 0.0;
    std::vector<Int8Comparison> models;  // one per requested scheme, in the order asked
    // The comparison of `scheme`, or null when it was not asked for.
    const Int8Comparison* find(Int8Scheme scheme) const;
};

// Calibrates and compares. Errors: ConfigError naming "data" for a project without data (or with
// an empty training split), the weights' errors, and the data pipeline's own errors; a project
// whose data has neither a validation nor a test split is compared on the training split.
// `progress` (0–100) is called from the calling thread.
Result<QuantizationReport> quantizeInt8(const io::Project& project, const std::string& projectPath,
                                        const QuantizationOptions& options,
                                        const std::function<void(int)>& progress = {});

}  // namespace kiln::engine::api
