// SPDX-License-Identifier: Apache-2.0
// Composite layers: reading and writing definitions, checking them, and expanding instances
// into primitive nodes named "<instance>/<node>".
#include "engine/io/layers.h"

#include <algorithm>
#include <functional>
#include <set>

#include "engine/core/json_checked.h"
#include "engine/io/project.h"
#include "engine/ops/op_table.h"

namespace kiln::engine::io {

// resources/layers/library.json, compiled in by engine/CMakeLists.txt.
const char* bundledLayersJson();

namespace {
using nlohmann::json;

// Far above any real model; they keep a hostile file from exhausting the stack (nesting) or the
// memory (instances of instances multiply).
constexpr size_t kMaxLayerDepth = 64;
constexpr size_t kMaxExpandedNodes = 200000;

Error layerError(const std::string& path, const std::string& field, const std::string& layer, const std::string& why) {
    std::string who = layer.empty() ? "" : "layer \"" + layer + "\": ";
    Error e(ErrorCode::ConfigError, who + field + " " + why);
    if (!path.empty()) e.withFile(path);
    e.with("field", field).with("reason", why);
    if (!layer.empty()) e.with("layer", layer);
    return e;
}

// A reference "node" or "instance:output" split into its parts.
std::pair<std::string, std::string> splitRef(const std::string& ref) {
    auto colon = ref.find(':');
    if (colon == std::string::npos) return {ref, ""};
    return {ref.substr(0, colon), ref.substr(colon + 1)};
}

const char* typeWord(AttrType t) {
    switch (t) {
    case AttrType::Bool: return "bool";
    case AttrType::Int: return "int";
    case AttrType::Float: return "float";
    case AttrType::String: return "string";
    case AttrType::IntList: return "ints";
    }
    return "?";
}

Result<AttrSpec> parseAttribute(const json& j, const std::string& field, const std::string& path,
                                const std::string& layer) {
    if (!j.is_object()) return layerError(path, field, layer, "must be an object");
    AttrSpec s;
    if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty())
        return layerError(path, field + ".name", layer, "must be a non-empty string");
    s.name = j["name"].get<std::string>();
    if (!j.contains("type") || !j["type"].is_string())
        return layerError(path, field + ".type", layer, "must be one of bool, int, float, string, ints");
    const std::string type = j["type"].get<std::string>();
    if (type == "bool") s.type = AttrType::Bool;
    else if (type == "int") s.type = AttrType::Int;
    else if (type == "float") s.type = AttrType::Float;
    else if (type == "string") s.type = AttrType::String;
    else if (type == "ints") s.type = AttrType::IntList;
    else return layerError(path, field + ".type", layer, "must be one of bool, int, float, string, ints, got \"" + type + "\"");
    for (auto& [k, v] : j.items()) {
        if (k == "name" || k == "type" || k == "default") continue;
        if (k == "min" || k == "max") {
            if (!v.is_number()) return layerError(path, field + "." + k, layer, "must be a number");
            (k == "min" ? s.min : s.max) = v.get<double>();
        } else if (k == "choices") {
            if (!v.is_array() || v.empty()) return layerError(path, field + ".choices", layer, "must be a list of strings");
            for (const auto& c : v) {
                if (!c.is_string()) return layerError(path, field + ".choices", layer, "must be a list of strings");
                s.choices.push_back(c.get<std::string>());
            }
        } else if (k == "length") {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 8)
                return layerError(path, field + ".length", layer, "must be an integer from 0 to 8");
            s.listLength = v.get<int>();
        } else if (k == "doc") {
            if (!v.is_string()) return layerError(path, field + ".doc", layer, "must be a string");
            s.doc = v.get<std::string>();
        } else {
            return layerError(path, field + "." + k, layer, "is not a known setting of a layer attribute");
        }
    }
    const std::string who = layer + "." + s.name;
    if (j.contains("default")) {
        auto raw = attrFromJson(j["default"], who, s.name);
        if (!raw.ok()) return layerError(path, field + ".default", layer, "must be a " + std::string(typeWord(s.type)));
        auto v = coerceAttr(s, raw.value(), layer);
        if (!v.ok()) return layerError(path, field + ".default", layer, v.error().param("reason"));
        s.defaultValue = std::move(v.value());
    } else {
        s.required = true;
        switch (s.type) {
        case AttrType::Bool: s.defaultValue = false; break;
        case AttrType::Int: s.defaultValue = int64_t{0}; break;
        case AttrType::Float: s.defaultValue = 0.0; break;
        case AttrType::String: s.defaultValue = std::string(); break;
        case AttrType::IntList: s.defaultValue = std::vector<int64_t>(); break;
        }
    }
    return s;
}

Result<std::vector<std::string>> stringList(const json& j, const std::string& field, const std::string& path,
                                            const std::string& layer) {
    if (!j.is_array() || j.empty()) return layerError(path, field, layer, "must be a non-empty list of names");
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& e : j) {
        if (!e.is_string() || e.get<std::string>().empty())
            return layerError(path, field, layer, "must be a non-empty list of names");
        if (!seen.insert(e.get<std::string>()).second)
            return layerError(path, field, layer, "lists \"" + e.get<std::string>() + "\" twice");
        out.push_back(e.get<std::string>());
    }
    return out;
}

Result<LayerDef> parseLayer(const json& j, const std::string& field, const std::string& path) {
    if (!j.is_object()) return layerError(path, field, "", "must be an object");
    LayerDef d;
    if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty())
        return layerError(path, field + ".name", "", "must be a non-empty string");
    d.name = j["name"].get<std::string>();
    if (d.name.find_first_of("/:") != std::string::npos)
        return layerError(path, field + ".name", d.name, "must not contain \"/\" or \":\"");
    if (ops::findOp(d.name))
        return layerError(path, field + ".name", d.name, "is the name of a built-in op");
    for (auto& [k, v] : j.items()) {
        if (k == "name") continue;
        if (k == "doc") {
            if (!v.is_string()) return layerError(path, field + ".doc", d.name, "must be a string");
            d.doc = v.get<std::string>();
        } else if (k == "inputs") {
            KILN_ASSIGN(d.inputs, stringList(v, field + ".inputs", path, d.name));
        } else if (k == "outputs") {
            KILN_ASSIGN(d.outputs, stringList(v, field + ".outputs", path, d.name));
        } else if (k == "attributes") {
            if (!v.is_array()) return layerError(path, field + ".attributes", d.name, "must be a list");
            for (size_t i = 0; i < v.size(); ++i) {
                const std::string f = field + ".attributes[" + std::to_string(i) + "]";
                KILN_ASSIGN(AttrSpec s, parseAttribute(v[i], f, path, d.name));
                if (d.attribute(s.name)) return layerError(path, f + ".name", d.name, "repeats \"" + s.name + "\"");
                d.attributes.push_back(std::move(s));
            }
        } else if (k == "nodes") {
            if (!v.is_array() || v.empty()) return layerError(path, field + ".nodes", d.name, "must be a non-empty list of nodes");
            for (size_t i = 0; i < v.size(); ++i) {
                const std::string f = field + ".nodes[" + std::to_string(i) + "]";
                LayerNode ln;
                auto n = parseNodeJson(v[i], f, path, &ln.attrRefs);
                if (!n.ok()) return n.error().with("layer", d.name);
                ln.node = std::move(n.value());
                d.nodes.push_back(std::move(ln));
            }
        } else {
            return layerError(path, field + "." + k, d.name, "is not a known setting of a layer");
        }
    }
    if (d.inputs.empty()) return layerError(path, field + ".inputs", d.name, "must be a non-empty list of names");
    if (d.outputs.empty()) return layerError(path, field + ".outputs", d.name, "must be a non-empty list of names");
    if (d.nodes.empty()) return layerError(path, field + ".nodes", d.name, "must be a non-empty list of nodes");

    // Names inside the layer: ports and nodes share one namespace.
    std::set<std::string> names(d.inputs.begin(), d.inputs.end());
    for (const auto& in : d.inputs)
        if (in.find_first_of("/:") != std::string::npos)
            return layerError(path, field + ".inputs", d.name, "\"" + in + "\" must not contain \"/\" or \":\"");
    for (size_t i = 0; i < d.nodes.size(); ++i) {
        const Node& n = d.nodes[i].node;
        const std::string f = field + ".nodes[" + std::to_string(i) + "]";
        if (n.name.empty()) return layerError(path, f + ".name", d.name, "is missing");
        if (n.name.find_first_of("/:") != std::string::npos)
            return layerError(path, f + ".name", d.name, "\"" + n.name + "\" must not contain \"/\" or \":\"");
        if (!names.insert(n.name).second)
            return layerError(path, f + ".name", d.name, "\"" + n.name + "\" is used twice (by a node or an input)");
        if (n.op == "Input")
            return layerError(path, f + ".op", d.name, "cannot be Input: a layer receives data through its inputs");
        for (const auto& [attr, ref] : d.nodes[i].attrRefs)
            if (!d.attribute(ref))
                return layerError(path, f + ".attrs." + attr, d.name, "refers to \"" + ref + "\", which is not an attribute of the layer");
    }
    auto known = [&](const std::string& ref) { return names.count(splitRef(ref).first) != 0; };
    for (size_t i = 0; i < d.nodes.size(); ++i) {
        const Node& n = d.nodes[i].node;
        const std::string f = field + ".nodes[" + std::to_string(i) + "]";
        for (const auto& in : n.inputs)
            if (!known(in))
                return layerError(path, f + ".inputs", d.name, "names \"" + in + "\", which is neither an input nor a node of the layer");
        if (!n.shareWeightsWith.empty() &&
            (std::find(d.inputs.begin(), d.inputs.end(), n.shareWeightsWith) != d.inputs.end() || !known(n.shareWeightsWith) ||
             n.shareWeightsWith.find(':') != std::string::npos))
            return layerError(path, f + ".share_weights_with", d.name, "names \"" + n.shareWeightsWith + "\", which is not a node of the layer");
    }
    for (const auto& out : d.outputs)
        if (!known(out) || std::find(d.inputs.begin(), d.inputs.end(), out) != d.inputs.end())
            return layerError(path, field + ".outputs", d.name, "names \"" + out + "\", which is not a node of the layer");
    return d;
}

json attributeToJson(const AttrSpec& s) {
    json j = {{"name", s.name}, {"type", typeWord(s.type)}};
    if (!s.required) j["default"] = attrToJson(s.defaultValue);
    if (s.min) j["min"] = *s.min;
    if (s.max) j["max"] = *s.max;
    if (!s.choices.empty()) j["choices"] = s.choices;
    if (s.listLength) j["length"] = s.listLength;
    if (!s.doc.empty()) j["doc"] = s.doc;
    return j;
}

bool ownsParams(const std::string& op) {
    const ops::OpDef* def = ops::findOp(op);
    return def && def->params;
}

struct Context {
    bool trainable = true;
    double lrMultiplier = 1.0;
    std::string shareWith;  // "<other instance>/" whose counterparts' parameters are used
};

class Expander {
public:
    explicit Expander(const LayerLibrary& lib) : m_lib(lib) {}

    Result<Graph> run(const Graph& g) {
        std::vector<LayerNode> top;
        for (const auto& n : g.nodes) top.push_back(LayerNode{n, {}});
        std::map<std::string, std::string> refs;
        std::map<std::string, std::vector<std::string>> multi;
        KILN_TRY(scopeRefs(top, "", refs, multi));
        KILN_TRY(scope(top, "", refs, multi, {}, {}, Context{}, true));
        for (const auto& o : g.outputs) {
            KILN_ASSIGN(std::string r, resolve(o, "", refs, multi, {}, true, "model output"));
            m_out.outputs.push_back(std::move(r));
        }
        return std::move(m_out);
    }

private:
    const LayerDef* layerOf(const Node& n) const { return isLayerOp(m_lib, n.op) ? m_lib.find(n.op) : nullptr; }

    // Path, relative to an instance of `layer`, of the primitive node producing output `out`.
    std::string relativeOutput(const LayerDef& layer, const std::string& out) const {
        auto [nodeName, port] = splitRef(out);
        for (const auto& ln : layer.nodes) {
            if (ln.node.name != nodeName) continue;
            const LayerDef* inner = layerOf(ln.node);
            if (!inner) return nodeName;
            return nodeName + "/" + relativeOutput(*inner, port.empty() ? inner->outputs[0] : port);
        }
        return nodeName;
    }

    // How the nodes of one scope are referred to: plain nodes by name, instances by name (one
    // output) or "name:output" (several).
    Status scopeRefs(const std::vector<LayerNode>& nodes, const std::string& prefix,
                     std::map<std::string, std::string>& refs, std::map<std::string, std::vector<std::string>>& multi) {
        for (const auto& ln : nodes) {
            const Node& n = ln.node;
            const LayerDef* layer = layerOf(n);
            if (!layer) {
                refs[n.name] = prefix + n.name;
                continue;
            }
            if (n.name.find(':') != std::string::npos)
                return Error(ErrorCode::BadAttribute, "node \"" + prefix + n.name + "\" uses layer " + layer->name +
                                                          ": the name of a layer instance must not contain \":\"")
                    .withNode(prefix + n.name)
                    .with("attribute", "name");
            for (const auto& out : layer->outputs) {
                std::string key = layer->outputs.size() == 1 ? n.name : n.name + ":" + out;
                refs[key] = prefix + n.name + "/" + relativeOutput(*layer, out);
            }
            if (layer->outputs.size() > 1) multi[n.name] = layer->outputs;
        }
        return {};
    }

    Result<std::string> resolve(const std::string& ref, const std::string& node, const std::map<std::string, std::string>& refs,
                                const std::map<std::string, std::vector<std::string>>& multi,
                                const std::map<std::string, std::string>& ports, bool top, const std::string& what) {
        if (auto it = refs.find(ref); it != refs.end()) return it->second;
        if (auto it = ports.find(ref); it != ports.end()) return it->second;
        auto [base, port] = splitRef(ref);
        if (auto it = multi.find(base); it != multi.end()) {
            std::string list;
            for (const auto& o : it->second) list += (list.empty() ? "\"" : ", \"") + base + ":" + o + "\"";
            std::string why = port.empty() ? "a layer instance with several outputs: use one of " + list
                                            : "which has no output \"" + port + "\" (its outputs: " + list + ")";
            std::string subject = node.empty() ? what + " \"" + ref + "\"" : "node \"" + node + "\"";
            return Error(ErrorCode::DanglingInput, subject + " refers to \"" + ref + "\", " + why)
                .withNode(node.empty() ? ref : node)
                .with("input", ref);
        }
        if (top) return ref;  // left for the structure check, which names the node
        return Error(ErrorCode::DanglingInput, "node \"" + node + "\" takes input from \"" + ref + "\", which does not exist")
            .withNode(node)
            .with("input", ref);
    }

    Result<std::map<std::string, AttrValue>> instanceAttrs(const LayerDef& layer, const Node& n, const std::string& name) {
        std::map<std::string, AttrValue> values;
        for (const auto& [k, v] : n.attrs.values()) {
            const AttrSpec* spec = layer.attribute(k);
            if (!spec) {
                std::string list;
                for (const auto& a : layer.attributes) list += (list.empty() ? "" : ", ") + a.name;
                return Error(ErrorCode::UnknownAttribute, "node \"" + name + "\" sets \"" + k + "\", which is not an attribute of layer " +
                                                              layer.name + (list.empty() ? " (it has none)" : " (its attributes: " + list + ")"))
                    .withNode(name)
                    .with("attribute", k);
            }
            KILN_ASSIGN(values[k], coerceAttr(*spec, v, name));
        }
        for (const auto& spec : layer.attributes) {
            if (values.count(spec.name)) continue;
            if (spec.required)
                return Error(ErrorCode::BadAttribute, "attribute \"" + spec.name + "\" of node \"" + name + "\" is required by layer " + layer.name)
                    .withNode(name)
                    .with("attribute", spec.name)
                    .with("reason", "is required");
            values[spec.name] = spec.defaultValue;
        }
        return values;
    }

    Status scope(const std::vector<LayerNode>& nodes, const std::string& prefix, const std::map<std::string, std::string>& refs,
                 const std::map<std::string, std::vector<std::string>>& multi, const std::map<std::string, std::string>& ports,
                 const std::map<std::string, AttrValue>& values, const Context& ctx, bool top) {
        for (const auto& ln : nodes) {
            Node n = ln.node;
            const std::string name = prefix + n.name;
            for (const auto& [attr, ref] : ln.attrRefs) n.attrs.set(attr, values.at(ref));
            std::vector<std::string> inputs;
            for (const auto& in : n.inputs) {
                KILN_ASSIGN(std::string r, resolve(in, name, refs, multi, ports, top, ""));
                inputs.push_back(std::move(r));
            }
            const bool trainable = n.trainable && ctx.trainable;
            const double lr = n.lrMultiplier * ctx.lrMultiplier;
            const LayerDef* layer = layerOf(n);
            if (!layer) {
                n.name = name;
                n.inputs = std::move(inputs);
                n.trainable = trainable;
                n.lrMultiplier = lr;
                if (!n.shareWeightsWith.empty()) n.shareWeightsWith = top ? n.shareWeightsWith : prefix + n.shareWeightsWith;
                else if (!ctx.shareWith.empty() && ownsParams(n.op)) n.shareWeightsWith = ctx.shareWith + ln.node.name;
                m_out.nodes.push_back(std::move(n));
                if (m_out.nodes.size() > kMaxExpandedNodes)
                    return Error(ErrorCode::Unsupported, "expanding the layer instances gives more than " +
                                                             std::to_string(kMaxExpandedNodes) + " nodes")
                        .withNode(name)
                        .with("what", "more than " + std::to_string(kMaxExpandedNodes) + " nodes");
                continue;
            }
            if (std::find(m_stack.begin(), m_stack.end(), layer->name) != m_stack.end()) {
                std::string chain;
                for (const auto& s : m_stack) chain += s + " -> ";
                return Error(ErrorCode::Cycle, "node \"" + name + "\": layer " + layer->name + " contains itself (" + chain + layer->name + ")")
                    .withNode(name)
                    .with("chain", chain + layer->name);
            }
            if (inputs.size() != layer->inputs.size()) {
                std::string expected = std::to_string(layer->inputs.size());
                std::string portList;
                for (const auto& p : layer->inputs) portList += (portList.empty() ? "" : ", ") + p;
                return Error(ErrorCode::ArityMismatch, layer->name + " \"" + name + "\" takes " + expected + " input(s) (" + portList +
                                                           ") but has " + std::to_string(inputs.size()))
                    .withNode(name)
                    .with("expected", expected)
                    .with("got", std::to_string(inputs.size()));
            }
            KILN_ASSIGN(auto instValues, instanceAttrs(*layer, n, name));
            Context inner{trainable, lr, ""};
            if (!n.shareWeightsWith.empty()) {
                const Node* other = nullptr;
                for (const auto& o : nodes)
                    if (o.node.name == n.shareWeightsWith) other = &o.node;
                if (!other || other->op != n.op || other->name == n.name)
                    return Error(ErrorCode::BadAttribute, "node \"" + name + "\" shares weights with \"" + prefix + n.shareWeightsWith +
                                                              "\", which is not another instance of layer " + layer->name)
                        .withNode(name)
                        .with("attribute", "share_weights_with")
                        .with("reason", "not another instance of " + layer->name);
                inner.shareWith = prefix + n.shareWeightsWith + "/";
            } else if (!ctx.shareWith.empty()) {
                inner.shareWith = ctx.shareWith + n.name + "/";
            }
            std::map<std::string, std::string> innerPorts;
            for (size_t k = 0; k < inputs.size(); ++k) innerPorts[layer->inputs[k]] = inputs[k];
            std::map<std::string, std::string> innerRefs;
            std::map<std::string, std::vector<std::string>> innerMulti;
            KILN_TRY(scopeRefs(layer->nodes, name + "/", innerRefs, innerMulti));
            m_stack.push_back(layer->name);
            KILN_TRY(scope(layer->nodes, name + "/", innerRefs, innerMulti, innerPorts, instValues, inner, false));
            m_stack.pop_back();
        }
        return {};
    }

    const LayerLibrary& m_lib;
    Graph m_out;
    std::vector<std::string> m_stack;  // layers being expanded, outermost first
};

}  // namespace

const AttrSpec* LayerDef::attribute(const std::string& n) const {
    for (const auto& a : attributes)
        if (a.name == n) return &a;
    return nullptr;
}

void LayerLibrary::add(LayerDef def) {
    for (auto& l : m_layers)
        if (l.name == def.name) {
            l = std::move(def);
            return;
        }
    m_layers.push_back(std::move(def));
}

const LayerDef* LayerLibrary::find(const std::string& name) const {
    for (const auto& l : m_layers)
        if (l.name == name) return &l;
    return nullptr;
}

bool isLayerOp(const LayerLibrary& library, const std::string& op) {
    return !ops::findOp(op) && library.find(op) != nullptr;
}

Result<std::vector<LayerDef>> parseLayerDefs(const json& list, const std::string& path, const std::string& field) {
    if (!list.is_array()) return layerError(path, field, "", "must be a list of layer definitions");
    std::vector<LayerDef> out;
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string f = field + "[" + std::to_string(i) + "]";
        KILN_ASSIGN(LayerDef d, parseLayer(list[i], f, path));
        for (const auto& o : out)
            if (o.name == d.name) return layerError(path, f + ".name", d.name, "is defined twice");
        out.push_back(std::move(d));
    }
    return out;
}

json layerDefsToJson(const std::vector<LayerDef>& defs) {
    json list = json::array();
    for (const auto& d : defs) {
        json j = {{"name", d.name}};
        if (!d.doc.empty()) j["doc"] = d.doc;
        j["inputs"] = d.inputs;
        j["outputs"] = d.outputs;
        if (!d.attributes.empty()) {
            json a = json::array();
            for (const auto& s : d.attributes) a.push_back(attributeToJson(s));
            j["attributes"] = a;
        }
        json nodes = json::array();
        for (const auto& ln : d.nodes) {
            json n = nodeToJson(ln.node);
            for (const auto& [attr, ref] : ln.attrRefs) n["attrs"][attr] = {{"$attr", ref}};
            nodes.push_back(std::move(n));
        }
        j["nodes"] = nodes;
        list.push_back(std::move(j));
    }
    return list;
}

const LayerLibrary& bundledLayers() {
    static const LayerLibrary kLibrary = [] {
        LayerLibrary lib;
        auto doc = parseJsonChecked(bundledLayersJson(), JsonLimits{}, "library.json");
        assert(doc.ok() && "the bundled layer library must parse");
        if (!doc.ok()) return lib;
        auto defs = parseLayerDefs(doc.value(), "library.json");
        assert(defs.ok() && "the bundled layer library must be valid");
        if (!defs.ok()) return lib;
        for (auto& d : defs.value()) lib.add(std::move(d));
        return lib;
    }();
    return kLibrary;
}

LayerLibrary layerLibrary(const std::vector<LayerDef>& project) {
    LayerLibrary lib = bundledLayers();
    for (const auto& d : project) lib.add(d);
    return lib;
}

Status checkLayers(const LayerLibrary& library) {
    // Uses of other layers: the number of inputs, and references to their outputs.
    for (const auto& d : library.layers()) {
        std::map<std::string, const LayerDef*> instances;
        for (const auto& ln : d.nodes)
            if (isLayerOp(library, ln.node.op)) instances[ln.node.name] = library.find(ln.node.op);
        auto checkRef = [&](const std::string& ref, const std::string& where) -> Status {
            auto [base, port] = splitRef(ref);
            auto it = instances.find(base);
            if (it == instances.end()) {
                if (!port.empty()) return layerError("", where, d.name, "names \"" + ref + "\", but \"" + base + "\" is not a layer instance");
                return {};
            }
            const auto& outs = it->second->outputs;
            if (port.empty() && outs.size() > 1)
                return layerError("", where, d.name, "names \"" + ref + "\", an instance of " + it->second->name +
                                                          ", which has several outputs: write \"" + base + ":<output>\"");
            if (!port.empty() && std::find(outs.begin(), outs.end(), port) == outs.end())
                return layerError("", where, d.name, "names \"" + ref + "\", but " + it->second->name + " has no output \"" + port + "\"");
            return {};
        };
        for (const auto& ln : d.nodes) {
            const std::string where = "nodes \"" + ln.node.name + "\"";
            for (const auto& in : ln.node.inputs) KILN_TRY(checkRef(in, where + " inputs"));
            if (const LayerDef* inner = isLayerOp(library, ln.node.op) ? library.find(ln.node.op) : nullptr) {
                if (ln.node.inputs.size() != inner->inputs.size())
                    return layerError("", where + " inputs", d.name, "has " + std::to_string(ln.node.inputs.size()) + " input(s), but " +
                                                                         inner->name + " takes " + std::to_string(inner->inputs.size()));
            }
        }
        for (const auto& out : d.outputs) KILN_TRY(checkRef(out, "outputs"));
    }
    // No layer may contain itself. Depth-first over "uses", with the path as the chain.
    std::map<std::string, int> state;  // 1: on the path, 2: done
    std::vector<std::string> path;
    std::function<Status(const LayerDef&)> visit = [&](const LayerDef& d) -> Status {
        state[d.name] = 1;
        path.push_back(d.name);
        if (path.size() > kMaxLayerDepth)
            return layerError("", "layers", d.name, "nest more than " + std::to_string(kMaxLayerDepth) + " deep (" + path.front() +
                                                        " -> ... -> " + d.name + ")");
        for (const auto& ln : d.nodes) {
            if (!isLayerOp(library, ln.node.op)) continue;
            const LayerDef* inner = library.find(ln.node.op);
            if (state[inner->name] == 1) {
                std::string chain;
                auto start = std::find(path.begin(), path.end(), inner->name);
                for (auto it = start; it != path.end(); ++it) chain += *it + " -> ";
                chain += inner->name;
                return layerError("", "nodes \"" + ln.node.name + "\"", d.name, "makes layer " + inner->name + " contain itself: " + chain)
                    .with("chain", chain);
            }
            if (state[inner->name] == 0) KILN_TRY(visit(*inner));
        }
        path.pop_back();
        state[d.name] = 2;
        return {};
    };
    for (const auto& d : library.layers())
        if (state[d.name] == 0) KILN_TRY(visit(d));
    return {};
}

Result<Graph> expandLayers(const Graph& graph, const LayerLibrary& library) {
    bool any = false;
    for (const auto& n : graph.nodes) any = any || isLayerOp(library, n.op);
    if (!any) return graph;
    KILN_TRY(checkLayers(library));
    return Expander(library).run(graph);
}

}  // namespace kiln::engine::io
