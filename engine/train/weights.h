// SPDX-License-Identifier: Apache-2.0
// Model weights as safetensors ("<node>/<param>" names), checked against the graph on load; or
// loaded by name for transfer learning, with a report of what matched.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/exec/param_store.h"

namespace kiln::engine::train {

Status saveWeights(const exec::ParamStore& params, const std::string& path,
                   const std::map<std::string, std::string>& metadata = {});
// Every parameter of the model must be in the file with the same shape; extra tensors are an
// error too (they mean the file belongs to another model). Errors name the file and tensor.
Status loadWeights(exec::ParamStore& params, const std::string& path);

// How the tensors of a weights file met the parameters of a model, matched by name.
struct WeightsReport {
    struct Mismatch {
        std::string name;
        std::string fileShape;   // "[3,3,16,32]" (with the dtype when that differs: "F16 [3]")
        std::string modelShape;  // "[3,3,16,64]"
    };
    std::string file;
    std::vector<std::string> loaded;       // name, dtype and shape match: copied into the model
    std::vector<std::string> initialised;  // model parameters the file lacks: they keep their initial values
    std::vector<Mismatch> mismatched;      // same name, other shape or dtype: the model keeps its initial values
    std::vector<std::string> unused;       // tensors of the file that are no parameter of the model
    int64_t loadedValues = 0;              // floats copied
    // The file fits the model exactly: every parameter loaded, nothing left over.
    bool exact() const { return initialised.empty() && mismatched.empty() && unused.empty(); }
    // {"file", "loaded": [...], "initialised": [...], "mismatched": [{"name", "file_shape",
    // "model_shape"}], "unused": [...], "loaded_values"}
    nlohmann::json toJson() const;
};

// Compares the file with the model without changing the model.
Result<WeightsReport> compareWeights(const exec::ParamStore& params, const std::string& path);
// Loads the weights by name. partial=false: the file must fit exactly (as loadWeights), else a
// WeightsMismatch error lists every tensor that does not fit and nothing is loaded. partial=true:
// every tensor whose name, dtype and shape match is loaded; the others are reported.
Result<WeightsReport> loadWeightsByName(exec::ParamStore& params, const std::string& path, bool partial);

}  // namespace kiln::engine::train
