// SPDX-License-Identifier: Apache-2.0
// One loaded model version: its signature (from kiln-model.json and the graph), the parameters,
// and inference plans compiled on demand for power-of-two batch sizes and cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/json_checked.h"
#include "engine/core/tensor.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/ops/model.h"

namespace kiln::engine::serve {

// Files of a version folder <base>/<name>/<version>/ that kiln-serve reads.
inline constexpr const char* kModelJsonFile = "kiln-model.json";
inline constexpr const char* kModelGraphFile = "model.kiln";
inline constexpr const char* kModelWeightsFile = "weights.safetensors";

// How a {"b64": ...} image becomes an input tensor: decoded, converted to the input's channels,
// resized to its height and width, then value * scale + offset, then (value - mean[c]) / std[c].
struct ImagePreprocessing {
    float scale = 1.0f / 255.0f;
    float offset = 0.0f;
    std::vector<float> mean;  // per channel, empty = none
    std::vector<float> std;
};

struct TensorSpec {
    std::string name;            // the public alias (Input node / output node name)
    std::vector<int64_t> shape;  // -1 first: the batch
    std::string dtype = "DT_FLOAT";
    int64_t itemSize() const {   // elements per batch item
        int64_t n = 1;
        for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
        return n;
    }
    std::vector<int64_t> itemShape() const { return {shape.begin() + 1, shape.end()}; }
    ImagePreprocessing image;    // inputs only
};

struct ModelSignature {
    std::vector<TensorSpec> inputs;   // in the model's Input-node order
    std::vector<TensorSpec> outputs;  // in the model's output order
    std::vector<std::string> classNames;
    // What turns the first output into class probabilities for :classify.
    enum class Scores { Identity, Softmax, Sigmoid } scores = Scores::Identity;
    int findInput(const std::string& name) const {
        for (size_t i = 0; i < inputs.size(); ++i)
            if (inputs[i].name == name) return static_cast<int>(i);
        return -1;
    }
    int findOutput(const std::string& name) const {
        for (size_t i = 0; i < outputs.size(); ++i)
            if (outputs[i].name == name) return static_cast<int>(i);
        return -1;
    }
};

// Limits for reading kiln-model.json: far above what an exporter writes (a few KiB, nesting
// below 10), low enough that a hostile file is refused while it is parsed.
inline JsonLimits modelJsonLimits() { return JsonLimits{size_t(16) << 20, 64, 0}; }

// Reads kiln-model.json (inputs, outputs, preprocessing, class names) into `sig`, checking it
// against the graph's signature; unknown fields are ignored. Errors name the file and field.
Status applyModelJson(const nlohmann::json& j, const std::string& path, ModelSignature& sig);

class Servable {
public:
    // Loads <dir>/model.kiln, <dir>/weights.safetensors and (optional) <dir>/kiln-model.json.
    static Result<std::shared_ptr<Servable>> load(const std::string& dir, const std::string& modelName,
                                                  int64_t version, ThreadPool& pool);
    // A servable from a graph and parameters in memory (tests and fuzzers).
    static Result<std::shared_ptr<Servable>> fromModel(const ops::ModelInfo& model, exec::ParamStore params,
                                                       ModelSignature signature, const std::string& modelName,
                                                       int64_t version, ThreadPool& pool);
    // The signature Kiln derives from an analysed graph and its project sections.
    static ModelSignature deriveSignature(const ops::ModelInfo& model, const nlohmann::json& data,
                                          const nlohmann::json& training);

    ~Servable();

    const std::string& name() const { return m_name; }
    int64_t version() const { return m_version; }
    const ModelSignature& signature() const { return m_signature; }
    const ops::ModelInfo& model() const { return m_model; }

    // Runs the model on `inputs` (one [batch, item...] float tensor per signature input, same
    // batch) and returns one [batch, item...] tensor per output. Thread-safe; batches larger
    // than the largest plan are run in chunks.
    Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);

    // Compiles the plans for batch sizes 1, 2, 4, ... up to `maxBatch` (at most kMaxPlanBatch)
    // and runs each once (load-time warm-up, so the first requests compile nothing).
    Status warmUp(int64_t maxBatch = 1);

    static constexpr int64_t kMaxPlanBatch = 64;

private:
    struct PlanSlot {
        std::mutex mutex;
        std::unique_ptr<exec::Plan> plan;
    };
    Servable(const ops::ModelInfo& model, exec::ParamStore params, ModelSignature signature, std::string name,
             int64_t version, ThreadPool& pool);
    Result<PlanSlot*> slotFor(int64_t planBatch);
    Status runChunk(const std::vector<Tensor>& inputs, int64_t begin, int64_t count, std::vector<Tensor>& outputs);

    ops::ModelInfo m_model;
    exec::ParamStore m_params;
    ModelSignature m_signature;
    std::string m_name;
    int64_t m_version = 0;
    ThreadPool* m_pool;
    std::mutex m_slotsMutex;
    std::map<int64_t, std::unique_ptr<PlanSlot>> m_slots;
};

}  // namespace kiln::engine::serve
