// SPDX-License-Identifier: Apache-2.0
// Optimizer config validation and the fused update kernels (Keras 3 update formulas, float32
// state, double-precision scalars and norm reductions).
#include "engine/optim/optimizer.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__SSE2__) || defined(__AVX__)
#include <immintrin.h>
#endif

namespace kiln::engine::optim {

namespace {

// Gradient-norm reduction unit. Fixed, so partial sums (and hence clipping) do not depend on
// the number of threads.
constexpr int64_t kNormBlock = 16384;
// Below this many elements in total a step runs on the calling thread: waking workers costs
// more than the update itself.
constexpr int64_t kMinParallelElements = 32768;

constexpr double kDefaultSgdLearningRate = 0.01;
constexpr double kDefaultLearningRate = 0.001;
constexpr double kDefaultAdamWWeightDecay = 0.004;

Error configError(const std::string& field, const std::string& reason) {
    return Error(ErrorCode::ConfigError, field + " " + reason)
        .with("field", field)
        .with("reason", reason);
}

bool finite(double v) { return std::isfinite(v); }

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Sum of squares of x[0, n) in double with four independent accumulators; the association
// order depends only on n.
double sumSquares(const float* x, int64_t n) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const double x0 = x[i], x1 = x[i + 1], x2 = x[i + 2], x3 = x[i + 3];
        a0 += x0 * x0;
        a1 += x1 * x1;
        a2 += x2 * x2;
        a3 += x3 * x3;
    }
    for (; i < n; ++i) {
        const double v = x[i];
        a0 += v * v;
    }
    return (a0 + a1) + (a2 + a3);
}

// Lane types for the update kernels. GCC cannot auto-vectorise std::sqrt while -fmath-errno is
// on (the default), so the kernels are written once over a lane type and run with an explicit
// SIMD lane plus a scalar tail. Every operation is IEEE-exact per element (no reassociation, no
// contraction under -std=c++20), and which elements take the SIMD path depends only on their
// index within the tensor (see step()), so results never depend on the thread count.
struct ScalarLane {
    using V = float;
    static constexpr int kWidth = 1;
    static V load(const float* p) { return *p; }
    static void store(float* p, V v) { *p = v; }
    static V set(float x) { return x; }
    static V sqrt(V x) { return std::sqrt(x); }
    // x86 maxps/minps semantics: the second operand is returned when either is NaN.
    static V max(V a, V b) { return a > b ? a : b; }
    static V min(V a, V b) { return a < b ? a : b; }
};

#if defined(__AVX__)
#define KILN_OPTIM_SIMD 1
struct SimdLane {
    using V = __m256;
    static constexpr int kWidth = 8;
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V set(float x) { return _mm256_set1_ps(x); }
    static V sqrt(V x) { return _mm256_sqrt_ps(x); }
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V min(V a, V b) { return _mm256_min_ps(a, b); }
};
#elif defined(__SSE2__)
#define KILN_OPTIM_SIMD 1
struct SimdLane {
    using V = __m128;
    static constexpr int kWidth = 4;
    static V load(const float* p) { return _mm_loadu_ps(p); }
    static void store(float* p, V v) { _mm_storeu_ps(p, v); }
    static V set(float x) { return _mm_set1_ps(x); }
    static V sqrt(V x) { return _mm_sqrt_ps(x); }
    static V max(V a, V b) { return _mm_max_ps(a, b); }
    static V min(V a, V b) { return _mm_min_ps(a, b); }
};
#else
#define KILN_OPTIM_SIMD 0
#endif

// Elements per SIMD lane group; chunk boundaries inside a tensor are multiples of this.
constexpr int64_t kLaneAlign = 64;

// Runs k.apply<Lane>(i) over [0, count): SIMD groups first, then a scalar tail.
template <typename Kernel>
void runKernel(const Kernel& k, int64_t count) {
    int64_t i = 0;
#if KILN_OPTIM_SIMD
    for (; i + SimdLane::kWidth <= count; i += SimdLane::kWidth) k.template apply<SimdLane>(i);
#endif
    for (; i < count; ++i) k.template apply<ScalarLane>(i);
}

// Scalars shared by every kernel: gradient scale (1 when no norm clip), clip limit (+inf when
// no clipvalue), learning rate and lr * weight decay for this tensor.
struct Common {
    float* w;
    const float* g;
    float scale;
    float limit;
    float lr;
    float wdLr;

    template <typename L>
    typename L::V grad(int64_t i) const {
        // min/max with the value second keeps NaN gradients NaN, as Keras does.
        const auto x = L::load(g + i) * L::set(scale);
        return L::min(L::set(limit), L::max(L::set(-limit), x));
    }
    // Decoupled weight decay: Keras applies w -= w * wd * lr before the update; the update never
    // reads w, so folding it into the same pass is identical.
    template <typename L>
    typename L::V decayed(int64_t i) const {
        const auto wi = L::load(w + i);
        return wi - wi * L::set(wdLr);
    }
};

struct SgdKernel {
    Common c;
    template <typename L>
    void apply(int64_t i) const {
        const auto g = c.grad<L>(i);
        L::store(c.w + i, c.decayed<L>(i) - g * L::set(c.lr));
    }
};

// Keras SGD with momentum: m = -g * lr + m * momentum; w += m, or with Nesterov
// w += -g * lr + m * momentum.
template <bool kNesterov>
struct SgdMomentumKernel {
    Common c;
    float* m;
    float momentum;
    template <typename L>
    void apply(int64_t i) const {
        const auto g = c.grad<L>(i);
        const auto mom = L::set(momentum);
        const auto step = -g * L::set(c.lr);
        const auto mi = step + L::load(m + i) * mom;
        L::store(m + i, mi);
        const auto w = c.decayed<L>(i);
        if constexpr (kNesterov)
            L::store(c.w + i, w + (step + mi * mom));
        else
            L::store(c.w + i, w + mi);
    }
};

// Keras Adam: m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2); [vhat = max(vhat, v)];
// w -= m * alpha / (sqrt(v or vhat) + eps), alpha carrying the bias correction.
template <bool kAmsgrad>
struct AdamKernel {
    Common c;
    float* m;
    float* v;
    float* vhat;
    float oneMinusB1;
    float oneMinusB2;
    float alpha;
    float eps;
    template <typename L>
    void apply(int64_t i) const {
        const auto g = c.grad<L>(i);
        auto mi = L::load(m + i);
        auto vi = L::load(v + i);
        mi = mi + (g - mi) * L::set(oneMinusB1);
        vi = vi + (g * g - vi) * L::set(oneMinusB2);
        L::store(m + i, mi);
        L::store(v + i, vi);
        auto denom = vi;
        if constexpr (kAmsgrad) {
            denom = L::max(vi, L::load(vhat + i));
            L::store(vhat + i, denom);
        }
        const auto w = c.decayed<L>(i);
        L::store(c.w + i, w - (mi * L::set(alpha)) / (L::sqrt(denom) + L::set(eps)));
    }
};

// Keras 3 RMSprop: v = rho v + (1 - rho) g^2; [a = rho a + (1 - rho) g; denominator v - a^2];
// inc = lr g / sqrt(denominator + eps); with momentum: mom = momentum * mom + inc, w -= mom.
template <bool kCentered, bool kMomentum>
struct RmsPropKernel {
    Common c;
    float* vel;
    float* avg;
    float* mom;
    float rho;
    float oneMinusRho;
    float momentum;
    float eps;
    template <typename L>
    void apply(int64_t i) const {
        const auto g = c.grad<L>(i);
        const auto r = L::set(rho);
        const auto q = L::set(oneMinusRho);
        const auto vi = r * L::load(vel + i) + q * (g * g);
        L::store(vel + i, vi);
        auto denom = vi;
        if constexpr (kCentered) {
            const auto ai = r * L::load(avg + i) + q * g;
            L::store(avg + i, ai);
            denom = vi - ai * ai;
        }
        auto inc = L::set(c.lr) * g / L::sqrt(denom + L::set(eps));
        if constexpr (kMomentum) {
            inc = L::set(momentum) * L::load(mom + i) + inc;
            L::store(mom + i, inc);
        }
        L::store(c.w + i, c.decayed<L>(i) - inc);
    }
};

}  // namespace

Result<OptimizerKind> parseOptimizerKind(std::string_view type) {
    const std::string t = lower(type);
    if (t == "sgd") return OptimizerKind::Sgd;
    if (t == "adam") return OptimizerKind::Adam;
    if (t == "adamw") return OptimizerKind::AdamW;
    if (t == "rmsprop") return OptimizerKind::RmsProp;
    return configError("optimizer.type",
                       "must be one of sgd, adam, adamw, rmsprop (got \"" + std::string(type) + "\")");
}

const char* optimizerKindName(OptimizerKind kind) {
    switch (kind) {
    case OptimizerKind::Sgd: return "sgd";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::AdamW: return "adamw";
    case OptimizerKind::RmsProp: return "rmsprop";
    }
    return "unknown";
}

double OptimizerConfig::resolvedLearningRate() const {
    if (learningRate) return *learningRate;
    auto kind = parseOptimizerKind(type);
    return kind.ok() && *kind == OptimizerKind::Sgd ? kDefaultSgdLearningRate : kDefaultLearningRate;
}

double OptimizerConfig::resolvedWeightDecay() const {
    if (weightDecay) return *weightDecay;
    auto kind = parseOptimizerKind(type);
    return kind.ok() && *kind == OptimizerKind::AdamW ? kDefaultAdamWWeightDecay : 0.0;
}

Status OptimizerConfig::validate() const {
    KILN_ASSIGN(const OptimizerKind kind, parseOptimizerKind(type));
    const double lr = resolvedLearningRate();
    if (!finite(lr) || lr <= 0) return configError("optimizer.learning_rate", "must be > 0");
    const double wd = resolvedWeightDecay();
    if (!finite(wd) || wd < 0) return configError("optimizer.weight_decay", "must be >= 0");

    switch (kind) {
    case OptimizerKind::Sgd:
        if (!finite(momentum) || momentum < 0 || momentum > 1)
            return configError("optimizer.momentum", "must be in [0, 1]");
        break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
        if (!finite(beta1) || beta1 < 0 || beta1 >= 1)
            return configError("optimizer.beta_1", "must be in [0, 1)");
        if (!finite(beta2) || beta2 < 0 || beta2 >= 1)
            return configError("optimizer.beta_2", "must be in [0, 1)");
        if (!finite(epsilon) || epsilon <= 0) return configError("optimizer.epsilon", "must be > 0");
        break;
    case OptimizerKind::RmsProp:
        if (!finite(rho) || rho < 0 || rho >= 1) return configError("optimizer.rho", "must be in [0, 1)");
        if (!finite(rmsMomentum) || rmsMomentum < 0 || rmsMomentum > 1)
            return configError("optimizer.momentum", "must be in [0, 1]");
        if (!finite(epsilon) || epsilon <= 0) return configError("optimizer.epsilon", "must be > 0");
        break;
    }

    int clips = 0;
    if (clipNorm) {
        ++clips;
        if (!finite(*clipNorm) || *clipNorm <= 0) return configError("optimizer.clipnorm", "must be > 0");
    }
    if (globalClipNorm) {
        ++clips;
        if (!finite(*globalClipNorm) || *globalClipNorm <= 0)
            return configError("optimizer.global_clipnorm", "must be > 0");
    }
    if (clipValue) {
        ++clips;
        if (!finite(*clipValue) || *clipValue <= 0) return configError("optimizer.clipvalue", "must be > 0");
    }
    if (clips > 1)
        return configError("optimizer.clipnorm",
                           "cannot be combined: set only one of clipnorm, global_clipnorm and clipvalue");
    return okStatus();
}

Optimizer::Optimizer(const OptimizerConfig& config) : m_config(config) {
    auto kind = parseOptimizerKind(config.type);
    assert(kind.ok() && "OptimizerConfig must be validated first");
    m_kind = kind.ok() ? *kind : OptimizerKind::Adam;
    m_weightDecay = config.resolvedWeightDecay();
    switch (m_kind) {
    case OptimizerKind::Sgd: m_slots = config.momentum != 0 ? 1 : 0; break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: m_slots = config.amsgrad ? 3 : 2; break;
    case OptimizerKind::RmsProp:
        m_slots = 1 + (config.centered ? 1 : 0) + (config.rmsMomentum > 0 ? 1 : 0);
        break;
    }
}

Result<Optimizer> Optimizer::create(const OptimizerConfig& config) {
    KILN_TRY(config.validate());
    return Optimizer(config);
}

void Optimizer::addParameter(float* value, const float* grad, int64_t n, float lrMultiplier, bool decay) {
    assert(n >= 0);
    n = std::max<int64_t>(n, 0);
    Param p;
    p.value = value;
    p.grad = grad;
    p.n = n;
    p.stateOffset = static_cast<int64_t>(m_state.size());
    p.lrMultiplier = lrMultiplier;
    p.decay = decay;
    p.firstBlock = static_cast<int64_t>(m_blocks.size());
    p.elementOffset = m_elements;
    const int64_t paramIndex = static_cast<int64_t>(m_params.size());
    for (int64_t b = 0; b < n; b += kNormBlock)
        m_blocks.push_back(Block{paramIndex, b, std::min(n, b + kNormBlock)});
    p.blockCount = static_cast<int64_t>(m_blocks.size()) - p.firstBlock;
    m_params.push_back(p);
    m_blockSquares.resize(m_blocks.size(), 0.0);
    m_clipScale.resize(m_params.size(), 1.0f);
    m_state.resize(m_state.size() + static_cast<size_t>(n) * static_cast<size_t>(m_slots), 0.0f);
    m_elements += n;
}

void Optimizer::computeClipScales(ThreadPool& pool) {
    const double perTensor = m_config.clipNorm.value_or(0.0);
    const double global = m_config.globalClipNorm.value_or(0.0);
    if (perTensor <= 0 && global <= 0) {
        m_lastGlobalNorm = 0.0;
        return;
    }
    const int64_t blocks = static_cast<int64_t>(m_blocks.size());
    const int64_t grain = m_elements < kMinParallelElements ? std::max<int64_t>(blocks, 1) : 1;
    pool.parallelFor(blocks, grain, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
            const Block& blk = m_blocks[static_cast<size_t>(b)];
            const Param& p = m_params[static_cast<size_t>(blk.param)];
            m_blockSquares[static_cast<size_t>(b)] = sumSquares(p.grad + blk.begin, blk.end - blk.begin);
        }
    });
    // Fixed-order combination: blocks within a parameter, then parameters in registration order.
    double total = 0.0;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const Param& p = m_params[i];
        double sq = 0.0;
        for (int64_t b = 0; b < p.blockCount; ++b) sq += m_blockSquares[static_cast<size_t>(p.firstBlock + b)];
        total += sq;
        if (perTensor > 0) {
            // Keras clip_by_norm: g * c / max(||g||, c).
            const double norm = std::sqrt(sq);
            m_clipScale[i] = static_cast<float>(perTensor / std::max(norm, perTensor));
        }
    }
    m_lastGlobalNorm = std::sqrt(total);
    if (global > 0) {
        // Keras clip_by_global_norm: g * c / max(||G||, c); a non-finite norm poisons every
        // gradient, as in Keras, rather than silently skipping the clip.
        const double norm = m_lastGlobalNorm;
        const double scale = std::isfinite(norm) ? global / std::max(norm, global)
                                                 : std::numeric_limits<double>::quiet_NaN();
        std::fill(m_clipScale.begin(), m_clipScale.end(), static_cast<float>(scale));
    }
}

void Optimizer::updateRange(size_t paramIndex, int64_t begin, int64_t end, const StepScalars& s) {
    const Param& p = m_params[paramIndex];
    const int64_t count = end - begin;
    if (count <= 0) return;
    float* const base = m_state.data() + p.stateOffset + begin;
    const int64_t n = p.n;

    const double mult = p.lrMultiplier;
    Common c;
    c.w = p.value + begin;
    c.g = p.grad + begin;
    c.scale = m_clipScale[paramIndex];
    c.limit = s.clipValue;
    c.lr = static_cast<float>(s.lr * mult);
    c.wdLr = p.decay ? static_cast<float>(s.lr * mult * m_weightDecay) : 0.0f;

    switch (m_kind) {
    case OptimizerKind::Sgd: {
        if (m_slots == 0) {
            runKernel(SgdKernel{c}, count);
        } else {
            const float momentum = static_cast<float>(m_config.momentum);
            if (m_config.nesterov)
                runKernel(SgdMomentumKernel<true>{c, base, momentum}, count);
            else
                runKernel(SgdMomentumKernel<false>{c, base, momentum}, count);
        }
        break;
    }
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: {
        const float oneMinusB1 = static_cast<float>(1.0 - m_config.beta1);
        const float oneMinusB2 = static_cast<float>(1.0 - m_config.beta2);
        const float alpha = static_cast<float>(s.adamAlpha * mult);
        const float eps = static_cast<float>(m_config.epsilon);
        if (m_config.amsgrad)
            runKernel(AdamKernel<true>{c, base, base + n, base + 2 * n, oneMinusB1, oneMinusB2, alpha, eps}, count);
        else
            runKernel(AdamKernel<false>{c, base, base + n, nullptr, oneMinusB1, oneMinusB2, alpha, eps}, count);
        break;
    }
    case OptimizerKind::RmsProp: {
        const float rho = static_cast<float>(m_config.rho);
        const float oneMinusRho = static_cast<float>(1.0 - m_config.rho);
        const float momentum = static_cast<float>(m_config.rmsMomentum);
        const float eps = static_cast<float>(m_config.epsilon);
        const bool centered = m_config.centered;
        const bool hasMomentum = m_config.rmsMomentum > 0;
        // Slot order: velocity, [average gradient], [momentum].
        float* avg = centered ? base + n : nullptr;
        float* mom = hasMomentum ? base + (centered ? 2 : 1) * n : nullptr;
        if (centered && hasMomentum)
            runKernel(RmsPropKernel<true, true>{c, base, avg, mom, rho, oneMinusRho, momentum, eps}, count);
        else if (centered)
            runKernel(RmsPropKernel<true, false>{c, base, avg, mom, rho, oneMinusRho, momentum, eps}, count);
        else if (hasMomentum)
            runKernel(RmsPropKernel<false, true>{c, base, avg, mom, rho, oneMinusRho, momentum, eps}, count);
        else
            runKernel(RmsPropKernel<false, false>{c, base, avg, mom, rho, oneMinusRho, momentum, eps}, count);
        break;
    }
    }
}

void Optimizer::step(double lr, ThreadPool& pool) {
    computeClipScales(pool);

    StepScalars s;
    s.lr = lr;
    s.clipValue = m_config.clipValue ? static_cast<float>(*m_config.clipValue)
                                     : std::numeric_limits<float>::infinity();
    if (m_kind == OptimizerKind::Adam || m_kind == OptimizerKind::AdamW) {
        // Keras: alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t) with t = iterations + 1.
        const double t = static_cast<double>(m_iterations + 1);
        s.adamAlpha = lr * std::sqrt(1.0 - std::pow(m_config.beta2, t)) / (1.0 - std::pow(m_config.beta1, t));
    }

    // The update is elementwise, so any split gives identical results; split the flattened
    // element range evenly so that many small tensors do not unbalance the threads.
    const int64_t total = m_elements;
    const int64_t chunks = total < kMinParallelElements ? 1 : pool.size();
    // Chunk c covers flattened [lo, hi); inside a tensor its bounds are rounded up to multiples
    // of kLaneAlign, consistently for neighbouring chunks, so that every element's SIMD/scalar
    // treatment depends only on its index in the tensor.
    auto alignUp = [](int64_t x) { return x <= 0 ? 0 : (x + kLaneAlign - 1) / kLaneAlign * kLaneAlign; };
    auto runChunk = [&](int64_t lo, int64_t hi) {
        // First parameter that can hold elements of this chunk: the last one starting at or
        // before lo.
        auto it = std::upper_bound(m_params.begin(), m_params.end(), lo,
                                   [](int64_t x, const Param& p) { return x < p.elementOffset; });
        size_t idx = it == m_params.begin() ? 0 : static_cast<size_t>(it - m_params.begin()) - 1;
        for (; idx < m_params.size(); ++idx) {
            const Param& p = m_params[idx];
            if (p.elementOffset >= hi) break;
            const int64_t begin = std::min(alignUp(lo - p.elementOffset), p.n);
            const int64_t end = hi >= total ? p.n : std::min(alignUp(hi - p.elementOffset), p.n);
            updateRange(idx, begin, end, s);
        }
    };
    if (chunks <= 1) {
        runChunk(0, total);
    } else {
        pool.parallelFor(chunks, 1, [&](int64_t cb, int64_t ce) {
            for (int64_t c = cb; c < ce; ++c) runChunk(total * c / chunks, total * (c + 1) / chunks);
        });
    }
    ++m_iterations;
}

void Optimizer::saveState(float* out) const {
    if (!m_state.empty()) std::memcpy(out, m_state.data(), m_state.size() * sizeof(float));
}

void Optimizer::loadState(const float* in) {
    if (!m_state.empty()) std::memcpy(m_state.data(), in, m_state.size() * sizeof(float));
}

void Optimizer::resetState() {
    std::fill(m_state.begin(), m_state.end(), 0.0f);
    m_iterations = 0;
}

}  // namespace kiln::engine::optim
