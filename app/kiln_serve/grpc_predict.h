// SPDX-License-Identifier: Apache-2.0
// The request side of kiln-serve's gRPC Predict: a PredictRequest's input TensorProtos checked
// against a model's signature and turned into engine tensors, before any model runs.
#pragma once

#include <vector>

#include "engine/core/error.h"
#include "engine/core/tensor.h"
#include "engine/serve/json_tensor.h"

namespace tensorflow::serving {
class PredictRequest;
}

namespace kiln::app {

// One [batch, item...] float tensor per input of `sig`, in the signature's order. The inputs must
// match the signature by name, share one batch within `limits.maxBatch`, stay within
// `limits.maxElements` values, and each hold DT_FLOAT (float_val or tensor_content), DT_DOUBLE,
// DT_INT32 or DT_INT64 values (a single value broadcasts); output_filter must name outputs of
// `sig`. Anything else is an INVALID_ARGUMENT error saying which input and why. Shapes, batches
// and the element budget are checked before any tensor is allocated.
// `admit` (when set) is asked with the batch once everything is checked, before the tensors are
// allocated (the in-flight cap).
engine::Result<std::vector<engine::Tensor>> decodePredictInputs(const tensorflow::serving::PredictRequest& req,
                                                                const engine::serve::ModelSignature& sig,
                                                                const engine::serve::RequestLimits& limits,
                                                                const engine::serve::AdmitFn& admit = {});

}  // namespace kiln::app
