// SPDX-License-Identifier: Apache-2.0
// A small ImageNet-style classifier (convolutions, global pooling, a 1000-class Dense layer named
// as in the imported EfficientNet-Lite0) written into a data folder as a catalogue backbone's
// cache: a real project and weights, so that availability, project creation and the studio's
// dialog can be tested without the 13 MB download.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "engine/exec/param_store.h"
#include "engine/io/model_zoo.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"

namespace kiln::test {

inline const char* kBackboneNodes = R"([
  {"name":"image","op":"Input","attrs":{"shape":[32,32,3]}},
  {"name":"stem","op":"Conv2D","inputs":["image"],"attrs":{"filters":8,"kernel_size":[3,3],"strides":[2,2],"padding":"same","activation":"relu6"}},
  {"name":"conv2d_32","op":"Conv2D","inputs":["stem"],"attrs":{"filters":16,"kernel_size":[1,1],"activation":"relu6"}},
  {"name":"global_average_pooling2d","op":"GlobalAveragePooling2D","inputs":["conv2d_32"]},
  {"name":"dense","op":"Dense","inputs":["global_average_pooling2d"],"attrs":{"units":1000}}])";

inline engine::io::Project backboneProject() {
    auto p = engine::io::parseProject(std::string(R"({"format":"kiln-project","version":2,"name":"bb","graph":{"nodes":)") +
                                          kBackboneNodes + R"(,"outputs":["dense"]}})",
                                      "bb.kiln");
    if (!p.ok()) qFatal("%s", p.error().toString().c_str());
    return *p;
}

// Writes the stand-in into `dataDir` as the cache of backbone `b`; returns its parameters.
inline engine::exec::ParamStore writeBackboneCache(const engine::io::Backbone& b, const std::string& dataDir) {
    const engine::io::Project p = backboneProject();
    auto info = engine::ops::analyzeModel(p.graph);
    if (!info.ok()) qFatal("%s", info.error().toString().c_str());
    auto params = engine::exec::ParamStore::create(*info, 11);
    const std::filesystem::path dir = std::filesystem::path(dataDir) / b.cacheDir;
    std::filesystem::create_directories(dir);
    std::vector<engine::io::NamedTensor> tensors;
    for (const auto& prm : params.params()) tensors.push_back({prm.name, prm.value});
    if (!engine::io::saveSafetensors((dir / b.weightsFile).string(), tensors).ok()) qFatal("weights not written");
    if (!engine::io::saveProject(p, (dir / b.projectFile).string()).ok()) qFatal("project not written");
    return params;
}

}  // namespace kiln::test
