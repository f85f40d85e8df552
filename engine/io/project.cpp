// SPDX-License-Identifier: Apache-2.0
// Project file parsing, migration, serialisation and atomic writes.
#include "engine/io/project.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/json_checked.h"

namespace kiln::engine::io {
namespace {
using nlohmann::json;

// 1-based line and column of a byte offset.
std::pair<int, int> lineColumn(const std::string& text, size_t offset) {
    int line = 1, col = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {line, col};
}

Error fieldError(const std::string& path, const std::string& field, const std::string& why) {
    return Error(ErrorCode::ConfigError, field + " " + why).withFile(path).with("field", field).with("reason", why);
}

// Version 1 stored Keras-style layers: {"class_name": "Dense", "name": ..., "config": {...},
// "inbound": [...]}. Version 2 stores nodes as {"name", "op", "inputs", "attrs"}.
void migrateV1(json& doc) {
    if (!doc.contains("graph") || !doc["graph"].contains("layers")) return;
    json nodes = json::array();
    for (auto& layer : doc["graph"]["layers"]) {
        json n = json::object();
        for (auto& [k, v] : layer.items()) {
            if (k == "class_name") n["op"] = v;
            else if (k == "config") n["attrs"] = v;
            else if (k == "inbound") n["inputs"] = v;
            else n[k] = v;
        }
        nodes.push_back(std::move(n));
    }
    doc["graph"].erase("layers");
    doc["graph"]["nodes"] = std::move(nodes);
}

// The line of `"name": "<name>"` after the first `"<section>"` key in `text`, 0 when not found.
int nameLine(const std::string& text, const std::string& section, const std::string& name) {
    std::string needle = "\"" + name + "\"";
    size_t pos = text.find("\"" + section + "\"");
    if (pos == std::string::npos) pos = 0;
    while ((pos = text.find("\"name\"", pos)) != std::string::npos) {
        size_t colon = text.find_first_not_of(" \t\r\n", pos + 6);
        if (colon != std::string::npos && text[colon] == ':') {
            size_t value = text.find_first_not_of(" \t\r\n", colon + 1);
            if (value != std::string::npos && text.compare(value, needle.size(), needle) == 0)
                return lineColumn(text, pos).first;
        }
        pos += 6;
    }
    return 0;
}

// Errors about a layer definition carry the layer's name; point at its line.
Error locateLayer(Error e, const Project& p) {
    if (e.file.empty()) e.file = p.path;
    std::string layer = e.param("layer");
    if (e.line == 0 && !layer.empty()) e.line = nameLine(p.sourceText, "layers", layer);
    return e;
}

}  // namespace

Result<AttrValue> attrFromJson(const json& v, const std::string& node, const std::string& key) {
    if (v.is_boolean()) return AttrValue(v.get<bool>());
    if (v.is_number_integer()) return AttrValue(v.get<int64_t>());
    if (v.is_number()) return AttrValue(v.get<double>());
    if (v.is_string()) return AttrValue(v.get<std::string>());
    if (v.is_array()) {
        std::vector<int64_t> l;
        for (const auto& e : v) {
            if (!e.is_number_integer())
                return Error(ErrorCode::BadAttribute, "attribute \"" + key + "\" of node \"" + node +
                                                          "\" must be a list of integers")
                    .withNode(node)
                    .with("attribute", key)
                    .with("reason", "must be a list of integers");
            l.push_back(e.get<int64_t>());
        }
        return AttrValue(std::move(l));
    }
    return Error(ErrorCode::BadAttribute, "attribute \"" + key + "\" of node \"" + node + "\" has an unsupported value")
        .withNode(node)
        .with("attribute", key)
        .with("reason", "unsupported value");
}

json attrToJson(const AttrValue& v) {
    return std::visit([](const auto& x) { return json(x); }, v);
}

Result<Node> parseNodeJson(const json& j, const std::string& where, const std::string& path,
                           std::map<std::string, std::string>* attrRefs) {
    if (!j.is_object()) return fieldError(path, where, "must be an object");
    Node n;
    // The name first: errors in the other fields name the node.
    if (j.contains("name")) {
        if (!j["name"].is_string()) return fieldError(path, where + ".name", "must be a string");
        n.name = j["name"].get<std::string>();
    }
    for (auto& [key, v] : j.items()) {
        if (key == "name") {
            continue;
        } else if (key == "op") {
            if (!v.is_string()) return fieldError(path, where + ".op", "must be a string");
            n.op = v.get<std::string>();
        } else if (key == "inputs") {
            if (!v.is_array()) return fieldError(path, where + ".inputs", "must be a list of node names");
            for (const auto& e : v) {
                if (!e.is_string()) return fieldError(path, where + ".inputs", "must be a list of node names");
                n.inputs.push_back(e.get<std::string>());
            }
        } else if (key == "attrs") {
            if (!v.is_object()) return fieldError(path, where + ".attrs", "must be an object");
            for (auto& [ak, av] : v.items()) {
                if (attrRefs && av.is_object()) {
                    // {"$attr": "name"}: filled in from the layer instance's attribute.
                    if (av.size() != 1 || !av.contains("$attr") || !av["$attr"].is_string())
                        return fieldError(path, where + ".attrs." + ak,
                                          "must be a value or {\"$attr\": \"<layer attribute>\"}");
                    (*attrRefs)[ak] = av["$attr"].get<std::string>();
                    continue;
                }
                KILN_ASSIGN(AttrValue a, attrFromJson(av, n.name.empty() ? where : n.name, ak));
                n.attrs.set(ak, std::move(a));
            }
        } else if (key == "trainable") {
            if (!v.is_boolean()) return fieldError(path, where + ".trainable", "must be true or false");
            n.trainable = v.get<bool>();
        } else if (key == "lr_multiplier") {
            if (!v.is_number()) return fieldError(path, where + ".lr_multiplier", "must be a number");
            n.lrMultiplier = v.get<double>();
        } else if (key == "share_weights_with") {
            if (!v.is_string()) return fieldError(path, where + ".share_weights_with", "must be a node name");
            n.shareWeightsWith = v.get<std::string>();
        } else {
            n.extra[key] = v;
        }
    }
    if (n.op.empty()) {
        Error e = fieldError(path, where + ".op", "is missing");
        if (!n.name.empty()) e.withNode(n.name);
        return e;
    }
    return n;
}

json nodeToJson(const Node& n) {
    json j = n.extra;
    j["name"] = n.name;
    j["op"] = n.op;
    if (!n.inputs.empty()) j["inputs"] = n.inputs;
    if (!n.attrs.values().empty()) {
        json a = json::object();
        for (const auto& [k, v] : n.attrs.values()) a[k] = attrToJson(v);
        j["attrs"] = a;
    }
    if (!n.trainable) j["trainable"] = false;
    if (n.lrMultiplier != 1.0) j["lr_multiplier"] = n.lrMultiplier;
    if (!n.shareWeightsWith.empty()) j["share_weights_with"] = n.shareWeightsWith;
    return j;
}

int Project::nodeLine(const std::string& node) const {
    // Nodes live in the graph's node list; start there so the project's own name and the layer
    // definitions are skipped.
    size_t graph = sourceText.find("\"graph\"");
    std::string text = graph == std::string::npos ? sourceText : sourceText.substr(graph);
    int offset = graph == std::string::npos ? 0 : lineColumn(sourceText, graph).first - 1;
    int line = nameLine(text, "nodes", node);
    // A node made by expanding a layer instance ("block1/conv") is found by its instance.
    for (std::string n = node; line == 0 && n.rfind('/') != std::string::npos;) {
        n = n.substr(0, n.rfind('/'));
        line = nameLine(text, "nodes", n);
    }
    return line == 0 ? 0 : line + offset;
}

Error locate(Error e, const Project& project) {
    if (e.file.empty()) e.file = project.path;
    if (e.line == 0 && !e.node.empty()) e.line = project.nodeLine(e.node);
    return e;
}

Result<Project> parseProject(const std::string& text, const std::string& path) {
    // The depth limit is far above any real project and keeps copies of the tree (project
    // sections are copied below) safe from stack overflow.
    KILN_ASSIGN(json doc, parseJsonChecked(text, JsonLimits{}, path));
    if (!doc.is_object()) return fieldError(path, "project", "must be a JSON object");
    if (!doc.contains("format") || doc["format"] != "kiln-project")
        return Error(ErrorCode::UnsupportedFormat, "not a Kiln project: \"format\" must be \"kiln-project\"")
            .withFile(path)
            .with("format", doc.contains("format") ? doc["format"].dump() : "none");
    if (!doc.contains("version") || !doc["version"].is_number_integer())
        return fieldError(path, "version", "must be an integer");
    Project p;
    p.path = path;
    p.sourceText = text;
    p.loadedVersion = doc["version"].get<int>();
    if (p.loadedVersion > kProjectVersion || p.loadedVersion < 1)
        return Error(ErrorCode::UnsupportedFormat, "project version " + std::to_string(p.loadedVersion) +
                                                       " is not supported by this Kiln (it reads 1 to " +
                                                       std::to_string(kProjectVersion) + ")")
            .withFile(path)
            .with("version", std::to_string(p.loadedVersion));
    if (p.loadedVersion < 2) migrateV1(doc);

    for (auto& [key, v] : doc.items()) {
        if (key == "format" || key == "version") continue;
        if (key == "name") {
            if (!v.is_string()) return fieldError(path, "name", "must be a string");
            p.name = v.get<std::string>();
        } else if (key == "data") {
            if (!v.is_object()) return fieldError(path, "data", "must be an object");
            p.data = v;
        } else if (key == "training") {
            if (!v.is_object()) return fieldError(path, "training", "must be an object");
            p.training = v;
        } else if (key == "layout") {
            if (!v.is_object()) return fieldError(path, "layout", "must be an object");
            p.layout = v;
        } else if (key == "layers") {
            auto defs = parseLayerDefs(v, path);
            if (!defs.ok()) return locateLayer(defs.error(), p);
            p.layers = std::move(defs.value());
        } else if (key == "graph") {
            if (!v.is_object() || !v.contains("nodes") || !v["nodes"].is_array())
                return fieldError(path, "graph.nodes", "must be a list of nodes");
            size_t i = 0;
            for (const auto& nj : v["nodes"]) {
                auto node = parseNodeJson(nj, "graph.nodes[" + std::to_string(i++) + "]", path);
                if (!node.ok()) return locate(node.error(), p);
                p.graph.nodes.push_back(std::move(node.value()));
            }
            if (v.contains("outputs")) {
                if (!v["outputs"].is_array()) return fieldError(path, "graph.outputs", "must be a list of node names");
                for (const auto& o : v["outputs"]) {
                    if (!o.is_string()) return fieldError(path, "graph.outputs", "must be a list of node names");
                    p.graph.outputs.push_back(o.get<std::string>());
                }
            }
        } else {
            p.extra[key] = v;
        }
    }
    if (p.graph.nodes.empty()) return fieldError(path, "graph.nodes", "must list at least one node");
    if (!p.layers.empty()) {
        auto checked = checkLayers(layerLibrary(p.layers));
        if (!checked.ok()) return locateLayer(checked.error(), p);
    }
    return p;
}

Result<Project> loadProject(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::error_code ec;
        bool exists = std::filesystem::exists(path, ec);
        return Error(exists ? ErrorCode::FileRead : ErrorCode::FileNotFound,
                     exists ? "cannot read the project file" : "the project file does not exist")
            .withFile(path)
            .with("path", path);
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return parseProject(ss.str(), path);
}

std::string serializeProject(const Project& p) {
    json doc = json::object();
    doc["format"] = "kiln-project";
    doc["version"] = kProjectVersion;
    if (!p.name.empty()) doc["name"] = p.name;
    json nodes = json::array();
    for (const auto& n : p.graph.nodes) nodes.push_back(nodeToJson(n));
    if (!p.layers.empty()) doc["layers"] = layerDefsToJson(p.layers);
    doc["graph"] = {{"nodes", nodes}};
    if (!p.graph.outputs.empty()) doc["graph"]["outputs"] = p.graph.outputs;
    doc["data"] = p.data;
    doc["training"] = p.training;
    if (!p.layout.empty()) doc["layout"] = p.layout;
    for (auto& [k, v] : p.extra.items()) doc[k] = v;
    return doc.dump(2) + "\n";
}

Result<Graph> modelGraph(const Project& project) {
    auto g = expandLayers(project.graph, layerLibrary(project.layers));
    if (!g.ok()) return locate(g.error(), project);
    return g;
}

Status writeFileAtomic(const std::string& path, const std::string& bytes) {
    namespace fs = std::filesystem;
    fs::path target(path);
    fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    auto fail = [&](const std::string& why) {
        return Error(ErrorCode::FileWrite, "cannot write the file: " + why).withFile(path).with("path", path).with("reason", why);
    };
    if (fd < 0) return fail(std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (w < 0) {
            std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(name.data());
            return fail(why);
        }
        done += static_cast<size_t>(w);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        std::string why = std::strerror(errno);
        ::unlink(name.data());
        return fail(why);
    }
    ::chmod(name.data(), 0644);
    if (std::rename(name.data(), path.c_str()) != 0) {
        std::string why = std::strerror(errno);
        ::unlink(name.data());
        return fail(why);
    }
    return {};
}

Status saveProject(const Project& project, const std::string& path) {
    return writeFileAtomic(path, serializeProject(project));
}

std::string resolveDataPath(const std::string& raw, const std::string& projectPath) {
    std::string out;
    const char* home = std::getenv("HOME");
    for (size_t i = 0; i < raw.size();) {
        if (raw.compare(i, 2, "${") == 0) {
            size_t end = raw.find('}', i);
            if (end == std::string::npos) {
                out += raw.substr(i);
                break;
            }
            std::string expr = raw.substr(i + 2, end - i - 2);
            std::string name = expr, fallback;
            if (auto d = expr.find(":-"); d != std::string::npos) {
                name = expr.substr(0, d);
                fallback = expr.substr(d + 2);
            }
            const char* v = std::getenv(name.c_str());
            if (v && *v) out += v;
            else if (!fallback.empty()) out += fallback;
            else if (name == "KILN_DATA") out += std::string(home ? home : "") + "/.cache/kiln/data";
            i = end + 1;
        } else {
            out += raw[i++];
        }
    }
    if (!out.empty() && out[0] == '~' && home) out = std::string(home) + out.substr(1);
    std::filesystem::path p(out);
    if (p.is_relative() && !projectPath.empty())
        p = std::filesystem::path(projectPath).parent_path() / p;
    return p.lexically_normal().string();
}

}  // namespace kiln::engine::io
