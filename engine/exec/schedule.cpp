// SPDX-License-Identifier: Apache-2.0
// The schedule: step list, alias roots, gradient needs, buffer liveness and first writes.
//
// Step positions (StepTimeline): forward steps 0..F-1 in model order, loss steps F..F+L-1,
// backward steps F+L.. in reverse model order. Every buffer gets an interval [first, last] of
// positions; buffers whose intervals do not overlap may share arena bytes. Inputs, targets, saved
// state and the workspace live throughout; a value from its forward step to its last reader; a
// gradient from its first writer to its last reader.
#include "engine/exec/schedule.h"

#include <algorithm>

#include "engine/core/rng.h"
#include "engine/ops/plugin_loss.h"

namespace kiln::engine::exec {

Result<std::vector<ResolvedLoss>> resolveLosses(const ops::ModelInfo& model,
                                                const std::vector<LossSpec>& losses, int64_t batch) {
    const auto& g = model.graph;
    std::vector<ResolvedLoss> out(losses.size());
    for (size_t l = 0; l < losses.size(); ++l) {
        const auto& ls = losses[l];
        out[l].output = g.find(ls.output);
        if (out[l].output < 0)
            return Error(ErrorCode::ConfigError,
                         "the loss refers to output \"" + ls.output + "\", which is not a node")
                .with("field", "training.loss.output");
    }
    for (size_t l = 0; l < losses.size(); ++l) {
        const auto& ls = losses[l];
        ResolvedLoss& r = out[l];
        const ops::PluginLoss* plugin = nullptr;
        if (!ops::pluginTypeName(ls.type).empty()) {
            plugin = ops::findPluginLoss(ls.type);
            if (!plugin)
                return Error(ErrorCode::ConfigError, "the loss \"" + ls.type + "\" comes from a plugin that is not loaded")
                    .with("field", "training.loss.type");
            r.def = &ops::pluginLossDef();
        } else {
            r.def = ops::findOp(ls.type);
        }
        if (!r.def || (!plugin && !ops::isLoss(r.def->kind)))
            return Error(ErrorCode::ConfigError, "unknown loss \"" + ls.type + "\"")
                .with("field", "training.loss.type");
        r.node.name = "loss:" + ls.output;
        r.node.op = ls.type;
        r.node.attrs = ls.attrs;
        if (plugin) {
            KILN_ASSIGN(r.attrs, ops::resolvePluginLossAttrs(*plugin, ls.attrs, "training.loss"));
        } else {
            KILN_ASSIGN(r.attrs, ops::resolveAttrs(*r.def, r.node));
        }
        // The shape rule sees the batch symbolic, as the model's own shape rules do.
        std::vector<Shape> symbolic{model.nodes[static_cast<size_t>(r.output)].output};
        std::vector<int64_t> td{Shape::kBatch};
        td.insert(td.end(), ls.targetShape.dims().begin(), ls.targetShape.dims().end());
        symbolic.emplace_back(td);
        KILN_TRY(r.def->shape(ops::ShapeContext{r.node, r.attrs, symbolic}));
        r.inputs = {symbolic[0].withBatch(batch), symbolic[1].withBatch(batch)};
        r.weight = ls.weight;
    }
    return out;
}

Schedule Schedule::build(const ops::ModelInfo& model, const ParamStore& params,
                         std::vector<KernelTraits> traits, std::vector<ResolvedLoss> losses,
                         const ScheduleOptions& options) {
    Schedule s;
    s.batch = options.batch;
    s.training = options.training;
    s.traits = std::move(traits);
    s.losses = std::move(losses);
    const int64_t batch = options.batch;
    const size_t n = model.nodes.size();
    const int F = static_cast<int>(model.order.size());
    const int L = static_cast<int>(s.losses.size());
    const StepTimeline timeline(model, L);
    const int kEnd = timeline.end();
    auto node = [&](int i) -> const ops::NodeInfo& { return model.nodes[static_cast<size_t>(i)]; };
    auto at = [](std::vector<int>& v, int i) -> int& { return v[static_cast<size_t>(i)]; };

    // Alias classes: Flatten/Reshape share their input's buffer, and its gradient buffer.
    s.root.assign(n, 0);
    for (int i : model.order) {
        const KernelTraits& t = s.traits[static_cast<size_t>(i)];
        at(s.root, i) = t.aliasesInput ? at(s.root, node(i).inputs[static_cast<size_t>(t.aliasInput)]) : i;
    }

    // Which nodes need an output gradient: they depend on a trainable parameter and a loss
    // depends on them.
    std::vector<int> lossNodes;
    for (const auto& l : s.losses) lossNodes.push_back(l.output);
    lossNodes.insert(lossNodes.end(), options.seeds.begin(), options.seeds.end());
    const bool backward = options.training || options.probe;
    s.needs = gradientNeeds(model, params, lossNodes, backward, options.probe);
    auto needGrad = [&](int i) { return s.needs.needGrad[static_cast<size_t>(i)] != 0; };

    // Buffers: values and saved state per node, gradients per alias class, the workspace, targets.
    auto newBuffer = [&](BufferKind kind, size_t bytes, int first, int last) {
        s.buffers.push_back({std::max<size_t>(bytes, sizeof(float)), first, last, 0});
        s.kinds.push_back(kind);
        return static_cast<int>(s.buffers.size() - 1);
    };
    auto buffer = [&](int b) -> LiveBuffer& { return s.buffers[static_cast<size_t>(b)]; };
    s.value.assign(n, -1);
    s.saved.assign(n, -1);
    s.gradient.assign(n, -1);
    for (int i : model.order) {
        const size_t bytes = static_cast<size_t>(node(i).output.withBatch(batch).numel()) * sizeof(float);
        if (at(s.root, i) != i)
            at(s.value, i) = at(s.value, at(s.root, i));
        else if (node(i).def->kind == ops::OpKind::Input)
            at(s.value, i) = newBuffer(BufferKind::Value, bytes, 0, kEnd);
        else
            at(s.value, i) = newBuffer(BufferKind::Value, bytes, timeline.forward(i), timeline.forward(i));
        if (const size_t saved = s.traits[static_cast<size_t>(i)].savedBytes; saved > 0)
            at(s.saved, i) = newBuffer(BufferKind::Saved, saved, 0, kEnd);
    }
    for (int i : model.order) {
        if (!needGrad(i)) continue;
        const int r = at(s.root, i);
        if (at(s.gradient, r) < 0)
            at(s.gradient, r) = newBuffer(BufferKind::Gradient, buffer(at(s.value, r)).bytes, kEnd, 0);
        at(s.gradient, i) = at(s.gradient, r);
    }
    if (options.workspaceBytes)
        s.workspace = newBuffer(BufferKind::Workspace, *options.workspaceBytes, 0, kEnd);
    for (const auto& l : s.losses)
        s.target.push_back(
            newBuffer(BufferKind::Target, static_cast<size_t>(l.inputs[1].numel()) * sizeof(float), 0, kEnd));
    for (int o : model.outputs) buffer(at(s.value, o)).use(kEnd);
    // Probes: seeds are written by the caller between forward and backward, kept nodes are read
    // after backward.
    for (int i : options.seeds)
        if (at(s.gradient, i) >= 0) {
            buffer(at(s.gradient, i)).use(0);
            buffer(at(s.gradient, i)).use(kEnd);
        }
    for (int i : options.keep) {
        buffer(at(s.value, i)).use(kEnd);
        if (at(s.gradient, i) >= 0) buffer(at(s.gradient, i)).use(kEnd);
    }

    // Forward steps in model order; Input nodes are filled by the caller, aliases cost nothing.
    for (int i : model.order) {
        const auto& ni = node(i);
        for (int p : ni.inputs) buffer(at(s.value, p)).use(timeline.forward(i));
        if (ni.def->kind == ops::OpKind::Input || at(s.root, i) != i) continue;
        ScheduleStep st;
        st.kind = StepKind::Forward;
        st.node = i;
        st.position = timeline.forward(i);
        for (int p : ni.inputs) st.in.push_back(at(s.value, p));
        if (const int e = s.traits[static_cast<size_t>(i)].extraInput; e >= 0) {
            st.in.push_back(at(s.value, e));
            buffer(at(s.value, e)).use(st.position);
        }
        st.out = at(s.value, i);
        st.saved = at(s.saved, i);
        st.seed = rng::mix(options.seed, static_cast<uint64_t>(i));
        s.steps.push_back(std::move(st));
    }
    s.forwardSteps = s.steps.size();

    // Loss steps: the loss, and (training) its gradient into the output's gradient buffer.
    for (int l = 0; l < L; ++l) {
        const int o = s.losses[static_cast<size_t>(l)].output;
        ScheduleStep st;
        st.kind = StepKind::Loss;
        st.node = o;
        st.loss = l;
        st.position = timeline.loss(l);
        st.in = {at(s.value, o), s.target[static_cast<size_t>(l)]};
        st.dIn = {at(s.gradient, o), -1};
        buffer(at(s.value, o)).use(st.position);
        if (at(s.gradient, o) >= 0) buffer(at(s.gradient, o)).use(st.position);
        s.steps.push_back(std::move(st));
    }
    s.lossSteps = s.steps.size() - s.forwardSteps;

    // Backward steps in reverse model order, for nodes that pass a gradient on or own a
    // trainable parameter.
    if (backward) {
        for (int k = F - 1; k >= 0; --k) {
            const int i = model.order[static_cast<size_t>(k)];
            const auto& ni = node(i);
            if (!needGrad(i) || at(s.root, i) != i || ni.def->kind == ops::OpKind::Input) continue;
            const KernelTraits& t = s.traits[static_cast<size_t>(i)];
            bool anyInputGrad = t.extraInput >= 0 && needGrad(t.extraInput);
            for (int p : ni.inputs) anyInputGrad = anyInputGrad || needGrad(p);
            if (!anyInputGrad && (options.probe || !s.needs.hasTrainable[static_cast<size_t>(i)])) continue;
            ScheduleStep st;
            st.kind = StepKind::Backward;
            st.node = i;
            st.position = timeline.backward(i);
            for (int p : ni.inputs) {
                st.in.push_back(at(s.value, p));
                if (t.backwardNeedsInputs) buffer(at(s.value, p)).use(st.position);
                const int gb = needGrad(p) ? at(s.gradient, p) : -1;
                st.dIn.push_back(gb);
                if (gb >= 0) buffer(gb).use(st.position);
            }
            if (t.extraInput >= 0) {  // backward reads no value of it, only writes its gradient
                st.in.push_back(-1);
                const int gb = needGrad(t.extraInput) ? at(s.gradient, t.extraInput) : -1;
                st.dIn.push_back(gb);
                if (gb >= 0) buffer(gb).use(st.position);
            }
            st.out = at(s.value, i);
            if (t.backwardNeedsOutput) buffer(st.out).use(st.position);
            st.dOut = at(s.gradient, i);
            buffer(st.dOut).use(st.position);
            st.saved = at(s.saved, i);
            st.seed = rng::mix(options.seed, static_cast<uint64_t>(i));
            s.steps.push_back(std::move(st));
        }
    }
    s.backwardSteps = s.steps.size() - s.forwardSteps - s.lossSteps;

    // Each gradient buffer's first writer: the earliest loss or backward step writing into it.
    // A backward step whose kernel can overwrite does so, unless the buffer appears twice in its
    // gradients (Add(x, x)): then it is zeroed and both terms are added.
    s.firstWrite.assign(s.buffers.size(), -1);
    for (size_t k = s.forwardSteps; k < s.steps.size(); ++k) {
        ScheduleStep& st = s.steps[k];
        st.overwrite.assign(st.dIn.size(), 0);
        const bool canOverwrite =
            st.kind == StepKind::Backward && s.traits[static_cast<size_t>(st.node)].overwritesInputGrads;
        for (size_t j = 0; j < st.dIn.size(); ++j) {
            const int b = st.dIn[j];
            if (b < 0 || s.firstWrite[static_cast<size_t>(b)] >= 0) continue;
            s.firstWrite[static_cast<size_t>(b)] = static_cast<int>(k);
            if (canOverwrite && std::count(st.dIn.begin(), st.dIn.end(), b) == 1)
                st.overwrite[j] = 1;
            else
                st.zeroFirst.push_back(b);
        }
    }
    return s;
}

namespace {
// How many consumers, model outputs and losses read each node's value.
std::vector<int> readerCounts(const ops::ModelInfo& model, const std::vector<int>& lossOutputs) {
    std::vector<int> readers(model.nodes.size(), 0);
    for (const auto& ni : model.nodes)
        for (int p : ni.inputs) ++readers[static_cast<size_t>(p)];
    for (int o : model.outputs) ++readers[static_cast<size_t>(o)];
    for (int o : lossOutputs) ++readers[static_cast<size_t>(o)];
    return readers;
}
}  // namespace

std::vector<int> reluFusionCandidates(const ops::ModelInfo& model, const std::vector<int>& lossOutputs) {
    const size_t n = model.nodes.size();
    const std::vector<int> readers = readerCounts(model, lossOutputs);
    std::vector<int> into(n, -1);
    for (size_t i = 0; i < n; ++i) {
        const auto& ni = model.nodes[i];
        if (ni.def->kind != ops::OpKind::ReLU || ni.inputs.size() != 1) continue;
        const int p = ni.inputs[0];
        const ops::OpKind pk = model.nodes[static_cast<size_t>(p)].def->kind;
        if ((pk == ops::OpKind::BatchNormalization || pk == ops::OpKind::Add) && readers[static_cast<size_t>(p)] == 1)
            into[i] = p;
    }
    return into;
}

std::vector<int> batchNormFoldCandidates(const ops::ModelInfo& model, const std::vector<int>& lossOutputs) {
    const std::vector<int> readers = readerCounts(model, lossOutputs);
    std::vector<int> into(model.nodes.size(), -1);
    for (size_t i = 0; i < model.nodes.size(); ++i) {
        const auto& ni = model.nodes[i];
        if (ni.def->kind != ops::OpKind::BatchNormalization || ni.inputs.size() != 1) continue;
        const int p = ni.inputs[0];
        if (model.nodes[static_cast<size_t>(p)].def->kind == ops::OpKind::Conv2D && readers[static_cast<size_t>(p)] == 1)
            into[i] = p;
    }
    return into;
}

std::vector<int> residualFusionCandidates(const ops::ModelInfo& model, const std::vector<int>& lossOutputs) {
    const size_t n = model.nodes.size();
    const std::vector<int> readers = readerCounts(model, lossOutputs);
    std::vector<size_t> pos(n, 0);
    for (size_t k = 0; k < model.order.size(); ++k) pos[static_cast<size_t>(model.order[k])] = k;
    std::vector<int> port(n, -1);
    for (size_t i = 0; i < n; ++i) {
        const auto& ni = model.nodes[i];
        if (ni.def->kind != ops::OpKind::Add || ni.inputs.size() != 2 || ni.inputs[0] == ni.inputs[1]) continue;
        for (int j = 0; j < 2; ++j) {
            const int p = ni.inputs[static_cast<size_t>(j)], other = ni.inputs[static_cast<size_t>(1 - j)];
            // The batch norm reads the other input, so that must be computed before it.
            if (model.nodes[static_cast<size_t>(p)].def->kind == ops::OpKind::BatchNormalization &&
                readers[static_cast<size_t>(p)] == 1 && pos[static_cast<size_t>(other)] < pos[static_cast<size_t>(p)]) {
                port[i] = j;
                break;
            }
        }
    }
    return port;
}

size_t Schedule::place(size_t alignBytes) {
    return placeBuffers(buffers, alignBytes);
}

size_t Schedule::unplannedBytes(size_t alignBytes) const {
    size_t total = 0;
    for (const auto& b : buffers) total += alignUp(b.bytes, alignBytes);
    return total;
}

}  // namespace kiln::engine::exec
