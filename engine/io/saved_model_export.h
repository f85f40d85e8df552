// SPDX-License-Identifier: Apache-2.0
// TensorFlow SavedModel export: saved_model.pb holding one MetaGraph (tag "serve") whose GraphDef
// carries the weights as Const nodes, NHWC ops as TensorFlow's CPU kernels want them, and a
// "serving_default" predict signature. Loads in TF Serving and tf.saved_model.load.
#pragma once

#include <string>

#include "engine/exec/param_store.h"
#include "engine/io/onnx_export.h"
#include "engine/ops/model.h"

namespace kiln::engine::io {

// GraphDef producer version written (TensorFlow 2.12's TF_GRAPH_DEF_VERSION); consumers accept any
// producer >= 0 with min_consumer 0.
constexpr int kTfGraphProducer = 1394;
constexpr const char* kServingSignature = "serving_default";
constexpr const char* kPredictMethod = "tensorflow/serving/predict";

// The serialised SavedModel protobuf (the content of saved_model.pb).
Result<std::string> exportSavedModel(const ops::ModelInfo& model, const exec::ParamStore& params,
                                     const ModelMetadata& meta);

// Writes `dir`/saved_model.pb and an empty `dir`/variables/ (the weights are constants).
Status saveSavedModel(const std::string& dir, const ops::ModelInfo& model, const exec::ParamStore& params,
                      const ModelMetadata& meta);

}  // namespace kiln::engine::io
