// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 front end of kiln-serve: Boost.Beast on Boost.Asio event loops read and write the
// sockets with bounded request lines, headers and bodies, per-request deadlines and keep-alive
// limits; the REST API and metrics run on a bounded worker pool that answers 503 when full.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/serve/rest_api.h"

namespace kiln::engine::serve {

class Metrics;
class ModelManager;

struct HttpOptions {
    std::string bindAddress = "127.0.0.1";
    int port = 8501;                      // 0: pick a free port
    int threads = 4;                      // workers running the handler (JSON, model compute)
    int ioThreads = 1;                    // event loops doing all socket I/O and HTTP parsing
    size_t maxQueuedRequests = 256;       // requests waiting for a worker; one more gets 503 at once
    size_t maxBodyBytes = 64u << 20;      // larger bodies (Content-Length or chunked) get 413
    size_t maxRequestLineBytes = 8192;    // longer request lines get 414
    size_t maxHeaderBytes = 32768;        // request line plus header fields; more gets 431
    int maxHeaderCount = 100;             // more header fields get 431
    int maxConnections = 1024;            // open connections; further ones get 503 and are closed
    int keepAliveMaxRequests = 10000;     // requests on one connection before it is closed
    int timeoutMs = 30000;                // a whole request must arrive within this (else 408), and a response be written
    int idleTimeoutMs = 60000;            // a connection waiting for its next request is closed after this
    std::string metricsPath = "/monitoring/prometheus/metrics";
    bool cors = false;
};

// One request as the handler sees it: the method, the path without its query and with
// %-escapes decoded, the body and the Origin header (empty when absent).
struct HttpRequest {
    std::string method;
    std::string path;
    std::string body;
    std::string origin;
};

using HttpHandler = std::function<RestResponse(const HttpRequest&)>;

class HttpServer {
public:
    // Serves `api` under /v1/ and the Prometheus text of `metrics` at options.metricsPath.
    HttpServer(RestApi& api, Metrics* metrics, const ModelManager* manager, HttpOptions options);
    // Serves every request with `handler`, which runs on the worker pool.
    HttpServer(HttpHandler handler, HttpOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds and starts serving on its threads; returns the bound port.
    Result<int> start();
    // Closes the listening socket and every connection; requests still queued are dropped,
    // running ones finish first.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace kiln::engine::serve
