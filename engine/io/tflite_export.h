// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite export (float32): a .tflite flatbuffer (schema version 3) of a Kiln model in its
// own NHWC layout, batch normalisation folded into the convolution or dense layer before it.
#pragma once

#include <string>

#include "engine/exec/param_store.h"
#include "engine/io/onnx_export.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

// Serialises the model with the values in `params`. Inputs and outputs keep the names and NHWC
// shapes of the Kiln Input and output nodes; the batch is 1 in the stored shapes and -1 (free) in
// their shape signatures, so an interpreter may resize it. Loss nodes are left out. A node
// TFLite's built-in operators cannot express is an Unsupported error naming it.
Result<std::string> exportTflite(const ops::ModelInfo& model, const exec::ParamStore& params, const ModelMetadata& meta);

Status saveTflite(const std::string& path, const ops::ModelInfo& model, const exec::ParamStore& params,
                  const ModelMetadata& meta);

}  // namespace kiln::engine::io
