// SPDX-License-Identifier: Apache-2.0
// PredictRequest inputs -> engine tensors for kiln-serve's gRPC Predict.
#include "app/kiln_serve/grpc_predict.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/serve/status.h"
#include "serving_apis.pb.h"

namespace kiln::app {
namespace {
using namespace kiln::engine;
using namespace kiln::engine::serve;

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

}  // namespace

Result<std::vector<Tensor>> decodePredictInputs(const ::tensorflow::serving::PredictRequest& req, const ModelSignature& sig,
                                                const RequestLimits& limits, const AdmitFn& admit) {
    std::string extra, missing;
    for (const auto& [k, v] : req.inputs())
        if (sig.findInput(k) < 0) extra += (extra.empty() ? "" : ",") + k;
    for (const auto& s : sig.inputs)
        if (!req.inputs().count(s.name)) missing += (missing.empty() ? "" : ",") + s.name;
    if (!extra.empty() || !missing.empty())
        return serveError(TfCode::InvalidArgument, "input size does not match signature: " + std::to_string(req.inputs().size()) +
                                                       "!=" + std::to_string(sig.inputs.size()) + " Sent extra: {" + extra +
                                                       "}. Missing but required: {" + missing + "}.");
    // Shapes, batches and the element budget are checked before any tensor is allocated, so a
    // one-value broadcast cannot expand past the budget.
    int64_t batch = 0;
    for (const auto& s : sig.inputs) {
        KILN_ASSIGN(int64_t b, protoBatch(req.inputs().at(s.name), s, limits));
        if (batch && b != batch)
            return serveError(TfCode::InvalidArgument, "input \"" + s.name + "\" has another batch size than \"" +
                                                           sig.inputs[0].name + "\"");
        batch = b;
    }
    int64_t perItem = 0;
    for (const auto& s : sig.inputs) perItem += s.itemSize();
    if (perItem > 0 && batch > limits.maxElements / perItem)
        return serveError(TfCode::InvalidArgument, "the request has a batch of " + std::to_string(batch) + " with " +
                                                       std::to_string(perItem) + " input values each, more than the limit of " +
                                                       std::to_string(limits.maxElements) + " values per request");
    for (const auto& f : req.output_filter())
        if (sig.findOutput(f) < 0) return serveError(TfCode::InvalidArgument, "output tensor alias not found in signature: " + f);
    if (admit) KILN_TRY(admit(batch));
    std::vector<Tensor> inputs;
    for (const auto& s : sig.inputs) {
        KILN_ASSIGN(Tensor t, fromProto(req.inputs().at(s.name), s, batch));
        inputs.push_back(std::move(t));
    }
    return inputs;
}

}  // namespace kiln::app
