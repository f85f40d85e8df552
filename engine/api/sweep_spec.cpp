// SPDX-License-Identifier: Apache-2.0
// Sweep specs: parsing with errors that name the JSON path, checking paths against a project,
// grid and seeded random configurations, applying a configuration to a project, and the pure
// early-stopping rules (median stopping, successive halving).
#include "engine/api/sweep.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "engine/api/internal/training_setup.h"
#include "engine/api/run_location.h"
#include "engine/ops/op_table.h"
#include "engine/train/config.h"

namespace kiln::engine::api {

using nlohmann::json;

namespace {

Error specError(const std::string& field, const std::string& message)
{
    return Error(ErrorCode::ConfigError, message).with("field", field).with("reason", message);
}

// The training fields a path may name (the "training" object of docs/project-format.md).
const std::set<std::string>& trainingFields()
{
    static const std::set<std::string> fields = {"epochs",  "batch_size", "seed",      "shuffle",       "validation_split",
                                                 "optimizer", "schedule", "loss",      "metrics",       "callbacks",
                                                 "device",  "precision", "memory_limit", "stages"};
    return fields;
}

std::vector<std::string> split(const std::string& path)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(path);
    while (std::getline(in, part, '.')) {
        parts.push_back(part);
    }
    return parts;
}

bool accuracyLike(const std::string& metric)
{
    for (const char* word : {"accuracy", "auc", "precision", "recall", "f1", "iou"}) {
        if (metric.find(word) != std::string::npos) {
            return true;
        }
    }
    return false;
}

Result<double> number(const json& j, const std::string& key, const std::string& where)
{
    if (!j.contains(key)) {
        return specError(where + "." + key, "\"" + key + "\" is missing");
    }
    if (!j[key].is_number()) {
        return specError(where + "." + key, "\"" + key + "\" must be a number");
    }
    const double v = j[key].get<double>();
    if (!std::isfinite(v)) {
        return specError(where + "." + key, "\"" + key + "\" must be finite");
    }
    return v;
}

Result<int> positiveInt(const json& j, const std::string& key, const std::string& where, int minimum)
{
    if (!j[key].is_number_integer() || j[key].get<int64_t>() < minimum || j[key].get<int64_t>() > 1000000) {
        return specError(where + key, "\"" + key + "\" must be an integer of at least " + std::to_string(minimum));
    }
    return int(j[key].get<int64_t>());
}

Status onlyKeys(const json& j, const std::set<std::string>& keys, const std::string& where)
{
    for (const auto& [key, value] : j.items()) {
        if (!keys.count(key)) {
            return specError(where + key, "unknown field \"" + key + "\"");
        }
    }
    return {};
}

// Where a parameter lives in the project's JSON: "training" + fields, a node's attribute or a
// callback's setting.
struct Target {
    enum class Kind { Training, Node, Callback } kind = Kind::Training;
    std::vector<std::string> fields;  // Training: below "training"
    std::string name;                 // Node: node name; Callback: callback type
    std::string key;                  // Node: attribute; Callback: setting
};

Result<Target> parseTarget(const std::string& written, const std::string& field)
{
    const std::string path = resolvedSweepPath(written);
    const auto parts = split(path);
    for (const auto& p : parts) {
        if (p.empty()) {
            return specError(field, "the path \"" + written + "\" has an empty part");
        }
    }
    Target t;
    if (parts.size() >= 2 && parts[0] == "training") {
        t.kind = Target::Kind::Training;
        t.fields.assign(parts.begin() + 1, parts.end());
        if (!trainingFields().count(t.fields[0])) {
            return specError(field, "\"" + t.fields[0] + "\" is not a training setting");
        }
        if (t.fields[0] == "callbacks" || t.fields[0] == "stages") {
            return specError(field, "name a callback setting as callbacks.<type>.<setting>");
        }
        return t;
    }
    if (parts.size() == 3 && parts[0] == "nodes") {
        t.kind = Target::Kind::Node;
        t.name = parts[1];
        t.key = parts[2];
        return t;
    }
    if (parts.size() == 3 && parts[0] == "callbacks") {
        t.kind = Target::Kind::Callback;
        t.name = parts[1];
        t.key = parts[2];
        return t;
    }
    return specError(field, "the path \"" + written +
                                "\" must be a training setting (learning_rate, batch_size, epochs, optimizer, "
                                "weight_decay, training.<field>...), nodes.<node>.<attribute> or "
                                "callbacks.<type>.<setting>");
}

json* callbackEntry(json& training, const std::string& type)
{
    if (!training.contains("callbacks") || !training["callbacks"].is_array()) {
        return nullptr;
    }
    for (auto& cb : training["callbacks"]) {
        if (cb.is_object() && cb.value("type", std::string()) == type) {
            return &cb;
        }
    }
    return nullptr;
}

// 53 random bits as a double in [0, 1): the same on every machine (unlike the standard
// distributions, whose algorithms the library chooses).
double unit(std::mt19937_64& rng)
{
    return double(rng() >> 11) * (1.0 / 9007199254740992.0);
}

json draw(const SweepParameter& p, std::mt19937_64& rng)
{
    const double u = unit(rng);
    switch (p.kind) {
    case SweepParamKind::Choice:
        return p.values[std::min(p.values.size() - 1, size_t(u * double(p.values.size())))];
    case SweepParamKind::Uniform:
        return p.min + u * (p.max - p.min);
    case SweepParamKind::LogUniform:
        return std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min)));
    case SweepParamKind::IntUniform: {
        const auto lo = int64_t(p.min), hi = int64_t(p.max);
        return std::min(hi, lo + int64_t(u * double(hi - lo + 1)));
    }
    }
    return nullptr;
}

}  // namespace

const char* sweepParamKindName(SweepParamKind kind)
{
    switch (kind) {
    case SweepParamKind::Choice: return "choice";
    case SweepParamKind::Uniform: return "uniform";
    case SweepParamKind::LogUniform: return "log_uniform";
    case SweepParamKind::IntUniform: return "int_uniform";
    }
    return "choice";
}

std::string resolvedSweepPath(const std::string& path)
{
    if (path == "learning_rate" || path == "weight_decay" || path == "momentum") {
        return "training.optimizer." + path;
    }
    if (path == "optimizer") {
        return "training.optimizer.type";
    }
    if (path == "batch_size" || path == "epochs" || path == "seed" || path == "validation_split") {
        return "training." + path;
    }
    return path;
}

Result<SweepSpec> parseSweepSpec(const json& j)
{
    if (!j.is_object()) {
        return specError("$", "a sweep spec is a JSON object");
    }
    KILN_TRY(onlyKeys(j, {"format", "version", "parameters", "strategy", "seed", "trials", "grid_points", "objective",
                          "epochs", "early_stopping"},
                      ""));
    SweepSpec spec;
    if (j.contains("format") && j["format"] != "kiln-sweep") {
        return specError("format", "the format must be \"kiln-sweep\"");
    }
    if (!j.contains("parameters") || !j["parameters"].is_array() || j["parameters"].empty()) {
        return specError("parameters", "\"parameters\" must be a non-empty list");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < j["parameters"].size(); ++i) {
        const json& pj = j["parameters"][i];
        const std::string where = "parameters[" + std::to_string(i) + "]";
        if (!pj.is_object()) {
            return specError(where, "a parameter is an object with path and kind");
        }
        KILN_TRY(onlyKeys(pj, {"path", "kind", "values", "min", "max"}, where + "."));
        SweepParameter p;
        if (!pj.contains("path") || !pj["path"].is_string() || pj["path"].get<std::string>().empty()) {
            return specError(where + ".path", "\"path\" must be a non-empty string");
        }
        p.path = pj["path"].get<std::string>();
        KILN_TRY(parseTarget(p.path, where + ".path"));
        if (!seen.insert(resolvedSweepPath(p.path)).second) {
            return specError(where + ".path", "the path \"" + p.path + "\" is swept twice");
        }
        const std::string kind = pj.value("kind", std::string(pj.contains("values") ? "choice" : ""));
        if (kind == "choice") {
            p.kind = SweepParamKind::Choice;
            if (!pj.contains("values") || !pj["values"].is_array() || pj["values"].empty()) {
                return specError(where + ".values", "a choice needs a non-empty list of values");
            }
            for (size_t k = 0; k < pj["values"].size(); ++k) {
                const json& v = pj["values"][k];
                if (!(v.is_number() || v.is_string() || v.is_boolean())) {
                    return specError(where + ".values[" + std::to_string(k) + "]",
                                     "a choice value must be a number, a string or true/false");
                }
                p.values.push_back(v);
            }
        } else if (kind == "uniform" || kind == "log_uniform" || kind == "int_uniform") {
            p.kind = kind == "uniform"       ? SweepParamKind::Uniform
                     : kind == "log_uniform" ? SweepParamKind::LogUniform
                                             : SweepParamKind::IntUniform;
            KILN_ASSIGN(p.min, number(pj, "min", where));
            KILN_ASSIGN(p.max, number(pj, "max", where));
            if (p.kind == SweepParamKind::IntUniform &&
                (!pj["min"].is_number_integer() || !pj["max"].is_number_integer())) {
                return specError(where + (pj["min"].is_number_integer() ? ".max" : ".min"),
                                 "an int_uniform range has integer bounds");
            }
            if (p.kind == SweepParamKind::LogUniform && p.min <= 0) {
                return specError(where + ".min", "a log_uniform range must start above 0");
            }
            if (!(p.max > p.min) && !(p.kind == SweepParamKind::IntUniform && p.max == p.min)) {
                return specError(where + ".max", "\"max\" must be greater than \"min\"");
            }
            if (pj.contains("values")) {
                return specError(where + ".values", "a range has min and max, not values");
            }
        } else {
            return specError(where + ".kind", "the kind must be choice, uniform, log_uniform or int_uniform");
        }
        spec.parameters.push_back(std::move(p));
    }
    if (j.contains("strategy")) {
        const json& s = j["strategy"];
        if (s == "grid") {
            spec.strategy = SweepStrategy::Grid;
        } else if (s == "random") {
            spec.strategy = SweepStrategy::Random;
        } else {
            return specError("strategy", "the strategy must be grid or random");
        }
    }
    if (j.contains("seed")) {
        if (!j["seed"].is_number_integer() || (!j["seed"].is_number_unsigned() && j["seed"].get<int64_t>() < 0)) {
            return specError("seed", "\"seed\" must be an integer of at least 0");
        }
        spec.seed = j["seed"].get<uint64_t>();
    }
    if (j.contains("trials")) {
        KILN_ASSIGN(spec.trials, positiveInt(j, "trials", "", 1));
    } else if (spec.strategy == SweepStrategy::Random) {
        spec.trials = 10;
    }
    if (j.contains("grid_points")) {
        KILN_ASSIGN(spec.gridPoints, positiveInt(j, "grid_points", "", 2));
    }
    if (j.contains("epochs")) {
        int e = 0;
        KILN_ASSIGN(e, positiveInt(j, "epochs", "", 1));
        spec.epochs = e;
    }
    if (j.contains("objective")) {
        const json& o = j["objective"];
        if (o.is_string()) {
            spec.objective = o.get<std::string>();
            spec.mode = accuracyLike(spec.objective) ? ObjectiveMode::Max : ObjectiveMode::Min;
        } else if (o.is_object()) {
            KILN_TRY(onlyKeys(o, {"metric", "mode"}, "objective."));
            if (!o.contains("metric") || !o["metric"].is_string() || o["metric"].get<std::string>().empty()) {
                return specError("objective.metric", "the objective names an epoch value such as val_accuracy");
            }
            spec.objective = o["metric"].get<std::string>();
            const std::string mode = o.value("mode", std::string("auto"));
            if (mode == "min") {
                spec.mode = ObjectiveMode::Min;
            } else if (mode == "max") {
                spec.mode = ObjectiveMode::Max;
            } else if (mode == "auto") {
                spec.mode = accuracyLike(spec.objective) ? ObjectiveMode::Max : ObjectiveMode::Min;
            } else {
                return specError("objective.mode", "the mode must be min, max or auto");
            }
        } else {
            return specError("objective", "the objective is a metric name or {\"metric\", \"mode\"}");
        }
    }
    if (j.contains("early_stopping")) {
        const json& e = j["early_stopping"];
        if (!e.is_object()) {
            return specError("early_stopping", "\"early_stopping\" is an object with a type");
        }
        KILN_TRY(onlyKeys(e, {"type", "min_epochs", "min_trials", "reduction"}, "early_stopping."));
        const std::string type = e.value("type", std::string("none"));
        if (type == "none") {
            spec.pruning = SweepPruning::None;
        } else if (type == "median") {
            spec.pruning = SweepPruning::Median;
        } else if (type == "successive_halving") {
            spec.pruning = SweepPruning::SuccessiveHalving;
        } else {
            return specError("early_stopping.type", "the type must be none, median or successive_halving");
        }
        if (e.contains("min_epochs")) {
            KILN_ASSIGN(spec.minEpochs, positiveInt(e, "min_epochs", "early_stopping.", 1));
        }
        if (e.contains("min_trials")) {
            KILN_ASSIGN(spec.minTrials, positiveInt(e, "min_trials", "early_stopping.", 1));
        }
        if (e.contains("reduction")) {
            KILN_ASSIGN(spec.reduction, positiveInt(e, "reduction", "early_stopping.", 2));
        }
    }
    if (spec.pruning == SweepPruning::SuccessiveHalving) {
        for (size_t i = 0; i < spec.parameters.size(); ++i) {
            if (resolvedSweepPath(spec.parameters[i].path) == "training.epochs") {
                return specError("parameters[" + std::to_string(i) + "].path",
                                 "successive halving sets the epochs of each rung; epochs cannot be swept with it");
            }
        }
    }
    return spec;
}

Result<SweepSpec> loadSweepSpec(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error(ErrorCode::FileNotFound, "cannot open the sweep spec " + path).withFile(path).with("path", path);
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        const size_t at = std::min<size_t>(e.byte, text.size());
        const int line = 1 + int(std::count(text.begin(), text.begin() + std::ptrdiff_t(at ? at - 1 : 0), '\n'));
        return Error(ErrorCode::ParseError, std::string("the sweep spec is not valid JSON: ") + e.what())
            .withFile(path, line)
            .with("reason", e.what());
    }
    auto spec = parseSweepSpec(j);
    if (!spec.ok()) {
        return spec.error().withFile(path);
    }
    return spec;
}

json sweepSpecToJson(const SweepSpec& spec)
{
    json params = json::array();
    for (const auto& p : spec.parameters) {
        json pj = {{"path", p.path}, {"kind", sweepParamKindName(p.kind)}};
        if (p.kind == SweepParamKind::Choice) {
            pj["values"] = p.values;
        } else if (p.kind == SweepParamKind::IntUniform) {
            pj["min"] = int64_t(p.min);
            pj["max"] = int64_t(p.max);
        } else {
            pj["min"] = p.min;
            pj["max"] = p.max;
        }
        params.push_back(pj);
    }
    json j = {{"format", "kiln-sweep"},
              {"parameters", params},
              {"strategy", spec.strategy == SweepStrategy::Grid ? "grid" : "random"},
              {"seed", spec.seed},
              {"objective", {{"metric", spec.objective}, {"mode", spec.mode == ObjectiveMode::Max ? "max" : "min"}}}};
    if (spec.trials > 0) {
        j["trials"] = spec.trials;
    }
    if (spec.strategy == SweepStrategy::Grid) {
        j["grid_points"] = spec.gridPoints;
    }
    if (spec.epochs) {
        j["epochs"] = *spec.epochs;
    }
    if (spec.pruning != SweepPruning::None) {
        j["early_stopping"] = {{"type", spec.pruning == SweepPruning::Median ? "median" : "successive_halving"},
                               {"min_epochs", spec.minEpochs}};
        if (spec.pruning == SweepPruning::Median) {
            j["early_stopping"]["min_trials"] = spec.minTrials;
        } else {
            j["early_stopping"]["reduction"] = spec.reduction;
        }
    }
    return j;
}

Status saveSweepSpec(const SweepSpec& spec, const std::string& path)
{
    return io::writeFileAtomic(path, sweepSpecToJson(spec).dump(2) + "\n");
}

std::string lastSweepSpecPath(const std::string& projectPath)
{
    const std::filesystem::path project(projectPath);
    return (std::filesystem::path(runsHome(project.parent_path().string())) / ".kiln" /
            (project.filename().string() + ".sweep.json"))
        .string();
}

Status checkSweepSpec(const SweepSpec& spec, const io::Project& project)
{
    for (size_t i = 0; i < spec.parameters.size(); ++i) {
        const std::string field = "parameters[" + std::to_string(i) + "].path";
        KILN_ASSIGN(const Target t, parseTarget(spec.parameters[i].path, field));
        switch (t.kind) {
        case Target::Kind::Training: {
            // Objects on the way (optimizer, schedule, loss) must be objects when present.
            const json* at = &project.training;
            for (size_t k = 0; k + 1 < t.fields.size(); ++k) {
                if (!at->contains(t.fields[k])) {
                    break;
                }
                at = &(*at)[t.fields[k]];
                if (!at->is_object()) {
                    return specError(field, "training." + t.fields[k] + " is not an object in the project");
                }
            }
            break;
        }
        case Target::Kind::Node: {
            const Node* node = project.graph.node(t.name);
            if (!node) {
                return specError(field, "the project has no node \"" + t.name + "\"").withNode(t.name);
            }
            if (const auto* op = ops::findOp(node->op)) {
                const bool known = std::any_of(op->attrs.begin(), op->attrs.end(),
                                               [&](const AttrSpec& a) { return a.name == t.key; });
                if (!known) {
                    std::string names;
                    for (const auto& a : op->attrs) {
                        names += (names.empty() ? "" : ", ") + a.name;
                    }
                    return specError(field, node->op + " has no attribute \"" + t.key + "\"" +
                                                (names.empty() ? std::string(" (it has none)") : " (it has " + names + ")"))
                        .withNode(t.name);
                }
            }
            break;
        }
        case Target::Kind::Callback: {
            json training = project.training;
            if (!callbackEntry(training, t.name)) {
                return specError(field, "the project's training has no " + t.name + " callback");
            }
            break;
        }
        }
    }
    // The objective: loss, a configured metric, or either on the validation data.
    {
        auto config = projectTrainingConfig(project, project.path);
        if (config.ok()) {
            std::vector<std::string> names = {"loss", "val_loss"};
            for (const auto& m : config->metrics) {
                names.push_back(m);
                names.push_back("val_" + m);
            }
            if (std::find(names.begin(), names.end(), spec.objective) == names.end()) {
                std::string list;
                for (const auto& n : names) {
                    list += (list.empty() ? "" : ", ") + n;
                }
                return specError("objective.metric", "the objective \"" + spec.objective +
                                                         "\" is not a value of the project's epochs (" + list + ")");
            }
        }
    }
    return {};
}

std::vector<json> gridValues(const SweepParameter& p, int gridPoints)
{
    std::vector<json> out;
    const int n = std::max(2, gridPoints);
    switch (p.kind) {
    case SweepParamKind::Choice:
        return p.values;
    case SweepParamKind::Uniform:
        for (int i = 0; i < n; ++i) {
            out.emplace_back(p.min + (p.max - p.min) * double(i) / double(n - 1));
        }
        break;
    case SweepParamKind::LogUniform: {
        const double a = std::log(p.min), b = std::log(p.max);
        for (int i = 0; i < n; ++i) {
            out.emplace_back(i == 0 ? p.min : i == n - 1 ? p.max : std::exp(a + (b - a) * double(i) / double(n - 1)));
        }
        break;
    }
    case SweepParamKind::IntUniform: {
        const auto lo = int64_t(p.min), hi = int64_t(p.max);
        if (hi - lo + 1 <= n) {
            for (int64_t v = lo; v <= hi; ++v) {
                out.emplace_back(v);
            }
        } else {
            int64_t last = lo - 1;
            for (int i = 0; i < n; ++i) {
                const auto v = int64_t(std::llround(double(lo) + double(hi - lo) * double(i) / double(n - 1)));
                if (v != last) {
                    out.emplace_back(v);
                }
                last = v;
            }
        }
        break;
    }
    }
    return out;
}

int64_t gridSize(const SweepSpec& spec)
{
    int64_t n = 1;
    for (const auto& p : spec.parameters) {
        n *= int64_t(gridValues(p, spec.gridPoints).size());
        if (n > (int64_t(1) << 40)) {
            break;
        }
    }
    return n;
}

std::vector<json> sweepConfigurations(const SweepSpec& spec)
{
    std::vector<json> out;
    if (spec.strategy == SweepStrategy::Grid) {
        std::vector<std::vector<json>> axes;
        for (const auto& p : spec.parameters) {
            axes.push_back(gridValues(p, spec.gridPoints));
        }
        const int64_t size = gridSize(spec);
        const int64_t count = spec.trials > 0 ? std::min<int64_t>(spec.trials, size) : size;
        // Mixed radix, the last parameter varying fastest.
        for (int64_t index = 0; index < count; ++index) {
            json config = json::object();
            int64_t rest = index;
            for (size_t k = axes.size(); k-- > 0;) {
                const auto n = int64_t(axes[k].size());
                config[spec.parameters[k].path] = axes[k][size_t(rest % n)];
                rest /= n;
            }
            out.push_back(std::move(config));
        }
        return out;
    }
    std::mt19937_64 rng(spec.seed);
    for (int t = 0; t < spec.trials; ++t) {
        json config = json::object();
        for (const auto& p : spec.parameters) {
            config[p.path] = draw(p, rng);
        }
        out.push_back(std::move(config));
    }
    return out;
}

Result<io::Project> applySweepParameters(const io::Project& project, const json& params)
{
    json j;
    try {
        j = json::parse(io::serializeProject(project));
    } catch (const std::exception& e) {
        return Error(ErrorCode::Internal, std::string("the project did not serialize: ") + e.what());
    }
    for (const auto& [path, value] : params.items()) {
        KILN_ASSIGN(const Target t, parseTarget(path, path));
        switch (t.kind) {
        case Target::Kind::Training: {
            json* at = &j["training"];
            for (size_t k = 0; k + 1 < t.fields.size(); ++k) {
                at = &(*at)[t.fields[k]];
                if (at->is_null()) {
                    *at = json::object();
                }
                if (!at->is_object()) {
                    return specError(path, "training." + t.fields[k] + " is not an object in the project");
                }
            }
            (*at)[t.fields.back()] = value;
            break;
        }
        case Target::Kind::Node: {
            json* node = nullptr;
            if (j.contains("graph") && j["graph"].contains("nodes")) {
                for (auto& n : j["graph"]["nodes"]) {
                    if (n.value("name", std::string()) == t.name) {
                        node = &n;
                    }
                }
            }
            if (!node) {
                return specError(path, "the project has no node \"" + t.name + "\"").withNode(t.name);
            }
            (*node)["attrs"][t.key] = value;
            break;
        }
        case Target::Kind::Callback: {
            json* cb = callbackEntry(j["training"], t.name);
            if (!cb) {
                return specError(path, "the project's training has no " + t.name + " callback");
            }
            (*cb)[t.key] = value;
            break;
        }
        }
    }
    auto applied = io::parseProject(j.dump(), project.path);
    if (!applied.ok()) {
        Error e = applied.error();
        e.file.clear();
        e.line = 0;
        return e;
    }
    applied->path = project.path;
    // Errors of a trial then point at the node's line in the file the user wrote.
    applied->sourceText = project.sourceText;
    return applied;
}

bool medianStoppingRule(const std::vector<double>& curve, const std::vector<std::vector<double>>& finished,
                        ObjectiveMode mode, int minEpochs, int minTrials)
{
    const int epoch = int(curve.size());
    if (epoch < std::max(1, minEpochs) || int(finished.size()) < std::max(1, minTrials)) {
        return false;
    }
    const bool max = mode == ObjectiveMode::Max;
    double best = max ? -INFINITY : INFINITY;
    for (double v : curve) {
        if (std::isfinite(v)) {
            best = max ? std::max(best, v) : std::min(best, v);
        }
    }
    std::vector<double> averages;
    for (const auto& other : finished) {
        const size_t n = std::min(other.size(), size_t(epoch));
        double sum = 0;
        size_t count = 0;
        for (size_t k = 0; k < n; ++k) {
            if (std::isfinite(other[k])) {
                sum += other[k];
                ++count;
            }
        }
        if (count > 0) {
            averages.push_back(sum / double(count));
        }
    }
    if (int(averages.size()) < std::max(1, minTrials)) {
        return false;
    }
    std::sort(averages.begin(), averages.end());
    const size_t m = averages.size();
    const double median = m % 2 ? averages[m / 2] : 0.5 * (averages[m / 2 - 1] + averages[m / 2]);
    if (!std::isfinite(best)) {
        return true;  // nothing but NaN so far: worse than any finished trial
    }
    return max ? best < median : best > median;
}

std::vector<int> successiveHalvingRungs(int minEpochs, int maxEpochs, int reduction)
{
    std::vector<int> rungs;
    const int top = std::max(1, maxEpochs);
    int64_t e = std::clamp(minEpochs, 1, top);
    while (e < top) {
        rungs.push_back(int(e));
        e *= std::max(2, reduction);
    }
    rungs.push_back(top);
    return rungs;
}

std::vector<int> successiveHalvingPromote(const std::vector<std::optional<double>>& scores, int reduction,
                                          ObjectiveMode mode)
{
    std::vector<int> ranked;
    for (int i = 0; i < int(scores.size()); ++i) {
        if (scores[size_t(i)] && std::isfinite(*scores[size_t(i)])) {
            ranked.push_back(i);
        }
    }
    const int keep = std::min<int>(int(ranked.size()), (int(scores.size()) + std::max(2, reduction) - 1) / std::max(2, reduction));
    std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) {
        return mode == ObjectiveMode::Max ? *scores[size_t(a)] > *scores[size_t(b)] : *scores[size_t(a)] < *scores[size_t(b)];
    });
    ranked.resize(size_t(std::max(0, keep)));
    std::sort(ranked.begin(), ranked.end());
    return ranked;
}

}  // namespace kiln::engine::api
