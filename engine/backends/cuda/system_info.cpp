// SPDX-License-Identifier: Apache-2.0
// Version and device queries for the doctor report.
#include "engine/backends/cuda/system_info.h"

#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/dnn.h"
#ifdef KILN_HAVE_NCCL
#include "engine/backends/cuda/nccl_reducer.h"
#endif

namespace kiln::engine::cuda {

GpuSystemInfo systemInfo() {
    GpuSystemInfo s;
    cudaDriverGetVersion(&s.driverVersion);
    s.runtimeVersion = runtimeVersion();
    s.cudnnVersion = cudnnRuntimeVersion();
    s.cudnnBuiltWith = KILN_CUDNN_VERSION_STRING;
#ifdef KILN_HAVE_NCCL
    s.ncclVersion = ncclRuntimeVersion();
#endif
    s.unavailableReason = unavailableReason();
    const int n = deviceCount();
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        GpuStatus g;
        g.index = i;
        g.name = p.name;
        g.major = p.major;
        g.minor = p.minor;
        g.totalMemory = p.totalGlobalMem;
        g.multiprocessors = p.multiProcessorCount;
        size_t freeB = 0, total = 0;
        if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&freeB, &total) == cudaSuccess)
            g.freeMemory = freeB;
        cudaGetLastError();
        s.gpus.push_back(g);
    }
    return s;
}

}  // namespace kiln::engine::cuda
