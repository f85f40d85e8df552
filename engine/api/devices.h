// SPDX-License-Identifier: Apache-2.0
// The devices this build and machine offer. devices.cpp is the one place in the engine outside
// engine/backends that knows whether Kiln was built with the CUDA backend: front ends (kiln-train,
// the studio, TrainingJob) ask here instead of including engine/backends themselves, and it also
// makes the compute backend for a device name (backendFor, declared in training_setup.h).
#pragma once

#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/error.h"

namespace kiln::engine::api {

// True when this Kiln was built with the CUDA backend.
bool cudaBuilt();

struct AvailableDevice {
    Device device;
    std::string name;  // the GPU's name; "" for the CPU
};
// The CPU, then every CUDA device the machine has (none without the CUDA backend or a driver).
std::vector<AvailableDevice> availableDevices();

// The instruction set whose CPU kernels this machine runs ("avx512", "avx2", ...), after
// KILN_CPU_ISA.
std::string cpuInstructionSet();

// Driver, runtime and library versions and the GPUs with their free memory, for
// `kiln-train --doctor`; all zero without the CUDA backend.
GpuSystemInfo gpuSystemInfo();

// The GPUs of `kiln-train --gpus`: "all" (every CUDA device of the machine, at least one) or
// distinct indices separated by commas ("0", "0,1,3"), in the order given. Errors: ConfigError
// (field "gpus") for text that is not such a list, naming the bad or repeated entry;
// DeviceUnavailable (device "cuda:N") for the first listed GPU the machine does not have.
Result<std::vector<int>> selectGpus(const std::string& text);

}  // namespace kiln::engine::api
