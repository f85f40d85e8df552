// SPDX-License-Identifier: Apache-2.0
// Data-parallel training: K replicas, each with its own plan over a shard of the global batch,
// gradients summed across replicas in buckets through a Reducer, then the same optimizer step on
// every replica, so the weights stay identical. BatchNorm statistics can be synchronised.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/exec/reducer.h"
#include "engine/ops/model.h"
#include "engine/optim/optimizer.h"

namespace kiln::engine::train {

// Replicas on threads of one process. Sums are taken in rank order, so every replica receives
// bit-identical results whatever the scheduling.
class InProcessGroup {
public:
    explicit InProcessGroup(int size);
    ~InProcessGroup();
    int size() const;
    exec::Reducer& reducer(int rank);

    class Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// The rows [begin, end) of n rows (a global batch, a dataset) that replica `rank` of `size` takes:
// contiguous, sizes differ by at most one.
std::pair<int64_t, int64_t> shardRange(int64_t n, int rank, int size);

struct DataParallelOptions {
    int64_t globalBatch = 32;        // over all replicas of all processes; divisible by their number
    bool syncBatchNorm = false;      // BatchNorm statistics over the global batch
    int64_t bucketFloats = 1 << 20;  // gradients are reduced in buckets of at most this many floats
    uint64_t seed = 0;               // parameter initialisation (the same on every replica)
    std::vector<exec::LossSpec> losses;
    optim::OptimizerConfig optimizer;
    int threadsPerReplica = 1;  // CPU threads of each in-process replica's pool
};

class DataParallel {
public:
    // `replicas` replicas in this process, one thread each, reduced in process.
    static Result<std::unique_ptr<DataParallel>> createLocal(const ops::ModelInfo& model,
                                                             const DataParallelOptions& options,
                                                             int replicas);
    // One replica in this process; `reducer` connects it to the others (MPI ranks, say).
    static Result<std::unique_ptr<DataParallel>> createDistributed(const ops::ModelInfo& model,
                                                                   const DataParallelOptions& options,
                                                                   std::unique_ptr<exec::Reducer> reducer);
    ~DataParallel();

    int localReplicas() const { return static_cast<int>(m_replicas.size()); }
    int worldSize() const { return m_worldSize; }
    int64_t shardBatch() const { return m_shardBatch; }
    int64_t bucketCount() const { return static_cast<int64_t>(m_buckets.size()); }
    exec::Plan& plan(int local);
    exec::ParamStore& params(int local);

    // Copies each local replica's shard out of a global batch: inputs[k] holds globalBatch rows
    // of Input node k, targets[l] globalBatch rows of loss l's target (row-major float32).
    Status loadGlobalBatch(std::span<const float* const> inputs, std::span<const float* const> targets);
    // One training step on every local replica: forward, backward, gradient all-reduce (mean),
    // optimizer update with learning rate `lr`.
    Status step(double lr, uint64_t globalStep);
    // Mean total loss of the last step over the local replicas.
    double lastLoss() const { return m_lastLoss; }

    struct Replica;

private:
    DataParallel() = default;
    static Result<std::unique_ptr<DataParallel>> build(const ops::ModelInfo& model,
                                                       const DataParallelOptions& options,
                                                       std::vector<exec::Reducer*> reducers, int worldSize);
    Status replicaStep(Replica& r, double lr, uint64_t globalStep);

    struct Piece {
        int param = 0;       // index into the ParamStore
        int64_t offset = 0;  // first float of the gradient in this piece
        int64_t floats = 0;
    };
    struct Bucket {
        std::vector<Piece> pieces;  // in parameter order
        int64_t floats = 0;
    };
    static std::vector<Bucket> makeBuckets(const exec::ParamStore& ps, bool trainable, int64_t bucketFloats);
    // Sums the buckets' floats (gradients, or values when `values`) over all replicas and
    // divides by their number; `contribute` false sends zeros (a replica whose step failed).
    Status reduceBuckets(Replica& r, const std::vector<Bucket>& buckets, bool values, bool contribute);

    ops::ModelInfo m_model;
    DataParallelOptions m_options;
    int m_worldSize = 1;
    int64_t m_shardBatch = 0;
    std::unique_ptr<InProcessGroup> m_group;
    std::unique_ptr<exec::Reducer> m_ownedReducer;
    std::vector<std::unique_ptr<Replica>> m_replicas;
    std::vector<Bucket> m_buckets;       // trainable gradients
    std::vector<Bucket> m_stateBuckets;  // non-trainable values (moving statistics), averaged
                                         // each step unless BatchNorm is synchronised
    std::vector<int64_t> m_inputRowFloats;
    std::vector<int64_t> m_targetRowFloats;
    double m_lastLoss = 0;
};

}  // namespace kiln::engine::train
