// SPDX-License-Identifier: Apache-2.0
// Shared by the tests that run Kiln's programs with the example GroupNorm plugin: a small model
// whose example.GroupNorm node feeds a Dense layer, weights for it with parameters away from the
// plugin's identity start and its outputs recomputed from the formula (without the plugin).
// app_test_util.h runs a program that sees no plugin but those it is given.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <cmath>
#include <string>
#include <vector>

#include "app_test_util.h"
#include "engine/exec/param_store.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/ops/plugin_registry.h"
#include "engine/train/weights.h"

namespace kiln::test {

// x [3,4] -> example.GroupNorm (2 groups of 2 channels, epsilon 0.01) -> Flatten -> Dense(2).
inline constexpr int kPositions = 3, kChannels = 4, kGroups = 2, kUnits = 2;
inline constexpr double kEpsilon = 0.01;
inline const char* kGroupNormProject = R"({"format": "kiln-project", "version": 2, "name": "gn_model",
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [3, 4]}},
    {"name": "gn", "op": "Plugin", "inputs": ["x"],
     "attrs": {"plugin_op": "example.GroupNorm", "groups": 2, "epsilon": 0.01}},
    {"name": "flat", "op": "Flatten", "inputs": ["gn"]},
    {"name": "y", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 2}}]}}
)";

// The model's parameters as saved: gamma and beta per channel, the Dense kernel [12, 2] and bias.
struct GroupNormWeights {
    std::vector<float> gamma, beta, kernel, bias;
};

// Loads the plugin library `plugin` (the example GroupNorm) into this process to size the
// parameters, makes weights from a seed with gamma and beta moved off 1 and 0, and saves them as
// safetensors at `path`. Empty on failure (the reason in `error`).
inline GroupNormWeights writeGroupNormWeights(const QString& plugin, const std::string& path, std::string& error) {
    using namespace kiln::engine;
    auto loaded = ops::PluginRegistry::global().load(plugin.toStdString());
    if (!loaded.ok()) {
        error = loaded.error().toString();
        return {};
    }
    auto project = io::parseProject(kGroupNormProject, "gn_model.kiln");
    if (!project.ok()) {
        error = project.error().toString();
        return {};
    }
    auto model = ops::analyzeModel(project->graph);
    if (!model.ok()) {
        error = model.error().toString();
        return {};
    }
    exec::ParamStore params = exec::ParamStore::create(*model, 5);
    auto values = [&](const char* name) -> std::vector<float> {
        const auto* p = params.find(name);
        if (!p) return {};
        const float* d = p->value.data<float>();
        return std::vector<float>(d, d + p->value.numel());
    };
    float* gamma = params.find("gn/gamma")->value.data<float>();
    float* beta = params.find("gn/beta")->value.data<float>();
    for (int c = 0; c < kChannels; ++c) {
        gamma[c] = 0.5f + 0.25f * static_cast<float>(c);
        beta[c] = 0.3f * static_cast<float>(c) - 0.4f;
    }
    float* bias = params.find("y/bias")->value.data<float>();
    bias[0] = 0.125f;
    bias[1] = -0.25f;
    if (auto st = train::saveWeights(params, path); !st.ok()) {
        error = st.error().toString();
        return {};
    }
    return {values("gn/gamma"), values("gn/beta"), values("y/kernel"), values("y/bias")};
}

// The model's outputs [n, 2] for inputs x [n, 3, 4], from group normalisation's formula in double
// precision, then the Dense layer.
inline std::vector<double> groupNormReference(const GroupNormWeights& w, const std::vector<float>& x, int n) {
    const size_t positions = kPositions, channels = kChannels, perGroup = channels / kGroups, units = kUnits;
    std::vector<double> out;
    for (size_t s = 0; s < static_cast<size_t>(n); ++s) {
        const float* sample = x.data() + s * positions * channels;
        std::vector<double> y(positions * channels);
        for (size_t first = 0; first < channels; first += perGroup) {
            double sum = 0, sq = 0;
            for (size_t p = 0; p < positions; ++p)
                for (size_t c = first; c < first + perGroup; ++c) sum += sample[p * channels + c];
            const double count = static_cast<double>(positions * perGroup), mean = sum / count;
            for (size_t p = 0; p < positions; ++p)
                for (size_t c = first; c < first + perGroup; ++c)
                    sq += (sample[p * channels + c] - mean) * (sample[p * channels + c] - mean);
            const double invStd = 1.0 / std::sqrt(sq / count + kEpsilon);
            for (size_t p = 0; p < positions; ++p)
                for (size_t c = first; c < first + perGroup; ++c)
                    y[p * channels + c] = (sample[p * channels + c] - mean) * invStd * w.gamma[c] + w.beta[c];
        }
        for (size_t j = 0; j < units; ++j) {
            double v = w.bias[j];
            for (size_t k = 0; k < y.size(); ++k) v += y[k] * w.kernel[k * units + j];
            out.push_back(v);
        }
    }
    return out;
}

}  // namespace kiln::test
