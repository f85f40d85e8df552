// SPDX-License-Identifier: Apache-2.0
// One export as kiln-export and the studio's export dialog run it: project + weights → the
// model repository, with the parity check on a held-out batch. No Qt; safe off the GUI thread.
#pragma once

#include <atomic>
#include <string>

#include <optional>

#include "engine/api/quantization.h"
#include "engine/io/model_repository.h"

namespace kiln::app {

struct ExportJobRequest {
    std::string project;   // *.kiln
    std::string weights;   // weights.safetensors of a run
    std::string base;      // repository root
    std::string name;      // model name (default: the project's name)
    int64_t version = 0;   // 0: next free
    std::string formats = "onnx,savedmodel,kiln";
    int threads = 0;       // 0: all cores
    int64_t parityBatch = 32;
    std::string kilnVersion;
    // "int8": also write model.int8.onnx (QDQ) when onnx is exported and model.int8.tflite (full
    // integer, float inputs and outputs) when tflite is, calibrated on `calibrationSamples`
    // training samples, and compare each with the float model on the validation split. Needs
    // the onnx or the tflite format.
    std::string quantize = "none";
    int64_t calibrationSamples = engine::api::kDefaultCalibrationSamples;
    // 0: calibrate with each value's smallest and largest value; P (50..100): clip each range to
    // ±(the Pth percentile of |x|).
    double calibrationPercentile = 0.0;
    // model.int8.tflite with int8 model inputs and outputs (no QUANTIZE/DEQUANTIZE at the edges;
    // their scales and zero points are in the tensors and in kiln-model.json). Needs int8 and tflite.
    bool int8Io = false;
};

// The int8 grid of one model input or output of a file with int8 inputs and outputs.
struct EdgeQuantization {
    std::string name;
    engine::api::Int8Params params;
};

// One int8 file beside its float twin.
struct QuantizedFile {
    std::string format;     // "onnx" or "tflite"
    std::string file;       // model.int8.onnx, model.int8.tflite
    std::string floatFile;  // model.onnx, model.tflite
    engine::api::Int8Comparison comparison;
    int64_t floatBytes = 0;
    int64_t int8Bytes = 0;
    bool int8Io = false;                       // tflite: int8 model inputs and outputs
    std::vector<EdgeQuantization> inputs, outputs;  // their grids, when int8Io
};

// What int8 quantisation gave: the shared calibration and comparison, and one entry per file.
struct QuantizationSummary {
    engine::api::QuantizationReport report;
    std::vector<QuantizedFile> files;  // ONNX first when both are written
};

struct ExportJobResult {
    engine::io::RepositoryResult repo;
    std::string name;
    std::string paritySource;  // "validation", "test", "train" or "synthetic"
    std::string parityNote;    // why synthetic inputs were used, if they were
    std::optional<QuantizationSummary> quantization;
};

// Checks the quantisation settings of a request before anything runs (InvalidArgument naming
// the field).
engine::Status checkQuantizeRequest(const ExportJobRequest& request, const engine::io::ExportFormats& formats);

// The "quantization" object of kiln-model.json and of kiln-export --json.
nlohmann::json quantizationJson(const QuantizationSummary& q);

// Runs the export; `progress` is called from the calling thread.
engine::Result<ExportJobResult> runExportJob(const ExportJobRequest& request,
                                             const engine::io::ProgressFn& progress = {});

}  // namespace kiln::app
