// SPDX-License-Identifier: Apache-2.0
// Plugin operations, losses and metrics: shared libraries speaking the C ABI of
// engine/plugin/kiln/plugin.h, loaded once per process and never unloaded (kernels may point into
// them while a plan lives). The registry turns each C schema into the engine's AttrSpecs; the
// Plugin row of the op table (plugin_ops.cpp), plugin losses (plugin_loss.h) and plugin metrics
// (engine/train/plugin_metric.h) dispatch to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/graph/attr.h"
#include "engine/plugin/kiln/plugin.h"

namespace kiln::engine::ops {

// The node attribute of a Plugin node that names its plugin operation.
inline constexpr const char* kPluginOpAttr = "plugin_op";

struct PluginOp {
    std::string name;            // "acme.GroupNorm"
    std::string pluginPath;      // the library it came from
    const KilnOpDesc* desc = nullptr;
    std::vector<AttrSpec> attrs; // the op's schema, in the plugin's order
};

// Training configs name plugin losses and metrics as "plugin:<name>" ("plugin:acme.Huber").
inline constexpr std::string_view kPluginPrefix = "plugin:";
// The plugin name in a "plugin:<name>" type, or "" when `type` has no such prefix.
std::string_view pluginTypeName(std::string_view type);

struct PluginLoss {
    std::string name;            // "acme.Huber"
    std::string pluginPath;
    const KilnLossDesc* desc = nullptr;
    std::vector<AttrSpec> attrs;
    std::vector<const KilnLossCheckCase*> checkCases;  // the plugin's cases for this loss (ABI 1.2)
};

struct PluginMetric {
    std::string name;            // "acme.FBeta"
    std::string pluginPath;
    const KilnMetricDesc* desc = nullptr;
    std::vector<AttrSpec> attrs;
};

struct PluginInfo {
    std::string path;
    std::string name;
    std::string version;
    uint32_t abiVersion = 0;     // (major << 16) | minor; a plugin that declared 1 reads 1.0
    std::vector<std::string> ops;
    std::vector<std::string> losses;
    std::vector<std::string> metrics;
};

// "1.1" for an ABI version as PluginInfo holds it.
std::string abiVersionText(uint32_t version);

class PluginRegistry {
public:
    // The process-wide registry every Plugin node resolves against.
    static PluginRegistry& global();

    // Loads one library. Loading the same path again does nothing. Errors (code PluginError):
    // the library cannot be opened, has no kiln_plugin_describe, declares another ABI version,
    // describes an op, loss or metric badly, or names one another plugin already provides.
    Result<PluginInfo> load(const std::string& path);
    // Registers a descriptor that is already in the process (a plugin linked in statically);
    // `origin` stands for the path in messages and listings.
    Result<PluginInfo> add(const KilnPluginDesc* desc, const std::string& origin);

    const PluginOp* find(std::string_view name) const;
    const PluginLoss* findLoss(std::string_view name) const;
    const PluginMetric* findMetric(std::string_view name) const;
    std::vector<PluginInfo> plugins() const;
    std::vector<const PluginOp*> ops() const;
    std::vector<const PluginLoss*> losses() const;
    std::vector<const PluginMetric*> metrics() const;
    // The errors of loads that failed, latest per path, for the studio's plugin list.
    std::vector<Error> failures() const;

    // Called after every load() or add() that changed what plugins() or failures() return (a
    // new plugin, or a new failure), on the thread that loaded, with no lock held: the studio
    // offers a plugin's operations, losses and metrics as soon as it loads. Returns an id for
    // removeListener(); a listener removed while a notification runs may still get that one.
    using Listener = std::function<void()>;
    int addListener(Listener listener);
    void removeListener(int id);

private:
    Result<PluginInfo> loadLocked(const std::string& path);
    Result<PluginInfo> addLocked(const KilnPluginDesc* desc, const std::string& origin);
    void notify();

    mutable std::mutex m_mutex;
    std::mutex m_listenerMutex;  // apart from m_mutex: listeners read the registry
    std::vector<std::pair<int, Listener>> m_listeners;
    int m_nextListener = 1;
    std::vector<PluginInfo> m_plugins;
    std::vector<Error> m_failures;
    std::vector<std::unique_ptr<PluginOp>> m_ops;  // stable addresses
    std::vector<std::unique_ptr<PluginLoss>> m_losses;
    std::vector<std::unique_ptr<PluginMetric>> m_metrics;
};

// Where plugins are looked for by default: the user's plugin folder
// ($XDG_DATA_HOME/kiln/plugins, else ~/.local/share/kiln/plugins), then each entry of
// KILN_PLUGIN_PATH (':'-separated files or folders).
std::string userPluginFolder();
std::vector<std::string> pluginPathEntries();

// Loads a file, or every *.so in a folder (in name order). A missing user folder is no error;
// other missing paths are (FileNotFound). With `keepGoing`, a failure does not stop the rest:
// the first error is still returned, and every one stays in PluginRegistry::failures().
Status loadPluginsFrom(const std::string& path, std::vector<PluginInfo>* loaded = nullptr, bool keepGoing = false);
// The user folder, KILN_PLUGIN_PATH, then `extra` (the programs' --plugin options), in order.
Status loadPlugins(const std::vector<std::string>& extra, std::vector<PluginInfo>* loaded = nullptr,
                   bool keepGoing = false);

}  // namespace kiln::engine::ops
