// SPDX-License-Identifier: Apache-2.0
// Activation epilogue and column sums shared by Dense and Conv2D.
#include "engine/ops/op_helpers.h"

#include <cstring>
#include <vector>

#include "engine/ops/kernels/elementwise.h"

namespace kiln::engine::ops::detail {

void ActivationEpilogue::forward(float* y, float* saved, ThreadPool& pool) const {
    const int64_t n = m_rows * m_cols;
    switch (m_act) {
    case kernels::Activation::Linear: return;
    case kernels::Activation::Softmax: kernels::softmaxForward(y, y, m_rows, m_cols, pool); return;
    case kernels::Activation::GELU:
        kernels::copy(y, saved, n, pool);
        kernels::activationForward(m_act, saved, y, n, kernels::kGeluExact, pool);
        return;
    default: kernels::activationForward(m_act, y, y, n, 0.0f, pool); return;
    }
}

const float* ActivationEpilogue::backward(const float* y, const float* dy, float* dpre, const float* saved,
                                          ThreadPool& pool) const {
    const int64_t n = m_rows * m_cols;
    switch (m_act) {
    case kernels::Activation::Linear: return dy;
    case kernels::Activation::Softmax:
        kernels::zero(dpre, n, pool);
        kernels::softmaxBackward(y, dy, dpre, m_rows, m_cols, pool);
        return dpre;
    case kernels::Activation::GELU:
        kernels::zero(dpre, n, pool);
        kernels::activationBackward(m_act, saved, y, dy, dpre, n, kernels::kGeluExact, pool);
        return dpre;
    default:
        kernels::activationBackward(m_act, nullptr, y, dy, dpre, n, 0.0f, pool, /*overwrite=*/true);
        return dpre;
    }
}

void addColumnSums(const float* m, int64_t rows, int64_t cols, float* out, ThreadPool& pool) {
    // Parallel over column blocks so each thread owns its outputs; rows summed in order.
    pool.parallelFor(cols, 64, [&](int64_t c0, int64_t c1) {
        for (int64_t r = 0; r < rows; ++r) {
            const float* row = m + r * cols;
            for (int64_t c = c0; c < c1; ++c) out[c] += row[c];
        }
    });
}

}  // namespace kiln::engine::ops::detail
