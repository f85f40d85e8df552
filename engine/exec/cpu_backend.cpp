// SPDX-License-Identifier: Apache-2.0
// The CPU compute backend: Plan per batch size, optim::Optimizer updating in place.
#include "engine/exec/backend.h"

#include <map>

#include "engine/exec/replica_sync.h"

namespace kiln::engine::exec {
namespace {

class CpuRunner final : public BatchRunner {
public:
    CpuRunner(std::unique_ptr<Plan> plan, optim::Optimizer& opt, ThreadPool& pool, ParamStore& params,
              ReplicaSync* sync)
        : m_plan(std::move(plan)), m_opt(&opt), m_pool(&pool), m_params(&params), m_sync(sync) {}
    int64_t batch() const override { return m_plan->batch(); }
    float* input(size_t k) override { return m_plan->input(k); }
    float* target(size_t l) override { return m_plan->target(l); }
    Status forward() override { return m_plan->forward(0); }
    Result<bool> trainStep(uint64_t globalStep, double lr) override {
        if (!m_sync) {
            KILN_TRY(m_plan->trainStep(globalStep));
        } else {
            // Synchronised BatchNormalization layers reduce through the group during the step.
            kernels::setBatchNormSync(m_sync);
            Status st = m_plan->trainStep(globalStep);
            kernels::setBatchNormSync(nullptr);
            KILN_TRY(st);
            KILN_TRY(m_sync->averageGradients(*m_params, m_plan->batch()));
        }
        m_opt->step(lr, *m_pool);
        return true;
    }
    Result<double> totalLoss() override { return static_cast<double>(m_plan->totalLoss()); }
    std::span<const float> lossValues() const override { return m_plan->lossValues(); }
    Result<const float*> output(size_t o) override { return m_plan->output(o); }
    Shape outputShape(size_t o) const override { return m_plan->outputShape(o); }
    Plan* plan() { return m_plan.get(); }

private:
    std::unique_ptr<Plan> m_plan;
    optim::Optimizer* m_opt;
    ThreadPool* m_pool;
    ParamStore* m_params;
    ReplicaSync* m_sync;  // null: one replica
};

class CpuBackend final : public ComputeBackend {
public:
    explicit CpuBackend(const BackendSetup& s, optim::Optimizer opt) : m_setup(s), m_opt(std::move(opt)) {
        if (s.group) m_sync = std::make_unique<ReplicaSync>(*s.group, *s.params);
    }

    std::string device() const override { return "cpu"; }

    Result<BatchRunner*> runner(int64_t batch, bool training) override {
        KILN_ASSIGN(CpuRunner * r, find(batch, training));
        return static_cast<BatchRunner*>(r);
    }
    Result<CpuRunner*> find(int64_t batch, bool training) {
        auto key = std::make_pair(batch, training);
        if (auto it = m_runners.find(key); it != m_runners.end()) return it->second.get();
        CompileOptions o;
        o.batch = batch;
        o.training = training;
        o.losses = m_setup.losses;
        o.seed = m_setup.seed;
        KILN_ASSIGN(auto plan, Plan::compile(*m_setup.model, *m_setup.params, o, *m_setup.pool));
        auto r = std::make_unique<CpuRunner>(std::move(plan), m_opt, *m_setup.pool, *m_setup.params, m_sync.get());
        CpuRunner* raw = r.get();
        m_runners[key] = std::move(r);
        return raw;
    }
    CpuRunner* existing(int64_t batch, bool training) {
        auto it = m_runners.find({batch, training});
        return it == m_runners.end() ? nullptr : it->second.get();
    }

    // The plans work on the ParamStore's memory: nothing to move.
    Status pullParameters() override { return {}; }
    Status pushParameters() override { return {}; }
    int64_t optimizerStateSize() const override { return m_opt.stateSize(); }
    Status saveOptimizerState(float* out) override {
        m_opt.saveState(out);
        return {};
    }
    Status loadOptimizerState(const float* in) override {
        m_opt.loadState(in);
        return {};
    }
    int64_t iterations() const override { return m_opt.iterations(); }
    void setIterations(int64_t n) override { m_opt.setIterations(n); }

private:
    BackendSetup m_setup;
    optim::Optimizer m_opt;
    std::unique_ptr<ReplicaSync> m_sync;
    std::map<std::pair<int64_t, bool>, std::unique_ptr<CpuRunner>> m_runners;
};

}  // namespace

Result<std::unique_ptr<ComputeBackend>> makeCpuBackend(const BackendSetup& setup) {
    KILN_ASSIGN(auto opt, optim::Optimizer::create(setup.optimizer));
    for (auto& p : setup.params->params())
        if (p.trainable)
            opt.addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel(), p.lrMultiplier,
                             p.decay);
    return std::unique_ptr<ComputeBackend>(new CpuBackend(setup, std::move(opt)));
}

Plan* cpuPlan(ComputeBackend& backend, int64_t batch, bool training) {
    auto* cpu = dynamic_cast<CpuBackend*>(&backend);
    if (!cpu) return nullptr;
    CpuRunner* r = cpu->existing(batch, training);
    return r ? r->plan() : nullptr;
}

}  // namespace kiln::engine::exec
