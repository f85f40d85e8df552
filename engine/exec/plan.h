// SPDX-License-Identifier: Apache-2.0
// A Plan is a model compiled once for (batch size, training or inference, losses) on the CPU:
// an ordered list of kernel steps (forward, losses, backward) and one arena whose regions are
// reused by liveness. Running a step allocates nothing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/allocator.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/ops/model.h"

namespace kiln::engine::exec {

struct LossSpec {
    std::string type;         // op name: "SparseCategoricalCrossentropy", ...
    std::string output;       // model output node
    AttrMap attrs;            // e.g. from_logits
    Shape targetShape;        // per sample, without the batch dimension
    float weight = 1.0f;
};

// Gradients of chosen values for explanations (saliency maps, Grad-CAM), in an inference plan:
// after forward(), the caller writes the gradient of its score at the `seeds` nodes
// (Plan::seedGradient) and backward() carries it down to the Input nodes (Plan::inputGradient).
// Kernels run as in inference (BatchNorm with its moving statistics, no dropout) and no parameter
// gradient is written. The values and gradients of the `keep` nodes stay readable afterwards. A
// seed may not lie upstream of another seed.
struct GradientProbe {
    std::vector<std::string> seeds;
    std::vector<std::string> keep;
};

struct CompileOptions {
    int64_t batch = 32;
    bool training = true;     // false: no backward steps; BatchNorm uses moving statistics
    std::vector<LossSpec> losses;  // may be empty for pure inference
    uint64_t seed = 0;        // dropout masks
    // ReLUs folded into their producers and first gradient writes that overwrite (the default);
    // false keeps every node its own step and zeroes every gradient before accumulating. Both
    // give bit-identical results; false exists to check that.
    bool fuse = true;
    // Set (with training false): a plan for gradient probes, see GradientProbe.
    std::optional<GradientProbe> probe;
    // Called after every forward step with the step's node and its output, [batch, ...] (count
    // floats), which it may change in place before later steps read it: calibration reads value
    // ranges, int8 simulation rounds values to their quantisation grid. Folded nodes have no step
    // of their own, so observers that must see every node compile with fuse = false.
    std::function<void(const std::string& node, float* values, int64_t count)> observe;
};

struct PlanStats {
    size_t arenaBytes = 0;     // after liveness reuse
    size_t unplannedBytes = 0; // what one buffer per value would take
    size_t steps = 0;
};

class Plan {
public:
    static Result<std::unique_ptr<Plan>> compile(const ops::ModelInfo& model, ParamStore& params,
                                                 const CompileOptions& options, ThreadPool& pool);
    ~Plan();

    int64_t batch() const { return m_batch; }
    bool training() const { return m_training; }
    // Buffers [batch, ...] the caller fills before running; valid for the plan's lifetime.
    float* input(const std::string& inputNode);
    float* input(size_t k);                // k-th Input node of the model
    float* target(size_t loss);            // [batch, targetShape...]
    // Output values after forward()/trainStep(), [batch, ...].
    const float* output(size_t k) const;   // k-th model output
    const float* value(const std::string& node) const;  // null if the value is not kept
    // Probe plans: the gradient buffer of a seed, [batch, ...], for the caller to fill after
    // forward(); the gradient of a kept node or of the k-th Input after backward(). Null for
    // nodes the probe does not name (or that need no gradient).
    float* seedGradient(const std::string& node);
    const float* gradient(const std::string& node) const;
    const float* inputGradient(size_t k) const;
    Shape outputShape(size_t k) const;
    // Loss k's own value (unweighted) of the last forward or step.
    float loss(size_t k) const { return m_lossValues[k]; }
    std::span<const float> lossValues() const { return m_lossValues; }
    // Σ weight_k · loss_k, the loss the gradients minimise.
    float totalLoss() const;

    // Forward pass (and losses when targets are set). In a training plan BatchNorm uses batch
    // statistics and updates its moving averages, and Dropout is active.
    Status forward(uint64_t step = 0);
    // Forward, losses, backward: parameter gradients end in the ParamStore (zeroed first).
    Status trainStep(uint64_t step);
    // Probe plans: the backward steps from the seeded gradients (after forward()).
    Status backward();

    const PlanStats& stats() const { return m_stats; }

    struct Step;  // internal

private:
    Plan() = default;
    Status run(bool backward, uint64_t step, bool forward = true);

    ThreadPool* m_pool = nullptr;
    ParamStore* m_params = nullptr;
    int64_t m_batch = 0;
    bool m_training = false;
    AlignedBuffer m_arena;
    std::vector<std::unique_ptr<Step>> m_forward;
    std::vector<std::unique_ptr<Step>> m_losses;
    std::vector<std::unique_ptr<Step>> m_backward;
    std::vector<float*> m_inputs;
    std::vector<std::string> m_inputNames;
    std::vector<float*> m_targets;
    std::vector<const float*> m_outputs;
    std::vector<Shape> m_outputShapes;
    std::vector<std::string> m_valueNames;
    std::vector<const float*> m_values;
    bool m_probe = false;
    std::vector<std::string> m_gradientNames;  // probe seeds and kept nodes
    std::vector<float*> m_gradients;
    std::vector<float*> m_inputGradients;
    std::vector<float> m_lossValues;
    std::vector<float> m_lossWeights;
    float* m_workspace = nullptr;
    std::function<void(const std::string&, float*, int64_t)> m_observe;
    PlanStats m_stats;
};

}  // namespace kiln::engine::exec
