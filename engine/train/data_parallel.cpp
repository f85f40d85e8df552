// SPDX-License-Identifier: Apache-2.0
// Data-parallel replicas: per-replica plans and optimizers, bucketed gradient all-reduce, the
// in-process reducer (a barrier and a shared sum buffer) and the synchronised-BatchNorm adapter.
#include "engine/train/data_parallel.h"

#include <barrier>
#include <cstring>
#include <thread>

#include "engine/core/rng.h"

#include "engine/ops/kernels/normalization.h"

namespace kiln::engine::train {

// ---- In-process reducer -------------------------------------------------------------------------

class InProcessGroup::Impl {
public:
    explicit Impl(int size) : m_size(size), m_barrier(size), m_slots(static_cast<size_t>(size)) {
        for (int r = 0; r < size; ++r) m_reducers.push_back(std::make_unique<Member>(*this, r));
    }

    // Every member posts its buffer; after a barrier each member sums a slice of all buffers (in
    // rank order) into the shared result; after a second barrier every member copies the result;
    // the third barrier keeps the next operation from overwriting it early.
    template <typename T>
    Status allReduce(int rank, T* data, int64_t n) {
        m_slots[static_cast<size_t>(rank)] = data;
        if (rank == 0) resize<T>(n);
        m_barrier.arrive_and_wait();
        T* result = static_cast<T*>(buffer<T>());
        const auto [b, e] = shardRange(n, rank, m_size);
        for (int64_t i = b; i < e; ++i) {
            T s = 0;
            for (int k = 0; k < m_size; ++k) s += static_cast<const T*>(m_slots[static_cast<size_t>(k)])[i];
            result[i] = s;
        }
        m_barrier.arrive_and_wait();
        std::memcpy(data, result, sizeof(T) * static_cast<size_t>(n));
        m_barrier.arrive_and_wait();
        return {};
    }

    Status broadcast(int rank, float* data, int64_t n, int root) {
        m_slots[static_cast<size_t>(rank)] = data;
        m_barrier.arrive_and_wait();
        if (rank != root)
            std::memcpy(data, m_slots[static_cast<size_t>(root)], sizeof(float) * static_cast<size_t>(n));
        m_barrier.arrive_and_wait();
        return {};
    }

    class Member final : public exec::Reducer {
    public:
        Member(Impl& group, int rank) : m_group(group), m_rank(rank) {}
        int rank() const override { return m_rank; }
        int size() const override { return m_group.m_size; }
        Status allReduceSum(float* data, int64_t n) override { return m_group.allReduce(m_rank, data, n); }
        Status allReduceSum(double* data, int64_t n) override { return m_group.allReduce(m_rank, data, n); }
        Status broadcast(float* data, int64_t n, int root) override {
            return m_group.broadcast(m_rank, data, n, root);
        }

    private:
        Impl& m_group;
        int m_rank;
    };

    int m_size;
    std::barrier<> m_barrier;
    std::vector<void*> m_slots;
    std::vector<std::unique_ptr<Member>> m_reducers;

private:
    // Rank 0 sizes the shared buffer before the first barrier; it only grows, so steady-state
    // steps allocate nothing.
    template <typename T>
    void resize(int64_t n) {
        auto& v = std::is_same_v<T, float> ? m_floats : m_doubles;
        const size_t bytes = sizeof(T) * static_cast<size_t>(n);
        if (v.size() < bytes) v.resize(bytes);
    }
    template <typename T>
    void* buffer() {
        return (std::is_same_v<T, float> ? m_floats : m_doubles).data();
    }
    std::vector<std::byte> m_floats, m_doubles;
};

InProcessGroup::InProcessGroup(int size) : m_impl(std::make_unique<Impl>(size)) {}
InProcessGroup::~InProcessGroup() = default;
int InProcessGroup::size() const {
    return m_impl->m_size;
}
exec::Reducer& InProcessGroup::reducer(int rank) {
    return *m_impl->m_reducers[static_cast<size_t>(rank)];
}

std::pair<int64_t, int64_t> shardRange(int64_t n, int rank, int size) {
    return {n * rank / size, n * (rank + 1) / size};
}

// ---- Replicas -----------------------------------------------------------------------------------

namespace {
// Routes BatchNorm's statistics through the replica's reducer.
class ReducerBatchNormSync final : public kernels::BatchNormSync {
public:
    explicit ReducerBatchNormSync(exec::Reducer& r) : m_reducer(r) {}
    bool allReduceSum(double* values, int64_t n) override { return m_reducer.allReduceSum(values, n).ok(); }
    // DataParallelOptions::syncBatchNorm applies to every layer.
    bool everyLayer() const override { return true; }

private:
    exec::Reducer& m_reducer;
};

Error configError(const std::string& field, const std::string& reason) {
    return Error(ErrorCode::ConfigError, field + " " + reason).with("field", field).with("reason", reason);
}
}  // namespace

struct DataParallel::Replica {
    int globalRank = 0;
    exec::Reducer* reducer = nullptr;
    std::unique_ptr<ThreadPool> pool;
    exec::ParamStore params;
    std::unique_ptr<exec::Plan> plan;
    std::unique_ptr<optim::Optimizer> optimizer;
    std::unique_ptr<ReducerBatchNormSync> bnSync;
    std::vector<float> bucket;  // packing buffer, the size of the largest bucket
    Status status;
};

DataParallel::~DataParallel() = default;

exec::Plan& DataParallel::plan(int local) {
    return *m_replicas[static_cast<size_t>(local)]->plan;
}
exec::ParamStore& DataParallel::params(int local) {
    return m_replicas[static_cast<size_t>(local)]->params;
}

Result<std::unique_ptr<DataParallel>> DataParallel::createLocal(const ops::ModelInfo& model,
                                                                const DataParallelOptions& options,
                                                                int replicas) {
    if (replicas < 1) return configError("replicas", "must be at least 1");
    auto group = std::make_unique<InProcessGroup>(replicas);
    std::vector<exec::Reducer*> reducers;
    for (int r = 0; r < replicas; ++r) reducers.push_back(&group->reducer(r));
    KILN_ASSIGN(auto dp, build(model, options, reducers, replicas));
    dp->m_group = std::move(group);
    return dp;
}

Result<std::unique_ptr<DataParallel>> DataParallel::createDistributed(
    const ops::ModelInfo& model, const DataParallelOptions& options, std::unique_ptr<exec::Reducer> reducer) {
    if (!reducer) return configError("reducer", "is missing");
    const int world = reducer->size();
    KILN_ASSIGN(auto dp, build(model, options, {reducer.get()}, world));
    dp->m_ownedReducer = std::move(reducer);
    // Every rank initialised from the same seed; the broadcast makes that an invariant even for
    // weights loaded differently per process.
    for (auto& p : dp->m_replicas[0]->params.params())
        KILN_TRY(dp->m_ownedReducer->broadcast(p.value.data<float>(), p.value.numel(), 0));
    return dp;
}

Result<std::unique_ptr<DataParallel>> DataParallel::build(const ops::ModelInfo& model,
                                                          const DataParallelOptions& options,
                                                          std::vector<exec::Reducer*> reducers,
                                                          int worldSize) {
    if (options.globalBatch <= 0 || options.globalBatch % worldSize != 0)
        return configError("batch_size", "must be a positive multiple of the number of replicas (" +
                                             std::to_string(worldSize) + ")");
    if (options.bucketFloats <= 0) return configError("bucket", "must hold at least one float");
    KILN_TRY(options.optimizer.validate());
    std::unique_ptr<DataParallel> dp(new DataParallel());
    dp->m_model = model;
    dp->m_options = options;
    dp->m_worldSize = worldSize;
    dp->m_shardBatch = options.globalBatch / worldSize;
    for (exec::Reducer* red : reducers) {
        auto r = std::make_unique<Replica>();
        r->globalRank = red->rank();
        r->reducer = red;
        r->pool = std::make_unique<ThreadPool>(std::max(1, options.threadsPerReplica));
        r->params = exec::ParamStore::create(dp->m_model, options.seed);
        exec::CompileOptions co;
        co.batch = dp->m_shardBatch;
        co.training = true;
        co.losses = options.losses;
        co.seed =
            rng::mix(options.seed, static_cast<uint64_t>(r->globalRank));  // distinct dropout masks per shard
        KILN_ASSIGN(r->plan, exec::Plan::compile(dp->m_model, r->params, co, *r->pool));
        KILN_ASSIGN(auto opt, optim::Optimizer::create(options.optimizer));
        r->optimizer = std::make_unique<optim::Optimizer>(std::move(opt));
        for (auto& p : r->params.params())
            if (p.trainable)
                r->optimizer->addParameter(p.value.data<float>(), p.grad.data<float>(), p.value.numel(),
                                           p.lrMultiplier, p.decay);
        if (options.syncBatchNorm) r->bnSync = std::make_unique<ReducerBatchNormSync>(*red);
        dp->m_replicas.push_back(std::move(r));
    }
    dp->m_buckets = makeBuckets(dp->m_replicas[0]->params, true, options.bucketFloats);
    if (!options.syncBatchNorm)
        dp->m_stateBuckets = makeBuckets(dp->m_replicas[0]->params, false, options.bucketFloats);
    int64_t largest = 0;
    for (const auto* list : {&dp->m_buckets, &dp->m_stateBuckets})
        for (const Bucket& bk : *list) largest = std::max(largest, bk.floats);
    for (auto& r : dp->m_replicas) r->bucket.assign(static_cast<size_t>(largest), 0.0f);
    for (int i : dp->m_model.inputs)
        dp->m_inputRowFloats.push_back(dp->m_model.nodes[static_cast<size_t>(i)].output.numelFrom(1));
    for (const auto& l : options.losses)
        dp->m_targetRowFloats.push_back(std::max<int64_t>(1, l.targetShape.numel()));
    return dp;
}

Status DataParallel::loadGlobalBatch(std::span<const float* const> inputs,
                                     std::span<const float* const> targets) {
    if (inputs.size() != m_inputRowFloats.size() || targets.size() != m_targetRowFloats.size())
        return Error(ErrorCode::InvalidArgument,
                     "the batch does not have one array per model input and loss target");
    for (auto& r : m_replicas) {
        const int64_t first = shardRange(m_options.globalBatch, r->globalRank, m_worldSize).first;
        for (size_t k = 0; k < inputs.size(); ++k)
            std::memcpy(r->plan->input(k), inputs[k] + first * m_inputRowFloats[k],
                        sizeof(float) * static_cast<size_t>(m_shardBatch * m_inputRowFloats[k]));
        for (size_t l = 0; l < targets.size(); ++l)
            std::memcpy(r->plan->target(l), targets[l] + first * m_targetRowFloats[l],
                        sizeof(float) * static_cast<size_t>(m_shardBatch * m_targetRowFloats[l]));
    }
    return {};
}

// Parameters in order, greedily packed; a tensor larger than a bucket is split across several.
std::vector<DataParallel::Bucket> DataParallel::makeBuckets(const exec::ParamStore& store, bool trainable,
                                                            int64_t bucketFloats) {
    std::vector<Bucket> out;
    Bucket cur;
    const auto& ps = store.params();
    for (size_t i = 0; i < ps.size(); ++i) {
        if (ps[i].trainable != trainable) continue;
        const int64_t n = ps[i].value.numel();
        for (int64_t at = 0; at < n;) {
            const int64_t take = std::min(n - at, bucketFloats - cur.floats);
            cur.pieces.push_back({static_cast<int>(i), at, take});
            cur.floats += take;
            at += take;
            if (cur.floats == bucketFloats) {
                out.push_back(std::move(cur));
                cur = Bucket{};
            }
        }
    }
    if (cur.floats > 0) out.push_back(std::move(cur));
    return out;
}

Status DataParallel::reduceBuckets(Replica& r, const std::vector<Bucket>& buckets, bool values,
                                   bool contribute) {
    auto& ps = r.params.params();
    auto data = [&](const Piece& pc) {
        auto& p = ps[static_cast<size_t>(pc.param)];
        return (values ? p.value.data<float>() : p.grad.data<float>()) + pc.offset;
    };
    const float scale = 1.0f / static_cast<float>(m_worldSize);
    Status result;
    for (const Bucket& b : buckets) {
        float* buf = r.bucket.data();
        int64_t at = 0;
        for (const Piece& pc : b.pieces) {
            if (contribute)
                std::memcpy(buf + at, data(pc), sizeof(float) * static_cast<size_t>(pc.floats));
            else
                std::memset(buf + at, 0, sizeof(float) * static_cast<size_t>(pc.floats));
            at += pc.floats;
        }
        // Every bucket is reduced even after an error, so the replicas stay in step.
        if (Status st = r.reducer->allReduceSum(buf, b.floats); !st.ok() && result.ok()) result = st;
        at = 0;
        for (const Piece& pc : b.pieces) {
            float* d = data(pc);
            for (int64_t i = 0; i < pc.floats; ++i) d[i] = buf[at + i] * scale;
            at += pc.floats;
        }
    }
    return result;
}

Status DataParallel::replicaStep(Replica& r, double lr, uint64_t globalStep) {
    kernels::setBatchNormSync(r.bnSync.get());
    Status st = r.plan->trainStep(globalStep);
    kernels::setBatchNormSync(nullptr);
    // A replica whose step failed still takes part in every collective (the others would wait
    // forever otherwise): it contributes zeros and reports its error afterwards.
    const bool ok = st.ok();
    if (Status red = reduceBuckets(r, m_buckets, false, ok); !red.ok() && st.ok()) st = red;
    if (Status red = reduceBuckets(r, m_stateBuckets, true, ok); !red.ok() && st.ok()) st = red;
    if (!st.ok()) return st;
    r.optimizer->step(lr, *r.pool);
    return {};
}

Status DataParallel::step(double lr, uint64_t globalStep) {
    if (m_replicas.size() == 1) {
        KILN_TRY(replicaStep(*m_replicas[0], lr, globalStep));
    } else {
        std::vector<std::thread> threads;
        threads.reserve(m_replicas.size() - 1);
        for (size_t k = 1; k < m_replicas.size(); ++k)
            threads.emplace_back(
                [&, k] { m_replicas[k]->status = replicaStep(*m_replicas[k], lr, globalStep); });
        m_replicas[0]->status = replicaStep(*m_replicas[0], lr, globalStep);
        for (auto& t : threads) t.join();
        for (auto& r : m_replicas) KILN_TRY(r->status);
    }
    double loss = 0;
    for (auto& r : m_replicas) loss += r->plan->totalLoss();
    m_lastLoss = loss / static_cast<double>(m_replicas.size());
    return {};
}

}  // namespace kiln::engine::train
