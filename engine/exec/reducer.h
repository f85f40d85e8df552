// SPDX-License-Identifier: Apache-2.0
// Collective operations among the replicas of one data-parallel run, behind one interface: in
// process (train::InProcessGroup), over MPI (train/mpi) or over NCCL between GPUs
// (engine/backends/cuda/nccl_reducer.h, where the data pointers are device pointers).
#pragma once

#include <cstdint>

#include "engine/core/error.h"

namespace kiln::engine::exec {

// Every replica calls the same operations in the same order with the same sizes; results are
// identical on every replica.
class Reducer {
public:
    virtual ~Reducer() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Element-wise sums over all replicas, in place.
    virtual Status allReduceSum(float* data, int64_t n) = 0;
    virtual Status allReduceSum(double* data, int64_t n) = 0;
    // Copies root's data to every replica.
    virtual Status broadcast(float* data, int64_t n, int root) = 0;
};

}  // namespace kiln::engine::exec
