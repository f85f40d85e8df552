// SPDX-License-Identifier: Apache-2.0
// Kiln's ONNX reader: turns an ONNX model into a Kiln graph and weights (everything Kiln's
// exporter writes, plus common channel-first convolutional nets), and the export parity check.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

struct ImportedModel {
    Graph graph;                         // Input nodes first, in ONNX graph-input order
    std::vector<NamedTensor> weights;    // "<node>/<param>", Kiln layouts (HWIO kernels, [in,out] dense)
    std::map<std::string, std::string> metadata;  // metadata_props
    std::vector<std::string> inputs;     // ONNX graph input names (= the Kiln Input node names)
    std::vector<bool> inputChannelFirst; // true: the ONNX input is NCHW; Kiln's Input is its NHWC form
    std::vector<std::string> outputs;    // ONNX graph output names, same order as graph.outputs
    int64_t opset = 0;
};

// Reads a serialised ONNX ModelProto. Malformed or unsupported content gives an Error naming the
// ONNX node (and `file` when given); it never aborts.
Result<ImportedModel> importOnnx(std::string_view bytes, const std::string& file = {});
Result<ImportedModel> loadOnnx(const std::string& path);

// Copies the imported weights into parameters created for the imported graph.
Status applyWeights(const ImportedModel& model, exec::ParamStore& params);

// Parity of an export: the same batch through Kiln's own plan and through the exported ONNX model
// read back with importOnnx (compiled as a separate plan). An element agrees when
// |kiln − onnx| <= kParityAbsTolerance + kParityRelTolerance·|kiln|.
constexpr double kParityAbsTolerance = 1e-4;
constexpr double kParityRelTolerance = 1e-4;

struct ParityReport {
    int64_t batch = 0;
    double maxAbsDiff = 0.0;   // largest |kiln − onnx| over every output element
    double maxRelExcess = 0.0; // largest |diff| / (atol + rtol·|kiln|); <= 1 passes
    std::string worstOutput;   // output holding the largest difference
    bool passed = false;
};

// `inputs`: one tensor per Input node of `model` (model.inputs order), each [batch, ...].
Result<ParityReport> checkOnnxParity(const ops::ModelInfo& model, exec::ParamStore& params,
                                     std::string_view onnxBytes, const std::vector<Tensor>& inputs,
                                     ThreadPool& pool);

// Deterministic stand-in inputs (uniform in [-1, 1]; ids in [0, vocabulary) for Embedding
// inputs) for when no held-out data is available.
std::vector<Tensor> syntheticInputs(const ops::ModelInfo& model, int64_t batch, uint64_t seed);

}  // namespace kiln::engine::io
