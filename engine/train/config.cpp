// SPDX-License-Identifier: Apache-2.0
// Parsing of the training and data sections, and loading the data they describe.
#include "engine/train/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "engine/core/device.h"
#include "engine/data/csv_table.h"
#include "engine/data/data_config.h"
#include "engine/data/idx_reader.h"
#include "engine/data/split.h"
#include "engine/io/project.h"
#include "engine/ops/plugin_loss.h"
#include "engine/train/callbacks.h"

namespace kiln::engine::train {
namespace {
using nlohmann::json;

Error fieldError(const std::string& field, const std::string& why) {
    return Error(ErrorCode::ConfigError, field + " " + why).with("field", field).with("reason", why);
}

// Typed access to one JSON object's fields, naming "section.field" in errors and rejecting
// fields nobody reads (a typo must not be silently ignored).
class Fields {
public:
    Fields(const json& obj, std::string prefix) : m_obj(obj), m_prefix(std::move(prefix)) {}

    std::string name(const std::string& key) const { return m_prefix + "." + key; }
    bool has(const std::string& key) {
        m_known.insert(key);
        return m_obj.is_object() && m_obj.contains(key);
    }
    const json& raw(const std::string& key) {
        m_known.insert(key);
        return m_obj.at(key);
    }
    template <typename T>
    Status get(const std::string& key, T& out) {
        if (!has(key)) return {};
        const json& v = m_obj.at(key);
        if constexpr (std::is_same_v<T, bool>) {
            if (!v.is_boolean()) return fieldError(name(key), "must be true or false");
            out = v.get<bool>();
        } else if constexpr (std::is_integral_v<T>) {
            if (!v.is_number_integer()) return fieldError(name(key), "must be an integer");
            out = v.get<T>();
        } else if constexpr (std::is_floating_point_v<T>) {
            if (!v.is_number()) return fieldError(name(key), "must be a number");
            out = v.get<T>();
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string()) return fieldError(name(key), "must be a string");
            out = v.get<std::string>();
        }
        return {};
    }
    template <typename T>
    Status getOpt(const std::string& key, std::optional<T>& out) {
        if (!has(key)) return {};
        T v{};
        KILN_TRY(get(key, v));
        out = v;
        return {};
    }
    Status finish() const {
        if (!m_obj.is_object()) return fieldError(m_prefix, "must be an object");
        for (auto& [k, v] : m_obj.items())
            if (!m_known.count(k)) return fieldError(name(k), "is not a known setting");
        return {};
    }

private:
    const json& m_obj;
    std::string m_prefix;
    std::set<std::string> m_known;
};

// Optimizer and schedule validation name fields relative to their section ("optimizer.type");
// within a project they live under "training".
Status inTraining(Status st) {
    if (st.ok()) return st;
    Error& e = st.error();
    for (auto& [k, v] : e.params)
        if (k == "field" && !v.starts_with("training.")) {
            if (e.message.starts_with(v)) e.message = "training." + e.message;
            v = "training." + v;
        }
    return st;
}

Result<optim::OptimizerConfig> parseOptimizer(const json& j) {
    optim::OptimizerConfig c;
    if (j.is_string()) {
        c.type = j.get<std::string>();
        KILN_TRY(inTraining(c.validate()));
        return c;
    }
    Fields f(j, "training.optimizer");
    KILN_TRY(f.get("type", c.type));
    KILN_TRY(f.getOpt("learning_rate", c.learningRate));
    KILN_TRY(f.get("momentum", c.momentum));
    KILN_TRY(f.get("nesterov", c.nesterov));
    KILN_TRY(f.get("beta_1", c.beta1));
    KILN_TRY(f.get("beta_2", c.beta2));
    KILN_TRY(f.get("epsilon", c.epsilon));
    KILN_TRY(f.get("amsgrad", c.amsgrad));
    KILN_TRY(f.get("rho", c.rho));
    KILN_TRY(f.get("centered", c.centered));
    KILN_TRY(f.getOpt("weight_decay", c.weightDecay));
    KILN_TRY(f.getOpt("clipnorm", c.clipNorm));
    KILN_TRY(f.getOpt("global_clipnorm", c.globalClipNorm));
    KILN_TRY(f.getOpt("clipvalue", c.clipValue));
    if (auto kind = optim::parseOptimizerKind(c.type); kind.ok() && *kind == optim::OptimizerKind::RmsProp)
        KILN_TRY(f.get("momentum", c.rmsMomentum));
    KILN_TRY(f.finish());
    KILN_TRY(inTraining(c.validate()));
    return c;
}

Result<optim::ScheduleConfig> parseSchedule(const json& j, double lr) {
    optim::ScheduleConfig s;
    s.initial = lr;
    Fields f(j, "training.schedule");
    KILN_TRY(f.get("type", s.type));
    KILN_TRY(f.get("step_size", s.stepSize));
    KILN_TRY(f.get("gamma", s.gamma));
    KILN_TRY(f.get("decay_steps", s.decaySteps));
    KILN_TRY(f.get("decay_rate", s.decayRate));
    KILN_TRY(f.get("staircase", s.staircase));
    KILN_TRY(f.get("alpha", s.alpha));
    KILN_TRY(f.get("warmup_steps", s.warmupSteps));
    KILN_TRY(f.get("warmup_start", s.warmupStart));
    KILN_TRY(f.finish());
    KILN_TRY(inTraining(s.validate()));
    return s;
}

// "SparseCategoricalCrossentropy" -> "sparse_categorical_crossentropy".
std::string snakeCase(const std::string& type) {
    std::string out;
    for (size_t i = 0; i < type.size(); ++i) {
        const auto c = static_cast<unsigned char>(type[i]);
        if (std::isupper(c) && i > 0) out += '_';
        out += static_cast<char>(std::tolower(c));
    }
    return out;
}

// One loss term: a name, or {"type", "output", "target", "weight", "name", <attributes of the
// loss op>}. `prefix` is "training.loss" for a single term, "training.loss[i]" in a list.
Result<LossConfig> parseLoss(const json& j, const Graph& graph, const std::string& prefix) {
    LossConfig lc;
    if (j.is_string()) {
        lc.spec.type = j.get<std::string>();
    } else if (!j.is_object()) {
        return fieldError(prefix, "must be a loss name or an object");
    } else if (!j.contains("type")) {
        return fieldError(prefix + ".type", "is missing (e.g. \"MeanSquaredError\")");
    } else if (!j.at("type").is_string()) {
        return fieldError(prefix + ".type", "must be a string");
    } else {
        lc.spec.type = j.at("type").get<std::string>();
    }
    const std::vector<AttrSpec>* specs = nullptr;
    if (lc.spec.type.starts_with(ops::kPluginPrefix)) {
        const ops::PluginLoss* plugin = ops::findPluginLoss(lc.spec.type);
        if (!plugin) {
            std::string loaded;
            for (const auto* l : ops::PluginRegistry::global().losses())
                loaded += (loaded.empty() ? "" : ", ") + std::string(ops::kPluginPrefix) + l->name;
            return fieldError(prefix + ".type", "names the plugin loss \"" + lc.spec.type +
                                                    "\", which no loaded plugin provides; load its plugin (the plugin folder, "
                                                    "KILN_PLUGIN_PATH or --plugin)" +
                                                    (loaded.empty() ? std::string() : " or use one of " + loaded))
                .with("op", lc.spec.type);
        }
        specs = &plugin->attrs;
    } else {
        const ops::OpDef* def = ops::findOp(lc.spec.type);
        if (!def || !ops::isLoss(def->kind)) {
            std::string known;
            for (const auto& row : ops::opTable())
                if (ops::isLoss(row.kind)) known += (known.empty() ? "" : ", ") + std::string(row.name);
            for (const auto* l : ops::PluginRegistry::global().losses())
                known += ", " + std::string(ops::kPluginPrefix) + l->name;
            return fieldError(prefix + ".type", "\"" + lc.spec.type + "\" is not a loss (use one of " + known + ")");
        }
        specs = &def->attrs;
    }
    if (j.is_object()) {
        for (auto& [k, v] : j.items()) {
            const std::string field = prefix + "." + k;
            if (k == "type") {
                continue;
            } else if (k == "output") {
                if (!v.is_string()) return fieldError(field, "must be a node name");
                lc.spec.output = v.get<std::string>();
            } else if (k == "target") {
                if (!v.is_string()) return fieldError(field, "must be a data column name");
                lc.target = v.get<std::string>();
            } else if (k == "name") {
                if (!v.is_string() || v.get<std::string>().empty()) return fieldError(field, "must be a non-empty name");
                lc.name = v.get<std::string>();
                for (char ch : lc.name)
                    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
                        return fieldError(field, "may hold only letters, digits, '_', '-' and '.'");
            } else if (k == "weight") {
                if (!v.is_number()) return fieldError(field, "must be a number");
                const double w = v.get<double>();
                if (!std::isfinite(w) || w < 0) return fieldError(field, "must be a number of at least 0");
                lc.spec.weight = static_cast<float>(w);
            } else {
                // An attribute of the loss op (from_logits, gamma, label_smoothing...).
                auto spec = std::find_if(specs->begin(), specs->end(), [&key = k](const AttrSpec& a) { return a.name == key; });
                if (spec == specs->end()) {
                    std::string known = "type, output, target, weight, name";
                    for (const auto& a : *specs) known += ", " + a.name;
                    return fieldError(field, "is not a setting of " + lc.spec.type + " (use " + known + ")");
                }
                auto value = io::attrFromJson(v, prefix, k);
                if (value.ok()) value = coerceAttr(*spec, *value, prefix);
                if (!value.ok()) {
                    const std::string reason = value.error().param("reason");
                    return fieldError(field, reason.empty() ? value.error().message : reason);
                }
                lc.spec.attrs.set(k, *value);
            }
        }
    }
    for (const auto& a : *specs)
        if (a.required && !lc.spec.attrs.has(a.name))
            return fieldError(prefix + "." + a.name, "is missing (" + a.doc + ")");
    if (lc.spec.output.empty()) {
        std::vector<std::string> outs = graph.outputs;
        if (outs.empty()) {
            auto users = graph.consumers();
            for (size_t i = 0; i < users.size(); ++i)
                if (users[i].empty()) outs.push_back(graph.nodes[i].name);
        }
        if (outs.size() != 1) return fieldError(prefix + ".output", "must name the model output (the model has several)");
        lc.spec.output = outs[0];
    }
    if (graph.find(lc.spec.output) < 0)
        return fieldError(prefix + ".output", "names \"" + lc.spec.output + "\", which is not a node");
    if (lc.target.empty()) lc.target = "label";
    return lc;
}

// One entry of training.metrics: a name, a "plugin:<name>" or a plugin metric object. Built-in
// names come back with an empty type (the trainer checks them against the loss).
Result<PluginMetricConfig> parseMetric(const json& j, const std::string& field) {
    PluginMetricConfig mc;
    std::string type;
    if (j.is_string()) {
        type = j.get<std::string>();
    } else if (j.is_object()) {
        if (!j.contains("type") || !j.at("type").is_string())
            return fieldError(field + ".type", "is missing (an object names a plugin metric, e.g. \"plugin:acme.FBeta\")");
        type = j.at("type").get<std::string>();
        if (!type.starts_with(ops::kPluginPrefix))
            return fieldError(field, "is an object, which only plugin metrics take; name \"" + type + "\" as a string");
    } else {
        return fieldError(field, "must be a metric name or a plugin metric object");
    }
    if (!type.starts_with(ops::kPluginPrefix)) {
        mc.name = type;
        return mc;
    }
    const ops::PluginMetric* plugin = ops::PluginRegistry::global().findMetric(ops::pluginTypeName(type));
    const std::string at = j.is_object() ? field + ".type" : field;
    if (!plugin) {
        std::string loaded;
        for (const auto* p : ops::PluginRegistry::global().metrics())
            loaded += (loaded.empty() ? "" : ", ") + std::string(ops::kPluginPrefix) + p->name;
        return fieldError(at, "names the plugin metric \"" + type +
                                  "\", which no loaded plugin provides; load its plugin (the plugin folder, "
                                  "KILN_PLUGIN_PATH or --plugin)" +
                                  (loaded.empty() ? std::string() : " or use one of " + loaded))
            .with("op", type);
    }
    mc.type = type;
    mc.name = plugin->name;
    if (j.is_object()) {
        for (auto& [k, v] : j.items()) {
            const std::string at2 = field + "." + k;
            if (k == "type") continue;
            if (k == "name") {
                if (!v.is_string() || v.get<std::string>().empty()) return fieldError(at2, "must be a non-empty name");
                mc.name = v.get<std::string>();
                continue;
            }
            auto spec = std::find_if(plugin->attrs.begin(), plugin->attrs.end(), [&key = k](const AttrSpec& a) { return a.name == key; });
            if (spec == plugin->attrs.end()) {
                std::string known = "type, name";
                for (const auto& a : plugin->attrs) known += ", " + a.name;
                return fieldError(at2, "is not a setting of " + type + " (use " + known + ")");
            }
            auto value = io::attrFromJson(v, field, k);
            if (value.ok()) value = coerceAttr(*spec, *value, field);
            if (!value.ok()) {
                const std::string reason = value.error().param("reason");
                return fieldError(at2, reason.empty() ? value.error().message : reason);
            }
            mc.attrs.set(k, *value);
        }
    }
    for (const auto& a : plugin->attrs)
        if (a.required && !mc.attrs.has(a.name)) return fieldError(field + "." + a.name, "is missing (" + a.doc + ")");
    return mc;
}

// One entry of training.stages; `field` is "training.stages[i]".
Result<TrainingStage> parseStage(const json& j, const std::string& field, size_t index, const Graph& graph) {
    TrainingStage st;
    st.name = "stage " + std::to_string(index + 1);
    if (!j.is_object()) return fieldError(field, "must be an object ({\"epochs\": N, \"trainable\": ...})");
    Fields f(j, field);
    KILN_TRY(f.get("name", st.name));
    if (!f.has("epochs")) return fieldError(f.name("epochs"), "is missing (the stage's number of epochs)");
    KILN_TRY(f.get("epochs", st.epochs));
    if (st.epochs <= 0) return fieldError(f.name("epochs"), "must be at least 1");
    auto nodeName = [&](const json& v, const std::string& at) -> Result<std::string> {
        if (!v.is_string()) return fieldError(at, "must be a node name");
        std::string name = v.get<std::string>();
        if (graph.find(name) < 0) return fieldError(at, "names \"" + name + "\", which is not a node of the model");
        return name;
    };
    if (f.has("trainable")) {
        const json& t = f.raw("trainable");
        const std::string at = f.name("trainable");
        if (t.is_string()) {
            const std::string v = t.get<std::string>();
            if (v == "all") st.select = TrainingStage::Select::All;
            else if (v == "head") st.select = TrainingStage::Select::Head;
            else return fieldError(at, "must be \"all\", \"head\", {\"from\": NODE} or {\"nodes\": [...]}, not \"" + v + "\"");
        } else if (t.is_object() && t.size() == 1 && t.contains("from")) {
            st.select = TrainingStage::Select::From;
            KILN_ASSIGN(st.from, nodeName(t.at("from"), at + ".from"));
        } else if (t.is_object() && t.size() == 1 && t.contains("nodes")) {
            st.select = TrainingStage::Select::Nodes;
            const json& ns = t.at("nodes");
            if (!ns.is_array() || ns.empty()) return fieldError(at + ".nodes", "must be a non-empty list of node names");
            for (size_t k = 0; k < ns.size(); ++k) {
                KILN_ASSIGN(auto name, nodeName(ns[k], at + ".nodes[" + std::to_string(k) + "]"));
                st.nodes.push_back(std::move(name));
            }
        } else {
            return fieldError(at, "must be \"all\", \"head\", {\"from\": NODE} or {\"nodes\": [...]}");
        }
    }
    KILN_TRY(f.getOpt("lr", st.lr));
    if (st.lr && !(*st.lr > 0)) return fieldError(f.name("lr"), "must be greater than 0");
    if (f.has("lr_factor")) {
        if (st.lr) return fieldError(f.name("lr_factor"), "cannot be given together with lr");
        KILN_TRY(f.get("lr_factor", st.lrFactor));
        if (!(st.lrFactor > 0)) return fieldError(f.name("lr_factor"), "must be greater than 0");
    }
    if (f.has("optimizer")) {
        std::string o;
        KILN_TRY(f.get("optimizer", o));
        if (o == "reset") st.resetOptimizer = true;
        else if (o == "keep") st.resetOptimizer = false;
        else return fieldError(f.name("optimizer"), "must be \"reset\" or \"keep\", not \"" + o + "\"");
    }
    KILN_TRY(f.finish());
    return st;
}

}  // namespace

int TrainingConfig::stageOfEpoch(int epoch) const {
    if (stages.empty()) return -1;
    int end = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
        end += stages[i].epochs;
        if (epoch <= end) return static_cast<int>(i);
    }
    return static_cast<int>(stages.size()) - 1;
}

int TrainingConfig::firstEpochOfStage(int index) const {
    int first = 1;
    for (int i = 0; i < index && i < static_cast<int>(stages.size()); ++i) first += stages[static_cast<size_t>(i)].epochs;
    return first;
}

void assignLossTermNames(std::vector<LossConfig>& losses) {
    std::map<std::string, int> perOutput;
    for (const auto& l : losses) ++perOutput[l.spec.output];
    std::map<std::string, int> used;
    for (auto& l : losses) {
        if (!l.name.empty()) continue;
        // A plugin loss ("plugin:acme.Huber") is named by its last part ("huber").
        std::string type = l.spec.type;
        if (type.starts_with(ops::kPluginPrefix)) type = type.substr(type.rfind('.') == std::string::npos ? ops::kPluginPrefix.size() : type.rfind('.') + 1);
        std::string base = perOutput[l.spec.output] == 1 ? l.spec.output : l.spec.output + "_" + snakeCase(type);
        const int n = ++used[base];
        l.name = n == 1 ? base : base + "_" + std::to_string(n);
    }
}

Result<TrainingConfig> parseTrainingConfig(const json& training, const Graph& graph) {
    TrainingConfig c;
    Fields f(training, "training");
    KILN_TRY(f.get("epochs", c.epochs));
    KILN_TRY(f.get("batch_size", c.batchSize));
    KILN_TRY(f.get("seed", c.seed));
    KILN_TRY(f.get("shuffle", c.shuffle));
    KILN_TRY(f.get("validation_split", c.validationSplit));
    KILN_TRY(f.get("device", c.device));
    KILN_TRY(f.get("precision", c.precision));
    KILN_TRY(f.get("memory_limit", c.memoryLimit));
    KILN_TRY(f.get("histogram_freq", c.histogramFreq));
    if (c.histogramFreq < 0) return fieldError("training.histogram_freq", "must not be negative (0: no histograms)");
    if (!Device::parse(c.device).ok()) return fieldError("training.device", "must be \"cpu\" or \"cuda:N\"");
    if (c.precision != "float32" && c.precision != "mixed_float16" && c.precision != "mixed_bfloat16")
        return fieldError("training.precision", "must be \"float32\", \"mixed_float16\" or \"mixed_bfloat16\"");
    if (c.precision != "float32" && c.device == "cpu")
        return fieldError("training.precision", "mixed precision needs a GPU device; the CPU trains in float32");
    if (c.epochs < 0) return fieldError("training.epochs", "must not be negative");
    if (c.batchSize < 1) return fieldError("training.batch_size", "must be at least 1");
    if (c.validationSplit < 0 || c.validationSplit >= 1) return fieldError("training.validation_split", "must be in [0, 1)");
    if (f.has("optimizer")) {
        KILN_ASSIGN(c.optimizer, parseOptimizer(f.raw("optimizer")));
    } else {
        KILN_TRY(inTraining(c.optimizer.validate()));
    }
    double lr = c.optimizer.resolvedLearningRate();
    if (f.has("schedule")) {
        KILN_ASSIGN(c.schedule, parseSchedule(f.raw("schedule"), lr));
    } else {
        c.schedule.initial = lr;
    }
    if (!f.has("loss")) return fieldError("training.loss", "is missing (e.g. \"SparseCategoricalCrossentropy\")");
    const json& loss = f.raw("loss");
    if (loss.is_array()) {
        if (loss.empty()) return fieldError("training.loss", "is an empty list (name at least one loss)");
        for (size_t i = 0; i < loss.size(); ++i) {
            KILN_ASSIGN(auto lc, parseLoss(loss[i], graph, "training.loss[" + std::to_string(i) + "]"));
            c.losses.push_back(std::move(lc));
        }
    } else {
        KILN_ASSIGN(auto lc, parseLoss(loss, graph, "training.loss"));
        c.losses.push_back(std::move(lc));
    }
    assignLossTermNames(c.losses);
    for (size_t i = 0; i < c.losses.size(); ++i)
        for (size_t k = 0; k < i; ++k)
            if (c.losses[k].name == c.losses[i].name)
                return fieldError("training.loss[" + std::to_string(i) + "].name",
                                  "\"" + c.losses[i].name + "\" is already the name of training.loss[" +
                                      std::to_string(k) + "]");
    if (f.has("metrics")) {
        const json& m = f.raw("metrics");
        if (!m.is_array()) return fieldError("training.metrics", "must be a list of metric names");
        for (size_t i = 0; i < m.size(); ++i) {
            const std::string field = "training.metrics[" + std::to_string(i) + "]";
            KILN_ASSIGN(auto entry, parseMetric(m[i], field));
            if (std::find(c.metrics.begin(), c.metrics.end(), entry.name) != c.metrics.end())
                return fieldError(field, "repeats the metric \"" + entry.name + "\" (give it another \"name\")");
            c.metrics.push_back(entry.name);
            if (!entry.type.empty()) c.pluginMetrics.emplace(entry.name, std::move(entry));
        }
    }
    if (f.has("callbacks")) {
        const json& cbs = f.raw("callbacks");
        if (!cbs.is_array()) return fieldError("training.callbacks", "must be a list of callback objects");
        for (size_t i = 0; i < cbs.size(); ++i) {
            // Built once here only to validate; the Trainer builds them again with the run folder.
            KILN_TRY(makeCallback(cbs[i], "training.callbacks[" + std::to_string(i) + "]", CallbackContext{}));
            c.callbacks.push_back(cbs[i]);
        }
    }
    if (f.has("stages")) {
        const json& stages = f.raw("stages");
        if (!stages.is_array()) return fieldError("training.stages", "must be a list of stage objects");
        std::set<std::string> names;
        int total = 0;
        for (size_t i = 0; i < stages.size(); ++i) {
            const std::string field = "training.stages[" + std::to_string(i) + "]";
            KILN_ASSIGN(auto st, parseStage(stages[i], field, i, graph));
            if (!names.insert(st.name).second)
                return fieldError(field + ".name", "repeats the name \"" + st.name + "\" of an earlier stage");
            total += st.epochs;
            c.stages.push_back(std::move(st));
        }
        if (!c.stages.empty()) c.epochs = total;
    }
    KILN_TRY(f.finish());
    return c;
}

namespace {

Result<data::InMemoryDataset> loadIdxPart(const json& part, const std::string& field, const std::string& project) {
    Fields f(part, field);
    std::string images, labels;
    KILN_TRY(f.get("images", images));
    KILN_TRY(f.get("labels", labels));
    KILN_TRY(f.finish());
    if (images.empty() || labels.empty()) return fieldError(field, "needs \"images\" and \"labels\" paths");
    return data::readIdx(io::resolveDataPath(images, project), io::resolveDataPath(labels, project));
}

Result<std::vector<data::CsvColumnRef>> columnList(const json& j, const std::string& field) {
    std::vector<data::CsvColumnRef> out;
    if (!j.is_array()) return fieldError(field, "must be a list of column numbers or names");
    for (const auto& e : j) {
        if (e.is_number_integer()) out.emplace_back(e.get<int64_t>());
        else if (e.is_string()) out.emplace_back(e.get<std::string>());
        else return fieldError(field, "must be a list of column numbers or names");
    }
    return out;
}

// Other rows' labels: every one a class of the model (`classes` > 0: a whole number from 0 below
// it), else it would be counted in a wrong confusion matrix cell, or in none; the row is named by
// its file and line. Rows without labels get a label column of zeros (predictions only), since
// every loss of the model reads its target.
Status checkOtherLabels(data::InMemoryDataset& rows, const std::string& labelName, int64_t classes) {
    const data::Column* labels = rows.column(labelName);
    if (labels == nullptr) {
        data::Column zeros;
        zeros.name = labelName;
        zeros.sampleShape = Shape{};
        zeros.values.assign(static_cast<size_t>(rows.count()), 0.0f);
        return rows.addColumn(std::move(zeros));
    }
    if (classes <= 0) return {};
    for (int64_t i = 0; i < rows.count(); ++i) {
        const float v = labels->values[static_cast<size_t>(i)];
        if (v >= 0 && v < static_cast<float>(classes) && v == std::floor(v)) continue;
        std::ostringstream text;
        text << v;
        const auto line = static_cast<int>(rows.sourceLine(i));
        return Error(ErrorCode::DataError, "The label " + text.str() + " is not one of the model's classes (0 to " +
                                               std::to_string(classes - 1) + ").")
            .withFile(rows.sourceFile(), line)
            .with("file", rows.sourceFile())
            .with("line", std::to_string(line))
            .with("label", text.str())
            .with("reason", "unknown class");
    }
    return {};
}

}  // namespace

Result<std::map<std::string, std::string>> readInputMap(const json& inputs) {
    if (!inputs.is_object()) return fieldError("data.inputs", "must map Input nodes to data columns");
    std::map<std::string, std::string> out;
    for (auto& [node, col] : inputs.items()) {
        if (!col.is_string()) return fieldError("data.inputs." + node, "must be a data column name");
        out[node] = col.get<std::string>();
    }
    return out;
}

Result<DataBundle> loadData(const json& dataJson, const std::string& projectPath, uint64_t seed) {
    return loadData(dataJson, projectPath, seed, data::TestReplacement{});
}

Result<DataBundle> loadData(const json& dataJson, const std::string& projectPath, uint64_t seed,
                            const data::TestReplacement& replacement) {
    DataBundle b;
    Fields f(dataJson, "data");
    std::string format;
    KILN_TRY(f.get("format", format));
    if (f.has("inputs")) {
        KILN_ASSIGN(b.inputs, readInputMap(f.raw("inputs")));
    }
    if (format == "idx") {
        if (!replacement.path.empty())
            return fieldError("data.format", "other IDX files are opened by openData");
        if (!f.has("train")) return fieldError("data.train", "is missing");
        KILN_ASSIGN(b.train, loadIdxPart(f.raw("train"), "data.train", projectPath));
        if (f.has("test")) {
            KILN_ASSIGN(auto t, loadIdxPart(f.raw("test"), "data.test", projectPath));
            b.test = std::move(t);
        }
        if (f.has("class_names")) {
            for (const auto& n : f.raw("class_names"))
                if (n.is_string()) b.classNames.push_back(n.get<std::string>());
        }
        b.description = "IDX images, " + std::to_string(b.train.count()) + " training samples";
    } else if (format == "csv") {
        std::string path;
        data::CsvTableOptions opt;
        KILN_TRY(f.get("path", path));
        if (path.empty()) return fieldError("data.path", "is missing");
        KILN_TRY(f.get("skip_rows", opt.skipRows));
        KILN_TRY(f.get("header", opt.hasHeader));
        if (f.has("label_column")) {
            const json& l = f.raw("label_column");
            if (l.is_number_integer()) opt.labelColumn = data::CsvColumnRef(l.get<int64_t>());
            else if (l.is_string()) opt.labelColumn = data::CsvColumnRef(l.get<std::string>());
            else return fieldError("data.label_column", "must be a column number or name");
        }
        if (f.has("categorical_columns")) {
            KILN_ASSIGN(opt.categoricalColumns, columnList(f.raw("categorical_columns"), "data.categorical_columns"));
        }
        if (f.has("columns")) {
            const json& groups = f.raw("columns");
            if (!groups.is_object()) return fieldError("data.columns", "must map column groups to [begin, end) ranges");
            for (auto& [name, range] : groups.items()) {
                if (range.is_array() && range.size() == 2 && range[0].is_number_integer() && range[1].is_number_integer())
                    opt.groups.push_back(data::CsvColumnGroup::range(name, range[0].get<int64_t>(), range[1].get<int64_t>()));
                else if (range.is_array()) {
                    KILN_ASSIGN(auto cols, columnList(range, "data.columns." + name));
                    opt.groups.push_back({name, std::move(cols)});
                } else {
                    return fieldError("data.columns." + name, "must be [begin, end) or a list of columns");
                }
            }
        }
        bool standardize = false, stratify = true;
        double valFraction = 0, testFraction = 0;
        KILN_TRY(f.get("standardize", standardize));
        KILN_TRY(f.get("stratify", stratify));
        if (f.has("split")) {
            Fields s(f.raw("split"), "data.split");
            KILN_TRY(s.get("validation", valFraction));
            KILN_TRY(s.get("test", testFraction));
            KILN_TRY(s.finish());
            if (valFraction < 0 || testFraction < 0 || valFraction + testFraction >= 1)
                return fieldError("data.split", "fractions must be non-negative and leave some training data");
        }
        data::CsvTableLayout layout;
        KILN_ASSIGN(auto all, data::readCsvTable(io::resolveDataPath(path, projectPath), opt, &layout));
        const data::Column* labels = all.column(opt.labelName);
        KILN_ASSIGN(auto parts, data::splitIndices(all.count(), {1.0 - valFraction - testFraction, valFraction, testFraction},
                                                   seed, stratify && labels ? labels->values.data() : nullptr));
        KILN_ASSIGN(b.train, all.subset(parts[0]));
        if (!parts[1].empty()) {
            KILN_ASSIGN(auto v, all.subset(parts[1]));
            b.validation = std::move(v);
        }
        if (!parts[2].empty()) {
            KILN_ASSIGN(auto t, all.subset(parts[2]));
            b.test = std::move(t);
        }
        if (!replacement.path.empty()) {
            // Other rows, read as the project's table was read, in the test split's place.
            KILN_ASSIGN(auto rows, data::readCsvRows(replacement.path, opt, layout, !replacement.labelsOptional));
            if (layout.labelColumn >= 0) KILN_TRY(checkOtherLabels(rows, opt.labelName, replacement.classes));
            b.test = std::move(rows);
        }
        if (standardize) {
            // Fitted on the training split only, then applied to every split (and other rows).
            for (const auto& col : b.train.columnData()) {
                if (col.name == opt.labelName) continue;
                KILN_ASSIGN(auto st, data::Standardizer::fit(b.train, col.name));
                KILN_TRY(st.apply(b.train));
                if (b.validation) KILN_TRY(st.apply(*b.validation));
                if (b.test) KILN_TRY(st.apply(*b.test));
            }
        }
        if (labels) b.classNames = labels->classNames;
        b.description = "CSV table, " + std::to_string(all.count()) + " rows";
    } else {
        return fieldError("data.format", format.empty() ? std::string("is missing (idx or csv)")
                                                        : "\"" + format + "\" is not supported (use idx or csv)");
    }
    KILN_TRY(f.finish());
    return b;
}

}  // namespace kiln::engine::train
