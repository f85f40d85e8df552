// SPDX-License-Identifier: Apache-2.0
// Plan compilation: step list, gradient bookkeeping, liveness intervals and arena placement.
//
// Step positions: forward steps 0..F-1 (topological order), loss steps F..F+L-1, backward
// steps F+L.. in reverse topological order. Every buffer gets an interval [first, last] of step
// positions; buffers whose intervals do not overlap may share arena bytes. Gradients are
// accumulated (+=) by kernels, so each gradient buffer is zeroed just before its first writer.
#include "engine/exec/plan.h"

#include "engine/core/rng.h"
#include "engine/exec/planning.h"

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
    std::vector<float*> params;
    const float* dOut = nullptr;
    std::vector<float*> dIn;
    std::vector<float*> dParams;
    float* saved = nullptr;
    uint64_t seed = 0;
    float gradScale = 1.0f;
    std::vector<std::pair<float*, size_t>> zeroFirst;  // gradient buffers first written here, bytes
    // Buffer ids, resolved to pointers once the arena exists.
    std::vector<int> inBuf;
    int outBuf = -1;
    int dOutBuf = -1;
    std::vector<int> dInBuf;
    int savedBuf = -1;
    std::vector<int> zeroBuf;
};

Plan::~Plan() = default;

Result<std::unique_ptr<Plan>> Plan::compile(const ops::ModelInfo& model, ParamStore& params,
                                            const CompileOptions& options, ThreadPool& pool) {
    if (options.batch <= 0)
        return Error(ErrorCode::ConfigError, "batch size must be positive").with("field", "batch_size");
    std::unique_ptr<Plan> plan(new Plan());
    plan->m_pool = &pool;
    plan->m_params = &params;
    plan->m_batch = options.batch;
    plan->m_training = options.training;
    const int64_t batch = options.batch;
    const auto& g = model.graph;
    const size_t n = model.nodes.size();
    const int F = static_cast<int>(model.order.size());
    const int L = static_cast<int>(options.losses.size());
    const StepTimeline timeline(model, L);
    const int kEnd = timeline.end();

    // Kernels, bound to concrete shapes.
    std::vector<std::shared_ptr<ops::CpuKernel>> kernels(n);
    size_t workspace = 0;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        std::vector<Shape> ins;
        for (const auto& s : ni.inputShapes) ins.push_back(s.withBatch(batch));
        ops::ShapeContext ctx{g.nodes[static_cast<size_t>(i)], ni.attrs, ins};
        KILN_ASSIGN(auto k, ni.def->cpu(ctx, ni.output.withBatch(batch)));
        workspace = std::max(workspace, k->workspaceFloats());
        kernels[static_cast<size_t>(i)] = std::move(k);
    }

    // Alias classes (Flatten/Reshape share their input's buffer, and its gradient buffer).
    std::vector<int> root(n);
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        root[static_cast<size_t>(i)] = kernels[static_cast<size_t>(i)]->aliasesInput() ? root[static_cast<size_t>(ni.inputs[0])] : i;
    }

    // Which nodes need an output gradient: they depend on a trainable parameter and a loss
    // depends on them.
    std::vector<int> lossNodes;
    for (const auto& ls : options.losses) {
        int o = g.find(ls.output);
        if (o < 0)
            return Error(ErrorCode::ConfigError, "the loss refers to output \"" + ls.output + "\", which is not a node")
                .with("field", "training.loss.output");
        lossNodes.push_back(o);
    }
    const GradientNeeds needs = gradientNeeds(model, params, lossNodes, options.training);
    const std::vector<char>& hasTrainable = needs.hasTrainable;
    const std::vector<char>& needGrad = needs.needGrad;

    // Buffers.
    std::vector<LiveBuffer> bufs;
    auto newBuffer = [&](size_t floats, int first, int last) {
        bufs.push_back({std::max<size_t>(floats, 1) * sizeof(float), first, last, 0});
        return static_cast<int>(bufs.size() - 1);
    };
    std::vector<int> valBuf(n, -1), gradBuf(n, -1), savedBuf(n, -1);
    for (int i : model.order) {
        auto si = static_cast<size_t>(i);
        size_t floats = static_cast<size_t>(model.nodes[si].output.withBatch(batch).numel());
        if (root[si] != i) {
            valBuf[si] = valBuf[static_cast<size_t>(root[si])];
        } else if (model.nodes[si].def->kind == ops::OpKind::Input) {
            valBuf[si] = newBuffer(floats, 0, kEnd);
        } else {
            valBuf[si] = newBuffer(floats, timeline.forward(i), timeline.forward(i));
        }
        if (size_t s = kernels[si]->savedFloats(); s > 0) savedBuf[si] = newBuffer(s, 0, kEnd);
    }
    for (int i : model.order) {  // gradient buffers per alias class
        auto si = static_cast<size_t>(i);
        if (!needGrad[si]) continue;
        auto r = static_cast<size_t>(root[si]);
        if (gradBuf[r] < 0) gradBuf[r] = newBuffer(bufs[static_cast<size_t>(valBuf[r])].bytes / sizeof(float), kEnd, 0);
        gradBuf[si] = gradBuf[r];
    }
    int workspaceBuf = newBuffer(workspace, 0, kEnd);
    std::vector<int> targetBuf;
    for (const auto& ls : options.losses)
        targetBuf.push_back(newBuffer(static_cast<size_t>(ls.targetShape.withBatch(batch).numel() * batch), 0, kEnd));
    for (int o : model.outputs) bufs[static_cast<size_t>(valBuf[static_cast<size_t>(o)])].use(kEnd);

    // Forward steps.
    for (int i : model.order) {
        auto si = static_cast<size_t>(i);
        const auto& ni = model.nodes[si];
        for (int p : ni.inputs) bufs[static_cast<size_t>(valBuf[static_cast<size_t>(p)])].use(timeline.forward(i));
        if (ni.def->kind == ops::OpKind::Input || root[si] != i) continue;
        auto step = std::make_unique<Step>();
        step->kernel = kernels[si];
        step->node = g.nodes[si].name;
        for (int p : ni.inputs) step->inBuf.push_back(valBuf[static_cast<size_t>(p)]);
        step->outBuf = valBuf[si];
        for (size_t k = 0; k < ni.params.size(); ++k)
            step->params.push_back(params.params()[static_cast<size_t>(params.index(i, k))].value.data<float>());
        step->savedBuf = savedBuf[si];
        step->seed = rng::mix(options.seed, static_cast<uint64_t>(i));
        plan->m_forward.push_back(std::move(step));
    }

    // Loss steps: forward, then (training) the gradient into the output's gradient buffer.
    plan->m_lossValues.assign(options.losses.size(), 0.0f);
    for (int l = 0; l < L; ++l) {
        const auto& ls = options.losses[static_cast<size_t>(l)];
        const ops::OpDef* def = ops::findOp(ls.type);
        if (!def || !ops::isLoss(def->kind))
            return Error(ErrorCode::ConfigError, "unknown loss \"" + ls.type + "\"").with("field", "training.loss.type");
        int o = lossNodes[static_cast<size_t>(l)];
        Node lossNode;
        lossNode.name = "loss:" + ls.output;
        lossNode.op = ls.type;
        lossNode.attrs = ls.attrs;
        KILN_ASSIGN(AttrMap attrs, ops::resolveAttrs(*def, lossNode));
        std::vector<Shape> symbolic{model.nodes[static_cast<size_t>(o)].output};
        std::vector<int64_t> td{Shape::kBatch};
        td.insert(td.end(), ls.targetShape.dims().begin(), ls.targetShape.dims().end());
        symbolic.emplace_back(td);
        ops::ShapeContext sctx{lossNode, attrs, symbolic};
        KILN_TRY(def->shape(sctx));
        std::vector<Shape> concrete{symbolic[0].withBatch(batch), symbolic[1].withBatch(batch)};
        ops::ShapeContext cctx{lossNode, attrs, concrete};
        KILN_ASSIGN(auto kernel, def->cpu(cctx, Shape{1}));
        workspace = std::max(workspace, kernel->workspaceFloats());
        bufs[static_cast<size_t>(workspaceBuf)].bytes = std::max<size_t>(workspace, 1) * sizeof(float);
        auto step = std::make_unique<Step>();
        step->kernel = std::move(kernel);
        step->node = g.nodes[static_cast<size_t>(o)].name;
        step->loss = true;
        step->inBuf = {valBuf[static_cast<size_t>(o)], targetBuf[static_cast<size_t>(l)]};
        step->gradScale = ls.weight;
        step->dInBuf = {gradBuf[static_cast<size_t>(o)], -1};
        int pos = timeline.loss(l);
        bufs[static_cast<size_t>(valBuf[static_cast<size_t>(o)])].use(pos);
        if (gradBuf[static_cast<size_t>(o)] >= 0) bufs[static_cast<size_t>(gradBuf[static_cast<size_t>(o)])].use(pos);
        plan->m_losses.push_back(std::move(step));
    }

    // Backward steps in reverse order.
    if (options.training) {
        for (int k = F - 1; k >= 0; --k) {
            int i = model.order[static_cast<size_t>(k)];
            auto si = static_cast<size_t>(i);
            const auto& ni = model.nodes[si];
            if (!needGrad[si] || root[si] != i || ni.def->kind == ops::OpKind::Input) continue;
            bool anyInputGrad = false;
            for (int p : ni.inputs) anyInputGrad = anyInputGrad || needGrad[static_cast<size_t>(p)];
            if (!anyInputGrad && !hasTrainable[si]) continue;
            auto step = std::make_unique<Step>();
            step->kernel = kernels[si];
            step->node = g.nodes[si].name;
            step->backward = true;
            int pos = timeline.backward(i);
            for (int p : ni.inputs) {
                step->inBuf.push_back(valBuf[static_cast<size_t>(p)]);
                if (step->kernel->backwardNeedsInputs()) bufs[static_cast<size_t>(valBuf[static_cast<size_t>(p)])].use(pos);
                int gb = needGrad[static_cast<size_t>(p)] ? gradBuf[static_cast<size_t>(p)] : -1;
                step->dInBuf.push_back(gb);
                if (gb >= 0) bufs[static_cast<size_t>(gb)].use(pos);
            }
            step->outBuf = valBuf[si];
            if (step->kernel->backwardNeedsOutput()) bufs[static_cast<size_t>(valBuf[si])].use(pos);
            step->dOutBuf = gradBuf[si];
            bufs[static_cast<size_t>(gradBuf[si])].use(pos);
            for (size_t q = 0; q < ni.params.size(); ++q) {
                auto& p = params.params()[static_cast<size_t>(params.index(i, q))];
                step->params.push_back(p.value.data<float>());
                step->dParams.push_back(p.trainable ? p.grad.data<float>() : nullptr);
            }
            step->savedBuf = savedBuf[si];
            step->seed = rng::mix(options.seed, static_cast<uint64_t>(i));
            plan->m_backward.push_back(std::move(step));
        }
    }

    // Zero each gradient buffer before its first writer (the earliest step using it).
    auto allSteps = [&](auto&& fn) {
        for (auto& s : plan->m_losses) fn(*s);
        for (auto& s : plan->m_backward) fn(*s);
    };
    std::vector<char> zeroed(bufs.size(), 0);
    allSteps([&](Step& s) {
        for (int b : s.dInBuf)
            if (b >= 0 && !zeroed[static_cast<size_t>(b)]) {
                zeroed[static_cast<size_t>(b)] = 1;
                s.zeroBuf.push_back(b);
            }
    });

    // Arena.
    size_t unplanned = 0;
    for (const auto& b : bufs) unplanned += alignUp(b.bytes, kTensorAlignment);
    const size_t arenaBytes = placeBuffers(bufs, kTensorAlignment);
    plan->m_arena = makeAlignedBuffer(std::max(arenaBytes, sizeof(float)));
    std::byte* base = plan->m_arena.get();
    std::memset(base, 0, arenaBytes);
    auto ptr = [&](int b) -> float* {
        return b < 0 ? nullptr : reinterpret_cast<float*>(base + bufs[static_cast<size_t>(b)].offset);
    };
    auto resolve = [&](Step& s) {
        s.in.clear();
        for (int b : s.inBuf) s.in.push_back(ptr(b));
        s.out = ptr(s.outBuf);
        s.dOut = ptr(s.dOutBuf);
        s.dIn.clear();
        for (int b : s.dInBuf) s.dIn.push_back(ptr(b));
        s.saved = ptr(s.savedBuf);
        for (int b : s.zeroBuf) s.zeroFirst.emplace_back(ptr(b), bufs[static_cast<size_t>(b)].bytes);
    };
    for (auto& s : plan->m_forward) resolve(*s);
    for (auto& s : plan->m_losses) resolve(*s);
    for (auto& s : plan->m_backward) resolve(*s);
    for (size_t l = 0; l < plan->m_losses.size(); ++l) plan->m_losses[l]->out = &plan->m_lossValues[l];
    plan->m_workspace = ptr(workspaceBuf);
    for (int i : model.inputs) {
        plan->m_inputs.push_back(ptr(valBuf[static_cast<size_t>(i)]));
        plan->m_inputNames.push_back(g.nodes[static_cast<size_t>(i)].name);
    }
    for (int b : targetBuf) plan->m_targets.push_back(ptr(b));
    for (int o : model.outputs) {
        plan->m_outputs.push_back(ptr(valBuf[static_cast<size_t>(o)]));
        plan->m_outputShapes.push_back(model.nodes[static_cast<size_t>(o)].output.withBatch(batch));
        plan->m_valueNames.push_back(g.nodes[static_cast<size_t>(o)].name);
        plan->m_values.push_back(ptr(valBuf[static_cast<size_t>(o)]));
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

float Plan::totalLoss() const {
    float s = 0;
    for (float v : m_lossValues) s += v;
    return s;
}

Status Plan::forward(uint64_t step) { return run(false, step); }

Status Plan::trainStep(uint64_t step) {
    if (!m_training)
        return Error(ErrorCode::Internal, "trainStep called on an inference plan");
    m_params->zeroGrads();
    return run(true, step);
}

Status Plan::run(bool backward, uint64_t stepNo) {
    auto exec = [&](Step& s, bool bwd) -> Status {
        for (auto [p, bytes] : s.zeroFirst) std::memset(p, 0, bytes);
        ops::KernelIo io;
        io.in = s.in;
        io.out = s.out;
        io.params = s.params;
        io.dOut = s.dOut;
        io.dIn = s.dIn;
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
    for (auto& s : m_forward) KILN_TRY(exec(*s, false));
    for (auto& s : m_losses) {
        KILN_TRY(exec(*s, false));
        if (backward && s->dIn[0]) KILN_TRY(exec(*s, true));
    }
    if (backward)
        for (auto& s : m_backward) KILN_TRY(exec(*s, true));
    return {};
}

}  // namespace kiln::engine::exec
