// SPDX-License-Identifier: Apache-2.0
// gRPC service implementations: TensorProto <-> engine tensors, model specs, status codes.
#include "app/kiln_serve/grpc_service.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <grpcpp/grpcpp.h>

#include "app/kiln_serve/grpc_predict.h"
#include "engine/serve/inflight_budget.h"
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
        // Held until the response message is filled: the call's tensors live that long.
        InflightLease lease;
        return measured(req->model_spec().name(), "predict", [&]() -> Status {
            KILN_ASSIGN(Spec spec, readSpec(req->model_spec()));
            KILN_ASSIGN(std::shared_ptr<LoadedVersion> loaded, m_manager.find(req->model_spec().name(), spec.version, spec.label));
            const ModelSignature& sig = loaded->servable().signature();
            AdmitFn admit;
            if (m_options.inflight)
                admit = [&](int64_t batch) -> Status {
                    KILN_ASSIGN(lease, m_options.inflight->acquire(requestTensorBytes(sig, batch)));
                    return okStatus();
                };
            KILN_ASSIGN(std::vector<Tensor> inputs, decodePredictInputs(*req, sig, m_options.limits, admit));
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
        if (m_metrics && !st.ok() && isInflightRefusal(st.error())) m_metrics->countInflightRefusal("GRPC");
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
