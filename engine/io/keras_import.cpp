// SPDX-License-Identifier: Apache-2.0
// Keras → Kiln graph. Kiln's layers are Keras's (channels-last, the same attribute names and the
// same weight layouts: Dense kernel [in, out], Conv2D kernel [kh, kw, in, out], depthwise kernel
// [kh, kw, in, multiplier], BatchNormalization gamma/beta/moving_mean/moving_variance), so weights
// are copied as they are. A layer Kiln cannot compute becomes a Placeholder node that keeps the
// Keras class and config; its weights are kept in the weights file under "<node>/<name>".
#include "engine/io/keras_import.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/json_checked.h"
#include "engine/io/hdf5_file.h"
#include "engine/io/zip_archive.h"

namespace kiln::engine::io {
namespace {
using json = nlohmann::json;

constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxElements = int64_t{1} << 28;
constexpr int64_t kMaxConfigBytes = int64_t{64} << 20;
constexpr int64_t kMaxWeightsBytes = int64_t{4} << 30;
constexpr int kMaxNesting = 32;
// Keras 2's stand-in for a number where a call's first argument would be a tensor.
constexpr const char* kConstantValue = "_CONSTANT_VALUE";

// One weight of a layer as the file holds it: its short name ("kernel", or "0", "1"... in a
// .keras file, whose weights are numbered) and values.
struct LayerWeight {
    std::string name;
    std::string hdf5Path;
    Hdf5Array array;
    std::string sub;  // the object inside the layer that holds it ("forward_lstm/lstm_cell"); empty: the layer's own
};

// Where a layer's weights live; `layer` is the path of names from the top model, e.g.
// {"block", "dense"} for a layer of a nested model.
class WeightSource {
public:
    virtual ~WeightSource() = default;
    virtual Result<std::vector<LayerWeight>> weights(const std::vector<std::string>& layer) const = 0;
    // Every weight of the layer, those of the objects inside it too (a wrapper's layer, an RNN's
    // cell), each with its `sub` path: what a placeholder keeps.
    virtual Result<std::vector<LayerWeight>> allWeights(const std::vector<std::string>& layer) const { return weights(layer); }
};

std::string joinPath(const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : "/") + p;
    return s;
}

// The variables of one object in a .keras file's model.weights.h5: the datasets "0", "1"... of its
// "vars" group, in that order.
Result<std::vector<LayerWeight>> numberedVars(const Hdf5File& file, const std::string& vars, const std::string& sub = {}) {
    std::vector<LayerWeight> out;
    KILN_ASSIGN(std::vector<std::string> names, file.children(vars));
    std::vector<std::pair<long, std::string>> numbered;
    for (const auto& n : names) {
        char* end = nullptr;
        const long k = std::strtol(n.c_str(), &end, 10);
        if (n.empty() || *end != '\0' || k < 0) return file.error(ErrorCode::ParseError, vars + "/" + n, "a layer variable is not numbered");
        numbered.emplace_back(k, n);
    }
    std::sort(numbered.begin(), numbered.end());
    for (const auto& [k, n] : numbered) {
        const std::string p = vars + "/" + n;
        KILN_ASSIGN(Hdf5Array a, file.readFloats(p, kMaxElements));
        out.push_back({n, p, std::move(a), sub});
    }
    return out;
}

// The variables of the objects below `group` in a .keras file's model.weights.h5 (each a group
// with a "vars" subgroup), their `sub` paths made of the group names below it. `budget` bounds the
// groups visited: HDF5 links can make a group its own descendant.
Status varsBelow(const Hdf5File& file, const std::string& group, const std::string& sub, int depth, std::vector<LayerWeight>* out,
                 int* budget) {
    if (depth > kMaxNesting) return file.error(ErrorCode::ParseError, group, "the weights are nested too deeply");
    if (--*budget < 0) return file.error(ErrorCode::ParseError, group, "the layer's weights hold too many groups");
    KILN_ASSIGN(std::vector<std::string> kids, file.children(group));
    for (const auto& k : kids) {
        const std::string p = group + "/" + k;
        if (k == "vars" || !file.isGroup(p)) continue;
        const std::string kidSub = sub.empty() ? k : sub + "/" + k;
        if (file.isGroup(p + "/vars")) {
            KILN_ASSIGN(std::vector<LayerWeight> w, numberedVars(file, p + "/vars", kidSub));
            for (auto& x : w) out->push_back(std::move(x));
        }
        KILN_TRY(varsBelow(file, p, kidSub, depth + 1, out, budget));
    }
    return {};
}

// Keras 3's model.weights.h5: each object is a group whose "vars" subgroup carries the object's
// name as an attribute and its variables as datasets "0", "1"...; nested models hold their own
// layers below their group.
class Keras3Weights final : public WeightSource {
public:
    static Result<std::unique_ptr<Keras3Weights>> index(Hdf5File file) {
        auto w = std::unique_ptr<Keras3Weights>(new Keras3Weights(std::move(file)));
        KILN_TRY(w->walk("/", "", true, 0));
        return w;
    }
    Result<std::vector<LayerWeight>> weights(const std::vector<std::string>& layer) const override {
        auto it = m_vars.find(joinPath(layer));
        if (it == m_vars.end()) return std::vector<LayerWeight>{};
        return numberedVars(m_file, it->second);
    }
    // The objects inside a layer carry their own names ("bilstm/forward_lstm/lstm_cell").
    Result<std::vector<LayerWeight>> allWeights(const std::vector<std::string>& layer) const override {
        const std::string key = joinPath(layer);
        std::vector<LayerWeight> out;
        for (auto it = m_vars.lower_bound(key); it != m_vars.end() && it->first.compare(0, key.size(), key) == 0; ++it) {
            if (it->first.size() > key.size() && it->first[key.size()] != '/') continue;
            KILN_ASSIGN(std::vector<LayerWeight> w, numberedVars(m_file, it->second, it->first.substr(std::min(it->first.size(), key.size() + 1))));
            for (auto& x : w) out.push_back(std::move(x));
        }
        return out;
    }

private:
    explicit Keras3Weights(Hdf5File f) : m_file(std::move(f)) {}
    Status walk(const std::string& group, const std::string& prefix, bool root, int depth) {
        if (depth > kMaxNesting) return m_file.error(ErrorCode::ParseError, group, "the weights are nested too deeply");
        KILN_ASSIGN(std::vector<std::string> kids, m_file.children(group));
        const std::string base = group == "/" ? std::string() : group;
        std::string childPrefix = prefix;
        if (std::find(kids.begin(), kids.end(), "vars") != kids.end() && m_file.hasAttribute(base + "/vars", "name")) {
            KILN_ASSIGN(std::string name, m_file.stringAttribute(base + "/vars", "name"));
            if (!root) {
                m_vars.emplace(prefix + name, base + "/vars");
                childPrefix = prefix + name + "/";
            }
        }
        for (const auto& k : kids) {
            if (k == "vars" || !m_file.isGroup(base + "/" + k)) continue;
            KILN_TRY(walk(base + "/" + k, childPrefix, false, depth + 1));
        }
        return {};
    }
    Hdf5File m_file;
    std::map<std::string, std::string> m_vars;  // "block/dense" -> HDF5 path of its vars group
};

// A .keras file written by Keras 2 (tf_keras 2.13 and later): its model.weights.h5 names each
// layer's group after the layer's class, not the layer, numbered within its model in the order of
// the model's layers (layers/conv2d, layers/conv2d_1, layers/batch_normalization...; a Functional
// model's InputLayers take a group, a Sequential model's does not), with no name attribute; a
// nested model's layers are below its group (layers/sequential/layers/dense). The model config
// says which layer each group is.
class Keras2ArchiveWeights final : public WeightSource {
public:
    Keras2ArchiveWeights(Hdf5File file, const json& config) : m_file(std::move(file)) { assign(config, {}, "", 0); }
    Result<std::vector<LayerWeight>> weights(const std::vector<std::string>& layer) const override {
        auto it = m_vars.find(joinPath(layer));
        if (it == m_vars.end() || !m_file.isGroup(it->second)) return std::vector<LayerWeight>{};
        return numberedVars(m_file, it->second);
    }
    // The objects inside a layer are the groups below its own (bidirectional/forward_layer/cell).
    Result<std::vector<LayerWeight>> allWeights(const std::vector<std::string>& layer) const override {
        KILN_ASSIGN(std::vector<LayerWeight> out, weights(layer));
        auto it = m_vars.find(joinPath(layer));
        if (it == m_vars.end()) return out;
        const std::string group = it->second.substr(0, it->second.size() - 5);  // without "/vars"
        int budget = 10000;
        if (m_file.isGroup(group)) KILN_TRY(varsBelow(m_file, group, "", 0, &out, &budget));
        return out;
    }

    // The group name Keras 2 derives from a class name (its generic_utils.to_snake_case):
    // "GlobalAveragePooling2D" -> "global_average_pooling2d", "InputLayer" -> "input_layer".
    static std::string snakeCase(const std::string& cls) {
        static const std::regex word("(.)([A-Z][a-z0-9]+)"), hump("([a-z])([A-Z])");
        std::string s = std::regex_replace(std::regex_replace(cls, word, "$1_$2"), hump, "$1_$2");
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        return !s.empty() && s[0] == '_' ? "private" + s : s;
    }

private:
    static std::string text(const json& j, const char* key) {
        return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    }
    // A config the importer cannot read is left for it to report; here it only gives no groups.
    void assign(const json& model, const std::vector<std::string>& path, const std::string& group, int depth) {
        if (depth > kMaxNesting || !model.is_object() || !model.contains("config")) return;
        const std::string cls = text(model, "class_name");
        const json& cfg = model["config"];
        const json* layers = cfg.is_array() ? &cfg : cfg.is_object() && cfg.contains("layers") ? &cfg["layers"]
                                                                                               : nullptr;
        if (!layers || !layers->is_array()) return;
        std::map<std::string, int> used;
        for (const json& l : *layers) {
            std::string layerClass = text(l, "class_name");
            if (layerClass.empty() || (cls == "Sequential" && layerClass == "InputLayer")) continue;
            std::string name = l.contains("config") ? text(l["config"], "name") : std::string();
            if (name.empty()) name = text(l, "name");
            // A registered custom class is written "package>Class"; the group takes the class.
            const std::string base = snakeCase(layerClass.substr(layerClass.rfind('>') + 1));
            const auto [it, first] = used.emplace(base, 0);
            if (!first) ++it->second;
            const std::string at = group + "/layers/" + (first ? base : base + "_" + std::to_string(it->second));
            if (name.empty()) continue;
            std::vector<std::string> key = path;
            key.push_back(name);
            m_vars.emplace(joinPath(key), at + "/vars");
            if (layerClass == "Functional" || layerClass == "Sequential" || layerClass == "Model") assign(l, key, at, depth + 1);
            // A wrapper's layer (TimeDistributed) has its group below the wrapper's: <wrapper>/layer.
            const json& inner = l.contains("config") && l["config"].is_object() ? l["config"].value("layer", json()) : json();
            if (inner.is_object() && inner.value("config", json()).is_object()) {
                const std::string innerName = text(inner["config"], "name");
                if (!innerName.empty()) {
                    key.push_back(innerName);
                    m_vars.emplace(joinPath(key), at + "/layer/vars");
                }
            }
        }
    }

    Hdf5File m_file;
    std::map<std::string, std::string> m_vars;  // "block/dense" -> HDF5 path of its vars group
};

// A legacy .h5 model: model_weights/<layer> lists its datasets in the "weight_names" attribute,
// e.g. "conv/kernel:0". A nested model's group holds the weights of all its layers, nested ones
// included, each named after a tail of the path of models down to the layer: Keras 3 writes
// "block/dense/bias" for a layer of the Sequential "block" but "dense/bias" for one of a
// Functional model, Keras 2 "dense/bias:0" at any depth. The objects inside a layer follow its
// name ("bilstm/forward_lstm/lstm_cell/kernel", "td/dense/kernel" for a TimeDistributed's layer).
class LegacyWeights final : public WeightSource {
public:
    LegacyWeights(const Hdf5File& file, std::string root) : m_file(file), m_root(std::move(root)) {}
    Result<std::vector<LayerWeight>> weights(const std::vector<std::string>& layer) const override {
        std::vector<LayerWeight> out;
        const std::string group = m_root + "/" + layer.front();
        if (!m_file.isGroup(group)) return out;
        if (!m_file.hasAttribute(group, "weight_names")) return m_file.error(ErrorCode::ParseError, group, "the layer's weight_names attribute is missing");
        KILN_ASSIGN(std::vector<std::string> names, m_file.stringListAttribute(group, "weight_names"));
        // For each name, the longest start of its path that is a tail of the layer's path; a layer
        // of a nested model takes the names whose match is longest (a top-level layer all of them).
        std::vector<size_t> matched(names.size(), 0);
        size_t best = 0;
        for (size_t k = 0; k < names.size(); ++k) {
            std::vector<std::string> parts;
            for (size_t at = 0;;) {
                const size_t slash = names[k].find('/', at);
                if (slash == std::string::npos) break;
                parts.push_back(names[k].substr(at, slash - at));
                at = slash + 1;
            }
            for (size_t n = std::min(parts.size(), layer.size()); n > 0; --n)
                if (std::equal(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(n), layer.end() - static_cast<std::ptrdiff_t>(n))) {
                    matched[k] = n;
                    break;
                }
            best = std::max(best, matched[k]);
        }
        for (size_t k = 0; k < names.size(); ++k) {
            const std::string& n = names[k];
            if (layer.size() > 1 && (best == 0 || matched[k] != best)) continue;
            const std::string p = group + "/" + n;
            KILN_ASSIGN(Hdf5Array a, m_file.readFloats(p, kMaxElements));
            const size_t slash = n.rfind('/');
            std::string shortName = n.substr(slash == std::string::npos ? 0 : slash + 1);
            if (auto colon = shortName.find(':'); colon != std::string::npos) shortName.resize(colon);
            // The path between the layer's name and the weight's: the object inside the layer.
            std::string sub;
            size_t at = 0;
            for (size_t d = 0; d < matched[k]; ++d) at = n.find('/', at) + 1;
            if (slash != std::string::npos && slash > at) sub = n.substr(at, slash - at);
            out.push_back({shortName, p, std::move(a), std::move(sub)});
        }
        return out;
    }

private:
    const Hdf5File& m_file;
    std::string m_root;
};

// A tensor of a functional model: (layer, call, output index).
struct TensorRef {
    std::string layer;
    int64_t node = 0;
    int64_t tensor = 0;
};

std::string refKey(const std::string& scope, const TensorRef& r) {
    return scope + r.layer + "#" + std::to_string(r.node) + "#" + std::to_string(r.tensor);
}

bool isModelClass(const std::string& cls) { return cls == "Functional" || cls == "Sequential" || cls == "Model"; }

class KerasImporter {
public:
    KerasImporter(std::string file, ImportOptions options, const WeightSource& weights, bool keras2)
        : m_file(std::move(file)), m_opt(options), m_weights(weights), m_keras2(keras2) {
        m_out.format = "keras";
    }

    Result<ImportedModel> run(const json& root, const std::string& producer) {
        m_out.producer = producer;
        if (!root.is_object()) return configError("", "the model config is not a JSON object");
        KILN_ASSIGN(std::string cls, str(root, "class_name", ""));
        if (!root.contains("config") || !(root["config"].is_object() || (cls == "Sequential" && root["config"].is_array())))
            return configError("config", "the model config has no \"config\" object");
        if (!isModelClass(cls))
            return Error(ErrorCode::Unsupported, m_file + ": the file holds a " + cls + ", not a Functional or Sequential model")
                .withFile(m_file)
                .with("what", "Keras model class " + cls);
        reserveLayerNames(root["config"], "", 0);
        KILN_ASSIGN(std::vector<int> outs, model(cls, root["config"], "config", {}, {}, {}, 0));
        std::set<int> seen;
        for (int o : outs) {
            const std::string& name = kname(o);
            if (!seen.insert(o).second) return Error(ErrorCode::Unsupported, m_file + ": two model outputs are the same tensor (" + name + ")").withFile(m_file).withNode(name).with("what", "repeated model output");
            m_out.graph.outputs.push_back(name);
            m_out.outputs.push_back(name);
        }
        if (m_unknown.empty()) {
            auto analysed = ops::analyzeModel(m_out.graph);
            if (!analysed.ok()) {
                Error e = analysed.error();
                if (e.file.empty()) e.withFile(m_file);
                return e;
            }
        }
        return std::move(m_out);
    }

private:
    // ---- errors and config fields -------------------------------------------------------------
    Error configError(const std::string& jpath, const std::string& what) const {
        return Error(ErrorCode::ParseError, (jpath.empty() ? std::string("config.json") : jpath) + ": " + what)
            .withFile(m_file)
            .with("json_path", jpath)
            .with("reason", what);
    }
    Result<std::string> str(const json& o, const char* key, const std::string& jpath, std::optional<std::string> def = std::nullopt) const {
        auto it = o.find(key);
        if (it == o.end() || it->is_null()) {
            if (def) return *def;
            return configError(jpath + "." + key, "missing");
        }
        if (!it->is_string()) return configError(jpath + "." + key, "expected text");
        return it->get<std::string>();
    }
    Result<int64_t> integer(const json& o, const char* key, const std::string& jpath, std::optional<int64_t> def = std::nullopt) const {
        auto it = o.find(key);
        if (it == o.end() || it->is_null()) {
            if (def) return *def;
            return configError(jpath + "." + key, "missing");
        }
        if (it->is_array() && it->size() == 1) return integer(json{{key, (*it)[0]}}, key, jpath, def);
        if (!it->is_number_integer() || it->get<int64_t>() < -kMaxDim || it->get<int64_t>() > kMaxDim)
            return configError(jpath + "." + key, "expected an integer");
        return it->get<int64_t>();
    }
    Result<double> number(const json& o, const char* key, const std::string& jpath, std::optional<double> def = std::nullopt) const {
        auto it = o.find(key);
        if (it == o.end() || it->is_null()) {
            if (def) return *def;
            return configError(jpath + "." + key, "missing");
        }
        if (!it->is_number()) return configError(jpath + "." + key, "expected a number");
        return it->get<double>();
    }
    Result<bool> boolean(const json& o, const char* key, const std::string& jpath, bool def) const {
        auto it = o.find(key);
        if (it == o.end() || it->is_null()) return def;
        if (!it->is_boolean()) return configError(jpath + "." + key, "expected true or false");
        return it->get<bool>();
    }
    // An int or a list of `n` ints (Keras accepts both for sizes and strides).
    Result<std::vector<int64_t>> ints(const json& o, const char* key, const std::string& jpath, size_t n,
                                      std::optional<std::vector<int64_t>> def = std::nullopt) const {
        auto it = o.find(key);
        if (it == o.end() || it->is_null()) {
            if (def) return *def;
            return configError(jpath + "." + key, "missing");
        }
        if (it->is_number_integer()) return std::vector<int64_t>(n, it->get<int64_t>());
        if (!it->is_array() || it->size() != n) return configError(jpath + "." + key, "expected an integer or a list of " + std::to_string(n));
        std::vector<int64_t> v;
        for (const auto& x : *it) {
            if (!x.is_number_integer() || x.get<int64_t>() < -kMaxDim || x.get<int64_t>() > kMaxDim)
                return configError(jpath + "." + key, "expected integers");
            v.push_back(x.get<int64_t>());
        }
        return v;
    }
    // Keras activations are names, or (Keras 3) a serialised function whose config is the name.
    Result<std::string> activationName(const json& o, const char* key, const std::string& jpath) const {
        auto it = o.find(key);
        if (it == o.end() || it->is_null()) return std::string("linear");
        if (it->is_string()) return it->get<std::string>();
        if (it->is_object() && it->contains("config") && (*it)["config"].is_string()) return (*it)["config"].get<std::string>();
        if (it->is_object() && it->contains("class_name") && (*it)["class_name"].is_string()) return (*it)["class_name"].get<std::string>();
        return configError(jpath + "." + key, "expected an activation name");
    }

    // ---- graph building -----------------------------------------------------------------------
    const std::string& kname(int node) const { return m_out.graph.nodes[static_cast<size_t>(node)].name; }

    // Names the importer makes up ("<layer>_activation", "<layer>_depthwise"...) avoid every Keras
    // layer name of the file, including layers not mapped yet.
    std::string uniqueName(const std::string& preferred) {
        std::string name = preferred.empty() ? std::string("layer") : preferred;
        for (int k = 1; m_names.count(name) || m_reserved.count(name); ++k) name = preferred + "_" + std::to_string(k);
        m_names.insert(name);
        return name;
    }
    void reserveLayerNames(const json& cfg, const std::string& prefix, int depth) {
        if (depth > kMaxNesting || !cfg.is_object() || !cfg.contains("layers") || !cfg["layers"].is_array()) return;
        for (const auto& l : cfg["layers"]) {
            if (!l.is_object() || !l.contains("config") || !l["config"].is_object()) continue;
            const json& name = l["config"].value("name", json());
            if (!name.is_string()) continue;
            m_reserved.insert(prefix + name.get<std::string>());
            reserveLayerNames(l["config"], prefix + name.get<std::string>() + "/", depth + 1);
        }
    }

    Result<int> addNode(Node node) {
        const ops::OpDef* def = ops::findOp(node.op);
        if (!def) return Error(ErrorCode::Internal, "unknown Kiln op " + node.op);
        KILN_ASSIGN(AttrMap attrs, ops::resolveAttrs(*def, node));
        std::vector<Shape> ins;
        for (const auto& s : node.inputs) {
            const int j = m_out.graph.find(s);
            if (j < 0 || m_unknown.count(j)) return Error(ErrorCode::ShapeMismatch, "it reads a value whose shape is unknown").withNode(node.name);
            ins.push_back(m_shapes[static_cast<size_t>(j)]);
        }
        if (static_cast<int>(ins.size()) < def->minInputs || (def->maxInputs >= 0 && static_cast<int>(ins.size()) > def->maxInputs))
            return Error(ErrorCode::ArityMismatch, node.op + " takes " + std::to_string(def->minInputs) + (def->maxInputs == def->minInputs ? "" : " or more") +
                                                       " inputs, the layer has " + std::to_string(ins.size()))
                .withNode(node.name);
        ops::ShapeContext ctx{node, attrs, ins};
        KILN_ASSIGN(Shape out, def->shape(ctx));
        m_out.graph.nodes.push_back(std::move(node));
        m_shapes.push_back(std::move(out));
        return static_cast<int>(m_out.graph.nodes.size()) - 1;
    }

    void addWeight(const std::string& node, const std::string& param, const Hdf5Array& a) {
        Tensor t{Shape(a.dims)};
        if (!a.values.empty()) std::memcpy(t.raw(), a.values.data(), a.values.size() * sizeof(float));
        m_out.weights.push_back({node + "/" + param, std::move(t)});
    }
    void addFilled(const std::string& node, const std::string& param, int64_t n, float v) {
        Hdf5Array a;
        a.dims = {n};
        a.values.assign(static_cast<size_t>(n), v);
        addWeight(node, param, a);
    }

    // ---- one call of a layer ------------------------------------------------------------------
    struct Call {
        std::string cls;
        const json* cfg = nullptr;        // the layer's "config" object
        std::string jpath;                // JSON path of that config
        std::string name;                 // the Kiln node name (the Keras name, nested ones prefixed)
        std::vector<std::string> weightsKey;
        std::vector<int> inputs;
        std::optional<std::vector<int64_t>> outputHint;  // output shape after the batch, when the file says
        const json* inbound = nullptr;    // the inbound node of this call (Keras 3 functional models)
        bool shared = false;              // a later call of a layer: no weights of its own
        std::string sharedWith;           // the first call's node name (the layer's main node)
    };
    struct Converted {
        int output = -1;
        NodeMapping::Kind kind = NodeMapping::Kind::Node;
        std::string reason;
    };

    Result<std::vector<LayerWeight>> weightsFor(const Call& c, size_t expected) {
        if (c.shared) return std::vector<LayerWeight>{};
        KILN_ASSIGN(std::vector<LayerWeight> w, m_weights.weights(c.weightsKey));
        if (w.size() != expected)
            return Error(ErrorCode::WeightsMismatch, m_file + ": layer \"" + joinPath(c.weightsKey) + "\" (" + c.cls + ") has " + std::to_string(w.size()) +
                                                          " weight tensors in the file, its config needs " + std::to_string(expected))
                .withFile(m_file)
                .withNode(c.name)
                .with("tensor", joinPath(c.weightsKey))
                .with("reason", "count");
        return w;
    }
    Status checkShape(const Call& c, const LayerWeight& w, const std::vector<int64_t>& dims) {
        if (w.array.dims == dims) return {};
        auto text = [](const std::vector<int64_t>& d) {
            std::string s = "[";
            for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
            return s + "]";
        };
        return Error(ErrorCode::WeightsMismatch, m_file + ": HDF5 dataset \"" + w.hdf5Path + "\" of layer \"" + c.name + "\" has shape " + text(w.array.dims) +
                                                      ", the layer needs " + text(dims))
            .withFile(m_file)
            .withNode(c.name)
            .with("tensor", w.hdf5Path)
            .with("hdf5_path", w.hdf5Path)
            .with("reason", "shape");
    }

    Result<int> simple(const Call& c, const std::string& op, const AttrMap& attrs, const std::string& name = {}) {
        Node n;
        n.name = name.empty() ? c.name : name;
        n.op = op;
        n.attrs = attrs;
        for (int i : c.inputs) n.inputs.push_back(kname(i));
        return addNode(std::move(n));
    }

    // Global pooling of an image (`op`: GlobalAveragePooling2D or GlobalMaxPooling2D). Kiln's gives
    // [batch, channels]; keepdims is a reshape to [1, 1, channels] that takes the layer's name.
    Result<int> globalPooling(const Call& c, const std::string& op, const AttrMap& attrs, bool keepdims) {
        KILN_ASSIGN(int n, simple(c, op, attrs, keepdims ? uniqueName(c.name + "_pool") : std::string()));
        if (!keepdims) return n;
        Node rs;
        rs.name = c.name;
        rs.op = "Reshape";
        rs.inputs = {kname(n)};
        rs.attrs.set("target_shape", std::vector<int64_t>{1, 1, m_shapes[static_cast<size_t>(n)][1]});
        return addNode(std::move(rs));
    }

    // A Kiln activation op for a Keras activation name, as a node reading `input`; nullopt when
    // Kiln has none. "linear" gives `input` itself.
    Result<std::optional<int>> activationNode(const Call& c, const std::string& act, int input, const std::string& name) {
        Node n;
        n.name = name;
        n.inputs = {kname(input)};
        if (act == "linear") return std::optional<int>(input);
        else if (act == "relu") n.op = "ReLU";
        else if (act == "relu6") n.op = "ReLU6";
        else if (act == "sigmoid") n.op = "Sigmoid";
        else if (act == "tanh") n.op = "Tanh";
        else if (act == "softmax") n.op = "Softmax";
        else if (act == "gelu") {
            n.op = "GELU";
            n.attrs.set("approximate", false);
        } else if (act == "silu" || act == "swish") n.op = "SiLU";
        else if (act == "hard_silu" || act == "hard_swish") n.op = "HardSwish";
        else if (act == "leaky_relu") {
            n.op = "LeakyReLU";
            n.attrs.set("negative_slope", 0.2);
        } else if (act == "hard_sigmoid" && m_keras2) {
            // Keras 2's hard_sigmoid is clip(0.2·x + 0.5, 0, 1), Keras 3's is relu6(x + 3) / 6.
            Node scale;
            scale.name = uniqueName(name + "_scale");
            scale.op = "Rescaling";
            scale.inputs = n.inputs;
            scale.attrs.set("scale", 0.2);
            scale.attrs.set("offset", 0.5);
            KILN_ASSIGN(int s, addNode(std::move(scale)));
            n.inputs = {kname(s)};
            n.op = "Clip";
            n.attrs.set("min", 0.0);
            n.attrs.set("max", 1.0);
        } else if (act == "hard_sigmoid") n.op = "HardSigmoid";
        else return std::optional<int>();
        KILN_ASSIGN(int idx, addNode(std::move(n)));
        return std::optional<int>(idx);
    }

    // Dense and the convolutions keep the activations Kiln's layers take as an attribute (as Keras
    // does); any other activation follows as its own node "<layer>_activation".
    Result<Converted> withActivation(const Call& c, int node, const std::string& act, bool folded) {
        Converted r;
        r.output = node;
        if (folded) return r;
        KILN_ASSIGN(std::optional<int> a, activationNode(c, act, node, uniqueName(c.name + "_activation")));
        if (a) {
            r.output = *a;
            return r;
        }
        // An activation Kiln lacks: a placeholder for it alone; the layer itself stays mapped.
        Call pc = c;
        pc.cls = "Activation";
        pc.inputs = {node};
        pc.name = uniqueName(c.name + "_activation");
        json cfg = {{"activation", act}};
        pc.cfg = &cfg;
        pc.outputHint = std::vector<int64_t>(m_shapes[static_cast<size_t>(node)].dims().begin() + 1, m_shapes[static_cast<size_t>(node)].dims().end());
        KILN_ASSIGN(r.output, placeholderNode(pc, {}));
        r.reason = "activation \"" + act + "\" became the placeholder " + pc.name;
        return r;
    }
    static bool attributeActivation(const std::string& act, bool dense) {
        static const std::set<std::string> ok{"linear", "relu", "relu6", "sigmoid", "tanh", "gelu"};
        return ok.count(act) || (dense && act == "softmax");
    }

    // The layer a wrapper (TimeDistributed, Bidirectional) holds: {"class_name", "config"}.
    static const json* wrappedLayer(const Call& c) {
        if ((c.cls != "TimeDistributed" && c.cls != "Bidirectional") || !c.cfg || !c.cfg->is_object()) return nullptr;
        const auto it = c.cfg->find("layer");
        if (it == c.cfg->end() || !it->is_object() || !it->value("class_name", json()).is_string() || !it->value("config", json()).is_object())
            return nullptr;
        return &*it;
    }

    // The class as the report and a placeholder name it. A Keras 2 TFOpLambda names the TensorFlow
    // function it calls, TFOpLambda(tf.math.cumsum); a wrapper the layer it wraps,
    // Bidirectional(LSTM), TimeDistributed(Conv2D).
    static std::string displayClass(const Call& c) {
        if (c.cls == "TFOpLambda" && c.cfg && c.cfg->is_object() && c.cfg->value("function", json()).is_string())
            return c.cls + "(tf." + (*c.cfg)["function"].get<std::string>() + ")";
        if (const json* inner = wrappedLayer(c); inner) return c.cls + "(" + (*inner)["class_name"].get<std::string>() + ")";
        return c.cls;
    }

    // The output shape (after the batch) of a layer Kiln cannot compute, from its config, for the
    // files that record none (Keras 2's): a recurrent layer (LSTM, GRU, SimpleRNN) on a sequence
    // [steps, features] gives [steps, units] with return_sequences, else [units], and Bidirectional
    // over one with merge_mode "concat" twice the units; TimeDistributed(Conv2D) on [steps, height,
    // width, channels] the convolution's shape on each step. nullopt for anything else, and for
    // layers making several values (return_state, merge_mode None).
    std::optional<std::vector<int64_t>> configShape(const Call& c) const {
        if (c.inputs.size() != 1 || !c.cfg || !c.cfg->is_object()) return std::nullopt;
        const json* cfg = c.cfg;
        const Shape& in = inShape(c);
        int64_t factor = 1;
        std::string cls = c.cls;
        auto positive = [](const json& v) { return v.is_number_integer() && v.get<int64_t>() > 0 && v.get<int64_t>() <= kMaxDim; };
        if (const json* inner = wrappedLayer(c); inner) {
            cls = (*inner)["class_name"].get<std::string>();
            cfg = &(*inner)["config"];
            if (c.cls == "TimeDistributed") {
                if (cls != "Conv2D" || in.rank() != 5 || cfg->value("data_format", json("channels_last")) != json("channels_last")) return std::nullopt;
                auto pair = [&](const char* key, int64_t def) -> std::optional<std::array<int64_t, 2>> {
                    const json& v = cfg->value(key, json(def));
                    if (positive(v)) return std::array<int64_t, 2>{v.get<int64_t>(), v.get<int64_t>()};
                    if (v.is_array() && v.size() == 2 && positive(v[0]) && positive(v[1])) return std::array<int64_t, 2>{v[0].get<int64_t>(), v[1].get<int64_t>()};
                    return std::nullopt;
                };
                const auto kernel = pair("kernel_size", 0), strides = pair("strides", 1), dilation = pair("dilation_rate", 1);
                const json& filters = cfg->value("filters", json());
                const json& padding = cfg->value("padding", json("valid"));
                if (!kernel || !strides || !dilation || !positive(filters) || (padding != json("valid") && padding != json("same"))) return std::nullopt;
                std::vector<int64_t> out{in[1]};
                for (int k = 0; k < 2; ++k) {
                    const int64_t n = in[2 + k], s = (*strides)[static_cast<size_t>(k)];
                    const int64_t span = (*dilation)[static_cast<size_t>(k)] * ((*kernel)[static_cast<size_t>(k)] - 1) + 1;
                    const int64_t o = padding == json("same") ? (n + s - 1) / s : (n - span) / s + 1;
                    if (o <= 0 || (padding == json("valid") && n < span)) return std::nullopt;
                    out.push_back(o);
                }
                out.push_back(filters.get<int64_t>());
                return out;
            }
            const json& mode = c.cfg->value("merge_mode", json("concat"));
            if (!mode.is_string()) return std::nullopt;
            factor = mode == "concat" ? 2 : 1;
        }
        if (cls != "LSTM" && cls != "GRU" && cls != "SimpleRNN") return std::nullopt;
        const json& units = cfg->value("units", json());
        if (in.rank() != 3 || !positive(units)) return std::nullopt;
        if (cfg->value("return_state", json(false)) != json(false)) return std::nullopt;
        const int64_t n = units.get<int64_t>() * factor;
        if (cfg->value("return_sequences", json(false)) == json(true)) return std::vector<int64_t>{in[1], n};
        return std::vector<int64_t>{n};
    }

    Result<int> placeholderNode(const Call& c, const std::vector<LayerWeight>& weights) {
        Node n;
        n.name = c.name;
        n.op = "Placeholder";
        n.attrs.set("keras_class", displayClass(c));
        std::string cfg = c.cfg ? c.cfg->dump(-1, ' ', false, json::error_handler_t::replace) : std::string("{}");
        if (cfg.size() > (1u << 16)) cfg = "{}";  // a huge config (a serialised function) stays in the source file only
        n.attrs.set("keras_config", cfg);
        bool unknown = false;
        for (int i : c.inputs) {
            n.inputs.push_back(kname(i));
            unknown = unknown || m_unknown.count(i);
        }
        // "<node>/kernel", "<node>/weight_0"; a weight of an object inside the layer with that
        // object's path in dots: "bilstm/forward_lstm.lstm_cell.kernel".
        for (const auto& w : weights) {
            std::string param = w.name.empty() || std::isdigit(static_cast<unsigned char>(w.name[0])) ? "weight_" + w.name : w.name;
            if (!w.sub.empty()) {
                std::string sub = w.sub;
                std::replace(sub.begin(), sub.end(), '/', '.');
                param = sub + "." + param;
            }
            addWeight(c.name, param, w.array);
        }
        // The output shape: what the file records for the tensor the layer makes, else the
        // output_shape a Lambda layer declares (a list of sizes after the batch), else what a
        // recurrent layer's config says.
        std::optional<std::vector<int64_t>> shape = c.outputHint;
        if ((!shape || shape->empty()) && !unknown) shape = configShape(c);
        if ((!shape || shape->empty()) && c.cfg && c.cfg->is_object()) {
            const json& os = c.cfg->value("output_shape", json());
            if (os.is_array() && !os.empty() && std::all_of(os.begin(), os.end(), [](const json& d) { return d.is_number_integer(); }))
                shape = os.get<std::vector<int64_t>>();
        }
        bool known = shape && !shape->empty();
        if (known) {
            int64_t numel = 1;
            for (int64_t d : *shape) {
                known = known && d > 0 && d <= kMaxDim;
                if (known) numel *= d;
                known = known && numel <= kMaxElements;
            }
        }
        if (known && unknown) {
            // It reads a value of unknown shape, but its own is known: the layers after it map.
            n.attrs.set("output_shape", *shape);
            std::vector<int64_t> full{Shape::kBatch};
            full.insert(full.end(), shape->begin(), shape->end());
            m_out.graph.nodes.push_back(std::move(n));
            m_shapes.emplace_back(full);
            m_out.placeholders.push_back(c.name);
            return static_cast<int>(m_out.graph.nodes.size()) - 1;
        }
        if (known) {
            n.attrs.set("output_shape", *shape);
            auto idx = addNode(n);
            if (idx.ok()) {
                m_out.placeholders.push_back(c.name);
                return *idx;
            }
            n.attrs.set("output_shape", std::vector<int64_t>{});
        }
        m_out.graph.nodes.push_back(std::move(n));
        m_shapes.emplace_back();
        const int idx = static_cast<int>(m_out.graph.nodes.size()) - 1;
        m_unknown.insert(idx);
        m_out.placeholders.push_back(c.name);
        return idx;
    }

    // Maps one call of a layer. Errors that say Kiln cannot compute the layer (unknown class,
    // unsupported options, a shape Kiln's op refuses) turn into a placeholder when asked for.
    Result<Converted> layer(const Call& c) {
        const size_t before = m_out.graph.nodes.size();
        const size_t weightsBefore = m_out.weights.size();
        for (int i : c.inputs)
            if (m_unknown.count(i)) return placeholder(c, "it reads a value whose shape is unknown", before, weightsBefore);
        auto r = mapLayer(c);
        if (r.ok()) return r;
        const ErrorCode code = r.error().code;
        const bool cannotCompute = code == ErrorCode::UnknownOp || code == ErrorCode::Unsupported || code == ErrorCode::ShapeMismatch ||
                                   code == ErrorCode::BadAttribute || code == ErrorCode::ArityMismatch;
        if (!cannotCompute || !m_opt.placeholders) {
            Error e = r.error();
            if (e.node.empty()) e.withNode(c.name);
            if (e.file.empty()) e.withFile(m_file);
            return e;
        }
        return placeholder(c, r.error().message, before, weightsBefore);
    }
    Result<Converted> placeholder(const Call& c, const std::string& reason, size_t before, size_t weightsBefore) {
        // Drop what a half-mapped layer added; the placeholder takes its name and its weights.
        for (size_t k = before; k < m_out.graph.nodes.size(); ++k) {
            m_names.erase(m_out.graph.nodes[k].name);
            m_unknown.erase(static_cast<int>(k));
        }
        m_out.graph.nodes.resize(before);
        m_shapes.resize(before);
        m_out.weights.resize(weightsBefore);
        m_names.insert(c.name);
        std::vector<LayerWeight> weights;
        if (!c.shared) {
            KILN_ASSIGN(weights, m_weights.allWeights(c.weightsKey));
        }
        Converted r;
        KILN_ASSIGN(r.output, placeholderNode(c, weights));
        r.kind = NodeMapping::Kind::Placeholder;
        r.reason = reason;
        return r;
    }

    Error unsupported(const Call& c, const std::string& what) const {
        return Error(ErrorCode::Unsupported, c.cls + " layer \"" + c.name + "\": " + what).withNode(c.name).with("what", what);
    }
    Status channelsLast(const Call& c) const {
        KILN_ASSIGN(std::string df, str(*c.cfg, "data_format", c.jpath, std::string("channels_last")));
        if (df != "channels_last") return unsupported(c, "data_format " + df + " (Kiln is channels-last)");
        return {};
    }
    Status oneInput(const Call& c) const {
        if (c.inputs.size() != 1) return unsupported(c, "it takes one input, the model gives it " + std::to_string(c.inputs.size()));
        return {};
    }
    const Shape& inShape(const Call& c, size_t k = 0) const { return m_shapes[static_cast<size_t>(c.inputs[k])]; }

    // The number next to the one tensor in a Keras 3 operation call (`x + 3.0`, `2.0 - x`) and
    // whether the tensor comes first; nullopt when the call has no single number.
    Result<std::optional<std::pair<double, bool>>> scalarOperand(const Call& c) const {
        if (!c.inbound || !c.inbound->is_object()) return std::optional<std::pair<double, bool>>();
        const json& args = c.inbound->value("args", json::array());
        if (!args.is_array() || args.size() != 2) return std::optional<std::pair<double, bool>>();
        const bool tensorFirst = args[0].is_object();
        const json& v = tensorFirst ? args[1] : args[0];
        if (!v.is_number() || !(tensorFirst ? args[0] : args[1]).is_object()) return std::optional<std::pair<double, bool>>();
        return std::optional<std::pair<double, bool>>(std::make_pair(v.get<double>(), tensorFirst));
    }
    // Normalization's mean or variance from its config: a number (every channel) or one per channel.
    Result<Hdf5Array> statistic(const Call& c, const char* key, int64_t n) const {
        const std::string p = c.jpath + "." + key;
        const auto it = c.cfg->find(key);
        if (it == c.cfg->end() || it->is_null()) return configError(p, "missing");
        Hdf5Array a;
        a.dims = {n};
        std::vector<double> v;
        std::function<Status(const json&)> flat = [&](const json& x) -> Status {
            if (x.is_number()) v.push_back(x.get<double>());
            else if (x.is_array() && v.size() <= static_cast<size_t>(n)) {
                for (const auto& y : x) KILN_TRY(flat(y));
            } else return configError(p, "expected a number or a list of numbers");
            return {};
        };
        KILN_TRY(flat(*it));
        if (v.size() == 1) v.assign(static_cast<size_t>(n), v[0]);
        if (v.size() != static_cast<size_t>(n))
            return configError(p, "expected one value or " + std::to_string(n) + " (one per channel), got " + std::to_string(v.size()));
        for (double x : v) {
            if (!std::isfinite(x) || (std::string(key) == "variance" && x < 0)) return configError(p, "expected finite values (a variance of 0 or more)");
            a.values.push_back(static_cast<float>(x));
        }
        return a;
    }

    // ---- Keras 2's TFOpLambda: a TensorFlow function called on Keras tensors ------------------
    struct OpLambdaCall {
        std::string function;             // "tf.math.multiply"
        json kwargs = json::object();     // the call's keyword arguments
        std::optional<double> constant;   // a number given as the first argument (`2.0 - x`)
    };
    Result<OpLambdaCall> opLambdaCall(const Call& c) const {
        OpLambdaCall l;
        KILN_ASSIGN(std::string fn, str(*c.cfg, "function", c.jpath));
        l.function = "tf." + fn;
        if (!c.inbound || !c.inbound->is_array() || c.inbound->empty()) return l;
        const json& first = (*c.inbound)[0].is_string() ? *c.inbound : (*c.inbound)[0];
        if (!first.is_array()) return l;
        if (first.size() >= 4 && first[3].is_object()) l.kwargs = first[3];
        if (first.size() >= 3 && first[0] == kConstantValue) {
            if (!first[2].is_number()) return unsupported(c, l.function + " with a first argument that is neither a tensor nor a number");
            l.constant = first[2].get<double>();
        }
        return l;
    }
    Result<Converted> mapOpLambda(const Call& c) {
        KILN_ASSIGN(OpLambdaCall l, opLambdaCall(c));
        const std::string& f = l.function;
        const json& kw = l.kwargs;
        const std::string kp = c.jpath + ".kwargs";
        AttrMap a;
        Converted r;
        auto kwNumber = [&](const char* key, double def) -> Result<double> { return number(kw, key, kp, def); };
        auto one = [&](const std::string& op) -> Result<Converted> {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(r.output, simple(c, op, a));
            return r;
        };
        static const std::map<std::string, std::string> unary{
            {"tf.nn.relu", "ReLU"},        {"tf.nn.relu6", "ReLU6"},       {"tf.math.sigmoid", "Sigmoid"}, {"tf.nn.sigmoid", "Sigmoid"},
            {"tf.sigmoid", "Sigmoid"},     {"tf.math.tanh", "Tanh"},       {"tf.nn.tanh", "Tanh"},         {"tf.tanh", "Tanh"},
            {"tf.nn.silu", "SiLU"},        {"tf.nn.swish", "SiLU"},        {"tf.keras.activations.swish", "SiLU"}};
        if (auto u = unary.find(f); u != unary.end()) return one(u->second);
        if (f == "tf.nn.gelu") {
            KILN_ASSIGN(bool approximate, boolean(kw, "approximate", kp, false));
            a.set("approximate", approximate);
            return one("GELU");
        }
        if (f == "tf.nn.leaky_relu") {
            KILN_ASSIGN(double alpha, kwNumber("alpha", 0.2));
            a.set("negative_slope", alpha);
            return one("LeakyReLU");
        }
        if (f == "tf.nn.softmax" || f == "tf.math.softmax") {
            KILN_ASSIGN(int64_t axis, integer(kw, "axis", kp, -1));
            a.set("axis", axis);
            return one("Softmax");
        }
        if (f == "tf.identity") {
            KILN_TRY(oneInput(c));
            r.output = c.inputs[0];
            r.kind = NodeMapping::Kind::PassThrough;
            return r;
        }
        if (f == "tf.clip_by_value") {
            KILN_ASSIGN(double lo, kwNumber("clip_value_min", NAN));
            KILN_ASSIGN(double hi, kwNumber("clip_value_max", NAN));
            if (!std::isfinite(lo) || !std::isfinite(hi)) return unsupported(c, f + " without numbers for clip_value_min and clip_value_max");
            a.set("min", lo);
            a.set("max", hi);
            return one("Clip");
        }
        if (f == "tf.math.negative") {
            a.set("scale", -1.0);
            a.set("offset", 0.0);
            return one("Rescaling");
        }
        if (f == "tf.reshape") {
            KILN_TRY(oneInput(c));
            const json& shape = kw.value("shape", json());
            if (!shape.is_array() || shape.size() < 2) return unsupported(c, f + " without a list shape that keeps the batch dimension");
            if (!(shape[0].is_null() || (shape[0].is_number_integer() && shape[0].get<int64_t>() == -1)))
                return unsupported(c, f + " that changes the batch dimension (shape[0] is not -1)");
            std::vector<int64_t> target;
            for (size_t k = 1; k < shape.size(); ++k) {
                if (!shape[k].is_number_integer() || shape[k].get<int64_t>() < -1 || shape[k].get<int64_t>() == 0 || shape[k].get<int64_t>() > kMaxDim)
                    return configError(kp + ".shape", "expected positive sizes (one may be -1)");
                target.push_back(shape[k].get<int64_t>());
            }
            a.set("target_shape", target);
            KILN_ASSIGN(r.output, simple(c, "Reshape", a));
            return r;
        }
        if (f == "tf.concat") {
            KILN_ASSIGN(int64_t axis, integer(kw, "axis", kp, 0));
            const int64_t rank = inShape(c).rank();
            if (axis == 0 || axis == -rank) return unsupported(c, f + " along the batch axis");
            a.set("axis", axis);
            KILN_ASSIGN(r.output, simple(c, "Concatenate", a));
            return r;
        }
        if (f == "tf.math.reduce_mean" || f == "tf.math.reduce_max") {
            // Over height and width of an image: global pooling (keepdims: reshaped to [1, 1, c]).
            KILN_TRY(oneInput(c));
            const json& ax = kw.value("axis", json());
            std::vector<int64_t> axes;
            if (ax.is_array())
                for (const auto& v : ax) axes.push_back(v.is_number_integer() ? v.get<int64_t>() : 0);
            KILN_ASSIGN(bool keepdims, boolean(kw, "keepdims", kp, false));
            if (inShape(c).rank() != 4 || !(axes == std::vector<int64_t>{1, 2} || axes == std::vector<int64_t>{-3, -2}))
                return unsupported(c, f + " over axes other than height and width of an image");
            const std::string pool = f == "tf.math.reduce_mean" ? "GlobalAveragePooling2D" : "GlobalMaxPooling2D";
            KILN_ASSIGN(r.output, globalPooling(c, pool, a, keepdims));
            return r;
        }
        static const std::map<std::string, std::string> binary{
            {"tf.__operators__.add", "Add"}, {"tf.math.add", "Add"},           {"tf.add", "Add"},
            {"tf.math.subtract", "Subtract"}, {"tf.subtract", "Subtract"},     {"tf.math.multiply", "Multiply"},
            {"tf.multiply", "Multiply"},      {"tf.math.truediv", "Divide"},   {"tf.math.divide", "Divide"},
            {"tf.divide", "Divide"}};
        if (auto b = binary.find(f); b != binary.end()) {
            const std::string& op = b->second;
            if (c.inputs.size() == 2) {
                if (op == "Divide") return unsupported(c, f + " of two tensors (Kiln has no division layer)");
                KILN_ASSIGN(r.output, simple(c, op, a));
                return r;
            }
            if (c.inputs.size() != 1) return unsupported(c, f + " on " + std::to_string(c.inputs.size()) + " tensors");
            // One tensor and a number: `x * 2.0` keeps the number in kwargs y, `2.0 - x` in the first argument.
            std::optional<double> v = l.constant;
            const bool tensorFirst = !v;
            if (!v) {
                const json& y = kw.value("y", json());
                if (!y.is_number()) return unsupported(c, f + " with a y that is neither a tensor nor a number");
                v = y.get<double>();
            }
            double scale = 1.0, offset = 0.0;
            if (op == "Add") offset = *v;
            else if (op == "Subtract") {
                scale = tensorFirst ? 1.0 : -1.0;
                offset = tensorFirst ? -*v : *v;
            } else if (op == "Multiply") scale = *v;
            else {
                if (!tensorFirst) return unsupported(c, f + " of a number by a tensor");
                if (*v == 0.0) return unsupported(c, f + " by zero");
                scale = 1.0 / *v;
            }
            a.set("scale", scale);
            a.set("offset", offset);
            KILN_ASSIGN(r.output, simple(c, "Rescaling", a));
            return r;
        }
        return Error(ErrorCode::UnknownOp, "TFOpLambda layer \"" + c.name + "\": Kiln has no op for the TensorFlow function " + f)
            .withNode(c.name)
            .with("op", f);
    }

    // TimeDistributed(layer) applies the layer to every step of [batch, steps, ...]. A layer that
    // acts on each value, or on the last axis alone, computes the same on the whole tensor: it
    // becomes that layer's Kiln node under the wrapper's name, with the wrapped layer's weights
    // (Keras 3 keeps them below the wrapper, "<wrapper>/<layer>"; Keras 2's .h5 under the wrapper's
    // own name). Other layers (Conv2D, Flatten...) see one step at a time: refused.
    Result<Converted> timeDistributed(const Call& c) {
        KILN_TRY(oneInput(c));
        const json* inner = wrappedLayer(c);
        if (!inner) return configError(c.jpath + ".layer", "expected the wrapped layer's class_name and config");
        const std::string innerCls = (*inner)["class_name"].get<std::string>();
        const json& innerCfg = (*inner)["config"];
        const std::string ip = c.jpath + ".layer.config";
        static const std::set<std::string> perPosition{"Dense", "Activation", "Dropout", "ReLU", "LeakyReLU", "Softmax", "Rescaling",
                                                       "LayerNormalization", "BatchNormalization"};
        if (!perPosition.count(innerCls))
            return unsupported(c, "TimeDistributed(" + innerCls +
                                      "): Kiln computes TimeDistributed only over layers that act on each "
                                      "position's last axis (Dense, Activation, Dropout, ReLU, LeakyReLU, Softmax, Rescaling, "
                                      "LayerNormalization, BatchNormalization)");
        if (inShape(c).rank() < 3) return unsupported(c, "TimeDistributed on " + inShape(c).toString() + ", which has no steps");
        // Axes and noise shapes count the wrapped layer's own dimensions (one fewer): only its last
        // axis is the same outside, and Kiln's layer gets it as -1.
        const int64_t innerLast = inShape(c).rank() - 2;
        const json& axis = innerCfg.value("axis", json());
        const json& ax = axis.is_array() && axis.size() == 1 ? axis[0] : axis;
        if (!ax.is_null() && ax != json(-1) && ax != json(innerLast))
            return unsupported(c, "TimeDistributed(" + innerCls + ") over axis " + axis.dump() + " of each step (Kiln maps the last axis only)");
        if (!innerCfg.value("noise_shape", json()).is_null()) return unsupported(c, "TimeDistributed(" + innerCls + ") with a noise_shape");
        m_wrapped.push_back(std::make_unique<json>(innerCfg));
        if (!ax.is_null()) (*m_wrapped.back())["axis"] = -1;
        Call ic = c;
        ic.cls = innerCls;
        ic.cfg = m_wrapped.back().get();
        ic.jpath = ip;
        ic.inbound = nullptr;
        if (!c.shared) {
            std::vector<std::string> key = c.weightsKey;
            key.push_back(innerCfg.value("name", json("")).is_string() ? innerCfg.value("name", std::string()) : std::string());
            KILN_ASSIGN(std::vector<LayerWeight> below, m_weights.weights(key));
            if (!below.empty()) ic.weightsKey = key;
        }
        KILN_ASSIGN(Converted r, mapLayer(ic));
        r.reason = "TimeDistributed(" + innerCls + ") computed as " + innerCls + " on every position" + (r.reason.empty() ? "" : "; " + r.reason);
        return r;
    }

    Result<Converted> mapLayer(const Call& c) {
        const json& cfg = *c.cfg;
        const std::string& jp = c.jpath;
        const std::string& cls = c.cls;
        AttrMap a;
        Converted r;
        if (cls == "Dense") {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(int64_t units, integer(cfg, "units", jp));
            KILN_ASSIGN(bool bias, boolean(cfg, "use_bias", jp, true));
            KILN_ASSIGN(std::string act, activationName(cfg, "activation", jp));
            const bool fold = attributeActivation(act, true);
            a.set("units", units);
            a.set("use_bias", bias);
            if (fold && act != "linear") a.set("activation", act);
            // Keras's Dense acts on the last axis of any rank; Kiln's takes ranks 2 and 3, so a
            // higher one goes through a Reshape to [batch, positions, features] and back.
            const Shape in = inShape(c);
            if (in.rank() < 2) return unsupported(c, "an input without features " + in.toString());
            const int64_t features = in[in.rank() - 1];
            int n = -1;
            if (in.rank() <= 3) {
                KILN_ASSIGN(n, simple(c, "Dense", a));
            } else {
                Node rows;
                rows.name = uniqueName(c.name + "_flatten");
                rows.op = "Reshape";
                rows.inputs = {kname(c.inputs[0])};
                rows.attrs.set("target_shape", std::vector<int64_t>{in.numelFrom(1) / features, features});
                KILN_ASSIGN(int r0, addNode(std::move(rows)));
                Node d;
                d.name = c.name;
                d.op = "Dense";
                d.attrs = a;
                d.inputs = {kname(r0)};
                KILN_TRY(addNode(std::move(d)));
                Node back;
                back.name = uniqueName(c.name + "_restore");
                back.op = "Reshape";
                back.inputs = {c.name};
                std::vector<int64_t> dims(in.dims().begin() + 1, in.dims().end());
                dims.back() = units;
                back.attrs.set("target_shape", dims);
                KILN_ASSIGN(n, addNode(std::move(back)));
            }
            KILN_ASSIGN(auto w, weightsFor(c, bias ? 2 : 1));
            if (!c.shared) {
                KILN_TRY(checkShape(c, w[0], {features, units}));
                addWeight(c.name, "kernel", w[0].array);
                if (bias) {
                    KILN_TRY(checkShape(c, w[1], {units}));
                    addWeight(c.name, "bias", w[1].array);
                }
            }
            return withActivation(c, n, act, fold);
        }
        if (cls == "TimeDistributed") return timeDistributed(c);
        if (cls == "Conv2D" || cls == "DepthwiseConv2D" || cls == "SeparableConv2D") {
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            KILN_ASSIGN(auto kernel, ints(cfg, "kernel_size", jp, 2));
            KILN_ASSIGN(auto strides, ints(cfg, "strides", jp, 2, std::vector<int64_t>{1, 1}));
            KILN_ASSIGN(auto dilation, ints(cfg, "dilation_rate", jp, 2, std::vector<int64_t>{1, 1}));
            KILN_ASSIGN(std::string padding, str(cfg, "padding", jp, std::string("valid")));
            KILN_ASSIGN(bool bias, boolean(cfg, "use_bias", jp, true));
            KILN_ASSIGN(std::string act, activationName(cfg, "activation", jp));
            std::transform(padding.begin(), padding.end(), padding.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
            if (padding != "valid" && padding != "same") return unsupported(c, "padding \"" + padding + "\"");
            if (inShape(c).rank() != 4) return unsupported(c, "it expects images [batch, height, width, channels]");
            const int64_t ch = inShape(c)[3];
            const bool fold = attributeActivation(act, false);
            a.set("kernel_size", kernel);
            a.set("strides", strides);
            a.set("padding", padding);
            a.set("dilation_rate", dilation);
            if (cls == "Conv2D") {
                KILN_ASSIGN(int64_t filters, integer(cfg, "filters", jp));
                KILN_ASSIGN(int64_t groups, integer(cfg, "groups", jp, 1));
                if (groups < 1 || ch % groups != 0) return unsupported(c, "groups " + std::to_string(groups) + " for " + std::to_string(ch) + " input channels");
                a.set("filters", filters);
                if (groups != 1) a.set("groups", groups);
                a.set("use_bias", bias);
                if (fold && act != "linear") a.set("activation", act);
                KILN_ASSIGN(int n, simple(c, "Conv2D", a));
                KILN_ASSIGN(auto w, weightsFor(c, bias ? 2 : 1));
                if (!c.shared) {
                    KILN_TRY(checkShape(c, w[0], {kernel[0], kernel[1], ch / groups, filters}));
                    addWeight(c.name, "kernel", w[0].array);
                    if (bias) {
                        KILN_TRY(checkShape(c, w[1], {filters}));
                        addWeight(c.name, "bias", w[1].array);
                    }
                }
                return withActivation(c, n, act, fold);
            }
            KILN_ASSIGN(int64_t mult, integer(cfg, "depth_multiplier", jp, 1));
            a.set("depth_multiplier", mult);
            if (cls == "DepthwiseConv2D") {
                a.set("use_bias", bias);
                if (fold && act != "linear") a.set("activation", act);
                KILN_ASSIGN(int n, simple(c, "DepthwiseConv2D", a));
                KILN_ASSIGN(auto w, weightsFor(c, bias ? 2 : 1));
                if (!c.shared) {
                    KILN_TRY(checkShape(c, w[0], {kernel[0], kernel[1], ch, mult}));
                    addWeight(c.name, "depthwise_kernel", w[0].array);
                    if (bias) {
                        KILN_TRY(checkShape(c, w[1], {ch * mult}));
                        addWeight(c.name, "bias", w[1].array);
                    }
                }
                return withActivation(c, n, act, fold);
            }
            // SeparableConv2D: a depthwise convolution (the layer's window, strides, padding and
            // dilation, no bias) and a 1x1 convolution (the filters, the bias and the activation).
            KILN_ASSIGN(int64_t filters, integer(cfg, "filters", jp));
            a.set("use_bias", false);
            const std::string dwName = uniqueName(c.name + "_depthwise");
            const std::string pwName = uniqueName(c.name + "_pointwise");
            KILN_ASSIGN(int dw, simple(c, "DepthwiseConv2D", a, dwName));
            AttrMap p;
            p.set("filters", filters);
            p.set("kernel_size", std::vector<int64_t>{1, 1});
            p.set("use_bias", bias);
            if (fold && act != "linear") p.set("activation", act);
            Node pw;
            pw.name = pwName;
            pw.op = "Conv2D";
            pw.attrs = p;
            pw.inputs = {dwName};
            if (c.shared) {
                m_out.graph.nodes[static_cast<size_t>(dw)].shareWeightsWith = c.sharedWith + "_depthwise";
                pw.shareWeightsWith = c.sharedWith + "_pointwise";
            }
            KILN_ASSIGN(int pn, addNode(std::move(pw)));
            KILN_ASSIGN(auto w, weightsFor(c, bias ? 3 : 2));
            if (!c.shared) {
                KILN_TRY(checkShape(c, w[0], {kernel[0], kernel[1], ch, mult}));
                KILN_TRY(checkShape(c, w[1], {1, 1, ch * mult, filters}));
                addWeight(dwName, "depthwise_kernel", w[0].array);
                addWeight(pwName, "kernel", w[1].array);
                if (bias) {
                    KILN_TRY(checkShape(c, w[2], {filters}));
                    addWeight(pwName, "bias", w[2].array);
                }
            }
            return withActivation(c, pn, act, fold);
        }
        if (cls == "MaxPooling2D" || cls == "AveragePooling2D") {
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            KILN_ASSIGN(auto pool, ints(cfg, "pool_size", jp, 2, std::vector<int64_t>{2, 2}));
            KILN_ASSIGN(auto strides, ints(cfg, "strides", jp, 2, pool));
            KILN_ASSIGN(std::string padding, str(cfg, "padding", jp, std::string("valid")));
            std::transform(padding.begin(), padding.end(), padding.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
            a.set("pool_size", pool);
            a.set("strides", strides);
            a.set("padding", padding);
            KILN_ASSIGN(r.output, simple(c, cls, a));
            return r;
        }
        if (cls == "GlobalAveragePooling2D" || cls == "GlobalMaxPooling2D") {
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            KILN_ASSIGN(bool keepdims, boolean(cfg, "keepdims", jp, false));
            KILN_ASSIGN(r.output, globalPooling(c, cls, a, keepdims));
            return r;
        }
        if (cls == "GlobalAveragePooling1D") {  // the mean over the positions of [batch, steps, features]
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            // Keras would average only the unmasked positions; Kiln has no masks.
            if (m_masked.count(c.inputs[0]))
                return unsupported(c, "its input is the output of an Embedding with mask_zero=True, whose mask Kiln does not apply");
            KILN_ASSIGN(bool keepdims, boolean(cfg, "keepdims", jp, false));
            a.set("keepdims", keepdims);
            KILN_ASSIGN(r.output, simple(c, cls, a));
            return r;
        }
        if (cls == "ZeroPadding2D") {
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            std::vector<int64_t> pad;
            const auto it = cfg.find("padding");
            if (it == cfg.end() || it->is_null()) pad = {1, 1, 1, 1};
            else if (it->is_number_integer()) pad.assign(4, it->get<int64_t>());
            else if (it->is_array() && it->size() == 2 && (*it)[0].is_number_integer() && (*it)[1].is_number_integer())
                pad = {(*it)[0].get<int64_t>(), (*it)[0].get<int64_t>(), (*it)[1].get<int64_t>(), (*it)[1].get<int64_t>()};
            else if (it->is_array() && it->size() == 2 && (*it)[0].is_array() && (*it)[1].is_array() && (*it)[0].size() == 2 && (*it)[1].size() == 2) {
                for (const auto& side : *it)
                    for (const auto& v : side) {
                        if (!v.is_number_integer()) return configError(jp + ".padding", "expected integers");
                        pad.push_back(v.get<int64_t>());
                    }
            } else {
                return configError(jp + ".padding", "expected an integer, two integers or two pairs");
            }
            for (int64_t v : pad)
                if (v < 0 || v > kMaxDim) return configError(jp + ".padding", "expected sizes of 0 or more");
            a.set("padding", pad);
            KILN_ASSIGN(r.output, simple(c, "ZeroPadding2D", a));
            return r;
        }
        if (cls == "UpSampling2D") {
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            KILN_ASSIGN(auto size, ints(cfg, "size", jp, 2, std::vector<int64_t>{2, 2}));
            KILN_ASSIGN(std::string interp, str(cfg, "interpolation", jp, std::string("nearest")));
            if (interp != "nearest" && interp != "bilinear") return unsupported(c, "interpolation \"" + interp + "\"");
            a.set("size", size);
            a.set("interpolation", interp);
            KILN_ASSIGN(r.output, simple(c, "UpSampling2D", a));
            return r;
        }
        if (cls == "BatchNormalization" || cls == "LayerNormalization") {
            KILN_TRY(oneInput(c));
            const int64_t rank = inShape(c).rank();
            auto axisIt = cfg.find("axis");
            int64_t axis = -1;
            if (axisIt != cfg.end() && !axisIt->is_null()) {
                const json& ax = axisIt->is_array() && axisIt->size() == 1 ? (*axisIt)[0] : *axisIt;
                if (!ax.is_number_integer()) return unsupported(c, "normalising more than one axis");
                axis = ax.get<int64_t>();
            }
            if (axis != -1 && axis != rank - 1) return unsupported(c, "axis " + std::to_string(axis) + " (Kiln normalises the last axis)");
            KILN_ASSIGN(double eps, number(cfg, "epsilon", jp, 1e-3));
            KILN_ASSIGN(bool center, boolean(cfg, "center", jp, true));
            KILN_ASSIGN(bool scale, boolean(cfg, "scale", jp, true));
            a.set("epsilon", eps);
            if (cls == "BatchNormalization") {
                KILN_ASSIGN(bool renorm, boolean(cfg, "renorm", jp, false));
                if (renorm) return unsupported(c, "batch renormalisation");
                KILN_ASSIGN(double momentum, number(cfg, "momentum", jp, 0.99));
                a.set("momentum", momentum);
            } else {
                KILN_ASSIGN(bool rms, boolean(cfg, "rms_scaling", jp, false));
                if (rms) return unsupported(c, "rms_scaling");
            }
            KILN_ASSIGN(r.output, simple(c, cls, a));
            const int64_t n = inShape(c)[rank - 1];
            const size_t stats = cls == "BatchNormalization" ? 2 : 0;
            KILN_ASSIGN(auto w, weightsFor(c, (scale ? 1 : 0) + (center ? 1 : 0) + stats));
            if (!c.shared) {
                for (const auto& t : w) KILN_TRY(checkShape(c, t, {n}));
                size_t k = 0;
                if (scale) addWeight(c.name, "gamma", w[k++].array);
                else addFilled(c.name, "gamma", n, 1.0f);
                if (center) addWeight(c.name, "beta", w[k++].array);
                else addFilled(c.name, "beta", n, 0.0f);
                if (stats) {
                    addWeight(c.name, "moving_mean", w[k++].array);
                    addWeight(c.name, "moving_variance", w[k++].array);
                }
            }
            return r;
        }
        if (cls == "Dropout") {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(double rate, number(cfg, "rate", jp, 0.5));
            a.set("rate", rate);
            // noise_shape, batch included: null (one decision per index) becomes -1; a size of 1
            // shares one decision along the axis (EfficientNet's stochastic depth, [null, 1, 1, 1],
            // keeps or drops whole samples of a residual branch).
            if (const auto ns = cfg.find("noise_shape"); ns != cfg.end() && !ns->is_null()) {
                const Shape& in = inShape(c);
                if (!ns->is_array() || static_cast<int64_t>(ns->size()) != in.rank())
                    return configError(jp + ".noise_shape", "expected one entry per dimension of the input " + in.toString() + ", batch included");
                std::vector<int64_t> noise;
                for (size_t k = 0; k < ns->size(); ++k) {
                    const json& d = (*ns)[k];
                    if (d.is_null()) noise.push_back(-1);
                    else if (!d.is_number_integer()) return configError(jp + ".noise_shape", "expected sizes or null");
                    else if (d.get<int64_t>() == 1) noise.push_back(1);
                    else if (k > 0 && d.get<int64_t>() == in[static_cast<int64_t>(k)]) noise.push_back(-1);
                    else return unsupported(c, "noise_shape " + ns->dump() + ": entry " + std::to_string(k) + " is neither 1, null nor the input's size " + in.toString());
                }
                a.set("noise_shape", noise);
            }
            KILN_ASSIGN(r.output, simple(c, "Dropout", a));
            return r;
        }
        if (cls == "Flatten") {
            KILN_TRY(oneInput(c));
            KILN_TRY(channelsLast(c));
            KILN_ASSIGN(r.output, simple(c, "Flatten", a));
            return r;
        }
        if (cls == "Reshape") {
            KILN_TRY(oneInput(c));
            std::vector<int64_t> target;
            auto it = cfg.find("target_shape");
            if (it == cfg.end() || !it->is_array()) return configError(jp + ".target_shape", "expected a list of sizes");
            for (const auto& v : *it) {
                if (!v.is_number_integer() || v.get<int64_t>() < -1 || v.get<int64_t>() == 0 || v.get<int64_t>() > kMaxDim)
                    return configError(jp + ".target_shape", "expected positive sizes (one may be -1)");
                target.push_back(v.get<int64_t>());
            }
            a.set("target_shape", target);
            KILN_ASSIGN(r.output, simple(c, "Reshape", a));
            return r;
        }
        if (cls == "Rescaling") {
            KILN_TRY(oneInput(c));
            const auto sIt = cfg.find("scale");
            const auto oIt = cfg.find("offset");
            if (sIt == cfg.end() || !sIt->is_number() || (oIt != cfg.end() && !oIt->is_null() && !oIt->is_number()))
                return unsupported(c, "a scale or offset per channel (Kiln's Rescaling takes numbers)");
            a.set("scale", sIt->get<double>());
            a.set("offset", oIt == cfg.end() || oIt->is_null() ? 0.0 : oIt->get<double>());
            KILN_ASSIGN(r.output, simple(c, "Rescaling", a));
            return r;
        }
        if (cls == "Concatenate") {
            KILN_ASSIGN(int64_t axis, integer(cfg, "axis", jp, -1));
            a.set("axis", axis);
            KILN_ASSIGN(r.output, simple(c, "Concatenate", a));
            return r;
        }
        if ((cls == "Add" || cls == "Subtract" || cls == "Multiply" || cls == "TrueDivide" || cls == "Divide") && c.inputs.size() == 1) {
            // Keras 3 writes `x + 3.0`, `x * (1 / 6)`... on a tensor as an operation of
            // keras.src.ops.numpy whose inbound node holds the tensor and the number: a Rescaling.
            KILN_ASSIGN(auto constant, scalarOperand(c));
            if (!constant) return unsupported(c, "one tensor without a number to combine it with");
            const auto [v, tensorFirst] = *constant;
            double scale = 1.0, offset = 0.0;
            if (cls == "Add") offset = v;
            else if (cls == "Subtract") {
                scale = tensorFirst ? 1.0 : -1.0;
                offset = tensorFirst ? -v : v;
            } else if (cls == "Multiply") scale = v;
            else {
                if (!tensorFirst) return unsupported(c, "a number divided by a tensor");
                if (v == 0.0) return unsupported(c, "a division by zero");
                scale = 1.0 / v;
            }
            a.set("scale", scale);
            a.set("offset", offset);
            KILN_ASSIGN(r.output, simple(c, "Rescaling", a));
            return r;
        }
        if (cls == "Add" || cls == "Subtract" || cls == "Multiply") {
            KILN_ASSIGN(r.output, simple(c, cls, a));
            return r;
        }
        if (cls == "Normalization") {
            // Keras's preprocessing layer: (x - mean) / max(sqrt(variance), epsilon), with the
            // statistics from its config (mean=, variance=) or its weights (after adapt()), kept
            // per index of the axes it names (default -1: per channel).
            // axis=None (Keras 3 writes an empty list) keeps one mean and variance for every value:
            // Kiln's per-channel statistics get that number in each channel. invert=True computes
            // mean + x * max(sqrt(variance), epsilon), the same per-channel affine map as a
            // normalisation with mean' = -mean / std and variance' = 1 / std^2, which Kiln's
            // Normalization is given.
            // Other axes (axis=1 of an image, a tuple such as (1, 2)): Kiln's Normalization keeps
            // statistics along the last axis, so the values from the first kept axis on are
            // flattened into that last axis, normalised with the statistics repeated over the
            // axes Keras does not keep, and reshaped back: the same numbers, one value per element.
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(bool invert, boolean(cfg, "invert", jp, false));
            const Shape in = inShape(c);  // a copy: adding nodes moves the shapes
            const int64_t rank = in.rank();
            auto axisIt = cfg.find("axis");
            const bool scalar = axisIt == cfg.end() ? false : (axisIt->is_null() || (axisIt->is_array() && axisIt->empty()));
            std::vector<int64_t> keep{rank - 1};  // Keras's default axis is -1
            if (axisIt != cfg.end() && !scalar) {
                keep.clear();
                const json one = axisIt->is_array() ? *axisIt : json::array({*axisIt});
                for (const auto& ax : one) {
                    if (!ax.is_number_integer()) return configError(jp + ".axis", "expected an axis number, a list of them, or null");
                    int64_t axis = ax.get<int64_t>();
                    if (axis < 0) axis += rank;
                    if (axis <= 0 || axis >= rank)
                        return configError(jp + ".axis", "axis " + std::to_string(ax.get<int64_t>()) + " is not a dimension of the input " + in.toString() + " after the batch");
                    if (std::find(keep.begin(), keep.end(), axis) != keep.end()) return configError(jp + ".axis", "axis " + std::to_string(axis) + " is named twice");
                    keep.push_back(axis);
                }
                std::sort(keep.begin(), keep.end());  // Keras keeps the statistics in axis order
            }
            const bool lastAxis = scalar || keep == std::vector<int64_t>{rank - 1};
            // Statistics as the file holds them: one per index of the kept axes.
            std::vector<int64_t> statDims;
            int64_t statCount = 1;
            for (int64_t k : keep) {
                statDims.push_back(in[k]);
                statCount *= in[k];
            }
            if (scalar) {
                statDims = {in[rank - 1]};
                statCount = in[rank - 1];
            }
            // Kiln's statistics: one per index of the last axis of the (flattened) values.
            const int64_t first = lastAxis ? rank - 1 : keep.front();
            int64_t n = 1;
            for (int64_t k = first; k < rank; ++k) n *= in[k];
            if (n > kMaxElements) return unsupported(c, "statistics over more than " + std::to_string(kMaxElements) + " values");
            Hdf5Array mean, var;
            const auto meanIt = cfg.find("mean");
            const auto varIt = cfg.find("variance");
            if (meanIt != cfg.end() && !meanIt->is_null()) {
                KILN_ASSIGN(mean, statistic(c, "mean", statCount));
                KILN_ASSIGN(var, statistic(c, "variance", statCount));
            } else {
                if (varIt != cfg.end() && !varIt->is_null()) return configError(jp + ".mean", "variance is given without mean");
                KILN_ASSIGN(auto w, weightsFor(c, 3));  // mean, variance, count
                if (!c.shared) {
                    for (size_t k = 0; k < 2; ++k) {
                        Hdf5Array& t = k == 0 ? mean : var;
                        t = w[k].array;
                        const bool one = t.values.size() == 1 && (t.dims.empty() || t.dims == std::vector<int64_t>{1});
                        if (scalar && one) {
                            t.dims = {statCount};
                            t.values.assign(static_cast<size_t>(statCount), t.values[0]);
                        } else {
                            KILN_TRY(checkShape(c, w[k], statDims));
                            t.dims = {statCount};
                        }
                    }
                }
            }
            // The Kiln nodes: Normalization on the last axis, or reshapes around it.
            if (lastAxis) {
                KILN_ASSIGN(r.output, simple(c, "Normalization", a));
            } else {
                std::vector<int64_t> flat(in.dims().begin() + 1, in.dims().begin() + first);
                flat.push_back(n);
                AttrMap ra;
                ra.set("target_shape", flat);
                KILN_ASSIGN(int f, simple(c, "Reshape", ra, uniqueName(c.name + "_flatten")));
                Node nn;
                nn.name = c.name;
                nn.op = "Normalization";
                nn.inputs = {kname(f)};
                KILN_ASSIGN(int normalised, addNode(std::move(nn)));
                Node back;
                back.name = uniqueName(c.name + "_restore");
                back.op = "Reshape";
                back.inputs = {kname(normalised)};
                back.attrs.set("target_shape", std::vector<int64_t>(in.dims().begin() + 1, in.dims().end()));
                KILN_ASSIGN(r.output, addNode(std::move(back)));
            }
            if (c.shared) return r;
            if (invert) {
                for (size_t k = 0; k < mean.values.size(); ++k) {
                    const double sd = std::max(std::sqrt(static_cast<double>(var.values[k])), 1e-7);
                    if (sd > 1e7) return unsupported(c, "invert=True with a standard deviation above 1e7");
                    mean.values[k] = static_cast<float>(-mean.values[k] / sd);
                    var.values[k] = static_cast<float>(1.0 / (sd * sd));
                }
                r.reason = "invert=True: mean + x * std as Kiln's Normalization with mean -mean/std and variance 1/std^2";
            }
            if (scalar) r.reason += std::string(r.reason.empty() ? "" : "; ") + "axis None: the one mean and variance in every channel";
            if (!lastAxis) {
                // Spread the statistics of the kept axes over every index from the first kept axis
                // on (row-major, the last axis fastest): Kiln's statistic j holds Keras's statistic
                // at the kept coordinates of j.
                Hdf5Array m2, v2;
                m2.dims = v2.dims = {n};
                m2.values.resize(static_cast<size_t>(n));
                v2.values.resize(static_cast<size_t>(n));
                for (int64_t j = 0; j < n; ++j) {
                    int64_t rest = j, stat = 0, stride = 1;
                    for (int64_t k = rank - 1; k >= first; --k) {
                        const int64_t coord = rest % in[k];
                        rest /= in[k];
                        if (std::find(keep.begin(), keep.end(), k) != keep.end()) {
                            stat += coord * stride;
                            stride *= in[k];
                        }
                    }
                    m2.values[static_cast<size_t>(j)] = mean.values[static_cast<size_t>(stat)];
                    v2.values[static_cast<size_t>(j)] = var.values[static_cast<size_t>(stat)];
                }
                mean = std::move(m2);
                var = std::move(v2);
                std::string axes;
                for (int64_t k : keep) axes += (axes.empty() ? "" : ", ") + std::to_string(k);
                r.reason += std::string(r.reason.empty() ? "" : "; ") + "axis (" + axes + "): values flattened from axis " + std::to_string(first) +
                            " on, statistics repeated over the other axes, then reshaped back";
            }
            addWeight(c.name, "mean", mean);
            addWeight(c.name, "variance", var);
            return r;
        }
        if (cls == "TFOpLambda") return mapOpLambda(c);
        if (cls == "Activation") {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(std::string act, activationName(cfg, "activation", jp));
            KILN_ASSIGN(std::optional<int> n, activationNode(c, act, c.inputs[0], c.name));
            if (!n) return unsupported(c, "activation \"" + act + "\"");
            r.output = *n;
            if (*n == c.inputs[0]) r.kind = NodeMapping::Kind::PassThrough;
            return r;
        }
        if (cls == "ReLU") {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(double slope, number(cfg, "negative_slope", jp, 0.0));
            KILN_ASSIGN(double threshold, number(cfg, "threshold", jp, 0.0));
            const auto maxIt = cfg.find("max_value");
            const bool capped = maxIt != cfg.end() && !maxIt->is_null();
            if (capped && !maxIt->is_number()) return configError(jp + ".max_value", "expected a number");
            const double maxValue = capped ? maxIt->get<double>() : 0.0;
            if (threshold != 0.0) return unsupported(c, "a threshold other than 0");
            if (capped && slope != 0.0) return unsupported(c, "max_value together with negative_slope");
            if (!capped && slope == 0.0) {
                KILN_ASSIGN(r.output, simple(c, "ReLU", a));
            } else if (!capped) {
                a.set("negative_slope", slope);
                KILN_ASSIGN(r.output, simple(c, "LeakyReLU", a));
            } else if (maxValue == 6.0) {
                KILN_ASSIGN(r.output, simple(c, "ReLU6", a));
            } else {
                if (maxValue <= 0.0) return unsupported(c, "max_value of 0 or less");
                a.set("min", 0.0);
                a.set("max", maxValue);
                KILN_ASSIGN(r.output, simple(c, "Clip", a));
            }
            return r;
        }
        if (cls == "LeakyReLU") {
            KILN_TRY(oneInput(c));
            // Keras 3 calls the slope negative_slope; Keras 2 called it alpha.
            KILN_ASSIGN(double slope, number(cfg, cfg.contains("alpha") ? "alpha" : "negative_slope", jp, 0.3));
            a.set("negative_slope", slope);
            KILN_ASSIGN(r.output, simple(c, "LeakyReLU", a));
            return r;
        }
        if (cls == "Softmax") {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(int64_t axis, integer(cfg, "axis", jp, -1));
            a.set("axis", axis);
            KILN_ASSIGN(r.output, simple(c, "Softmax", a));
            return r;
        }
        if (cls == "Embedding") {
            KILN_TRY(oneInput(c));
            KILN_ASSIGN(int64_t inDim, integer(cfg, "input_dim", jp));
            KILN_ASSIGN(int64_t outDim, integer(cfg, "output_dim", jp));
            a.set("input_dim", inDim);
            a.set("output_dim", outDim);
            KILN_ASSIGN(r.output, simple(c, "Embedding", a));
            KILN_ASSIGN(bool maskZero, boolean(cfg, "mask_zero", jp, false));
            if (maskZero) m_masked.insert(r.output);
            KILN_ASSIGN(auto w, weightsFor(c, 1));
            if (!c.shared) {
                KILN_TRY(checkShape(c, w[0], {inDim, outDim}));
                addWeight(c.name, "embeddings", w[0].array);
            }
            return r;
        }
        // A wrapper says what it wraps: "Bidirectional(LSTM)".
        return Error(ErrorCode::UnknownOp, "Kiln has no layer for the Keras class " + displayClass(c)).withNode(c.name).with("op", displayClass(c));
    }

    // ---- models ---------------------------------------------------------------------------------
    // An InputLayer's Kiln Input node.
    Result<int> inputNode(const json& cfg, const std::string& jp, const std::string& name) {
        const char* key = cfg.contains("batch_shape") ? "batch_shape" : cfg.contains("batch_input_shape") ? "batch_input_shape" : nullptr;
        if (!key || !cfg[key].is_array() || cfg[key].size() < 2)
            return configError(jp + (key ? std::string(".") + key : std::string(".batch_shape")), "expected the input's shape with a batch dimension");
        std::vector<int64_t> shape;
        for (size_t k = 1; k < cfg[key].size(); ++k) {
            const json& d = cfg[key][k];
            if (d.is_null())
                return Error(ErrorCode::Unsupported, jp + "." + key + ": input \"" + name + "\" has no fixed size in dimension " +
                                                         std::to_string(k) + "; Kiln needs fixed sizes after the batch")
                    .withFile(m_file)
                    .withNode(name)
                    .with("what", "input of variable size");
            if (!d.is_number_integer() || d.get<int64_t>() <= 0 || d.get<int64_t>() > kMaxDim) return configError(jp + "." + key, "expected positive sizes");
            shape.push_back(d.get<int64_t>());
        }
        if (shape.size() > 5) return configError(jp + "." + key, "Kiln inputs have at most 5 dimensions after the batch");
        std::string dtype = "float32";
        if (auto it = cfg.find("dtype"); it != cfg.end()) {
            if (it->is_string()) dtype = it->get<std::string>();
            else if (it->is_object() && it->contains("config") && (*it)["config"].is_object() && (*it)["config"].contains("name") && (*it)["config"]["name"].is_string())
                dtype = (*it)["config"]["name"].get<std::string>();
        }
        Node n;
        n.name = name;
        n.op = "Input";
        n.attrs.set("shape", shape);
        if (dtype.find("int") != std::string::npos) n.attrs.set("dtype", std::string("int32"));
        KILN_ASSIGN(int idx, addNode(std::move(n)));
        m_out.inputs.push_back(name);
        m_out.inputChannelFirst.push_back(false);
        return idx;
    }

    static std::optional<std::vector<int64_t>> shapeHint(const json& shape) {
        if (!shape.is_array() || shape.size() < 2) return std::nullopt;
        std::vector<int64_t> d;
        for (size_t k = 1; k < shape.size(); ++k) {
            if (!shape[k].is_number_integer()) return std::nullopt;
            d.push_back(shape[k].get<int64_t>());
        }
        return d;
    }

    // The tensors one inbound node reads, in order. Keras 3: {"args": [...], "kwargs": {...}} with
    // "__keras_tensor__" entries (a merge layer's first argument is a list of them); Keras 2: a
    // list of [layer, node, tensor, kwargs].
    Result<std::vector<TensorRef>> inboundTensors(const json& node, const std::string& jp, const std::string& scope, bool opLambda) {
        std::vector<TensorRef> out;
        std::function<Status(const json&, const std::string&, int)> collect = [&](const json& v, const std::string& p, int depth) -> Status {
            if (depth > kMaxNesting) return configError(p, "nested too deeply");
            if (v.is_object() && v.value("class_name", json()).is_string() && v["class_name"] == "__keras_tensor__") {
                const json& cfg = v.value("config", json::object());
                const json& h = cfg.is_object() ? cfg.value("keras_history", json()) : json();
                if (!h.is_array() || h.size() < 3 || !h[0].is_string() || !h[1].is_number_integer() || !h[2].is_number_integer())
                    return configError(p + ".config.keras_history", "expected [layer, node, tensor]");
                TensorRef r{h[0].get<std::string>(), h[1].get<int64_t>(), h[2].get<int64_t>()};
                if (auto hint = shapeHint(cfg.value("shape", json())); hint) m_hints[refKey(scope, r)] = *hint;
                out.push_back(std::move(r));
                return {};
            }
            if (v.is_array())
                for (size_t k = 0; k < v.size(); ++k) KILN_TRY(collect(v[k], p + "[" + std::to_string(k) + "]", depth + 1));
            return {};
        };
        if (node.is_object()) {
            KILN_TRY(collect(node.value("args", json::array()), jp + ".args", 0));
            return out;
        }
        if (!node.is_array()) return configError(jp, "expected an inbound node");
        // Keras 2 writes a TFOpLambda (or SlicingOpLambda) call on one tensor unwrapped, [layer, node, tensor, kwargs],
        // a number in the first argument as ["_CONSTANT_VALUE", -1, value, kwargs], and tensors
        // among the keyword arguments (`y` of tf.math.multiply) as [layer, node, tensor].
        const bool single = !node.empty() && node[0].is_string();
        const size_t count = single ? 1 : node.size();
        for (size_t k = 0; k < count; ++k) {
            const json& e = single ? node : node[k];
            const std::string ep = single ? jp : jp + "[" + std::to_string(k) + "]";
            if (opLambda && e.is_array() && e.size() >= 3 && e[0] == kConstantValue) continue;
            if (!e.is_array() || e.size() < 3 || !e[0].is_string() || !e[1].is_number_integer() || !e[2].is_number_integer())
                return configError(ep, "expected [layer, node, tensor, kwargs]");
            out.push_back({e[0].get<std::string>(), e[1].get<int64_t>(), e[2].get<int64_t>()});
        }
        if (opLambda) {
            std::function<Status(const json&, const std::string&, int)> kwargTensors = [&](const json& v, const std::string& p, int depth) -> Status {
                if (depth > kMaxNesting) return configError(p, "nested too deeply");
                if (v.is_array() && v.size() == 3 && v[0].is_string() && v[1].is_number_integer() && v[2].is_number_integer()) {
                    out.push_back({v[0].get<std::string>(), v[1].get<int64_t>(), v[2].get<int64_t>()});
                    return {};
                }
                if (v.is_array() || v.is_object())
                    for (const auto& [key, x] : v.items()) KILN_TRY(kwargTensors(x, p + "." + key, depth + 1));
                return {};
            };
            // Every tensor of a list argument (tf.concat's values) repeats the same kwargs.
            const json& first = single ? node : node[0];
            if (count > 0 && first.size() >= 4 && first[3].is_object()) KILN_TRY(kwargTensors(first[3], jp + ".kwargs", 0));
        }
        return out;
    }

    // [name, node, tensor] or a list of them.
    Result<std::vector<TensorRef>> layerList(const json& v, const std::string& jp) const {
        std::vector<TensorRef> out;
        if (v.is_array() && v.size() == 3 && v[0].is_string()) {
            if (!v[1].is_number_integer() || !v[2].is_number_integer()) return configError(jp, "expected [layer, node, tensor]");
            out.push_back({v[0].get<std::string>(), v[1].get<int64_t>(), v[2].get<int64_t>()});
            return out;
        }
        if (!v.is_array()) return configError(jp, "expected a list of [layer, node, tensor]");
        for (size_t k = 0; k < v.size(); ++k) {
            KILN_ASSIGN(auto one, layerList(v[k], jp + "[" + std::to_string(k) + "]"));
            if (one.size() != 1) return configError(jp + "[" + std::to_string(k) + "]", "expected [layer, node, tensor]");
            out.push_back(one[0]);
        }
        return out;
    }

    // Imports a Functional or Sequential model's layers; `feed` (a nested model) gives its inputs.
    // Returns the output nodes. `prefix` ("" or "outer/") prefixes node names, `path` the weights.
    Result<std::vector<int>> model(const std::string& cls, const json& cfg, const std::string& jp, const std::string& prefix,
                                   const std::vector<std::string>& path, const std::vector<int>& feed, int depth) {
        if (depth > kMaxNesting) return configError(jp, "models are nested too deeply");
        if (cls == "Sequential" && cfg.is_array()) {
            // Keras 2.0-2.2 wrote a Sequential model's config as the bare list of its layers.
            m_wrapped.push_back(std::make_unique<json>(json{{"layers", cfg}}));
            return sequential(*m_wrapped.back(), jp, prefix, path, feed, depth);
        }
        if (!cfg.is_object() || !cfg.contains("layers") || !cfg["layers"].is_array()) return configError(jp + ".layers", "expected a list of layers");
        if (cls == "Sequential") return sequential(cfg, jp, prefix, path, feed, depth);
        return functional(cfg, jp, prefix, path, feed, depth);
    }

    struct LayerEntry {
        std::string cls;
        std::string name;
        const json* cfg = nullptr;
        std::string jp;
    };
    // Keras 2 numbers the calls of a nested model that has an input shape from 1: its call 0 is
    // the one that built it on its own Input, which the config leaves out ("block", 1, 0 is the
    // first call in the outer model). Keras 3 numbers them from 0.
    bool skipsFirstNode(const LayerEntry& e) const {
        if (!m_keras2 || !isModelClass(e.cls) || !e.cfg) return false;
        const json& cfg = *e.cfg;
        const json* layers = cfg.is_array() ? &cfg : cfg.is_object() && cfg.contains("layers") ? &cfg["layers"]
                                                                                               : nullptr;
        if (!layers || !layers->is_array() || layers->empty() || !(*layers)[0].is_object()) return false;
        const json& first = (*layers)[0];
        if (first.value("class_name", json()) == "InputLayer") return true;
        return e.cls == "Sequential" && first.contains("config") && first["config"].is_object() &&
               first["config"].contains("batch_input_shape");
    }
    Result<LayerEntry> entry(const json& l, const std::string& jp) const {
        if (!l.is_object()) return configError(jp, "expected a layer object");
        LayerEntry e;
        KILN_ASSIGN(e.cls, str(l, "class_name", jp));
        if (!l.contains("config") || !l["config"].is_object()) return configError(jp + ".config", "expected the layer's config object");
        e.cfg = &l["config"];
        e.jp = jp + ".config";
        KILN_ASSIGN(e.name, str(*e.cfg, "name", e.jp, l.value("name", json()).is_string() ? std::optional<std::string>(l["name"].get<std::string>()) : std::nullopt));
        if (e.name.empty()) return configError(e.jp + ".name", "a layer has an empty name");
        return e;
    }

    // One call of a (non-input) layer: nested models are flattened, everything else is mapped.
    Result<int> call(const LayerEntry& e, const std::string& prefix, const std::vector<std::string>& path, const std::vector<int>& inputs,
                     int callIndex, std::optional<std::vector<int64_t>> hint, int depth, const json* inbound = nullptr) {
        std::vector<std::string> wkey = path;
        wkey.push_back(e.name);
        NodeMapping map;
        map.sourceName = prefix + e.name + (callIndex ? " (call " + std::to_string(callIndex + 1) + ")" : "");
        map.sourceOp = e.cls;
        // The nodes of a nested model's later calls and of the models inside it share the weights
        // of the first call's: "<prefix>" stands for the weights of origin("<prefix>").
        const std::string origin = originOf(prefix);
        if (isModelClass(e.cls)) {
            // Each call of a nested model gets its own nodes, "<model>/<layer>" for the first and
            // "<model>_call2/<layer>"... for the next, which share the first call's weights.
            const std::string inner = (callIndex == 0 ? prefix + e.name : uniqueName(prefix + e.name + "_call" + std::to_string(callIndex + 1))) + "/";
            m_origin[inner] = origin + e.name + "/";
            const size_t at = m_out.mapping.size();
            m_out.mapping.push_back(map);  // the container first, then its layers
            const size_t before = m_out.graph.nodes.size();
            KILN_ASSIGN(std::vector<int> outs, model(e.cls, *e.cfg, e.jp, inner, wkey, inputs, depth + 1));
            if (outs.size() != 1) return Error(ErrorCode::Unsupported, m_file + ": nested model \"" + e.name + "\" has " + std::to_string(outs.size()) + " outputs; Kiln flattens nested models with one").withFile(m_file).withNode(e.name).with("what", "nested model with several outputs");
            auto& m = m_out.mapping[at];
            m.kind = NodeMapping::Kind::PassThrough;
            m.reason = "nested model flattened into the nodes " + inner + "...";
            if (m_origin[inner] != inner) m.reason += ", which share the weights of " + m_origin[inner] + "...";
            for (size_t k = before; k < m_out.graph.nodes.size(); ++k) m.kilnNodes.push_back(m_out.graph.nodes[k].name);
            return outs[0];
        }
        Call c;
        c.cls = e.cls;
        c.cfg = e.cfg;
        c.jpath = e.jp;
        c.weightsKey = wkey;
        c.inputs = inputs;
        c.outputHint = hint;
        c.inbound = inbound;
        c.shared = callIndex > 0 || origin != prefix;
        c.sharedWith = origin + e.name;
        c.name = callIndex == 0 ? prefix + e.name : prefix + e.name + "_call" + std::to_string(callIndex + 1);
        if (m_names.count(c.name)) return configError(e.jp + ".name", "two layers are called \"" + c.name + "\"");
        m_names.insert(c.name);
        const size_t before = m_out.graph.nodes.size();
        KILN_ASSIGN(Converted r, layer(c));
        if (c.shared && r.kind != NodeMapping::Kind::Placeholder)
            for (size_t k = before; k < m_out.graph.nodes.size(); ++k)
                if (m_out.graph.nodes[k].shareWeightsWith.empty() && m_out.graph.nodes[k].name == c.name) m_out.graph.nodes[k].shareWeightsWith = c.sharedWith;
        map.sourceOp = displayClass(c);
        map.kind = r.kind;
        map.reason = r.reason;
        for (size_t k = before; k < m_out.graph.nodes.size(); ++k) map.kilnNodes.push_back(m_out.graph.nodes[k].name);
        if (map.kilnNodes.empty()) map.kilnNodes.push_back(kname(r.output));
        m_out.mapping.push_back(std::move(map));
        return r.output;
    }

    Result<std::vector<int>> functional(const json& cfg, const std::string& jp, const std::string& prefix, const std::vector<std::string>& path,
                                        const std::vector<int>& feed, int depth) {
        const json& layers = cfg["layers"];
        const std::string& scope = prefix;
        KILN_ASSIGN(std::vector<TensorRef> inputLayers, layerList(cfg.value("input_layers", json::array()), jp + ".input_layers"));
        KILN_ASSIGN(std::vector<TensorRef> outputLayers, layerList(cfg.value("output_layers", json::array()), jp + ".output_layers"));
        if (outputLayers.empty()) return configError(jp + ".output_layers", "the model has no outputs");
        if (!feed.empty() && feed.size() != inputLayers.size())
            return Error(ErrorCode::Unsupported, m_file + ": nested model at " + jp + " takes " + std::to_string(inputLayers.size()) + " inputs, it is given " + std::to_string(feed.size()))
                .withFile(m_file)
                .with("what", "nested model inputs");
        std::vector<LayerEntry> entries;
        std::map<std::string, size_t> byName;
        for (size_t k = 0; k < layers.size(); ++k) {
            KILN_ASSIGN(LayerEntry e, entry(layers[k], jp + ".layers[" + std::to_string(k) + "]"));
            if (!byName.emplace(e.name, k).second) return configError(e.jp + ".name", "two layers are called \"" + e.name + "\"");
            entries.push_back(std::move(e));
        }
        // Inputs: a nested model's input tensors are the values it is called with.
        for (size_t k = 0; k < inputLayers.size(); ++k) {
            const auto& ref = inputLayers[k];
            auto it = byName.find(ref.layer);
            if (it == byName.end()) return configError(jp + ".input_layers", "input layer \"" + ref.layer + "\" is not among the layers");
            const LayerEntry& e = entries[it->second];
            if (!feed.empty()) {
                m_values[refKey(scope, ref)] = feed[k];
                continue;
            }
            if (e.cls != "InputLayer") return configError(e.jp, "model input \"" + e.name + "\" is not an InputLayer");
            const std::string name = prefix + e.name;
            if (m_names.count(name)) return configError(e.jp + ".name", "two layers are called \"" + name + "\"");
            m_names.insert(name);
            KILN_ASSIGN(int idx, inputNode(*e.cfg, e.jp, name));
            m_values[refKey(scope, ref)] = idx;
            m_out.mapping.push_back({name, e.cls, NodeMapping::Kind::Node, {name}, {}});
        }
        // Layers in dependency order: each pass maps every call whose inputs are ready.
        struct Pending {
            size_t layer;
            int64_t callIndex;
            std::vector<TensorRef> inputs;
            const json* inbound;
        };
        std::vector<Pending> pending;
        for (size_t k = 0; k < entries.size(); ++k) {
            const json& l = layers[k];
            if (entries[k].cls == "InputLayer") continue;
            // A reference into the config (value() would copy): calls keep pointers to their node.
            static const json kNoNodes = json::array();
            const auto found = l.find("inbound_nodes");
            const json& nodes = found != l.end() ? *found : kNoNodes;
            if (!nodes.is_array()) return configError(jp + ".layers[" + std::to_string(k) + "].inbound_nodes", "expected a list");
            for (size_t n = 0; n < nodes.size(); ++n) {
                KILN_ASSIGN(auto ins, inboundTensors(nodes[n], jp + ".layers[" + std::to_string(k) + "].inbound_nodes[" + std::to_string(n) + "]", scope,
                                                       entries[k].cls == "TFOpLambda" || entries[k].cls == "SlicingOpLambda"));
                pending.push_back({k, static_cast<int64_t>(n), std::move(ins), &nodes[n]});
            }
        }
        while (!pending.empty()) {
            bool progress = false;
            for (auto it = pending.begin(); it != pending.end();) {
                std::vector<int> ins;
                bool ready = true;
                for (const auto& r : it->inputs) {
                    auto v = m_values.find(refKey(scope, r));
                    if (v == m_values.end()) {
                        ready = false;
                        break;
                    }
                    ins.push_back(v->second);
                }
                if (!ready) {
                    ++it;
                    continue;
                }
                const LayerEntry& e = entries[it->layer];
                const TensorRef out{e.name, it->callIndex + (skipsFirstNode(e) ? 1 : 0), 0};
                std::optional<std::vector<int64_t>> hint;
                if (auto h = m_hints.find(refKey(scope, out)); h != m_hints.end()) hint = h->second;
                KILN_ASSIGN(int idx, call(e, prefix, path, ins, static_cast<int>(it->callIndex), hint, depth, it->inbound));
                m_values[refKey(scope, out)] = idx;
                it = pending.erase(it);
                progress = true;
            }
            if (!progress) {
                const auto& p = pending.front();
                std::string missing;
                for (const auto& r : p.inputs)
                    if (!m_values.count(refKey(scope, r))) missing = r.layer;
                return configError(jp + ".layers[" + std::to_string(p.layer) + "].inbound_nodes",
                                   "layer \"" + entries[p.layer].name + "\" reads \"" + missing + "\", which no layer produces (or the layers form a cycle)");
            }
        }
        std::vector<int> outs;
        for (const auto& o : outputLayers) {
            auto v = m_values.find(refKey(scope, o));
            if (v == m_values.end()) return configError(jp + ".output_layers", "output \"" + o.layer + "\" is not produced by any layer");
            outs.push_back(v->second);
        }
        return outs;
    }

    Result<std::vector<int>> sequential(const json& cfg, const std::string& jp, const std::string& prefix, const std::vector<std::string>& path,
                                        const std::vector<int>& feed, int depth) {
        const json& layers = cfg["layers"];
        std::optional<int> current;
        if (!feed.empty()) {
            if (feed.size() != 1) return Error(ErrorCode::Unsupported, m_file + ": Sequential model at " + jp + " is given " + std::to_string(feed.size()) + " inputs").withFile(m_file).with("what", "Sequential with several inputs");
            current = feed[0];
        }
        for (size_t k = 0; k < layers.size(); ++k) {
            KILN_ASSIGN(LayerEntry e, entry(layers[k], jp + ".layers[" + std::to_string(k) + "]"));
            if (e.cls == "InputLayer" || (!current && (e.cfg->contains("batch_input_shape") || e.cfg->contains("batch_shape")))) {
                if (!current) {
                    // Keras 2 puts the input shape on the first layer; its Input node is "input".
                    std::string name = prefix + e.name;
                    if (e.cls != "InputLayer") name = uniqueName(prefix + "input");
                    else if (!m_names.insert(name).second) return configError(e.jp + ".name", "two layers are called \"" + name + "\"");
                    KILN_ASSIGN(int idx, inputNode(*e.cfg, e.jp, name));
                    m_out.mapping.push_back({name, "InputLayer", NodeMapping::Kind::Node, {name}, {}});
                    current = idx;
                } else if (e.cls == "InputLayer") {
                    m_out.mapping.push_back({prefix + e.name, e.cls, NodeMapping::Kind::PassThrough, {kname(*current)}, "input of a nested model"});
                }
                if (e.cls == "InputLayer") continue;
            }
            if (!current) {
                const json& bis = cfg.value("build_input_shape", json());
                if (bis.is_array()) {
                    json ic = {{"batch_shape", bis}, {"name", "input"}};
                    const std::string name = uniqueName(prefix + "input");
                    KILN_ASSIGN(int idx, inputNode(ic, jp + ".build_input_shape", name));
                    m_out.mapping.push_back({name, "InputLayer", NodeMapping::Kind::Node, {name}, {}});
                    current = idx;
                } else {
                    return configError(jp, "the Sequential model does not say its input shape");
                }
            }
            std::optional<std::vector<int64_t>> hint;
            if (k + 1 < layers.size() && layers[k + 1].is_object()) {
                const json& bc = layers[k + 1].value("build_config", json());
                if (bc.is_object()) hint = shapeHint(bc.value("input_shape", json()));
            }
            KILN_ASSIGN(int idx, call(e, prefix, path, {*current}, 0, hint, depth));
            current = idx;
        }
        if (!current) return configError(jp + ".layers", "the Sequential model has no layers");
        return std::vector<int>{*current};
    }

    std::string m_file;
    ImportOptions m_opt;
    const WeightSource& m_weights;
    bool m_keras2 = false;
    ImportedModel m_out;
    std::vector<Shape> m_shapes;
    std::set<int> m_unknown;  // placeholder nodes of unknown output shape
    std::set<int> m_masked;   // outputs of Embeddings with mask_zero (a Keras mask Kiln does not apply)
    std::set<std::string> m_names;
    std::set<std::string> m_reserved;  // every Keras layer name in the file (nested ones prefixed)
    std::map<std::string, int> m_values;
    std::map<std::string, std::vector<int64_t>> m_hints;  // shapes the file records for tensors
    std::vector<std::unique_ptr<json>> m_wrapped;         // configs the importer rewrote (old Sequential models, wrapped layers)
    std::map<std::string, std::string> m_origin;          // node prefix of a nested model's call -> that of its first call

    std::string originOf(const std::string& prefix) const {
        const auto it = m_origin.find(prefix);
        return it == m_origin.end() ? prefix : it->second;
    }
};

Result<json> parseConfig(const std::string& text, const std::string& file, const std::string& what) {
    // Keras configs are shallow; the checked parser bounds their depth and refuses numbers that do
    // not fit a double, so a hostile file can neither exhaust the stack nor throw.
    JsonLimits limits;
    limits.maxBytes = static_cast<size_t>(kMaxConfigBytes);
    limits.maxDepth = 200;
    auto j = parseJsonChecked(text, limits, file);
    if (!j.ok()) {
        Error e = j.error();
        e.message = what + ": " + e.message;
        e.with("json_path", what);
        return e;
    }
    return j;
}

Result<ImportedModel> loadArchive(const std::string& path, const ImportOptions& options) {
    KILN_ASSIGN(std::vector<std::string> members, zipMembers(path));
    auto has = [&](const char* m) { return std::find(members.begin(), members.end(), m) != members.end(); };
    if (!has("config.json"))
        return Error(ErrorCode::ParseError, "the archive has no config.json (not a Keras model)").withFile(path).with("zip_member", "config.json").with("reason", "missing");
    KILN_ASSIGN(std::string configText, readZipMember(path, "config.json", kMaxConfigBytes));
    KILN_ASSIGN(json config, parseConfig(configText, path, "config.json"));
    std::string producer = "Keras", version;
    if (has("metadata.json")) {
        KILN_ASSIGN(std::string metaText, readZipMember(path, "metadata.json", kMaxConfigBytes));
        KILN_ASSIGN(json meta, parseConfig(metaText, path, "metadata.json"));
        if (meta.is_object() && meta.value("keras_version", json()).is_string()) version = meta["keras_version"].get<std::string>();
        if (!version.empty()) producer += " " + version;
    }
    if (!has("model.weights.h5"))
        return Error(ErrorCode::ParseError, "the archive has no model.weights.h5").withFile(path).with("zip_member", "model.weights.h5").with("reason", "missing");
    KILN_ASSIGN(std::string weightBytes, readZipMember(path, "model.weights.h5", kMaxWeightsBytes));
    KILN_ASSIGN(Hdf5File h5, Hdf5File::openImage(std::move(weightBytes), path + ":model.weights.h5"));
    // Keras 2 (tf_keras) writes its own config layout (as in its .h5 files) and names the weight
    // groups after the layers' classes.
    if (version.rfind("2.", 0) == 0) {
        const Keras2ArchiveWeights weights(std::move(h5), config);
        KerasImporter importer(path, options, weights, true);
        return importer.run(config, producer);
    }
    KILN_ASSIGN(auto weights, Keras3Weights::index(std::move(h5)));
    KerasImporter importer(path, options, *weights, false);
    return importer.run(config, producer);
}

Result<ImportedModel> loadH5(const std::string& path, const ImportOptions& options) {
    KILN_ASSIGN(Hdf5File h5, Hdf5File::open(path));
    if (!h5.hasAttribute("/", "model_config")) {
        const bool weightsOnly = h5.isGroup("/layers") || h5.hasAttribute("/", "layer_names");
        return Error(ErrorCode::ParseError,
                                                (weightsOnly ? std::string("the file holds only weights (model.save_weights); Kiln needs the whole model (model.save)")
                                                             : std::string("not a Keras model: the root group has no \"model_config\" attribute")))
            .withFile(path)
            .with("hdf5_path", "/@model_config")
            .with("reason", "missing");
    }
    KILN_ASSIGN(std::string configText, h5.stringAttribute("/", "model_config"));
    KILN_ASSIGN(json config, parseConfig(configText, path, "HDF5 attribute /@model_config"));
    std::string version;
    if (h5.hasAttribute("/", "keras_version")) {
        auto v = h5.stringAttribute("/", "keras_version");
        if (v.ok()) version = *v;
    }
    const std::string root = h5.isGroup("/model_weights") ? "/model_weights" : "";
    if (root.empty())
        return Error(ErrorCode::ParseError, "the HDF5 group /model_weights is missing (a model saved without its weights)")
            .withFile(path)
            .with("hdf5_path", "/model_weights")
            .with("reason", "missing");
    LegacyWeights weights(h5, root);
    const bool keras2 = !version.empty() && version[0] == '2';
    KerasImporter importer(path, options, weights, keras2);
    return importer.run(config, version.empty() ? std::string("Keras") : "Keras " + version);
}

std::string lowerExtension(const std::string& path) {
    std::string e = std::filesystem::path(path).extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return e;
}

}  // namespace

Result<ModelFileFormat> detectModelFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error(ErrorCode::FileNotFound, "cannot open " + path).withFile(path).with("path", path);
    char head[8] = {};
    f.read(head, sizeof head);
    const std::string_view first(head, static_cast<size_t>(f.gcount()));
    if (hasZipSignature(first)) return ModelFileFormat::KerasArchive;
    if (Hdf5File::hasSignature(first)) return ModelFileFormat::KerasH5;
    const std::string ext = lowerExtension(path);
    if (ext == ".onnx") return ModelFileFormat::Onnx;
    if (ext == ".keras") return ModelFileFormat::KerasArchive;
    if (ext == ".h5" || ext == ".hdf5") return ModelFileFormat::KerasH5;
    return Error(ErrorCode::UnsupportedFormat, path + " is not an ONNX model (.onnx) or a Keras model (.keras, .h5)")
        .withFile(path)
        .with("format", ext.empty() ? std::string("unknown") : ext);
}

Result<ImportedModel> loadKeras(const std::string& path, const ImportOptions& options) {
    KILN_ASSIGN(ModelFileFormat format, detectModelFile(path));
    if (format == ModelFileFormat::Onnx) return Error(ErrorCode::UnsupportedFormat, path + " is an ONNX model, not a Keras one").withFile(path).with("format", "onnx");
    return format == ModelFileFormat::KerasArchive ? loadArchive(path, options) : loadH5(path, options);
}

Result<ImportedModel> loadModelFile(const std::string& path, const ImportOptions& options) {
    KILN_ASSIGN(ModelFileFormat format, detectModelFile(path));
    if (format == ModelFileFormat::Onnx) return loadOnnx(path, options);
    return loadKeras(path, options);
}

}  // namespace kiln::engine::io
