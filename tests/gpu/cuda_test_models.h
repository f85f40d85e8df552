// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the CUDA tests: models from node lists, CPU and CUDA plans over the same
// parameters and data, and the comparison of their results.
#pragma once

#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "engine/core/rng.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

namespace kiln::test {

inline engine::ops::ModelInfo buildModel(const std::string& nodes) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "graph": {"nodes": )" + nodes + "}}";
    auto p = engine::io::parseProject(text, "gpu.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    auto m = engine::ops::analyzeModel(p->graph);
    if (!m.ok()) qFatal("analyzeModel: %s", m.error().toString().c_str());
    return std::move(m).value();
}

inline engine::exec::LossSpec lossSpec(const std::string& type, const std::string& output,
                                       engine::Shape target, bool fromLogits = true) {
    engine::exec::LossSpec l;
    l.type = type;
    l.output = output;
    if (type.find("Crossentropy") != std::string::npos) l.attrs.set("from_logits", fromLogits);
    l.targetShape = std::move(target);
    return l;
}

// Deterministic data: uniform in [-1, 1); `classes` > 0 gives integer labels instead; `ids` > 0
// integer ids in [0, ids).
inline std::vector<float> makeData(size_t n, uint64_t stream, int classes = 0) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = classes > 0
                   ? static_cast<float>(engine::rng::bits(77, stream, i) % static_cast<uint32_t>(classes))
                   : 2.0f * engine::rng::uniform(77, stream, i) - 1.0f;
    return v;
}

// Largest |a - b| relative to the largest |a| (at least 1e-3).
inline double relDiff(const float* a, const float* b, size_t n) {
    double worst = 0, scale = 1e-3;
    for (size_t i = 0; i < n; ++i) scale = std::max(scale, double(std::abs(a[i])));
    for (size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
    return worst / scale;
}

}  // namespace kiln::test
