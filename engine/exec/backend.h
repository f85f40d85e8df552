// SPDX-License-Identifier: Apache-2.0
// The compute-backend seam: where a model's steps run. A compute backend owns the compiled model
// for each batch size (training and inference) and the optimizer; its user (the Trainer) fills
// host-visible batch buffers, asks for a step and reads the loss and outputs back. The CPU
// backend (here) runs Plan with optim::Optimizer in place; the CUDA backend
// (engine/backends/cuda) runs CudaPlan with device-side updates. Both keep the optimizer state in
// the same layout, so a saved training state resumes on either. engine/api/devices.h picks the
// backend for a device name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/precision.h"
#include "engine/core/shape.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/exec/reducer.h"
#include "engine/ops/model.h"
#include "engine/optim/optimizer.h"

namespace kiln::engine::exec {

// One compiled model for one batch size.
class BatchRunner {
public:
    virtual ~BatchRunner() = default;
    virtual int64_t batch() const = 0;
    // Host memory the Trainer fills with a batch ([batch, ...] floats) before a step.
    virtual float* input(size_t k) = 0;
    virtual float* target(size_t l) = 0;
    virtual Status forward() = 0;
    // Forward, backward and the optimizer update with learning rate lr. False when the update was
    // skipped (mixed float16: the gradients overflowed and the loss scale backs off).
    virtual Result<bool> trainStep(uint64_t globalStep, double lr) = 0;
    // The weighted sum of the losses of the last forward or step.
    virtual Result<double> totalLoss() = 0;
    // Each loss term's own (unweighted) value of the last forward or step, in loss order; valid
    // after totalLoss() succeeded and until the next forward or step.
    virtual std::span<const float> lossValues() const = 0;
    // Output o of the last forward or step, in host memory ([batch, ...]).
    virtual Result<const float*> output(size_t o) = 0;
    virtual Shape outputShape(size_t o) const = 0;
};

// Device memory, for the training view's memory chart and the run summary (zeros on the CPU).
struct DeviceMemory {
    uint64_t inUse = 0, reserved = 0, peak = 0, limit = 0, total = 0;
};

class ComputeBackend {
public:
    virtual ~ComputeBackend() = default;
    virtual std::string device() const = 0;  // "cpu", "cuda:0"
    // The compiled model for `batch` (compiled once, then kept).
    virtual Result<BatchRunner*> runner(int64_t batch, bool training) = 0;
    // The host ParamStore is the source of checkpoints, callbacks and exports: pullParameters()
    // brings the device's weights there, pushParameters() sends host changes back.
    virtual Status pullParameters() = 0;
    virtual Status pushParameters() = 0;
    // Brings the parameter gradients of the last training step to the host ParamStore
    // (Parameter::grad of trainable parameters), unscaled by any loss scale. The CPU backend
    // computes them there already.
    virtual Status pullGradients() { return {}; }
    // Optimizer state in optim::Optimizer's layout, with its step count.
    virtual int64_t optimizerStateSize() const = 0;
    virtual Status saveOptimizerState(float* out) = 0;
    virtual Status loadOptimizerState(const float* in) = 0;
    virtual int64_t iterations() const = 0;
    virtual void setIterations(int64_t n) = 0;
    // Backend state a resumed run needs beyond weights and optimizer moments (the fp16 loss
    // scale); null when there is none. A state without it (saved on another device) leaves
    // the backend as it is.
    virtual nlohmann::json extraState() const { return nullptr; }
    virtual Status loadExtraState(const nlohmann::json& /*state*/) { return {}; }
    virtual DeviceMemory memory() const { return {}; }
    // Lines for the log: where nodes run, precision, memory limits.
    virtual std::vector<std::string> describe() const { return {}; }
};

// What a backend is built for: the model and its host parameters (the starting weights), the
// losses, the optimizer and the run's batch size, seed and precision.
struct BackendSetup {
    const ops::ModelInfo* model = nullptr;
    ParamStore* params = nullptr;
    std::vector<LossSpec> losses;  // with target shapes
    optim::OptimizerConfig optimizer;
    // The training batch size: the CUDA backend compiles that plan first, binds its device
    // optimizer to it and suggests smaller batches from it when memory runs out.
    int64_t batchSize = 32;
    uint64_t seed = 0;  // dropout masks
    Precision precision = Precision::Fp32;
    ThreadPool* pool = nullptr;
    // Data parallel across processes: this backend is one replica of the reducer's group and
    // averages its gradients with the others' before every optimizer update (exec/replica_sync.h).
    // Null: one replica. Backends that cannot take part return Unsupported.
    Reducer* group = nullptr;
};

using BackendFactory = std::function<Result<std::unique_ptr<ComputeBackend>>(const BackendSetup&)>;

// Plan and optim::Optimizer on the host's threads.
Result<std::unique_ptr<ComputeBackend>> makeCpuBackend(const BackendSetup& setup);

// The CPU backend's plan for a batch size, or null (benchmarks and tests read its statistics).
Plan* cpuPlan(ComputeBackend& backend, int64_t batch, bool training);

}  // namespace kiln::engine::exec
