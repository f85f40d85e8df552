// SPDX-License-Identifier: Apache-2.0
// Before a run starts: the predicted peak memory of the project's training on its device against
// what that device has free, the largest batch that fits when it does not, and (on request) the
// time an epoch will take, measured by a few real training steps on the project's data with
// nothing written anywhere.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/io/project.h"

namespace kiln::engine::api {

// The predicted peak memory of a training run, by part (engine/exec/memory_assistant.h says how
// each is predicted).
struct MemoryEstimate {
    int64_t batch = 0;
    uint64_t parameters = 0;        // weights as stored (fp32)
    uint64_t lowPrecisionCopy = 0;  // fp16/bf16 staging of Dense/Conv2D inputs and weights (CUDA workspace)
    uint64_t gradients = 0;
    uint64_t optimizerState = 0;
    uint64_t activations = 0;  // values, gradients of values, saved state, scratch
    uint64_t workspace = 0;    // CUDA: cuBLASLt workspace and the plan's fp32 kernel workspace
    // CUDA: the cap on cuDNN's convolution workspace, which cuDNN chooses at run time (not in
    // total()).
    uint64_t convWorkspaceLimit = 0;
    double bytesPerSample = 0;  // the part that grows with the batch, per sample

    uint64_t total() const {
        return parameters + lowPrecisionCopy + gradients + optimizerState + activations + workspace;
    }
    uint64_t totalWithConvWorkspace() const { return total() + convWorkspaceLimit; }
};

struct PreflightRequest {
    std::optional<int64_t> batchSize;  // instead of training.batch_size
    int calibrationSteps = 0;          // 0: no timing; else steps to time, after a first one timed apart
    int threads = 0;                   // CPU threads for the timing; 0 : all cores
};

struct PreflightReport {
    std::string device;     // "cpu", "cuda:0"
    std::string precision;  // as configured
    int64_t batch = 0;
    MemoryEstimate memory;        // predicted for this device, batch and precision
    uint64_t peakBytes = 0;       // what is compared with the budget (cuDNN workspace limit included)
    uint64_t budgetBytes = 0;     // free memory of the device (host: MemAvailable); 0 when unknown
    bool fits = true;
    int64_t suggestedBatch = 0;   // when it does not fit: the largest batch within 90 % of the budget (0: none)
    // Timing (calibrationSteps > 0): steps of a real fit on the project's data.
    int measuredSteps = 0;        // steps timed after the first (calibrationSteps unless the epoch is shorter)
    double firstStepSeconds = 0;  // includes plan compilation and the first batch
    double secondsPerStep = 0;    // median of the steps after the first, as a run takes them
    double samplesPerSecond = 0;
    int64_t trainingSamples = 0;  // per epoch (after validation_split)
    int64_t stepsPerEpoch = 0;
    double epochSeconds = 0;      // stepsPerEpoch * secondsPerStep
};

// A number of bytes as "1.5 GiB", "512 MiB", "900 B".
std::string formatBytes(uint64_t bytes);

// The memory available to a new process on this machine (/proc/meminfo MemAvailable), 0 when
// unknown.
uint64_t hostAvailableMemory();

// Errors name the file, field or node as a training run's would (TrainingJob::prepare).
Result<PreflightReport> preflightTraining(const io::Project& project, const std::string& projectPath,
                                          const PreflightRequest& request, const std::atomic<bool>* cancel = nullptr);

}  // namespace kiln::engine::api
