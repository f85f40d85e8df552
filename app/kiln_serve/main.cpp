// SPDX-License-Identifier: Apache-2.0
// kiln-serve: a model server compatible with TensorFlow Serving's REST and gRPC APIs, serving
// Kiln model repositories (<base>/<name>/<version>/) with hot reload and optional batching.
#include <signal.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QLocale>
#include <QTranslator>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "app/common/cli.h"
#include "app/common/error_text.h"
#include "app/kiln_serve/grpc_service.h"
#include "engine/core/thread_pool.h"
#include "engine/serve/http_server.h"
#include "engine/serve/inflight_budget.h"
#include "engine/serve/metrics.h"
#include "engine/serve/model_config.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/rest_api.h"

namespace {
using namespace kiln;
using namespace kiln::engine;

class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

using app::printErr;
using app::printOut;


struct Flag {
    const char* name;
    const char* value;  // default, or nullptr for a boolean flag
    const char* help;
};

// TF Serving's flag names. The help text is translated when printed.
const Flag kFlags[] = {
    {"port", "8500", QT_TRANSLATE_NOOP("Cli", "gRPC port (0 disables gRPC).")},
    {"grpc_bind_address", "127.0.0.1", QT_TRANSLATE_NOOP("Cli", "Address the gRPC API listens on.")},
    {"rest_api_port", "0", QT_TRANSLATE_NOOP("Cli", "HTTP/REST port (0 disables REST); must differ from --port.")},
    {"rest_api_bind_address", "127.0.0.1", QT_TRANSLATE_NOOP("Cli", "Address the REST API listens on (0.0.0.0 exposes it to the network).")},
    {"rest_api_num_threads", "0", QT_TRANSLATE_NOOP("Cli", "REST worker threads (0: 4 per processor).")},
    {"rest_api_timeout_in_ms", "30000", QT_TRANSLATE_NOOP("Cli", "Timeout for REST requests, and the time one whole request may take to arrive (slower clients get HTTP 408), in milliseconds.")},
    {"rest_api_max_body_bytes", "67108864", QT_TRANSLATE_NOOP("Cli", "Largest accepted request body; larger ones get HTTP 413.")},
    {"rest_api_io_threads", "1", QT_TRANSLATE_NOOP("Cli", "Threads doing the REST API's network I/O and HTTP parsing (the workers run the models).")},
    {"rest_api_max_queued_requests", "256", QT_TRANSLATE_NOOP("Cli", "REST requests that may wait for a free worker; beyond that they get HTTP 503 at once.")},
    {"rest_api_max_connections", "1024", QT_TRANSLATE_NOOP("Cli", "Open REST connections; further ones get HTTP 503 and are closed.")},
    {"rest_api_max_request_line_bytes", "8192", QT_TRANSLATE_NOOP("Cli", "Longest request line (method, path, version); longer ones get HTTP 414.")},
    {"rest_api_max_header_bytes", "32768", QT_TRANSLATE_NOOP("Cli", "Largest request line plus header fields, in bytes; larger ones get HTTP 431.")},
    {"rest_api_max_header_count", "100", QT_TRANSLATE_NOOP("Cli", "Most header fields in one request; more get HTTP 431.")},
    {"rest_api_keepalive_max_requests", "10000", QT_TRANSLATE_NOOP("Cli", "Requests served on one keep-alive connection before the server closes it.")},
    {"rest_api_idle_timeout_in_ms", "60000", QT_TRANSLATE_NOOP("Cli", "A keep-alive connection without a new request is closed after this many milliseconds.")},
    {"max_request_elements", "16777216", QT_TRANSLATE_NOOP("Cli", "Most input values one request may carry (REST and gRPC), checked before anything is allocated.")},
    {"max_image_pixels", "16777216", QT_TRANSLATE_NOOP("Cli", "Largest {\"b64\": ...} image, in pixels (width x height, read from its header).")},
    {"max_inflight_bytes", "0", QT_TRANSLATE_NOOP("Cli", "Most bytes of request and response tensors all requests in flight may hold at once (REST and gRPC); a request that does not fit gets HTTP 503 or RESOURCE_EXHAUSTED at once (0: a quarter of this machine's memory, at least 256 MiB).")},
    {"grpc_max_receive_message_bytes", "67108864", QT_TRANSLATE_NOOP("Cli", "Largest accepted gRPC message; larger ones get RESOURCE_EXHAUSTED.")},
    {"rest_api_enable_cors_support", nullptr, QT_TRANSLATE_NOOP("Cli", "Send CORS headers with every REST response.")},
    {"model_name", "default", QT_TRANSLATE_NOOP("Cli", "Model name (ignored with --model_config_file).")},
    {"model_base_path", "", QT_TRANSLATE_NOOP("Cli", "Folder holding the model's numeric version folders.")},
    {"model_config_file", "", QT_TRANSLATE_NOOP("Cli", "ModelServerConfig in protobuf text format (several models, policies, labels).")},
    {"file_system_poll_wait_seconds", "1", QT_TRANSLATE_NOOP("Cli", "Seconds between scans for new versions (0: scan once).")},
    {"max_num_load_retries", "5", QT_TRANSLATE_NOOP("Cli", "How often a failed version load is retried while its files stay the same.")},
    {"file_system_stable_ms", "2000", QT_TRANSLATE_NOOP("Cli", "A version without a file manifest loads once its files were unchanged this long.")},
    {"enable_batching", nullptr, QT_TRANSLATE_NOOP("Cli", "Merge concurrent requests into batches.")},
    {"batching_parameters_file", "", QT_TRANSLATE_NOOP("Cli", "BatchingParameters in protobuf text format.")},
    {"num_inference_threads", "0", QT_TRANSLATE_NOOP("Cli", "Threads for running models (0: KILN_NUM_THREADS or all processors).")},
    {"plugin", "", QT_TRANSLATE_NOOP("Cli", "Plugin libraries or folders to load (':'-separated), besides the user's plugin folder and KILN_PLUGIN_PATH.")},
};

struct Options {
    std::map<std::string, std::string> values;
    std::string get(const std::string& name) const { return values.at(name); }
    bool flag(const std::string& name) const { return values.at(name) == "true"; }
};

std::optional<Options> parseArgs(const QStringList& args, int& exitCode) {
    Options o;
    for (const auto& f : kFlags) o.values[f.name] = f.value ? f.value : "false";
    for (int i = 1; i < args.size(); ++i) {
        std::string a = args[i].toStdString();
        if (a == "--help" || a == "-h") {
            std::printf("%s\n\n", Cli::tr("Usage: kiln-serve [flags]\nServes Kiln models over TensorFlow Serving's REST and gRPC APIs.").toLocal8Bit().constData());
            for (const auto& f : kFlags)
                std::printf("  --%-32s %s%s\n", f.name, QCoreApplication::translate("Cli", f.help).toLocal8Bit().constData(),
                            f.value && *f.value ? (" [" + std::string(f.value) + "]").c_str() : "");
            exitCode = 0;
            return std::nullopt;
        }
        if (a == "--version") {
            std::printf("kiln-serve %s\n", KILN_VERSION);
            exitCode = 0;
            return std::nullopt;
        }
        if (a.rfind("--", 0) != 0 && !(a.size() > 1 && a[0] == '-')) {
            printErr(Cli::tr("kiln-serve: unexpected argument \"%1\"").arg(QString::fromStdString(a)));
            exitCode = 2;
            return std::nullopt;
        }
        a = a.substr(a[1] == '-' ? 2 : 1);
        std::string name = a, value;
        bool hasValue = false;
        if (auto eq = a.find('='); eq != std::string::npos) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
            hasValue = true;
        }
        // --max-inflight-bytes is --max_inflight_bytes: dashes in a flag name read as underscores.
        std::replace(name.begin(), name.end(), '-', '_');
        const Flag* def = nullptr;
        for (const auto& f : kFlags)
            if (name == f.name) def = &f;
        if (!def) {
            printErr(Cli::tr("kiln-serve: unknown flag --%1 (see --help)").arg(QString::fromStdString(name)));
            exitCode = 2;
            return std::nullopt;
        }
        if (!def->value) {
            if (!hasValue) value = "true";
            if (value == "1") value = "true";
            if (value == "0") value = "false";
            if (value != "true" && value != "false") {
                printErr(Cli::tr("kiln-serve: --%1 takes true or false, not \"%2\"").arg(QString::fromStdString(name), QString::fromStdString(value)));
                exitCode = 2;
                return std::nullopt;
            }
        } else if (!hasValue) {
            if (i + 1 >= args.size()) {
                printErr(Cli::tr("kiln-serve: --%1 needs a value").arg(QString::fromStdString(name)));
                exitCode = 2;
                return std::nullopt;
            }
            value = args[++i].toStdString();
        }
        o.values[name] = value;
    }
    return o;
}

std::optional<int64_t> intFlag(const Options& o, const char* name, int64_t min, int64_t max) {
    const std::string v = o.get(name);
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || n < min || n > max) {
        printErr(Cli::tr("kiln-serve: --%1 must be an integer from %2 to %3, not \"%4\"")
                     .arg(QString::fromLatin1(name)).arg(min).arg(max).arg(QString::fromStdString(v)));
        return std::nullopt;
    }
    return n;
}

int fail(const Error& e) {
    return app::reportError(QStringLiteral("kiln-serve"), e);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kiln-serve"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    const auto translator = app::installTranslations();

    int exitCode = 0;
    auto parsed = parseArgs(QCoreApplication::arguments(), exitCode);
    if (!parsed) return exitCode;
    const Options& o = *parsed;
    {
        const QString plugins = QString::fromStdString(o.get("plugin"));
        if (int rc = app::loadPlugins(QStringLiteral("kiln-serve"), plugins.split(QLatin1Char(':'), Qt::SkipEmptyParts)); rc != 0)
            return rc;
    }

    const auto grpcPort = intFlag(o, "port", 0, 65535);
    const auto restPort = intFlag(o, "rest_api_port", 0, 65535);
    const auto restThreads = intFlag(o, "rest_api_num_threads", 0, 1024);
    const auto timeoutMs = intFlag(o, "rest_api_timeout_in_ms", 1, 86'400'000);
    const auto maxBody = intFlag(o, "rest_api_max_body_bytes", 1024, int64_t(1) << 40);
    const auto poll = intFlag(o, "file_system_poll_wait_seconds", -1, 86400);
    const auto retries = intFlag(o, "max_num_load_retries", 0, 1000);
    const auto inferenceThreads = intFlag(o, "num_inference_threads", 0, 1024);
    const auto maxElements = intFlag(o, "max_request_elements", 1, int64_t(1) << 40);
    const auto maxPixels = intFlag(o, "max_image_pixels", 1, int64_t(1) << 40);
    const auto grpcMaxReceive = intFlag(o, "grpc_max_receive_message_bytes", 1024, INT32_MAX);
    const auto stableMs = intFlag(o, "file_system_stable_ms", 0, 86'400'000);
    const auto ioThreads = intFlag(o, "rest_api_io_threads", 1, 64);
    const auto maxQueued = intFlag(o, "rest_api_max_queued_requests", 0, 1'000'000);
    const auto maxConnections = intFlag(o, "rest_api_max_connections", 1, 1'000'000);
    const auto maxRequestLine = intFlag(o, "rest_api_max_request_line_bytes", 64, 1 << 20);
    const auto maxHeaderBytes = intFlag(o, "rest_api_max_header_bytes", 256, 1 << 24);
    const auto maxHeaderCount = intFlag(o, "rest_api_max_header_count", 1, 10000);
    const auto keepAliveMax = intFlag(o, "rest_api_keepalive_max_requests", 1, INT32_MAX);
    const auto idleMs = intFlag(o, "rest_api_idle_timeout_in_ms", 1, 86'400'000);
    const auto maxInflight = intFlag(o, "max_inflight_bytes", 0, int64_t(1) << 50);
    if (!maxInflight) return 2;
    if (!grpcPort || !restPort || !restThreads || !timeoutMs || !maxBody || !poll || !retries || !inferenceThreads || !maxElements ||
        !maxPixels || !grpcMaxReceive || !stableMs || !ioThreads || !maxQueued || !maxConnections || !maxRequestLine ||
        !maxHeaderBytes || !maxHeaderCount || !keepAliveMax || !idleMs)
        return 2;
    serve::RequestLimits limits;
    limits.maxElements = *maxElements;
    limits.maxImagePixels = *maxPixels;
    if (*grpcPort == 0 && *restPort == 0) {
        printErr(Cli::tr("kiln-serve: both --port and --rest_api_port are 0; nothing to serve on"));
        return 2;
    }
    if (*grpcPort == *restPort) {
        printErr(Cli::tr("kiln-serve: --rest_api_port and --port must differ"));
        return 2;
    }

    // The models: a config file, or one model from --model_name and --model_base_path.
    serve::ModelServerConfig config;
    if (!o.get("model_config_file").empty()) {
        auto loaded = serve::loadModelServerConfig(o.get("model_config_file"));
        if (!loaded) return fail(loaded.error());
        config = std::move(loaded.value());
    } else {
        if (o.get("model_base_path").empty()) {
            printErr(Cli::tr("kiln-serve: give --model_base_path (with --model_name) or --model_config_file"));
            return 2;
        }
        serve::ModelConfig m;
        m.name = o.get("model_name");
        m.basePath = o.get("model_base_path");
        if (!serve::isSafeModelName(m.name)) {
            printErr(Cli::tr("kiln-serve: the model name \"%1\" is not allowed (empty, \".\", \"..\", a slash or a control character)")
                         .arg(QString::fromStdString(m.name)));
            return 2;
        }
        config.models.push_back(std::move(m));
    }

    serve::ManagerOptions managerOptions;
    managerOptions.pollSeconds = static_cast<int>(*poll);
    managerOptions.maxLoadRetries = static_cast<int>(*retries);
    managerOptions.stableMs = static_cast<int>(*stableMs);
    serve::Metrics metrics;
    serve::InflightBudget inflight(*maxInflight > 0 ? static_cast<uint64_t>(*maxInflight) : serve::defaultInflightCap());
    metrics.setInflightBudget(&inflight);
    if (o.flag("enable_batching")) {
        serve::BatchingParameters params;
        if (!o.get("batching_parameters_file").empty()) {
            auto b = serve::loadBatchingParameters(o.get("batching_parameters_file"));
            if (!b) return fail(b.error());
            params = b.value();
        }
        managerOptions.batching = params;
        managerOptions.onBatch = [&metrics](const std::string& model, int64_t rows) { metrics.observeBatch(model, rows); };
    } else if (!o.get("batching_parameters_file").empty()) {
        printErr(Cli::tr("kiln-serve: --batching_parameters_file needs --enable_batching"));
        return 2;
    }

    // SIGINT/SIGTERM are taken by sigwait() below: block them before any thread starts so that
    // every thread inherits the mask.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

    ThreadPool pool(static_cast<int>(*inferenceThreads));
    serve::ModelManager manager(config, managerOptions, pool);
    manager.start();
    if (*poll <= 0) {
        // A single scan: versions still being copied get their settling time before it ends.
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(*stableMs + 1000);
        while (manager.hasWaitingVersions() && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            manager.scanOnce();
        }
    }

    std::fprintf(stderr, "kiln-serve: request tensors in flight are capped at %llu bytes\n",
                 static_cast<unsigned long long>(inflight.capBytes()));
    std::unique_ptr<app::GrpcServer> grpc;
    if (*grpcPort > 0) {
        app::GrpcOptions grpcOptions;
        grpcOptions.timeoutMs = static_cast<int>(*timeoutMs);
        grpcOptions.maxReceiveBytes = static_cast<int>(*grpcMaxReceive);
        grpcOptions.limits = limits;
        grpcOptions.inflight = &inflight;
        grpc = std::make_unique<app::GrpcServer>(manager, &metrics, grpcOptions);
        auto bound = grpc->start(o.get("grpc_bind_address"), static_cast<int>(*grpcPort));
        if (!bound) return fail(bound.error());
        std::fprintf(stderr, "kiln-serve: Running gRPC ModelServer at %s:%d ...\n", o.get("grpc_bind_address").c_str(), bound.value());
    }
    serve::RestApi api(manager, &metrics, {static_cast<int>(*timeoutMs), o.flag("rest_api_enable_cors_support"), limits, &inflight});
    std::unique_ptr<serve::HttpServer> http;
    if (*restPort > 0) {
        serve::HttpOptions httpOptions;
        httpOptions.bindAddress = o.get("rest_api_bind_address");
        httpOptions.port = static_cast<int>(*restPort);
        const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        httpOptions.threads = *restThreads > 0 ? static_cast<int>(*restThreads) : 4 * cpus;
        httpOptions.maxBodyBytes = static_cast<size_t>(*maxBody);
        httpOptions.timeoutMs = static_cast<int>(*timeoutMs);
        httpOptions.cors = o.flag("rest_api_enable_cors_support");
        httpOptions.ioThreads = static_cast<int>(*ioThreads);
        httpOptions.maxQueuedRequests = static_cast<size_t>(*maxQueued);
        httpOptions.maxConnections = static_cast<int>(*maxConnections);
        httpOptions.maxRequestLineBytes = static_cast<size_t>(*maxRequestLine);
        httpOptions.maxHeaderBytes = static_cast<size_t>(*maxHeaderBytes);
        httpOptions.maxHeaderCount = static_cast<int>(*maxHeaderCount);
        httpOptions.keepAliveMaxRequests = static_cast<int>(*keepAliveMax);
        httpOptions.idleTimeoutMs = static_cast<int>(*idleMs);
        http = std::make_unique<serve::HttpServer>(api, &metrics, &manager, httpOptions);
        auto bound = http->start();
        if (!bound) return fail(bound.error());
        std::fprintf(stderr, "kiln-serve: Exporting HTTP/REST API at:%s:%d ...\n", httpOptions.bindAddress.c_str(), bound.value());
    }

    int sig = 0;
    sigwait(&stopSignals, &sig);
    std::fprintf(stderr, "kiln-serve: received %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    if (http) http->stop();
    if (grpc) grpc->stop();
    manager.stop();
    return 0;
}
