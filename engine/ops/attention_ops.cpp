// SPDX-License-Identifier: Apache-2.0
// Attention family: MultiHeadAttention, Keras's layer of that name. Inputs query [B, Tq, D] and
// value [B, Tv, D] (the key is the value; self-attention when both ports read the same node).
// Per head h: Q = query·Wq[:, h] + bq[h], K = value·Wk[:, h] + bk[h], V = value·Wv[:, h] + bv[h],
// P = softmax(Q·Kᵀ / sqrt(key_dim)) over the key axis (optionally causal), dropout on P while
// training, O[h] = P·V; the heads' outputs are joined by attention_output: y = Σ_h O[h]·Wo[h] + bo.
// The projections and the output are whole-batch GEMMs; the per-head products run one (batch,
// head) pair per task with the serial GEMM, so results do not depend on the thread count.
#include <cmath>
#include <limits>
#include <optional>

#include "engine/ops/kernels/dropout.h"
#include "engine/ops/kernels/gemm.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

struct MhaDims {
    int64_t batch = 0, tq = 0, tv = 0, d = 0;  // query [batch, tq, d], value [batch, tv, d]
    int64_t heads = 0, key = 0, value = 0, out = 0;
};

// The output width: output_dim, or the query's last dimension when it is 0 (Keras's None).
int64_t mhaOutputDim(const ShapeContext& c) {
    const int64_t o = c.attrs.getInt("output_dim");
    return o > 0 ? o : c.inputs[0][-1];
}

// value_dim, or key_dim when it is 0 (Keras's None).
int64_t mhaValueDim(const AttrMap& a) {
    const int64_t v = a.getInt("value_dim");
    return v > 0 ? v : a.getInt("key_dim");
}

Result<Shape> mhaShape(const ShapeContext& c) {
    const Shape& q = c.inputs[0];
    const Shape& v = c.inputs[1];
    if (q.rank() != 3)
        return shapeError(c, "expects a query of rank 3 [batch, positions, features] but got " + q.toString() +
                                 (q.rank() == 2 ? ": add a Reshape to [positions, features] before it" : ""));
    if (v.rank() != 3)
        return shapeError(c, "expects a value of rank 3 [batch, positions, features] but got " + v.toString());
    if (q[-1] != v[-1])
        return shapeError(c, "needs query and value with the same feature size, got " + q.toString() + " and " +
                                 v.toString());
    if (c.attrs.getBool("use_causal_mask") && q[1] != v[1])
        return shapeError(c, "has use_causal_mask, which needs as many query as value positions, got " +
                                 q.toString() + " and " + v.toString());
    return Shape{q[0], q[1], mhaOutputDim(c)};
}

std::vector<ParamSpec> mhaParams(const ShapeContext& c, const Shape& out) {
    const int64_t d = c.inputs[0][-1], h = c.attrs.getInt("num_heads"), k = c.attrs.getInt("key_dim");
    const int64_t v = mhaValueDim(c.attrs), e = out[-1];
    const bool bias = c.attrs.getBool("use_bias");
    std::vector<ParamSpec> p;
    auto proj = [&](const std::string& name, int64_t width) {
        p.push_back({name + "/kernel", Shape{d, h, width}, Init::GlorotUniform});
        if (bias) p.push_back({name + "/bias", Shape{h, width}, Init::Zeros});
    };
    proj("query", k);
    proj("key", k);
    proj("value", v);
    p.push_back({"attention_output/kernel", Shape{h, v, e}, Init::GlorotUniform});
    if (bias) p.push_back({"attention_output/bias", Shape{e}, Init::Zeros});
    return p;
}

int64_t mhaMacs(const ShapeContext& c, const Shape& out) {
    const int64_t tq = c.inputs[0][1], tv = c.inputs[1][1], d = c.inputs[0][-1];
    const int64_t h = c.attrs.getInt("num_heads"), k = c.attrs.getInt("key_dim"), v = mhaValueDim(c.attrs);
    return tq * d * h * k + tv * d * h * (k + v) + h * tq * tv * (k + v) + tq * h * v * out[-1];
}

class MultiHeadAttentionKernel final : public CpuKernel {
public:
    MultiHeadAttentionKernel(MhaDims m, bool bias, bool causal, float rate) : m_(m), m_bias(bias), m_causal(causal), m_rate(rate) {
        m_hk = m.heads * m.key;
        m_hv = m.heads * m.value;
        m_nq = m.batch * m.tq;
        m_nv = m.batch * m.tv;
        m_np = m.batch * m.heads * m.tq * m.tv;
        m_scale = 1.0f / std::sqrt(static_cast<float>(m.key));
        // saved: Q, K, V projections, the probabilities, the dropped probabilities, O, the mask.
        m_offQ = 0;
        m_offK = m_offQ + m_nq * m_hk;
        m_offV = m_offK + m_nv * m_hk;
        m_offP = m_offV + m_nv * m_hv;
        m_offPd = m_offP + m_np;
        m_offO = m_offPd + (m_rate > 0.0f ? m_np : 0);
        m_offMask = m_offO + m_nq * m_hv;
        m_saved = m_offMask + (m_rate > 0.0f ? (m_np + 3) / 4 : 0);
        // workspace (backward): dO, dP (after the dropout's), dS, dQ, dK, dV.
        m_wdO = 0;
        m_wdP = m_wdO + m_nq * m_hv;
        m_wdPd = m_wdP + m_np;
        m_wdS = m_wdPd + (m_rate > 0.0f ? m_np : 0);
        m_wdQ = m_wdS + m_np;
        m_wdK = m_wdQ + m_nq * m_hk;
        m_wdV = m_wdK + m_nv * m_hk;
        m_work = m_wdV + m_nv * m_hv;
    }
    size_t savedFloats() const override { return static_cast<size_t>(m_saved); }
    size_t workspaceFloats() const override { return static_cast<size_t>(m_work); }

    Status forward(const KernelIo& io) override {
        ThreadPool& pool = *io.pool;
        const float* q = io.in[0];
        const float* v = io.in[1];
        float* s = io.saved;
        float* Q = s + m_offQ;
        float* K = s + m_offK;
        float* V = s + m_offV;
        float* P = s + m_offP;
        float* O = s + m_offO;
        project(q, m_nq, param(io, Wq), bias(io, Bq), Q, m_hk, pool);
        project(v, m_nv, param(io, Wk), bias(io, Bk), K, m_hk, pool);
        project(v, m_nv, param(io, Wv), bias(io, Bv), V, m_hv, pool);

        const int64_t tq = m_.tq, tv = m_.tv, key = m_.key, val = m_.value, heads = m_.heads;
        pool.parallelFor(m_.batch * heads, 1, [&](int64_t lo, int64_t hi) {
            for (int64_t bh = lo; bh < hi; ++bh) {
                const int64_t b = bh / heads, h = bh % heads;
                float* p = P + bh * tq * tv;
                kernels::gemmSerial(false, true, tq, tv, key, m_scale, Q + b * tq * m_hk + h * key, m_hk,
                                    K + b * tv * m_hk + h * key, m_hk, 0.0f, p, tv);
                for (int64_t i = 0; i < tq; ++i) softmaxRow(p + i * tv, m_causal ? i + 1 : tv, tv);
            }
        });
        const float* pd = P;
        if (io.training && m_rate > 0.0f) {
            float* Pd = s + m_offPd;
            kernels::dropoutForward(P, Pd, mask(io), m_np, m_rate, io.seed, io.step, true, pool);
            pd = Pd;
        }
        pool.parallelFor(m_.batch * heads, 1, [&](int64_t lo, int64_t hi) {
            for (int64_t bh = lo; bh < hi; ++bh) {
                const int64_t b = bh / heads, h = bh % heads;
                kernels::gemmSerial(false, false, tq, val, tv, 1.0f, pd + bh * tq * tv, tv, V + b * tv * m_hv + h * val,
                                    m_hv, 0.0f, O + b * tq * m_hv + h * val, m_hv);
            }
        });
        project(O, m_nq, param(io, Wo), bias(io, Bo), io.out, m_.out, m_hv, pool);
        return {};
    }

    Status backward(const KernelIo& io) override {
        ThreadPool& pool = *io.pool;
        const float* q = io.in[0];
        const float* v = io.in[1];
        const float* s = io.saved;
        const float* Q = s + m_offQ;
        const float* K = s + m_offK;
        const float* V = s + m_offV;
        const float* P = s + m_offP;
        const float* O = s + m_offO;
        const bool dropped = io.training && m_rate > 0.0f;
        const float* pd = dropped ? s + m_offPd : P;
        float* w = io.workspace;
        float* dO = w + m_wdO;
        float* dP = w + m_wdP;
        float* dS = w + m_wdS;
        float* dQ = w + m_wdQ;
        float* dK = w + m_wdK;
        float* dV = w + m_wdV;
        const int64_t tq = m_.tq, tv = m_.tv, key = m_.key, val = m_.value, heads = m_.heads, e = m_.out;

        // Output projection: y = O·Wo + bo.
        if (float* g = dParam(io, Bo)) addColumnSums(io.dOut, m_nq, e, g, pool);
        if (float* g = dParam(io, Wo))
            kernels::gemm(true, false, m_hv, e, m_nq, 1.0f, O, m_hv, io.dOut, e, 1.0f, g, e, pool);
        kernels::gemm(false, true, m_nq, m_hv, e, 1.0f, io.dOut, e, param(io, Wo), e, 0.0f, dO, m_hv, pool);

        // O = Pd·V per (batch, head).
        pool.parallelFor(m_.batch * heads, 1, [&](int64_t lo, int64_t hi) {
            for (int64_t bh = lo; bh < hi; ++bh) {
                const int64_t b = bh / heads, h = bh % heads;
                const float* dOb = dO + b * tq * m_hv + h * val;
                kernels::gemmSerial(false, true, tq, tv, val, 1.0f, dOb, m_hv, V + b * tv * m_hv + h * val, m_hv, 0.0f,
                                    dP + bh * tq * tv, tv);
                kernels::gemmSerial(true, false, tv, val, tq, 1.0f, pd + bh * tq * tv, tv, dOb, m_hv, 0.0f,
                                    dV + b * tv * m_hv + h * val, m_hv);
            }
        });
        const float* dProb = dP;
        if (dropped) {
            float* dPd = w + m_wdPd;
            std::fill_n(dPd, m_np, 0.0f);
            kernels::dropoutBackward(dP, mask(io), dPd, m_np, m_rate, true, pool);
            dProb = dPd;
        }
        // Softmax (masked entries have P = 0 and so no gradient) and the 1/sqrt(key_dim) scale.
        const int64_t rows = m_.batch * heads * tq;
        pool.parallelFor(rows, 16, [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
                const float* p = P + r * tv;
                const float* dp = dProb + r * tv;
                float* ds = dS + r * tv;
                double dot = 0.0;
                for (int64_t j = 0; j < tv; ++j) dot += static_cast<double>(p[j]) * dp[j];
                const auto d = static_cast<float>(dot);
                for (int64_t j = 0; j < tv; ++j) ds[j] = m_scale * p[j] * (dp[j] - d);
            }
        });
        // S = Q·Kᵀ per (batch, head).
        pool.parallelFor(m_.batch * heads, 1, [&](int64_t lo, int64_t hi) {
            for (int64_t bh = lo; bh < hi; ++bh) {
                const int64_t b = bh / heads, h = bh % heads;
                const float* ds = dS + bh * tq * tv;
                kernels::gemmSerial(false, false, tq, key, tv, 1.0f, ds, tv, K + b * tv * m_hk + h * key, m_hk, 0.0f,
                                    dQ + b * tq * m_hk + h * key, m_hk);
                kernels::gemmSerial(true, false, tv, key, tq, 1.0f, ds, tv, Q + b * tq * m_hk + h * key, m_hk, 0.0f,
                                    dK + b * tv * m_hk + h * key, m_hk);
            }
        });
        // The input projections; query and value may be one buffer (self-attention): every
        // contribution is added.
        projectBack(q, m_nq, dQ, m_hk, io, Wq, Bq, io.dIn[0], pool);
        // The key bias adds q·bk to every score of a row, which the softmax cancels: its gradient
        // is exactly zero, so nothing is added (the column sums would be rounding noise).
        projectBack(v, m_nv, dK, m_hk, io, Wk, std::nullopt, io.dIn[1], pool);
        projectBack(v, m_nv, dV, m_hv, io, Wv, Bv, io.dIn[1], pool);
        return {};
    }

private:
    enum Which { Wq,
                 Bq,
                 Wk,
                 Bk,
                 Wv,
                 Bv,
                 Wo,
                 Bo };
    // Parameter positions in ParamSpec order (no biases without use_bias).
    size_t index(Which w) const {
        if (m_bias) return static_cast<size_t>(w);
        return static_cast<size_t>(w) / 2;
    }
    const float* param(const KernelIo& io, Which w) const { return io.params[index(w)]; }
    const float* bias(const KernelIo& io, Which w) const { return m_bias ? io.params[index(w)] : nullptr; }
    float* dParam(const KernelIo& io, Which w) const {
        if (!m_bias && (w == Bq || w == Bk || w == Bv || w == Bo)) return nullptr;
        return io.dParams[index(w)];
    }
    uint8_t* mask(const KernelIo& io) const { return reinterpret_cast<uint8_t*>(io.saved + m_offMask); }

    // y[rows, width] = x[rows, d]·W[d, width] + b.
    void project(const float* x, int64_t rows, const float* wt, const float* b, float* y, int64_t width,
                 ThreadPool& pool) const {
        project(x, rows, wt, b, y, width, m_.d, pool);
    }
    static void project(const float* x, int64_t rows, const float* wt, const float* b, float* y, int64_t width,
                        int64_t in, ThreadPool& pool) {
        kernels::gemm(false, false, rows, width, in, 1.0f, x, in, wt, width, 0.0f, y, width, pool);
        if (b) kernels::biasActivationForward(y, b, rows, width, kernels::Activation::Linear, 0.0f, pool);
    }
    // From dy[rows, width] of y = x·W + b: dW += xᵀ·dy, db += column sums, dx += dy·Wᵀ.
    void projectBack(const float* x, int64_t rows, const float* dy, int64_t width, const KernelIo& io, Which wk,
                     std::optional<Which> wb, float* dx, ThreadPool& pool) const {
        const int64_t d = m_.d;
        if (float* g = wb ? dParam(io, *wb) : nullptr) addColumnSums(dy, rows, width, g, pool);
        if (float* g = dParam(io, wk)) kernels::gemm(true, false, d, width, rows, 1.0f, x, d, dy, width, 1.0f, g, width, pool);
        if (dx) kernels::gemm(false, true, rows, d, width, 1.0f, dy, width, param(io, wk), width, 1.0f, dx, d, pool);
    }
    // Softmax of row[0, valid) in place, in double sums; row[valid, n) (the causal mask) is 0.
    static void softmaxRow(float* row, int64_t valid, int64_t n) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < valid; ++j) m = std::max(m, row[j]);
        double sum = 0.0;
        for (int64_t j = 0; j < valid; ++j) {
            const float e = std::exp(row[j] - m);
            row[j] = e;
            sum += e;
        }
        const auto inv = static_cast<float>(1.0 / sum);
        for (int64_t j = 0; j < valid; ++j) row[j] *= inv;
        for (int64_t j = valid; j < n; ++j) row[j] = 0.0f;
    }

    MhaDims m_;
    bool m_bias, m_causal;
    float m_rate;
    float m_scale = 1.0f;
    int64_t m_hk = 0, m_hv = 0, m_nq = 0, m_nv = 0, m_np = 0;
    int64_t m_offQ = 0, m_offK = 0, m_offV = 0, m_offP = 0, m_offPd = 0, m_offO = 0, m_offMask = 0, m_saved = 0;
    int64_t m_wdO = 0, m_wdP = 0, m_wdPd = 0, m_wdS = 0, m_wdQ = 0, m_wdK = 0, m_wdV = 0, m_work = 0;
};

Result<std::unique_ptr<CpuKernel>> mhaKernel(const ShapeContext& c, const Shape& out) {
    MhaDims m;
    m.batch = c.inputs[0][0];
    m.tq = c.inputs[0][1];
    m.tv = c.inputs[1][1];
    m.d = c.inputs[0][2];
    m.heads = c.attrs.getInt("num_heads");
    m.key = c.attrs.getInt("key_dim");
    m.value = mhaValueDim(c.attrs);
    m.out = out[-1];
    return makeKernel<MultiHeadAttentionKernel>(m, c.attrs.getBool("use_bias"), c.attrs.getBool("use_causal_mask"),
                                                static_cast<float>(c.attrs.getFloat("dropout")));
}

}  // namespace

std::vector<OpDef> attentionOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::MultiHeadAttention, "MultiHeadAttention", Category::Core, 2, 2, {requiredInt("num_heads", 1, "number of attention heads"), requiredInt("key_dim", 1, "size of each head's query and key"), intAttr("value_dim", 0, 0, std::nullopt, "size of each head's value; 0: key_dim"), floatAttr("dropout", 0.0, 0.0, 0.99, "dropout rate on the attention weights while training"), boolAttr("use_bias", true, "learned biases in the projections"), intAttr("output_dim", 0, 0, std::nullopt, "size of the output's last axis; 0: the query's"), boolAttr("use_causal_mask", false, "position i attends to positions 0..i only")}, mhaShape, mhaParams, mhaMacs, mhaKernel, "Scaled dot-product attention of the query over the value in several heads (inputs: query, value)"});
    return rows;
}

}  // namespace kiln::engine::ops
