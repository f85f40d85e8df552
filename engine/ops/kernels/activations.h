// SPDX-License-Identifier: Apache-2.0
// Activation kernels (float32, Keras semantics): elementwise forward/backward, row softmax, and a
// bias + activation epilogue fused for use right after a GEMM.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// Keras semantics:
//   Linear     y = x
//   ReLU       y = max(x, 0);            dy/dx = [x > 0]
//   ReLU6      y = min(max(x, 0), 6);    dy/dx = [0 < x < 6]
//   LeakyReLU  y = x > 0 ? x : α·x;      dy/dx = x > 0 ? 1 : α   (param = α; Keras layer default 0.3)
//   Sigmoid    y = 1 / (1 + e^-x);       dy/dx = y(1 - y)
//   Tanh       y = tanh x;               dy/dx = 1 - y²
//   GELU       exact: y = x·Φ(x) = ½x(1 + erf(x/√2))   (Keras approximate=False, the default)
//              approximate (param != 0): y = ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
//   Softmax    over the last axis of a [rows, cols] view, max-subtracted (numerically stable).
//   SiLU       y = x·σ(x) (Keras "silu"/"swish");  dy/dx = σ(x)(1 + x(1 - σ(x)))
//   HardSigmoid y = relu6(x + 3) / 6;     dy/dx = [-3 < x < 3] / 6   (Keras 3, PyTorch)
//   HardSwish  y = x·relu6(x + 3) / 6;   dy/dx = 0 (x ≤ -3), 1 (x ≥ 3), (2x + 3)/6 otherwise
enum class Activation { Linear, ReLU, ReLU6, LeakyReLU, Sigmoid, Tanh, GELU, Softmax, SiLU, HardSigmoid, HardSwish };

// The Keras default α of the LeakyReLU layer.
inline constexpr float kLeakyReluDefaultAlpha = 0.3f;
// `param` values selecting the GELU form.
inline constexpr float kGeluExact = 0.0f;
inline constexpr float kGeluApproximate = 1.0f;

// y = act(x) elementwise over n elements (y may equal x). `param`: α for LeakyReLU, the GELU form
// (kGeluExact / kGeluApproximate) for GELU, ignored otherwise. Softmax here treats the n
// elements as ONE row; use softmaxForward for a [rows, cols] view.
void activationForward(Activation act, const float* x, float* y, int64_t n, float param, ThreadPool& pool);

// dx += dy · act'(x), accumulating. Which forward values are read:
//   Linear: neither x nor y (both may be null).
//   ReLU, ReLU6, LeakyReLU, HardSigmoid: x; when x is null, y instead (same result, for LeakyReLU
//   only when α > 0).
//   Sigmoid, Tanh: y; when y is null, recomputed from x.
//   GELU, SiLU, HardSwish: x (required).
//   Softmax: y (required), one row of n as in activationForward.
// With `overwrite`, dx = dy · act'(x) instead (the first write of dx).
void activationBackward(Activation act, const float* x, const float* y, const float* dy, float* dx,
                        int64_t n, float param, ThreadPool& pool, bool overwrite = false);

// y[r, :] = softmax(x[r, :]) for a row-major [rows, cols] view (y may equal x). An all -inf row
// gives NaN, as in Keras.
void softmaxForward(const float* x, float* y, int64_t rows, int64_t cols, ThreadPool& pool);

// dx[r, :] += y[r, :] ⊙ (dy[r, :] - <dy[r, :], y[r, :]>), from the softmax OUTPUT y.
void softmaxBackward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols, ThreadPool& pool);

// True when act'(pre) can be computed from the activation's output alone (what
// biasActivationBackward needs): Linear, ReLU, ReLU6, Sigmoid, Tanh, Softmax, HardSigmoid, and
// LeakyReLU with α > 0. False for GELU, SiLU and HardSwish (not invertible from y) and LeakyReLU
// with α ≤ 0.
bool activationDerivableFromOutput(Activation act, float param);

// The fused epilogue after a GEMM: y[r, c] = act(y[r, c] + bias[c]) in place on a row-major
// [rows, cols] matrix; bias is nullable (then just the activation). Every activation is
// supported; Softmax runs per row after the bias is added.
void biasActivationForward(float* y, const float* bias, int64_t rows, int64_t cols, Activation act,
                           float param, ThreadPool& pool);

// Backward of biasActivationForward from its OUTPUT yPost: dpre = dy ⊙ act'(pre) (OVERWRITTEN,
// it is the gradient w.r.t. the GEMM result, which the caller feeds to the GEMM backward), and
// dbias[c] += Σ_r dpre[r, c] (ACCUMULATED; nullable; summed over rows in a fixed order, so
// deterministic). dpre may equal dy. Supported activations: those for which
// activationDerivableFromOutput is true (Linear, ReLU, ReLU6, Sigmoid, Tanh, Softmax, LeakyReLU
// with α > 0). Returns false, writing nothing, for the others (GELU): then keep the pre-activation
// and use activationBackward instead.
bool biasActivationBackward(const float* yPost, const float* dy, float* dpre, float* dbias,
                            int64_t rows, int64_t cols, Activation act, float param, ThreadPool& pool);

// y = min(max(x, lo), hi) elementwise (lo < hi; NaN stays NaN). y may equal x.
void clipForward(const float* x, float* y, int64_t n, float lo, float hi, ThreadPool& pool);
// dx += dy · [lo < x < hi], from the forward input x.
void clipBackward(const float* x, const float* dy, float* dx, int64_t n, float lo, float hi, ThreadPool& pool);

}  // namespace kiln::engine::kernels
