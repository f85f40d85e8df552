// SPDX-License-Identifier: Apache-2.0
// Per-node analysis from the op table, the connection rule, and the latest-wins worker.
#include "ui/graph_editor/graph_analysis.h"

#include <QCoreApplication>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "engine/ops/model.h"
#include "engine/ops/op_table.h"
#include "engine/ops/summary.h"

namespace kiln::ui {
namespace {

using engine::Error;
using engine::ErrorCode;
using engine::Graph;
using engine::Node;
using engine::Shape;
namespace ops = engine::ops;

enum class Stage { None, Structure, Attributes, Shape };

struct Pass {
    std::vector<NodeResult> nodes;
    std::vector<Stage> stage;
    // What a ModelInfo needs, kept so a valid graph is summarised without a second pass.
    std::vector<const ops::OpDef*> defs;
    std::vector<engine::AttrMap> attrs;
    std::vector<std::vector<int>> producers;
    std::vector<std::vector<Shape>> inputShapes;
    std::vector<std::vector<ops::ParamSpec>> params;
    std::vector<int> order;
    std::vector<int> paramOwner;
    std::vector<const engine::io::LayerDef*> layers;  // the layer of an instance, else null
    std::vector<std::vector<std::string>> ports;       // per input: the producer's output ("" = its only one)
    bool anyError = false;
};

Pass runPass(const Graph& graph, const engine::io::LayerLibrary* layers);

// One instance, analysed through its expansion: Input nodes with the producers' shapes feed it.
struct InstanceResult {
    std::string error;
    std::vector<std::pair<std::string, Shape>> outputs;  // per layer output
    int64_t params = 0, macs = 0;
};

InstanceResult analyseInstance(const Node& node, const engine::io::LayerDef& layer, const std::vector<Shape>& inShapes,
                               const engine::io::LayerLibrary& library) {
    InstanceResult r;
    Graph mini;
    Node instance = node;
    instance.inputs.clear();
    instance.shareWeightsWith.clear();
    for (size_t k = 0; k < inShapes.size(); ++k) {
        Node in;
        in.op = "Input";
        // "/" cannot appear in a node's own name, so these never clash with the layer's nodes.
        in.name = "input/" + std::to_string(k);
        in.attrs.set("shape", inShapes[k].hasBatch() ? inShapes[k].withoutFirst().dims() : inShapes[k].dims());
        instance.inputs.push_back(in.name);
        mini.nodes.push_back(std::move(in));
    }
    mini.nodes.push_back(instance);
    for (const auto& out : layer.outputs)
        mini.outputs.push_back(layer.outputs.size() == 1 ? node.name : node.name + ":" + out);
    auto expanded = engine::io::expandLayers(mini, library);
    if (!expanded.ok()) {
        r.error = expanded.error().message;
        return r;
    }
    const Graph& g = expanded.value();
    Pass pass = runPass(g, nullptr);
    for (int i : pass.order)
        if (r.error.empty() && !pass.nodes[static_cast<size_t>(i)].error.empty()) r.error = pass.nodes[static_cast<size_t>(i)].error;
    for (size_t i = 0; i < g.nodes.size() && r.error.empty(); ++i)
        if (!pass.nodes[i].error.empty()) r.error = pass.nodes[i].error;
    if (!r.error.empty()) return r;
    for (size_t k = 0; k < g.outputs.size(); ++k) {
        int at = g.find(g.outputs[k]);
        if (at < 0 || !pass.nodes[static_cast<size_t>(at)].hasShape) {
            r.error = "layer " + layer.name + " gives no output \"" + layer.outputs[k] + "\"";
            return r;
        }
        r.outputs.emplace_back(layer.outputs[k], pass.nodes[static_cast<size_t>(at)].output);
    }
    for (size_t i = inShapes.size(); i < g.nodes.size(); ++i) {
        r.params += pass.nodes[i].params;
        r.macs += pass.nodes[i].macs;
    }
    return r;
}

std::string arityText(const ops::OpDef& def) {
    if (def.maxInputs < 0) return "at least " + std::to_string(def.minInputs);
    if (def.minInputs == def.maxInputs) return std::to_string(def.minInputs);
    return std::to_string(def.minInputs) + " to " + std::to_string(def.maxInputs);
}

// Every node in dependency order, continuing past errors; the same checks as
// engine::ops::analyzeModel, in linear time.
Pass runPass(const Graph& graph, const engine::io::LayerLibrary* layers) {
    const size_t n = graph.nodes.size();
    Pass pass;
    pass.nodes.resize(n);
    pass.stage.assign(n, Stage::None);
    std::unordered_map<std::string, int> index;
    index.reserve(n * 2);
    for (size_t i = 0; i < n; ++i) {
        auto [it, fresh] = index.emplace(graph.nodes[i].name, static_cast<int>(i));
        if (!fresh) {
            pass.nodes[i].error = "two nodes are called \"" + graph.nodes[i].name + "\"";
            pass.stage[i] = Stage::Structure;
        }
    }
    auto& defs = pass.defs;
    auto& attrs = pass.attrs;
    auto& producers = pass.producers;
    defs.assign(n, nullptr);
    attrs.resize(n);
    producers.resize(n);
    pass.inputShapes.resize(n);
    pass.params.resize(n);
    pass.paramOwner.resize(n);
    pass.layers.assign(n, nullptr);
    pass.ports.resize(n);
    for (size_t i = 0; i < n; ++i) pass.paramOwner[i] = static_cast<int>(i);
    auto fail = [&](size_t i, Stage s, std::string msg) {
        pass.anyError = true;
        if (pass.stage[i] != Stage::None) return;
        pass.stage[i] = s;
        pass.nodes[i].error = std::move(msg);
    };
    for (size_t i = 0; i < n; ++i) {
        const Node& node = graph.nodes[i];
        for (const auto& in : node.inputs) {
            auto it = index.find(in);
            std::string port;
            // "block:out" names one output of a layer instance with several.
            if (const auto colon = in.find(':'); it == index.end() && layers && colon != std::string::npos) {
                it = index.find(in.substr(0, colon));
                port = in.substr(colon + 1);
                if (it != index.end() && !engine::io::isLayerOp(*layers, graph.nodes[static_cast<size_t>(it->second)].op))
                    it = index.end();
            }
            if (it == index.end()) {
                fail(i, Stage::Structure,
                     "node \"" + node.name + "\" takes input from \"" + in + "\", which is not a node");
            } else {
                producers[i].push_back(it->second);
                pass.ports[i].push_back(port);
            }
        }
        const ops::OpDef* def = ops::findOp(node.op);
        if (!def && layers && engine::io::isLayerOp(*layers, node.op)) {
            const auto* layer = layers->find(node.op);
            pass.layers[i] = layer;
            const size_t count = node.inputs.size();
            if (count != layer->inputs.size()) {
                std::string portList;
                for (const auto& p : layer->inputs) portList += (portList.empty() ? "" : ", ") + p;
                fail(i, Stage::Structure,
                     layer->name + " \"" + node.name + "\" takes " + std::to_string(layer->inputs.size()) +
                         " input(s) (" + portList + ") but has " + std::to_string(count));
            }
            continue;
        }
        if (!def) {
            fail(i, Stage::Structure, "node \"" + node.name + "\" has unknown op \"" + node.op + "\"");
            continue;
        }
        defs[i] = def;
        if (def->category == ops::Category::Loss)
            fail(i, Stage::Structure,
                 "node \"" + node.name + "\" is a loss (" + node.op +
                     "): losses belong in the training configuration");
        int count = static_cast<int>(node.inputs.size());
        if (count < def->minInputs || (def->maxInputs >= 0 && count > def->maxInputs))
            fail(i, Stage::Structure,
                 node.op + " \"" + node.name + "\" takes " + arityText(*def) + " input(s) but has " +
                     std::to_string(count));
        if (node.lrMultiplier < 0)
            fail(i, Stage::Attributes, "node \"" + node.name + "\": lr_multiplier must not be negative");
        auto resolved = ops::resolveAttrs(*def, node);
        if (resolved.ok())
            attrs[i] = std::move(resolved.value());
        else
            fail(i, Stage::Attributes, resolved.error().message);
    }
    // Kahn's order; what is left over sits on a cycle.
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> users(n);
    for (size_t i = 0; i < n; ++i)
        for (int p : producers[i]) {
            ++pending[i];
            users[static_cast<size_t>(p)].push_back(static_cast<int>(i));
        }
    auto& order = pass.order;
    order.reserve(n);
    for (size_t i = 0; i < n; ++i)
        if (pending[i] == 0) order.push_back(static_cast<int>(i));
    for (size_t k = 0; k < order.size(); ++k)
        for (int u : users[static_cast<size_t>(order[k])])
            if (--pending[static_cast<size_t>(u)] == 0) order.push_back(u);
    for (size_t i = 0; i < n; ++i)
        if (pending[i] > 0)
            fail(i, Stage::Structure,
                 "node \"" + graph.nodes[i].name + "\" is part of a cycle: a model graph must not loop back");

    std::vector<Shape> inShapes;
    for (int vi : order) {
        size_t i = static_cast<size_t>(vi);
        if (pass.stage[i] != Stage::None) continue;
        inShapes.clear();
        bool ready = true;
        for (size_t k = 0; k < producers[i].size(); ++k) {
            const auto& from = pass.nodes[static_cast<size_t>(producers[i][k])];
            if (!from.hasShape) {
                ready = false;
                break;
            }
            const std::string& port = pass.ports[i][k];
            if (port.empty() && from.ports.size() > 1) {
                fail(i, Stage::Structure,
                     "node \"" + graph.nodes[i].name + "\" refers to \"" + graph.nodes[i].inputs[k] +
                         "\", a layer instance with several outputs: name one of them (\"" + graph.nodes[i].inputs[k] + ":" +
                         from.ports.front().first + "\", ...)");
                ready = false;
                break;
            }
            if (port.empty()) {
                inShapes.push_back(from.output);
                continue;
            }
            auto match = std::find_if(from.ports.begin(), from.ports.end(), [&](const auto& p) { return p.first == port; });
            if (match == from.ports.end()) {
                fail(i, Stage::Structure,
                     "node \"" + graph.nodes[i].name + "\" refers to \"" + graph.nodes[i].inputs[k] +
                         "\", which is not an output of " + graph.nodes[static_cast<size_t>(producers[i][k])].op);
                ready = false;
                break;
            }
            inShapes.push_back(match->second);
        }
        if (!ready) continue;
        if (const auto* layer = pass.layers[i]) {
            InstanceResult ir = analyseInstance(graph.nodes[i], *layer, inShapes, *layers);
            if (!ir.error.empty()) {
                fail(i, Stage::Shape, ir.error);
                continue;
            }
            auto& r = pass.nodes[i];
            r.hasShape = true;
            r.output = ir.outputs.front().second;
            if (ir.outputs.size() > 1) r.ports = std::move(ir.outputs);
            r.params = ir.params;
            r.macs = ir.macs;
            pass.inputShapes[i] = inShapes;
            continue;
        }
        ops::ShapeContext ctx{graph.nodes[i], attrs[i], inShapes};
        auto out = defs[i]->shape(ctx);
        if (!out.ok()) {
            fail(i, Stage::Shape, out.error().message);
            continue;
        }
        auto& r = pass.nodes[i];
        r.hasShape = true;
        r.output = std::move(out.value());
        if (defs[i]->params) {
            pass.params[i] = defs[i]->params(ctx, r.output);
            for (const auto& p : pass.params[i]) r.params += p.shape.numel();
        }
        if (defs[i]->macs) r.macs = defs[i]->macs(ctx, r.output);
        pass.inputShapes[i] = inShapes;
    }
    // Shared weights: counted at the owner.
    for (size_t i = 0; i < n; ++i) {
        const Node& node = graph.nodes[i];
        if (node.shareWeightsWith.empty()) continue;
        auto it = index.find(node.shareWeightsWith);
        if (it == index.end()) {
            fail(i, Stage::Structure,
                 "node \"" + node.name + "\" shares weights with \"" + node.shareWeightsWith +
                     "\", which is not a node");
            continue;
        }
        // Follow the chain to the owner; a loop is an error.
        int owner = it->second;
        bool loop = owner == static_cast<int>(i);
        for (size_t guard = 0; !loop && !graph.nodes[static_cast<size_t>(owner)].shareWeightsWith.empty();
             ++guard) {
            auto next = index.find(graph.nodes[static_cast<size_t>(owner)].shareWeightsWith);
            if (next == index.end() || guard > n) break;
            owner = next->second;
            loop = owner == static_cast<int>(i);
        }
        if (loop) {
            fail(i, Stage::Structure, "node \"" + node.name + "\" shares weights in a loop");
            continue;
        }
        pass.paramOwner[i] = owner;
        pass.nodes[i].params = 0;
        // An instance's sharing is checked by the expansion, node by node.
        if (pass.layers[i]) continue;
        const auto& mine = pass.params[i];
        const auto& theirs = pass.params[static_cast<size_t>(owner)];
        if (!pass.nodes[i].hasShape || !pass.nodes[static_cast<size_t>(owner)].hasShape) continue;
        bool same = mine.size() == theirs.size() && !mine.empty();
        for (size_t k = 0; same && k < mine.size(); ++k) same = mine[k].shape == theirs[k].shape;
        if (!same)
            fail(i, Stage::Shape,
                 "node \"" + node.name + "\" shares weights with \"" +
                     graph.nodes[static_cast<size_t>(owner)].name +
                     "\" but their parameters differ in shape");
    }
    return pass;
}

}  // namespace

const NodeResult* GraphAnalysis::find(const std::string& name) const {
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return &nodes[i];
    return nullptr;
}

GraphAnalysis analyzeGraph(const Graph& graph, int64_t summaryBatch, const engine::io::LayerLibrary* layers) {
    auto t0 = std::chrono::steady_clock::now();
    GraphAnalysis a;
    Pass pass = runPass(graph, layers);
    const bool anyInstance =
        std::any_of(pass.layers.begin(), pass.layers.end(), [](const auto* l) { return l != nullptr; });
    a.names.reserve(graph.nodes.size());
    for (const auto& node : graph.nodes) a.names.push_back(node.name);
    const size_t n = graph.nodes.size();
    bool hasInput = false;
    for (size_t i = 0; i < n; ++i)
        hasInput = hasInput || (pass.defs[i] && pass.defs[i]->kind == ops::OpKind::Input);
    if (n > 0 && !pass.anyError && !hasInput)
        a.modelError =
            Error(ErrorCode::ConfigError, "the graph has no Input node").with("field", "graph.nodes");
    if (pass.anyError) {
        // The model-level error: the first problem, structure first, then in dependency order.
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; ++i)
            if (pass.stage[i] == Stage::Structure) pick = i;
        for (size_t i = 0; i < n && pick == n; ++i)
            if (pass.stage[i] == Stage::Attributes) pick = i;
        for (int i : pass.order)
            if (pick == n && pass.stage[static_cast<size_t>(i)] == Stage::Shape)
                pick = static_cast<size_t>(i);
        for (size_t i = 0; i < n && pick == n; ++i)
            if (!pass.nodes[i].error.empty()) pick = i;
        if (pick < n)
            a.modelError =
                Error(ErrorCode::ShapeMismatch, pass.nodes[pick].error).withNode(graph.nodes[pick].name);
    } else if (n > 0 && hasInput && anyInstance) {
        // Valid, with layer instances: the engine analyses the expanded graph, and so do we.
        auto expanded = engine::io::expandLayers(graph, *layers);
        if (!expanded.ok()) {
            a.modelError = expanded.error();
        } else {
            GraphAnalysis flat = analyzeGraph(expanded.value(), summaryBatch, nullptr);
            a.modelError = std::move(flat.modelError);
            a.summary = std::move(flat.summary);
        }
    } else if (n > 0 && hasInput) {
        // Valid: the same ModelInfo the engine builds, summarised by the engine.
        ops::ModelInfo m;
        m.graph = graph;
        m.order = pass.order;
        m.nodes.resize(n);
        for (size_t i = 0; i < n; ++i) {
            auto& ni = m.nodes[i];
            ni.def = pass.defs[i];
            ni.attrs = std::move(pass.attrs[i]);
            ni.inputs = pass.producers[i];
            ni.inputShapes = std::move(pass.inputShapes[i]);
            ni.output = pass.nodes[i].output;
            ni.params = std::move(pass.params[i]);
            ni.paramOwner = pass.paramOwner[i];
            ni.macs = pass.nodes[i].macs;
            ni.trainable = graph.nodes[i].trainable;
            ni.lrMultiplier = static_cast<float>(graph.nodes[i].lrMultiplier);
            if (ni.def->kind == ops::OpKind::Input) m.inputs.push_back(static_cast<int>(i));
        }
        a.summary = ops::summarize(m, summaryBatch);
    }
    a.nodes = std::move(pass.nodes);
    a.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return a;
}

engine::Status checkConnection(const Graph& graph, const std::string& from, const std::string& to, int port,
                               const engine::io::LayerLibrary* layers) {
    int f = graph.find(from), t = graph.find(to);
    auto refuse = [&](ErrorCode code, const std::string& why) {
        return Error(code, why).withNode(to).with("reason", why);
    };
    if (f < 0 || t < 0) return refuse(ErrorCode::DanglingInput, "the node no longer exists");
    if (f == t) return refuse(ErrorCode::Cycle, "a node cannot take its own output as input");
    const Node& target = graph.nodes[static_cast<size_t>(t)];
    const ops::OpDef* def = ops::findOp(target.op);
    const engine::io::LayerDef* layer =
        !def && layers && engine::io::isLayerOp(*layers, target.op) ? layers->find(target.op) : nullptr;
    if (!def && !layer) return refuse(ErrorCode::UnknownOp, "\"" + target.op + "\" is not a known op");
    const int maxInputs = def ? def->maxInputs : static_cast<int>(layer->inputs.size());
    if (maxInputs == 0)
        return refuse(ErrorCode::ArityMismatch, target.op + " \"" + to + "\" takes no inputs");
    int count = static_cast<int>(target.inputs.size());
    bool append = port < 0 || port >= count;
    if (append && maxInputs >= 0 && count >= maxInputs)
        return refuse(ErrorCode::ArityMismatch, target.op + " \"" + to + "\" takes " +
                                                    (def ? arityText(*def) : std::to_string(maxInputs)) +
                                                    " input(s) and has no free one");
    if (!append && target.inputs[static_cast<size_t>(port)] == from)
        return refuse(ErrorCode::InvalidArgument, "these ports are already connected");
    // A cycle: `to` is already upstream of `from`.
    std::vector<char> seen(graph.nodes.size(), 0);
    std::vector<int> stack{f};
    while (!stack.empty()) {
        int v = stack.back();
        stack.pop_back();
        if (v == t)
            return refuse(ErrorCode::Cycle,
                          "\"" + to + "\" already feeds \"" + from + "\": the connection would make a loop");
        if (seen[static_cast<size_t>(v)]) continue;
        seen[static_cast<size_t>(v)] = 1;
        for (const auto& in : graph.nodes[static_cast<size_t>(v)].inputs) {
            int p = graph.find(in);
            if (p >= 0) stack.push_back(p);
        }
    }
    // The shape rule, on the graph as it would be.
    Graph candidate;
    candidate.nodes.reserve(graph.nodes.size());
    // Only the ancestors of `to` (and `to`) matter for its shape.
    std::vector<char> keep(graph.nodes.size(), 0);
    std::vector<int> ancestors{t, f};
    while (!ancestors.empty()) {
        int v = ancestors.back();
        ancestors.pop_back();
        if (keep[static_cast<size_t>(v)]) continue;
        keep[static_cast<size_t>(v)] = 1;
        for (const auto& in : graph.nodes[static_cast<size_t>(v)].inputs) {
            int p = graph.find(in);
            if (p >= 0) ancestors.push_back(p);
        }
    }
    int newIndex = -1;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        if (!keep[i]) continue;
        Node copy = graph.nodes[i];
        copy.shareWeightsWith.clear();
        if (static_cast<int>(i) == t) {
            newIndex = static_cast<int>(candidate.nodes.size());
            if (append)
                copy.inputs.push_back(from);
            else
                copy.inputs[static_cast<size_t>(port)] = from;
        }
        candidate.nodes.push_back(std::move(copy));
    }
    Pass pass = runPass(candidate, layers);
    size_t ti = static_cast<size_t>(newIndex);
    if (pass.stage[ti] == Stage::Shape) return refuse(ErrorCode::ShapeMismatch, pass.nodes[ti].error);
    return {};
}

AnalysisRunner::AnalysisRunner(QObject* parent) : QObject(parent) {}

AnalysisRunner::~AnalysisRunner() {
    if (m_watcher) m_watcher->waitForFinished();
}

void AnalysisRunner::request(const Graph& graph, const engine::io::LayerLibrary& layers) {
    m_pending = graph;
    m_pendingLayers = layers;
    m_pendingGeneration = ++m_generation;
    if (!m_watcher) start();
}

bool AnalysisRunner::busy() const {
    return m_watcher != nullptr || m_pending.has_value();
}

void AnalysisRunner::start() {
    if (!m_pending) return;
    Graph g = std::move(*m_pending);
    m_pending.reset();
    quint64 gen = m_pendingGeneration;
    engine::io::LayerLibrary layers = std::move(m_pendingLayers);
    m_watcher = new QFutureWatcher<GraphAnalysis>(this);
    auto* w = m_watcher;
    connect(w, &QFutureWatcherBase::finished, this, [this, w] {
        if (w == m_watcher) onDone();
    });
    w->setFuture(QtConcurrent::run([g = std::move(g), gen, layers = std::move(layers)] {
        GraphAnalysis a = analyzeGraph(g, 1, &layers);
        a.generation = gen;
        return a;
    }));
}

void AnalysisRunner::onDone() {
    auto* w = m_watcher;
    m_watcher = nullptr;
    GraphAnalysis a = w->result();
    w->deleteLater();
    // A newer request is waiting: this reply is stale, drop it and analyse the newer graph.
    if (a.generation == m_generation) {
        m_latest = std::move(a);
        emit finished(m_latest);
    }
    start();
}

void AnalysisRunner::waitForIdle() {
    while (m_watcher) {
        m_watcher->waitForFinished();
        onDone();
    }
}

}  // namespace kiln::ui
