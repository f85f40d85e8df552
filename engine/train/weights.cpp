// SPDX-License-Identifier: Apache-2.0
// Saving and loading a ParamStore as safetensors.
#include "engine/train/weights.h"

#include <cstring>
#include <set>

#include "engine/io/safetensors.h"

namespace kiln::engine::train {

Status saveWeights(const exec::ParamStore& params, const std::string& path,
                   const std::map<std::string, std::string>& metadata) {
    std::vector<io::NamedTensor> tensors;
    for (const auto& p : params.params()) tensors.push_back({p.name, p.value});
    auto meta = metadata;
    meta.emplace("format", "kiln-weights");
    return io::saveSafetensors(path, tensors, meta);
}

Status loadWeights(exec::ParamStore& params, const std::string& path) {
    KILN_ASSIGN(auto file, io::loadSafetensors(path));
    auto mismatch = [&](const std::string& tensor, const std::string& why) {
        return Error(ErrorCode::WeightsMismatch, "tensor \"" + tensor + "\": " + why)
            .withFile(path)
            .with("tensor", tensor)
            .with("reason", why);
    };
    std::set<std::string> expected;
    for (const auto& p : params.params()) expected.insert(p.name);
    for (const auto& t : file.tensors)
        if (!expected.count(t.name)) return mismatch(t.name, "is not a parameter of this model");
    for (auto& p : params.params()) {
        const Tensor* t = file.find(p.name);
        if (!t) return mismatch(p.name, "is missing from the file");
        if (t->dtype() != DType::F32) return mismatch(p.name, "has dtype " + std::string(dtypeName(t->dtype())) + ", expected F32");
        if (t->shape() != p.value.shape())
            return mismatch(p.name, "has shape " + t->shape().toString() + " but the model needs " + p.value.shape().toString());
    }
    for (auto& p : params.params()) std::memcpy(p.value.raw(), file.find(p.name)->raw(), p.value.bytes());
    return {};
}

}  // namespace kiln::engine::train
