// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the .kiln project reader and the model analysis of whatever it reads: any
// text gives a project or an error with a message (a ParseError with its position), and a project
// that parses gives an analysed model or an error naming what is wrong, never a crash or a hang.
// kiln-fuzz-sources: engine/io/project.cpp
// kiln-fuzz-libs: kiln_io kiln_exec kiln_ops kiln_kernels kiln_graph kiln_core
// kiln-fuzz-seconds: 20
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/io/project.h"
#include "engine/ops/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto p = kiln::engine::io::parseProject(text, "fuzz.kiln");
    if (!p.ok()) {
        const auto& e = p.error();
        if (e.message.empty() || e.code == kiln::engine::ErrorCode::Ok || e.code == kiln::engine::ErrorCode::Internal)
            __builtin_trap();
        if (e.code == kiln::engine::ErrorCode::ParseError && (e.line < 0 || e.column < 0)) __builtin_trap();
        return 0;
    }
    auto m = kiln::engine::ops::analyzeModel(p->graph);
    if (!m.ok()) {
        if (m.error().message.empty() || m.error().code == kiln::engine::ErrorCode::Internal) __builtin_trap();
        (void)kiln::engine::io::locate(m.error(), *p);
        return 0;
    }
    // An analysed model's sizes are real counts: no dimension or parameter count wrapped around.
    if (m->parameterCount(true) < 0 || m->parameterCount(false) < 0) __builtin_trap();
    for (const auto& node : m->nodes) {
        if (node.macs < 0) __builtin_trap();
        for (int64_t d : node.output.dims())
            if (d < -1) __builtin_trap();
    }
    // What was read writes back and reads again.
    auto again = kiln::engine::io::parseProject(kiln::engine::io::serializeProject(*p), "fuzz.kiln");
    if (!again.ok() || again->graph.nodes.size() != p->graph.nodes.size()) __builtin_trap();
    return 0;
}
