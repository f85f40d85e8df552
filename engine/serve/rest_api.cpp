// SPDX-License-Identifier: Apache-2.0
// REST routing and dispatch, following TF Serving's http_rest_api_handler.
#include "engine/serve/rest_api.h"

#include <charconv>
#include <chrono>
#include <regex>

#include <nlohmann/json.hpp>

#include "engine/serve/inflight_budget.h"
#include "engine/serve/metrics.h"
#include "engine/serve/model_config.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/predict_reader.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {
using nlohmann::json;

namespace {

Error invalid(const std::string& message) { return serveError(TfCode::InvalidArgument, message); }

const std::regex& postRoute() {
    static const std::regex kPost(R"(^/v1/models/([^/:]+)(?:/versions/(\d+)|/labels/([^/:]+))?:(classify|regress|predict)$)");
    return kPost;
}

// The model a route names: groups 1-3 of both routes, the model name, then a version number or a
// version label.
struct ModelTarget {
    std::string name;
    std::optional<int64_t> version;
    std::optional<std::string> label;
};

// Reads the groups into `t`; TF Serving's message when the version or the name is not acceptable.
std::optional<std::string> readTarget(const std::smatch& match, ModelTarget& t) {
    t.name = match[1].str();
    if (match[2].matched) {
        const std::string s = match[2].str();
        int64_t v = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || ptr != s.data() + s.size()) return "Failed to convert version: " + s + " to numeric.";
        t.version = v;
    }
    if (match[3].matched) t.label = match[3].str();
    if (!isSafeModelName(t.name)) return "Invalid model name: " + t.name;
    return std::nullopt;
}

// The model name of "/v1/models/<name>:predict", the form of postRoute() without a version or a
// label (the name holds neither '/' nor ':'); nullopt for every other path.
std::optional<std::string_view> plainPredictName(std::string_view path) {
    constexpr std::string_view kPrefix = "/v1/models/", kVerb = ":predict";
    if (path.size() <= kPrefix.size() + kVerb.size() || !path.starts_with(kPrefix) || !path.ends_with(kVerb))
        return std::nullopt;
    const std::string_view name = path.substr(kPrefix.size(), path.size() - kPrefix.size() - kVerb.size());
    if (name.find_first_of("/:") != std::string_view::npos) return std::nullopt;
    return name;
}

}  // namespace

std::string modelMetadataJson(const Servable& servable) {
    auto tensorInfo = [](const TensorSpec& s) {
        json dims = json::array();
        for (int64_t d : s.shape) dims.push_back({{"size", std::to_string(d)}, {"name", ""}});
        return json{{"dtype", s.dtype}, {"tensor_shape", {{"dim", dims}, {"unknown_rank", false}}}, {"name", s.name + ":0"}};
    };
    const ModelSignature& sig = servable.signature();
    json inputs = json::object(), outputs = json::object();
    for (const auto& s : sig.inputs) inputs[s.name] = tensorInfo(s);
    for (const auto& s : sig.outputs) outputs[s.name] = tensorInfo(s);
    json def = {{"inputs", inputs}, {"outputs", outputs}, {"method_name", "tensorflow/serving/predict"}, {"defaults", json::object()}};
    json j = {{"model_spec", {{"name", servable.name()}, {"signature_name", ""}, {"version", std::to_string(servable.version())}}},
              {"metadata", {{"signature_def", {{"signature_def", {{"serving_default", def}}}}}}}};
    return j.dump(4, ' ', false, json::error_handler_t::replace);
}

RestApi::RestApi(ModelManager& manager, Metrics* metrics, RestOptions options)
    : m_manager(manager), m_metrics(metrics), m_options(options) {}

RestResponse RestApi::handle(const std::string& method, const std::string& path, std::string_view body,
                             const std::string& origin) {
    static const std::regex kV1("^/v1/.*", std::regex::icase);
    static const std::regex kGet(R"(^/v1/models(?:/([^/:]+))?(?:/versions/(\d+)|/labels/([^/:]+))?(?:/(metadata))?$)");
    auto fail = [](TfCode code, const std::string& message) { return RestResponse{httpStatusFor(code), errorBody(message)}; };
    if (method == "OPTIONS") {
        if (origin.rfind("http://", 0) == 0 || origin.rfind("https://", 0) == 0) return RestResponse{200, ""};
        return fail(TfCode::InvalidArgument, "Malformed request: OPTIONS " + path);
    }
    if (!std::regex_match(path, kV1)) return fail(TfCode::NotFound, "Not found: " + method + " " + path);
    std::smatch m;
    auto target = [&](const std::smatch& match, ModelTarget& t) -> std::optional<RestResponse> {
        if (auto bad = readTarget(match, t)) return fail(TfCode::InvalidArgument, *bad);
        return std::nullopt;
    };
    ModelTarget t;
    if (method == "POST" && std::regex_match(path, m, postRoute())) {
        if (auto bad = target(m, t)) return *bad;
        return handlePost(t.name, t.version, t.label, m[4].str(), body);
    }
    if (method == "GET" && std::regex_match(path, m, kGet)) {
        if (!m[1].matched) return fail(TfCode::InvalidArgument, "Missing model name in request.");
        if (auto bad = target(m, t)) return *bad;
        return handleGet(t.name, t.version, t.label, m[4].matched);
    }
    return fail(TfCode::InvalidArgument, "Malformed request: " + method + " " + path);
}

RestResponse RestApi::handleGet(const std::string& name, std::optional<int64_t> version,
                                const std::optional<std::string>& label, bool metadata) {
    const auto start = std::chrono::steady_clock::now();
    const std::string api = metadata ? "GetModelMetadata" : "GetModelStatus";
    RestResponse res;
    TfCode code = TfCode::Ok;
    if (metadata) {
        auto found = m_manager.find(name, version, label);
        if (!found) {
            code = tfCodeOf(found.error());
            res = {httpStatusFor(code), errorBody(found.error().message)};
        } else {
            res.body = modelMetadataJson(found.value()->servable());
        }
    } else {
        auto st = m_manager.status(name, version, label);
        if (!st) {
            code = tfCodeOf(st.error());
            res = {httpStatusFor(code), errorBody(st.error().message)};
        } else {
            json list = json::array();
            for (const auto& v : st.value())
                list.push_back({{"version", std::to_string(v.version)},
                                {"state", versionStateName(v.state)},
                                {"status", {{"error_code", tfCodeName(v.code)}, {"error_message", v.message}}}});
            res.body = json{{"model_version_status", list}}.dump(1, ' ', false, json::error_handler_t::replace);
        }
    }
    if (m_metrics)
        m_metrics->countRequest(m_manager.hasModel(name) ? name : "", api, "REST", tfCodeName(code),
                                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    return res;
}

RestResponse RestApi::handlePost(const std::string& name, std::optional<int64_t> version,
                                 const std::optional<std::string>& label, const std::string& verb, std::string_view body) {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(m_options.timeoutMs);
    // Held until the response body is formatted: the request's input and output tensors live that long.
    InflightLease lease;
    auto run = [&]() -> Result<std::string> {
        KILN_ASSIGN(std::shared_ptr<LoadedVersion> loaded, m_manager.find(name, version, label));
        const ModelSignature& sig = loaded->servable().signature();
        AdmitFn admit;
        if (m_options.inflight)
            admit = [&](int64_t batch) -> Status {
                KILN_ASSIGN(lease, m_options.inflight->acquire(requestTensorBytes(sig, batch)));
                return okStatus();
            };
        if (verb == "predict") {
            KILN_ASSIGN(PredictRequestData req, parsePredictRequest(body, sig, m_options.limits, admit));
            KILN_ASSIGN(std::vector<Tensor> out, loaded->run(std::move(req.inputs), deadline));
            return formatPredictResponse(out, sig, req.columnar);
        }
        if (verb == "regress" && sig.outputs[0].itemSize() != 1)
            return invalid("Regress needs a model whose first output has one value per example; \"" + sig.outputs[0].name +
                           "\" has " + std::to_string(sig.outputs[0].itemSize()));
        KILN_ASSIGN(std::vector<Tensor> inputs, parseExamplesRequest(body, sig, m_options.limits, admit));
        KILN_ASSIGN(std::vector<Tensor> out, loaded->run(std::move(inputs), deadline));
        return verb == "classify" ? formatClassifyResponse(out, sig) : formatRegressResponse(out, sig);
    };
    auto result = run();
    if (!result) return postError(name, verb, result.error(), start);
    countPost(name, verb, TfCode::Ok, start);
    return RestResponse{200, std::move(result.value())};
}

RestResponse RestApi::postError(const std::string& name, const std::string& verb, const Error& error,
                                std::chrono::steady_clock::time_point start) {
    const TfCode code = tfCodeOf(error);
    // The in-flight cap is the server's state, not the request's fault: 503 like a full queue.
    const bool refused = isInflightRefusal(error);
    if (refused && m_metrics) m_metrics->countInflightRefusal("REST");
    countPost(name, verb, code, start);
    return RestResponse{refused ? 503 : httpStatusFor(code), errorBody(error.message)};
}

void RestApi::countPost(const std::string& name, const std::string& verb, TfCode code, std::chrono::steady_clock::time_point start) {
    if (m_metrics)
        m_metrics->countRequest(m_manager.hasModel(name) ? name : "", verb, "REST", tfCodeName(code),
                                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
}

bool RestApi::handleAsync(const std::string& method, const std::string& path, std::string_view body, Reply& reply) {
    if (method != "POST") return false;
    ModelTarget t;
    // Other routes and verbs, and bad names or versions (their answers are handle()'s), take the
    // blocking path.
    if (auto name = plainPredictName(path)) {
        // The route's common form, read without the regular expression; the name is checked as
        // readTarget() checks it.
        if (!isSafeModelName(*name)) return false;
        t.name = std::string(*name);
    } else {
        std::smatch m;
        if (!std::regex_match(path, m, postRoute()) || m[4].str() != "predict" || readTarget(m, t)) return false;
    }
    const std::string name = t.name;
    const std::optional<int64_t> version = t.version;
    const std::optional<std::string> label = t.label;
    // Unknown models and versions, and versions without batching, take the blocking path.
    auto found = m_manager.find(name, version, label);
    if (!found || !found.value()->batcher()) return false;

    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(m_options.timeoutMs);
    std::shared_ptr<LoadedVersion> loaded = std::move(found.value());
    // Held until the response body is formatted, as on the blocking path.
    auto lease = std::make_shared<InflightLease>();
    const ModelSignature& sig = loaded->servable().signature();
    AdmitFn admit;
    if (m_options.inflight)
        admit = [&](int64_t batch) -> Status {
            KILN_ASSIGN(*lease, m_options.inflight->acquire(requestTensorBytes(sig, batch)));
            return okStatus();
        };
    // Only bodies the one-pass reader takes are read here: the general parser (other forms, and
    // every malformed body) costs some thirty times as much per byte and runs on a worker instead.
    std::optional<Result<PredictRequestData>> plain = readPlainPredict(body, sig, m_options.limits, admit);
    if (!plain) return false;
    // From here on the request is ours and is answered exactly once.
    Reply call = std::move(reply);
    Result<PredictRequestData> parsed = std::move(*plain);
    if (!parsed) {
        call(postError(name, "predict", parsed.error(), start), std::move(loaded));
        return true;
    }
    const bool columnar = parsed.value().columnar;
    Batcher* batcher = loaded->batcher();
    batcher->runAsync(std::move(parsed.value().inputs), deadline,
                      [this, call = std::move(call), loaded, lease, name, start, columnar](Result<std::vector<Tensor>> out) mutable {
                          RestResponse res;
                          if (out) {
                              res.body = formatPredictResponse(out.value(), loaded->servable().signature(), columnar);
                              countPost(name, "predict", TfCode::Ok, start);
                          } else {
                              res = postError(name, "predict", out.error(), start);
                          }
                          out = Result<std::vector<Tensor>>(std::vector<Tensor>());  // the outputs go before the lease
                          *lease = InflightLease();
                          call(std::move(res), std::move(loaded));
                      });
    return true;
}

}  // namespace kiln::engine::serve
