// SPDX-License-Identifier: Apache-2.0
// Devices and backends: the only #ifdef on the CUDA backend outside engine/backends.
#include "engine/api/devices.h"

#include <algorithm>
#include <cctype>

#include "engine/api/internal/training_setup.h"
#include "engine/core/cpu_isa.h"

#ifdef KILN_API_CUDA
#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/system_info.h"
#endif

namespace kiln::engine::api {

std::string cpuInstructionSet() {
    return std::string(cpuIsaName(cpuIsa()));
}

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

namespace {

Error gpuListError(const std::string& text, const std::string& reason) {
    return Error(ErrorCode::ConfigError, "--gpus \"" + text + "\": " + reason)
        .with("field", "gpus")
        .with("reason", reason);
}

// Why the machine has no CUDA device, for messages.
std::string noDeviceReason() {
#ifdef KILN_API_CUDA
    const std::string reason = cuda::unavailableReason();
    return reason.empty() ? "the machine has no such GPU" : reason;
#else
    return "this Kiln was built without CUDA";
#endif
}

}  // namespace

Result<std::vector<int>> selectGpus(const std::string& text) {
    std::vector<int> present;
    for (const auto& d : availableDevices())
        if (!d.device.isCpu()) present.push_back(d.device.index);
    if (text == "all") {
        if (present.empty())
            return Error(ErrorCode::DeviceUnavailable,
                         "--gpus all: no CUDA device is available, not even GPU 0 (cuda:0): " + noDeviceReason())
                .with("device", "cuda:0")
                .with("field", "gpus");
        return present;
    }
    if (text.empty()) return gpuListError(text, "give \"all\" or GPU indices separated by commas, such as 0,1");
    std::vector<int> out;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, comma - at);
        const bool digits = !item.empty() && item.size() <= 6 &&
                            std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c); });
        if (!digits)
            return gpuListError(text, item.empty() ? "an empty entry" : "\"" + item + "\" is not a GPU index");
        const int index = std::stoi(item);
        if (std::find(out.begin(), out.end(), index) != out.end())
            return gpuListError(text, "GPU " + item + " is listed twice");
        out.push_back(index);
        at = comma + 1;
    }
    for (int index : out)
        if (std::find(present.begin(), present.end(), index) == present.end())
            return Error(ErrorCode::DeviceUnavailable, "GPU " + std::to_string(index) + " (cuda:" + std::to_string(index) +
                                                           ") is not available: " + noDeviceReason())
                .with("device", "cuda:" + std::to_string(index))
                .with("field", "gpus");
    return out;
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
