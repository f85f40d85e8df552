// SPDX-License-Identifier: Apache-2.0
// Caching allocator: size classes, per-stream best-fit free lists, a cap, statistics.
#include "engine/backends/cuda/caching_allocator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace kiln::engine::cuda {
namespace {

std::string gib(uint64_t b) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(1ull << 30));
    return buf;
}

}  // namespace

Result<MemoryLimit> MemoryLimit::parse(std::string_view text) {
    std::string t;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c)))
            t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto bad = [&] {
        return Error(ErrorCode::ConfigError,
                     "memory limit \"" + std::string(text) +
                         "\" is not growth, all, a fraction (0.5, 50%) or a size (12GiB)")
            .with("field", "device.memory")
            .with("reason", "must be growth, all, a fraction or a size");
    };
    MemoryLimit l;
    if (t == "growth" || t.empty()) return l;
    if (t == "all") {
        l.mode = Mode::All;
        return l;
    }
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(t, &used);
    } catch (...) {
        return bad();
    }
    std::string unit = t.substr(used);
    if (!(v > 0) || !std::isfinite(v)) return bad();
    if (unit == "%") {
        if (v > 100) return bad();
        l.mode = Mode::Fraction;
        l.fraction = v / 100.0;
        return l;
    }
    if (unit.empty() && v <= 1.0) {
        l.mode = Mode::Fraction;
        l.fraction = v;
        return l;
    }
    double mult = 1;
    if (unit.empty() || unit == "b")
        mult = 1;
    else if (unit == "k" || unit == "kib" || unit == "kb")
        mult = 1024.0;
    else if (unit == "m" || unit == "mib" || unit == "mb")
        mult = 1024.0 * 1024;
    else if (unit == "g" || unit == "gib" || unit == "gb")
        mult = 1024.0 * 1024 * 1024;
    else
        return bad();
    l.mode = Mode::Bytes;
    l.bytes = static_cast<uint64_t>(v * mult);
    return l;
}

uint64_t MemoryLimit::capFor(uint64_t total) const {
    switch (mode) {
    case Mode::Growth:
        return static_cast<uint64_t>(double(total) * 0.95);
    case Mode::Fraction:
        return static_cast<uint64_t>(double(total) * fraction);
    case Mode::Bytes:
        return std::min(bytes, total);
    case Mode::All:
        return total;
    }
    return total;
}

std::string MemoryLimit::toString() const {
    switch (mode) {
    case Mode::Growth:
        return "growth";
    case Mode::All:
        return "all";
    case Mode::Fraction:
        return std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
    case Mode::Bytes:
        return gib(bytes);
    }
    return "growth";
}

CachingAllocator::CachingAllocator(std::unique_ptr<RawMemory> raw, MemoryLimit limit, std::string device)
    : m_raw(std::move(raw)), m_limit(limit), m_device(std::move(device)) {
    m_stats.cap = m_limit.capFor(m_raw->totalBytes());
}

CachingAllocator::~CachingAllocator() {
    emptyCache();
    // Blocks still handed out belong to owners that outlive the allocator only by mistake;
    // give them back so the device memory is not lost.
    for (auto& [p, b] : m_live) m_raw->release(p);
}

size_t CachingAllocator::roundSize(size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (bytes < kSmallLimit) return (bytes + 511) / 512 * 512;
    constexpr size_t kLarge = size_t{2} << 20;
    return (bytes + kLarge - 1) / kLarge * kLarge;
}

void* CachingAllocator::takeCached(size_t size, StreamHandle stream) {
    auto it = m_free.find(stream);
    if (it == m_free.end()) return nullptr;
    auto& list = it->second;
    auto b = list.lower_bound(size);
    if (b == list.end()) return nullptr;
    // Do not spend a much larger block on a small request: small blocks at most double, large
    // ones at most 1.5 times the size.
    const size_t slack = size < kSmallLimit ? size : size / 2;
    if (b->first > size + slack) return nullptr;
    void* p = b->second;
    m_live[p] = {b->first, stream};
    m_stats.inUse += b->first;
    list.erase(b);
    return p;
}

Result<void*> CachingAllocator::allocate(size_t bytes, StreamHandle stream) {
    std::lock_guard lock(m_mutex);
    const size_t size = roundSize(bytes);
    auto done = [&](void* p) -> Result<void*> {
        ++m_stats.allocations;
        m_stats.peakInUse = std::max(m_stats.peakInUse, m_stats.inUse);
        m_stats.peakReserved = std::max(m_stats.peakReserved, m_stats.reserved);
        return p;
    };
    if (void* p = takeCached(size, stream)) {
        ++m_stats.cacheHits;
        return done(p);
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (m_stats.reserved + size <= m_stats.cap) {
            if (void* p = m_raw->allocate(size)) {
                m_live[p] = {size, stream};
                m_stats.inUse += size;
                m_stats.reserved += size;
                ++m_stats.deviceAllocations;
                return done(p);
            }
        }
        if (attempt == 0) releaseCachedLocked();  // then try once more with an empty cache
    }
    ++m_stats.failures;
    return Error(ErrorCode::OutOfMemory, "cannot allocate " + gib(size) + " on " + m_device + ": " +
                                             gib(m_stats.inUse) + " in use, " + gib(m_stats.reserved) +
                                             " reserved, limit " + gib(m_stats.cap) + " (" +
                                             m_limit.toString() + ")")
        .with("bytes", std::to_string(size))
        .with("requested", std::to_string(size))
        .with("in_use", std::to_string(m_stats.inUse))
        .with("reserved", std::to_string(m_stats.reserved))
        .with("cap", std::to_string(m_stats.cap))
        .with("device", m_device);
}

void CachingAllocator::free(void* p) {
    if (!p) return;
    std::lock_guard lock(m_mutex);
    auto it = m_live.find(p);
    if (it == m_live.end()) return;  // not ours: ignored rather than corrupting the lists
    m_stats.inUse -= it->second.size;
    m_free[it->second.stream].emplace(it->second.size, p);
    m_live.erase(it);
}

void CachingAllocator::releaseCachedLocked() {
    bool any = false;
    for (auto& [s, list] : m_free) any = any || !list.empty();
    if (!any) return;
    m_raw->synchronize();
    for (auto& [s, list] : m_free) {
        for (auto& [size, p] : list) {
            m_raw->release(p);
            m_stats.reserved -= size;
        }
        list.clear();
    }
}

void CachingAllocator::emptyCache() {
    std::lock_guard lock(m_mutex);
    releaseCachedLocked();
}

MemoryStats CachingAllocator::stats() const {
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void CachingAllocator::resetPeak() {
    std::lock_guard lock(m_mutex);
    m_stats.peakInUse = m_stats.inUse;
    m_stats.peakReserved = m_stats.reserved;
}

}  // namespace kiln::engine::cuda
