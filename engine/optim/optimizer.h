// SPDX-License-Identifier: Apache-2.0
// First-order optimizers with Keras 3 semantics and defaults (SGD, Adam, AdamW, RMSprop):
// per-parameter state in one contiguous buffer, one fused, allocation-free pass per step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/thread_pool.h"

namespace kiln::engine::optim {

enum class OptimizerKind { Sgd, Adam, AdamW, RmsProp };

// "sgd", "adam", "adamw", "rmsprop" (case-insensitive); ConfigError naming optimizer.type otherwise.
Result<OptimizerKind> parseOptimizerKind(std::string_view type);
const char* optimizerKindName(OptimizerKind kind);

struct OptimizerConfig {
    std::string type = "adam";
    // Unset means the Keras default for the type: 0.01 for sgd, 0.001 otherwise.
    std::optional<double> learningRate;

    // sgd
    double momentum = 0.0;  // [0, 1]
    bool nesterov = false;

    // adam / adamw
    double beta1 = 0.9;
    double beta2 = 0.999;
    bool amsgrad = false;

    // adam / adamw / rmsprop: added to the denominator (Keras 3: inside the sqrt for rmsprop)
    double epsilon = 1e-7;

    // rmsprop
    double rho = 0.9;
    double rmsMomentum = 0.0;  // [0, 1]
    bool centered = false;

    // Decoupled weight decay, Keras 3 style for every type: w -= lr * wd * w before the update.
    // Unset means the Keras default: 0.004 for adamw, 0 otherwise.
    std::optional<double> weightDecay;

    // Gradient clipping, Keras semantics; at most one may be set.
    std::optional<double> clipNorm;        // per parameter tensor: g *= c / max(||g||, c)
    std::optional<double> globalClipNorm;  // over all parameters: g *= c / max(||G||, c)
    std::optional<double> clipValue;       // elementwise: g = clamp(g, -c, c)

    double resolvedLearningRate() const;
    double resolvedWeightDecay() const;

    // ConfigError with params {field, reason}; field uses the Keras snake_case names,
    // e.g. "optimizer.learning_rate".
    Status validate() const;
};

class Optimizer {
public:
    // `config` must have passed validate(); use create() to validate and construct in one go.
    explicit Optimizer(const OptimizerConfig& config);
    static Result<Optimizer> create(const OptimizerConfig& config);

    Optimizer(Optimizer&&) noexcept = default;
    Optimizer& operator=(Optimizer&&) noexcept = default;
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    const OptimizerConfig& config() const { return m_config; }
    OptimizerKind kind() const { return m_kind; }

    // Registers one parameter tensor of n floats. `value` and `grad` must stay valid (and keep
    // their size) for the optimizer's lifetime. lrMultiplier scales the learning rate for this
    // tensor (update and weight decay); decay=false exempts it from weight decay (biases, norms).
    // Grows the state buffer (zero-initialised); call before the first step().
    void addParameter(float* value, const float* grad, int64_t n, float lrMultiplier = 1.0f,
                      bool decay = true);

    int64_t parameterCount() const { return static_cast<int64_t>(m_params.size()); }
    int64_t elementCount() const { return m_elements; }

    // One update of every registered parameter with learning rate `lr` (from the schedule):
    // clip, weight decay, update; then iterations() += 1. Never allocates. Bit-identical results
    // for any pool size: reductions use fixed blocks summed in a fixed order.
    void step(double lr, ThreadPool& pool);

    // Number of completed steps; Adam's bias correction uses iterations() + 1.
    int64_t iterations() const { return m_iterations; }
    void setIterations(int64_t iterations) { m_iterations = iterations; }

    // Optimizer state (moments) for checkpoints: for each parameter in registration order, each
    // of its stateSlots() buffers of n floats. The layout depends only on the config and the
    // registered sizes. iterations() is saved separately.
    int stateSlots() const { return m_slots; }
    int64_t stateSize() const { return static_cast<int64_t>(m_state.size()); }
    void saveState(float* out) const;
    void loadState(const float* in);
    std::span<const float> state() const { return m_state; }
    std::span<float> state() { return m_state; }
    // Zeroes the moments and the iteration count (e.g. to restart training).
    void resetState();

    // Norm of all gradients before clipping in the last step(); 0 unless a norm clip is set.
    double lastGlobalGradNorm() const { return m_lastGlobalNorm; }

private:
    struct Param {
        float* value;
        const float* grad;
        int64_t n;
        int64_t elementOffset;  // position in the flattened sequence of all parameters
        int64_t stateOffset;    // into m_state, slot s at stateOffset + s * n
        float lrMultiplier;
        bool decay;
        int64_t firstBlock;   // into m_blocks
        int64_t blockCount;
    };
    // A fixed slice (kNormBlock elements) of one parameter: the unit of the gradient-norm
    // reduction, so partial sums do not depend on the thread count.
    struct Block {
        int64_t param;
        int64_t begin;
        int64_t end;
    };

    // Per-step scalars shared by every parameter.
    struct StepScalars {
        double lr = 0.0;
        double adamAlpha = 0.0;  // bias-corrected Adam step size (before lrMultiplier)
        float clipValue = 0.0f;  // +inf when clipvalue is off
    };

    void computeClipScales(ThreadPool& pool);
    // Fused clip + weight decay + update of elements [begin, end) of one parameter.
    void updateRange(size_t paramIndex, int64_t begin, int64_t end, const StepScalars& s);

    OptimizerConfig m_config;
    OptimizerKind m_kind = OptimizerKind::Adam;
    int m_slots = 0;
    double m_weightDecay = 0.0;
    std::vector<Param> m_params;
    std::vector<Block> m_blocks;
    std::vector<double> m_blockSquares;  // per block: sum of squared gradients
    std::vector<float> m_clipScale;      // per parameter, from clipNorm/globalClipNorm
    std::vector<float> m_state;
    int64_t m_elements = 0;
    int64_t m_iterations = 0;
    double m_lastGlobalNorm = 0.0;
};

}  // namespace kiln::engine::optim
