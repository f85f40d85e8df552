// SPDX-License-Identifier: Apache-2.0
// Server metrics in the Prometheus text format (served at /monitoring/prometheus/metrics):
// request counts by model, method, entry point and status code, request latency and batch-size
// histograms, and the loaded versions of every model.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::engine::serve {

class ModelManager;
class InflightBudget;

class Metrics {
public:
    // The in-flight cap whose bytes in use, peak and cap are exported (may stay null).
    void setInflightBudget(const InflightBudget* budget) { m_inflight = budget; }
    // A request refused by the in-flight cap; `entrypoint` "REST" or "GRPC".
    void countInflightRefusal(const std::string& entrypoint);
    // `code` is the TF status name ("OK", "INVALID_ARGUMENT", ...); `entrypoint` "REST" or "GRPC".
    void countRequest(const std::string& model, const std::string& method, const std::string& entrypoint,
                      const std::string& code, double latencyMicros);
    void observeBatch(const std::string& model, int64_t rows);
    // The whole exposition, including the versions `manager` has loaded (may be null).
    std::string render(const ModelManager* manager) const;

    static constexpr std::array<double, 14> kLatencyBucketsMicros = {
        100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 5000000};
    static constexpr std::array<double, 9> kBatchBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};

private:
    template <size_t N> struct Histogram {
        std::array<uint64_t, N> buckets{};  // cumulative when rendered
        uint64_t count = 0;
        double sum = 0;
        void observe(const std::array<double, N>& bounds, double v) {
            for (size_t i = 0; i < N; ++i)
                if (v <= bounds[i]) { ++buckets[i]; break; }
            ++count;
            sum += v;
        }
    };
    mutable std::mutex m_mutex;
    std::map<std::tuple<std::string, std::string, std::string, std::string>, uint64_t> m_requests;
    std::map<std::tuple<std::string, std::string, std::string>, Histogram<14>> m_latency;
    std::map<std::string, Histogram<9>> m_batches;
    std::map<std::string, uint64_t> m_inflightRefusals;  // by entry point
    const InflightBudget* m_inflight = nullptr;
};

// Escapes a Prometheus label value (backslash, quote, newline).
std::string prometheusEscape(const std::string& v);

}  // namespace kiln::engine::serve
