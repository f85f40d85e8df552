// SPDX-License-Identifier: Apache-2.0
// Checks a plugin operation on its own check cases, the way the op harness checks built-in ops:
// the shape rule (symbolic and concrete batch), the CPU forward against the plugin's reference
// forward, and the backward against central finite differences of a random projection of the
// output. The studio's "Check plugin" command and the tests run it.
#pragma once

#include <string>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::engine::ops {

struct PluginCheck {
    enum class Kind { Shape, Forward, Gradient };
    enum class Outcome { Passed, Failed, Skipped };
    std::string caseName;  // the plugin's check case
    Kind kind = Kind::Shape;
    Outcome outcome = Outcome::Passed;
    std::string detail;    // English: what was compared, or what went wrong
    double worstError = 0; // Forward: largest |kernel - reference|; Gradient: largest relative error
};

// Runs every check case of `op` (none when the plugin declares none). Never throws; a plugin
// that fails a call shows as a failed check naming the call.
std::vector<PluginCheck> checkPluginOp(const PluginOp& op, ThreadPool& pool);

}  // namespace kiln::engine::ops
