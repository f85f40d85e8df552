// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite export: a .tflite flatbuffer (schema version 3) of a Kiln model in its own NHWC
// layout, batch normalisation folded into the convolution or dense layer before it; float32, or
// int8 full integer from post-training quantisation parameters.
#pragma once

#include <string>

#include "engine/exec/param_store.h"
#include "engine/io/onnx_export.h"
#include "engine/io/quantize.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

// Serialises the model with the values in `params`. Inputs and outputs keep the names and NHWC
// shapes of the Kiln Input and output nodes; the batch is 1 in the stored shapes and -1 (free) in
// their shape signatures, so an interpreter may resize it. Loss nodes are left out. A node
// TFLite's built-in operators cannot express is an Unsupported error naming it.
//
// With `quant` (QuantScheme::FullInteger parameters, see makeQuantization) the model is integer
// only, as TensorFlow Lite's converter writes it: every activation int8 with per-tensor scale and
// zero point, Conv/DepthwiseConv/FullyConnected weights int8 symmetric per output channel (per
// tensor when quant->perChannel is false), biases int32 on input scale × weight scale, other
// constants int8. Inputs and outputs stay float32 (a QUANTIZE operator after each input, a
// DEQUANTIZE before each output, the int8 tensors named "<name>/int8"), unless
// `int8InputOutput`: then the model's inputs and outputs are the int8 tensors themselves, under
// the nodes' names, their scale and zero point in the tensors' quantisation parameters (what
// TFLite's converter writes with inference_input_type and inference_output_type int8).
//
// Every output is a tensor named after its output node: an output that passes another node's
// value on (a Dropout) is copied by a RESHAPE; an output that is itself an Input is the input
// tensor, listed as both an input and an output.
Result<std::string> exportTflite(const ops::ModelInfo& model, const exec::ParamStore& params, const ModelMetadata& meta,
                                 const Int8Quantization* quant = nullptr, bool int8InputOutput = false);

Status saveTflite(const std::string& path, const ops::ModelInfo& model, const exec::ParamStore& params,
                  const ModelMetadata& meta, const Int8Quantization* quant = nullptr, bool int8InputOutput = false);

}  // namespace kiln::engine::io
