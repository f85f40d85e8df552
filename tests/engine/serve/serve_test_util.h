// SPDX-License-Identifier: Apache-2.0
// Test helpers for kiln-serve: model version folders made from the bundled examples with seeded
// weights, and reference outputs computed with the engine's own plan.
#pragma once

#include <QtTest>

#include <atomic>
#include <filesystem>
#include <thread>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/sha256.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/train/weights.h"

namespace kiln::test {

inline std::string examplePath(const std::string& name) {
    return std::string(KILN_SOURCE_DIR) + "/resources/examples/" + name + ".kiln";
}

// The "manifest" kiln-export writes into kiln-model.json: each file of `dir` with size and sha256.
inline nlohmann::json fileManifest(const std::string& dir, const std::vector<std::string>& names) {
    nlohmann::json manifest = nlohmann::json::array();
    for (const auto& n : names) {
        const std::string path = dir + "/" + n;
        manifest.push_back({{"path", n},
                            {"size", std::filesystem::file_size(path)},
                            {"sha256", kiln::engine::sha256File(path).value()}});
    }
    return manifest;
}

// Writes <base>/<version>/ (model.kiln, weights.safetensors with weights from `seed`,
// kiln-model.json with the file manifest) through a temporary folder renamed into place, as an
// exporter does.
inline bool makeVersion(const std::string& example, const std::string& base, int64_t version, uint64_t seed,
                        const nlohmann::json& modelJson = nlohmann::json()) {
    namespace fs = std::filesystem;
    using namespace kiln::engine;
    auto project = io::loadProject(examplePath(example));
    if (!project) return false;
    auto model = ops::analyzeModel(project->graph);
    if (!model) return false;
    exec::ParamStore params = exec::ParamStore::create(model.value(), seed);
    const fs::path tmp = fs::path(base) / (".tmp-" + std::to_string(version));
    std::error_code ec;
    fs::create_directories(tmp, ec);
    if (ec) return false;
    if (!train::saveWeights(params, (tmp / "weights.safetensors").string()).ok()) return false;
    fs::copy_file(examplePath(example), tmp / "model.kiln", fs::copy_options::overwrite_existing, ec);
    if (ec) return false;
    nlohmann::json j = modelJson;
    if (j.is_null()) {
        j = {{"format", "kiln-model"}, {"name", example}, {"version", version}};
        nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
        for (int idx : model->inputs) {
            auto dims = model->nodes[static_cast<size_t>(idx)].output.dims();
            inputs.push_back({{"name", model->graph.nodes[static_cast<size_t>(idx)].name}, {"shape", dims}, {"dtype", "float32"}});
        }
        for (int idx : model->outputs) {
            auto dims = model->nodes[static_cast<size_t>(idx)].output.dims();
            outputs.push_back({{"name", model->graph.nodes[static_cast<size_t>(idx)].name}, {"shape", dims}, {"dtype", "float32"}});
        }
        j["inputs"] = inputs;
        j["outputs"] = outputs;
        if (project->data.contains("class_names")) j["class_names"] = project->data["class_names"];
    }
    if (j.is_object() && !j.contains("manifest")) j["manifest"] = fileManifest(tmp.string(), {"model.kiln", "weights.safetensors"});
    {
        std::ofstream out(tmp / "kiln-model.json");
        out << j.dump(2);
    }
    fs::rename(tmp, fs::path(base) / std::to_string(version), ec);
    return !ec;
}

// Reference outputs: the example's graph with weights from `seed`, through a batch-`batch`
// inference plan. `inputs` holds one flat [batch, item...] vector per Input node.
inline std::vector<std::vector<float>> referenceOutputs(const std::string& example, uint64_t seed,
                                                        const std::vector<std::vector<float>>& inputs, int64_t batch) {
    using namespace kiln::engine;
    auto project = io::loadProject(examplePath(example));
    auto model = ops::analyzeModel(project->graph);
    exec::ParamStore params = exec::ParamStore::create(model.value(), seed);
    exec::CompileOptions options;
    options.batch = batch;
    options.training = false;
    ThreadPool pool(1);
    auto plan = exec::Plan::compile(model.value(), params, options, pool);
    if (!plan) return {};
    for (size_t k = 0; k < inputs.size(); ++k) std::copy(inputs[k].begin(), inputs[k].end(), plan.value()->input(k));
    if (!plan.value()->forward().ok()) return {};
    std::vector<std::vector<float>> out;
    for (size_t k = 0; k < model->outputs.size(); ++k) {
        const int64_t n = plan.value()->outputShape(k).numel();
        out.emplace_back(plan.value()->output(k), plan.value()->output(k) + n);
    }
    return out;
}

// Deterministic pseudo-random values in [-1, 1).
inline std::vector<float> sampleValues(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed * 2654435761u + 1;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
    }
    return v;
}

// Runs `body` on a thread until stop() or destruction (so a failing check that returns early
// never leaves a joinable thread behind).
class LoadThread {
public:
    template <typename F> explicit LoadThread(F body) : m_thread([this, body] {
        while (!m_stop.load()) body();
    }) {}
    ~LoadThread() { stop(); }
    void stop() {
        m_stop = true;
        if (m_thread.joinable()) m_thread.join();
    }

private:
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

// Flattens a nested JSON list of numbers.
inline void flatten(const nlohmann::json& j, std::vector<float>& out) {
    if (j.is_array())
        for (const auto& e : j) flatten(e, out);
    else
        out.push_back(j.get<float>());
}

}  // namespace kiln::test
