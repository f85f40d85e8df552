// SPDX-License-Identifier: Apache-2.0
// Plugins as the studio manages them: the registry of what is loaded (operations, losses,
// metrics; plugins are never unloaded), loading one, and checking a loaded plugin's operations and
// losses against finite differences and its own shape rules.
#pragma once

#include <string>
#include <vector>

#include "engine/ops/plugin_check.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::engine::api {

// The process's plugin registry (ops::PluginRegistry::global()).
ops::PluginRegistry& pluginRegistry();

// Loads the plugin library at `path` (a path loaded before answers with what it holds).
Result<ops::PluginInfo> loadPlugin(const std::string& path);

// Loads the plugins a program starts with: the user's plugin folder, each entry of
// KILN_PLUGIN_PATH, then `extra` (for the studio, the libraries loaded before with Help > Plugins),
// in that order. A plugin that fails to load does not stop the others. Returns the errors of every
// load that failed so far (PluginRegistry::failures()), one per path, for the caller to report.
std::vector<Error> loadStartupPlugins(const std::vector<std::string>& extra);

// The checks of one operation or loss of a plugin.
struct PluginCheckRun {
    std::string op;  // an operation's name, or a loss's "plugin:<name>" as a training config names it
    std::vector<ops::PluginCheck> checks;
};

// Checks every operation and loss of the plugin loaded from `pluginPath` on `threads` threads;
// operations first, in the order the plugin lists them. Safe off the GUI thread.
std::vector<PluginCheckRun> checkPlugin(const std::string& pluginPath, int threads = 2);

}  // namespace kiln::engine::api
