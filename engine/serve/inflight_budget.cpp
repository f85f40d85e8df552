// SPDX-License-Identifier: Apache-2.0
// Lock-free accounting of the bytes leased by requests in flight.
#include "engine/serve/inflight_budget.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <string>

#include "engine/serve/status.h"

namespace kiln::engine::serve {

InflightLease::InflightLease(InflightLease&& other) noexcept : m_budget(other.m_budget), m_bytes(other.m_bytes) {
    other.m_budget = nullptr;
    other.m_bytes = 0;
}

InflightLease& InflightLease::operator=(InflightLease&& other) noexcept {
    if (this != &other) {
        release();
        m_budget = other.m_budget;
        m_bytes = other.m_bytes;
        other.m_budget = nullptr;
        other.m_bytes = 0;
    }
    return *this;
}

InflightLease::~InflightLease() { release(); }

void InflightLease::release() {
    if (m_budget) m_budget->m_inUse.fetch_sub(m_bytes);
    m_budget = nullptr;
    m_bytes = 0;
}

Result<InflightLease> InflightBudget::acquire(uint64_t bytes) {
    uint64_t used = m_inUse.load();
    for (;;) {
        if (m_cap > 0 && (bytes > m_cap || used > m_cap - bytes)) {
            m_rejected.fetch_add(1);
            const std::string message =
                bytes > m_cap ? "this request needs " + std::to_string(bytes) + " bytes of tensors, more than the server's in-flight cap of " +
                                    std::to_string(m_cap) + " bytes (--max_inflight_bytes); send fewer rows per request"
                              : "the server is at its in-flight memory cap: this request needs " + std::to_string(bytes) + " bytes of tensors, " +
                                    std::to_string(used) + " of " + std::to_string(m_cap) + " bytes are held by requests in flight; retry later";
            Error e = serveError(TfCode::ResourceExhausted, message);
            e.with("bytes", std::to_string(bytes)).with("in_use", std::to_string(used)).with("cap", std::to_string(m_cap));
            e.with("inflight_cap", "1");
            return e;
        }
        if (m_inUse.compare_exchange_weak(used, used + bytes)) break;
    }
    uint64_t peak = m_peak.load();
    while (used + bytes > peak && !m_peak.compare_exchange_weak(peak, used + bytes)) {
    }
    return InflightLease(this, bytes);
}

uint64_t requestTensorBytes(const ModelSignature& sig, int64_t batch) {
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    uint64_t perRow = 0;
    for (const auto* list : {&sig.inputs, &sig.outputs})
        for (const auto& s : *list) perRow += static_cast<uint64_t>(std::max<int64_t>(s.itemSize(), 0)) * sizeof(float);
    const auto rows = static_cast<uint64_t>(std::max<int64_t>(batch, 0));
    if (perRow > 0 && rows > kMax / perRow) return kMax;
    return rows * perRow;
}

uint64_t defaultInflightCap() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    constexpr uint64_t kFloor = uint64_t(256) << 20;
    if (pages <= 0 || pageSize <= 0) return kFloor;
    return std::max(kFloor, static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) / 4);
}

bool isInflightRefusal(const Error& e) { return e.param("inflight_cap") == "1"; }

}  // namespace kiln::engine::serve
