// SPDX-License-Identifier: Apache-2.0
// The HTTP front end: cpp-httplib on a bound address and port with a worker pool, a request body
// limit (413), read/write timeouts, the REST API under /v1/ and Prometheus metrics.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "engine/core/error.h"

namespace httplib {
class Server;
}

namespace kiln::engine::serve {

class RestApi;
class Metrics;
class ModelManager;

struct HttpOptions {
    std::string bindAddress = "127.0.0.1";
    int port = 8501;                    // 0: pick a free port
    int threads = 4;
    size_t maxBodyBytes = 64u << 20;    // larger bodies get 413
    int timeoutMs = 30000;              // socket read/write timeout
    std::string metricsPath = "/monitoring/prometheus/metrics";
    bool cors = false;
};

class HttpServer {
public:
    HttpServer(RestApi& api, Metrics* metrics, const ModelManager* manager, HttpOptions options);
    ~HttpServer();
    // Binds and starts serving on a thread; returns the bound port.
    Result<int> start();
    void stop();

private:
    RestApi& m_api;
    Metrics* m_metrics;
    const ModelManager* m_manager;
    HttpOptions m_options;
    std::unique_ptr<httplib::Server> m_server;
    std::thread m_thread;
};

}  // namespace kiln::engine::serve
