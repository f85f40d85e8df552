// SPDX-License-Identifier: Apache-2.0
// The Trainer's compute backend on one CUDA device: a CudaPlan per batch size sharing one set of
// device parameters, CudaOptimizer updates on the device (or host updates for configurations the
// device optimizer does not cover), dynamic loss scaling for mixed float16, and out-of-memory
// errors that carry the memory assistant's prediction and the batch size that would fit.
#pragma once

#include <memory>
#include <string>

#include "engine/backends/cuda/caching_allocator.h"
#include "engine/exec/backend.h"

namespace kiln::engine::cuda {

struct CudaBackendOptions {
    int device = 0;
    MemoryLimit memory;  // training.memory_limit
};

// Reads "cuda:N" and training.memory_limit ("growth", "all", "0.8", "80%", "12GiB"); ConfigError
// naming the field otherwise.
Result<CudaBackendOptions> cudaBackendOptions(const std::string& device, const std::string& memoryLimit);

Result<std::unique_ptr<exec::ComputeBackend>> makeCudaBackend(const exec::BackendSetup& setup,
                                                              const CudaBackendOptions& options);

// A factory for Trainer::create.
exec::BackendFactory cudaBackendFactory(const CudaBackendOptions& options);

}  // namespace kiln::engine::cuda
