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

// Metadata written into the model (ONNX metadata_props, kiln-model.json).
struct ModelMetadata {
    std::string name;                      // model name
    std::vector<std::string> classNames;   // one per output unit of a classifier, may be empty
    std::string preprocessingJson = "{}";  // how raw inputs become model inputs (JSON object)
    std::string kilnVersion;
};

// Serialises the model with the parameter values in `params` (an ONNX ModelProto). Graph
// inputs and outputs keep the names and NHWC shapes of the Kiln Input and output nodes, with a
// symbolic batch dimension "N". Loss nodes are not exported. Errors name the node that cannot be
// expressed.
Result<std::string> exportOnnx(const ops::ModelInfo& model, const exec::ParamStore& params,
                               const ModelMetadata& meta);

Status saveOnnx(const std::string& path, const ops::ModelInfo& model, const exec::ParamStore& params,
                const ModelMetadata& meta);

}  // namespace kiln::engine::io
