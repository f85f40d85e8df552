// SPDX-License-Identifier: Apache-2.0
// Counters and histograms, rendered in the Prometheus text exposition format 0.0.4.
#include "engine/serve/metrics.h"

#include <cstdio>

#include "engine/serve/inflight_budget.h"
#include "engine/serve/model_manager.h"

namespace kiln::engine::serve {

std::string prometheusEscape(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

namespace {
std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
}  // namespace

void Metrics::countRequest(const std::string& model, const std::string& method, const std::string& entrypoint,
                           const std::string& code, double latencyMicros) {
    std::lock_guard lock(m_mutex);
    ++m_requests[{model, method, entrypoint, code}];
    m_latency[{model, method, entrypoint}].observe(kLatencyBucketsMicros, latencyMicros);
}

void Metrics::observeBatch(const std::string& model, int64_t rows) {
    std::lock_guard lock(m_mutex);
    m_batches[model].observe(kBatchBuckets, static_cast<double>(rows));
}

void Metrics::countInflightRefusal(const std::string& entrypoint) {
    std::lock_guard lock(m_mutex);
    ++m_inflightRefusals[entrypoint];
}

std::string Metrics::render(const ModelManager* manager) const {
    std::string out;
    std::lock_guard lock(m_mutex);
    out += "# HELP :tensorflow:serving:request_count The number of requests, by model, method, entry point and status.\n";
    out += "# TYPE :tensorflow:serving:request_count counter\n";
    for (const auto& [key, n] : m_requests) {
        const auto& [model, method, entry, code] = key;
        out += ":tensorflow:serving:request_count{model_name=\"" + prometheusEscape(model) + "\",API=\"" +
               prometheusEscape(method) + "\",entrypoint=\"" + entry + "\",status=\"" + code + "\"} " +
               std::to_string(n) + "\n";
    }
    out += "# HELP :tensorflow:serving:request_latency Request latency in microseconds.\n";
    out += "# TYPE :tensorflow:serving:request_latency histogram\n";
    for (const auto& [key, h] : m_latency) {
        const auto& [model, method, entry] = key;
        const std::string labels = "model_name=\"" + prometheusEscape(model) + "\",API=\"" + prometheusEscape(method) +
                                   "\",entrypoint=\"" + entry + "\"";
        uint64_t cumulative = 0;
        for (size_t i = 0; i < kLatencyBucketsMicros.size(); ++i) {
            cumulative += h.buckets[i];
            out += ":tensorflow:serving:request_latency_bucket{" + labels + ",le=\"" + num(kLatencyBucketsMicros[i]) +
                   "\"} " + std::to_string(cumulative) + "\n";
        }
        out += ":tensorflow:serving:request_latency_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
        out += ":tensorflow:serving:request_latency_sum{" + labels + "} " + num(h.sum) + "\n";
        out += ":tensorflow:serving:request_latency_count{" + labels + "} " + std::to_string(h.count) + "\n";
    }
    out += "# HELP :tensorflow:serving:batching_session:processed_batch_size Rows per merged batch run.\n";
    out += "# TYPE :tensorflow:serving:batching_session:processed_batch_size histogram\n";
    for (const auto& [model, h] : m_batches) {
        const std::string labels = "model_name=\"" + prometheusEscape(model) + "\"";
        uint64_t cumulative = 0;
        for (size_t i = 0; i < kBatchBuckets.size(); ++i) {
            cumulative += h.buckets[i];
            out += ":tensorflow:serving:batching_session:processed_batch_size_bucket{" + labels + ",le=\"" +
                   num(kBatchBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
        }
        out += ":tensorflow:serving:batching_session:processed_batch_size_bucket{" + labels + ",le=\"+Inf\"} " +
               std::to_string(h.count) + "\n";
        out += ":tensorflow:serving:batching_session:processed_batch_size_sum{" + labels + "} " + num(h.sum) + "\n";
        out += ":tensorflow:serving:batching_session:processed_batch_size_count{" + labels + "} " +
               std::to_string(h.count) + "\n";
    }
    out += "# HELP kiln_serve_inflight_rejected_total Requests refused because their tensors would exceed the in-flight cap.\n";
    out += "# TYPE kiln_serve_inflight_rejected_total counter\n";
    for (const char* entry : {"GRPC", "REST"}) {
        const auto it = m_inflightRefusals.find(entry);
        out += std::string("kiln_serve_inflight_rejected_total{entrypoint=\"") + entry + "\"} " +
               std::to_string(it == m_inflightRefusals.end() ? 0 : it->second) + "\n";
    }
    if (m_inflight) {
        out += "# HELP kiln_serve_inflight_bytes Bytes of request and response tensors held by requests in flight.\n";
        out += "# TYPE kiln_serve_inflight_bytes gauge\n";
        out += "kiln_serve_inflight_bytes " + std::to_string(m_inflight->inUseBytes()) + "\n";
        out += "# HELP kiln_serve_inflight_peak_bytes The most bytes held by requests in flight at once since the start.\n";
        out += "# TYPE kiln_serve_inflight_peak_bytes gauge\n";
        out += "kiln_serve_inflight_peak_bytes " + std::to_string(m_inflight->peakBytes()) + "\n";
        out += "# HELP kiln_serve_inflight_cap_bytes The in-flight cap (--max_inflight_bytes); 0: none.\n";
        out += "# TYPE kiln_serve_inflight_cap_bytes gauge\n";
        out += "kiln_serve_inflight_cap_bytes " + std::to_string(m_inflight->capBytes()) + "\n";
    }
    if (manager) {
        out += "# HELP kiln_serve_loaded_versions Model versions loaded and available.\n";
        out += "# TYPE kiln_serve_loaded_versions gauge\n";
        const auto versions = manager->availableVersions();
        for (const auto& [model, list] : versions)
            out += "kiln_serve_loaded_versions{model_name=\"" + prometheusEscape(model) + "\"} " +
                   std::to_string(list.size()) + "\n";
        out += "# HELP kiln_serve_model_version_available 1 for every available model version.\n";
        out += "# TYPE kiln_serve_model_version_available gauge\n";
        for (const auto& [model, list] : versions)
            for (int64_t v : list)
                out += "kiln_serve_model_version_available{model_name=\"" + prometheusEscape(model) + "\",version=\"" +
                       std::to_string(v) + "\"} 1\n";
    }
    return out;
}

}  // namespace kiln::engine::serve
