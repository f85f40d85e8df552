// SPDX-License-Identifier: Apache-2.0
// Saving and loading a ParamStore as safetensors, exactly or by name with a report.
#include "engine/train/weights.h"

#include <cstring>
#include <set>

#include "engine/io/safetensors.h"

namespace kiln::engine::train {
namespace {

WeightsReport compareFile(const exec::ParamStore& params, const io::SafetensorsFile& file, const std::string& path) {
    WeightsReport r;
    r.file = path;
    std::set<std::string> expected;
    for (const auto& p : params.params()) expected.insert(p.name);
    for (const auto& p : params.params()) {
        const Tensor* t = file.find(p.name);
        if (!t) {
            r.initialised.push_back(p.name);
        } else if (t->dtype() != DType::F32 || t->shape() != p.value.shape()) {
            std::string fileShape = t->shape().toString();
            if (t->dtype() != DType::F32) fileShape = std::string(dtypeName(t->dtype())) + " " + fileShape;
            r.mismatched.push_back({p.name, fileShape, p.value.shape().toString()});
        } else {
            r.loaded.push_back(p.name);
            r.loadedValues += p.value.numel();
        }
    }
    for (const auto& t : file.tensors)
        if (!expected.count(t.name)) r.unused.push_back(t.name);
    return r;
}

// One line per tensor that does not fit, for the error of an exact load.
std::string mismatchList(const WeightsReport& r) {
    std::string out;
    auto line = [&](const std::string& text) { out += "\n  " + text; };
    for (const auto& m : r.mismatched)
        line("tensor \"" + m.name + "\" has shape " + m.fileShape + " but the model needs " + m.modelShape);
    for (const auto& n : r.initialised) line("tensor \"" + n + "\" is missing from the file");
    for (const auto& n : r.unused) line("tensor \"" + n + "\" is not a parameter of this model");
    return out;
}

}  // namespace

Status saveWeights(const exec::ParamStore& params, const std::string& path,
                   const std::map<std::string, std::string>& metadata) {
    std::vector<io::NamedTensor> tensors;
    for (const auto& p : params.params()) tensors.push_back({p.name, p.value});
    auto meta = metadata;
    meta.emplace("format", "kiln-weights");
    return io::saveSafetensors(path, tensors, meta);
}

Status loadWeights(exec::ParamStore& params, const std::string& path) {
    KILN_ASSIGN(auto report, loadWeightsByName(params, path, false));
    (void)report;
    return {};
}

nlohmann::json WeightsReport::toJson() const {
    nlohmann::json mis = nlohmann::json::array();
    for (const auto& m : mismatched) mis.push_back({{"name", m.name}, {"file_shape", m.fileShape}, {"model_shape", m.modelShape}});
    return {{"file", file},           {"loaded", loaded}, {"initialised", initialised},
            {"mismatched", mis},      {"unused", unused}, {"loaded_values", loadedValues}};
}

Result<WeightsReport> compareWeights(const exec::ParamStore& params, const std::string& path) {
    KILN_ASSIGN(auto file, io::loadSafetensors(path));
    return compareFile(params, file, path);
}

Result<WeightsReport> loadWeightsByName(exec::ParamStore& params, const std::string& path, bool partial) {
    KILN_ASSIGN(auto file, io::loadSafetensors(path));
    WeightsReport r = compareFile(params, file, path);
    if (!partial && !r.exact()) {
        const size_t count = r.mismatched.size() + r.initialised.size() + r.unused.size();
        // The first problem names the tensor, as before; the message lists all of them.
        const std::string first = !r.mismatched.empty()   ? r.mismatched.front().name
                                  : !r.initialised.empty() ? r.initialised.front()
                                                           : r.unused.front();
        const std::string reason = !r.mismatched.empty()   ? "shape"
                                   : !r.initialised.empty() ? "missing"
                                                            : "unused";
        return Error(ErrorCode::WeightsMismatch,
                     std::to_string(count) + " tensor(s) do not fit the model (load the matching ones with "
                                             "partial loading, e.g. kiln-train --weights-partial):" + mismatchList(r))
            .withFile(path)
            .with("tensor", first)
            .with("reason", reason)
            .with("mismatches", std::to_string(count));
    }
    for (const auto& name : r.loaded) {
        exec::Parameter* p = params.find(name);
        std::memcpy(p->value.raw(), file.find(name)->raw(), p->value.bytes());
    }
    return r;
}

}  // namespace kiln::engine::train
