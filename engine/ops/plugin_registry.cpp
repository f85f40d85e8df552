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

Result<AttrSpec> convertAttr(const KilnAttrSpec& a, const std::string& op, const std::string& path) {
    const std::string name = str(a.name);
    auto bad = [&](const std::string& why) {
        return pluginError(path, "operation " + op + ", attribute \"" + name + "\": " + why).with("op", op);
    };
    if (name.empty()) return pluginError(path, "operation " + op + " has an attribute without a name").with("op", op);
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
        KILN_ASSIGN(AttrSpec s, convertAttr(d.attrs[i], name, path));
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

PluginRegistry& PluginRegistry::global() {
    static PluginRegistry registry;
    return registry;
}

Result<PluginInfo> PluginRegistry::load(const std::string& path) {
    std::lock_guard lock(m_mutex);
    auto r = loadLocked(path);
    if (!r.ok()) {
        const std::string key = r.error().param("path").empty() ? path : r.error().param("path");
        std::erase_if(m_failures, [&](const Error& e) { return e.param("path") == key; });
        m_failures.push_back(r.error());
        if (m_failures.back().param("path").empty()) m_failures.back().with("path", key);
    }
    return r;
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
    std::lock_guard lock(m_mutex);
    for (const auto& p : m_plugins)
        if (p.path == origin) return p;
    return addLocked(desc, origin);
}

Result<PluginInfo> PluginRegistry::addLocked(const KilnPluginDesc* desc, const std::string& origin) {
    // The version is the first field, readable whatever the rest of the layout is.
    if (desc->abi_version != KILN_PLUGIN_ABI_VERSION)
        return pluginError(origin, "it was built for plugin ABI version " + std::to_string(desc->abi_version) +
                                       ", but this Kiln expects version " + std::to_string(KILN_PLUGIN_ABI_VERSION) +
                                       "; rebuild it against this Kiln's kiln/plugin.h")
            .with("expected", std::to_string(KILN_PLUGIN_ABI_VERSION))
            .with("found", std::to_string(desc->abi_version));
    if (desc->op_count < 0 || (desc->op_count > 0 && !desc->ops)) return pluginError(origin, "its operation list is missing");
    PluginInfo info;
    info.path = origin;
    info.name = str(desc->name);
    info.version = str(desc->version);
    info.abiVersion = desc->abi_version;
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
    for (auto& op : ops) m_ops.push_back(std::move(op));
    m_plugins.push_back(info);
    return info;
}

const PluginOp* PluginRegistry::find(std::string_view name) const {
    std::lock_guard lock(m_mutex);
    for (const auto& op : m_ops)
        if (op->name == name) return op.get();
    return nullptr;
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
