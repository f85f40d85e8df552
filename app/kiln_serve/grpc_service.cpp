// SPDX-License-Identifier: Apache-2.0
// gRPC service implementations: TensorProto <-> engine tensors, model specs, status codes.
#include "app/kiln_serve/grpc_service.h"

#include <chrono>
#include <cstring>

#include <grpcpp/grpcpp.h>

#include "engine/serve/metrics.h"
#include "engine/serve/model_manager.h"
#include "engine/serve/status.h"
#include "serving_apis.grpc.pb.h"

namespace kiln::app {
namespace {
using namespace kiln::engine;
using namespace kiln::engine::serve;
namespace tfs = ::tensorflow::serving;

grpc::Status toGrpc(const Error& e) {
    return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(tfCodeOf(e))), e.message);
}

std::string shapeText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

// The batch of a request tensor for input `spec`, checked against the signature's item shape.
Result<int64_t> protoBatch(const ::tensorflow::TensorProto& p, const TensorSpec& spec, const RequestLimits& limits) {
    std::vector<int64_t> dims;
    for (const auto& d : p.tensor_shape().dim()) {
        if (d.size() < 0) return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\" has a negative dimension");
        dims.push_back(d.size());
    }
    const std::vector<int64_t> item = spec.itemShape();
    if (dims.size() != item.size() + 1 || !std::equal(item.begin(), item.end(), dims.begin() + 1) || dims[0] < 1)
        return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\" has shape " + shapeText(dims) + ", expected [batch" +
                                                       (item.empty() ? "" : "," + shapeText(item).substr(1)));
    if (dims[0] > limits.maxBatch)
        return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\": a batch of " + std::to_string(dims[0]) +
                                                       " is more than the limit of " + std::to_string(limits.maxBatch));
    return dims[0];
}

// A request tensor for input `spec` with a batch already checked by protoBatch and the budget:
// DT_FLOAT (float_val or tensor_content), DT_DOUBLE, DT_INT32/INT64 (converted); a single value
// broadcasts as in TensorFlow.
Result<Tensor> fromProto(const ::tensorflow::TensorProto& p, const TensorSpec& spec, int64_t batch) {
    std::vector<int64_t> dims = spec.itemShape();
    dims.insert(dims.begin(), batch);
    const int64_t n = batch * spec.itemSize();
    Tensor t{Shape(dims)};
    float* out = t.data<float>();
    auto fill = [&](auto count, auto get) -> Status {
        const int64_t c = static_cast<int64_t>(count);
        if (c == n) {
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(get(i));
        } else if (c == 1) {
            const float v = static_cast<float>(get(0));
            for (int64_t i = 0; i < n; ++i) out[i] = v;
        } else {
            return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\" has " + std::to_string(c) + " values for shape " +
                                                           shapeText(dims) + " (" + std::to_string(n) + " elements)");
        }
        return okStatus();
    };
    switch (p.dtype()) {
    case ::tensorflow::DT_FLOAT:
        if (!p.tensor_content().empty()) {
            if (static_cast<int64_t>(p.tensor_content().size()) != n * 4)
                return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\": tensor_content has " +
                                                               std::to_string(p.tensor_content().size()) + " bytes, expected " +
                                                               std::to_string(n * 4));
            std::memcpy(out, p.tensor_content().data(), static_cast<size_t>(n) * 4);
            return t;
        }
        KILN_TRY(fill(p.float_val_size(), [&](int64_t i) { return p.float_val(static_cast<int>(i)); }));
        return t;
    case ::tensorflow::DT_DOUBLE:
        KILN_TRY(fill(p.double_val_size(), [&](int64_t i) { return p.double_val(static_cast<int>(i)); }));
        return t;
    case ::tensorflow::DT_INT32:
        KILN_TRY(fill(p.int_val_size(), [&](int64_t i) { return p.int_val(static_cast<int>(i)); }));
        return t;
    case ::tensorflow::DT_INT64:
        KILN_TRY(fill(p.int64_val_size(), [&](int64_t i) { return p.int64_val(static_cast<int>(i)); }));
        return t;
    default:
        return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\" has dtype " +
                                                       ::tensorflow::DataType_Name(p.dtype()) + "; the model takes DT_FLOAT");
    }
}

void toProto(const Tensor& t, ::tensorflow::TensorProto& p) {
    p.set_dtype(::tensorflow::DT_FLOAT);
    for (int64_t d : t.shape().dims()) p.mutable_tensor_shape()->add_dim()->set_size(d);
    auto* vals = p.mutable_float_val();
    vals->Resize(static_cast<int>(t.numel()), 0.0f);
    std::memcpy(vals->mutable_data(), t.data<float>(), t.bytes());
}

struct Spec {
    std::optional<int64_t> version;
    std::optional<std::string> label;
};

Result<Spec> readSpec(const tfs::ModelSpec& s) {
    Spec out;
    if (s.name().empty()) return serveError(TfCode::InvalidArgument, "Missing ModelSpec");
    if (!isSafeModelName(s.name())) return serveError(TfCode::InvalidArgument, "Invalid model name: " + s.name());
    if (s.has_version()) out.version = s.version().value();
    if (s.version_choice_case() == tfs::ModelSpec::kVersionLabel) out.label = s.version_label();
    if (!s.signature_name().empty() && s.signature_name() != "serving_default")
        return serveError(TfCode::FailedPrecondition, "Serving signature key \"" + s.signature_name() + "\" not found.");
    return out;
}

void fillInfo(const TensorSpec& s, ::tensorflow::TensorInfo& info) {
    info.set_name(s.name + ":0");
    info.set_dtype(s.dtype == "DT_INT32" ? ::tensorflow::DT_INT32 : ::tensorflow::DT_FLOAT);
    for (int64_t d : s.shape) info.mutable_tensor_shape()->add_dim()->set_size(d);
}

class Services final : public tfs::PredictionService::Service, public tfs::ModelService::Service {
public:
    Services(ModelManager& manager, Metrics* metrics, GrpcOptions options)
        : m_manager(manager), m_metrics(metrics), m_options(options) {}

    grpc::Status Predict(grpc::ServerContext*, const tfs::PredictRequest* req, tfs::PredictResponse* res) override {
        return measured(req->model_spec().name(), "predict", [&]() -> Status {
            KILN_ASSIGN(Spec spec, readSpec(req->model_spec()));
            KILN_ASSIGN(std::shared_ptr<LoadedVersion> loaded, m_manager.find(req->model_spec().name(), spec.version, spec.label));
            const ModelSignature& sig = loaded->servable().signature();
            std::string extra, missing;
            for (const auto& [k, v] : req->inputs())
                if (sig.findInput(k) < 0) extra += (extra.empty() ? "" : ",") + k;
            for (const auto& s : sig.inputs)
                if (!req->inputs().count(s.name)) missing += (missing.empty() ? "" : ",") + s.name;
            if (!extra.empty() || !missing.empty())
                return serveError(TfCode::InvalidArgument, "input size does not match signature: " + std::to_string(req->inputs().size()) +
                                                               "!=" + std::to_string(sig.inputs.size()) + " Sent extra: {" + extra +
                                                               "}. Missing but required: {" + missing + "}.");
            // Shapes, batches and the element budget are checked before any tensor is allocated, so
            // a one-value broadcast cannot expand past the budget.
            int64_t batch = 0;
            for (const auto& s : sig.inputs) {
                KILN_ASSIGN(int64_t b, protoBatch(req->inputs().at(s.name), s, m_options.limits));
                if (batch && b != batch)
                    return serveError(TfCode::InvalidArgument, "input \"" + s.name + "\" has another batch size than \"" +
                                                                   sig.inputs[0].name + "\"");
                batch = b;
            }
            int64_t perItem = 0;
            for (const auto& s : sig.inputs) perItem += s.itemSize();
            if (perItem > 0 && batch > m_options.limits.maxElements / perItem)
                return serveError(TfCode::InvalidArgument, "the request has a batch of " + std::to_string(batch) + " with " +
                                                               std::to_string(perItem) + " input values each, more than the limit of " +
                                                               std::to_string(m_options.limits.maxElements) + " values per request");
            std::vector<Tensor> inputs;
            for (const auto& s : sig.inputs) {
                KILN_ASSIGN(Tensor t, fromProto(req->inputs().at(s.name), s, batch));
                inputs.push_back(std::move(t));
            }
            for (const auto& f : req->output_filter())
                if (sig.findOutput(f) < 0)
                    return serveError(TfCode::InvalidArgument, "output tensor alias not found in signature: " + f);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_options.timeoutMs);
            KILN_ASSIGN(std::vector<Tensor> out, loaded->run(std::move(inputs), deadline));
            for (size_t k = 0; k < sig.outputs.size(); ++k) {
                const auto& name = sig.outputs[k].name;
                if (req->output_filter_size() &&
                    std::find(req->output_filter().begin(), req->output_filter().end(), name) == req->output_filter().end())
                    continue;
                toProto(out[k], (*res->mutable_outputs())[name]);
            }
            fillSpec(loaded->servable(), *res->mutable_model_spec());
            return okStatus();
        });
    }

    grpc::Status GetModelMetadata(grpc::ServerContext*, const tfs::GetModelMetadataRequest* req,
                                  tfs::GetModelMetadataResponse* res) override {
        return measured(req->model_spec().name(), "GetModelMetadata", [&]() -> Status {
            KILN_ASSIGN(Spec spec, readSpec(req->model_spec()));
            if (req->metadata_field_size() == 0)
                return serveError(TfCode::InvalidArgument, "GetModelMetadataRequest must specify at least one metadata_field");
            for (const auto& f : req->metadata_field())
                if (f != "signature_def") return serveError(TfCode::InvalidArgument, "Metadata field " + f + " is not supported");
            KILN_ASSIGN(std::shared_ptr<LoadedVersion> loaded, m_manager.find(req->model_spec().name(), spec.version, spec.label));
            const ModelSignature& sig = loaded->servable().signature();
            tfs::SignatureDefMap map;
            auto& def = (*map.mutable_signature_def())["serving_default"];
            for (const auto& s : sig.inputs) fillInfo(s, (*def.mutable_inputs())[s.name]);
            for (const auto& s : sig.outputs) fillInfo(s, (*def.mutable_outputs())[s.name]);
            def.set_method_name("tensorflow/serving/predict");
            (*res->mutable_metadata())["signature_def"].PackFrom(map);
            fillSpec(loaded->servable(), *res->mutable_model_spec());
            return okStatus();
        });
    }

    grpc::Status GetModelStatus(grpc::ServerContext*, const tfs::GetModelStatusRequest* req,
                                tfs::GetModelStatusResponse* res) override {
        return measured(req->model_spec().name(), "GetModelStatus", [&]() -> Status {
            KILN_ASSIGN(Spec spec, readSpec(req->model_spec()));
            KILN_ASSIGN(std::vector<VersionStatus> list, m_manager.status(req->model_spec().name(), spec.version, spec.label));
            for (const auto& v : list) {
                auto* s = res->add_model_version_status();
                s->set_version(v.version);
                s->set_state(static_cast<tfs::ModelVersionStatus::State>(static_cast<int>(v.state)));
                s->mutable_status()->set_error_code(static_cast<int>(v.code));
                s->mutable_status()->set_error_message(v.message);
            }
            return okStatus();
        });
    }

private:
    static void fillSpec(const Servable& s, tfs::ModelSpec& spec) {
        spec.set_name(s.name());
        spec.mutable_version()->set_value(s.version());
        spec.set_signature_name("serving_default");
    }

    template <typename F> grpc::Status measured(const std::string& model, const char* api, F&& body) {
        const auto start = std::chrono::steady_clock::now();
        Status st = body();
        if (m_metrics)
            m_metrics->countRequest(m_manager.hasModel(model) ? model : "", api, "GRPC", st.ok() ? "OK" : tfCodeName(tfCodeOf(st.error())),
                                    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
        return st.ok() ? grpc::Status::OK : toGrpc(st.error());
    }

    ModelManager& m_manager;
    Metrics* m_metrics;
    GrpcOptions m_options;
};

}  // namespace

struct GrpcServer::Impl {
    Services services;
    std::unique_ptr<grpc::Server> server;
    int maxReceiveBytes;
    Impl(ModelManager& m, Metrics* metrics, const GrpcOptions& options)
        : services(m, metrics, options), maxReceiveBytes(options.maxReceiveBytes) {}
};

GrpcServer::GrpcServer(ModelManager& manager, Metrics* metrics, GrpcOptions options)
    : m_impl(std::make_unique<Impl>(manager, metrics, options)) {}

GrpcServer::~GrpcServer() { stop(); }

Result<int> GrpcServer::start(const std::string& address, int port) {
    grpc::ServerBuilder builder;
    int bound = 0;
    const std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
    builder.AddListeningPort(host + ":" + std::to_string(port), grpc::InsecureServerCredentials(), &bound);
    builder.RegisterService(static_cast<tfs::PredictionService::Service*>(&m_impl->services));
    builder.RegisterService(static_cast<tfs::ModelService::Service*>(&m_impl->services));
    builder.SetMaxReceiveMessageSize(m_impl->maxReceiveBytes);
    builder.SetMaxSendMessageSize(INT32_MAX);
    m_impl->server = builder.BuildAndStart();
    if (!m_impl->server || bound == 0)
        return Error(ErrorCode::InvalidArgument, "cannot bind the gRPC API to " + address + ":" + std::to_string(port) +
                                                     " (in use, or not an address of this machine)");
    return bound;
}

void GrpcServer::stop() {
    if (m_impl && m_impl->server) {
        m_impl->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        m_impl->server->Wait();
        m_impl->server.reset();
    }
}

}  // namespace kiln::app
