// SPDX-License-Identifier: Apache-2.0
// The devices this build and machine offer, and the compute backend for a device name. The one
// place in the engine outside engine/backends that knows whether Kiln was built with the CUDA
// backend: front ends (kiln-train, the studio, TrainingJob) ask here instead of including
// engine/backends themselves.
#pragma once

#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/error.h"
#include "engine/exec/backend.h"
#include "engine/train/config.h"

namespace kiln::engine::api {

// True when this Kiln was built with the CUDA backend.
bool cudaBuilt();

struct AvailableDevice {
    Device device;
    std::string name;  // the GPU's name; "" for the CPU
};
// The CPU, then every CUDA device the machine has (none without the CUDA backend or a driver).
std::vector<AvailableDevice> availableDevices();

// Driver, runtime and library versions and the GPUs with their free memory, for
// `kiln-train --doctor`; all zero without the CUDA backend.
GpuSystemInfo gpuSystemInfo();

// The compute backend for training.device (and training.precision, training.memory_limit): the
// CPU (an empty factory: the Trainer's default), or a CUDA device when this build has the CUDA
// backend and the machine has the device. Errors name the field.
Result<exec::BackendFactory> backendFor(const train::TrainingConfig& config);

}  // namespace kiln::engine::api
