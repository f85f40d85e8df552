// SPDX-License-Identifier: Apache-2.0
// The server-wide cap on request tensors in flight: every predict / classify / regress call leases
// the bytes of its decoded input tensors plus its output tensors before any of them is allocated,
// and gives them back when it ends. A lease that does not fit is refused at once (never queued).
#pragma once

#include <atomic>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/serve/servable.h"

namespace kiln::engine::serve {

class InflightBudget;

// Bytes held for one request; returned to the budget when the lease is destroyed.
class InflightLease {
public:
    InflightLease() = default;
    InflightLease(InflightLease&& other) noexcept;
    InflightLease& operator=(InflightLease&& other) noexcept;
    InflightLease(const InflightLease&) = delete;
    InflightLease& operator=(const InflightLease&) = delete;
    ~InflightLease();
    uint64_t bytes() const { return m_bytes; }

private:
    friend class InflightBudget;
    InflightLease(InflightBudget* budget, uint64_t bytes) : m_budget(budget), m_bytes(bytes) {}
    void release();
    InflightBudget* m_budget = nullptr;
    uint64_t m_bytes = 0;
};

class InflightBudget {
public:
    // capBytes 0: no cap (leases are still counted, for the metrics).
    explicit InflightBudget(uint64_t capBytes) : m_cap(capBytes) {}
    InflightBudget(const InflightBudget&) = delete;
    InflightBudget& operator=(const InflightBudget&) = delete;

    // Leases `bytes`, or fails at once with RESOURCE_EXHAUSTED (parameters "bytes", "in_use",
    // "cap") when they do not fit beside the leases already held.
    Result<InflightLease> acquire(uint64_t bytes);

    uint64_t capBytes() const { return m_cap; }
    uint64_t inUseBytes() const { return m_inUse.load(); }
    uint64_t peakBytes() const { return m_peak.load(); }
    uint64_t rejected() const { return m_rejected.load(); }

private:
    friend class InflightLease;
    const uint64_t m_cap;
    std::atomic<uint64_t> m_inUse{0};
    std::atomic<uint64_t> m_peak{0};
    std::atomic<uint64_t> m_rejected{0};
};

// The bytes a request of `batch` rows holds for `sig`: its float32 input tensors plus its output
// tensors (saturating, so a hostile batch cannot wrap around).
uint64_t requestTensorBytes(const ModelSignature& sig, int64_t batch);

// The default cap: a quarter of this machine's physical memory, at least 256 MiB.
uint64_t defaultInflightCap();

// Whether `e` is a refusal from InflightBudget::acquire (HTTP answers it with 503).
bool isInflightRefusal(const Error& e);

}  // namespace kiln::engine::serve
