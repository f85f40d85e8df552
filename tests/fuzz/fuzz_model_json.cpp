// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for kiln-serve's reading of kiln-model.json (inputs, outputs, preprocessing,
// class names, scores) with the limits the server applies, against a two-input and an image
// signature: any bytes give a signature of the same inputs and outputs or an error with a
// message, never a crash.
// kiln-fuzz-sources: engine/serve/servable.cpp engine/core/json_checked.cpp
// kiln-fuzz-libs: kiln_serve kiln_train kiln_io kiln_data kiln_store kiln_exec kiln_optim kiln_ops kiln_kernels kiln_graph kiln_core
// kiln-fuzz-seconds: 20
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/serve/servable.h"

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
    s.inputs.push_back({"image", {-1, 28, 28, 1}});
    s.outputs.push_back({"logits", {-1, 10}});
    return s;
}

void check(const nlohmann::json& j, const ModelSignature& base) {
    ModelSignature sig = base;
    Status st = applyModelJson(j, "fuzz/kiln-model.json", sig);
    if (!st.ok()) {
        if (st.error().message.empty()) __builtin_trap();
        return;
    }
    // The graph decides the signature's tensors; the file only names and annotates them.
    if (sig.inputs.size() != base.inputs.size() || sig.outputs.size() != base.outputs.size()) __builtin_trap();
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
        const auto& p = sig.inputs[k].image;
        const auto& shape = sig.inputs[k].shape;
        if (sig.inputs[k].itemSize() != base.inputs[k].itemSize()) __builtin_trap();
        // One mean and std per channel of an image input (a [batch, height, width] input has one).
        const bool image = shape.size() == 3 || shape.size() == 4;
        const size_t channels = shape.size() == 4 ? static_cast<size_t>(shape[3]) : 1;
        if (!image && (!p.mean.empty() || !p.std.empty())) __builtin_trap();
        if (!p.mean.empty() && p.mean.size() != channels) __builtin_trap();
        if (!p.std.empty() && p.std.size() != channels) __builtin_trap();
    }
    for (size_t k = 0; k < sig.outputs.size(); ++k)
        if (sig.outputs[k].itemSize() != base.outputs[k].itemSize()) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto j = parseJsonChecked(text, modelJsonLimits(), "fuzz/kiln-model.json");
    if (!j.ok()) {
        if (j.error().message.empty()) __builtin_trap();
        return 0;
    }
    static const ModelSignature a = twoInputs();
    static const ModelSignature b = image();
    check(*j, a);
    check(*j, b);
    return 0;
}
