// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for Kiln's safetensors reader (weights of projects, checkpoints and model
// repositories): any bytes give tensors whose shapes match their byte ranges, or a
// WeightsMismatch error naming the file, never a crash or an allocation the file does not back.
// kiln-fuzz-sources: engine/io/safetensors.cpp
// kiln-fuzz-libs: kiln_io kiln_exec kiln_ops kiln_kernels kiln_graph kiln_core
// kiln-fuzz-seconds: 20
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto r = kiln::engine::io::parseSafetensors(bytes, "fuzz.safetensors");
    if (!r.ok()) {
        const auto& e = r.error();
        if (e.code != kiln::engine::ErrorCode::WeightsMismatch || e.file != "fuzz.safetensors" || e.message.empty())
            __builtin_trap();
        return 0;
    }
    // Every tensor is backed by file bytes: together they never hold more than the file.
    uint64_t total = 0;
    for (const auto& t : r->tensors) {
        if (t.tensor.bytes() > size) __builtin_trap();
        total += t.tensor.bytes();
        if (r->find(t.name) == nullptr) __builtin_trap();
    }
    if (total > size) __builtin_trap();
    return 0;
}
