// SPDX-License-Identifier: Apache-2.0
// The output of one node of a model on one real sample of its project's data, for the editor's
// Preview: an inference plan whose gradient probe keeps the node's value (engine/exec's
// GradientProbe, as explanations use it), run with trained weights or with the initialiser's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/core/shape.h"
#include "engine/core/thread_pool.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

namespace kiln::engine::api {

// The first sample of a project's validation data (else of its training data) as the model's
// Input nodes see it, after decoding and preprocessing, read the way training reads it.
struct PreviewSample {
    std::string split;   // "validation" or "train"
    std::string source;  // the sample's file (streamed data), "FILE:LINE" (a CSV table) or "row N"
    std::vector<std::string> inputNames;     // the model's Input nodes, in model order
    std::vector<std::vector<float>> inputs;  // per Input node, one sample's values
};

// Errors name the field or file (ConfigError on data.* when the project has no data, or data
// the model's inputs do not fit).
Result<PreviewSample> loadPreviewSample(const io::Project& project, const std::string& projectPath, int threads = 1);

struct ValueStats {
    int64_t count = 0;      // finite values
    int64_t nonFinite = 0;  // NaN and infinities, left out of the figures below
    double mean = 0, std = 0, min = 0, max = 0;  // std: population standard deviation
};
ValueStats statsOf(std::span<const float> values);

struct NodeOutput {
    std::string node;
    Shape shape;                // [1, ...] one sample
    std::vector<float> values;  // shape.numel() values, row-major (NHWC for pictures)
    ValueStats stats;
};

// Where the preview's weights came from.
struct PreviewWeights {
    std::string file;          // "" : the initialiser (training seed)
    int64_t loaded = 0;        // parameters read from the file
    int64_t initialised = 0;   // parameters the file lacks or has in another shape (the graph
                               // changed since): they keep their initial values
};

// Runs nodes of one model with fixed weights. Keeps one compiled plan per node asked for. Not
// thread-safe: one per thread.
class NodePreviewer {
public:
    // The project's model with the weights of `weights` (a safetensors file or a run folder;
    // tensors matched by name and shape, the rest initialised) or, when empty, the initial
    // weights training starts from.
    static Result<std::unique_ptr<NodePreviewer>> create(const io::Project& project, const std::string& weights,
                                                         ThreadPool& pool);
    ~NodePreviewer();

    const ops::ModelInfo& model() const { return m_model; }
    const PreviewWeights& weights() const { return m_weights; }
    // The output of `node` for `sample` (whose inputs must fit the model's Input nodes). A layer
    // instance of the project stands for its output node.
    Result<NodeOutput> run(const std::string& node, const PreviewSample& sample);

private:
    struct Plans;  // the weights and one compiled plan per node asked for (node_preview.cpp)

    NodePreviewer(ops::ModelInfo model, std::unique_ptr<Plans> plans);

    ops::ModelInfo m_model;
    std::unique_ptr<Plans> m_plans;
    PreviewWeights m_weights;
    std::map<std::string, std::string> m_instances;  // layer instance -> its expanded output node
};

}  // namespace kiln::engine::api
