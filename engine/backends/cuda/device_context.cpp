// SPDX-License-Identifier: Apache-2.0
// Device context: streams, cudaMalloc-backed caching allocator, library handles, pinned staging.
#include "engine/backends/cuda/device_context.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstring>

namespace kiln::engine::cuda {
namespace {

// cudaMalloc/cudaFree on one device.
class CudaRawMemory final : public RawMemory {
public:
    explicit CudaRawMemory(int device) : m_device(device) {
        size_t freeB = 0, total = 0;
        cudaSetDevice(device);
        if (cudaMemGetInfo(&freeB, &total) == cudaSuccess) m_total = total;
    }
    void* allocate(size_t bytes) override {
        void* p = nullptr;
        cudaSetDevice(m_device);
        if (cudaMalloc(&p, bytes) != cudaSuccess) {
            cudaGetLastError();  // an out-of-memory is not sticky; clear it
            return nullptr;
        }
        return p;
    }
    void release(void* p) override {
        cudaSetDevice(m_device);
        cudaFree(p);
    }
    uint64_t totalBytes() const override { return m_total; }
    void synchronize() override {
        cudaSetDevice(m_device);
        cudaDeviceSynchronize();
    }

private:
    int m_device;
    uint64_t m_total = 0;
};

constexpr size_t kBlasWorkspace = size_t{32} << 20;  // NVIDIA's recommendation for Hopper
constexpr size_t kStagingBytes = size_t{64} << 20;

}  // namespace

Status checkCuda(int status, const char* what) {
    if (status == cudaSuccess) return {};
    const auto e = static_cast<cudaError_t>(status);
    if (e == cudaErrorMemoryAllocation)
        return Error(ErrorCode::OutOfMemory, std::string(what) + ": " + cudaGetErrorString(e))
            .with("device", "cuda");
    return Error(ErrorCode::DeviceUnavailable, std::string(what) + ": " + cudaGetErrorString(e))
        .with("device", "cuda");
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        if (m_alloc && m_ptr) m_alloc->free(m_ptr);
        m_alloc = o.m_alloc;
        m_ptr = o.m_ptr;
        m_bytes = o.m_bytes;
        o.m_alloc = nullptr;
        o.m_ptr = nullptr;
        o.m_bytes = 0;
    }
    return *this;
}
DeviceBuffer::~DeviceBuffer() {
    if (m_alloc && m_ptr) m_alloc->free(m_ptr);
}

Result<PinnedBuffer> PinnedBuffer::create(size_t bytes) {
    PinnedBuffer b;
    if (cudaError_t e = cudaHostAlloc(&b.m_ptr, bytes, cudaHostAllocDefault); e != cudaSuccess) {
        cudaGetLastError();
        return Error(ErrorCode::OutOfMemory, std::string("cannot pin host memory: ") + cudaGetErrorString(e))
            .with("bytes", std::to_string(bytes))
            .with("device", "host");
    }
    b.m_bytes = bytes;
    return b;
}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
        if (m_ptr) cudaFreeHost(m_ptr);
        m_ptr = o.m_ptr;
        m_bytes = o.m_bytes;
        o.m_ptr = nullptr;
        o.m_bytes = 0;
    }
    return *this;
}
PinnedBuffer::~PinnedBuffer() {
    if (m_ptr) cudaFreeHost(m_ptr);
}

Result<std::unique_ptr<DeviceContext>> DeviceContext::create(int device, MemoryLimit limit) {
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || device < 0 || device >= count) {
        cudaGetLastError();
        return Error(ErrorCode::DeviceUnavailable,
                     "CUDA device " + std::to_string(device) + " is not available" +
                         (e != cudaSuccess ? std::string(": ") + cudaGetErrorString(e) : std::string()))
            .with("device", "cuda:" + std::to_string(device));
    }
    std::unique_ptr<DeviceContext> c(new DeviceContext());
    c->m_device = device;
    KILN_TRY(checkCuda(cudaSetDevice(device), "cudaSetDevice"));
    cudaStream_t s = nullptr, cs = nullptr;
    KILN_TRY(checkCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
    c->m_stream = s;
    KILN_TRY(checkCuda(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), "cudaStreamCreate (copies)"));
    c->m_copyStream = cs;
    c->m_allocator =
        std::make_unique<CachingAllocator>(std::make_unique<CudaRawMemory>(device), limit, c->name());
    cublasLtHandle_t lt = nullptr;
    if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
        return Error(ErrorCode::DeviceUnavailable, "cuBLASLt could not be initialised")
            .with("device", c->name());
    c->m_cublasLt = lt;
    cudnnHandle_t dnn = nullptr;
    if (cudnnStatus_t st = cudnnCreate(&dnn); st != CUDNN_STATUS_SUCCESS)
        return Error(ErrorCode::DeviceUnavailable,
                     std::string("cuDNN could not be initialised: ") + cudnnGetErrorString(st))
            .with("device", c->name());
    c->m_cudnn = dnn;
    cudnnSetStream(dnn, s);
    KILN_ASSIGN(c->m_blasWorkspace, c->alloc(kBlasWorkspace));
    for (int k = 0; k < 2; ++k) {
        KILN_ASSIGN(c->m_staging[k], PinnedBuffer::create(kStagingBytes));
        cudaEvent_t ev = nullptr;
        KILN_TRY(checkCuda(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate"));
        c->m_stagingDone[k] = ev;
    }
    return c;
}

DeviceContext::~DeviceContext() {
    cudaSetDevice(m_device);
    if (m_stream) cudaStreamSynchronize(m_stream);
    if (m_copyStream) cudaStreamSynchronize(m_copyStream);
    m_blasWorkspace = DeviceBuffer();
    m_convWorkspace = DeviceBuffer();
    for (void* ev : m_stagingDone)
        if (ev) cudaEventDestroy(static_cast<cudaEvent_t>(ev));
    if (m_cudnn) cudnnDestroy(static_cast<cudnnHandle_t>(m_cudnn));
    if (m_cublasLt) cublasLtDestroy(static_cast<cublasLtHandle_t>(m_cublasLt));
    m_allocator.reset();
    if (m_copyStream) cudaStreamDestroy(m_copyStream);
    if (m_stream) cudaStreamDestroy(m_stream);
}

Result<DeviceBuffer> DeviceContext::alloc(size_t bytes) {
    KILN_ASSIGN(void* p, m_allocator->allocate(bytes, m_stream));
    return DeviceBuffer(m_allocator.get(), p, bytes);
}

Result<void*> DeviceContext::convWorkspace(size_t bytes) {
    bytes = std::min(bytes, kMaxConvWorkspace);
    if (bytes > m_convWorkspace.bytes()) {
        m_convWorkspace = DeviceBuffer();
        KILN_ASSIGN(m_convWorkspace, alloc(bytes));
    }
    return m_convWorkspace.get();
}

Status DeviceContext::synchronize() {
    cudaSetDevice(m_device);
    return checkCuda(cudaStreamSynchronize(m_stream), "kernel execution");
}

Status DeviceContext::upload(void* dst, const void* src, size_t bytes) {
    return checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, m_stream),
                     "copy to the device");
}

Status DeviceContext::download(void* dst, const void* src, size_t bytes) {
    KILN_TRY(checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m_stream),
                       "copy from the device"));
    return synchronize();
}

Status DeviceContext::memsetAsync(void* dst, int value, size_t bytes) {
    return checkCuda(cudaMemsetAsync(dst, value, bytes, m_stream), "cudaMemsetAsync");
}

Status DeviceContext::stagedUpload(void* dst, const void* src, size_t bytes) {
    const auto* from = static_cast<const std::byte*>(src);
    auto* to = static_cast<std::byte*>(dst);
    for (size_t at = 0; at < bytes;) {
        const int k = m_nextStaging;
        m_nextStaging ^= 1;
        auto ev = static_cast<cudaEvent_t>(m_stagingDone[k]);
        // The previous copy out of this staging buffer must be done before it is overwritten.
        KILN_TRY(checkCuda(cudaEventSynchronize(ev), "staging copy"));
        const size_t n = std::min(bytes - at, m_staging[k].bytes());
        std::memcpy(m_staging[k].data(), from + at, n);
        KILN_TRY(
            checkCuda(cudaMemcpyAsync(to + at, m_staging[k].data(), n, cudaMemcpyHostToDevice, m_copyStream),
                      "copy to the device"));
        KILN_TRY(checkCuda(cudaEventRecord(ev, m_copyStream), "cudaEventRecord"));
        // Compute work enqueued after this call sees the data.
        KILN_TRY(checkCuda(cudaStreamWaitEvent(m_stream, ev, 0), "cudaStreamWaitEvent"));
        at += n;
    }
    return {};
}

}  // namespace kiln::engine::cuda
