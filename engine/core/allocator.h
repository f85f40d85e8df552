// SPDX-License-Identifier: Apache-2.0
// 64-byte aligned host memory with process-wide counters, so tests can prove that a training
// step allocates nothing after the first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kiln::engine {

constexpr size_t kTensorAlignment = 64;

void* alignedAlloc(size_t bytes);  // never returns null for bytes > 0; throws std::bad_alloc
void alignedFree(void* p);

struct AllocStats {
    uint64_t allocations = 0;  // number of alignedAlloc calls so far
    uint64_t liveBytes = 0;
    uint64_t peakBytes = 0;
};
AllocStats allocStats();

struct AlignedDeleter {
    void operator()(void* p) const { alignedFree(p); }
};

// A raw aligned buffer of floats/bytes owned uniquely.
using AlignedBuffer = std::unique_ptr<std::byte[], AlignedDeleter>;
inline AlignedBuffer makeAlignedBuffer(size_t bytes) {
    return AlignedBuffer(static_cast<std::byte*>(alignedAlloc(bytes)));
}

}  // namespace kiln::engine
