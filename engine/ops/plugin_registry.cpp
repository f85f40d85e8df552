// SPDX-License-Identifier: Apache-2.0
// Loading plugin libraries (dlopen), checking their ABI version and descriptors, and converting
// their attribute schemas into AttrSpecs.
#include "engine/ops/plugin_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace kiln::engine::ops {
namespace {

namespace fs = std::filesystem;

Error pluginError(const std::string& path, const std::string& reason) {
    return Error(ErrorCode::PluginError, "plugin " + path + ": " + reason).with("path", path).with("reason", reason);
}

std::string str(const char* s) {
    return s ? std::string(s) : std::string();
}

// `what` is "operation", "loss" or "metric"; `op` its name.
Result<AttrSpec> convertAttr(const KilnAttrSpec& a, const std::string& what, const std::string& op, const std::string& path) {
    const std::string name = str(a.name);
    auto bad = [&](const std::string& why) {
        return pluginError(path, what + " " + op + ", attribute \"" + name + "\": " + why).with("op", op);
    };
    if (name.empty()) return pluginError(path, what + " " + op + " has an attribute without a name").with("op", op);
    if (name == kPluginOpAttr) return bad("the name is reserved for the operation's name");
    AttrSpec s;
    s.name = name;
    s.required = a.required != 0;
    if (a.has_min) s.min = a.min;
    if (a.has_max) s.max = a.max;
    s.doc = str(a.doc);
    if (s.doc.empty()) return bad("it has no doc line");
    switch (a.type) {
    case KILN_ATTR_BOOL:
        s.type = AttrType::Bool;
        s.defaultValue = a.default_int != 0;
        break;
    case KILN_ATTR_INT:
        s.type = AttrType::Int;
        s.defaultValue = static_cast<int64_t>(a.default_int);
        break;
    case KILN_ATTR_FLOAT:
        s.type = AttrType::Float;
        s.defaultValue = a.default_float;
        break;
    case KILN_ATTR_STRING:
        s.type = AttrType::String;
        s.defaultValue = str(a.default_string);
        for (int32_t i = 0; i < a.choice_count; ++i) {
            if (!a.choices || !a.choices[i]) return bad("a choice is missing");
            s.choices.emplace_back(a.choices[i]);
        }
        break;
    case KILN_ATTR_INT_LIST: {
        s.type = AttrType::IntList;
        if (a.default_int_count < 0 || (a.default_int_count > 0 && !a.default_ints)) return bad("its default list is missing");
        s.defaultValue = std::vector<int64_t>(a.default_ints, a.default_ints + a.default_int_count);
        if (a.list_length < 0) return bad("list_length must not be negative");
        s.listLength = a.list_length;
        break;
    }
    default: return bad("unknown type " + std::to_string(a.type));
    }
    if (!s.required) {
        auto ok = coerceAttr(s, s.defaultValue, op);
        if (!ok.ok()) return bad("its default is invalid: " + ok.error().message);
    }
    return s;
}

Result<std::vector<AttrSpec>> convertAttrs(const KilnAttrSpec* attrs, int32_t count, const std::string& what,
                                           const std::string& owner, const std::string& path) {
    if (count < 0 || (count > 0 && !attrs))
        return pluginError(path, what + " " + owner + ": its attribute list is missing").with("op", owner);
    std::vector<AttrSpec> out;
    std::set<std::string> seen;
    for (int32_t i = 0; i < count; ++i) {
        KILN_ASSIGN(AttrSpec s, convertAttr(attrs[i], what, owner, path));
        if (s.name == "type" || s.name == "output" || s.name == "target" || s.name == "weight" || s.name == "name")
            return pluginError(path, what + " " + owner + ", attribute \"" + s.name +
                                         "\": the name is reserved for the training config's own fields")
                .with("op", owner);
        if (!seen.insert(s.name).second)
            return pluginError(path, what + " " + owner + ": the attribute \"" + s.name + "\" is declared twice").with("op", owner);
        out.push_back(std::move(s));
    }
    return out;
}

Status checkName(const std::string& name, const std::string& what, const std::string& path) {
    if (name.empty()) return pluginError(path, "a " + what + " has no name");
    const auto dot = name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size())
        return pluginError(path, what + " " + name + ": the name must be namespaced, e.g. acme." +
                                     (what == "operation" ? "GroupNorm" : what == "loss" ? "Huber" : "FBeta"))
            .with("op", name);
    return {};
}

Result<std::unique_ptr<PluginLoss>> convertLoss(const KilnLossDesc& d, const std::string& path) {
    const std::string name = str(d.name);
    KILN_TRY(checkName(name, "loss", path));
    auto bad = [&](const std::string& why) { return pluginError(path, "loss " + name + ": " + why).with("op", name); };
    if (!d.compute) return bad("it has no compute function");
    if (str(d.doc).empty()) return bad("it has no doc line");
    auto loss = std::make_unique<PluginLoss>();
    loss->name = name;
    loss->pluginPath = path;
    loss->desc = &d;
    KILN_ASSIGN(loss->attrs, convertAttrs(d.attrs, d.attr_count, "loss", name, path));
    return loss;
}

Result<std::unique_ptr<PluginMetric>> convertMetric(const KilnMetricDesc& d, const std::string& path) {
    const std::string name = str(d.name);
    KILN_TRY(checkName(name, "metric", path));
    auto bad = [&](const std::string& why) { return pluginError(path, "metric " + name + ": " + why).with("op", name); };
    if (!d.update || !d.result) return bad("it needs both an update and a result function");
    if (d.state_count < 1 || d.state_count > 4096) return bad("state_count must be 1 to 4096, got " + std::to_string(d.state_count));
    if (str(d.doc).empty()) return bad("it has no doc line");
    auto metric = std::make_unique<PluginMetric>();
    metric->name = name;
    metric->pluginPath = path;
    metric->desc = &d;
    KILN_ASSIGN(metric->attrs, convertAttrs(d.attrs, d.attr_count, "metric", name, path));
    return metric;
}

Result<std::unique_ptr<PluginOp>> convertOp(const KilnOpDesc& d, const std::string& path) {
    const std::string name = str(d.name);
    auto bad = [&](const std::string& why) { return pluginError(path, "operation " + name + ": " + why).with("op", name); };
    if (name.empty()) return pluginError(path, "an operation has no name");
    const auto dot = name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size())
        return bad("the name must be namespaced, e.g. acme.GroupNorm");
    if (!d.shape) return bad("it has no shape function");
    if (!d.cpu_forward) return bad("it has no CPU forward kernel");
    if (d.min_inputs < 0 || (d.max_inputs >= 0 && d.max_inputs < d.min_inputs)) return bad("its input counts are inconsistent");
    if (d.attr_count < 0 || (d.attr_count > 0 && !d.attrs)) return bad("its attribute list is missing");
    if (d.param_count < 0 || (d.param_count > 0 && (!d.params || !d.param_shape)))
        return bad("it declares parameters without their list or param_shape function");
    if (d.check_case_count < 0 || (d.check_case_count > 0 && !d.check_cases)) return bad("its check cases are missing");
    auto op = std::make_unique<PluginOp>();
    op->name = name;
    op->pluginPath = path;
    op->desc = &d;
    std::set<std::string> seen;
    for (int32_t i = 0; i < d.attr_count; ++i) {
        KILN_ASSIGN(AttrSpec s, convertAttr(d.attrs[i], "operation", name, path));
        if (!seen.insert(s.name).second) return bad("the attribute \"" + s.name + "\" is declared twice");
        op->attrs.push_back(std::move(s));
    }
    std::set<std::string> params;
    for (int32_t i = 0; i < d.param_count; ++i) {
        const std::string p = str(d.params[i].name);
        if (p.empty() || p.find('/') != std::string::npos) return bad("parameter " + std::to_string(i) + " needs a name without '/'");
        if (!params.insert(p).second) return bad("the parameter \"" + p + "\" is declared twice");
        if (d.params[i].init < KILN_INIT_ZEROS || d.params[i].init > KILN_INIT_HE_UNIFORM)
            return bad("the parameter \"" + p + "\" has an unknown initialiser");
    }
    return op;
}

}  // namespace

std::string_view pluginTypeName(std::string_view type) {
    return type.starts_with(kPluginPrefix) ? type.substr(kPluginPrefix.size()) : std::string_view();
}

std::string abiVersionText(uint32_t version) {
    return std::to_string(version >> 16) + "." + std::to_string(version & 0xffffu);
}

PluginRegistry& PluginRegistry::global() {
    static PluginRegistry registry;
    return registry;
}

Result<PluginInfo> PluginRegistry::load(const std::string& path) {
    bool changed = false;
    Result<PluginInfo> r = [&] {
        std::lock_guard lock(m_mutex);
        const size_t before = m_plugins.size();
        auto loaded = loadLocked(path);
        if (!loaded.ok()) {
            const std::string key = loaded.error().param("path").empty() ? path : loaded.error().param("path");
            std::erase_if(m_failures, [&](const Error& e) { return e.param("path") == key; });
            m_failures.push_back(loaded.error());
            if (m_failures.back().param("path").empty()) m_failures.back().with("path", key);
        }
        changed = !loaded.ok() || m_plugins.size() != before;
        return loaded;
    }();
    if (changed) notify();
    return r;
}

int PluginRegistry::addListener(Listener listener) {
    std::lock_guard lock(m_listenerMutex);
    const int id = m_nextListener++;
    m_listeners.emplace_back(id, std::move(listener));
    return id;
}

void PluginRegistry::removeListener(int id) {
    std::lock_guard lock(m_listenerMutex);
    std::erase_if(m_listeners, [id](const auto& l) { return l.first == id; });
}

void PluginRegistry::notify() {
    // Called without the lock, so that a listener may load another plugin (and be notified again).
    std::vector<std::pair<int, Listener>> listeners;
    {
        std::lock_guard lock(m_listenerMutex);
        listeners = m_listeners;
    }
    for (const auto& l : listeners) l.second();
}

std::vector<Error> PluginRegistry::failures() const {
    std::lock_guard lock(m_mutex);
    return m_failures;
}

Result<PluginInfo> PluginRegistry::loadLocked(const std::string& path) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::path(path), ec);
    const std::string key = ec ? path : canonical.string();
    for (const auto& p : m_plugins)
        if (p.path == key) return p;
    if (!fs::exists(fs::path(key), ec))
        return Error(ErrorCode::FileNotFound, "plugin " + path + " does not exist").with("path", path);
    // RTLD_LOCAL: two plugins may use the same symbol names. Never dlclose()d: see the header.
    void* handle = dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        return pluginError(key, std::string("cannot be loaded: ") + (why ? why : "unknown reason"));
    }
    dlerror();
    void* sym = dlsym(handle, KILN_PLUGIN_ENTRY_POINT);
    if (!sym)
        return pluginError(key, std::string("exports no ") + KILN_PLUGIN_ENTRY_POINT +
                                    "(); it is not a Kiln plugin")
            .with("symbol", KILN_PLUGIN_ENTRY_POINT);
    auto describe = reinterpret_cast<KilnPluginDescribeFn>(sym);
    const KilnPluginDesc* desc = describe();
    if (!desc) return pluginError(key, std::string(KILN_PLUGIN_ENTRY_POINT) + "() returned nothing");
    return addLocked(desc, key);
}

Result<PluginInfo> PluginRegistry::add(const KilnPluginDesc* desc, const std::string& origin) {
    bool added = false;
    Result<PluginInfo> r = [&]() -> Result<PluginInfo> {
        std::lock_guard lock(m_mutex);
        for (const auto& p : m_plugins)
            if (p.path == origin) return p;
        auto info = addLocked(desc, origin);
        added = info.ok();
        return info;
    }();
    // add() keeps no failures: only a new plugin changes the listing.
    if (added) notify();
    return r;
}

Result<PluginInfo> PluginRegistry::addLocked(const KilnPluginDesc* desc, const std::string& origin) {
    // The version is the first field, readable whatever the rest of the layout is. A plugin of
    // an older minor version has a shorter descriptor: fields it lacks are never read.
    const uint32_t declared = desc->abi_version;
    const uint32_t version = declared < (1u << 16) ? (declared << 16) : declared;  // plain 1 = 1.0
    const uint32_t major = version >> 16, minor = version & 0xffffu;
    if (major != KILN_PLUGIN_ABI_MAJOR || minor > KILN_PLUGIN_ABI_MINOR) {
        const std::string found = abiVersionText(version), expected = abiVersionText(KILN_PLUGIN_ABI_VERSION);
        const std::string accepted = KILN_PLUGIN_ABI_MINOR == 0 ? expected
                                                                : std::to_string(KILN_PLUGIN_ABI_MAJOR) + ".0 to " + expected;
        return pluginError(origin, "it was built for plugin ABI version " + found + ", but this Kiln loads versions " +
                                       accepted + "; rebuild it against this Kiln's kiln/plugin.h")
            .with("expected", expected)
            .with("found", found);
    }
    if (desc->op_count < 0 || (desc->op_count > 0 && !desc->ops)) return pluginError(origin, "its operation list is missing");
    PluginInfo info;
    info.path = origin;
    info.name = str(desc->name);
    info.version = str(desc->version);
    info.abiVersion = version;
    std::vector<std::unique_ptr<PluginOp>> ops;
    for (int32_t i = 0; i < desc->op_count; ++i) {
        KILN_ASSIGN(auto op, convertOp(desc->ops[i], origin));
        for (const auto& other : m_ops)
            if (other->name == op->name)
                return pluginError(origin, "the operation " + op->name + " is already provided by " + other->pluginPath)
                    .with("op", op->name)
                    .with("other", other->pluginPath);
        for (const auto& other : ops)
            if (other->name == op->name)
                return pluginError(origin, "the operation " + op->name + " is described twice").with("op", op->name);
        info.ops.push_back(op->name);
        ops.push_back(std::move(op));
    }
    std::vector<std::unique_ptr<PluginLoss>> losses;
    std::vector<std::unique_ptr<PluginMetric>> metrics;
    if (minor >= 1) {
        if (desc->loss_count < 0 || (desc->loss_count > 0 && !desc->losses)) return pluginError(origin, "its loss list is missing");
        if (desc->metric_count < 0 || (desc->metric_count > 0 && !desc->metrics))
            return pluginError(origin, "its metric list is missing");
        for (int32_t i = 0; i < desc->loss_count; ++i) {
            KILN_ASSIGN(auto loss, convertLoss(desc->losses[i], origin));
            for (const auto& other : m_losses)
                if (other->name == loss->name)
                    return pluginError(origin, "the loss " + loss->name + " is already provided by " + other->pluginPath)
                        .with("op", loss->name)
                        .with("other", other->pluginPath);
            for (const auto& other : losses)
                if (other->name == loss->name)
                    return pluginError(origin, "the loss " + loss->name + " is described twice").with("op", loss->name);
            info.losses.push_back(loss->name);
            losses.push_back(std::move(loss));
        }
        for (int32_t i = 0; i < desc->metric_count; ++i) {
            KILN_ASSIGN(auto metric, convertMetric(desc->metrics[i], origin));
            for (const auto& other : m_metrics)
                if (other->name == metric->name)
                    return pluginError(origin, "the metric " + metric->name + " is already provided by " + other->pluginPath)
                        .with("op", metric->name)
                        .with("other", other->pluginPath);
            for (const auto& other : metrics)
                if (other->name == metric->name)
                    return pluginError(origin, "the metric " + metric->name + " is described twice").with("op", metric->name);
            info.metrics.push_back(metric->name);
            metrics.push_back(std::move(metric));
        }
    }
    if (minor >= 2) {
        if (desc->loss_check_case_count < 0 || (desc->loss_check_case_count > 0 && !desc->loss_check_cases))
            return pluginError(origin, "its loss check cases are missing");
        for (int32_t i = 0; i < desc->loss_check_case_count; ++i) {
            const KilnLossCheckCase& c = desc->loss_check_cases[i];
            const std::string lossName = str(c.loss);
            auto it = std::find_if(losses.begin(), losses.end(), [&](const auto& l) { return l->name == lossName; });
            if (it == losses.end())
                return pluginError(origin, "loss check case " + std::to_string(i + 1) + " (" + str(c.name) + ") names the loss \"" + lossName +
                                               "\", which the plugin does not describe")
                    .with("op", lossName)
                    .with("case", str(c.name));
            (*it)->checkCases.push_back(&c);
        }
    }
    for (auto& op : ops) m_ops.push_back(std::move(op));
    for (auto& l : losses) m_losses.push_back(std::move(l));
    for (auto& m : metrics) m_metrics.push_back(std::move(m));
    m_plugins.push_back(info);
    return info;
}

const PluginOp* PluginRegistry::find(std::string_view name) const {
    std::lock_guard lock(m_mutex);
    for (const auto& op : m_ops)
        if (op->name == name) return op.get();
    return nullptr;
}

const PluginLoss* PluginRegistry::findLoss(std::string_view name) const {
    std::lock_guard lock(m_mutex);
    for (const auto& l : m_losses)
        if (l->name == name) return l.get();
    return nullptr;
}

const PluginMetric* PluginRegistry::findMetric(std::string_view name) const {
    std::lock_guard lock(m_mutex);
    for (const auto& m : m_metrics)
        if (m->name == name) return m.get();
    return nullptr;
}

std::vector<const PluginLoss*> PluginRegistry::losses() const {
    std::lock_guard lock(m_mutex);
    std::vector<const PluginLoss*> out;
    for (const auto& l : m_losses) out.push_back(l.get());
    return out;
}

std::vector<const PluginMetric*> PluginRegistry::metrics() const {
    std::lock_guard lock(m_mutex);
    std::vector<const PluginMetric*> out;
    for (const auto& m : m_metrics) out.push_back(m.get());
    return out;
}

std::vector<PluginInfo> PluginRegistry::plugins() const {
    std::lock_guard lock(m_mutex);
    return m_plugins;
}

std::vector<const PluginOp*> PluginRegistry::ops() const {
    std::lock_guard lock(m_mutex);
    std::vector<const PluginOp*> out;
    for (const auto& op : m_ops) out.push_back(op.get());
    return out;
}

std::string userPluginFolder() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    if (xdg && *xdg) return (fs::path(xdg) / "kiln" / "plugins").string();
    const char* home = std::getenv("HOME");
    if (home && *home) return (fs::path(home) / ".local" / "share" / "kiln" / "plugins").string();
    return {};
}

std::vector<std::string> pluginPathEntries() {
    std::vector<std::string> out;
    const char* env = std::getenv("KILN_PLUGIN_PATH");
    if (!env) return out;
    std::string s(env);
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(':', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

Status loadPluginsFrom(const std::string& path, std::vector<PluginInfo>* loaded, bool keepGoing) {
    std::error_code ec;
    std::vector<std::string> files{path};
    if (fs::is_directory(path, ec)) {
        files.clear();
        for (const auto& e : fs::directory_iterator(path, ec))
            if (e.path().extension() == ".so" && !fs::is_directory(e.path(), ec)) files.push_back(e.path().string());
        if (ec) return Error(ErrorCode::FileRead, "cannot list the plugin folder " + path + ": " + ec.message()).with("path", path);
        std::sort(files.begin(), files.end());
    }
    Status first;
    for (const auto& f : files) {
        auto info = PluginRegistry::global().load(f);
        if (!info.ok()) {
            if (!keepGoing) return std::move(info.error());
            if (first.ok()) first = std::move(info.error());
            continue;
        }
        if (loaded) loaded->push_back(std::move(*info));
    }
    return first;
}

Status loadPlugins(const std::vector<std::string>& extra, std::vector<PluginInfo>* loaded, bool keepGoing) {
    std::error_code ec;
    std::vector<std::string> paths;
    const std::string user = userPluginFolder();
    if (!user.empty() && fs::is_directory(user, ec)) paths.push_back(user);
    for (const auto& p : pluginPathEntries()) paths.push_back(p);
    paths.insert(paths.end(), extra.begin(), extra.end());
    Status first;
    for (const auto& p : paths) {
        Status st = loadPluginsFrom(p, loaded, keepGoing);
        if (st.ok()) continue;
        if (!keepGoing) return st;
        if (first.ok()) first = std::move(st);
    }
    return first;
}

}  // namespace kiln::engine::ops
