// SPDX-License-Identifier: Apache-2.0
// Devices and backends: the only #ifdef on the CUDA backend outside engine/backends.
#include "engine/api/devices.h"

#ifdef KILN_API_CUDA
#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/system_info.h"
#endif

namespace kiln::engine::api {

bool cudaBuilt() {
#ifdef KILN_API_CUDA
    return true;
#else
    return false;
#endif
}

std::vector<AvailableDevice> availableDevices() {
    std::vector<AvailableDevice> out{{Device::cpu(), ""}};
#ifdef KILN_API_CUDA
    if (auto devices = cuda::listDevices(); devices.ok())
        for (const auto& d : *devices) out.push_back({Device::cuda(d.index), d.name});
#endif
    return out;
}

GpuSystemInfo gpuSystemInfo() {
#ifdef KILN_API_CUDA
    return cuda::systemInfo();
#else
    return {};
#endif
}

Result<exec::BackendFactory> backendFor(const train::TrainingConfig& config) {
    auto device = Device::parse(config.device);
    if (!device.ok()) {
        return Error(ErrorCode::ConfigError, "training.device must be \"cpu\" or \"cuda:N\"")
            .with("field", "training.device")
            .with("reason", "not a device");
    }
    if (device->isCpu()) {
        return exec::BackendFactory{};
    }
#ifdef KILN_API_CUDA
    if (cuda::deviceCount() <= device->index) {
        return Error(ErrorCode::DeviceUnavailable,
                     device->toString() + " is not available: " + cuda::unavailableReason())
            .with("device", device->toString())
            .with("field", "training.device");
    }
    KILN_ASSIGN(auto options, cuda::cudaBackendOptions(device->toString(), config.memoryLimit));
    return cuda::cudaBackendFactory(options);
#else
    return Error(ErrorCode::Unsupported, "training on " + device->toString() + " needs Kiln built with CUDA")
        .with("what", device->toString())
        .with("field", "training.device");
#endif
}

}  // namespace kiln::engine::api
