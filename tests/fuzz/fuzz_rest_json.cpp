// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for kiln-serve's REST request parsing and validation: predict bodies (row and
// columnar, b64 images) and classify bodies against a two-input and an image signature, and
// base64. Any bytes give tensors of the signature's shapes or an INVALID_ARGUMENT error, and the
// one-pass predict reader either declines a body or reads the same floats as the tree parser.
// kiln-fuzz-sources: engine/serve/json_tensor.cpp engine/serve/predict_reader.cpp engine/serve/status.cpp
// kiln-fuzz-libs: kiln_serve kiln_core opencv_imgproc opencv_imgcodecs opencv_core
// kiln-fuzz-seconds: 20
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/serve/json_tensor.h"
#include "engine/serve/predict_reader.h"
#include "engine/serve/status.h"

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

void check(const Result<PredictRequestData>& r, const ModelSignature& sig) {
    if (!r.ok()) {
        if (tfCodeOf(r.error()) != TfCode::InvalidArgument) __builtin_trap();
        return;
    }
    const auto& req = r.value();
    if (req.inputs.size() != sig.inputs.size() || req.batch < 1) __builtin_trap();
    for (size_t k = 0; k < sig.inputs.size(); ++k)
        if (req.inputs[k].numel() != req.batch * sig.inputs[k].itemSize()) __builtin_trap();
}
// The reader must agree bit for bit with the tree parser on every body it takes.
void differential(std::string_view body, const ModelSignature& sig) {
    auto plain = readPlainPredict(body, sig, {}, {});
    if (!plain) return;
    auto tree = parsePredictRequestTree(body, sig);
    if (!plain->ok() || !tree.ok()) __builtin_trap();
    const auto& p = plain->value();
    const auto& t = tree.value();
    if (p.batch != t.batch || p.columnar != t.columnar || p.inputs[0].numel() != t.inputs[0].numel() ||
        std::memcmp(p.inputs[0].data<float>(), t.inputs[0].data<float>(), static_cast<size_t>(p.inputs[0].numel()) * sizeof(float)))
        __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    static const ModelSignature a = twoInputs();
    static const ModelSignature b = image();
    check(parsePredictRequest(body, a), a);
    check(parsePredictRequest(body, b), b);
    differential(body, b);
    auto ex = parseExamplesRequest(body, a);
    if (!ex.ok() && tfCodeOf(ex.error()) != TfCode::InvalidArgument) __builtin_trap();
    // Error bodies quote request bytes; writing them must never throw.
    if (errorBody(std::string(body)).empty()) __builtin_trap();
    std::string decoded;
    decodeBase64(body, decoded);
    return 0;
}
