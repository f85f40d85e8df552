// SPDX-License-Identifier: Apache-2.0
// Aligned allocation with counters. The size is kept in a 64-byte header before the block.
#include "engine/core/allocator.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace kiln::engine {
namespace {
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_peak{0};
}  // namespace

void* alignedAlloc(size_t bytes) {
    if (bytes == 0) bytes = 1;
    size_t total = ((bytes + kTensorAlignment - 1) / kTensorAlignment + 1) * kTensorAlignment;
    void* raw = std::aligned_alloc(kTensorAlignment, total);
    if (!raw) throw std::bad_alloc();
    *static_cast<size_t*>(raw) = bytes;
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    uint64_t live = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    uint64_t peak = g_peak.load(std::memory_order_relaxed);
    while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {}
    return static_cast<std::byte*>(raw) + kTensorAlignment;
}

void alignedFree(void* p) {
    if (!p) return;
    void* raw = static_cast<std::byte*>(p) - kTensorAlignment;
    g_live.fetch_sub(*static_cast<size_t*>(raw), std::memory_order_relaxed);
    std::free(raw);
}

AllocStats allocStats() {
    return {g_allocations.load(), g_live.load(), g_peak.load()};
}

}  // namespace kiln::engine
