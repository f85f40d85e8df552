// SPDX-License-Identifier: Apache-2.0
// A model compiled for one CUDA device from the same exec::Schedule as the CPU plan (step order,
// liveness-based arena, first writes of gradients), with each node's CUDA kernel where the CUDA op
// table supports it and the CPU kernel (plus copies) where it does not. Parameters, gradients and optimizer state live on the device; a training
// step allocates nothing and synchronises only to read the loss.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/backends/cuda/device_context.h"
#include "engine/backends/cuda/op_table_cuda.h"
#include "engine/core/precision.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/exec/reducer.h"
#include "engine/optim/loss_scaler.h"
#include "engine/optim/optimizer.h"

namespace kiln::engine::cuda {

// Parameter values and gradients on the device, one block each; shared by the plans of one model
// (training and inference, full and last partial batch), so they all see the same weights.
struct DeviceParam {
    float* value = nullptr;
    float* grad = nullptr;
    int64_t n = 0;
    bool trainable = true;
    float lrMultiplier = 1.0f;
    bool decay = true;
};

struct DeviceParameters {
    DeviceBuffer values, grads;
    std::vector<DeviceParam> params;
    uint64_t bytes = 0;
};

struct CudaPlanOptions {
    int64_t batch = 32;
    bool training = true;
    std::vector<exec::LossSpec> losses;
    uint64_t seed = 0;
    Precision precision = Precision::Fp32;
    bool tf32 = true;
    // Another plan's parameters of the same model (CudaPlan::sharedParameters); null: allocate
    // and upload the ParamStore's values.
    std::shared_ptr<DeviceParameters> shareParameters;
};

class CudaPlan {
public:
    // Uploads the parameters of `params` (the host copy stays the checkpoint/export source; see
    // downloadParams). CPU-placed nodes run on `pool`.
    static Result<std::unique_ptr<CudaPlan>> compile(const ops::ModelInfo& model, exec::ParamStore& params,
                                                     const CudaPlanOptions& options, DeviceContext& ctx,
                                                     ThreadPool& pool);
    ~CudaPlan();

    const Placement& placement() const { return m_placement; }
    int64_t batch() const { return m_batch; }
    DeviceContext& context() { return *m_ctx; }
    // Device buffers [batch, ...] to fill (or use setInput/setTarget from host memory).
    float* input(size_t k) const;
    float* target(size_t l) const;
    Status setInput(size_t k, const float* host);  // pinned, double-buffered upload on the copy stream
    Status setTarget(size_t l, const float* host);
    Status downloadOutput(size_t k, float* host);

    Status forward(uint64_t step = 0);
    // Forward, losses (gradients scaled by lossScale), backward: gradients in the device grad buffers.
    Status trainStep(uint64_t step, float lossScale = 1.0f);
    // Losses of the last step (synchronises).
    Result<std::vector<float>> losses();

    std::vector<DeviceParam>& deviceParams() { return m_dev->params; }
    const std::shared_ptr<DeviceParameters>& sharedParameters() const { return m_dev; }
    Status downloadParams();  // device values -> the host ParamStore
    Status uploadParams();    // host ParamStore -> device
    // True when every trainable gradient is finite (one small device reduction and a sync).
    Result<bool> gradientsFinite();

    // Data parallel across GPUs: gradients := sum over the replicas of `reducer` (an NCCL reducer,
    // whose data pointers are device pointers) of weight * gradients, times scale (the gradients
    // are one contiguous device block). weight 1, scale 1 / replicas: the plain mean.
    Status allReduceGradients(exec::Reducer& reducer, float weight, float scale);

    uint64_t arenaBytes() const { return m_arenaBytes; }
    uint64_t parameterBytes() const { return m_paramBytes; }

    struct Step;

private:
    CudaPlan() = default;
    Status run(bool backward, uint64_t step, float lossScale);
    Status runStep(Step& s, bool backward, uint64_t step);

    DeviceContext* m_ctx = nullptr;
    ThreadPool* m_pool = nullptr;
    exec::ParamStore* m_params = nullptr;
    int64_t m_batch = 0;
    bool m_training = false;
    Placement m_placement;
    std::shared_ptr<DeviceParameters> m_dev;
    DeviceBuffer m_arena, m_workspace, m_lossSlots, m_flag;
    std::vector<std::unique_ptr<Step>> m_forward, m_losses, m_backward;
    std::vector<float*> m_inputs, m_targets, m_outputs;
    std::vector<size_t> m_inputBytes, m_targetBytes, m_outputBytes;
    uint64_t m_arenaBytes = 0, m_paramBytes = 0;
};

// Optimizer updates on the device: SGD (momentum, Nesterov), Adam and AdamW with decoupled weight
// decay, Keras semantics as engine/optim. Configurations it does not cover (AMSGrad, RMSprop,
// gradient clipping) return Unsupported from create(); callers then step on the host.
class CudaOptimizer {
public:
    static Result<std::unique_ptr<CudaOptimizer>> create(const optim::OptimizerConfig& config,
                                                         CudaPlan& plan);
    // One update with learning rate lr; gradients are multiplied by gradScale first (1/lossScale).
    Status step(double lr, float gradScale = 1.0f);
    int64_t iterations() const { return m_iterations; }
    void setIterations(int64_t n) { m_iterations = n; }
    // The moments in optim::Optimizer's layout (per trainable parameter, slot after slot), so a
    // saved training state resumes on either device.
    int64_t stateFloats() const { return m_stateFloats; }
    Status downloadState(float* host);
    Status uploadState(const float* host);

private:
    CudaOptimizer() = default;
    optim::OptimizerConfig m_config;
    optim::OptimizerKind m_kind = optim::OptimizerKind::Adam;
    double m_weightDecay = 0;
    CudaPlan* m_plan = nullptr;
    DeviceBuffer m_state;
    std::vector<float*> m_slots;  // per parameter: first slot (m, or momentum); v follows at +n
    int64_t m_iterations = 0;
    int64_t m_stateFloats = 0;
};

// One mixed-precision training step: forward/backward with the scaler's loss scale, an overflow
// check, and the optimizer step unless the gradients overflowed (then the scaler backs off).
// Returns whether the step was applied.
Result<bool> scaledTrainStep(CudaPlan& plan, CudaOptimizer& opt, optim::LossScaler& scaler, double lr,
                             uint64_t step);

}  // namespace kiln::engine::cuda
