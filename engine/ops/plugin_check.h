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
#include <utility>
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
    // What the check found, the code from which the studio and kiln-train compose their words
    // with the parameters in `params` (listed in braces). A tensor is named by "tensor" (input,
    // output, parameter, predictions or targets) with "input" (its index) or "parameter" (its
    // name) where there are several.
    enum class Finding {
        // Passed.
        OutputShape,      // {shape}: the output's shape, the same with a symbolic batch
        ForwardAgrees,    // {count}: values that agree with the reference forward
        GradientAgrees,   // {count}: gradient values that agree with central differences
        LossValuesAgree,  // {count, loss}: per-sample values checked; the mean loss
        // Skipped.
        NoReference,       // the plugin has no reference forward
        NoBackward,        // the plugin has no backward kernel
        NoDefaultCase,     // {reason}: the loss's defaults make no case (a required attribute)
        NoShapesAccepted,  // {reasons}: the loss refuses every shape pair the check tries
        // Failed: a case that cannot be made.
        AttributesNotObject,  // the case's attributes are not a JSON object
        InputsMissing,        // the case gives no input shapes
        InputShapeInvalid,    // {input, shape, max_rank}: rank out of 1..max_rank or no concrete batch
        LossShapeRank,        // {tensor, shape, rank, max_rank}: predictions or targets of rank below 2
        DimensionBelowOne,    // {tensor, input|parameter, shape, dimension}
        TooManyValues,        // {tensor, input|parameter, shape, limit}
        BatchesDiffer,        // {predictions, targets}: a loss case's shapes
        WorkspaceTooLarge,    // {values, limit}: the kernel's scratch space
        // Failed: what the check found wrong.
        EngineError,             // {message, when}: `error` says it (an attribute, a shape rule, a call into the
                                 // plugin); "when" is "symbolic_batch", "with_gradients" or empty
        SymbolicShapeDiffers,    // {shape, symbolic}: the output with a concrete and a symbolic batch
        ReferenceFailed,         // {reason}: the reference forward returned an error, the plugin's words
        ForwardMismatch,         // {element, kernel, reference}
        GradientMismatch,        // {tensor, input|parameter, element, backward, numeric}
        LossNotFinite,           // {sample, value}
        LossValueWithGradients,  // {sample, without, with}: the value changes when gradients are asked for
        LossNotPerSample,        // {sample}: its value changes when only sample 0 changes
        LossMeanMismatch,        // {loss, mean}: Kiln's reduction against the mean of the values
        LossGradientMismatch,    // {sample, index, gradient, numeric}
    };
    std::string caseName;  // the plugin's check case; for a loss, its shapes ("predictions [4,3], targets [4,3]")
    Kind kind = Kind::Shape;
    Outcome outcome = Outcome::Passed;
    std::string detail;    // English: what was compared, or what went wrong
    double worstError = 0; // Forward: largest |kernel - reference|; Gradient: largest relative error
    // A failed check's error: its code and parameters ("op", "case", "reason"; the shapes of a
    // case that cannot be made); `detail` is its English message.
    std::optional<Error> error;
    Finding finding = Finding::OutputShape;
    std::vector<std::pair<std::string, std::string>> params;
    // A loss case checked on its shapes: the plugin's name for it ("" for a case Kiln made) and
    // the shapes, from which `caseName` is made ("q=0.9 (predictions [4,3], targets [4,3])");
    // all "" otherwise. A loss skipped before any case is "defaults" (NoDefaultCase) or
    // "shapes" (NoShapesAccepted).
    std::string declaredCase, predictionsShape, targetsShape;

    // The value of parameter `key`, or "".
    std::string param(const std::string& key) const;
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
