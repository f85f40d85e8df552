// SPDX-License-Identifier: Apache-2.0
// Model weights as safetensors ("<node>/<param>" names), checked against the graph on load.
#pragma once

#include <map>
#include <string>

#include "engine/exec/param_store.h"

namespace kiln::engine::train {

Status saveWeights(const exec::ParamStore& params, const std::string& path,
                   const std::map<std::string, std::string>& metadata = {});
// Every parameter of the model must be in the file with the same shape; extra tensors are an
// error too (they mean the file belongs to another model). Errors name the file and tensor.
Status loadWeights(exec::ParamStore& params, const std::string& path);

}  // namespace kiln::engine::train
