// SPDX-License-Identifier: Apache-2.0
// Checks a plugin operation on its own check cases, the way the op harness checks built-in ops:
// the shape rule (symbolic and concrete batch), the CPU forward against the plugin's reference
// forward, and the backward against central finite differences of a random projection of the
// output. Plugin losses are checked the same way on cases Kiln makes from their defaults: the
// per-sample values and Kiln's reduction of them, and the gradient against central finite
// differences. The studio's "Check plugin" command, `kiln-train --check-plugins` and the tests
// run them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::engine::ops {

// The most values a check case's tensor may hold: cases are small examples, and a larger one is
// refused before anything is allocated for it.
inline constexpr int64_t kMaxCheckElements = int64_t{1} << 22;

struct PluginCheck {
    // Value: a loss's per-sample values (finite, the same whether or not gradients are asked
    // for, each depending on its own sample only) and their mean as the trainer takes it.
    enum class Kind { Shape, Forward, Gradient, Value };
    enum class Outcome { Passed, Failed, Skipped };
    std::string caseName;  // the plugin's check case; for a loss, its shapes ("predictions [4,3], targets [4,3]")
    Kind kind = Kind::Shape;
    Outcome outcome = Outcome::Passed;
    std::string detail;    // English: what was compared, or what went wrong
    double worstError = 0; // Forward: largest |kernel - reference|; Gradient: largest relative error
    // A failed check's error: its code and parameters ("op", "case", "reason"; the shapes of a
    // case that cannot be made), from which the studio composes its words; `detail` is its
    // English message.
    std::optional<Error> error;
};

// Runs every check case of `op` (none when the plugin declares none). Never throws; a plugin
// that fails a call shows as a failed check naming the call. A case that cannot be made (its
// attributes, no input shapes, a dimension below 1, more than kMaxCheckElements values in an
// input, the output, a parameter or the scratch space) is a failed Shape check saying why.
std::vector<PluginCheck> checkPluginOp(const PluginOp& op, ThreadPool& pool);

// Checks a plugin loss with its default attributes on a batch of 4, for each of these shape
// pairs its shape check accepts: predictions [4,3] with targets [4,3], [4,1] with [4,1], and
// [4,3] with class indices [4,1]. Predictions are uniform in [-1, 1]; targets uniform in [0, 1),
// or whole class indices below the prediction width. A loss with a required attribute, or that
// accepts none of the pairs, gets one skipped Shape check saying so. A loss whose plugin declares
// check cases for it (ABI 1.2) is checked on those instead, with their attributes and shapes; a
// case that cannot be made (bad JSON, attributes, shapes of rank below 2, a dimension below 1,
// batches that differ, more than kMaxCheckElements values, shapes its shape check refuses) is a
// failed Shape check. Never throws.
std::vector<PluginCheck> checkPluginLoss(const PluginLoss& loss, ThreadPool& pool);

}  // namespace kiln::engine::ops
