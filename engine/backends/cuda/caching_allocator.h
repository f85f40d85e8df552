// SPDX-License-Identifier: Apache-2.0
// A caching, stream-ordered device allocator: freed blocks go to a free list of the stream they
// were used on and are reused by later allocations on that stream without synchronising (the
// stream orders the reuse after the last use). Sizes are rounded to classes; a cap keeps Kiln
// from taking the whole card unless asked; running out is an Error, never an abort.
// The logic is plain C++ over a RawMemory source, so it is tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/core/error.h"

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace kiln::engine::cuda {

using StreamHandle = CUstream_st*;

// Where blocks come from: cudaMalloc on a device, or host memory in tests.
class RawMemory {
public:
    virtual ~RawMemory() = default;
    virtual void* allocate(size_t bytes) = 0;  // null when the device has no room
    virtual void release(void* p) = 0;
    virtual uint64_t totalBytes() const = 0;
    // Waits for all work on the device (before cached blocks of any stream are handed back).
    virtual void synchronize() {}
};

// How much of the card Kiln may reserve (TensorFlow's memory growth / memory fraction):
//   growth    reserve on demand, up to 95 % of the card (room for the CUDA context; default)
//   fraction  at most this share of the card, e.g. 0.5
//   bytes     at most this many bytes, e.g. "12GiB"
//   all       the whole card
struct MemoryLimit {
    enum class Mode { Growth, Fraction, Bytes, All };
    Mode mode = Mode::Growth;
    double fraction = 0.95;
    uint64_t bytes = 0;

    // "growth", "all", "0.5" (a fraction), "50%", "12GiB", "800MiB", "1000000" (bytes).
    static Result<MemoryLimit> parse(std::string_view text);
    uint64_t capFor(uint64_t totalBytes) const;
    std::string toString() const;
};

struct MemoryStats {
    uint64_t inUse = 0;     // bytes handed out (rounded sizes)
    uint64_t reserved = 0;  // bytes held from the device (in use + cached)
    uint64_t peakInUse = 0;
    uint64_t peakReserved = 0;
    uint64_t allocations = 0;        // allocate() calls that succeeded
    uint64_t cacheHits = 0;          // of those, served from a free list
    uint64_t deviceAllocations = 0;  // RawMemory::allocate calls that succeeded
    uint64_t failures = 0;           // allocate() calls that returned OutOfMemory
    uint64_t cap = 0;
};

class CachingAllocator {
public:
    CachingAllocator(std::unique_ptr<RawMemory> raw, MemoryLimit limit, std::string device);
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    // A block of at least `bytes` (256-byte aligned) for use on `stream`. OutOfMemory with params
    // requested, in_use, reserved, cap, device when neither the cache nor the device has room.
    Result<void*> allocate(size_t bytes, StreamHandle stream);
    // Returns a block to its stream's free list (the stream it was allocated for).
    void free(void* p);
    // Hands every cached block back to the device (synchronises first).
    void emptyCache();
    MemoryStats stats() const;
    void resetPeak();
    const MemoryLimit& limit() const { return m_limit; }

    // Size classes: below 1 MiB, multiples of 512 bytes; from 1 MiB, multiples of 2 MiB.
    static size_t roundSize(size_t bytes);
    static constexpr size_t kSmallLimit = size_t{1} << 20;

private:
    struct Block {
        size_t size;
        StreamHandle stream;
    };
    void* takeCached(size_t size, StreamHandle stream);
    void releaseCachedLocked();

    std::unique_ptr<RawMemory> m_raw;
    MemoryLimit m_limit;
    std::string m_device;
    mutable std::mutex m_mutex;
    std::unordered_map<void*, Block> m_live;
    // Per stream: size -> block, best fit by lower_bound.
    std::map<StreamHandle, std::multimap<size_t, void*>> m_free;
    MemoryStats m_stats;
};

}  // namespace kiln::engine::cuda
