// SPDX-License-Identifier: Apache-2.0
// The Trainer on a CUDA device: plans per batch size over shared device parameters, device-side
// optimizer updates, loss scaling for mixed float16, host updates as the fallback.
#include "engine/backends/cuda/cuda_backend.h"

#include <map>
#include <vector>

#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/cuda_plan.h"
#include "engine/backends/cuda/dnn.h"
#include "engine/backends/cuda/kernels.h"
#include "engine/core/device.h"
#include "engine/exec/memory_assistant.h"
#include "engine/optim/loss_scaler.h"
#ifdef KILN_HAVE_NCCL
#include "engine/backends/cuda/nccl_reducer.h"
#endif

namespace kiln::engine::cuda {
namespace {

class CudaBackend;

class CudaRunner final : public exec::BatchRunner {
public:
    CudaRunner(CudaBackend& owner, std::unique_ptr<CudaPlan> plan, const ops::ModelInfo& model,
               const std::vector<exec::LossSpec>& losses);
    int64_t batch() const override { return m_plan->batch(); }
    float* input(size_t k) override { return k < m_inputs.size() ? m_inputs[k].data() : nullptr; }
    float* target(size_t l) override { return l < m_targets.size() ? m_targets[l].data() : nullptr; }
    Status forward() override {
        KILN_TRY(upload());
        KILN_TRY(m_plan->forward(0));
        return finished();
    }
    Result<bool> trainStep(uint64_t globalStep, double lr) override;
    Result<double> totalLoss() override { return m_loss; }
    std::span<const float> lossValues() const override { return m_lossValues; }
    Result<const float*> output(size_t o) override {
        if (o >= m_outputs.size()) return Error(ErrorCode::InvalidArgument, "no such model output");
        if (!m_outputFresh[o]) {
            KILN_TRY(m_plan->downloadOutput(o, m_outputs[o].data()));
            m_outputFresh[o] = 1;
        }
        return static_cast<const float*>(m_outputs[o].data());
    }
    Shape outputShape(size_t o) const override { return m_outputShapes[o]; }
    CudaPlan& plan() { return *m_plan; }

private:
    Status upload() {
        for (size_t k = 0; k < m_inputs.size(); ++k) KILN_TRY(m_plan->setInput(k, m_inputs[k].data()));
        for (size_t l = 0; l < m_targets.size(); ++l) KILN_TRY(m_plan->setTarget(l, m_targets[l].data()));
        return {};
    }
    // After a forward or step: the losses (one synchronisation), outputs downloaded on demand.
    Status finished() {
        std::fill(m_outputFresh.begin(), m_outputFresh.end(), 0);
        KILN_ASSIGN(m_lossValues, m_plan->losses());
        double sum = 0;  // weighted, as the gradients
        for (size_t l = 0; l < m_lossValues.size(); ++l)
            sum += static_cast<double>(m_lossWeights[l]) * static_cast<double>(m_lossValues[l]);
        m_loss = sum;
        return {};
    }

    CudaBackend* m_owner;
    std::unique_ptr<CudaPlan> m_plan;
    std::vector<std::vector<float>> m_inputs, m_targets, m_outputs;
    std::vector<Shape> m_outputShapes;
    std::vector<char> m_outputFresh;
    std::vector<float> m_lossValues, m_lossWeights;
    double m_loss = 0;
};

class CudaBackend final : public exec::ComputeBackend {
public:
    CudaBackend(const exec::BackendSetup& setup, std::unique_ptr<DeviceContext> ctx)
        : m_setup(setup), m_ctx(std::move(ctx)), m_precision(setup.precision) {}

    ~CudaBackend() override {
        // Plans, the optimizer and the NCCL communicator hold resources of the context: free them first.
        m_nccl.reset();
        m_optimizer.reset();
        m_runners.clear();
        m_hostOptimizer.reset();
    }

    std::string device() const override { return m_ctx->name(); }

    // Data parallel across processes, one GPU each: an NCCL communicator among the group's
    // devices, set up through the group itself (rank 0 makes the NCCL id and broadcasts it).
    Status joinGroup() {
        exec::Reducer& group = *m_setup.group;
        for (const auto& n : m_setup.model->graph.nodes)
            if (n.op == "BatchNormalization" && n.attrs.has("synchronized") && n.attrs.getBool("synchronized"))
                return Error(ErrorCode::Unsupported,
                             "BatchNormalization \"" + n.name +
                                 "\" is synchronized; synchronised batch normalisation across GPUs is not available, "
                                 "only across CPU processes")
                    .withNode(n.name)
                    .with("what", "synchronized BatchNormalization on GPUs");
#ifdef KILN_HAVE_NCCL
        const size_t idBytes = static_cast<size_t>(ncclUniqueIdBytes());
        std::string id = group.rank() == 0 ? ncclNewUniqueId() : std::string(idBytes, '\0');
        // The id's bytes travel as the floats 0..255, which any transport carries exactly.
        std::vector<float> carried(idBytes);
        for (size_t i = 0; i < idBytes; ++i) carried[i] = static_cast<float>(static_cast<unsigned char>(id[i]));
        KILN_TRY(group.broadcast(carried.data(), static_cast<int64_t>(idBytes), 0));
        for (size_t i = 0; i < idBytes; ++i) id[i] = static_cast<char>(static_cast<unsigned char>(carried[i]));
        KILN_ASSIGN(m_nccl, createNcclReducer(*m_ctx, group.rank(), group.size(), id));
        m_notes.push_back("data parallel: rank " + std::to_string(group.rank()) + " of " + std::to_string(group.size()) +
                          ", gradients averaged with NCCL " + std::to_string(ncclRuntimeVersion()));
        return {};
#else
        return Error(ErrorCode::Unsupported, "training on several GPUs needs Kiln built with NCCL")
            .with("what", "NCCL");
#endif
    }

    // The gradients of the global batch: each replica's weighted by its rows, summed over the
    // group's GPUs, divided by the global batch's rows (the sum of the replicas' rows).
    Status averageGradients(CudaPlan& plan) {
        double rows = static_cast<double>(plan.batch());
        KILN_TRY(m_setup.group->allReduceSum(&rows, 1));
        return plan.allReduceGradients(*m_nccl, static_cast<float>(plan.batch()), static_cast<float>(1.0 / rows));
    }

    Status init() {
        if (m_setup.group) KILN_TRY(joinGroup());
        // The device optimizer needs a plan's parameters: the full training batch's plan.
        KILN_ASSIGN(auto* r, runnerImpl(m_setup.batchSize, true));
        auto opt = CudaOptimizer::create(m_setup.optimizer, r->plan());
        if (opt.ok()) {
            m_optimizer = std::move(opt.value());
        } else if (opt.error().code == ErrorCode::Unsupported) {
            // AMSGrad, RMSprop, clipping: gradients come to the host, the host optimizer updates
            // the host weights, which go back to the device after each step.
            KILN_ASSIGN(auto host, optim::Optimizer::create(m_setup.optimizer));
            for (auto& p : m_setup.params->params())
                if (p.trainable)
                    host.addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel(), p.lrMultiplier,
                                      p.decay);
            m_hostOptimizer = std::make_unique<optim::Optimizer>(std::move(host));
            m_notes.push_back("optimizer: updates on the host (this configuration has no device kernel)");
        } else {
            return opt.error();
        }
        return {};
    }

    Result<exec::BatchRunner*> runner(int64_t batch, bool training) override {
        KILN_ASSIGN(CudaRunner * r, runnerImpl(batch, training));
        return static_cast<exec::BatchRunner*>(r);
    }

    Result<CudaRunner*> runnerImpl(int64_t batch, bool training) {
        auto key = std::make_pair(batch, training);
        if (auto it = m_runners.find(key); it != m_runners.end()) return it->second.get();
        CudaPlanOptions o;
        o.batch = batch;
        o.training = training;
        o.losses = m_setup.losses;
        o.seed = m_setup.seed;
        o.precision = m_precision;
        o.shareParameters = m_shared;
        auto plan = CudaPlan::compile(*m_setup.model, *m_setup.params, o, *m_ctx, *m_setup.pool);
        if (!plan.ok()) return withPrediction(plan.error());
        if (!m_shared) {
            m_shared = (*plan)->sharedParameters();
            const auto& pl = (*plan)->placement();
            if (!pl.cpuNodes.empty()) {
                std::string list;
                for (const auto& n : pl.cpuNodes) list += (list.empty() ? "" : ", ") + n;
                m_notes.push_back("on the CPU (no CUDA kernel for their configuration): " + list);
            }
        }
        auto r = std::make_unique<CudaRunner>(*this, std::move(plan.value()), *m_setup.model, m_setup.losses);
        CudaRunner* raw = r.get();
        m_runners[key] = std::move(r);
        return raw;
    }

    // One update after a forward/backward pass with gradients scaled by `scale`; false when the
    // gradients overflowed (mixed float16) and the step is skipped.
    Result<bool> update(CudaPlan& plan, double lr, float scale) {
        // Averaged first, so that an overflow on one GPU skips the step on every GPU.
        if (m_nccl) KILN_TRY(averageGradients(plan));
        m_lastGradScale = scale;
        if (m_precision == Precision::Fp16) {
            KILN_ASSIGN(bool finite, plan.gradientsFinite());
            if (!m_scaler.update(finite)) return false;
        }
        if (m_optimizer) {
            KILN_TRY(m_optimizer->step(lr, 1.0f / scale));
            ++m_iterations;
            return true;
        }
        // Host fallback: unscaled gradients to the host, update there, weights back.
        auto& ps = m_setup.params->params();
        auto& dp = plan.deviceParams();
        for (size_t i = 0; i < ps.size(); ++i) {
            if (!dp[i].trainable) continue;
            if (scale != 1.0f) k::scale(dp[i].grad, 1.0f / scale, dp[i].n, m_ctx->stream());
            KILN_TRY(m_ctx->download(ps[i].grad.data<float>(), dp[i].grad, static_cast<size_t>(dp[i].n) * 4));
        }
        m_hostOptimizer->step(lr, *m_setup.pool);
        ++m_iterations;
        KILN_TRY(pushParameters());
        return true;
    }

    float lossScale() const { return m_precision == Precision::Fp16 ? m_scaler.scale() : 1.0f; }

    Status pullParameters() override {
        if (m_runners.empty()) return {};
        return m_runners.begin()->second->plan().downloadParams();
    }
    Status pullGradients() override {
        // The host optimizer's path leaves the unscaled gradients on the host already.
        if (m_runners.empty() || m_hostOptimizer) return {};
        auto& ps = m_setup.params->params();
        auto& dp = m_runners.begin()->second->plan().deviceParams();
        KILN_TRY(m_ctx->synchronize());
        for (size_t i = 0; i < ps.size() && i < dp.size(); ++i) {
            if (!dp[i].trainable || !dp[i].grad) continue;
            float* host = ps[i].grad.data<float>();
            KILN_TRY(m_ctx->download(host, dp[i].grad, static_cast<size_t>(dp[i].n) * 4));
            // The device keeps them multiplied by the step's loss scale (mixed float16).
            if (m_lastGradScale != 1.0f)
                for (int64_t k = 0; k < dp[i].n; ++k) host[k] /= m_lastGradScale;
        }
        return {};
    }
    Status pushParameters() override {
        if (m_runners.empty()) return {};
        return m_runners.begin()->second->plan().uploadParams();
    }

    int64_t optimizerStateSize() const override {
        if (m_hostOptimizer) return m_hostOptimizer->stateSize();
        return m_optimizer ? m_optimizer->stateFloats() : 0;
    }
    Status saveOptimizerState(float* out) override {
        if (m_hostOptimizer) {
            m_hostOptimizer->saveState(out);
            return {};
        }
        return m_optimizer ? m_optimizer->downloadState(out) : Status{};
    }
    Status loadOptimizerState(const float* in) override {
        if (m_hostOptimizer) {
            m_hostOptimizer->loadState(in);
            return {};
        }
        return m_optimizer ? m_optimizer->uploadState(in) : Status{};
    }
    int64_t iterations() const override { return m_iterations; }
    void setIterations(int64_t n) override {
        m_iterations = n;
        if (m_optimizer) m_optimizer->setIterations(n);
        if (m_hostOptimizer) m_hostOptimizer->setIterations(n);
    }

    nlohmann::json extraState() const override {
        if (m_precision != Precision::Fp16) return nullptr;
        return {{"loss_scale", m_scaler.scale()},
                {"clean_streak", m_scaler.cleanStreak()},
                {"skipped_steps", m_scaler.skippedSteps()}};
    }
    Status loadExtraState(const nlohmann::json& state) override {
        if (m_precision != Precision::Fp16 || !state.is_object() || !state.contains("loss_scale")) return {};
        try {
            m_scaler.restore(state.at("loss_scale").get<float>(), state.value("clean_streak", int64_t{0}),
                             state.value("skipped_steps", int64_t{0}));
        } catch (const nlohmann::json::exception& e) {
            return Error(ErrorCode::DataError, std::string("the saved loss scale is unreadable: ") + e.what())
                .with("field", "backend.loss_scale");
        }
        return {};
    }

    exec::DeviceMemory memory() const override {
        const auto s = m_ctx->allocator().stats();
        exec::DeviceMemory m;
        m.inUse = s.inUse;
        m.reserved = s.reserved;
        m.peak = s.peakInUse;
        m.limit = s.cap;
        m.total = m_total;
        return m;
    }

    std::vector<std::string> describe() const override {
        std::vector<std::string> lines{m_ctx->name() + ": " + m_name + ", precision " +
                                       precisionName(m_precision) + ", memory limit " +
                                       exec::formatBytes(m_ctx->allocator().stats().cap)};
        lines.insert(lines.end(), m_notes.begin(), m_notes.end());
        // Convolutions that could not run in 16 bits (known once a step has run).
        for (const auto& note : convolutionNotes()) lines.push_back(note);
        return lines;
    }

    void setDeviceInfo(std::string name, uint64_t total) {
        m_name = std::move(name);
        m_total = total;
    }

    // An out-of-memory error with what the memory assistant predicted and a batch that fits.
    Error withPrediction(Error e) const {
        if (e.code != ErrorCode::OutOfMemory) return e;
        exec::MemoryOptions mo;
        mo.batch = m_setup.batchSize;
        mo.precision = m_precision;
        mo.optimizer = m_setup.optimizer;
        mo.losses = m_setup.losses;
        mo.cuda = true;
        auto predicted = exec::estimateMemory(*m_setup.model, mo);
        const auto s = m_ctx->allocator().stats();
        auto fits = exec::largestBatch(*m_setup.model, mo, s.cap, m_setup.batchSize);
        uint64_t requested = 0;
        for (const auto& [k, v] : e.params)
            if (k == "requested") requested = std::stoull(v);
        return exec::outOfMemoryError(requested, s.inUse, s.cap, m_ctx->name(),
                                      predicted.ok() ? &*predicted : nullptr,
                                      fits.ok() && *fits < m_setup.batchSize ? *fits : 0);
    }

private:
    exec::BackendSetup m_setup;
    std::unique_ptr<DeviceContext> m_ctx;
    std::unique_ptr<exec::Reducer> m_nccl;  // data parallel: the group's GPUs (device pointers)
    Precision m_precision;
    std::shared_ptr<DeviceParameters> m_shared;
    std::map<std::pair<int64_t, bool>, std::unique_ptr<CudaRunner>> m_runners;
    std::unique_ptr<CudaOptimizer> m_optimizer;
    std::unique_ptr<optim::Optimizer> m_hostOptimizer;
    optim::LossScaler m_scaler;
    float m_lastGradScale = 1.0f;  // the loss scale of the last step's gradients
    int64_t m_iterations = 0;
    std::vector<std::string> m_notes;
    std::string m_name;
    uint64_t m_total = 0;
};

CudaRunner::CudaRunner(CudaBackend& owner, std::unique_ptr<CudaPlan> plan, const ops::ModelInfo& model,
                       const std::vector<exec::LossSpec>& losses)
    : m_owner(&owner), m_plan(std::move(plan)) {
    const int64_t b = m_plan->batch();
    for (int i : model.inputs)
        m_inputs.emplace_back(static_cast<size_t>(model.nodes[static_cast<size_t>(i)].output.withBatch(b).numel()));
    for (const auto& l : losses) {
        m_targets.emplace_back(static_cast<size_t>(std::max<int64_t>(1, l.targetShape.numel()) * b));
        m_lossWeights.push_back(l.weight);
    }
    for (int o : model.outputs) {
        m_outputShapes.push_back(model.nodes[static_cast<size_t>(o)].output.withBatch(b));
        m_outputs.emplace_back(static_cast<size_t>(m_outputShapes.back().numel()));
    }
    m_outputFresh.assign(m_outputs.size(), 0);
}

Result<bool> CudaRunner::trainStep(uint64_t globalStep, double lr) {
    KILN_TRY(upload());
    const float scale = m_owner->lossScale();
    Status st = m_plan->trainStep(globalStep, scale);
    if (!st.ok()) return m_owner->withPrediction(st.error());
    KILN_TRY(finished());
    auto applied = m_owner->update(*m_plan, lr, scale);
    if (!applied.ok()) return m_owner->withPrediction(applied.error());
    return *applied;
}

}  // namespace

Result<CudaBackendOptions> cudaBackendOptions(const std::string& device, const std::string& memoryLimit) {
    CudaBackendOptions o;
    auto d = Device::parse(device);
    if (!d.ok() || d->isCpu())
        return Error(ErrorCode::ConfigError, "training.device must be cuda or cuda:N for the CUDA backend")
            .with("field", "training.device")
            .with("reason", "not a CUDA device");
    o.device = d->index;
    if (!memoryLimit.empty()) {
        auto m = MemoryLimit::parse(memoryLimit);
        if (!m.ok())
            return Error(ErrorCode::ConfigError,
                         "training.memory_limit must be growth, all, a fraction (0.8, 80%) or a size (12GiB), not \"" +
                             memoryLimit + "\"")
                .with("field", "training.memory_limit")
                .with("reason", "must be growth, all, a fraction or a size");
        o.memory = *m;
    }
    return o;
}

Result<std::unique_ptr<exec::ComputeBackend>> makeCudaBackend(const exec::BackendSetup& setup,
                                                              const CudaBackendOptions& options) {
    if (deviceCount() <= options.device)
        return Error(ErrorCode::DeviceUnavailable,
                     "cuda:" + std::to_string(options.device) + " is not available: " + unavailableReason())
            .with("device", "cuda:" + std::to_string(options.device));
    KILN_ASSIGN(auto ctx, DeviceContext::create(options.device, options.memory));
    auto backend = std::make_unique<CudaBackend>(setup, std::move(ctx));
    if (auto list = listDevices(); list.ok())
        for (const auto& info : *list)
            if (info.index == options.device) backend->setDeviceInfo(info.name, info.totalMemory);
    KILN_TRY(backend->init());
    return std::unique_ptr<exec::ComputeBackend>(std::move(backend));
}

exec::BackendFactory cudaBackendFactory(const CudaBackendOptions& options) {
    return [options](const exec::BackendSetup& setup) { return makeCudaBackend(setup, options); };
}

}  // namespace kiln::engine::cuda
