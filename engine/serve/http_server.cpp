// SPDX-License-Identifier: Apache-2.0
// cpp-httplib wiring: every request goes through one pre-routing handler into RestApi.
#include "engine/serve/http_server.h"

#include <httplib.h>

#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {

HttpServer::HttpServer(RestApi& api, Metrics* metrics, const ModelManager* manager, HttpOptions options)
    : m_api(api), m_metrics(metrics), m_manager(manager), m_options(std::move(options)) {}

HttpServer::~HttpServer() { stop(); }

Result<int> HttpServer::start() {
    m_server = std::make_unique<httplib::Server>();
    auto& s = *m_server;
    const int threads = std::max(1, m_options.threads);
    s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    s.set_payload_max_length(m_options.maxBodyBytes);
    const auto timeout = std::chrono::milliseconds(std::max(1, m_options.timeoutMs));
    s.set_read_timeout(timeout);
    s.set_write_timeout(timeout);
    s.set_tcp_nodelay(true);
    // Clients such as load balancers keep connections open: do not force a reconnect every few requests.
    s.set_keep_alive_max_count(10000);
    // Every method goes to one handler (the body is read by then, unlike in a pre-routing hook).
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
        if (req.method == "GET" && req.path == m_options.metricsPath && m_metrics) {
            res.set_content(m_metrics->render(m_manager), "text/plain; version=0.0.4");
            return;
        }
        const RestResponse r = m_api.handle(req.method, req.path, req.body, req.get_header_value("Origin"));
        res.status = r.status;
        res.set_content(r.body, r.contentType.c_str());
        if (m_options.cors) {
            res.set_header("Access-Control-Allow-Origin", "*");
            res.set_header("Access-Control-Allow-Methods", "POST, GET");
            res.set_header("Access-Control-Allow-Headers", "Content-Type");
        }
    };
    s.Get(".*", handler);
    s.Post(".*", handler);
    s.Put(".*", handler);
    s.Patch(".*", handler);
    s.Delete(".*", handler);
    s.Options(".*", handler);
    // Errors httplib produces itself (413 body too large, 400 bad request line, ...) get the
    // TF Serving JSON body.
    s.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return;
        std::string message = "HTTP error " + std::to_string(res.status);
        if (res.status == 413)
            message = "The request body is larger than the limit of " + std::to_string(m_options.maxBodyBytes) + " bytes";
        else if (res.status == 404)
            message = "Not found";
        else if (res.status == 400)
            message = "Malformed HTTP request";
        res.set_content(errorBody(message), "application/json");
    });
    int port = m_options.port;
    if (port == 0) {
        port = s.bind_to_any_port(m_options.bindAddress);
        if (port < 0) return Error(ErrorCode::InvalidArgument, "cannot bind the REST API to " + m_options.bindAddress);
    } else if (!s.bind_to_port(m_options.bindAddress, port)) {
        Error e(ErrorCode::InvalidArgument, "cannot bind the REST API to " + m_options.bindAddress + ":" +
                                                std::to_string(port) + " (in use, or not an address of this machine)");
        return std::move(e.with("address", m_options.bindAddress).with("port", std::to_string(port)));
    }
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
    return port;
}

void HttpServer::stop() {
    if (m_server) m_server->stop();
    if (m_thread.joinable()) m_thread.join();
}

}  // namespace kiln::engine::serve
