// SPDX-License-Identifier: Apache-2.0
// The memory assistant: before training, the predicted peak memory of a run (parameters,
// gradients, optimizer state, activations from the plan's liveness arena, workspaces) for a batch
// size and precision, and the largest batch that fits a budget. It models what Kiln does: values
// and gradients stay fp32 at every precision; fp16/bf16 only stage the inputs and weights of
// Dense/Conv2D in 16 bits inside the kernel workspace. Also composes the out-of-memory error that
// names what was asked, what was in use, the cap, the prediction and a batch that fits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/precision.h"
#include "engine/exec/plan.h"
#include "engine/ops/model.h"
#include "engine/optim/optimizer.h"

namespace kiln::engine::exec {

struct MemoryOptions {
    int64_t batch = 32;
    Precision precision = Precision::Fp32;
    optim::OptimizerConfig optimizer;
    std::vector<LossSpec> losses;
    bool training = true;
    bool cuda =
        false;  // the CUDA plan: its buffers, kernel workspace, cuBLASLt workspace, allocator rounding
};

struct MemoryEstimate {
    int64_t batch = 0;
    uint64_t parameters = 0;        // weights as stored (fp32)
    uint64_t lowPrecisionCopy = 0;  // fp16/bf16 staging of Dense/Conv2D inputs and weights (CUDA workspace)
    uint64_t gradients = 0;         // fp32 (CPU: trainable parameters; CUDA: one block for all)
    uint64_t optimizerState = 0;
    uint64_t activations = 0;  // liveness arena: values, gradients of values, saved state, scratch
    uint64_t workspace = 0;    // CUDA: cuBLASLt workspace and the plan's fp32 kernel workspace
    // CUDA: cuDNN convolution workspace, chosen by cuDNN's algorithms at run time; at most this
    // (Kiln's cap) when the model has convolutions. Not in total(): no prediction can know it
    // before the algorithms are chosen; budgets (largestBatch) add it.
    uint64_t convWorkspaceLimit = 0;
    // Everything Kiln allocates for the run except the cuDNN convolution workspace.
    uint64_t total() const {
        return parameters + lowPrecisionCopy + gradients + optimizerState + activations + workspace;
    }
    uint64_t totalWithConvWorkspace() const { return total() + convWorkspaceLimit; }
    // The part that grows with the batch, per sample (activations and staging).
    double bytesPerSample = 0;
};

// Predicted peak memory. Activations come from the CPU plan's liveness arena compiled at two
// small batches and extrapolated linearly (every buffer in it scales with the batch); they are
// fp32 at every precision, as Kiln keeps them. With `cuda`, each device block is rounded as the
// caching allocator rounds it. Nothing of the full batch is allocated.
Result<MemoryEstimate> estimateMemory(const ops::ModelInfo& model, const MemoryOptions& options);

// The largest batch whose estimate, cuDNN workspace limit included, fits `budgetBytes` (at most
// `maxBatch`); OutOfMemory when even a batch of one does not fit.
Result<int64_t> largestBatch(const ops::ModelInfo& model, MemoryOptions options, uint64_t budgetBytes,
                             int64_t maxBatch = 1 << 20);

// The error for an allocation that failed: OutOfMemory with params requested, in_use, cap (bytes),
// and, when known, predicted (bytes, the estimate for this run) and suggested_batch.
Error outOfMemoryError(uint64_t requested, uint64_t inUse, uint64_t cap, const std::string& device,
                       const MemoryEstimate* predicted = nullptr, int64_t suggestedBatch = 0);

// "1.5 GiB", "512 MiB", "900 B".
std::string formatBytes(uint64_t bytes);

}  // namespace kiln::engine::exec
