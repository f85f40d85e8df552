// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_exec Qt6::Core
// kiln-test-avx2
// One harness for every op of the table: shape rules (one-node and through analyzeModel), CPU
// kernels in training and inference mode against naive double references, finite-difference
// gradients for every input and trainable parameter, the error of every invalid case, and a
// multi-node gradient check through the executor's Plan.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/core/allocator.h"
#include "engine/core/thread_pool.h"
#include "engine/exec/param_store.h"
#include "engine/exec/plan.h"
#include "engine/ops/model.h"
#include "engine/ops/op_table.h"
#include "engine/ops/plugin_registry.h"
#include "op_cases.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;
using namespace kiln::tests::opcases;

namespace {

constexpr double kRefRtol = 1e-4;  // kernel vs double reference
constexpr double kRefAtol = 1e-5;
constexpr double kFdEps = 1e-3;  // central differences
constexpr double kFdRtol = 2e-2;
constexpr double kFdAtol = 5e-4;
constexpr size_t kFdMaxElements = 256;  // per tensor; larger ones are sampled
constexpr double kKinkMargin = 1e-2;    // data must stay this far from non-differentiable points
constexpr float kGradScale = 0.75f;     // loss kernels
constexpr uint64_t kSeed = 0x5eed;
constexpr uint64_t kStep = 7;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

size_t sz(int64_t n) {
    return static_cast<size_t>(n);
}

std::string str(const Shape& s) {
    return s.toString();
}

Shape shapeOf(const std::vector<int64_t>& dims) {
    return Shape(dims);
}

// 64-byte aligned float storage, like the plan's arena regions.
class Buf {
public:
    Buf() = default;
    explicit Buf(size_t n, float v = 0.0f) { reset(n, v); }
    void reset(size_t n, float v) {
        if (!m_mem || n != m_n) m_mem = makeAlignedBuffer(std::max<size_t>(n, 1) * sizeof(float));
        m_n = n;
        std::fill_n(data(), std::max<size_t>(n, 1), v);
    }
    void assign(const std::vector<float>& v) {
        if (!m_mem || v.size() != m_n) reset(v.size(), 0.0f);
        std::copy(v.begin(), v.end(), data());
    }
    float* data() { return reinterpret_cast<float*>(m_mem.get()); }
    const float* data() const { return reinterpret_cast<const float*>(m_mem.get()); }
    size_t size() const { return m_n; }
    std::vector<float> vec() const { return {data(), data() + m_n}; }
    bool equals(const std::vector<float>& v) const {
        return v.size() == m_n && std::equal(v.begin(), v.end(), data());
    }

private:
    AlignedBuffer m_mem;
    size_t m_n = 0;
};

// ---- Data ------------------------------------------------------------------------------------

std::vector<float> makeInput(const InputSpec& s, std::mt19937& gen) {
    const size_t n = sz(shapeOf(s.shape).numel());
    const int64_t last = s.shape.empty() ? 1 : s.shape.back();
    const size_t rows = n / sz(last);
    std::vector<float> v(n, 0.0f);
    switch (s.fill) {
    case Fill::Uniform: {
        std::uniform_real_distribution<double> d(s.lo, s.hi);
        for (auto& x : v) x = static_cast<float>(d(gen));
        break;
    }
    case Fill::Distinct:
        for (size_t i = 0; i < n; ++i)
            v[i] = static_cast<float>(s.lo + (s.hi - s.lo) * (static_cast<double>(i) + 0.5) /
                                                 static_cast<double>(n));
        std::shuffle(v.begin(), v.end(), gen);
        break;
    case Fill::Ids:
    case Fill::Labels: {
        std::uniform_int_distribution<int64_t> d(0, s.classes - 1);
        for (auto& x : v) x = static_cast<float>(d(gen));
        break;
    }
    case Fill::OneHot: {
        std::uniform_int_distribution<int64_t> d(0, last - 1);
        for (size_t r = 0; r < rows; ++r) v[r * sz(last) + sz(d(gen))] = 1.0f;
        break;
    }
    case Fill::Probabilities: {
        std::uniform_real_distribution<double> d(0.2, 1.0);
        for (size_t r = 0; r < rows; ++r) {
            std::vector<double> u(sz(last));
            double sum = 0;
            for (auto& x : u) sum += (x = d(gen));
            for (size_t c = 0; c < u.size(); ++c) v[r * sz(last) + c] = static_cast<float>(u[c] / sum);
        }
        break;
    }
    case Fill::Binary: {
        std::bernoulli_distribution d(0.5);
        for (auto& x : v) x = d(gen) ? 1.0f : 0.0f;
        break;
    }
    }
    return v;
}

std::vector<float> makeParam(const ParamSpec& p, std::mt19937& gen) {
    bool positive = p.name == "gamma" || p.name == "moving_variance" || p.name == "variance";
    std::uniform_real_distribution<double> d(positive ? 0.5 : -1.0, positive ? 1.5 : 1.0);
    std::vector<float> v(sz(p.shape.numel()));
    for (auto& x : v) x = static_cast<float>(d(gen));
    return v;
}

// Inputs that carry no gradient: Embedding ids, and every loss target (labels and regression
// targets alike: the kernels only differentiate the prediction).
bool differentiableInput(OpKind kind, size_t k) {
    if (kind == OpKind::Embedding) return false;
    if (kind == OpKind::Gather) return k == 0;  // the indices are integers
    if (isLoss(kind)) return k == 0;
    return true;
}

// ---- Naive double references, one per op kind ----------------------------------------------

struct Ref {
    const AttrMap& attrs;
    const std::vector<Shape>& inShapes;
    const Shape& outShape;
    bool training;
    bool frozen;
    std::vector<std::vector<double>> in;
    std::vector<std::vector<double>> params;  // moving statistics are updated by BN training
    std::vector<double> out;
    double kink = std::numeric_limits<double>::infinity();

    void nearKink(double d) { kink = std::min(kink, std::fabs(d)); }
    const std::vector<double>& x() const { return in[0]; }
};

double sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}
double geluExact(double x) {
    return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
}
double geluTanh(double x) {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

void softmaxRows(std::vector<double>& v, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) {
        double* row = v.data() + r * cols;
        double m = *std::max_element(row, row + cols);
        double s = 0;
        for (int64_t c = 0; c < cols; ++c) s += (row[c] = std::exp(row[c] - m));
        for (int64_t c = 0; c < cols; ++c) row[c] /= s;
    }
}

double logSumExp(const double* x, int64_t n) {
    double m = *std::max_element(x, x + n);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
    return m + std::log(s);
}

// The Dense/Conv2D "activation" attribute on a [rows, cols] pre-activation.
void applyActivation(Ref& r, const std::string& act, std::vector<double>& v, int64_t rows, int64_t cols) {
    if (act == "softmax") {
        softmaxRows(v, rows, cols);
        return;
    }
    for (double& x : v) {
        if (act == "relu") {
            r.nearKink(x);
            x = std::max(x, 0.0);
        } else if (act == "relu6") {
            r.nearKink(x);
            r.nearKink(x - 6.0);
            x = std::min(std::max(x, 0.0), 6.0);
        } else if (act == "sigmoid") {
            x = sigmoid(x);
        } else if (act == "tanh") {
            x = std::tanh(x);
        } else if (act == "gelu") {
            x = geluExact(x);
        }
    }
}

void refDense(Ref& r) {
    const int64_t in = r.inShapes[0][-1], rows = r.inShapes[0].numel() / in, units = r.outShape[-1];
    const auto& w = r.params[0];
    const bool bias = r.attrs.getBool("use_bias");
    r.out.assign(sz(rows * units), 0.0);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t u = 0; u < units; ++u) {
            double s = bias ? r.params[1][sz(u)] : 0.0;
            for (int64_t k = 0; k < in; ++k) s += r.x()[sz(i * in + k)] * w[sz(k * units + u)];
            r.out[sz(i * units + u)] = s;
        }
    applyActivation(r, r.attrs.getString("activation"), r.out, rows, units);
}

// Keras "same" padding before the first element along one axis.
int64_t padBefore(bool same, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation) {
    if (!same) return 0;
    return std::max<int64_t>((out - 1) * stride + (k - 1) * dilation + 1 - in, 0) / 2;
}

void refConv2D(Ref& r) {
    const Shape& xs = r.inShapes[0];
    const Shape& ys = r.outShape;
    const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3], oh = ys[1], ow = ys[2], oc = ys[3];
    const auto& k = r.attrs.getInts("kernel_size");
    const auto& s = r.attrs.getInts("strides");
    const auto& d = r.attrs.getInts("dilation_rate");
    const int64_t groups = r.attrs.getInt("groups");
    const bool same = r.attrs.getString("padding") == "same";
    const int64_t pt = padBefore(same, h, oh, k[0], s[0], d[0]);
    const int64_t pl = padBefore(same, w, ow, k[1], s[1], d[1]);
    const int64_t cpg = c / groups, opg = oc / groups;
    const auto& wt = r.params[0];  // [kh, kw, c/groups, oc]
    const bool bias = r.attrs.getBool("use_bias");
    r.out.assign(sz(n * oh * ow * oc), 0.0);
    for (int64_t b = 0; b < n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
                for (int64_t o = 0; o < oc; ++o) {
                    const int64_t g = o / opg;
                    double acc = bias ? r.params[1][sz(o)] : 0.0;
                    for (int64_t ky = 0; ky < k[0]; ++ky) {
                        const int64_t iy = oy * s[0] - pt + ky * d[0];
                        if (iy < 0 || iy >= h) continue;
                        for (int64_t kx = 0; kx < k[1]; ++kx) {
                            const int64_t ix = ox * s[1] - pl + kx * d[1];
                            if (ix < 0 || ix >= w) continue;
                            for (int64_t ci = 0; ci < cpg; ++ci)
                                acc += r.x()[sz(((b * h + iy) * w + ix) * c + g * cpg + ci)] *
                                       wt[sz(((ky * k[1] + kx) * cpg + ci) * oc + o)];
                        }
                    }
                    r.out[sz(((b * oh + oy) * ow + ox) * oc + o)] = acc;
                }
    applyActivation(r, r.attrs.getString("activation"), r.out, n * oh * ow, oc);
}

// DepthwiseConv2D: output channel ch·m + j filters input channel ch with kernel [ky, kx, ch, j].
void refDepthwise(Ref& r) {
    const Shape& xs = r.inShapes[0];
    const Shape& ys = r.outShape;
    const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3], oh = ys[1], ow = ys[2];
    const int64_t m = r.attrs.getInt("depth_multiplier");
    const auto& k = r.attrs.getInts("kernel_size");
    const auto& s = r.attrs.getInts("strides");
    const auto& d = r.attrs.getInts("dilation_rate");
    const bool same = r.attrs.getString("padding") == "same";
    const int64_t pt = padBefore(same, h, oh, k[0], s[0], d[0]);
    const int64_t pl = padBefore(same, w, ow, k[1], s[1], d[1]);
    const auto& wt = r.params[0];  // [kh, kw, c, m]
    const bool bias = r.attrs.getBool("use_bias");
    r.out.assign(sz(n * oh * ow * c * m), 0.0);
    for (int64_t b = 0; b < n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
                for (int64_t ch = 0; ch < c; ++ch)
                    for (int64_t j = 0; j < m; ++j) {
                        double acc = bias ? r.params[1][sz(ch * m + j)] : 0.0;
                        for (int64_t ky = 0; ky < k[0]; ++ky) {
                            const int64_t iy = oy * s[0] - pt + ky * d[0];
                            if (iy < 0 || iy >= h) continue;
                            for (int64_t kx = 0; kx < k[1]; ++kx) {
                                const int64_t ix = ox * s[1] - pl + kx * d[1];
                                if (ix < 0 || ix >= w) continue;
                                acc += r.x()[sz(((b * h + iy) * w + ix) * c + ch)] *
                                       wt[sz(((ky * k[1] + kx) * c + ch) * m + j)];
                            }
                        }
                        r.out[sz(((b * oh + oy) * ow + ox) * c * m + ch * m + j)] = acc;
                    }
    applyActivation(r, r.attrs.getString("activation"), r.out, n * oh * ow, c * m);
}

void refPool(Ref& r, bool isMax) {
    const Shape& xs = r.inShapes[0];
    const Shape& ys = r.outShape;
    const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3], oh = ys[1], ow = ys[2];
    const auto& k = r.attrs.getInts("pool_size");
    const auto s = r.attrs.getInts("strides").empty() ? k : r.attrs.getInts("strides");
    const bool same = r.attrs.getString("padding") == "same";
    const int64_t pt = padBefore(same, h, oh, k[0], s[0], 1);
    const int64_t pl = padBefore(same, w, ow, k[1], s[1], 1);
    r.out.assign(sz(n * oh * ow * c), 0.0);
    for (int64_t b = 0; b < n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
                for (int64_t ch = 0; ch < c; ++ch) {
                    std::vector<double> win;
                    for (int64_t iy = oy * s[0] - pt; iy < oy * s[0] - pt + k[0]; ++iy)
                        for (int64_t ix = ox * s[1] - pl; ix < ox * s[1] - pl + k[1]; ++ix)
                            if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                                win.push_back(r.x()[sz(((b * h + iy) * w + ix) * c + ch)]);
                    double v = 0;
                    if (isMax) {
                        std::sort(win.begin(), win.end(), std::greater<>());
                        v = win[0];
                        if (win.size() > 1) r.nearKink(win[0] - win[1]);  // a tie has no gradient
                    } else {
                        for (double e : win) v += e;
                        v /= static_cast<double>(win.size());
                    }
                    r.out[sz(((b * oh + oy) * ow + ox) * c + ch)] = v;
                }
}

// GlobalAveragePooling2D over [n, h, w, c] and GlobalAveragePooling1D over [n, t, c]: the mean
// over every axis between the first and the last.
void refGlobalPool(Ref& r) {
    const Shape& xs = r.inShapes[0];
    const int64_t n = xs[0], c = xs[-1], hw = xs.numel() / (n * c);
    r.out.assign(sz(n * c), 0.0);
    for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) {
            double s = 0;
            for (int64_t p = 0; p < hw; ++p) s += r.x()[sz((b * hw + p) * c + ch)];
            r.out[sz(b * c + ch)] = s / static_cast<double>(hw);
        }
}

void refGlobalMaxPool(Ref& r) {
    const Shape& xs = r.inShapes[0];
    const int64_t n = xs[0], hw = xs[1] * xs[2], c = xs[3];
    r.out.assign(sz(n * c), 0.0);
    for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) {
            std::vector<double> v;
            for (int64_t p = 0; p < hw; ++p) v.push_back(r.x()[sz((b * hw + p) * c + ch)]);
            std::sort(v.begin(), v.end(), std::greater<>());
            if (v.size() > 1) r.nearKink(v[0] - v[1]);  // a tie has no gradient
            r.out[sz(b * c + ch)] = v[0];
        }
}

void refZeroPad(Ref& r) {
    const Shape& xs = r.inShapes[0];
    const Shape& ys = r.outShape;
    const auto& p = r.attrs.getInts("padding");
    r.out.assign(sz(ys.numel()), 0.0);
    for (int64_t b = 0; b < xs[0]; ++b)
        for (int64_t y = 0; y < xs[1]; ++y)
            for (int64_t x = 0; x < xs[2]; ++x)
                for (int64_t ch = 0; ch < xs[3]; ++ch)
                    r.out[sz(((b * ys[1] + y + p[0]) * ys[2] + x + p[2]) * ys[3] + ch)] =
                        r.x()[sz(((b * xs[1] + y) * xs[2] + x) * xs[3] + ch)];
}

// Half-pixel source coordinate, clamped, and its two neighbours (tf.image.resize bilinear).
void bilinearSource(int64_t o, int64_t scale, int64_t in, int64_t& i0, int64_t& i1, double& t) {
    const double src = std::max((static_cast<double>(o) + 0.5) / static_cast<double>(scale) - 0.5, 0.0);
    i0 = std::min(static_cast<int64_t>(src), in - 1);
    i1 = std::min(i0 + 1, in - 1);
    t = src - static_cast<double>(i0);
}

void refUpsample(Ref& r) {
    const Shape& xs = r.inShapes[0];
    const Shape& ys = r.outShape;
    const auto& s = r.attrs.getInts("size");
    const bool bilinear = r.attrs.getString("interpolation") == "bilinear";
    const int64_t h = xs[1], w = xs[2], c = xs[3];
    auto at = [&](int64_t b, int64_t y, int64_t x, int64_t ch) { return r.x()[sz(((b * h + y) * w + x) * c + ch)]; };
    r.out.assign(sz(ys.numel()), 0.0);
    for (int64_t b = 0; b < xs[0]; ++b)
        for (int64_t oy = 0; oy < ys[1]; ++oy)
            for (int64_t ox = 0; ox < ys[2]; ++ox)
                for (int64_t ch = 0; ch < c; ++ch) {
                    double v;
                    if (!bilinear) {
                        v = at(b, oy / s[0], ox / s[1], ch);
                    } else {
                        int64_t y0, y1, x0, x1;
                        double ty, tx;
                        bilinearSource(oy, s[0], h, y0, y1, ty);
                        bilinearSource(ox, s[1], w, x0, x1, tx);
                        v = (1 - ty) * ((1 - tx) * at(b, y0, x0, ch) + tx * at(b, y0, x1, ch)) +
                            ty * ((1 - tx) * at(b, y1, x0, ch) + tx * at(b, y1, x1, ch));
                    }
                    r.out[sz(((b * ys[1] + oy) * ys[2] + ox) * c + ch)] = v;
                }
}

void refRescale(Ref& r) {
    r.out = r.x();
    for (double& v : r.out) v = v * r.attrs.getFloat("scale") + r.attrs.getFloat("offset");
}

void refBatchNorm(Ref& r) {
    const int64_t c = r.inShapes[0][-1], rows = r.inShapes[0].numel() / c;
    const double eps = r.attrs.getFloat("epsilon"), momentum = r.attrs.getFloat("momentum");
    auto& p = r.params;  // gamma, beta, moving_mean, moving_variance
    r.out.assign(r.x().size(), 0.0);
    for (int64_t ch = 0; ch < c; ++ch) {
        double mean = p[2][sz(ch)], var = p[3][sz(ch)];
        if (r.training && !r.frozen) {
            mean = var = 0;
            for (int64_t i = 0; i < rows; ++i) mean += r.x()[sz(i * c + ch)];
            mean /= static_cast<double>(rows);
            for (int64_t i = 0; i < rows; ++i) var += std::pow(r.x()[sz(i * c + ch)] - mean, 2);
            var /= static_cast<double>(rows);
            p[2][sz(ch)] = p[2][sz(ch)] * momentum + mean * (1 - momentum);
            p[3][sz(ch)] = p[3][sz(ch)] * momentum + var * (1 - momentum);
        }
        for (int64_t i = 0; i < rows; ++i)
            r.out[sz(i * c + ch)] =
                (r.x()[sz(i * c + ch)] - mean) / std::sqrt(var + eps) * p[0][sz(ch)] + p[1][sz(ch)];
    }
}

void refLayerNorm(Ref& r) {
    const int64_t c = r.inShapes[0][-1], rows = r.inShapes[0].numel() / c;
    const double eps = r.attrs.getFloat("epsilon");
    r.out.assign(r.x().size(), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
        const double* row = r.x().data() + i * c;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < c; ++j) mean += row[j];
        mean /= static_cast<double>(c);
        for (int64_t j = 0; j < c; ++j) var += (row[j] - mean) * (row[j] - mean);
        var /= static_cast<double>(c);
        for (int64_t j = 0; j < c; ++j)
            r.out[sz(i * c + j)] =
                (row[j] - mean) / std::sqrt(var + eps) * r.params[0][sz(j)] + r.params[1][sz(j)];
    }
}

// Keras's Normalization: fixed per-channel statistics, (x - mean) / max(sqrt(variance), 1e-7).
void refFixedNorm(Ref& r) {
    const int64_t c = r.inShapes[0][-1], rows = r.inShapes[0].numel() / c;
    r.out.assign(r.x().size(), 0.0);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < c; ++j)
            r.out[sz(i * c + j)] =
                (r.x()[sz(i * c + j)] - r.params[0][sz(j)]) / std::max(std::sqrt(r.params[1][sz(j)]), 1e-7);
}

// example.GroupNorm: per sample, the channels (last dimension) fall into `groups` groups, each
// normalised over every position, then scaled and shifted per channel.
void refGroupNorm(Ref& r) {
    const Shape& s = r.inShapes[0];
    const int64_t c = s[-1], n = s[0], positions = s.numel() / (n * c), groups = r.attrs.getInt("groups");
    const int64_t per = c / groups;
    const double eps = r.attrs.getFloat("epsilon");
    r.out.assign(r.x().size(), 0.0);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t g = 0; g < groups; ++g) {
            double mean = 0, var = 0;
            for (int64_t p = 0; p < positions; ++p)
                for (int64_t j = g * per; j < (g + 1) * per; ++j) mean += r.x()[sz((i * positions + p) * c + j)];
            mean /= static_cast<double>(positions * per);
            for (int64_t p = 0; p < positions; ++p)
                for (int64_t j = g * per; j < (g + 1) * per; ++j) {
                    const double d = r.x()[sz((i * positions + p) * c + j)] - mean;
                    var += d * d;
                }
            var /= static_cast<double>(positions * per);
            for (int64_t p = 0; p < positions; ++p)
                for (int64_t j = g * per; j < (g + 1) * per; ++j) {
                    const size_t k = sz((i * positions + p) * c + j);
                    r.out[k] = (r.x()[k] - mean) / std::sqrt(var + eps) * r.params[0][sz(j)] + r.params[1][sz(j)];
                }
        }
}

void refIdentity(Ref& r) {
    r.out = r.x();
}  // Flatten, Reshape, Dropout in inference

void refConcat(Ref& r) {
    const Shape& ys = r.outShape;
    const int rank = ys.rank();
    int64_t axis = r.attrs.getInt("axis");
    if (axis < 0) axis += rank;
    r.out.assign(sz(ys.numel()), 0.0);
    std::vector<int64_t> idx(sz(rank));
    for (int64_t flat = 0; flat < ys.numel(); ++flat) {
        int64_t rem = flat;
        for (int d = rank - 1; d >= 0; --d) {
            idx[sz(d)] = rem % ys[d];
            rem /= ys[d];
        }
        size_t k = 0;
        int64_t a = idx[sz(axis)];
        while (a >= r.inShapes[k][static_cast<int>(axis)]) a -= r.inShapes[k++][static_cast<int>(axis)];
        int64_t src = 0;
        for (int d = 0; d < rank; ++d) src = src * r.inShapes[k][d] + (d == axis ? a : idx[sz(d)]);
        r.out[sz(flat)] = r.in[k][sz(src)];
    }
}

// Add and Multiply over inputs of the output's shape; a Multiply input with fewer elements is a
// per-(sample, channel) scale [N,C] or [N,1,1,C].
void refMerge(Ref& r, bool multiply) {
    const size_t total = sz(r.outShape.numel());
    const int64_t perSample = r.outShape.numel() / r.outShape[0], c = r.outShape[-1];
    r.out.assign(total, multiply ? 1.0 : 0.0);
    for (size_t k = 0; k < r.in.size(); ++k)
        for (size_t i = 0; i < total; ++i) {
            const bool full = r.in[k].size() == total;
            const int64_t flat = static_cast<int64_t>(i);
            const double v = full ? r.in[k][i] : r.in[k][sz(flat / perSample * c + flat % c)];
            r.out[i] = multiply ? r.out[i] * v : r.out[i] + v;
        }
}

void refSubtract(Ref& r) {
    r.out = r.in[0];
    for (size_t i = 0; i < r.out.size(); ++i) r.out[i] -= r.in[1][i];
}

void refElementwise(Ref& r, OpKind kind) {
    r.out = r.x();
    for (double& x : r.out) {
        switch (kind) {
        case OpKind::ReLU:
            r.nearKink(x);
            x = std::max(x, 0.0);
            break;
        case OpKind::LeakyReLU:
            r.nearKink(x);
            x = x > 0 ? x : r.attrs.getFloat("negative_slope") * x;
            break;
        case OpKind::ReLU6:
            r.nearKink(x);
            r.nearKink(x - 6.0);
            x = std::min(std::max(x, 0.0), 6.0);
            break;
        case OpKind::GELU:
            x = r.attrs.getBool("approximate") ? geluTanh(x) : geluExact(x);
            break;
        case OpKind::Sigmoid:
            x = sigmoid(x);
            break;
        case OpKind::Tanh:
            x = std::tanh(x);
            break;
        case OpKind::SiLU:
            x = x * sigmoid(x);
            break;
        case OpKind::HardSigmoid:
        case OpKind::HardSwish: {
            r.nearKink(x + 3.0);
            r.nearKink(x - 3.0);
            const double h = std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
            x = kind == OpKind::HardSigmoid ? h : x * h;
            break;
        }
        case OpKind::Clip: {
            const double lo = r.attrs.getFloat("min"), hi = r.attrs.getFloat("max");
            r.nearKink(x - lo);
            r.nearKink(x - hi);
            x = std::min(std::max(x, lo), hi);
            break;
        }
        default:
            break;
        }
    }
}

void refSoftmax(Ref& r) {
    r.out = r.x();
    const int64_t cols = r.outShape[-1];
    softmaxRows(r.out, r.outShape.numel() / cols, cols);
}

void refEmbedding(Ref& r) {
    const int64_t dim = r.attrs.getInt("output_dim");
    r.out.clear();
    for (double id : r.x())
        for (int64_t d = 0; d < dim; ++d)
            r.out.push_back(r.params[0][sz(static_cast<int64_t>(id) * dim + d)]);
}

// Gather from its definition: per sample and outer position, the rows the indices pick (negative
// ones counting from the end of the axis).
void refGather(Ref& r) {
    const Shape& ds = r.inShapes[0];
    int axis = static_cast<int>(r.attrs.getInt("axis"));
    if (axis < 0) axis += static_cast<int>(ds.rank());
    const int64_t size = ds[axis], inner = ds.numelFrom(axis + 1);
    int64_t outer = 1;
    for (int k = 1; k < axis; ++k) outer *= ds[k];
    const bool perSample = r.inShapes.size() == 2;
    std::vector<double> idx;
    if (perSample) idx = r.in[1];
    else
        for (int64_t v : r.attrs.getInts("indices")) idx.push_back(static_cast<double>(v));
    const int64_t count = perSample ? r.inShapes[1].numelFrom(1) : static_cast<int64_t>(idx.size());
    r.out.clear();
    for (int64_t b = 0; b < ds[0]; ++b)
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < count; ++j) {
                auto row = static_cast<int64_t>(idx[sz((perSample ? b * count : 0) + j)]);
                if (row < 0) row += size;
                for (int64_t q = 0; q < inner; ++q) r.out.push_back(r.x()[sz(((b * outer + o) * size + row) * inner + q)]);
            }
}

constexpr double kProbEps = 1e-7;
// MultiHeadAttention from its definition, in double: per (batch, head) the projections, the
// scaled scores, the (causal) softmax over the value positions, the weighted values, and the
// output projection summed over the heads.
void refMultiHeadAttention(Ref& r) {
    const Shape& qs = r.inShapes[0];
    const Shape& vs = r.inShapes[1];
    const int64_t nb = qs[0], tq = qs[1], tv = vs[1], d = qs[2];
    const int64_t heads = r.attrs.getInt("num_heads"), kd = r.attrs.getInt("key_dim");
    const int64_t vd = r.attrs.getInt("value_dim") > 0 ? r.attrs.getInt("value_dim") : kd;
    const int64_t e = r.outShape[2];
    const bool bias = r.attrs.getBool("use_bias"), causal = r.attrs.getBool("use_causal_mask");
    size_t k = 0;
    auto next = [&]() -> const std::vector<double>& { return r.params[k++]; };
    const std::vector<double> none;
    const auto& wq = next();
    const auto& bq = bias ? next() : none;
    const auto& wk = next();
    const auto& bk = bias ? next() : none;
    const auto& wv = next();
    const auto& bv = bias ? next() : none;
    const auto& wo = next();
    const auto& bo = bias ? next() : none;
    // x [n, t, d] · w [d, heads, width] (+ b [heads, width]) -> [n, t, heads, width]
    auto project = [&](const std::vector<double>& x, int64_t t, const std::vector<double>& w,
                       const std::vector<double>& b, int64_t width) {
        std::vector<double> y(sz(nb * t * heads * width));
        for (int64_t i = 0; i < nb * t; ++i)
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t c = 0; c < width; ++c) {
                    double acc = b.empty() ? 0.0 : b[sz(h * width + c)];
                    for (int64_t j = 0; j < d; ++j) acc += x[sz(i * d + j)] * w[sz((j * heads + h) * width + c)];
                    y[sz((i * heads + h) * width + c)] = acc;
                }
        return y;
    };
    const auto q = project(r.in[0], tq, wq, bq, kd);
    const auto key = project(r.in[1], tv, wk, bk, kd);
    const auto val = project(r.in[1], tv, wv, bv, vd);
    std::vector<double> o(sz(nb * tq * heads * vd), 0.0);
    for (int64_t b = 0; b < nb; ++b)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < tq; ++i) {
                std::vector<double> score(sz(tv));
                const int64_t valid = causal ? i + 1 : tv;
                for (int64_t j = 0; j < valid; ++j) {
                    double dot = 0;
                    for (int64_t c = 0; c < kd; ++c)
                        dot += q[sz(((b * tq + i) * heads + h) * kd + c)] * key[sz(((b * tv + j) * heads + h) * kd + c)];
                    score[sz(j)] = dot / std::sqrt(static_cast<double>(kd));
                }
                softmaxRows(score, 1, valid);
                for (int64_t j = 0; j < valid; ++j)
                    for (int64_t c = 0; c < vd; ++c)
                        o[sz(((b * tq + i) * heads + h) * vd + c)] +=
                            score[sz(j)] * val[sz(((b * tv + j) * heads + h) * vd + c)];
            }
    r.out.assign(sz(nb * tq * e), 0.0);
    for (int64_t i = 0; i < nb * tq; ++i)
        for (int64_t u = 0; u < e; ++u) {
            double acc = bo.empty() ? 0.0 : bo[sz(u)];
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t c = 0; c < vd; ++c)
                    acc += o[sz((i * heads + h) * vd + c)] * wo[sz((h * vd + c) * e + u)];
            r.out[sz(i * e + u)] = acc;
        }
}

double clampProb(double p) {
    return std::min(std::max(p, kProbEps), 1.0 - kProbEps);
}

void refLoss(Ref& r, OpKind kind) {
    const auto& p = r.in[0];
    const auto& t = r.in[1];
    const int64_t batch = r.inShapes[0][0], width = r.inShapes[0].numelFrom(1);
    const bool logits = r.attrs.has("from_logits") && r.attrs.getBool("from_logits");
    double sum = 0;
    double count = static_cast<double>(batch);
    for (int64_t i = 0; i < batch; ++i) {
        const double* row = p.data() + i * width;
        const double* trow = t.data() + i * width;
        double rowSum = 0;  // Keras divides categorical probabilities by their row sum
        for (int64_t c = 0; c < width; ++c) rowSum += row[c];
        switch (kind) {
        case OpKind::SparseCategoricalCrossentropy: {
            auto label = static_cast<int64_t>(t[sz(i)]);
            sum += logits ? logSumExp(row, width) - row[label] : -std::log(clampProb(row[label] / rowSum));
            break;
        }
        case OpKind::CategoricalCrossentropy:
            for (int64_t c = 0; c < width; ++c)
                sum += logits ? trow[c] * (logSumExp(row, width) - row[c])
                              : -trow[c] * std::log(clampProb(row[c] / rowSum));
            break;
        case OpKind::BinaryCrossentropy:
            count = static_cast<double>(batch * width);
            for (int64_t c = 0; c < width; ++c) {
                const double x = row[c], z = trow[c];
                if (logits) {
                    sum += std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0) - x * z;
                } else {
                    const double q = clampProb(x);
                    sum -= z * std::log(q) + (1 - z) * std::log(1 - q);
                }
            }
            break;
        case OpKind::MeanSquaredError:
            count = static_cast<double>(batch * width);
            for (int64_t c = 0; c < width; ++c) sum += (row[c] - trow[c]) * (row[c] - trow[c]);
            break;
        case OpKind::MeanAbsoluteError:
            count = static_cast<double>(batch * width);
            for (int64_t c = 0; c < width; ++c) {
                r.nearKink(row[c] - trow[c]);
                sum += std::fabs(row[c] - trow[c]);
            }
            break;
        case OpKind::BinaryFocalCrossentropy: {
            // Keras: sigmoid, clip, bce with +eps inside the logs, (1 - p_t)^gamma, optional
            // class balancing, mean over the sample's elements.
            count = static_cast<double>(batch * width);
            const double gamma = r.attrs.getFloat("gamma"), alpha = r.attrs.getFloat("alpha");
            const double ls = r.attrs.getFloat("label_smoothing");
            const bool balance = r.attrs.getBool("apply_class_balancing");
            for (int64_t c = 0; c < width; ++c) {
                const double z = trow[c] * (1 - ls) + 0.5 * ls;
                const double q = logits ? 1 / (1 + std::exp(-row[c])) : row[c];
                const double o = clampProb(q);
                const double bce = -(z * std::log(o + kProbEps) + (1 - z) * std::log(1 - o + kProbEps));
                const double pt = z * q + (1 - z) * (1 - q);
                const double w = balance ? z * alpha + (1 - z) * (1 - alpha) : 1.0;
                sum += w * std::pow(1 - pt, gamma) * bce;
            }
            break;
        }
        case OpKind::CategoricalFocalCrossentropy:
        case OpKind::SparseCategoricalFocalCrossentropy: {
            const double gamma = r.attrs.getFloat("gamma"), alpha = r.attrs.getFloat("alpha");
            const bool sparse = kind == OpKind::SparseCategoricalFocalCrossentropy;
            const double ls = sparse ? 0.0 : r.attrs.getFloat("label_smoothing");
            std::vector<double> q(row, row + width);
            if (logits) softmaxRows(q, 1, width);
            double qs = 0;
            for (double v : q) qs += v;
            for (int64_t c = 0; c < width; ++c) {
                double z = sparse ? (c == static_cast<int64_t>(t[sz(i)]) ? 1.0 : 0.0) : trow[c];
                z = z * (1 - ls) + ls / static_cast<double>(width);
                const double o = clampProb(q[sz(c)] / qs);
                sum -= alpha * std::pow(1 - o, gamma) * z * std::log(o);
            }
            break;
        }
        default:
            break;
        }
    }
    r.out = {sum / count};
}

void reference(OpKind kind, Ref& r) {
    switch (kind) {
    case OpKind::Input:
        break;
    case OpKind::Dense:
        refDense(r);
        break;
    case OpKind::Conv2D:
        refConv2D(r);
        break;
    case OpKind::DepthwiseConv2D:
        refDepthwise(r);
        break;
    case OpKind::MaxPooling2D:
        refPool(r, true);
        break;
    case OpKind::AveragePooling2D:
        refPool(r, false);
        break;
    case OpKind::GlobalAveragePooling2D:
    case OpKind::GlobalAveragePooling1D:
        refGlobalPool(r);
        break;
    case OpKind::GlobalMaxPooling2D:
        refGlobalMaxPool(r);
        break;
    case OpKind::ZeroPadding2D:
        refZeroPad(r);
        break;
    case OpKind::UpSampling2D:
        refUpsample(r);
        break;
    case OpKind::Rescaling:
        refRescale(r);
        break;
    case OpKind::BatchNormalization:
        refBatchNorm(r);
        break;
    case OpKind::LayerNormalization:
        refLayerNorm(r);
        break;
    case OpKind::Normalization:
        refFixedNorm(r);
        break;
    case OpKind::Dropout:
    case OpKind::Flatten:
    case OpKind::Reshape:
        refIdentity(r);
        break;
    case OpKind::Concatenate:
        refConcat(r);
        break;
    case OpKind::Add:
        refMerge(r, false);
        break;
    case OpKind::Multiply:
        refMerge(r, true);
        break;
    case OpKind::Subtract:
        refSubtract(r);
        break;
    case OpKind::ReLU:
    case OpKind::LeakyReLU:
    case OpKind::ReLU6:
    case OpKind::GELU:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::SiLU:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::Clip:
        refElementwise(r, kind);
        break;
    case OpKind::Softmax:
        refSoftmax(r);
        break;
    case OpKind::Embedding:
        refEmbedding(r);
        break;
    case OpKind::Gather:
        refGather(r);
        break;
    case OpKind::MultiHeadAttention:
        refMultiHeadAttention(r);
        break;
    case OpKind::SparseCategoricalCrossentropy:
    case OpKind::CategoricalCrossentropy:
    case OpKind::BinaryCrossentropy:
    case OpKind::MeanSquaredError:
    case OpKind::MeanAbsoluteError:
    case OpKind::BinaryFocalCrossentropy:
    case OpKind::CategoricalFocalCrossentropy:
    case OpKind::SparseCategoricalFocalCrossentropy:
        refLoss(r, kind);
        break;
    case OpKind::Placeholder:  // never computed (runValid checks that it refuses)
        break;
    case OpKind::Plugin:  // the cases use the example plugin
        refGroupNorm(r);
        break;
    }
}

std::vector<double> toDouble(const std::vector<float>& v) {
    return {v.begin(), v.end()};
}

// First element where `got` and `want` differ beyond rtol/atol, as a message; empty if none.
std::string firstMismatch(const float* got, const std::vector<double>& want, double rtol, double atol,
                          const std::string& what) {
    for (size_t i = 0; i < want.size(); ++i) {
        const double g = got[i], w = want[i];
        if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w)))
            return what + " element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
                   std::to_string(w);
    }
    return {};
}

bool fdClose(double analytic, double numeric) {
    return std::fabs(analytic - numeric) <=
           kFdAtol + kFdRtol * std::max(std::fabs(analytic), std::fabs(numeric));
}

// ---- The kernel under test, with plan-like buffers -------------------------------------------

class Runner {
public:
    Runner(CpuKernel& kernel, size_t outFloats, ThreadPool& pool) : m_k(kernel), m_pool(pool) {
        m_out.reset(outFloats, kNaN);
        m_saved.reset(kernel.savedFloats(), kNaN);  // forward must write before it reads
        m_workspace.reset(kernel.workspaceFloats(), kNaN);
    }

    bool alias() const { return m_k.aliasesInput(); }
    float* out() { return alias() ? m_in[0].data() : m_out.data(); }
    std::vector<Buf>& inputs() { return m_in; }
    std::vector<Buf>& params() { return m_params; }
    void setStep(uint64_t step) { m_step = step; }

    Status forward(const std::vector<std::vector<float>>& x, const std::vector<std::vector<float>>& p,
                   bool training) {
        m_in.resize(x.size());
        for (size_t k = 0; k < x.size(); ++k) m_in[k].assign(x[k]);
        m_params.resize(p.size());
        for (size_t k = 0; k < p.size(); ++k) m_params[k].assign(p[k]);
        m_workspace.reset(m_workspace.size(), kNaN);  // shared scratch: nothing survives between calls
        std::vector<const float*> in;
        for (auto& b : m_in) in.push_back(b.data());
        std::vector<float*> params;
        for (auto& b : m_params) params.push_back(b.data());
        KernelIo io = baseIo(training);
        io.in = in;
        io.params = params;
        io.out = out();
        return m_k.forward(io);
    }

    // Backward after a forward. Values the kernel says it does not need are poisoned first, as the
    // planner may have reused their memory.
    Status backward(const float* dOut, std::vector<float*> dIn, std::vector<float*> dParams) {
        if (!alias()) {
            if (!m_k.backwardNeedsInputs())
                for (auto& b : m_in) b.reset(b.size(), kNaN);
            if (!m_k.backwardNeedsOutput()) m_out.reset(m_out.size(), kNaN);
        }
        m_workspace.reset(m_workspace.size(), kNaN);
        std::vector<const float*> in;
        for (auto& b : m_in) in.push_back(b.data());
        std::vector<float*> params;
        for (auto& b : m_params) params.push_back(b.data());
        KernelIo io = baseIo(true);
        io.in = in;
        io.params = params;
        io.out = out();
        io.dOut = dOut;
        io.dIn = dIn;
        io.dParams = dParams;
        return m_k.backward(io);
    }

private:
    KernelIo baseIo(bool training) {
        KernelIo io;
        io.saved = m_saved.data();
        io.workspace = m_workspace.data();
        io.training = training;
        io.seed = kSeed;
        io.step = m_step;
        io.pool = &m_pool;
        io.gradScale = kGradScale;
        return io;
    }

    CpuKernel& m_k;
    ThreadPool& m_pool;
    std::vector<Buf> m_in, m_params;
    Buf m_out, m_saved, m_workspace;
    uint64_t m_step = kStep;
};

// ---- Graph helpers ---------------------------------------------------------------------------

std::string inputName(size_t k) {
    std::string s = "in";
    s += std::to_string(k);
    return s;
}

Node caseNode(const OpCase& c) {
    Node n;
    n.name = "n";
    n.op.assign(opDef(c.kind).name.data(), opDef(c.kind).name.size());
    for (size_t k = 0; k < c.inputs.size(); ++k) n.inputs.push_back(inputName(k));
    for (const auto& [key, value] : c.attrs) n.attrs.set(key, value);
    n.trainable = c.trainable;
    return n;
}

// Input nodes for each of the case's inputs (symbolic batch), then the node under test.
Graph caseGraph(const OpCase& c) {
    Graph g;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
        Node in;
        in.name = inputName(k);
        in.op = "Input";
        const auto& dims = c.inputs[k].shape;
        in.attrs.set("shape", std::vector<int64_t>(dims.begin() + (dims.empty() ? 0 : 1), dims.end()));
        bool integer = c.inputs[k].fill == Fill::Ids || c.inputs[k].fill == Fill::Labels;
        in.attrs.set("dtype", std::string(integer ? "int32" : "float32"));
        g.nodes.push_back(in);
    }
    g.nodes.push_back(caseNode(c));
    return g;
}

std::vector<Shape> concreteInputs(const OpCase& c) {
    std::vector<Shape> s;
    for (const auto& in : c.inputs) s.push_back(shapeOf(in.shape));
    return s;
}

// A symbolic message ("[N,3]") as the concrete shape rule would print it ("[2,3]").
std::string concreteMessage(const std::string& m, int64_t batch) {
    const std::string b = std::to_string(batch);
    std::string out;
    for (size_t i = 0; i < m.size(); ++i) {
        if (m.compare(i, 2, "[N") == 0 && i + 2 < m.size() && (m[i + 2] == ',' || m[i + 2] == ']')) {
            out += '[';
            out += b;
            ++i;  // the N
        } else {
            out += m[i];
        }
    }
    return out;
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

class TestOpHarness : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        m_pool = std::make_unique<ThreadPool>(2);
        // The Plugin cases run the example plugin built beside the tests.
        Status loaded = loadPluginsFrom(std::string(KILN_TEST_PLUGIN_DIR) + "/group_norm.so");
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    }

    void validCases_data() {
        QTest::addColumn<int>("index");
        const auto& cases = opCases();
        for (size_t i = 0; i < cases.size(); ++i)
            if (cases[i].valid()) QTest::newRow(cases[i].name.c_str()) << static_cast<int>(i);
    }

    void validCases() {
        QFETCH(int, index);
        runValid(index);
    }

    void invalidCases_data() {
        QTest::addColumn<int>("index");
        const auto& cases = opCases();
        for (size_t i = 0; i < cases.size(); ++i)
            if (!cases[i].valid()) QTest::newRow(cases[i].name.c_str()) << static_cast<int>(i);
    }

    void invalidCases() {
        QFETCH(int, index);
        runInvalid(index);
    }

    // Bad data at run time: ids outside the vocabulary, labels that are not class indices.
    void dataErrors_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("logits");
        QTest::addColumn<float>("bad");
        QTest::addColumn<QString>("message");
        const int emb = static_cast<int>(OpKind::Embedding),
                  sce = static_cast<int>(OpKind::SparseCategoricalCrossentropy);
        QTest::newRow("id = vocabulary")
            << emb << false << 5.0f << "id 5 at position 1 is outside the vocabulary [0, 5)";
        QTest::newRow("negative id") << emb << false << -1.0f
                                     << "at position 1 is outside the vocabulary [0, 5)";
        QTest::newRow("fractional id")
            << emb << false << 1.5f << "at position 1 is outside the vocabulary [0, 5)";
        for (bool logits : {true, false}) {
            const QString tag = logits ? "logits " : "probabilities ";
            QTest::newRow(qPrintable(tag + "label = classes"))
                << sce << logits << 5.0f << "of sample 1 is not a class index in [0, 5)";
            QTest::newRow(qPrintable(tag + "negative label"))
                << sce << logits << -1.0f << "of sample 1 is not a class index in [0, 5)";
            QTest::newRow(qPrintable(tag + "fractional label"))
                << sce << logits << 2.5f << "of sample 1 is not a class index in [0, 5)";
        }
    }

    void dataErrors() {
        QFETCH(int, kind);
        QFETCH(bool, logits);
        QFETCH(float, bad);
        QFETCH(QString, message);
        const bool embedding = static_cast<OpKind>(kind) == OpKind::Embedding;
        OpCase c = embedding
                       ? valid(OpKind::Embedding, "e", {{"input_dim", ai(5)}, {"output_dim", ai(2)}},
                               {ids({3}, 5)}, {3, 2})
                       : valid(OpKind::SparseCategoricalCrossentropy, "s", {{"from_logits", ab(logits)}},
                               {probabilities({3, 5}), labels({3}, 5)}, {1});
        const OpDef& def = opDef(c.kind);
        const Node node = caseNode(c);
        auto attrs = resolveAttrs(def, node);
        QVERIFY(attrs.ok());
        const std::vector<Shape> inShapes = concreteInputs(c);
        const ShapeContext ctx{node, *attrs, inShapes};
        auto kernel = def.cpu(ctx, shapeOf(c.output));
        QVERIFY(kernel.ok());
        std::mt19937 gen(3);
        std::vector<std::vector<float>> x;
        for (const auto& in : c.inputs) x.push_back(makeInput(in, gen));
        x.back()[1] = bad;
        std::vector<std::vector<float>> p;
        if (def.params)
            for (const auto& spec : def.params(ctx, shapeOf(c.output))) p.push_back(makeParam(spec, gen));
        Runner run(**kernel, sz(shapeOf(c.output).numel()), *m_pool);
        Status st = run.forward(x, p, true);
        QVERIFY2(!st.ok(), "bad data was accepted");
        QCOMPARE(st.error().code, ErrorCode::DataError);
        QVERIFY2(q(st.error().message).contains(message), qPrintable(q(st.error().message)));
    }

    // Gather with per-sample indices: an index outside the axis at run time is a DataError naming
    // it and its position, not a crash.
    void gatherIndexErrors_data() {
        QTest::addColumn<float>("bad");
        QTest::addColumn<QString>("message");
        QTest::newRow("index = size") << 5.0f << "index 5 at position 1 is outside [-5, 5)";
        QTest::newRow("below -size") << -6.0f << "index -6 at position 1 is outside [-5, 5)";
        QTest::newRow("fractional") << 2.5f << "index 2.5 at position 1 is outside [-5, 5)";
    }
    void gatherIndexErrors() {
        QFETCH(float, bad);
        QFETCH(QString, message);
        const OpCase c = valid(OpKind::Gather, "g", {}, {uniform({2, 5, 3}), ids({2, 2}, 5)}, {2, 2, 3});
        const OpDef& def = opDef(c.kind);
        const Node node = caseNode(c);
        auto attrs = resolveAttrs(def, node);
        QVERIFY(attrs.ok());
        const std::vector<Shape> inShapes = concreteInputs(c);
        const ShapeContext ctx{node, *attrs, inShapes};
        auto kernel = def.cpu(ctx, shapeOf(c.output));
        QVERIFY(kernel.ok());
        std::mt19937 gen(3);
        std::vector<std::vector<float>> x;
        for (const auto& in : c.inputs) x.push_back(makeInput(in, gen));
        x.back()[1] = bad;
        Runner run(**kernel, sz(shapeOf(c.output).numel()), *m_pool);
        Status st = run.forward(x, {}, true);
        QVERIFY2(!st.ok(), "a bad index was accepted");
        QCOMPARE(st.error().code, ErrorCode::DataError);
        QCOMPARE(st.error().param("reason"), std::string("index out of range"));
        QVERIFY2(q(st.error().message).contains(message), qPrintable(q(st.error().message)));
    }

    void planGradients_data() {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<bool>("frozenBranch");
        QTest::newRow("skip") << QString("skip") << false;
        QTest::newRow("skip, frozen branch") << QString("skip") << true;
        QTest::newRow("image") << QString("image") << false;
        QTest::newRow("mobile") << QString("mobile") << false;
    }

    void planGradients();

private:
    void runValid(int index);
    void checkAnalysis(const OpCase& c, const AttrMap& attrs, const std::vector<ParamSpec>& specs);
    void checkDropoutTraining(const OpCase& c, const AttrMap& attrs, Runner& run,
                              const std::vector<float>& x);
    void checkGradients(const OpCase& c, Runner& run, const std::vector<std::vector<float>>& x,
                        const std::vector<std::vector<float>>& p, const std::vector<ParamSpec>& specs,
                        size_t outFloats, std::mt19937& gen);
    void runInvalid(int index);

    std::unique_ptr<ThreadPool> m_pool;
};

void TestOpHarness::runValid(int index) {
    const OpCase& c = opCases()[sz(index)];
    const OpDef& def = opDef(c.kind);
    const Node node = caseNode(c);
    auto attrs = resolveAttrs(def, node);
    QVERIFY2(attrs.ok(), qPrintable(q(attrs.ok() ? "" : attrs.error().message)));

    // (a) The shape rule through a one-node context with the concrete batch.
    const std::vector<Shape> inShapes = concreteInputs(c);
    const ShapeContext ctx{node, *attrs, inShapes};
    auto shape = def.shape(ctx);
    QVERIFY2(shape.ok(), qPrintable(q(shape.ok() ? "" : shape.error().message)));
    Shape expected = shapeOf(c.output);
    if (c.kind == OpKind::Input) expected[0] = Shape::kBatch;  // an Input knows only the symbolic batch
    QCOMPARE(q(str(*shape)), q(str(expected)));
    const Shape outShape = shapeOf(c.output);
    const std::vector<ParamSpec> specs = def.params ? def.params(ctx, outShape) : std::vector<ParamSpec>{};
    if (!isLoss(c.kind)) {
        checkAnalysis(c, *attrs, specs);
        if (QTest::currentTestFailed()) return;
    }

    // (b) The kernel with concrete shapes. A Placeholder has none: it refuses, naming the node.
    if (c.kind == OpKind::Placeholder) {
        auto refused = def.cpu(ctx, outShape);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, ErrorCode::Unsupported);
        QCOMPARE(q(refused.error().node), QString("n"));
        QVERIFY2(refused.error().message.find(attrs->getString("onnx_op")) != std::string::npos,
                 refused.error().message.c_str());
        return;
    }
    auto made = def.cpu(ctx, outShape);
    QVERIFY2(made.ok(), qPrintable(q(made.ok() ? "" : made.error().message)));
    CpuKernel& kernel = **made;
    QCOMPARE(kernel.aliasesInput(), c.kind == OpKind::Flatten || c.kind == OpKind::Reshape);
    const size_t outFloats = sz(outShape.numel());
    Runner run(kernel, outFloats, *m_pool);
    if (c.kind == OpKind::Input) {  // fed by the plan: nothing to compute
        QVERIFY(run.forward({}, {}, true).ok());
        QVERIFY(run.backward(nullptr, {}, {}).ok());
        return;
    }

    // Random data (seeded) away from kinks; the reference says how close it came.
    std::mt19937 gen;
    std::vector<std::vector<float>> x, p;
    const bool frozen = !c.trainable;
    auto runRef = [&](bool training) {
        Ref r{*attrs, inShapes, outShape, training, frozen, {}, {}, {}};
        for (const auto& v : x) r.in.push_back(toDouble(v));
        for (const auto& v : p) r.params.push_back(toDouble(v));
        reference(c.kind, r);
        return r;
    };
    for (int attempt = 0;; ++attempt) {
        QVERIFY2(attempt < 300, "could not draw data away from non-differentiable points");
        gen.seed(static_cast<uint32_t>(7919 * index + attempt));
        x.clear();
        p.clear();
        for (const auto& in : c.inputs) x.push_back(makeInput(in, gen));
        for (const auto& s : specs) p.push_back(makeParam(s, gen));
        if (runRef(true).kink > kKinkMargin) break;
    }

    for (bool training : {true, false}) {
        const Ref want = runRef(training);
        QCOMPARE(want.out.size(), outFloats);
        QVERIFY2(run.forward(x, p, training).ok(),
                 training ? "training forward failed" : "inference forward failed");
        const std::string mode = training ? "training" : "inference";
        // Inputs are read-only, aliasing or not.
        for (size_t k = 0; k < x.size(); ++k)
            QVERIFY2(run.inputs()[k].equals(x[k]),
                     qPrintable(q(mode + ": forward modified input " + std::to_string(k))));
        const double rate = c.kind == OpKind::Dropout ? attrs->getFloat("rate") : 0.0;
        const bool attentionDropout =
            c.kind == OpKind::MultiHeadAttention && training && attrs->getFloat("dropout") > 0;
        if (c.kind == OpKind::Dropout && training && rate > 0) {
            checkDropoutTraining(c, *attrs, run, x[0]);
            if (QTest::currentTestFailed()) return;
        } else if (attentionDropout) {
            // Dropped attention weights: not the reference's output, the same for the same step,
            // another for the next step. (Inference, below, matches the reference; the gradients
            // are checked with the mask of one step.)
            const std::vector<float> first(run.out(), run.out() + outFloats);
            std::string bad = firstMismatch(run.out(), want.out, kRefRtol, kRefAtol, "dropped");
            QVERIFY2(!bad.empty(), "attention dropout changed nothing while training");
            QVERIFY(run.forward(x, p, true).ok());
            QVERIFY(std::equal(first.begin(), first.end(), run.out()));
            run.setStep(kStep + 1);
            QVERIFY(run.forward(x, p, true).ok());
            run.setStep(kStep);
            QVERIFY2(!std::equal(first.begin(), first.end(), run.out()), "the attention mask did not change with the step");
            QVERIFY(run.forward(x, p, true).ok());
        } else {
            std::string bad = firstMismatch(run.out(), want.out, kRefRtol, kRefAtol, mode + " output");
            QVERIFY2(bad.empty(), qPrintable(q(bad)));
        }
        // Parameters: only BatchNormalization's moving statistics change, and only while training.
        for (size_t k = 0; k < p.size(); ++k) {
            const bool moving = !specs[k].trainable;
            if (moving && training && !frozen) {
                std::string bad = firstMismatch(run.params()[k].data(), want.params[k], kRefRtol, kRefAtol,
                                                mode + " " + specs[k].name);
                QVERIFY2(bad.empty(), qPrintable(q(bad)));
            } else {
                QVERIFY2(run.params()[k].equals(p[k]),
                         qPrintable(q(mode + ": forward modified " + specs[k].name)));
            }
        }
    }

    // (c) Gradients.
    checkGradients(c, run, x, p, specs, outFloats, gen);
}

void TestOpHarness::checkAnalysis(const OpCase& c, const AttrMap& attrs,
                                  const std::vector<ParamSpec>& specs) {
    auto m = analyzeModel(caseGraph(c));
    QVERIFY2(m.ok(), qPrintable(q(m.ok() ? "" : m.error().message)));
    const NodeInfo& ni = m->info("n");
    Shape symbolic = shapeOf(c.output);
    symbolic[0] = Shape::kBatch;
    QCOMPARE(q(str(ni.output)), q(str(symbolic)));
    QVERIFY(ni.attrs == attrs);
    QCOMPARE(ni.params.size(), specs.size());
    for (size_t k = 0; k < specs.size(); ++k) {
        QCOMPARE(q(ni.params[k].name), q(specs[k].name));
        QCOMPARE(q(str(ni.params[k].shape)), q(str(specs[k].shape)));
        QCOMPARE(ni.params[k].trainable, specs[k].trainable);
    }
}

void TestOpHarness::checkDropoutTraining(const OpCase& c, const AttrMap& attrs, Runner& run,
                                         const std::vector<float>& x) {
    const double rate = attrs.getFloat("rate");
    const double scale = 1.0 / (1.0 - rate);
    const size_t n = x.size();
    std::vector<char> kept(n);
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
        const double y = run.out()[i], want = x[i] * scale;
        kept[i] = y != 0.0;
        if (kept[i]) {
            ++count;
            QVERIFY2(std::fabs(y - want) <= 1e-6 * std::fabs(want) + 1e-7,
                     qPrintable(
                         QString("element %1: %2 is neither 0 nor x/(1-rate) = %3").arg(i).arg(y).arg(want)));
        }
    }
    // With a noise shape, elements that differ only along its axes of size 1 share one decision.
    const std::vector<int64_t> dims = c.inputs[0].shape;
    const std::vector<int64_t> noise = attrs.getInts("noise_shape");
    size_t decisions = n;
    if (!noise.empty()) {
        std::map<int64_t, char> first;  // noise position -> the decision of its first element
        for (size_t i = 0; i < n; ++i) {
            int64_t rest = static_cast<int64_t>(i), j = 0, stride = 1;
            for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
                const int64_t d = dims[static_cast<size_t>(k)];
                const bool shared = noise[static_cast<size_t>(k)] == 1;
                j += shared ? 0 : (rest % d) * stride;
                stride *= shared ? 1 : d;
                rest /= d;
            }
            auto [it, fresh] = first.emplace(j, kept[i]);
            QVERIFY2(fresh || it->second == kept[i],
                     qPrintable(q(c.name + ": element " + std::to_string(i) +
                                  " has another decision than the rest of its noise position " + std::to_string(j))));
        }
        decisions = first.size();
    }
    const double fraction = static_cast<double>(count) / static_cast<double>(n);
    if (decisions >= 1000)
        QVERIFY2(std::fabs(fraction - (1.0 - rate)) < 0.03,
                 qPrintable(QString("kept fraction %1, expected about %2").arg(fraction).arg(1.0 - rate)));
    else
        QVERIFY2(count > 0 && count < n, "dropout kept everything or nothing");
    // The same (seed, step) gives the same mask; the next step another one.
    const std::vector<float> firstOut(run.out(), run.out() + n);
    QVERIFY(run.forward({x}, {}, true).ok());
    QVERIFY(std::equal(firstOut.begin(), firstOut.end(), run.out()));
    run.setStep(kStep + 1);
    QVERIFY(run.forward({x}, {}, true).ok());
    run.setStep(kStep);
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i) differ += (run.out()[i] != 0.0f) != static_cast<bool>(kept[i]);
    QVERIFY2(differ > 0, qPrintable(q(c.name + ": the mask did not change with the step")));
}

void TestOpHarness::checkGradients(const OpCase& c, Runner& run, const std::vector<std::vector<float>>& x,
                                   const std::vector<std::vector<float>>& p,
                                   const std::vector<ParamSpec>& specs, size_t outFloats, std::mt19937& gen) {
    const bool loss = isLoss(c.kind);
    std::vector<float> dOut(outFloats);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (auto& v : dOut) v = d(gen);

    std::vector<bool> diffIn(x.size()), trainP(p.size());
    for (size_t k = 0; k < x.size(); ++k) diffIn[k] = differentiableInput(c.kind, k);
    for (size_t k = 0; k < p.size(); ++k) trainP[k] = specs[k].trainable && c.trainable;

    // Analytic gradients: zeroed buffers, one backward after a training forward.
    std::vector<Buf> dIn(x.size()), dParams(p.size());
    Buf dOutBuf(outFloats);
    constexpr int kAllInputs = -1, kNoInputs = -2;
    auto backward = [&](int inputs, bool withParams) -> Status {
        dOutBuf.assign(dOut);
        std::vector<float*> in(x.size(), nullptr), pp(p.size(), nullptr);
        for (size_t k = 0; k < x.size(); ++k)
            if (diffIn[k] && (inputs == kAllInputs || inputs == static_cast<int>(k))) in[k] = dIn[k].data();
        for (size_t k = 0; k < p.size(); ++k)
            if (trainP[k] && withParams) pp[k] = dParams[k].data();
        if (run.alias()) in[0] = dOutBuf.data();  // the plan shares one gradient buffer along an alias
        return run.backward(loss ? nullptr : dOutBuf.data(), in, pp);
    };
    auto zeroGrads = [&] {
        for (size_t k = 0; k < x.size(); ++k) dIn[k].reset(x[k].size(), 0.0f);
        for (size_t k = 0; k < p.size(); ++k) dParams[k].reset(p[k].size(), 0.0f);
    };
    zeroGrads();
    QVERIFY(run.forward(x, p, true).ok());
    QVERIFY(backward(kAllInputs, true).ok());
    std::vector<std::vector<float>> gIn(x.size()), gP(p.size());
    for (size_t k = 0; k < x.size(); ++k) gIn[k] = run.alias() && k == 0 ? dOutBuf.vec() : dIn[k].vec();
    for (size_t k = 0; k < p.size(); ++k) gP[k] = dParams[k].vec();
    if (run.alias())
        QVERIFY2(gIn[0] == dOut, "an aliasing kernel's backward must leave the shared gradient alone");

    // Gradients accumulate, and skipped (null) gradients change nothing else (up to the rounding of
    // sums that start from a non-zero value).
    auto sameGrad = [](const Buf& got, const std::vector<float>& want, float factor) {
        double scale = 0;
        for (float v : want) scale = std::max(scale, std::fabs(static_cast<double>(v)));
        for (size_t i = 0; i < want.size(); ++i)
            if (!(std::fabs(got.data()[i] - factor * want[i]) <= 1e-5 * (std::fabs(want[i]) + scale) + 1e-7))
                return false;
        return true;
    };
    if (!run.alias()) {
        QVERIFY(backward(kAllInputs, true).ok());
        for (size_t k = 0; k < x.size(); ++k)
            QVERIFY2(!diffIn[k] || sameGrad(dIn[k], gIn[k], 2.0f),
                     qPrintable(QString("input %1 gradient does not accumulate").arg(k)));
        for (size_t k = 0; k < p.size(); ++k)
            QVERIFY2(!trainP[k] || sameGrad(dParams[k], gP[k], 2.0f),
                     qPrintable(q(specs[k].name + " gradient does not accumulate")));
        if (!loss) {
            zeroGrads();
            QVERIFY(backward(kNoInputs, true).ok());
            for (size_t k = 0; k < p.size(); ++k)
                QVERIFY2(sameGrad(dParams[k], gP[k], 1.0f),
                         qPrintable(q(specs[k].name + " gradient changes without input gradients")));
            zeroGrads();
            QVERIFY(backward(kAllInputs, false).ok());
            for (size_t k = 0; k < x.size(); ++k)
                QVERIFY2(sameGrad(dIn[k], gIn[k], 1.0f),
                         qPrintable(QString("input %1 gradient changes without parameter gradients").arg(k)));
            // One input gradient at a time (the others null, as for inputs that need none).
            for (size_t k = 0; x.size() > 1 && k < x.size(); ++k) {
                if (!diffIn[k]) continue;
                zeroGrads();
                QVERIFY(backward(static_cast<int>(k), false).ok());
                QVERIFY2(sameGrad(dIn[k], gIn[k], 1.0f),
                         qPrintable(QString("input %1 gradient changes when the others are skipped").arg(k)));
            }
        }
    }

    // Central differences of J = sum(dOut · out), or gradScale · loss, in double.
    auto objective = [&](const std::vector<std::vector<float>>& xs,
                         const std::vector<std::vector<float>>& ps) {
        Status st = run.forward(xs, ps, true);
        if (!st.ok()) return std::numeric_limits<double>::quiet_NaN();
        if (loss) return static_cast<double>(kGradScale) * run.out()[0];
        double s = 0;
        for (size_t i = 0; i < outFloats; ++i) s += static_cast<double>(dOut[i]) * run.out()[i];
        return s;
    };
    auto fdCheck = [&](std::vector<std::vector<float>>& xs, std::vector<std::vector<float>>& ps,
                       std::vector<float>& target, const std::vector<float>& analytic,
                       const std::string& what) {
        // Every element of small tensors; a seeded sample of large ones.
        std::vector<size_t> elements(target.size());
        std::iota(elements.begin(), elements.end(), size_t{0});
        if (elements.size() > kFdMaxElements) {
            std::shuffle(elements.begin(), elements.end(), gen);
            elements.resize(kFdMaxElements);
        }
        // A linear op (a convolution or Dense without activation) has no truncation error, so a larger
        // step only shrinks the float32 rounding noise of the forward pass in the difference.
        bool linearOp = c.kind == OpKind::Conv2D || c.kind == OpKind::DepthwiseConv2D || c.kind == OpKind::Dense;
        for (const auto& [name, value] : c.attrs)
            if (name == "activation" && std::get<std::string>(value) != "linear") linearOp = false;
        // Attention sums many float32 products before and after its softmax; a step of 1e-2 keeps
        // that rounding noise well below the tolerance while the truncation error stays small.
        const double step = linearOp ? 2e-2 : c.kind == OpKind::MultiHeadAttention ? 1e-2
                                                                                   : kFdEps;
        for (size_t i : elements) {
            const float v = target[i];
            const float hi = static_cast<float>(v + step), lo = static_cast<float>(v - step);
            target[i] = hi;
            const double jp = objective(xs, ps);
            target[i] = lo;
            const double jm = objective(xs, ps);
            target[i] = v;
            const double numeric = (jp - jm) / (static_cast<double>(hi) - static_cast<double>(lo));
            if (!fdClose(analytic[i], numeric)) {
                QFAIL(qPrintable(q(what + " element " + std::to_string(i) + ": analytic " +
                                   std::to_string(analytic[i]) + ", finite difference " +
                                   std::to_string(numeric))));
            }
        }
    };
    std::vector<std::vector<float>> xs = x, ps = p;
    for (size_t k = 0; k < x.size(); ++k) {
        if (!diffIn[k]) continue;
        fdCheck(xs, ps, xs[k], gIn[k], "d/d input " + std::to_string(k));
        if (QTest::currentTestFailed()) return;
    }
    for (size_t k = 0; k < p.size(); ++k) {
        if (!trainP[k]) continue;
        fdCheck(xs, ps, ps[k], gP[k], "d/d " + specs[k].name);
        if (QTest::currentTestFailed()) return;
    }
}

void TestOpHarness::runInvalid(int index) {
    const OpCase& c = opCases()[sz(index)];
    const OpDef& def = opDef(c.kind);
    const Node node = caseNode(c);
    const std::vector<Shape> inShapes = concreteInputs(c);
    std::string message;
    if (isLoss(c.kind)) {
        // Losses are not graph nodes: the plan resolves their attributes and runs the shape rule.
        auto attrs = resolveAttrs(def, node);
        if (!attrs.ok()) {
            message = attrs.error().message;
            QCOMPARE(q(attrs.error().node), QString("n"));
        } else {
            const ShapeContext ctx{node, *attrs, inShapes};
            auto s = def.shape(ctx);
            QVERIFY2(!s.ok(), qPrintable(q("accepted, giving " + (s.ok() ? str(*s) : ""))));
            message = s.error().message;
            QCOMPARE(q(s.error().node), QString("n"));
        }
    } else {
        auto m = analyzeModel(caseGraph(c));
        QVERIFY2(!m.ok(), "analyzeModel accepted the graph");
        message = m.error().message;
        QCOMPARE(q(m.error().node), QString("n"));
        // Where arity and attributes are fine, the one-node rule with a concrete batch agrees.
        const int count = static_cast<int>(c.inputs.size());
        auto attrs = resolveAttrs(def, node);
        if (attrs.ok() && count >= def.minInputs && (def.maxInputs < 0 || count <= def.maxInputs) &&
            count > 0) {
            const ShapeContext ctx{node, *attrs, inShapes};
            auto s = def.shape(ctx);
            QVERIFY2(!s.ok(), "the one-node shape rule accepted what analyzeModel rejected");
            const std::string want = concreteMessage(c.error, c.inputs[0].shape[0]);
            QVERIFY2(s.error().message.find(want) != std::string::npos,
                     qPrintable(q("one-node error \"" + s.error().message + "\" lacks \"" + want + "\"")));
        }
    }
    QVERIFY2(message.find(c.error) != std::string::npos,
             qPrintable(q("error \"" + message + "\" lacks \"" + c.error + "\"")));
}

// Graphs through the executor: every parameter gradient of trainStep against central differences
// of the loss from forward() on a second plan compiled the same way, sharing the ParamStore.
//   "skip": Input -> Dense -> ReLU -> Dense, Add with a second Dense branch, Concatenate with the
//           ReLU output, LayerNormalization, Dense, MeanSquaredError (the branch optionally frozen).
//   "image": Conv2D -> BatchNormalization -> AveragePooling2D -> Flatten -> Dropout -> Dense, times
//           Dense(GlobalAveragePooling2D) times Dense(Flatten(Embedding(ids))), Reshape, Softmax,
//           Flatten, weighted CategoricalCrossentropy: aliases (also as the loss's output),
//           moving statistics, a fixed dropout mask (same step), integer ids, gradScale.
void TestOpHarness::planGradients() {
    QFETCH(QString, graph);
    QFETCH(bool, frozenBranch);
    const bool image = graph != "skip";  // image and mobile share their inputs and loss
    constexpr int64_t kBatch = 4;
    Graph g;
    auto add = [&](const std::string& name, const std::string& op, std::vector<std::string> inputs,
                   Attrs attrs = {}) -> Node& {
        Node n;
        n.name = name;
        n.op = op;
        n.inputs = std::move(inputs);
        for (auto& [k, v] : attrs) n.attrs.set(k, v);
        g.nodes.push_back(std::move(n));
        return g.nodes.back();
    };
    exec::LossSpec loss;
    if (!image) {
        add("x", "Input", {}, {{"shape", al({6})}});
        add("d1", "Dense", {"x"}, {{"units", ai(5)}});
        add("r1", "ReLU", {"d1"});
        add("d2", "Dense", {"r1"}, {{"units", ai(4)}});
        add("d3", "Dense", {"x"}, {{"units", ai(4)}, {"activation", as("tanh")}}).trainable = !frozenBranch;
        add("sum", "Add", {"d2", "d3"});
        add("cat", "Concatenate", {"sum", "r1"});
        add("ln", "LayerNormalization", {"cat"});
        add("out", "Dense", {"ln"}, {{"units", ai(3)}});
        g.outputs = {"out"};
        loss.type = "MeanSquaredError";
        loss.output = "out";
        loss.targetShape = Shape{3};
    } else if (graph == "mobile") {
        // The ops of mobile backbones: explicit padding, depthwise convolution, swish,
        // upsampling, squeeze-and-excitation, global max pooling.
        add("x", "Input", {}, {{"shape", al({5, 5, 2})}});
        add("tok", "Input", {}, {{"shape", al({3})}, {"dtype", as("int32")}});
        add("r", "Rescaling", {"x"}, {{"scale", af(2.0)}, {"offset", af(-0.5)}});
        add("zp", "ZeroPadding2D", {"r"}, {{"padding", al({1, 0, 0, 1})}});
        add("dw", "DepthwiseConv2D", {"zp"}, {{"depth_multiplier", ai(2)}, {"strides", ai(2)}, {"padding", as("same")}});
        add("s", "SiLU", {"dw"});
        add("up", "UpSampling2D", {"s"}, {{"interpolation", as("bilinear")}});
        add("g", "GlobalAveragePooling2D", {"up"});
        add("e", "Dense", {"g"}, {{"units", ai(4)}, {"activation", as("sigmoid")}});
        add("se", "Multiply", {"up", "e"});
        add("gm", "GlobalMaxPooling2D", {"se"});
        add("hs", "HardSigmoid", {"gm"});
        add("emb", "Embedding", {"tok"}, {{"input_dim", ai(5)}, {"output_dim", ai(2)}});
        add("fe", "Flatten", {"emb"});
        add("de", "Dense", {"fe"}, {{"units", ai(4)}});
        add("sub", "Subtract", {"hs", "de"});
        add("out", "Softmax", {"sub"});
        g.outputs = {"out"};
        loss.type = "CategoricalCrossentropy";
        loss.output = "out";
        loss.targetShape = Shape{4};
        loss.weight = 2.0f;
    } else {
        add("x", "Input", {}, {{"shape", al({5, 5, 2})}});
        add("tok", "Input", {}, {{"shape", al({3})}, {"dtype", as("int32")}});
        add("c1", "Conv2D", {"x"}, {{"filters", ai(3)}, {"padding", as("same")}, {"activation", as("tanh")}});
        add("bn", "BatchNormalization", {"c1"});
        add("p1", "AveragePooling2D", {"bn"});
        add("f1", "Flatten", {"p1"});
        add("dr", "Dropout", {"f1"}, {{"rate", af(0.3)}});
        add("d1", "Dense", {"dr"}, {{"units", ai(4)}});
        add("gp", "GlobalAveragePooling2D", {"x"});
        add("d2", "Dense", {"gp"}, {{"units", ai(4)}, {"activation", as("sigmoid")}});
        add("emb", "Embedding", {"tok"}, {{"input_dim", ai(5)}, {"output_dim", ai(2)}});
        add("fe", "Flatten", {"emb"});
        add("de", "Dense", {"fe"}, {{"units", ai(4)}});
        add("m", "Multiply", {"d1", "d2", "de"});
        add("rs", "Reshape", {"m"}, {{"target_shape", al({2, 2})}});
        add("sm", "Softmax", {"rs"});
        add("out", "Flatten", {"sm"});
        g.outputs = {"out"};
        loss.type = "CategoricalCrossentropy";
        loss.output = "out";
        loss.targetShape = Shape{4};
        loss.weight = 2.0f;
    }
    auto model = analyzeModel(g);
    QVERIFY2(model.ok(), qPrintable(q(model.ok() ? "" : model.error().message)));

    exec::ParamStore store = exec::ParamStore::create(*model, 11);
    std::mt19937 gen(2024);
    std::uniform_real_distribution<float> u(-0.8f, 0.8f);
    for (auto& prm : store.params()) {  // biases start at zero: make every path matter
        const bool positive = prm.spec.name == "gamma" || prm.spec.name == "moving_variance";
        for (float& v : prm.value.f32()) v = positive ? 1.0f + u(gen) / 2 : u(gen);
    }

    exec::CompileOptions opt;
    opt.batch = kBatch;
    opt.training = true;
    opt.seed = 5;
    opt.losses = {loss};
    auto train = exec::Plan::compile(*model, store, opt, *m_pool);
    QVERIFY2(train.ok(), qPrintable(q(train.ok() ? "" : train.error().message)));
    auto eval = exec::Plan::compile(*model, store, opt, *m_pool);
    QVERIFY2(eval.ok(), qPrintable(q(eval.ok() ? "" : eval.error().message)));

    std::vector<std::vector<float>> inputs;
    std::vector<float> target;
    std::uniform_real_distribution<float> ux(-1.0f, 1.0f);
    if (!image) {
        // Inputs whose d1 pre-activations stay clear of ReLU's kink.
        const exec::Parameter* w1 = store.find("d1/kernel");
        const exec::Parameter* b1 = store.find("d1/bias");
        QVERIFY(w1 && b1);
        std::vector<float> x(kBatch * 6);
        for (int attempt = 0;; ++attempt) {
            QVERIFY(attempt < 100);
            for (auto& v : x) v = ux(gen);
            double closest = 1e9;
            for (int64_t r = 0; r < kBatch; ++r)
                for (int64_t j = 0; j < 5; ++j) {
                    double s = b1->value.f32()[sz(j)];
                    for (int64_t i = 0; i < 6; ++i)
                        s += static_cast<double>(x[sz(r * 6 + i)]) * w1->value.f32()[sz(i * 5 + j)];
                    closest = std::min(closest, std::fabs(s));
                }
            if (closest > 0.05) break;
        }
        inputs = {x};
        std::uniform_real_distribution<float> ut(-2.0f, 2.0f);
        for (int64_t i = 0; i < kBatch * 3; ++i) target.push_back(ut(gen));
    } else {
        inputs = {makeInput(uniform({kBatch, 5, 5, 2}), gen), makeInput(ids({kBatch, 3}, 5), gen)};
        target = makeInput(oneHot({kBatch, 4}), gen);
    }
    for (auto* plan : {train->get(), eval->get()}) {
        for (size_t k = 0; k < inputs.size(); ++k)
            std::copy(inputs[k].begin(), inputs[k].end(), plan->input(k));
        std::copy(target.begin(), target.end(), plan->target(0));
    }

    QVERIFY(train->get()->trainStep(0).ok());
    const float trainLoss = train->get()->loss(0);
    std::vector<std::vector<float>> grads;
    for (const auto& prm : store.params()) grads.emplace_back(prm.grad.f32().begin(), prm.grad.f32().end());
    // A second step zeroes and recomputes: bit-identical.
    QVERIFY(train->get()->trainStep(0).ok());
    for (size_t k = 0; k < grads.size(); ++k)
        QVERIFY2(std::equal(grads[k].begin(), grads[k].end(), store.params()[k].grad.f32().begin()),
                 qPrintable(q(store.params()[k].name + " differs between two identical steps")));
    QVERIFY(eval->get()->forward(0).ok());
    QCOMPARE(eval->get()->loss(0), trainLoss);
    QVERIFY(std::isfinite(trainLoss) && trainLoss > 0.0f);

    size_t checked = 0;
    for (size_t k = 0; k < store.params().size(); ++k) {
        auto& prm = store.params()[k];
        const auto& grad = grads[k];
        if (!prm.trainable) {  // frozen or moving statistics: no gradient at all
            QVERIFY2(std::all_of(grad.begin(), grad.end(), [](float v) { return v == 0.0f; }),
                     qPrintable(q(prm.name + " is not trainable but has a gradient")));
            continue;
        }
        auto values = prm.value.f32();
        for (size_t i = 0; i < values.size(); ++i) {
            const float v = values[i];
            const float hi = static_cast<float>(v + kFdEps), lo = static_cast<float>(v - kFdEps);
            values[i] = hi;
            QVERIFY(eval->get()->forward(0).ok());
            const double jp = eval->get()->loss(0);
            values[i] = lo;
            QVERIFY(eval->get()->forward(0).ok());
            const double jm = eval->get()->loss(0);
            values[i] = v;
            const double numeric =
                loss.weight * (jp - jm) / (static_cast<double>(hi) - static_cast<double>(lo));
            QVERIFY2(
                fdClose(grad[i], numeric),
                qPrintable(q(prm.name + " element " + std::to_string(i) + ": trainStep " +
                             std::to_string(grad[i]) + ", finite difference " + std::to_string(numeric))));
            ++checked;
        }
    }
    QVERIFY(checked > 50);
}

QTEST_APPLESS_MAIN(TestOpHarness)
#include "tst_op_harness.moc"
