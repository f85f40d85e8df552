// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for Kiln's ONNX reader, strict and as kiln-import runs it: any bytes must give a
// model or an Error, never a crash, a hang or a sanitizer report. With an empty corpus folder, the bundled examples (exported with
// random weights) are written into it first as seeds.
// kiln-fuzz-sources: engine/io/onnx_import.cpp engine/io/onnx_export.cpp engine/io/project.cpp
// kiln-fuzz-libs: kiln_io kiln_exec kiln_ops kiln_kernels kiln_graph kiln_core onnx onnx_proto protobuf::libprotobuf
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "engine/io/onnx_export.h"
#include "engine/io/onnx_import.h"
#include "engine/io/project.h"

namespace {

void writeSeeds(const std::filesystem::path& dir) {
    const char* src = std::getenv("KILN_SOURCE_DIR");
    if (!src) return;
    for (const char* name : {"fashion_mlp", "fashion_cnn", "residual", "two_tower"}) {
        auto p = kiln::engine::io::loadProject(std::string(src) + "/resources/examples/" + name + ".kiln");
        if (!p.ok()) continue;
        auto m = kiln::engine::ops::analyzeModel(p->graph);
        if (!m.ok()) continue;
        auto params = kiln::engine::exec::ParamStore::create(*m, 1);
        auto bytes = kiln::engine::io::exportOnnx(*m, params, {name, {"a"}, "{}", "fuzz"});
        if (!bytes.ok()) continue;
        std::ofstream(dir / (std::string(name) + ".onnx"), std::ios::binary) << *bytes;
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    // The first directory argument is the corpus.
    for (int k = 1; k < *argc; ++k) {
        std::filesystem::path p((*argv)[k]);
        std::error_code ec;
        if ((*argv)[k][0] != '-' && std::filesystem::is_directory(p, ec)) {
            if (std::filesystem::is_empty(p, ec)) writeSeeds(p);
            break;
        }
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // The user's import (kiln-import): placeholders, ONNX shape inference, readable names.
    kiln::engine::io::ImportOptions user;
    user.readableNames = true;
    user.placeholders = true;
    auto u = kiln::engine::io::importOnnx(bytes, "fuzz.onnx", user);
    if (!u.ok() && u.error().message.empty()) __builtin_trap();
    auto r = kiln::engine::io::importOnnx(bytes, "fuzz.onnx");
    if (r.ok()) {
        // A model that reads must also analyse and get its weights.
        auto m = kiln::engine::ops::analyzeModel(r->graph);
        if (m.ok()) {
            auto params = kiln::engine::exec::ParamStore::create(*m, 0);
            (void)kiln::engine::io::applyWeights(*r, params);
        }
    } else if (r.error().message.empty()) {
        __builtin_trap();  // every error explains itself
    }
    return 0;
}
