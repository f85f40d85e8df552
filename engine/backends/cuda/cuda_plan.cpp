// SPDX-License-Identifier: Apache-2.0
// CUDA plan compilation: the exec::Schedule that exec::Plan also builds (steps, liveness, first
// writes) from this device's kernel traits, byte offsets in one device arena, CUDA kernels where
// supported and CPU kernels with copies elsewhere.
#include "engine/backends/cuda/cuda_plan.h"

#include "engine/ops/plugin_ops.h"
#include "engine/ops/plugin_loss.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>

#include "engine/backends/cuda/kernels.h"
#include "engine/exec/schedule.h"
#include "engine/ops/plugin_ops.h"

namespace kiln::engine::cuda {

struct CudaPlan::Step {
    std::string node;
    bool loss = false;
    std::shared_ptr<CudaKernel> gpu;      // or
    std::shared_ptr<ops::CpuKernel> cpu;  // a CPU-placed node
    std::vector<const float*> in;
    float* out = nullptr;
    std::vector<float*> params, dParams, dIn;
    const float* dOut = nullptr;
    std::byte* saved = nullptr;
    uint64_t seed = 0;
    float weight = 1.0f;
    std::vector<std::pair<void*, size_t>> zeroFirst;  // gradient buffers first written here, bytes
    // CPU-placed steps: host mirrors of what they read and write.
    std::vector<std::vector<float>> hostIn, hostDIn;
    std::vector<size_t> inFloats;
    std::vector<float> hostOut, hostDOut, hostSaved, hostWorkspace;
    size_t outFloats = 0;
    // Backward steps of CPU-placed nodes: the forward step whose host inputs, output and saved
    // state the gradient is computed from.
    Step* fwd = nullptr;
};

namespace {

constexpr size_t kAlign = 256;

Error configError(const std::string& field, const std::string& reason) {
    return Error(ErrorCode::ConfigError, field + " " + reason).with("field", field).with("reason", reason);
}

}  // namespace

CudaPlan::~CudaPlan() {
    if (m_ctx) (void)m_ctx->synchronize();  // no kernel may still use the arena being freed
}

float* CudaPlan::input(size_t k) const {
    return k < m_inputs.size() ? m_inputs[k] : nullptr;
}
float* CudaPlan::target(size_t l) const {
    return l < m_targets.size() ? m_targets[l] : nullptr;
}

Result<std::unique_ptr<CudaPlan>> CudaPlan::compile(const ops::ModelInfo& model, exec::ParamStore& params,
                                                    const CudaPlanOptions& options, DeviceContext& ctx,
                                                    ThreadPool& pool) {
    if (options.batch <= 0) return configError("batch_size", "must be positive");
    KILN_TRY(ops::refusePlaceholders(model.graph, options.training ? "train" : "run"));
    // Plugin operations run on CUDA through their plugin's CUDA kernels, or not at all: copying
    // every plugin node's values to the host and back would hide the cost from the user.
    for (size_t i = 0; i < model.nodes.size(); ++i) {
        if (model.nodes[i].def->kind != ops::OpKind::Plugin) continue;
        const ops::PluginOp* op = ops::pluginOpOf(model.graph.nodes[i]);
        if (op && op->desc->cuda_forward && (!options.training || op->desc->cuda_backward)) continue;
        const std::string name = model.graph.nodes[i].name;
        const std::string opName = op ? op->name : ops::pluginOpName(model.graph.nodes[i]);
        return Error(ErrorCode::Unsupported, "node \"" + name + "\" runs the plugin operation " + opName +
                                                 ", whose plugin has no CUDA " +
                                                 (op && op->desc->cuda_forward ? "backward" : "forward") +
                                                 " kernel; run it on the CPU")
            .withNode(name)
            .with("what", "the plugin operation " + opName + " on CUDA");
    }
    std::unique_ptr<CudaPlan> plan(new CudaPlan());
    plan->m_ctx = &ctx;
    plan->m_pool = &pool;
    plan->m_params = &params;
    plan->m_batch = options.batch;
    plan->m_training = options.training;
    plan->m_placement = placeModel(model);
    const int64_t batch = options.batch;
    const auto& g = model.graph;
    const size_t n = model.nodes.size();
    CudaBuildOptions bo{&ctx, options.precision, options.tf32};

    // Parameters: one device block for values, one for gradients (or another plan's blocks).
    auto& ps = params.params();
    if (options.shareParameters) {
        if (options.shareParameters->params.size() != ps.size())
            return Error(ErrorCode::Internal, "shared device parameters belong to another model");
        plan->m_dev = options.shareParameters;
    } else {
        auto dev = std::make_shared<DeviceParameters>();
        std::vector<size_t> pOffset(ps.size());
        size_t pBytes = 0;
        for (size_t i = 0; i < ps.size(); ++i) {
            pOffset[i] = pBytes;
            pBytes += exec::alignUp(static_cast<size_t>(ps[i].value.numel()) * 4, kAlign);
        }
        dev->bytes = pBytes;
        KILN_ASSIGN(dev->values, ctx.alloc(std::max<size_t>(pBytes, kAlign)));
        KILN_ASSIGN(dev->grads, ctx.alloc(std::max<size_t>(pBytes, kAlign)));
        for (size_t i = 0; i < ps.size(); ++i) {
            DeviceParam d;
            d.value = reinterpret_cast<float*>(dev->values.as<std::byte>() + pOffset[i]);
            d.grad = reinterpret_cast<float*>(dev->grads.as<std::byte>() + pOffset[i]);
            d.n = ps[i].value.numel();
            d.trainable = ps[i].trainable;
            d.lrMultiplier = ps[i].lrMultiplier;
            d.decay = ps[i].decay;
            dev->params.push_back(d);
        }
        plan->m_dev = std::move(dev);
        KILN_TRY(plan->uploadParams());
    }
    plan->m_paramBytes = plan->m_dev->bytes;

    // Kernels per node; their traits drive the schedule. A CPU-placed node keeps its saved state
    // on the host, so it has no saved buffer in the device arena.
    struct NodeK {
        std::shared_ptr<CudaKernel> gpu;
        std::shared_ptr<ops::CpuKernel> cpu;
    };
    std::vector<NodeK> nk(n);
    std::vector<exec::KernelTraits> traits(n);
    size_t workspace = 0;
    for (int i : model.order) {
        const auto si = static_cast<size_t>(i);
        const auto& ni = model.nodes[si];
        if (ni.def->kind == ops::OpKind::Input) continue;
        std::vector<Shape> ins;
        for (const auto& s : ni.inputShapes) ins.push_back(s.withBatch(batch));
        const ops::ShapeContext sctx{g.nodes[si], ni.attrs, ins};
        const Shape out = ni.output.withBatch(batch);
        if (plan->m_placement.onGpu[si]) {
            const auto& row = cudaOpTable()[static_cast<size_t>(ni.def->kind)];
            KILN_ASSIGN(auto k, row->make(sctx, out, bo));
            traits[si] = {k->aliasesInput(), k->savedBytes(), k->backwardNeedsInputs(),
                          k->backwardNeedsOutput()};
            workspace = std::max(workspace, k->workspaceBytes());
            nk[si].gpu = std::move(k);
        } else {
            if (!ni.params.empty())
                return Error(ErrorCode::Unsupported,
                             "node \"" + g.nodes[si].name +
                                 "\" has parameters but no CUDA kernel for its configuration")
                    .withNode(g.nodes[si].name)
                    .with("what", std::string(ni.def->name) + " on CUDA");
            KILN_ASSIGN(auto k, ni.def->cpu(sctx, out));
            traits[si] = {k->aliasesInput(), 0, k->backwardNeedsInputs(), k->backwardNeedsOutput()};
            nk[si].cpu = std::move(k);
        }
    }

    // Loss kernels: CUDA where the loss's row supports the configuration, else on the CPU.
    KILN_ASSIGN(auto losses, exec::resolveLosses(model, options.losses, batch));
    if (losses.size() > 32) return configError("training.loss", "has more than 32 outputs");
    KILN_ASSIGN(plan->m_lossSlots, ctx.alloc(kAlign * 2));  // L floats, then one double of scratch
    std::vector<NodeK> lk(losses.size());
    for (size_t l = 0; l < losses.size(); ++l) {
        const auto& ls = losses[l];
        const ops::ShapeContext cctx = ls.context();
        // Plugin losses have host code only: their step runs on the CPU with copies.
        if (!ops::isPluginLossDef(ls.def) && cudaSupports(ls.def->kind, cctx, Shape{1})) {
            KILN_ASSIGN(auto k, cudaOpTable()[static_cast<size_t>(ls.def->kind)]->make(cctx, Shape{1}, bo));
            lk[l].gpu = std::move(k);
        } else {
            KILN_ASSIGN(auto k, ls.def->cpu(cctx, Shape{1}));
            lk[l].cpu = std::move(k);
            plan->m_placement.cpuNodes.push_back(ls.node.name + " (" + ls.node.op + ")");
        }
    }

    exec::ScheduleOptions so;
    so.batch = batch;
    so.training = options.training;
    so.seed = options.seed;
    exec::Schedule schedule = exec::Schedule::build(model, params, std::move(traits), std::move(losses), so);

    // Steps, in the schedule's order.
    auto paramPtrs = [&](int i, Step& st) {
        for (size_t q = 0; q < model.nodes[static_cast<size_t>(i)].params.size(); ++q) {
            const auto pi = static_cast<size_t>(params.index(i, q));
            st.params.push_back(plan->m_dev->params[pi].value);
            st.dParams.push_back(plan->m_dev->params[pi].trainable ? plan->m_dev->params[pi].grad : nullptr);
        }
    };
    // A CPU-placed step's host copies of what it reads and writes. Gradients going back to the
    // device are staged in the device workspace.
    auto hostMirror = [&](Step& st, std::span<const Shape> inputs, const Shape& output) {
        for (const auto& s : inputs) {
            st.inFloats.push_back(static_cast<size_t>(s.numel()));
            st.hostIn.emplace_back(st.inFloats.back());
            st.hostDIn.emplace_back(st.inFloats.back());
        }
        st.outFloats = static_cast<size_t>(output.numel());
        st.hostOut.resize(st.outFloats);
        st.hostWorkspace.resize(std::max<size_t>(st.cpu->workspaceFloats(), 1));
    };
    auto nodeMirror = [&](Step& st, const ops::NodeInfo& ni) {
        std::vector<Shape> ins;
        for (const auto& s : ni.inputShapes) ins.push_back(s.withBatch(batch));
        hostMirror(st, ins, ni.output.withBatch(batch));
        st.hostDOut.resize(st.outFloats);
        st.hostSaved.resize(st.cpu->savedFloats());
        workspace = std::max(workspace, st.outFloats * 4);
        for (size_t f : st.inFloats) workspace = std::max(workspace, f * 4);
    };
    std::vector<Step*> forwardStep(n, nullptr);
    std::vector<Step*> bySchedule;  // parallel to schedule.steps
    for (const exec::ScheduleStep& ss : schedule.steps) {
        const auto si = static_cast<size_t>(ss.node);
        const auto& ni = model.nodes[si];
        auto st = std::make_unique<Step>();
        st->node = g.nodes[si].name;
        st->seed = ss.seed;
        bySchedule.push_back(st.get());
        switch (ss.kind) {
        case exec::StepKind::Forward:
            st->gpu = nk[si].gpu;
            st->cpu = nk[si].cpu;
            paramPtrs(ss.node, *st);
            if (st->cpu) nodeMirror(*st, ni);
            forwardStep[si] = st.get();
            plan->m_forward.push_back(std::move(st));
            break;
        case exec::StepKind::Loss: {
            const auto l = static_cast<size_t>(ss.loss);
            st->loss = true;
            st->gpu = lk[l].gpu;
            st->cpu = lk[l].cpu;
            st->weight = schedule.losses[l].weight;
            if (st->cpu) {
                hostMirror(*st, schedule.losses[l].inputs, Shape{1});
                workspace = std::max(workspace, st->inFloats[0] * 4);  // the output's gradient
            }
            plan->m_losses.push_back(std::move(st));
            break;
        }
        case exec::StepKind::Backward:
            st->gpu = nk[si].gpu;
            st->cpu = nk[si].cpu;
            paramPtrs(ss.node, *st);
            if (st->cpu) {
                nodeMirror(*st, ni);
                st->fwd = forwardStep[si];
            }
            plan->m_backward.push_back(std::move(st));
            break;
        }
    }

    const size_t arena = schedule.place(kAlign);
    plan->m_arenaBytes = arena;
    KILN_ASSIGN(plan->m_arena, ctx.alloc(std::max<size_t>(arena, kAlign)));
    KILN_TRY(ctx.memsetAsync(plan->m_arena.get(), 0, std::max<size_t>(arena, kAlign)));
    KILN_ASSIGN(plan->m_workspace, ctx.alloc(std::max<size_t>(workspace, kAlign)));
    KILN_ASSIGN(plan->m_flag, ctx.alloc(kAlign));
    auto* base = plan->m_arena.as<std::byte>();
    auto ptr = [&](int b) -> float* {
        return b < 0 ? nullptr
                     : reinterpret_cast<float*>(base + schedule.buffers[static_cast<size_t>(b)].offset);
    };
    for (size_t k = 0; k < schedule.steps.size(); ++k) {
        const exec::ScheduleStep& ss = schedule.steps[k];
        Step& s = *bySchedule[k];
        for (int b : ss.in) s.in.push_back(ptr(b));
        s.out = ptr(ss.out);
        s.dOut = ptr(ss.dOut);
        for (int b : ss.dIn) s.dIn.push_back(ptr(b));
        s.saved = reinterpret_cast<std::byte*>(ptr(ss.saved));
        for (int b : ss.zeroFirst)
            s.zeroFirst.emplace_back(ptr(b), schedule.buffers[static_cast<size_t>(b)].bytes);
    }
    for (size_t l = 0; l < plan->m_losses.size(); ++l)
        plan->m_losses[l]->out = plan->m_lossSlots.as<float>() + l;
    for (int i : model.inputs) {
        plan->m_inputs.push_back(ptr(schedule.value[static_cast<size_t>(i)]));
        plan->m_inputBytes.push_back(
            static_cast<size_t>(model.nodes[static_cast<size_t>(i)].output.withBatch(batch).numel()) * 4);
    }
    for (int b : schedule.target) {
        plan->m_targets.push_back(ptr(b));
        plan->m_targetBytes.push_back(schedule.buffers[static_cast<size_t>(b)].bytes);
    }
    for (int o : model.outputs) {
        plan->m_outputs.push_back(ptr(schedule.value[static_cast<size_t>(o)]));
        plan->m_outputBytes.push_back(
            static_cast<size_t>(model.nodes[static_cast<size_t>(o)].output.withBatch(batch).numel()) * 4);
    }
    KILN_TRY(ctx.synchronize());
    return plan;
}

Status CudaPlan::setInput(size_t k, const float* host) {
    if (k >= m_inputs.size()) return Error(ErrorCode::InvalidArgument, "no such model input");
    return m_ctx->stagedUpload(m_inputs[k], host, m_inputBytes[k]);
}
Status CudaPlan::setTarget(size_t l, const float* host) {
    if (l >= m_targets.size()) return Error(ErrorCode::InvalidArgument, "no such loss target");
    return m_ctx->stagedUpload(m_targets[l], host, m_targetBytes[l]);
}
Status CudaPlan::downloadOutput(size_t k, float* host) {
    if (k >= m_outputs.size()) return Error(ErrorCode::InvalidArgument, "no such model output");
    return m_ctx->download(host, m_outputs[k], m_outputBytes[k]);
}

Status CudaPlan::uploadParams() {
    auto& ps = m_params->params();
    for (size_t i = 0; i < ps.size(); ++i)
        KILN_TRY(m_ctx->upload(m_dev->params[i].value, ps[i].value.data<float>(),
                               static_cast<size_t>(m_dev->params[i].n) * 4));
    return m_ctx->synchronize();
}

Status CudaPlan::downloadParams() {
    KILN_TRY(m_ctx->synchronize());
    auto& ps = m_params->params();
    for (size_t i = 0; i < ps.size(); ++i)
        KILN_TRY(checkCuda(
            cudaMemcpyAsync(ps[i].value.data<float>(), m_dev->params[i].value,
                            static_cast<size_t>(m_dev->params[i].n) * 4, cudaMemcpyDeviceToHost, m_ctx->stream()),
            "copy of the weights to the host"));
    return m_ctx->synchronize();
}

Status CudaPlan::forward(uint64_t step) {
    return run(false, step, 1.0f);
}

Status CudaPlan::trainStep(uint64_t step, float lossScale) {
    if (!m_training) return Error(ErrorCode::Internal, "trainStep called on an inference plan");
    KILN_TRY(m_ctx->memsetAsync(m_dev->grads.get(), 0, m_dev->grads.bytes()));
    return run(true, step, lossScale);
}

Status CudaPlan::runStep(Step& s, bool bwd, uint64_t stepNo) {
    StreamHandle stream = m_ctx->stream();
    for (auto [p, bytes] : s.zeroFirst) KILN_TRY(m_ctx->memsetAsync(p, 0, bytes));
    if (s.gpu) {
        CudaIo io;
        io.ctx = m_ctx;
        io.in = s.in;
        io.out = s.out;
        io.params = s.params;
        io.dOut = s.dOut;
        io.dIn = s.dIn;
        io.dParams = s.dParams;
        io.saved = s.saved;
        io.workspace = m_workspace.as<std::byte>();
        io.training = m_training;
        io.seed = s.seed;
        io.step = stepNo;
        io.gradScale = s.weight;
        io.lossAcc = reinterpret_cast<double*>(m_lossSlots.as<std::byte>() + kAlign);
        io.badLabel = m_flag.as<int>();
        Status st = bwd ? s.gpu->backward(io) : s.gpu->forward(io);
        if (!st.ok() && st.error().node.empty()) st.error().withNode(s.node);
        return st;
    }
    // A CPU-placed node: bring its inputs (and output gradient) over, run, send results back.
    if (!bwd) {
        for (size_t k = 0; k < s.in.size(); ++k)
            KILN_TRY(checkCuda(cudaMemcpyAsync(s.hostIn[k].data(), s.in[k], s.inFloats[k] * 4,
                                               cudaMemcpyDeviceToHost, stream),
                               "copy to the host"));
        KILN_TRY(m_ctx->synchronize());
    } else if (s.dOut) {  // loss steps have no output gradient
        KILN_TRY(checkCuda(
            cudaMemcpyAsync(s.hostDOut.data(), s.dOut, s.outFloats * 4, cudaMemcpyDeviceToHost, stream),
            "copy to the host"));
        KILN_TRY(m_ctx->synchronize());
    }
    // A backward step reads what its forward step brought over and kept.
    Step& f = s.fwd ? *s.fwd : s;
    std::vector<const float*> in;
    for (auto& h : f.hostIn) in.push_back(h.data());
    std::vector<float*> dIn;
    for (size_t k = 0; k < s.hostDIn.size(); ++k) {
        std::fill(s.hostDIn[k].begin(), s.hostDIn[k].end(), 0.0f);
        dIn.push_back(k < s.dIn.size() && s.dIn[k] ? s.hostDIn[k].data() : nullptr);
    }
    ops::KernelIo io;
    io.in = in;
    io.out = f.hostOut.data();
    io.dOut = s.hostDOut.data();
    io.dIn = dIn;
    io.saved = f.hostSaved.empty() ? nullptr : f.hostSaved.data();
    io.workspace = s.hostWorkspace.data();
    io.training = m_training;
    io.seed = s.seed;
    io.step = stepNo;
    io.pool = m_pool;
    io.gradScale = s.weight;
    Status st = bwd ? s.cpu->backward(io) : s.cpu->forward(io);
    if (!st.ok()) {
        if (st.error().node.empty()) st.error().withNode(s.node);
        return st;
    }
    if (!bwd) {
        return checkCuda(
            cudaMemcpyAsync(s.out, s.hostOut.data(), s.outFloats * 4, cudaMemcpyHostToDevice, stream),
            "copy to the device");
    }
    auto* staging = m_workspace.as<float>();
    for (size_t k = 0; k < s.dIn.size(); ++k) {
        if (!s.dIn[k]) continue;
        KILN_TRY(checkCuda(
            cudaMemcpyAsync(staging, s.hostDIn[k].data(), s.inFloats[k] * 4, cudaMemcpyHostToDevice, stream),
            "copy to the device"));
        k::accumulate(staging, s.dIn[k], static_cast<int64_t>(s.inFloats[k]), stream);
        KILN_TRY(m_ctx->synchronize());  // the host buffer and the staging area are reused
    }
    return {};
}

Status CudaPlan::run(bool backward, uint64_t stepNo, float lossScale) {
    KILN_TRY(m_ctx->memsetAsync(m_flag.get(), 0, sizeof(int)));
    for (auto& s : m_forward) KILN_TRY(runStep(*s, false, stepNo));
    for (auto& s : m_losses) {
        const float w = s->weight;
        KILN_TRY(runStep(*s, false, stepNo));
        if (backward && s->dIn[0]) {
            s->weight = w * lossScale;
            Status st = runStep(*s, true, stepNo);
            s->weight = w;
            KILN_TRY(st);
        }
    }
    if (backward)
        for (auto& s : m_backward) KILN_TRY(runStep(*s, true, stepNo));
    return checkCuda(cudaGetLastError(), "kernel launch");
}

Result<std::vector<float>> CudaPlan::losses() {
    std::vector<float> out(m_losses.size());
    int bad = 0;
    KILN_TRY(m_ctx->download(&bad, m_flag.get(), sizeof(int)));
    if (bad != 0)
        return Error(ErrorCode::DataError, "label at sample " + std::to_string(bad - 1) +
                                               " is not a class index of the model's output")
            .with("reason", "label out of range");
    if (!out.empty()) KILN_TRY(m_ctx->download(out.data(), m_lossSlots.get(), out.size() * sizeof(float)));
    // CPU-placed losses wrote their value on the host.
    for (size_t l = 0; l < m_losses.size(); ++l)
        if (m_losses[l]->cpu) out[l] = m_losses[l]->hostOut[0];
    return out;
}

Result<bool> CudaPlan::gradientsFinite() {
    // The second int of the flag block; the first reports invalid labels to losses().
    int* flag = m_flag.as<int>() + 1;
    KILN_TRY(m_ctx->memsetAsync(flag, 0, sizeof(int)));
    for (const auto& p : m_dev->params)
        if (p.trainable) k::checkFinite(p.grad, p.n, flag, m_ctx->stream());
    int bad = 0;
    KILN_TRY(m_ctx->download(&bad, flag, sizeof(int)));
    return bad == 0;
}

Status CudaPlan::allReduceGradients(exec::Reducer& reducer, float weight, float scale) {
    const int64_t floats = static_cast<int64_t>(m_dev->grads.bytes() / 4);
    if (weight != 1.0f) k::scale(m_dev->grads.as<float>(), weight, floats, m_ctx->stream());
    KILN_TRY(reducer.allReduceSum(m_dev->grads.as<float>(), floats));
    k::scale(m_dev->grads.as<float>(), scale, floats, m_ctx->stream());
    return {};
}

// ---- Optimizer ----------------------------------------------------------------------------------

Result<std::unique_ptr<CudaOptimizer>> CudaOptimizer::create(const optim::OptimizerConfig& config,
                                                             CudaPlan& plan) {
    KILN_TRY(config.validate());
    KILN_ASSIGN(auto kind, optim::parseOptimizerKind(config.type));
    if (kind == optim::OptimizerKind::RmsProp || config.amsgrad || config.clipNorm || config.globalClipNorm ||
        config.clipValue)
        return Error(ErrorCode::Unsupported, "this optimizer configuration updates on the host")
            .with("what", "optimizer on CUDA");
    std::unique_ptr<CudaOptimizer> o(new CudaOptimizer());
    o->m_config = config;
    o->m_kind = kind;
    o->m_weightDecay = config.resolvedWeightDecay();
    o->m_plan = &plan;
    const int slots = kind == optim::OptimizerKind::Sgd ? (config.momentum != 0 ? 1 : 0) : 2;
    size_t floats = 0;
    for (const auto& p : plan.deviceParams())
        if (p.trainable) floats += static_cast<size_t>(p.n) * static_cast<size_t>(slots);
    o->m_stateFloats = static_cast<int64_t>(floats);
    KILN_ASSIGN(o->m_state, plan.context().alloc(std::max<size_t>(floats, 1) * 4));
    KILN_TRY(plan.context().memsetAsync(o->m_state.get(), 0, std::max<size_t>(floats, 1) * 4));
    size_t at = 0;
    for (const auto& p : plan.deviceParams()) {
        o->m_slots.push_back(p.trainable && slots > 0 ? o->m_state.as<float>() + at : nullptr);
        if (p.trainable) at += static_cast<size_t>(p.n) * static_cast<size_t>(slots);
    }
    return o;
}

Status CudaOptimizer::downloadState(float* host) {
    if (m_stateFloats == 0) return {};
    return m_plan->context().download(host, m_state.get(), static_cast<size_t>(m_stateFloats) * 4);
}

Status CudaOptimizer::uploadState(const float* host) {
    if (m_stateFloats == 0) return {};
    KILN_TRY(m_plan->context().upload(m_state.get(), host, static_cast<size_t>(m_stateFloats) * 4));
    return m_plan->context().synchronize();
}

Status CudaOptimizer::step(double lr, float gradScale) {
    StreamHandle s = m_plan->context().stream();
    const double t = static_cast<double>(m_iterations + 1);
    const double alpha =
        lr * std::sqrt(1.0 - std::pow(m_config.beta2, t)) / (1.0 - std::pow(m_config.beta1, t));
    auto& ps = m_plan->deviceParams();
    for (size_t i = 0; i < ps.size(); ++i) {
        const DeviceParam& p = ps[i];
        if (!p.trainable) continue;
        const double mult = p.lrMultiplier;
        const float wdLr = p.decay ? static_cast<float>(lr * mult * m_weightDecay) : 0.0f;
        if (m_kind == optim::OptimizerKind::Sgd)
            k::sgdUpdate(p.value, p.grad, m_slots[i], p.n, static_cast<float>(lr * mult),
                         static_cast<float>(m_config.momentum), m_config.nesterov, wdLr, gradScale, s);
        else
            k::adamUpdate(p.value, p.grad, m_slots[i], m_slots[i] + p.n, p.n,
                          static_cast<float>(alpha * mult), static_cast<float>(m_config.beta1),
                          static_cast<float>(m_config.beta2), static_cast<float>(m_config.epsilon), wdLr,
                          gradScale, s);
    }
    ++m_iterations;
    return checkCuda(cudaGetLastError(), "optimizer update");
}

Result<bool> scaledTrainStep(CudaPlan& plan, CudaOptimizer& opt, optim::LossScaler& scaler, double lr,
                             uint64_t step) {
    // update() may grow the scale for the next step; this step's gradients carry this one.
    const float used = scaler.scale();
    KILN_TRY(plan.trainStep(step, used));
    KILN_ASSIGN(bool finite, plan.gradientsFinite());
    if (!scaler.update(finite)) return false;
    KILN_TRY(opt.step(lr, 1.0f / used));
    return true;
}

}  // namespace kiln::engine::cuda
