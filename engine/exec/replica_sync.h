// SPDX-License-Identifier: Apache-2.0
// One replica's part in data-parallel training across processes (MPI ranks): after each backward
// pass the gradients are averaged over the group, weighted by each replica's rows, so every
// replica takes the same optimizer step; non-trainable values (moving statistics) are averaged
// too, and BatchNormalization layers marked `synchronized` reduce their statistics through it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/error.h"
#include "engine/exec/param_store.h"
#include "engine/exec/reducer.h"
#include "engine/ops/kernels/normalization.h"

namespace kiln::engine::exec {

class ReplicaSync final : public kernels::BatchNormSync {
public:
    // Sizes the packing buffers for `params` (the same layout on every replica).
    ReplicaSync(Reducer& reducer, const ParamStore& params);

    Reducer& reducer() { return *m_reducer; }

    // Gradients of the trainable parameters := sum over replicas of rows_r * grad_r / sum of rows_r,
    // the gradient of the whole global batch when each replica's loss is a mean over its rows.
    // Non-trainable values are averaged the same way (identical values stay bit-identical: the
    // sums are taken in double).
    Status averageGradients(ParamStore& params, int64_t rows);
    // Every replica takes `root`'s parameter values.
    Status broadcastParameters(ParamStore& params, int root);

    // kernels::BatchNormSync: only layers marked `synchronized`.
    bool allReduceSum(double* values, int64_t n) override;

private:
    Reducer* m_reducer;
    std::vector<float> m_gradients;  // packed trainable gradients, then the row count
    std::vector<double> m_state;     // packed non-trainable values, then the row count
};

}  // namespace kiln::engine::exec
