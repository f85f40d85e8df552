// SPDX-License-Identifier: Apache-2.0
// The plugin calls of the api, over ops::PluginRegistry and the plugin checker.
#include "engine/api/plugins.h"

#include <algorithm>

#include "engine/core/thread_pool.h"

namespace kiln::engine::api {

ops::PluginRegistry& pluginRegistry() {
    return ops::PluginRegistry::global();
}

Result<ops::PluginInfo> loadPlugin(const std::string& path) {
    return ops::PluginRegistry::global().load(path);
}

std::vector<Error> loadStartupPlugins(const std::vector<std::string>& extra) {
    const Status first = ops::loadPlugins(extra, nullptr, true);
    std::vector<Error> errors = ops::PluginRegistry::global().failures();
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
    for (const auto* op : ops::PluginRegistry::global().ops()) {
        if (op->pluginPath == pluginPath) opList.push_back(op);
    }
    std::vector<const ops::PluginLoss*> lossList;
    for (const auto* loss : ops::PluginRegistry::global().losses()) {
        if (loss->pluginPath == pluginPath) lossList.push_back(loss);
    }
    ThreadPool pool(threads);
    std::vector<PluginCheckRun> runs;
    for (const auto* op : opList) runs.push_back({op->name, ops::checkPluginOp(*op, pool)});
    for (const auto* loss : lossList) {
        runs.push_back({std::string(ops::kPluginPrefix) + loss->name, ops::checkPluginLoss(*loss, pool)});
    }
    return runs;
}

}  // namespace kiln::engine::api
