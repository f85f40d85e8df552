// SPDX-License-Identifier: Apache-2.0
// Device discovery through the CUDA runtime, which fails gracefully when no driver is present.
#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_device.h"
#include "engine/core/rng.h"

namespace kiln::engine::cuda {
namespace {

Error cudaError(cudaError_t e, const char* what) {
    return Error(ErrorCode::DeviceUnavailable, std::string(what) + ": " + cudaGetErrorString(e))
        .with("device", "cuda");
}

__global__ void uniformKernel(uint64_t seed, uint64_t stream, float* out, int64_t n) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = rng::uniform(seed, stream, static_cast<uint64_t>(i));
}

}  // namespace

int deviceCount() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error
        return 0;
    }
    return n;
}

std::string unavailableReason() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess) return n > 0 ? std::string() : std::string("no CUDA device");
    cudaGetLastError();
    return cudaGetErrorString(e);
}

int runtimeVersion() {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return v;
}

Result<std::vector<DeviceInfo>> listDevices() {
    std::vector<DeviceInfo> out;
    int n = deviceCount();
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp p{};
        if (cudaError_t e = cudaGetDeviceProperties(&p, i); e != cudaSuccess)
            return cudaError(e, "cudaGetDeviceProperties");
        out.push_back({i, p.name, p.major, p.minor, static_cast<uint64_t>(p.totalGlobalMem),
                       p.multiProcessorCount});
    }
    return out;
}

Status uniformOnDevice(int device, uint64_t seed, uint64_t stream, float* out, int64_t n) {
    if (device >= deviceCount())
        return Error(ErrorCode::DeviceUnavailable, "CUDA device " + std::to_string(device) + " is not available")
            .with("device", "cuda:" + std::to_string(device));
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return cudaError(e, "cudaSetDevice");
    float* d = nullptr;
    if (cudaError_t e = cudaMalloc(&d, sizeof(float) * static_cast<size_t>(n)); e != cudaSuccess)
        return Error(ErrorCode::OutOfMemory, "cannot allocate device memory").with("bytes", std::to_string(n * 4));
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    uniformKernel<<<static_cast<unsigned>(blocks), threads>>>(seed, stream, d, n);
    cudaError_t e = cudaMemcpy(out, d, sizeof(float) * static_cast<size_t>(n), cudaMemcpyDeviceToHost);
    cudaFree(d);
    if (e != cudaSuccess) return cudaError(e, "uniform kernel");
    return {};
}

}  // namespace kiln::engine::cuda
