// SPDX-License-Identifier: Apache-2.0
// Plan compilation: CPU kernels bound to concrete shapes, ReLUs folded into the batch
// normalisations and additions that produce their inputs, the Schedule built from the kernels'
// traits (engine/exec/schedule.h: steps, liveness, first writes), arena placement, and the
// executor. The step that writes a gradient buffer first overwrites it where its kernel can;
// otherwise the buffer is zeroed when that step starts and the kernel accumulates (+=).
#include "engine/exec/plan.h"

#include "engine/exec/schedule.h"

#include <algorithm>
#include <cstring>

namespace kiln::engine::exec {

struct Plan::Step {
    std::shared_ptr<ops::CpuKernel> kernel;
    std::string node;
    bool backward = false;
    bool loss = false;
    std::vector<const float*> in;
    float* out = nullptr;
    int64_t outCount = 0;  // floats of a forward step's output
    std::vector<float*> params;
    const float* dOut = nullptr;
    std::vector<float*> dIn;
    std::vector<uint8_t> dInOverwrite;
    std::vector<float*> dParams;
    float* saved = nullptr;
    uint64_t seed = 0;
    float gradScale = 1.0f;
    std::vector<std::pair<float*, size_t>> zeroFirst;  // gradient buffers first written here, bytes
};

Plan::~Plan() = default;

Result<std::unique_ptr<Plan>> Plan::compile(const ops::ModelInfo& model, ParamStore& params,
                                            const CompileOptions& options, ThreadPool& pool) {
    if (options.batch <= 0)
        return Error(ErrorCode::ConfigError, "batch size must be positive").with("field", "batch_size");
    if (options.probe && options.training)
        return Error(ErrorCode::Internal, "gradient probes need an inference plan");
    KILN_TRY(ops::refusePlaceholders(model.graph, options.training ? "train" : "run"));
    std::unique_ptr<Plan> plan(new Plan());
    plan->m_pool = &pool;
    plan->m_params = &params;
    plan->m_batch = options.batch;
    plan->m_training = options.training;
    const int64_t batch = options.batch;
    const auto& g = model.graph;
    const size_t n = model.nodes.size();

    // Kernels, bound to concrete shapes; their traits drive the schedule.
    std::vector<std::shared_ptr<ops::CpuKernel>> kernels(n);
    std::vector<KernelTraits> traits(n);
    size_t workspace = 0;
    for (int i : model.order) {
        const auto si = static_cast<size_t>(i);
        const auto& ni = model.nodes[si];
        std::vector<Shape> ins;
        for (const auto& s : ni.inputShapes) ins.push_back(s.withBatch(batch));
        ops::ShapeContext ctx{g.nodes[si], ni.attrs, ins};
        KILN_ASSIGN(auto k, ni.def->cpu(ctx, ni.output.withBatch(batch)));
        workspace = std::max(workspace, k->workspaceFloats());
        kernels[si] = std::move(k);
    }
    KILN_ASSIGN(auto losses, resolveLosses(model, options.losses, batch));
    // Probe nodes by index; the Input nodes' gradients are kept too.
    std::vector<int> seeds, keep;
    if (options.probe) {
        auto resolve = [&](const std::string& name, std::vector<int>& into) -> Status {
            const int i = g.find(name);
            if (i < 0)
                return Error(ErrorCode::ConfigError, "no node named \"" + name + "\"").withNode(name).with("field", "layer");
            into.push_back(i);
            return {};
        };
        for (const auto& name : options.probe->seeds) KILN_TRY(resolve(name, seeds));
        for (const auto& name : options.probe->keep) KILN_TRY(resolve(name, keep));
        keep.insert(keep.end(), model.inputs.begin(), model.inputs.end());
    }
    // Folding: an Add into the batch norm producing one of its inputs (the batch norm's kernel
    // adds the other input), then a ReLU into its producer's kernel, or into the batch norm that
    // took its producer Add in. A folded node aliases the node whose kernel computes it. A probe
    // reads its seeds and kept values as they are, so they count as readers that stop folding.
    // In inference plans a batch norm is first folded into the convolution before it (whose
    // kernel then also gets the batch norm's parameters); not in probes, which run backward.
    std::vector<int> lossOutputs;
    for (const auto& l : losses) lossOutputs.push_back(l.output);
    lossOutputs.insert(lossOutputs.end(), seeds.begin(), seeds.end());
    lossOutputs.insert(lossOutputs.end(), keep.begin(), keep.end());
    const std::vector<int> residualPort = residualFusionCandidates(model, lossOutputs);
    const std::vector<int> reluInto = reluFusionCandidates(model, lossOutputs);
    std::vector<bool> folded(n, false);
    std::vector<int> aliasPort(n, 0), extraInput(n, -1), computedBy(n), extraParams(n, -1);
    for (size_t i = 0; i < n; ++i) computedBy[i] = static_cast<int>(i);
    if (options.fuse) {
        if (!options.training && !options.probe) {
            const std::vector<int> bnInto = batchNormFoldCandidates(model, lossOutputs);
            for (int i : model.order) {
                const auto si = static_cast<size_t>(i);
                const int p = bnInto[si];
                if (p < 0) continue;
                const auto eps = static_cast<float>(model.nodes[si].attrs.getFloat("epsilon"));
                if (!kernels[static_cast<size_t>(p)]->fuseBatchNorm(eps)) continue;
                folded[si] = true;
                computedBy[si] = p;
                extraParams[static_cast<size_t>(p)] = i;
            }
        }
        for (int i : model.order) {
            const auto si = static_cast<size_t>(i);
            if (residualPort[si] < 0) continue;
            const auto& in = model.nodes[si].inputs;
            const int p = in[static_cast<size_t>(residualPort[si])], other = in[static_cast<size_t>(1 - residualPort[si])];
            if (folded[static_cast<size_t>(p)] || !kernels[static_cast<size_t>(p)]->fuseResidual()) continue;
            folded[si] = true;
            aliasPort[si] = residualPort[si];
            extraInput[static_cast<size_t>(p)] = other;
            computedBy[si] = p;
        }
        for (int i : model.order) {
            const int p = reluInto[static_cast<size_t>(i)];
            if (p >= 0 && kernels[static_cast<size_t>(computedBy[static_cast<size_t>(p)])]->fuseRelu())
                folded[static_cast<size_t>(i)] = true;
        }
    }
    // Workspace sizes as folding left them.
    for (int i : model.order) workspace = std::max(workspace, kernels[static_cast<size_t>(i)]->workspaceFloats());
    for (int i : model.order) {
        const auto si = static_cast<size_t>(i);
        const auto& k = *kernels[si];
        traits[si] = {folded[si] || k.aliasesInput(), folded[si] ? 0 : k.savedFloats() * sizeof(float),
                      k.backwardNeedsInputs(), k.backwardNeedsOutput(), options.fuse && k.overwritesInputGrads(),
                      aliasPort[si], extraInput[si]};
    }
    std::vector<std::shared_ptr<ops::CpuKernel>> lossKernels;
    for (const auto& l : losses) {
        KILN_ASSIGN(auto k, l.def->cpu(l.context(), Shape{1}));
        workspace = std::max(workspace, k->workspaceFloats());
        lossKernels.push_back(std::move(k));
    }

    ScheduleOptions so;
    so.batch = batch;
    so.training = options.training;
    so.seed = options.seed;
    so.workspaceBytes = workspace * sizeof(float);  // one scratch block in the arena
    so.probe = options.probe.has_value();
    so.seeds = seeds;
    so.keep = keep;
    Schedule schedule = Schedule::build(model, params, std::move(traits), std::move(losses), so);
    for (int i : seeds) {
        const int b = schedule.gradient[static_cast<size_t>(i)];
        if (b < 0)
            return Error(ErrorCode::ConfigError, "the gradient seed \"" + g.nodes[static_cast<size_t>(i)].name +
                                                     "\" depends on no input or trainable parameter")
                .withNode(g.nodes[static_cast<size_t>(i)].name);
        if (schedule.firstWrite[static_cast<size_t>(b)] >= 0)
            return Error(ErrorCode::ConfigError, "the gradient seed \"" + g.nodes[static_cast<size_t>(i)].name +
                                                     "\" lies upstream of another seed")
                .withNode(g.nodes[static_cast<size_t>(i)].name);
    }

    // Arena.
    const size_t unplanned = schedule.unplannedBytes(kTensorAlignment);
    const size_t arenaBytes = schedule.place(kTensorAlignment);
    plan->m_arena = makeAlignedBuffer(std::max(arenaBytes, sizeof(float)));
    std::byte* base = plan->m_arena.get();
    std::memset(base, 0, arenaBytes);
    auto ptr = [&](int b) -> float* {
        return b < 0 ? nullptr
                     : reinterpret_cast<float*>(base + schedule.buffers[static_cast<size_t>(b)].offset);
    };

    // Steps, in the schedule's order.
    plan->m_lossValues.assign(schedule.losses.size(), 0.0f);
    for (const auto& l : schedule.losses) plan->m_lossWeights.push_back(l.weight);
    for (const ScheduleStep& ss : schedule.steps) {
        const auto si = static_cast<size_t>(ss.node);
        const auto& ni = model.nodes[si];
        auto step = std::make_unique<Step>();
        step->node = g.nodes[si].name;
        for (int b : ss.in) step->in.push_back(ptr(b));
        step->out = ptr(ss.out);
        step->dOut = ptr(ss.dOut);
        for (int b : ss.dIn) step->dIn.push_back(ptr(b));
        if (std::find(ss.overwrite.begin(), ss.overwrite.end(), 1) != ss.overwrite.end())
            step->dInOverwrite = ss.overwrite;
        step->saved = ptr(ss.saved);
        step->seed = ss.seed;
        for (int b : ss.zeroFirst)
            step->zeroFirst.emplace_back(ptr(b), schedule.buffers[static_cast<size_t>(b)].bytes);
        switch (ss.kind) {
        case StepKind::Forward:
            step->kernel = kernels[si];
            step->outCount = ni.output.withBatch(batch).numel();
            for (size_t k = 0; k < ni.params.size(); ++k)
                step->params.push_back(
                    params.params()[static_cast<size_t>(params.index(ss.node, k))].value.data<float>());
            if (const int e = extraParams[si]; e >= 0)  // a folded batch norm's parameters
                for (size_t k = 0; k < model.nodes[static_cast<size_t>(e)].params.size(); ++k)
                    step->params.push_back(params.params()[static_cast<size_t>(params.index(e, k))].value.data<float>());
            plan->m_forward.push_back(std::move(step));
            break;
        case StepKind::Loss: {
            const auto l = static_cast<size_t>(ss.loss);
            step->kernel = lossKernels[l];
            step->loss = true;
            step->out = &plan->m_lossValues[l];
            step->gradScale = schedule.losses[l].weight;
            plan->m_losses.push_back(std::move(step));
            break;
        }
        case StepKind::Backward:
            step->kernel = kernels[si];
            step->backward = true;
            for (size_t q = 0; q < ni.params.size(); ++q) {
                auto& p = params.params()[static_cast<size_t>(params.index(ss.node, q))];
                step->params.push_back(p.value.data<float>());
                step->dParams.push_back(p.trainable && !options.probe ? p.grad.data<float>() : nullptr);
            }
            plan->m_backward.push_back(std::move(step));
            break;
        }
    }
    plan->m_workspace = ptr(schedule.workspace);
    plan->m_observe = options.observe;
    for (int i : model.inputs) {
        plan->m_inputs.push_back(ptr(schedule.value[static_cast<size_t>(i)]));
        plan->m_inputNames.push_back(g.nodes[static_cast<size_t>(i)].name);
    }
    for (int b : schedule.target) plan->m_targets.push_back(ptr(b));
    for (int o : model.outputs) {
        plan->m_outputs.push_back(ptr(schedule.value[static_cast<size_t>(o)]));
        plan->m_outputShapes.push_back(model.nodes[static_cast<size_t>(o)].output.withBatch(batch));
        plan->m_valueNames.push_back(g.nodes[static_cast<size_t>(o)].name);
        plan->m_values.push_back(ptr(schedule.value[static_cast<size_t>(o)]));
    }
    if (options.probe) {
        plan->m_probe = true;
        auto addGradient = [&](int i) {
            plan->m_gradientNames.push_back(g.nodes[static_cast<size_t>(i)].name);
            plan->m_gradients.push_back(ptr(schedule.gradient[static_cast<size_t>(i)]));
        };
        for (int i : seeds) addGradient(i);
        for (int i : keep) {
            addGradient(i);
            plan->m_valueNames.push_back(g.nodes[static_cast<size_t>(i)].name);
            plan->m_values.push_back(ptr(schedule.value[static_cast<size_t>(i)]));
        }
        for (int i : model.inputs) plan->m_inputGradients.push_back(ptr(schedule.gradient[static_cast<size_t>(i)]));
    }
    plan->m_stats = {arenaBytes, unplanned,
                     plan->m_forward.size() + plan->m_losses.size() + plan->m_backward.size()};
    return plan;
}

float* Plan::input(const std::string& name) {
    for (size_t k = 0; k < m_inputNames.size(); ++k)
        if (m_inputNames[k] == name) return m_inputs[k];
    return nullptr;
}
float* Plan::input(size_t k) { return k < m_inputs.size() ? m_inputs[k] : nullptr; }
float* Plan::target(size_t l) { return l < m_targets.size() ? m_targets[l] : nullptr; }
const float* Plan::output(size_t k) const { return k < m_outputs.size() ? m_outputs[k] : nullptr; }
Shape Plan::outputShape(size_t k) const { return m_outputShapes[k]; }

const float* Plan::value(const std::string& node) const {
    for (size_t k = 0; k < m_valueNames.size(); ++k)
        if (m_valueNames[k] == node) return m_values[k];
    return nullptr;
}

float* Plan::seedGradient(const std::string& node) {
    if (!m_probe) return nullptr;
    for (size_t k = 0; k < m_gradientNames.size(); ++k)
        if (m_gradientNames[k] == node) return m_gradients[k];
    return nullptr;
}

const float* Plan::gradient(const std::string& node) const {
    for (size_t k = 0; k < m_gradientNames.size(); ++k)
        if (m_gradientNames[k] == node) return m_gradients[k];
    return nullptr;
}

const float* Plan::inputGradient(size_t k) const {
    return k < m_inputGradients.size() ? m_inputGradients[k] : nullptr;
}

float Plan::totalLoss() const {
    float s = 0;
    for (size_t k = 0; k < m_lossValues.size(); ++k) s += m_lossWeights[k] * m_lossValues[k];
    return s;
}

Status Plan::forward(uint64_t step) { return run(false, step); }

Status Plan::trainStep(uint64_t step) {
    if (!m_training)
        return Error(ErrorCode::Internal, "trainStep called on an inference plan");
    m_params->zeroGrads();
    return run(true, step);
}

Status Plan::backward() {
    if (!m_probe) return Error(ErrorCode::Internal, "backward called on a plan compiled without gradient probes");
    return run(true, 0, false);
}

Status Plan::run(bool backward, uint64_t stepNo, bool forward) {
    auto exec = [&](Step& s, bool bwd) -> Status {
        for (auto [p, bytes] : s.zeroFirst) std::memset(p, 0, bytes);
        ops::KernelIo io;
        io.in = s.in;
        io.out = s.out;
        io.params = s.params;
        io.dOut = s.dOut;
        io.dIn = s.dIn;
        io.dInOverwrite = s.dInOverwrite;
        io.dParams = s.dParams;
        io.saved = s.saved;
        io.workspace = m_workspace;
        io.training = m_training;
        io.seed = s.seed;
        io.step = stepNo;
        io.pool = m_pool;
        io.gradScale = s.gradScale;
        Status st = bwd ? s.kernel->backward(io) : s.kernel->forward(io);
        if (!st.ok() && st.error().node.empty()) st.error().withNode(s.node);
        return st;
    };
    if (!forward) {  // probes: the backward steps alone
        for (auto& s : m_backward) KILN_TRY(exec(*s, true));
        return {};
    }
    for (auto& s : m_forward) {
        KILN_TRY(exec(*s, false));
        if (m_observe && s->out) m_observe(s->node, s->out, s->outCount);
    }
    for (auto& s : m_losses) {
        KILN_TRY(exec(*s, false));
        if (backward && s->dIn[0]) KILN_TRY(exec(*s, true));
    }
    if (backward)
        for (auto& s : m_backward) KILN_TRY(exec(*s, true));
    return {};
}

}  // namespace kiln::engine::exec
