// SPDX-License-Identifier: Apache-2.0
// Activation kernels. Each activation is one branch-free loop over a contiguous range; the
// parallel split comes from parallelElements (elementwise) or whole rows (softmax, bias epilogue).
#include "engine/ops/kernels/activations.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "engine/ops/kernels/elementwise.h"

namespace kiln::engine::kernels {

namespace {

// Elements per parallel chunk for cheap activations (compare/select/multiply).
constexpr int64_t kGrain = 16384;
// expf/erff/tanhf cost ten or more times a multiply, so smaller chunks already pay off.
constexpr int64_t kTranscendentalGrain = 4096;
// The bias epilogue works on groups of whole rows of about this many elements, so the bias add
// and the activation pass hit the same L1-resident data.
constexpr int64_t kEpilogueBlock = 2048;
// biasActivationBackward sums dbias over rows for this many columns at a time (a stack tile of
// doubles).
constexpr int64_t kBiasTile = 256;

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;   // 1/√(2π), the normal density at 0
constexpr float kSqrt2OverPi = 0.79788456080286535588f;  // √(2/π)
constexpr float kGeluCubic = 0.044715f;
constexpr float kRelu6Cap = 6.0f;
// The hard activations: relu6(x + 3) / 6.
constexpr float kHardShift = 3.0f;
constexpr float kHardScale = 1.0f / 6.0f;

inline float hardSigmoid(float v) {
    const float t = v + kHardShift;
    const float r = t < 0.0f ? 0.0f : t;
    return (r > kRelu6Cap ? kRelu6Cap : r) * kHardScale;
}

bool isTranscendental(Activation act) {
    return act == Activation::Sigmoid || act == Activation::Tanh || act == Activation::GELU ||
           act == Activation::Softmax || act == Activation::SiLU;
}

int64_t grainFor(Activation act) { return isTranscendental(act) ? kTranscendentalGrain : kGrain; }

// Rows per parallel chunk for row-wise kernels over `cols` columns.
int64_t rowGrain(int64_t cols, int64_t elements) { return std::max<int64_t>(1, elements / std::max<int64_t>(cols, 1)); }

// Stable logistic: exp of a non-positive argument only, so it never overflows.
inline float sigmoid(float v) {
    const float e = std::exp(-std::fabs(v));
    const float r = 1.0f / (1.0f + e);
    return v >= 0.0f ? r : e * r;
}

// out = act(in) for len elements, act != Softmax; in may equal out.
void applyRange(Activation act, float param, const float* in, float* out, int64_t len) {
    switch (act) {
    case Activation::Linear:
        if (in != out)
            for (int64_t i = 0; i < len; ++i) out[i] = in[i];
        break;
    case Activation::ReLU:
        // `v < 0 ? 0 : v` keeps NaN as NaN.
        for (int64_t i = 0; i < len; ++i) out[i] = in[i] < 0.0f ? 0.0f : in[i];
        break;
    case Activation::ReLU6:
        for (int64_t i = 0; i < len; ++i) {
            const float v = in[i] < 0.0f ? 0.0f : in[i];
            out[i] = v > kRelu6Cap ? kRelu6Cap : v;
        }
        break;
    case Activation::LeakyReLU:
        for (int64_t i = 0; i < len; ++i) out[i] = in[i] > 0.0f ? in[i] : param * in[i];
        break;
    case Activation::Sigmoid:
        for (int64_t i = 0; i < len; ++i) out[i] = sigmoid(in[i]);
        break;
    case Activation::Tanh:
        for (int64_t i = 0; i < len; ++i) out[i] = std::tanh(in[i]);
        break;
    case Activation::GELU:
        if (param != 0.0f) {
            // ½x(1 + tanh u) = x·sigmoid(2u): the same value without the cancellation of
            // 1 + tanh u for negative x.
            for (int64_t i = 0; i < len; ++i) {
                const float v = in[i];
                out[i] = v * sigmoid(2.0f * kSqrt2OverPi * (v + kGeluCubic * v * v * v));
            }
        } else {
            // x·Φ(x) with Φ(x) = ½·erfc(-x/√2): unlike 1 + erf(x/√2) this does not cancel for
            // negative x, so the small negative tail keeps its relative accuracy.
            for (int64_t i = 0; i < len; ++i) {
                const float v = in[i];
                out[i] = 0.5f * v * std::erfc(-v * kInvSqrt2);
            }
        }
        break;
    case Activation::SiLU:
        for (int64_t i = 0; i < len; ++i) out[i] = in[i] * sigmoid(in[i]);
        break;
    case Activation::HardSigmoid:
        for (int64_t i = 0; i < len; ++i) out[i] = hardSigmoid(in[i]);
        break;
    case Activation::HardSwish:
        for (int64_t i = 0; i < len; ++i) out[i] = in[i] * hardSigmoid(in[i]);
        break;
    case Activation::Softmax:
        assert(false && "softmax is row-wise; handled by the callers");
        break;
    }
}

// Writes (kAccumulate: adds) g into o.
template <bool kAccumulate>
inline void store(float& o, float g) {
    if constexpr (kAccumulate)
        o += g;
    else
        o = g;
}

void softmaxRow(const float* x, float* y, int64_t cols) {
    float m = x[0];
    for (int64_t c = 1; c < cols; ++c) m = x[c] > m ? x[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
        const float e = std::exp(x[c] - m);
        y[c] = e;
        s += e;
    }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; ++c) y[c] *= inv;
}

// dx (+)= y ⊙ (dy - <dy, y>) for one row; dx may equal dy (the dot is taken first).
template <bool kAccumulate>
void softmaxBackwardRow(const float* y, const float* dy, float* dx, int64_t cols) {
    double dot = 0.0;
    for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(dy[c]) * y[c];
    const float d = static_cast<float>(dot);
    for (int64_t c = 0; c < cols; ++c) store<kAccumulate>(dx[c], y[c] * (dy[c] - d));
}

// dx (+)= dy · act'(pre), with act' computed from the output y (see activationDerivableFromOutput;
// not Softmax, which is row-wise). dx may equal dy.
template <bool kAccumulate>
void derivativeFromOutput(Activation act, float param, const float* y, const float* dy, float* dx, int64_t len) {
    switch (act) {
    case Activation::Linear:
        for (int64_t i = 0; i < len; ++i) store<kAccumulate>(dx[i], dy[i]);
        break;
    case Activation::ReLU:
        for (int64_t i = 0; i < len; ++i) store<kAccumulate>(dx[i], y[i] > 0.0f ? dy[i] : 0.0f);
        break;
    case Activation::ReLU6:
        for (int64_t i = 0; i < len; ++i)
            store<kAccumulate>(dx[i], (y[i] > 0.0f && y[i] < kRelu6Cap) ? dy[i] : 0.0f);
        break;
    case Activation::LeakyReLU:  // α > 0: y > 0 exactly when x > 0
        for (int64_t i = 0; i < len; ++i) store<kAccumulate>(dx[i], y[i] > 0.0f ? dy[i] : param * dy[i]);
        break;
    case Activation::Sigmoid:
        for (int64_t i = 0; i < len; ++i) store<kAccumulate>(dx[i], dy[i] * (y[i] * (1.0f - y[i])));
        break;
    case Activation::Tanh:
        for (int64_t i = 0; i < len; ++i) store<kAccumulate>(dx[i], dy[i] * (1.0f - y[i] * y[i]));
        break;
    case Activation::HardSigmoid:  // 0 < y < 1 exactly when -3 < x < 3
        for (int64_t i = 0; i < len; ++i)
            store<kAccumulate>(dx[i], (y[i] > 0.0f && y[i] < 1.0f) ? dy[i] * kHardScale : 0.0f);
        break;
    case Activation::GELU:
    case Activation::SiLU:
    case Activation::HardSwish:
    case Activation::Softmax:
        assert(false && "not derivable elementwise from the output");
        break;
    }
}

// dx += dy · act'(x), from the input x (act != Softmax).
void derivativeFromInput(Activation act, float param, const float* x, const float* dy, float* dx, int64_t len) {
    switch (act) {
    case Activation::Linear:
        for (int64_t i = 0; i < len; ++i) dx[i] += dy[i];
        break;
    case Activation::ReLU:
        for (int64_t i = 0; i < len; ++i) dx[i] += x[i] > 0.0f ? dy[i] : 0.0f;
        break;
    case Activation::ReLU6:
        for (int64_t i = 0; i < len; ++i) dx[i] += (x[i] > 0.0f && x[i] < kRelu6Cap) ? dy[i] : 0.0f;
        break;
    case Activation::LeakyReLU:
        for (int64_t i = 0; i < len; ++i) dx[i] += x[i] > 0.0f ? dy[i] : param * dy[i];
        break;
    case Activation::Sigmoid:
        for (int64_t i = 0; i < len; ++i) {
            const float s = sigmoid(x[i]);
            dx[i] += dy[i] * (s * (1.0f - s));
        }
        break;
    case Activation::Tanh:
        for (int64_t i = 0; i < len; ++i) {
            const float t = std::tanh(x[i]);
            dx[i] += dy[i] * (1.0f - t * t);
        }
        break;
    case Activation::GELU:
        if (param != 0.0f) {
            // d/dx x·s with s = sigmoid(2u), u = k(x + c·x³): s + x·2s(1 - s)·k(1 + 3c·x²)
            // (equal to ½(1 + tanh u) + ½x(1 - tanh²u)·u', without the cancellations).
            for (int64_t i = 0; i < len; ++i) {
                const float v = x[i];
                const float s = sigmoid(2.0f * kSqrt2OverPi * (v + kGeluCubic * v * v * v));
                const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
                dx[i] += dy[i] * (s + 2.0f * v * s * (1.0f - s) * du);
            }
        } else {
            // d/dx x·Φ(x) = Φ(x) + x·φ(x).
            for (int64_t i = 0; i < len; ++i) {
                const float v = x[i];
                const float cdf = 0.5f * std::erfc(-v * kInvSqrt2);
                const float pdf = kInvSqrt2Pi * std::exp(-0.5f * v * v);
                dx[i] += dy[i] * (cdf + v * pdf);
            }
        }
        break;
    case Activation::SiLU:
        for (int64_t i = 0; i < len; ++i) {
            const float s = sigmoid(x[i]);
            dx[i] += dy[i] * (s * (1.0f + x[i] * (1.0f - s)));
        }
        break;
    case Activation::HardSigmoid:
        for (int64_t i = 0; i < len; ++i)
            dx[i] += (x[i] > -kHardShift && x[i] < kHardShift) ? dy[i] * kHardScale : 0.0f;
        break;
    case Activation::HardSwish:
        for (int64_t i = 0; i < len; ++i) {
            const float v = x[i];
            const float d = v <= -kHardShift ? 0.0f : v >= kHardShift ? 1.0f : (2.0f * v + kHardShift) * kHardScale;
            dx[i] += dy[i] * d;
        }
        break;
    case Activation::Softmax:
        assert(false && "softmax is row-wise; handled by the callers");
        break;
    }
}

}  // namespace

void activationForward(Activation act, const float* x, float* y, int64_t n, float param, ThreadPool& pool) {
    if (n <= 0) return;
    if (act == Activation::Softmax) {
        softmaxForward(x, y, 1, n, pool);
        return;
    }
    if (act == Activation::Linear) {
        copy(x, y, n, pool);
        return;
    }
    parallelElements(pool, n, grainFor(act), [&](int64_t b, int64_t e) {
        applyRange(act, param, x + b, y + b, e - b);
    });
}

void activationBackward(Activation act, const float* x, const float* y, const float* dy, float* dx,
                        int64_t n, float param, ThreadPool& pool, bool overwrite) {
    if (n <= 0) return;
    if (act == Activation::Softmax) {
        if (overwrite) zero(dx, n, pool);
        softmaxBackward(y, dy, dx, 1, n, pool);
        return;
    }
    // Sigmoid and Tanh prefer the output (cheaper, no transcendental); the piecewise ones prefer
    // the input but give identical masks from the output.
    bool useOutput = false;
    switch (act) {
    case Activation::Sigmoid:
    case Activation::Tanh: useOutput = y != nullptr; break;
    case Activation::ReLU:
    case Activation::ReLU6:
    case Activation::HardSigmoid:
    case Activation::LeakyReLU: useOutput = x == nullptr; break;
    default: break;
    }
    assert(!useOutput || activationDerivableFromOutput(act, param));
    assert(useOutput || act == Activation::Linear || x != nullptr);
    parallelElements(pool, n, grainFor(act), [&](int64_t b, int64_t e) {
        if (useOutput && overwrite) {
            derivativeFromOutput<false>(act, param, y + b, dy + b, dx + b, e - b);
        } else if (useOutput) {
            derivativeFromOutput<true>(act, param, y + b, dy + b, dx + b, e - b);
        } else {
            if (overwrite) std::fill(dx + b, dx + e, 0.0f);
            derivativeFromInput(act, param, x ? x + b : nullptr, dy + b, dx + b, e - b);
        }
    });
}

void softmaxForward(const float* x, float* y, int64_t rows, int64_t cols, ThreadPool& pool) {
    if (rows <= 0 || cols <= 0) return;
    pool.parallelFor(rows, rowGrain(cols, kTranscendentalGrain), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) softmaxRow(x + r * cols, y + r * cols, cols);
    });
}

void softmaxBackward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols, ThreadPool& pool) {
    if (rows <= 0 || cols <= 0) return;
    pool.parallelFor(rows, rowGrain(cols, kGrain), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            softmaxBackwardRow<true>(y + r * cols, dy + r * cols, dx + r * cols, cols);
    });
}

void clipForward(const float* x, float* y, int64_t n, float lo, float hi, ThreadPool& pool) {
    if (n <= 0) return;
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        // Compare-and-select keeps NaN as NaN (both comparisons are false).
        for (int64_t i = b; i < e; ++i) {
            const float v = x[i] < lo ? lo : x[i];
            y[i] = v > hi ? hi : v;
        }
    });
}

void clipBackward(const float* x, const float* dy, float* dx, int64_t n, float lo, float hi, ThreadPool& pool) {
    if (n <= 0) return;
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dx[i] += (x[i] > lo && x[i] < hi) ? dy[i] : 0.0f;
    });
}

bool activationDerivableFromOutput(Activation act, float param) {
    switch (act) {
    case Activation::Linear:
    case Activation::ReLU:
    case Activation::ReLU6:
    case Activation::Sigmoid:
    case Activation::Tanh:
    case Activation::HardSigmoid:
    case Activation::Softmax: return true;
    case Activation::LeakyReLU: return param > 0.0f;
    case Activation::GELU:
    case Activation::SiLU:
    case Activation::HardSwish: return false;
    }
    return false;
}

void biasActivationForward(float* y, const float* bias, int64_t rows, int64_t cols, Activation act,
                           float param, ThreadPool& pool) {
    if (rows <= 0 || cols <= 0) return;
    if (!bias && act == Activation::Linear) return;
    const int64_t groupRows = rowGrain(cols, kEpilogueBlock);
    pool.parallelFor(rows, rowGrain(cols, grainFor(act)), [&](int64_t r0, int64_t r1) {
        for (int64_t g0 = r0; g0 < r1; g0 += groupRows) {
            const int64_t g1 = std::min(r1, g0 + groupRows);
            if (bias) {
                for (int64_t r = g0; r < g1; ++r) {
                    float* row = y + r * cols;
                    for (int64_t c = 0; c < cols; ++c) row[c] += bias[c];
                }
            }
            if (act == Activation::Softmax) {
                for (int64_t r = g0; r < g1; ++r) softmaxRow(y + r * cols, y + r * cols, cols);
            } else if (act != Activation::Linear) {
                // The rows of a group are contiguous: one flat pass.
                applyRange(act, param, y + g0 * cols, y + g0 * cols, (g1 - g0) * cols);
            }
        }
    });
}

bool biasActivationBackward(const float* yPost, const float* dy, float* dpre, float* dbias,
                            int64_t rows, int64_t cols, Activation act, float param, ThreadPool& pool) {
    if (!activationDerivableFromOutput(act, param)) return false;
    if (rows <= 0 || cols <= 0) return true;
    if (act == Activation::Softmax) {
        pool.parallelFor(rows, rowGrain(cols, kGrain), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r)
                softmaxBackwardRow<false>(yPost + r * cols, dy + r * cols, dpre + r * cols, cols);
        });
    } else {
        parallelElements(pool, rows * cols, kGrain, [&](int64_t b, int64_t e) {
            derivativeFromOutput<false>(act, param, yPost + b, dy + b, dpre + b, e - b);
        });
    }
    if (!dbias) return true;
    // Column sums: each column is summed over rows 0..rows-1 in order by exactly one task, so the
    // result is independent of the pool size. Tiles of columns keep the row reads contiguous.
    const int64_t tiles = (cols + kBiasTile - 1) / kBiasTile;
    const int64_t grainTiles = std::max<int64_t>(1, kGrain / (rows * kBiasTile));
    pool.parallelFor(tiles, grainTiles, [&](int64_t t0, int64_t t1) {
        double acc[kBiasTile];
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t c0 = t * kBiasTile;
            const int64_t w = std::min(kBiasTile, cols - c0);
            for (int64_t j = 0; j < w; ++j) acc[j] = 0.0;
            for (int64_t r = 0; r < rows; ++r) {
                const float* row = dpre + r * cols + c0;
                for (int64_t j = 0; j < w; ++j) acc[j] += row[j];
            }
            for (int64_t j = 0; j < w; ++j) dbias[c0 + j] += static_cast<float>(acc[j]);
        }
    });
    return true;
}

}  // namespace kiln::engine::kernels
