// SPDX-License-Identifier: Apache-2.0
// One CUDA device as Kiln uses it: a compute stream and a copy stream, the caching allocator
// under a memory limit, cuBLAS/cuBLASLt/cuDNN handles with their workspaces, pinned staging
// buffers for host-to-device copies that overlap compute. No CUDA headers here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/backends/cuda/caching_allocator.h"
#include "engine/core/error.h"

namespace kiln::engine::cuda {

// Turns a CUDA runtime status (an int here, cudaError_t inside) into an Error naming the call.
Status checkCuda(int status, const char* what);

// A device block from a context's allocator, returned to it on destruction.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(CachingAllocator* a, void* p, size_t bytes) : m_alloc(a), m_ptr(p), m_bytes(bytes) {}
    DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    ~DeviceBuffer();
    void* get() const { return m_ptr; }
    template <typename T>
    T* as() const {
        return static_cast<T*>(m_ptr);
    }
    size_t bytes() const { return m_bytes; }

private:
    CachingAllocator* m_alloc = nullptr;
    void* m_ptr = nullptr;
    size_t m_bytes = 0;
};

// Page-locked host memory (cudaHostAlloc), so copies run asynchronously at full PCIe speed.
class PinnedBuffer {
public:
    static Result<PinnedBuffer> create(size_t bytes);
    PinnedBuffer() = default;
    PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
    ~PinnedBuffer();
    void* data() const { return m_ptr; }
    size_t bytes() const { return m_bytes; }

private:
    void* m_ptr = nullptr;
    size_t m_bytes = 0;
};

class DeviceContext {
public:
    // Selects the device, creates streams and library handles; DeviceUnavailable without a GPU.
    static Result<std::unique_ptr<DeviceContext>> create(int device, MemoryLimit limit = {});
    ~DeviceContext();

    int device() const { return m_device; }
    std::string name() const { return "cuda:" + std::to_string(m_device); }
    StreamHandle stream() const { return m_stream; }
    StreamHandle copyStream() const { return m_copyStream; }
    CachingAllocator& allocator() { return *m_allocator; }
    void* cublasLt() const { return m_cublasLt; }  // cublasLtHandle_t
    void* cudnn() const { return m_cudnn; }        // cudnnHandle_t
    void* blasWorkspace() const { return m_blasWorkspace.get(); }
    size_t blasWorkspaceBytes() const { return m_blasWorkspace.bytes(); }
    // cuDNN convolution workspace, grown on demand up to kMaxConvWorkspace.
    Result<void*> convWorkspace(size_t bytes);
    static constexpr size_t kMaxConvWorkspace = size_t{256} << 20;

    Result<DeviceBuffer> alloc(size_t bytes);  // on the compute stream
    Status synchronize();
    Status upload(void* dst, const void* src, size_t bytes);    // on the compute stream (pageable source)
    Status download(void* dst, const void* src, size_t bytes);  // waits for the compute stream
    Status memsetAsync(void* dst, int value, size_t bytes);

    // Host -> device through two pinned staging buffers on the copy stream: the CPU fills one while
    // the other is in flight; the compute stream waits (on an event) only for the copy it needs.
    Status stagedUpload(void* dst, const void* src, size_t bytes);

private:
    DeviceContext() = default;
    int m_device = 0;
    StreamHandle m_stream = nullptr;
    StreamHandle m_copyStream = nullptr;
    std::unique_ptr<CachingAllocator> m_allocator;
    void* m_cublasLt = nullptr;
    void* m_cudnn = nullptr;
    DeviceBuffer m_blasWorkspace;
    DeviceBuffer m_convWorkspace;
    PinnedBuffer m_staging[2];
    void* m_stagingDone[2] = {nullptr, nullptr};  // cudaEvent_t: the copy out of staging k finished
    int m_nextStaging = 0;
};

}  // namespace kiln::engine::cuda
