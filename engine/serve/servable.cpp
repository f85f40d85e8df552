// SPDX-License-Identifier: Apache-2.0
// Loading a model version and running it with cached inference plans.
#include "engine/serve/servable.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "engine/core/json_checked.h"
#include "engine/io/project.h"
#include "engine/serve/model_config.h"
#include "engine/serve/status.h"
#include "engine/train/weights.h"

namespace kiln::engine::serve {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Error jsonError(const std::string& path, const std::string& field, const std::string& reason) {
    Error e(ErrorCode::ConfigError, path + ": " + field + ": " + reason);
    e.withFile(path).with("field", field).with("reason", reason);
    return e;
}

Result<std::vector<float>> floatList(const json& v, const std::string& path, const std::string& field) {
    std::vector<float> out;
    if (v.is_number()) {
        out.push_back(v.get<float>());
        return out;
    }
    if (!v.is_array()) return jsonError(path, field, "needs a number or a list of numbers");
    for (const auto& x : v) {
        if (!x.is_number()) return jsonError(path, field, "needs a list of numbers");
        out.push_back(x.get<float>());
    }
    return out;
}

Status applyPreprocessing(const json& p, const std::string& path, const std::string& field, TensorSpec& spec) {
    if (!p.is_object()) return jsonError(path, field, "needs an object");
    // Preprocessing turns {"b64": ...} pictures into values: only inputs that take images
    // ([batch, height, width] or [batch, height, width, channels]) have any.
    if (spec.shape.size() != 3 && spec.shape.size() != 4) {
        std::string dims;
        for (int64_t d : spec.itemShape()) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        return jsonError(path, field,
                         "applies to image inputs only; \"" + spec.name + "\" takes values of shape [" + dims + "]");
    }
    const int64_t channels = spec.shape.size() == 4 ? spec.shape[3] : 1;
    for (const auto& [key, value] : p.items()) {
        const std::string f = field + "." + key;
        if (key == "scale" || key == "rescale") {
            if (!value.is_number()) return jsonError(path, f, "needs a number");
            spec.image.scale = value.get<float>();
        } else if (key == "offset") {
            if (!value.is_number()) return jsonError(path, f, "needs a number");
            spec.image.offset = value.get<float>();
        } else if (key == "mean" || key == "std") {
            KILN_ASSIGN(std::vector<float> v, floatList(value, path, f));
            if (v.size() == 1 && channels > 1) v.assign(static_cast<size_t>(channels), v[0]);
            if (static_cast<int64_t>(v.size()) != channels)
                return jsonError(path, f, "needs " + std::to_string(channels) + " values (one per channel)");
            if (key == "std") {
                for (float s : v)
                    if (!(s > 0)) return jsonError(path, f, "values must be positive");
                spec.image.std = std::move(v);
            } else {
                spec.image.mean = std::move(v);
            }
        }
        // Other keys (type, resize, layout, ...) describe what the values above already encode.
    }
    return okStatus();
}

Result<std::vector<int64_t>> readShape(const json& v, const std::string& path, const std::string& field) {
    if (!v.is_array()) return jsonError(path, field, "needs a list of dimensions");
    std::vector<int64_t> s;
    for (const auto& d : v) {
        if (d.is_null()) {
            s.push_back(-1);
        } else if (d.is_number_integer()) {
            s.push_back(d.get<int64_t>());
        } else {
            return jsonError(path, field, "dimensions must be integers (or null / -1 for the batch)");
        }
    }
    return s;
}

Status checkSpecs(const json& list, const std::string& path, const std::string& field, std::vector<TensorSpec>& specs,
                  bool inputs, const json& preprocessing) {
    if (!list.is_array()) return jsonError(path, field, "needs a list");
    if (list.size() != specs.size())
        return jsonError(path, field, "lists " + std::to_string(list.size()) + " tensors, the model has " + std::to_string(specs.size()));
    std::vector<TensorSpec> ordered;
    for (size_t i = 0; i < list.size(); ++i) {
        const json& e = list[i];
        const std::string f = field + "[" + std::to_string(i) + "]";
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
            return jsonError(path, f, "needs an object with a \"name\"");
        const std::string name = e["name"].get<std::string>();
        // The public alias may differ from the node name ("node" names the node then).
        std::string node = name;
        if (e.contains("node") && e["node"].is_string()) node = e["node"].get<std::string>();
        auto it = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == node; });
        if (it == specs.end()) return jsonError(path, f, "\"" + node + "\" is not a model " + (inputs ? "input" : "output"));
        for (size_t k = 0; k < i; ++k) {
            const json& earlier = list[k];
            const std::string other = earlier.contains("node") && earlier["node"].is_string() ? earlier["node"].get<std::string>()
                                                                                              : earlier["name"].get<std::string>();
            if (other == node) return jsonError(path, f, "names the model " + std::string(inputs ? "input" : "output") + " \"" + node + "\" a second time");
        }
        TensorSpec spec = *it;
        spec.name = name;
        if (e.contains("shape")) {
            KILN_ASSIGN(std::vector<int64_t> shape, readShape(e["shape"], path, f + ".shape"));
            std::vector<int64_t> item(shape.begin() + (shape.empty() ? 0 : 1), shape.end());
            if (shape.empty() || shape[0] >= 0 || item != spec.itemShape())
                return jsonError(path, f + ".shape", "does not match the model's shape");
        }
        if (e.contains("dtype") && e["dtype"].is_string()) {
            const std::string dt = e["dtype"].get<std::string>();
            if (dt == "int32" || dt == "DT_INT32") spec.dtype = "DT_INT32";  // ids (Embedding inputs)
            else if (dt != "float32" && dt != "DT_FLOAT" && dt != "float")
                return jsonError(path, f + ".dtype", "\"" + dt + "\" is not supported (float32 or int32)");
        }
        // An output that already went through softmax/sigmoid needs no further scoring.
        if (!inputs && i == 0 && e.contains("activation") && e["activation"].is_string()) {
            const std::string act = e["activation"].get<std::string>();
            if (act == "softmax" || act == "sigmoid") spec.image.scale = -1.0f;  // marker read below
        }
        if (inputs && e.contains("preprocessing")) KILN_TRY(applyPreprocessing(e["preprocessing"], path, f + ".preprocessing", spec));
        if (inputs && preprocessing.is_object() && preprocessing.contains(node))
            KILN_TRY(applyPreprocessing(preprocessing[node], path, "preprocessing." + node, spec));
        ordered.push_back(std::move(spec));
    }
    // Keep the model's order (plans index inputs and outputs by position).
    std::vector<TensorSpec> result;
    for (const auto& s : specs) {
        for (size_t i = 0; i < list.size(); ++i) {
            const std::string node = list[i].contains("node") && list[i]["node"].is_string()
                                         ? list[i]["node"].get<std::string>()
                                         : list[i]["name"].get<std::string>();
            if (node == s.name) result.push_back(ordered[i]);
        }
    }
    if (result.size() != specs.size()) return jsonError(path, field, "names a tensor twice");
    specs = std::move(result);
    return okStatus();
}

}  // namespace

Status applyModelJson(const json& j, const std::string& path, ModelSignature& sig) {
    if (!j.is_object()) return jsonError(path, "(top level)", "needs a JSON object");
    const json preprocessing = j.contains("preprocessing") ? j["preprocessing"] : json();
    if (j.contains("inputs")) KILN_TRY(checkSpecs(j["inputs"], path, "inputs", sig.inputs, true, preprocessing));
    else if (preprocessing.is_object())
        for (auto& s : sig.inputs)
            if (preprocessing.contains(s.name)) KILN_TRY(applyPreprocessing(preprocessing[s.name], path, "preprocessing." + s.name, s));
    if (j.contains("outputs")) {
        KILN_TRY(checkSpecs(j["outputs"], path, "outputs", sig.outputs, false, json()));
        if (!sig.outputs.empty() && sig.outputs[0].image.scale < 0) {
            sig.scores = ModelSignature::Scores::Identity;
            sig.outputs[0].image = ImagePreprocessing();
        }
    }
    // The exporter records how 8-bit pixels were scaled for training ("pixel_scale").
    if (preprocessing.is_object() && preprocessing.contains("pixel_scale")) {
        if (!preprocessing["pixel_scale"].is_number()) return jsonError(path, "preprocessing.pixel_scale", "needs a number");
        for (auto& s : sig.inputs) s.image.scale = preprocessing["pixel_scale"].get<float>();
    }
    if (j.contains("class_names")) {
        const json& c = j["class_names"];
        if (!c.is_array()) return jsonError(path, "class_names", "needs a list of strings");
        sig.classNames.clear();
        for (const auto& n : c) {
            if (!n.is_string()) return jsonError(path, "class_names", "needs a list of strings");
            sig.classNames.push_back(n.get<std::string>());
        }
    }
    if (j.contains("scores") && j["scores"].is_string()) {
        const std::string s = j["scores"].get<std::string>();
        if (s == "softmax") sig.scores = ModelSignature::Scores::Softmax;
        else if (s == "sigmoid") sig.scores = ModelSignature::Scores::Sigmoid;
        else if (s == "identity" || s == "none") sig.scores = ModelSignature::Scores::Identity;
        else return jsonError(path, "scores", "must be softmax, sigmoid or identity");
    }
    return okStatus();
}

ModelSignature Servable::deriveSignature(const ops::ModelInfo& model, const json& data, const json& training) {
    ModelSignature sig;
    for (int idx : model.inputs) {
        TensorSpec s;
        s.name = model.graph.nodes[static_cast<size_t>(idx)].name;
        s.shape = model.nodes[static_cast<size_t>(idx)].output.dims();
        if (s.shape.empty() || s.shape[0] != Shape::kBatch) s.shape.insert(s.shape.begin(), -1);
        sig.inputs.push_back(std::move(s));
    }
    for (int idx : model.outputs) {
        TensorSpec s;
        s.name = model.graph.nodes[static_cast<size_t>(idx)].name;
        s.shape = model.nodes[static_cast<size_t>(idx)].output.dims();
        if (s.shape.empty() || s.shape[0] != Shape::kBatch) s.shape.insert(s.shape.begin(), -1);
        sig.outputs.push_back(std::move(s));
    }
    if (data.is_object() && data.contains("class_names") && data["class_names"].is_array())
        for (const auto& n : data["class_names"])
            if (n.is_string()) sig.classNames.push_back(n.get<std::string>());
    // The loss on the first output tells whether it holds logits.
    if (training.is_object() && training.contains("loss")) {
        json loss = training["loss"];
        if (loss.is_array() && !loss.empty()) loss = loss[0];
        if (loss.is_object()) {
            const std::string type = loss.value("type", std::string());
            const bool logits = loss.contains("from_logits") && loss["from_logits"].is_boolean() && loss["from_logits"].get<bool>();
            if (logits && (type == "SparseCategoricalCrossentropy" || type == "CategoricalCrossentropy"))
                sig.scores = ModelSignature::Scores::Softmax;
            else if (logits && type == "BinaryCrossentropy")
                sig.scores = ModelSignature::Scores::Sigmoid;
        }
    }
    return sig;
}

Servable::Servable(const ops::ModelInfo& model, exec::ParamStore params, ModelSignature signature, std::string name,
                   int64_t version, ThreadPool& pool)
    : m_model(model), m_params(std::move(params)), m_signature(std::move(signature)), m_name(std::move(name)),
      m_version(version), m_pool(&pool) {}

Servable::~Servable() = default;

Result<std::shared_ptr<Servable>> Servable::fromModel(const ops::ModelInfo& model, exec::ParamStore params,
                                                      ModelSignature signature, const std::string& modelName,
                                                      int64_t version, ThreadPool& pool) {
    if (signature.inputs.size() != model.inputs.size() || signature.outputs.size() != model.outputs.size())
        return Error(ErrorCode::Internal, "the signature does not match the model");
    return std::shared_ptr<Servable>(new Servable(model, std::move(params), std::move(signature), modelName, version, pool));
}

Result<std::shared_ptr<Servable>> Servable::load(const std::string& dir, const std::string& modelName, int64_t version,
                                                 ThreadPool& pool) {
    const fs::path folder(dir);
    KILN_ASSIGN(io::Project project, io::loadProject((folder / kModelGraphFile).string()));
    KILN_ASSIGN(Graph graph, io::modelGraph(project));
    auto analysed = ops::analyzeModel(graph);
    if (!analysed) return io::locate(std::move(analysed.error()), project);
    ops::ModelInfo model = std::move(analysed.value());
    exec::ParamStore params = exec::ParamStore::create(model, 0);
    KILN_TRY(train::loadWeights(params, (folder / kModelWeightsFile).string()));
    ModelSignature sig = deriveSignature(model, project.data, project.training);
    const fs::path jsonPath = folder / kModelJsonFile;
    std::error_code ec;
    if (fs::exists(jsonPath, ec)) {
        KILN_ASSIGN(json j, readJsonFileChecked(jsonPath.string(), modelJsonLimits()));
        KILN_TRY(applyModelJson(j, jsonPath.string(), sig));
    }
    return fromModel(model, std::move(params), std::move(sig), modelName, version, pool);
}

Result<Servable::PlanSlot*> Servable::slotFor(int64_t planBatch) {
    std::lock_guard lock(m_slotsMutex);
    auto& slot = m_slots[planBatch];
    if (!slot) slot = std::make_unique<PlanSlot>();
    return slot.get();
}

Status Servable::runChunk(const std::vector<Tensor>& inputs, int64_t begin, int64_t count, std::vector<Tensor>& outputs) {
    int64_t planBatch = 1;
    while (planBatch < count) planBatch *= 2;
    KILN_ASSIGN(PlanSlot * slot, slotFor(planBatch));
    std::lock_guard lock(slot->mutex);
    if (!slot->plan) {
        exec::CompileOptions options;
        options.batch = planBatch;
        options.training = false;
        KILN_ASSIGN(slot->plan, exec::Plan::compile(m_model, m_params, options, *m_pool));
    }
    exec::Plan& plan = *slot->plan;
    for (size_t k = 0; k < inputs.size(); ++k) {
        const int64_t item = m_signature.inputs[k].itemSize();
        float* dst = plan.input(k);
        std::memcpy(dst, inputs[k].data<float>() + begin * item, static_cast<size_t>(count * item) * sizeof(float));
        // Rows past `count` keep whatever the last run left: every op is per-sample in inference.
    }
    KILN_TRY(plan.forward());
    for (size_t k = 0; k < outputs.size(); ++k) {
        const int64_t item = m_signature.outputs[k].itemSize();
        std::memcpy(outputs[k].data<float>() + begin * item, plan.output(k), static_cast<size_t>(count * item) * sizeof(float));
    }
    return okStatus();
}

Result<std::vector<Tensor>> Servable::run(const std::vector<Tensor>& inputs) {
    if (inputs.size() != m_signature.inputs.size())
        return serveError(TfCode::InvalidArgument, "expected " + std::to_string(m_signature.inputs.size()) +
                                                       " input tensors, got " + std::to_string(inputs.size()));
    const int64_t batch = inputs.empty() ? 0 : inputs[0].shape()[0];
    if (batch <= 0) return serveError(TfCode::InvalidArgument, "the batch is empty");
    for (size_t k = 0; k < inputs.size(); ++k) {
        const TensorSpec& spec = m_signature.inputs[k];
        if (inputs[k].shape().rank() == 0 || inputs[k].shape()[0] != batch || inputs[k].numel() != batch * spec.itemSize())
            return serveError(TfCode::InvalidArgument, "input \"" + spec.name + "\" has shape " + inputs[k].shape().toString() +
                                                           ", expected " + Shape(spec.shape).withBatch(batch).toString());
    }
    std::vector<Tensor> outputs;
    for (const auto& spec : m_signature.outputs) outputs.emplace_back(Shape(spec.shape).withBatch(batch));
    for (int64_t begin = 0; begin < batch; begin += kMaxPlanBatch)
        KILN_TRY(runChunk(inputs, begin, std::min(kMaxPlanBatch, batch - begin), outputs));
    return outputs;
}

Status Servable::warmUp(int64_t maxBatch) {
    const int64_t limit = std::min(std::max<int64_t>(1, maxBatch), kMaxPlanBatch);
    for (int64_t batch = 1;; batch *= 2) {
        const int64_t b = std::min(batch, limit);
        std::vector<Tensor> inputs;
        for (const auto& spec : m_signature.inputs) inputs.emplace_back(Shape(spec.shape).withBatch(b));
        auto out = run(inputs);
        if (!out) return std::move(out.error());
        if (b == limit) break;
    }
    return okStatus();
}

}  // namespace kiln::engine::serve
