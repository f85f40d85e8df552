// SPDX-License-Identifier: Apache-2.0
// Gradient and state averaging over a Reducer: pack, all-reduce once, unpack.
#include "engine/exec/replica_sync.h"

#include <string>

namespace kiln::engine::exec {

ReplicaSync::ReplicaSync(Reducer& reducer, const ParamStore& params) : m_reducer(&reducer) {
    int64_t trainable = 0, state = 0;
    for (const auto& p : params.params()) (p.trainable ? trainable : state) += p.value.numel();
    m_gradients.assign(static_cast<size_t>(trainable + 1), 0.0f);
    m_state.assign(static_cast<size_t>(state + 1), 0.0);
}

Status ReplicaSync::averageGradients(ParamStore& params, int64_t rows) {
    const auto weight = static_cast<float>(rows);
    size_t at = 0, stateAt = 0;
    for (auto& p : params.params()) {
        const int64_t n = p.value.numel();
        if (p.trainable) {
            const float* g = p.grad.data<float>();
            for (int64_t i = 0; i < n; ++i) m_gradients[at + static_cast<size_t>(i)] = g[i] * weight;
            at += static_cast<size_t>(n);
        } else {
            const float* v = p.value.data<float>();
            for (int64_t i = 0; i < n; ++i) m_state[stateAt + static_cast<size_t>(i)] = double(v[i]) * double(rows);
            stateAt += static_cast<size_t>(n);
        }
    }
    m_gradients[at] = weight;
    m_state[stateAt] = static_cast<double>(rows);
    KILN_TRY(m_reducer->allReduceSum(m_gradients.data(), static_cast<int64_t>(m_gradients.size())));
    if (stateAt > 0) KILN_TRY(m_reducer->allReduceSum(m_state.data(), static_cast<int64_t>(m_state.size())));
    const float total = m_gradients[at];
    if (!(total > 0))
        return Error(ErrorCode::Internal, "no replica had samples in this step").with("replicas", std::to_string(m_reducer->size()));
    const float scale = 1.0f / total;
    at = 0;
    stateAt = 0;
    for (auto& p : params.params()) {
        const int64_t n = p.value.numel();
        if (p.trainable) {
            float* g = p.grad.data<float>();
            for (int64_t i = 0; i < n; ++i) g[i] = m_gradients[at + static_cast<size_t>(i)] * scale;
            at += static_cast<size_t>(n);
        } else {
            float* v = p.value.data<float>();
            const double rowsTotal = m_state[m_state.size() - 1];
            for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(m_state[stateAt + static_cast<size_t>(i)] / rowsTotal);
            stateAt += static_cast<size_t>(n);
        }
    }
    return {};
}

Status ReplicaSync::broadcastParameters(ParamStore& params, int root) {
    for (auto& p : params.params()) KILN_TRY(m_reducer->broadcast(p.value.data<float>(), p.value.numel(), root));
    return {};
}

bool ReplicaSync::allReduceSum(double* values, int64_t n) {
    return m_reducer->allReduceSum(values, n).ok();
}

}  // namespace kiln::engine::exec
