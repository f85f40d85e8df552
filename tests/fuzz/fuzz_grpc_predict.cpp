// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for kiln-serve's gRPC Predict request decoding: the bytes are parsed as a
// serialized tensorflow.serving.PredictRequest (as gRPC hands it over) and its inputs turned into
// tensors for a two-input and an image signature. Any request gives tensors of the signature's
// shapes within the limits, or INVALID_ARGUMENT.
// kiln-fuzz-sources: app/kiln_serve/grpc_predict.cpp engine/serve/status.cpp
// kiln-fuzz-libs: kiln_serve_grpc kiln_core protobuf::libprotobuf
// kiln-fuzz-seconds: 20
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>

#include "app/kiln_serve/grpc_predict.h"
#include "engine/serve/status.h"
#include "serving_apis.pb.h"

namespace {
using namespace kiln::engine;
using namespace kiln::engine::serve;

ModelSignature twoInputs() {
    ModelSignature s;
    s.inputs.push_back({"tower_a", {-1, 3}});
    s.inputs.push_back({"tower_b", {-1, 2, 2}});
    s.outputs.push_back({"y", {-1, 1}});
    return s;
}

ModelSignature image() {
    ModelSignature s;
    s.inputs.push_back({"image", {-1, 8, 8, 1}});
    s.outputs.push_back({"logits", {-1, 4}});
    return s;
}

void check(const tensorflow::serving::PredictRequest& req, const ModelSignature& sig, const RequestLimits& limits) {
    auto r = kiln::app::decodePredictInputs(req, sig, limits);
    if (!r.ok()) {
        if (tfCodeOf(r.error()) != TfCode::InvalidArgument || r.error().message.empty()) __builtin_trap();
        return;
    }
    if (r->size() != sig.inputs.size()) __builtin_trap();
    int64_t total = 0;
    const int64_t batch = (*r)[0].shape()[0];
    if (batch < 1 || batch > limits.maxBatch) __builtin_trap();
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
        if ((*r)[k].shape()[0] != batch || (*r)[k].numel() != batch * sig.inputs[k].itemSize()) __builtin_trap();
        total += (*r)[k].numel();
    }
    if (total > limits.maxElements) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    google::protobuf::SetLogHandler(nullptr);  // invalid UTF-8 in keys is refused, quietly
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tensorflow::serving::PredictRequest req;
    if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;  // gRPC refuses it before Predict
    static const ModelSignature a = twoInputs();
    static const ModelSignature b = image();
    RequestLimits small;
    small.maxBatch = 64;
    small.maxElements = 4096;
    check(req, a, RequestLimits{});
    check(req, a, small);
    check(req, b, small);
    return 0;
}
