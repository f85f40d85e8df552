// SPDX-License-Identifier: Apache-2.0
// The plugin calls of the api, over ops::PluginRegistry and the plugin checker: their values
// copied into the api's own types.
#include "engine/api/plugins.h"

#include <algorithm>

#include "engine/core/thread_pool.h"
#include "engine/ops/plugin_check.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::engine::api {
namespace {

ops::PluginRegistry& registry() {
    return ops::PluginRegistry::global();
}

PluginLibrary library(const ops::PluginInfo& p) {
    return {p.path, p.name, p.version, ops::abiVersionText(p.abiVersion), p.ops, p.losses, p.metrics};
}

template <typename Desc>
PluginEntry entry(const Desc& d) {
    return {d.name, d.pluginPath, d.desc && d.desc->doc ? std::string(d.desc->doc) : std::string(), d.attrs};
}

template <typename Desc>
std::vector<PluginEntry> entries(const std::vector<const Desc*>& list) {
    std::vector<PluginEntry> out;
    out.reserve(list.size());
    for (const auto* d : list) out.push_back(entry(*d));
    return out;
}

PluginCheckKind kind(ops::PluginCheck::Kind k) {
    using K = ops::PluginCheck::Kind;
    switch (k) {
    case K::Shape: return PluginCheckKind::Shape;
    case K::Forward: return PluginCheckKind::Forward;
    case K::Gradient: return PluginCheckKind::Gradient;
    case K::Value: return PluginCheckKind::Value;
    }
    return PluginCheckKind::Shape;
}

PluginCheckOutcome outcome(ops::PluginCheck::Outcome o) {
    using O = ops::PluginCheck::Outcome;
    switch (o) {
    case O::Passed: return PluginCheckOutcome::Passed;
    case O::Failed: return PluginCheckOutcome::Failed;
    case O::Skipped: return PluginCheckOutcome::Skipped;
    }
    return PluginCheckOutcome::Failed;
}

PluginCheckFinding finding(ops::PluginCheck::Finding f) {
    using F = ops::PluginCheck::Finding;
    using A = PluginCheckFinding;
    switch (f) {
    case F::OutputShape: return A::OutputShape;
    case F::ForwardAgrees: return A::ForwardAgrees;
    case F::GradientAgrees: return A::GradientAgrees;
    case F::LossValuesAgree: return A::LossValuesAgree;
    case F::NoReference: return A::NoReference;
    case F::NoBackward: return A::NoBackward;
    case F::NoDefaultCase: return A::NoDefaultCase;
    case F::NoShapesAccepted: return A::NoShapesAccepted;
    case F::AttributesNotObject: return A::AttributesNotObject;
    case F::InputsMissing: return A::InputsMissing;
    case F::InputShapeInvalid: return A::InputShapeInvalid;
    case F::LossShapeRank: return A::LossShapeRank;
    case F::DimensionBelowOne: return A::DimensionBelowOne;
    case F::TooManyValues: return A::TooManyValues;
    case F::BatchesDiffer: return A::BatchesDiffer;
    case F::WorkspaceTooLarge: return A::WorkspaceTooLarge;
    case F::EngineError: return A::EngineError;
    case F::SymbolicShapeDiffers: return A::SymbolicShapeDiffers;
    case F::ReferenceFailed: return A::ReferenceFailed;
    case F::ForwardMismatch: return A::ForwardMismatch;
    case F::GradientMismatch: return A::GradientMismatch;
    case F::LossNotFinite: return A::LossNotFinite;
    case F::LossValueWithGradients: return A::LossValueWithGradients;
    case F::LossNotPerSample: return A::LossNotPerSample;
    case F::LossMeanMismatch: return A::LossMeanMismatch;
    case F::LossGradientMismatch: return A::LossGradientMismatch;
    }
    return A::EngineError;
}

std::vector<PluginCheckResult> results(std::vector<ops::PluginCheck> checks) {
    std::vector<PluginCheckResult> out;
    out.reserve(checks.size());
    for (auto& c : checks) {
        out.push_back({std::move(c.caseName), kind(c.kind), outcome(c.outcome), finding(c.finding), std::move(c.params),
                       std::move(c.detail), c.worstError, std::move(c.error), std::move(c.declaredCase),
                       std::move(c.predictionsShape), std::move(c.targetsShape)});
    }
    return out;
}

}  // namespace

std::string PluginCheckResult::param(const std::string& key) const {
    for (const auto& [k, v] : params)
        if (k == key) return v;
    return {};
}

std::vector<PluginLibrary> loadedPlugins() {
    std::vector<PluginLibrary> out;
    for (const auto& p : registry().plugins()) out.push_back(library(p));
    return out;
}

std::vector<Error> pluginLoadFailures() {
    return registry().failures();
}

std::vector<PluginEntry> pluginOps() {
    return entries(registry().ops());
}

std::vector<PluginEntry> pluginLosses() {
    return entries(registry().losses());
}

std::vector<PluginEntry> pluginMetrics() {
    return entries(registry().metrics());
}

std::optional<PluginEntry> findPluginOp(std::string_view name) {
    const auto* d = registry().find(name);
    return d ? std::optional<PluginEntry>(entry(*d)) : std::nullopt;
}

std::optional<PluginEntry> findPluginLoss(std::string_view name) {
    const auto* d = registry().findLoss(name);
    return d ? std::optional<PluginEntry>(entry(*d)) : std::nullopt;
}

std::optional<PluginEntry> findPluginMetric(std::string_view name) {
    const auto* d = registry().findMetric(name);
    return d ? std::optional<PluginEntry>(entry(*d)) : std::nullopt;
}

std::string userPluginFolder() {
    return ops::userPluginFolder();
}

int addPluginListener(std::function<void()> listener) {
    return registry().addListener(std::move(listener));
}

void removePluginListener(int id) {
    registry().removeListener(id);
}

Result<PluginLibrary> loadPlugin(const std::string& path) {
    auto info = registry().load(path);
    if (!info.ok()) return info.error();
    return library(*info);
}

std::vector<Error> loadStartupPlugins(const std::vector<std::string>& extra) {
    const Status first = ops::loadPlugins(extra, nullptr, true);
    std::vector<Error> errors = registry().failures();
    // A library that fails to load is kept among the registry's failures; a folder that cannot be
    // listed is not, and is reported from the status.
    if (!first.ok()) {
        const bool known = std::any_of(errors.begin(), errors.end(),
                                       [&](const Error& e) { return e.message == first.error().message; });
        if (!known) errors.push_back(first.error());
    }
    return errors;
}

std::vector<PluginCheckRun> checkPlugin(const std::string& pluginPath, int threads) {
    // The descriptors stay valid: plugins are never unloaded.
    std::vector<const ops::PluginOp*> opList;
    for (const auto* op : registry().ops()) {
        if (op->pluginPath == pluginPath) opList.push_back(op);
    }
    std::vector<const ops::PluginLoss*> lossList;
    for (const auto* loss : registry().losses()) {
        if (loss->pluginPath == pluginPath) lossList.push_back(loss);
    }
    ThreadPool pool(threads);
    std::vector<PluginCheckRun> runs;
    for (const auto* op : opList) runs.push_back({op->name, results(ops::checkPluginOp(*op, pool))});
    for (const auto* loss : lossList) {
        runs.push_back({std::string(ops::kPluginPrefix) + loss->name, results(ops::checkPluginLoss(*loss, pool))});
    }
    return runs;
}

}  // namespace kiln::engine::api
