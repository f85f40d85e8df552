// SPDX-License-Identifier: Apache-2.0
// ONNX export of a Kiln model (IR 8, opset 17): the NHWC interface of the model is kept, and
// convolutions, pooling and batch normalisation run on channel-first transposes inside the graph.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/exec/param_store.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

constexpr int64_t kOnnxIrVersion = 8;
constexpr int64_t kOnnxOpset = 17;
// Domain of the model-local functions Kiln writes for ops that opset 17 lacks (GELU).
constexpr const char* kOnnxKilnDomain = "ai.kiln";
// Plugin operations are written as nodes of the domain "ai.kiln.plugin.<namespace>" with the
// operation's local name ("example.GroupNorm" -> domain ai.kiln.plugin.example, op GroupNorm).
constexpr const char* kOnnxPluginDomainPrefix = "ai.kiln.plugin.";

struct Int8Quantization;  // engine/io/quantize.h

// Metadata written into the model (ONNX metadata_props, kiln-model.json).
struct ModelMetadata {
    std::string name;                      // model name
    std::vector<std::string> classNames;   // one per output unit of a classifier, may be empty
    std::string preprocessingJson = "{}";  // how raw inputs become model inputs (JSON object)
    std::string kilnVersion;
};

// Serialises the model with the parameter values in `params` (an ONNX ModelProto). Graph
// inputs and outputs keep the names and NHWC shapes of the Kiln Input and output nodes, with a
// symbolic batch dimension "N". An Input that is also an output is written as a graph output
// "<name>_output" (an Identity of the input; ONNX names each value once). Loss nodes are not
// exported. Errors name the node that cannot be expressed.
// Plugin operations are exported as custom-domain nodes with their attributes, and a warning per
// node goes to `warnings` (when given): other tools need the operation's implementation to run it.
// With `quant`, the model is written in QDQ form: the kernels of Dense, Conv2D and DepthwiseConv2D
// are int8 initializers (per-channel scales when quant->perChannel) read through DequantizeLinear,
// and every value quant->values names passes QuantizeLinear → DequantizeLinear (int8 zero point)
// where it is computed. Other ops compute in float. Biases stay float.
Result<std::string> exportOnnx(const ops::ModelInfo& model, const exec::ParamStore& params,
                               const ModelMetadata& meta, std::vector<std::string>* warnings = nullptr,
                               const Int8Quantization* quant = nullptr);

Status saveOnnx(const std::string& path, const ops::ModelInfo& model, const exec::ParamStore& params,
                const ModelMetadata& meta, std::vector<std::string>* warnings = nullptr);

}  // namespace kiln::engine::io
