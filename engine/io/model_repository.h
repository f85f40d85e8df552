// SPDX-License-Identifier: Apache-2.0
// The model repository: <base>/<name>/<version>/ holding the SavedModel (saved_model.pb and
// variables/ at the version root, as TF Serving expects), model.onnx, model.tflite, Kiln's own model
// (model.kiln + weights.safetensors), model.int8.onnx when quantised, and kiln-model.json. Versions are written into a hidden
// temporary folder and renamed into place, so a server polling <base>/<name> never sees half of one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

constexpr const char* kModelJsonName = "kiln-model.json";
constexpr int kModelJsonVersion = 1;

struct ExportFormats {
    bool onnx = true;
    bool savedModel = true;
    bool kiln = true;
    bool tflite = false;  // model.tflite (float32), on request only
};

// Parses "onnx,savedmodel,kiln,tflite" (any order, at least one).
Result<ExportFormats> parseFormats(const std::string& list);

struct RepositoryExport {
    std::string base;          // repository root
    std::string name;          // model name: [A-Za-z0-9_.-]+
    int64_t version = 0;       // 0: next free version (max existing + 1)
    ExportFormats formats;
    ModelMetadata meta;
    std::string projectText;   // the project (model.kiln), required for the kiln format
    nlohmann::json metrics = nlohmann::json::object();  // the run's results
    // Held-out batch for the parity check: one tensor per model Input, [batch, ...].
    std::vector<Tensor> parityInputs;
    std::string paritySource = "synthetic";  // where the batch came from ("validation", "test", ...)
    // An int8 QDQ ONNX model (exportOnnx with a quantisation), written as model.int8.onnx beside
    // model.onnx when not empty, and what kiln-model.json says of it ("quantization").
    std::string onnxInt8;
    // A full-integer TensorFlow Lite model (exportTflite with a quantisation), written as
    // model.int8.tflite when not empty.
    std::string tfliteInt8;
    nlohmann::json quantization = nullptr;
};

struct RepositoryResult {
    std::string versionDir;
    int64_t version = 0;
    bool parityChecked = false;  // false when ONNX is not among the formats
    ParityReport parity;
    std::vector<std::string> files;  // relative to versionDir
    std::vector<std::string> warnings;  // English: what the user should know (plugin operations)
};

// Numeric version folders under `modelDir` (ascending); other entries are ignored.
std::vector<int64_t> listVersions(const std::string& modelDir);
int64_t nextVersion(const std::string& modelDir);

using ProgressFn = std::function<void(int percent, const std::string& step)>;

// Exports the model. With ONNX among the formats, the parity check runs before anything is
// published; a difference above tolerance is an Error and nothing is written. A model with plugin
// operations exports to ONNX with custom-domain nodes (warnings say so) and is checked through the
// loaded plugin, which Kiln's reader maps them back to.
Result<RepositoryResult> exportToRepository(const ops::ModelInfo& model, exec::ParamStore& params,
                                            const RepositoryExport& request, ThreadPool& pool,
                                            const ProgressFn& progress = {});

// The kiln-model.json document for a model (exposed for tests and the server).
nlohmann::json modelDescription(const ops::ModelInfo& model, const RepositoryExport& request, int64_t version,
                                const RepositoryResult& result);

}  // namespace kiln::engine::io
