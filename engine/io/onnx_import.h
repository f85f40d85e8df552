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

// What became of one node of the source model (an ONNX node or a Keras layer).
struct NodeMapping {
    enum class Kind {
        Node,         // new Kiln node(s), listed in kilnNodes
        Folded,       // merged into the Kiln node listed (activation, bias, scale, offset)
        PassThrough,  // no computation in Kiln: a layout change (transpose, flatten of a pooled value) or identity
        Constant,     // computed while reading (constant folding); no node
        Placeholder,  // an operation Kiln cannot compute, kept as a Placeholder node
    };
    std::string sourceName;  // ONNX: the node's name, or its first output when it has none; Keras: the layer's name
    std::string sourceOp;    // ONNX: op type, with its domain when not the default one; Keras: the layer's class
    Kind kind = Kind::Node;
    std::vector<std::string> kilnNodes;
    std::string reason;    // Placeholder: why Kiln could not map it
};
const char* mappingKindName(NodeMapping::Kind kind);

struct ImportOptions {
    // Keras-style node names ("conv2d", "conv2d_1", "batch_normalization"...) in place of the ONNX
    // names, which are kept in each node's "onnx_node" field. Inputs keep their ONNX names.
    bool readableNames = false;
    // Unsupported operations become Placeholder nodes instead of failing the import.
    bool placeholders = false;
};

struct ImportedModel {
    std::string format = "onnx";        // the source format: "onnx" or "keras"
    Graph graph;                         // Input nodes first, in ONNX graph-input order
    std::vector<NamedTensor> weights;    // "<node>/<param>", Kiln layouts (HWIO kernels, [in,out] dense)
    std::map<std::string, std::string> metadata;  // metadata_props
    std::vector<std::string> inputs;     // ONNX graph input names (= the Kiln Input node names)
    std::vector<bool> inputChannelFirst; // true: the ONNX input is NCHW; Kiln's Input is its NHWC form
    std::vector<std::string> outputs;    // ONNX graph output names, same order as graph.outputs
    int64_t opset = 0;                   // ONNX only
    std::string producer;                // producer_name and version, when the file says
    std::vector<NodeMapping> mapping;    // one entry per ONNX node, in file order
    std::vector<std::string> placeholders;  // Placeholder node names
};

// Reads a serialised ONNX ModelProto. Malformed or unsupported content gives an Error naming the
// ONNX node (and `file` when given); it never aborts.
Result<ImportedModel> importOnnx(std::string_view bytes, const std::string& file = {}, const ImportOptions& options = {});
Result<ImportedModel> loadOnnx(const std::string& path, const ImportOptions& options = {});

// The default-domain ONNX operations the reader maps to Kiln nodes (or folds, or passes through),
// each in the forms docs/transfer.md describes; others are errors or placeholders.
const std::vector<std::string>& onnxOpsRead();

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
// inputs, and in [0, the axis's size) for the indices of a per-sample Gather) for when no held-out
// data is available.
std::vector<Tensor> syntheticInputs(const ops::ModelInfo& model, int64_t batch, uint64_t seed);

}  // namespace kiln::engine::io
