// SPDX-License-Identifier: Apache-2.0
// Node previews: a sample read as training reads it, and probe plans (batch 1, inference mode)
// that keep one node's value.
#include "engine/api/node_preview.h"

#include <algorithm>
#include <cmath>

#include "engine/api/evaluation.h"
#include "engine/api/internal/training_setup.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/io/layers.h"
#include "engine/train/config.h"
#include "engine/train/trainer.h"
#include "engine/train/weights.h"

namespace kiln::engine::api {

namespace {

// The project's model with its layer instances expanded (as training builds it).
Result<ops::ModelInfo> projectModel(const io::Project& project) {
    KILN_ASSIGN(Graph graph, io::modelGraph(project));
    auto model = ops::analyzeModel(graph);
    if (!model.ok()) return io::locate(model.error(), project);
    return model;
}

}  // namespace

Result<PreviewSample> loadPreviewSample(const io::Project& project, const std::string& projectPath, int threads) {
    // One sample, on the CPU, in the order the data lists it.
    PrepareOptions setup;
    setup.batchSize = 1;
    setup.device = "cpu";
    setup.precision = "float32";
    setup.shuffle = false;
    setup.histograms = false;
    setup.requireData = true;
    setup.threads = threads;
    KILN_ASSIGN(PreparedTraining prepared, prepareTraining(project, projectPath, setup));
    const ops::ModelInfo& model = prepared.model;
    auto& trainer = prepared.trainer;

    PreviewSample out;
    for (int i : model.inputs) out.inputNames.push_back(model.graph.nodes[static_cast<size_t>(i)].name);
    bool got = false;
    auto observer = [&](const train::EvalBatch& b) -> Status {
        if (b.size < 1) return {};
        for (size_t k = 0; k < b.inputs.size(); ++k) {
            const int64_t width = model.nodes[static_cast<size_t>(model.inputs[k])].output.numelFrom(1);
            out.inputs.emplace_back(b.inputs[k], b.inputs[k] + width);
        }
        if (b.origins && !b.origins->empty() && !b.origins->front().empty()) out.source = b.origins->front();
        else if (b.sourceIndices && !b.sourceIndices->empty()) out.source = "sample " + std::to_string(b.sourceIndices->front());
        else out.source = "row " + std::to_string(b.firstRow + 1);
        got = true;
        return Error(ErrorCode::Cancelled, "one sample is enough");
    };
    const auto& data = trainer->data();
    Result<train::EvalResult> r = Error(ErrorCode::Internal, "no split");
    if (data.trainStream) {
        out.split = data.validationStream ? "validation" : "train";
        r = trainer->evaluate(data.validationStream ? *data.validationStream : *data.trainStream, observer);
    } else {
        out.split = data.validation ? "validation" : "train";
        r = trainer->evaluate(data.validation ? *data.validation : data.train, observer);
    }
    if (!r.ok() && r.error().code != ErrorCode::Cancelled) return r.error();
    if (!got)
        return Error(ErrorCode::DataError, "the project's " + out.split + " data holds no samples")
            .withFile(projectPath)
            .with("reason", "no samples");
    return out;
}

ValueStats statsOf(std::span<const float> values) {
    ValueStats s;
    double sum = 0, sumSq = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (float v : values) {
        if (!std::isfinite(v)) {
            ++s.nonFinite;
            continue;
        }
        ++s.count;
        sum += v;
        sumSq += static_cast<double>(v) * v;
        lo = std::min(lo, static_cast<double>(v));
        hi = std::max(hi, static_cast<double>(v));
    }
    if (s.count > 0) {
        const auto n = static_cast<double>(s.count);
        s.mean = sum / n;
        s.std = std::sqrt(std::max(0.0, sumSq / n - s.mean * s.mean));
        s.min = lo;
        s.max = hi;
    }
    return s;
}

// The model's weights and one probe plan per node asked for.
struct NodePreviewer::Plans {
    exec::ParamStore params;
    ThreadPool* pool = nullptr;
    std::map<std::string, std::unique_ptr<exec::Plan>> byNode;

    Result<exec::Plan*> get(const ops::ModelInfo& model, const std::string& node) {
        if (auto it = byNode.find(node); it != byNode.end()) return it->second.get();
        exec::CompileOptions o;
        o.batch = 1;
        o.training = false;
        exec::GradientProbe probe;
        probe.keep = {node};
        o.probe = probe;
        KILN_ASSIGN(auto plan, exec::Plan::compile(model, params, o, *pool));
        exec::Plan* p = plan.get();
        byNode.emplace(node, std::move(plan));
        return p;
    }
};

NodePreviewer::NodePreviewer(ops::ModelInfo model, std::unique_ptr<Plans> plans)
    : m_model(std::move(model)), m_plans(std::move(plans)) {}

NodePreviewer::~NodePreviewer() = default;

Result<std::unique_ptr<NodePreviewer>> NodePreviewer::create(const io::Project& project, const std::string& weights,
                                                             ThreadPool& pool) {
    KILN_ASSIGN(auto model, projectModel(project));
    auto config = train::parseTrainingConfig(project.training, model.graph);
    // The initial weights are those training starts from: the configured seed (0 without a
    // readable configuration, as a new project trains).
    const uint64_t seed = config.ok() ? config->seed : 0;
    auto plans = std::make_unique<Plans>();
    plans->params = exec::ParamStore::create(model, seed);
    plans->pool = &pool;
    PreviewWeights w;
    if (!weights.empty()) {
        KILN_ASSIGN(w.file, resolveWeights(weights));
        KILN_ASSIGN(auto report, train::loadWeightsByName(plans->params, w.file, true));
        w.loaded = static_cast<int64_t>(report.loaded.size());
        w.initialised = static_cast<int64_t>(report.initialised.size() + report.mismatched.size());
    }
    // A layer instance "b" shows its output node ("b/<output>", the expansion's name for it).
    std::map<std::string, std::string> instances;
    const io::LayerLibrary library = io::layerLibrary(project.layers);
    for (const auto& n : project.graph.nodes) {
        const io::LayerDef* def = library.find(n.op);
        if (def && def->outputs.size() == 1 && model.graph.find(n.name) < 0 &&
            model.graph.find(n.name + "/" + def->outputs[0]) >= 0)
            instances[n.name] = n.name + "/" + def->outputs[0];
    }
    if (model.inputs.empty()) return Error(ErrorCode::Unsupported, "the model has no Input node").with("what", "models without inputs");
    std::unique_ptr<NodePreviewer> p(new NodePreviewer(std::move(model), std::move(plans)));
    p->m_weights = w;
    p->m_instances = std::move(instances);
    return p;
}

Result<NodeOutput> NodePreviewer::run(const std::string& shownNode, const PreviewSample& sample) {
    auto inst = m_instances.find(shownNode);
    const std::string node = inst != m_instances.end() ? inst->second : shownNode;
    const int index = m_model.graph.find(node);
    if (index < 0) return Error(ErrorCode::ConfigError, "no node named \"" + node + "\"").withNode(node).with("field", "node");
    if (sample.inputs.size() != m_model.inputs.size())
        return Error(ErrorCode::ShapeMismatch, "the sample has " + std::to_string(sample.inputs.size()) +
                                                   " inputs and the model " + std::to_string(m_model.inputs.size()))
            .with("reason", "the sample does not fit the model's inputs");
    for (size_t k = 0; k < m_model.inputs.size(); ++k) {
        const auto& in = m_model.nodes[static_cast<size_t>(m_model.inputs[k])];
        const std::string& name = m_model.graph.nodes[static_cast<size_t>(m_model.inputs[k])].name;
        if (static_cast<int64_t>(sample.inputs[k].size()) != in.output.numelFrom(1))
            return Error(ErrorCode::ShapeMismatch, "the sample's values for \"" + name + "\" (" +
                                                       std::to_string(sample.inputs[k].size()) +
                                                       ") do not fit its shape " + in.output.toString())
                .withNode(name)
                .with("reason", "the data does not fit the input's shape");
    }
    KILN_ASSIGN(exec::Plan * plan, m_plans->get(m_model, node));
    for (size_t k = 0; k < sample.inputs.size(); ++k)
        std::copy(sample.inputs[k].begin(), sample.inputs[k].end(), plan->input(k));
    KILN_TRY(plan->forward());
    NodeOutput out;
    out.node = shownNode;
    out.shape = m_model.nodes[static_cast<size_t>(index)].output.withBatch(1);
    const float* v = plan->value(node);
    if (!v) return Error(ErrorCode::Internal, "the probe plan did not keep node " + node).withNode(node);
    out.values.assign(v, v + out.shape.numel());
    out.stats = statsOf(out.values);
    return out;
}

}  // namespace kiln::engine::api
