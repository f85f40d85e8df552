// SPDX-License-Identifier: Apache-2.0
// The TF Serving REST API: path routing, dispatch to the model manager, and JSON errors with TF
// Serving's HTTP codes. Independent of the HTTP library: handle() maps (method, path, body) to a
// response.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/serve/json_tensor.h"
#include "engine/serve/servable.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {

class ModelManager;
class Metrics;
class InflightBudget;

struct RestResponse {
    int status = 200;
    std::string body;
    std::string contentType = "application/json";
};

struct RestOptions {
    int timeoutMs = 30000;
    bool cors = false;
    RequestLimits limits;
    // The server-wide cap on request tensors in flight (shared with gRPC); null: no cap. A
    // request that does not fit gets HTTP 503 at once.
    InflightBudget* inflight = nullptr;
};

class RestApi {
public:
    RestApi(ModelManager& manager, Metrics* metrics, RestOptions options);
    // `origin` is the Origin header (for CORS preflight), empty when absent.
    RestResponse handle(const std::string& method, const std::string& path, std::string_view body,
                        const std::string& origin = {});

    // Answers a started request. `hold` keeps what the request still uses (the model version and
    // its batcher) alive; the callee releases it on a thread of its own, never on the batch thread
    // that called it (the last reference to a version joins that version's batch threads).
    using Reply = std::function<void(RestResponse response, std::shared_ptr<void> hold)>;
    // The path without a waiting thread: a :predict call to a version that batches requests,
    // with a body the one-pass reader takes (predict_reader.h), is read on the calling thread and
    // queued; `reply` is then taken and called once, from the batch thread that ran it, or at
    // once when the request is refused or ran on the calling thread (a lone request, see
    // Batcher::runAsync). Returns false, leaving `reply` untouched, for every other
    // request (malformed bodies included), which handle() then serves.
    bool handleAsync(const std::string& method, const std::string& path, std::string_view body, Reply& reply);

private:
    RestResponse handleGet(const std::string& name, std::optional<int64_t> version,
                           const std::optional<std::string>& label, bool metadata);
    RestResponse handlePost(const std::string& name, std::optional<int64_t> version,
                            const std::optional<std::string>& label, const std::string& verb, std::string_view body);
    // The response to a failed POST, counted in the metrics.
    RestResponse postError(const std::string& name, const std::string& verb, const Error& error,
                           std::chrono::steady_clock::time_point start);
    void countPost(const std::string& name, const std::string& verb, TfCode code, std::chrono::steady_clock::time_point start);

    ModelManager& m_manager;
    Metrics* m_metrics;
    RestOptions m_options;
};

// The model status JSON (GetModelStatusResponse) and metadata JSON (GetModelMetadataResponse).
std::string modelMetadataJson(const Servable& servable);

}  // namespace kiln::engine::serve
