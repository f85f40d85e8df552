// SPDX-License-Identifier: Apache-2.0
// Where a tensor lives and where a plan runs: "cpu" or "cuda:N"; what GPUs the machine has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine {

struct Device {
    enum class Kind { Cpu, Cuda };
    Kind kind = Kind::Cpu;
    int index = 0;

    static Device cpu() { return {}; }
    static Device cuda(int i) { return {Kind::Cuda, i}; }
    static Result<Device> parse(std::string_view text);  // "cpu", "cuda", "cuda:1"
    bool isCpu() const { return kind == Kind::Cpu; }
    std::string toString() const;
    bool operator==(const Device&) const = default;
};

// A GPU as the driver reports it.
struct GpuStatus {
    int index = 0;
    std::string name;
    int major = 0, minor = 0;  // compute capability
    uint64_t totalMemory = 0;
    uint64_t freeMemory = 0;
    int multiprocessors = 0;
};

// What the machine offers for GPU training: driver and library versions, devices with their free
// memory (engine/api/devices.h: gpuSystemInfo). Zeros and no devices without a driver, a GPU or
// the CUDA backend.
struct GpuSystemInfo {
    int driverVersion = 0;       // highest CUDA version the driver supports, e.g. 13000; 0: no driver
    int runtimeVersion = 0;      // the CUDA runtime Kiln was built with and loaded, e.g. 13000
    int cudnnVersion = 0;        // loaded cuDNN, e.g. 91900
    std::string cudnnBuiltWith;  // headers Kiln was compiled against, "9.19.0"
    int ncclVersion = 0;         // loaded NCCL, e.g. 22809; 0 when built without NCCL
    std::vector<GpuStatus> gpus;
    std::string unavailableReason;  // why there are no GPUs, in the runtime's words
};

}  // namespace kiln::engine
