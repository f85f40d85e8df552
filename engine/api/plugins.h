// SPDX-License-Identifier: Apache-2.0
// Plugins as the studio manages them: what is loaded (libraries and their operations, losses and
// metrics; plugins are never unloaded), loading one, and checking a loaded plugin's operations and
// losses against finite differences and its own shape rules. The api's own types: the .cpp
// copies them from engine/ops's plugin registry and checker.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/graph/attr.h"

namespace kiln::engine::api {

// A loaded plugin library.
struct PluginLibrary {
    std::string path;
    std::string name;
    std::string version;
    std::string abiVersion;           // "1.2"
    std::vector<std::string> ops;     // as a Plugin node names them: "example.GroupNorm"
    std::vector<std::string> losses;  // as the plugin names them: "example.Huber"
    std::vector<std::string> metrics;
};

// An operation, loss or metric of a loaded plugin.
struct PluginEntry {
    std::string name;             // "example.Huber"; a training config says "plugin:example.Huber"
    std::string pluginPath;       // the library it came from
    std::string doc;              // the plugin's one-line description
    std::vector<AttrSpec> attrs;  // its attributes, in the plugin's order
};

// The loaded libraries, in the order they loaded.
std::vector<PluginLibrary> loadedPlugins();
// The errors of every load that failed so far, one per path.
std::vector<Error> pluginLoadFailures();
// Every loaded operation, loss and metric, in the order they loaded.
std::vector<PluginEntry> pluginOps();
std::vector<PluginEntry> pluginLosses();
std::vector<PluginEntry> pluginMetrics();
// One by its name (without "plugin:"), or nothing when no loaded plugin provides it.
std::optional<PluginEntry> findPluginOp(std::string_view name);
std::optional<PluginEntry> findPluginLoss(std::string_view name);
std::optional<PluginEntry> findPluginMetric(std::string_view name);
// The user's plugin folder, where plugins load from at start ("" when there is no home).
std::string userPluginFolder();

// `listener` is called, on the thread that loaded, after every load that changed what is loaded
// or what failed; the id removes it again.
int addPluginListener(std::function<void()> listener);
void removePluginListener(int id);

// Loads the plugin library at `path` (a path loaded before answers with what it holds).
Result<PluginLibrary> loadPlugin(const std::string& path);

// Loads the plugins a program starts with: the user's plugin folder, each entry of
// KILN_PLUGIN_PATH, then `extra` (for the studio, the libraries loaded before with Help > Plugins),
// in that order. A plugin that fails to load does not stop the others. Returns the errors of every
// load that failed so far (pluginLoadFailures()), one per path, for the caller to report.
std::vector<Error> loadStartupPlugins(const std::vector<std::string>& extra);

// One check of an operation or loss. Value: a loss's per-sample values (finite, the same whether
// or not gradients are asked for, each depending on its own sample only) and their mean.
enum class PluginCheckKind { Shape,
                             Forward,
                             Gradient,
                             Value };
enum class PluginCheckOutcome { Passed,
                                Failed,
                                Skipped };
// What a check found: the code from which the studio and kiln-train compose their words
// (app/common/plugin_check_text.h), with the parameters listed in braces. A tensor is named by
// "tensor" (input, output, parameter, predictions or targets) with "input" (its index) or
// "parameter" (its name) where there are several.
enum class PluginCheckFinding {
    OutputShape,             // passed {shape}
    ForwardAgrees,           // passed {count}
    GradientAgrees,          // passed {count}
    LossValuesAgree,         // passed {count, loss}
    NoReference,             // skipped: the plugin has no reference forward
    NoBackward,              // skipped: the plugin has no backward kernel
    NoDefaultCase,           // skipped {reason}: a required attribute, and no declared case
    NoShapesAccepted,        // skipped {reasons}: the loss refuses every shape pair tried
    AttributesNotObject,     // a case's attributes are not a JSON object
    InputsMissing,           // a case gives no input shapes
    InputShapeInvalid,       // {input, shape, max_rank}
    LossShapeRank,           // {tensor, shape, rank, max_rank}
    DimensionBelowOne,       // {tensor, input|parameter, shape, dimension}
    TooManyValues,           // {tensor, input|parameter, shape, limit}
    BatchesDiffer,           // {predictions, targets}
    WorkspaceTooLarge,       // {values, limit}
    EngineError,             // {message, when}: the check's `error` says it; when: "symbolic_batch", "with_gradients" or ""
    SymbolicShapeDiffers,    // {shape, symbolic}
    ReferenceFailed,         // {reason}: the plugin's words
    ForwardMismatch,         // {element, kernel, reference}
    GradientMismatch,        // {tensor, input|parameter, element, backward, numeric}
    LossNotFinite,           // {sample, value}
    LossValueWithGradients,  // {sample, without, with}
    LossNotPerSample,        // {sample}
    LossMeanMismatch,        // {loss, mean}
    LossGradientMismatch,    // {sample, index, gradient, numeric}
};

struct PluginCheckResult {
    std::string caseName;  // the plugin's check case; for a loss, its shapes ("predictions [4,3], targets [4,3]")
    PluginCheckKind kind = PluginCheckKind::Shape;
    PluginCheckOutcome outcome = PluginCheckOutcome::Passed;
    PluginCheckFinding finding = PluginCheckFinding::OutputShape;
    std::vector<std::pair<std::string, std::string>> params;
    std::string detail;     // the engine's English words for the finding
    double worstError = 0;  // Forward: largest |kernel - reference|; Gradient: largest relative error
    // A failed check's error, naming the operation or loss ("op") and the case ("case").
    std::optional<Error> error;
    // A loss case checked on its shapes: the plugin's name for it ("" for a case Kiln made) and
    // the shapes, from which `caseName` is made; all "" otherwise. A loss skipped before any
    // case has the case "defaults" (NoDefaultCase) or "shapes" (NoShapesAccepted).
    std::string declaredCase, predictionsShape, targetsShape;

    // The value of parameter `key`, or "".
    std::string param(const std::string& key) const;
};

// The checks of one operation or loss of a plugin.
struct PluginCheckRun {
    std::string op;  // an operation's name, or a loss's "plugin:<name>" as a training config names it
    std::vector<PluginCheckResult> checks;
};

// Checks every operation and loss of the plugin loaded from `pluginPath` on `threads` threads
// (0: every core); operations first, in the order the plugin lists them. Safe off the GUI thread.
std::vector<PluginCheckRun> checkPlugin(const std::string& pluginPath, int threads = 2);

}  // namespace kiln::engine::api
