// SPDX-License-Identifier: Apache-2.0
// CUDA device discovery and the first device kernel (counter-based random fill), behind a
// plain C++ interface so the rest of the engine never includes CUDA headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::cuda {

struct DeviceInfo {
    int index = 0;
    std::string name;
    int major = 0, minor = 0;  // compute capability
    uint64_t totalMemory = 0;  // bytes
    int multiprocessors = 0;
};

// Number of usable CUDA devices; 0 when there is no driver or no device (never an error).
int deviceCount();
// Why deviceCount() is 0, in words ("no CUDA driver", ...); empty when devices exist.
std::string unavailableReason();
Result<std::vector<DeviceInfo>> listDevices();
int runtimeVersion();  // e.g. 13000

// Fills host `out` with rng::uniform(seed, stream, i) computed on device `device`.
Status uniformOnDevice(int device, uint64_t seed, uint64_t stream, float* out, int64_t n);

}  // namespace kiln::engine::cuda
