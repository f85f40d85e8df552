// SPDX-License-Identifier: Apache-2.0
// What the machine offers Kiln for GPU training: driver and library versions, devices with their
// free memory. Every query degrades gracefully (zeros, an empty list) without a driver or GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::engine::cuda {

struct GpuStatus {
    int index = 0;
    std::string name;
    int major = 0, minor = 0;
    uint64_t totalMemory = 0;
    uint64_t freeMemory = 0;
    int multiprocessors = 0;
};

struct SystemInfo {
    int driverVersion = 0;       // highest CUDA version the driver supports, e.g. 13000; 0: no driver
    int runtimeVersion = 0;      // the CUDA runtime Kiln was built with and loaded, e.g. 13000
    int cudnnVersion = 0;        // loaded cuDNN, e.g. 91900
    std::string cudnnBuiltWith;  // headers Kiln was compiled against, "9.19.0"
    int ncclVersion = 0;         // loaded NCCL, e.g. 22809; 0 when built without NCCL
    std::vector<GpuStatus> gpus;
    std::string unavailableReason;  // why there are no GPUs, in the runtime's words
};

SystemInfo systemInfo();

}  // namespace kiln::engine::cuda
