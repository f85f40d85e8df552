// kiln-test-libs: kiln_optim
// SPDX-License-Identifier: Apache-2.0
// Optimizer updates against Keras 3 formulas recomputed in double, clipping, weight decay,
// checkpoint round trips, convergence and thread-count determinism.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <cstring>
#include <vector>

#include "engine/optim/optimizer.h"

// Counts heap allocations so tests can prove the hot paths allocate nothing.
namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace
void* operator new(std::size_t size) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace kiln::engine;
using namespace kiln::engine::optim;

namespace {

// Gradient for step t of the reference sequence: changes sign and size between steps so that
// momentum terms are exercised.
std::vector<float> gradAt(int t, size_t n) {
    std::vector<float> g(n);
    for (size_t i = 0; i < n; ++i)
        g[i] = static_cast<float>(0.3 * std::sin(1.3 * static_cast<double>(i) + 0.7 * t) + 0.05 * (t + 1) -
                                  0.02 * static_cast<double>(i));
    return g;
}

const std::vector<float> kInitial = {0.5f, -1.25f, 2.0f, 0.0f, -0.75f};

// Keras 3 update formulas in double, written independently of the engine code.
struct Reference {
    OptimizerConfig cfg;
    std::vector<double> w, m, v, vhat, avg, mom;
    int64_t t = 0;

    Reference(const OptimizerConfig& c, const std::vector<float>& init) : cfg(c) {
        w.assign(init.begin(), init.end());
        m.assign(w.size(), 0.0);
        v.assign(w.size(), 0.0);
        vhat.assign(w.size(), 0.0);
        avg.assign(w.size(), 0.0);
        mom.assign(w.size(), 0.0);
    }

    void step(std::vector<double> g, double lr, bool decay = true) {
        const size_t n = w.size();
        if (cfg.clipNorm || cfg.globalClipNorm) {
            double sq = 0;
            for (double x : g) sq += x * x;
            const double c = cfg.clipNorm ? *cfg.clipNorm : *cfg.globalClipNorm;
            const double norm = std::sqrt(sq);
            if (norm > c)
                for (double& x : g) x = x * c / norm;
        }
        if (cfg.clipValue)
            for (double& x : g) x = std::clamp(x, -*cfg.clipValue, *cfg.clipValue);
        const double wd = cfg.resolvedWeightDecay();
        if (decay)
            for (double& x : w) x = x - x * wd * lr;
        const std::string type = cfg.type;
        if (type == "sgd") {
            for (size_t i = 0; i < n; ++i) {
                if (cfg.momentum == 0) {
                    w[i] -= lr * g[i];
                } else {
                    m[i] = cfg.momentum * m[i] - lr * g[i];
                    w[i] += cfg.nesterov ? cfg.momentum * m[i] - lr * g[i] : m[i];
                }
            }
        } else if (type == "adam" || type == "adamw") {
            const double step = static_cast<double>(t + 1);
            const double alpha =
                lr * std::sqrt(1 - std::pow(cfg.beta2, step)) / (1 - std::pow(cfg.beta1, step));
            for (size_t i = 0; i < n; ++i) {
                m[i] = cfg.beta1 * m[i] + (1 - cfg.beta1) * g[i];
                v[i] = cfg.beta2 * v[i] + (1 - cfg.beta2) * g[i] * g[i];
                double denom = v[i];
                if (cfg.amsgrad) {
                    vhat[i] = std::max(vhat[i], v[i]);
                    denom = vhat[i];
                }
                w[i] -= alpha * m[i] / (std::sqrt(denom) + cfg.epsilon);
            }
        } else if (type == "rmsprop") {
            for (size_t i = 0; i < n; ++i) {
                v[i] = cfg.rho * v[i] + (1 - cfg.rho) * g[i] * g[i];
                double denom = v[i] + cfg.epsilon;
                if (cfg.centered) {
                    avg[i] = cfg.rho * avg[i] + (1 - cfg.rho) * g[i];
                    denom = v[i] - avg[i] * avg[i] + cfg.epsilon;
                }
                const double inc = lr * g[i] / std::sqrt(denom);
                if (cfg.rmsMomentum > 0) {
                    mom[i] = cfg.rmsMomentum * mom[i] + inc;
                    w[i] -= mom[i];
                } else {
                    w[i] -= inc;
                }
            }
        }
        ++t;
    }
};

void compareRun(const OptimizerConfig& cfg, int steps = 3, float lrMultiplier = 1.0f, bool decay = true) {
    QVERIFY2(cfg.validate().ok(), cfg.validate().ok() ? "" : cfg.validate().error().message.c_str());
    std::vector<float> w = kInitial;
    std::vector<float> g(w.size());
    Optimizer opt(cfg);
    opt.addParameter(w.data(), g.data(), static_cast<int64_t>(w.size()), lrMultiplier, decay);
    Reference ref(cfg, kInitial);
    ThreadPool pool(1);
    const double lr = cfg.resolvedLearningRate();
    for (int t = 0; t < steps; ++t) {
        const std::vector<float> gt = gradAt(t, w.size());
        std::copy(gt.begin(), gt.end(), g.begin());  // in place: the optimizer holds g.data()
        opt.step(lr, pool);
        ref.step(std::vector<double>(g.begin(), g.end()), lr * lrMultiplier, decay);
        for (size_t i = 0; i < w.size(); ++i) {
            const double tol = 2e-6 * std::max(1.0, std::abs(ref.w[i]));
            if (std::abs(w[i] - ref.w[i]) > tol)
                QFAIL(qPrintable(QStringLiteral("%1 step %2 elem %3: got %4 want %5")
                                     .arg(QString::fromStdString(cfg.type))
                                     .arg(t)
                                     .arg(i)
                                     .arg(w[i], 0, 'g', 10)
                                     .arg(ref.w[i], 0, 'g', 10)));
        }
    }
    QCOMPARE(opt.iterations(), int64_t(steps));
}

OptimizerConfig make(const char* type, double lr) {
    OptimizerConfig c;
    c.type = type;
    c.learningRate = lr;
    return c;
}

}  // namespace

class TestOptimizer : public QObject {
    Q_OBJECT

private slots:
    void defaults() {
        OptimizerConfig c;
        c.type = "sgd";
        QCOMPARE(c.resolvedLearningRate(), 0.01);
        QCOMPARE(c.resolvedWeightDecay(), 0.0);
        c.type = "adamw";
        QCOMPARE(c.resolvedLearningRate(), 0.001);
        QCOMPARE(c.resolvedWeightDecay(), 0.004);
        c.weightDecay = 0.1;
        QCOMPARE(c.resolvedWeightDecay(), 0.1);
        QVERIFY(c.validate().ok());
        QCOMPARE(parseOptimizerKind("RMSprop").value(), OptimizerKind::RmsProp);
    }

    void sgdPlain() { compareRun(make("sgd", 0.1)); }

    void sgdMomentum() {
        auto c = make("sgd", 0.05);
        c.momentum = 0.9;
        compareRun(c);
    }

    void sgdNesterov() {
        auto c = make("sgd", 0.05);
        c.momentum = 0.8;
        c.nesterov = true;
        compareRun(c);
    }

    void sgdFirstStepByHand() {
        // w = 1, g = 0.5, lr = 0.1, momentum 0.9, nesterov: m = -0.05, w += 0.9 * -0.05 - 0.05.
        auto c = make("sgd", 0.1);
        c.momentum = 0.9;
        c.nesterov = true;
        float w = 1.0f, g = 0.5f;
        Optimizer opt(c);
        opt.addParameter(&w, &g, 1);
        ThreadPool pool(1);
        opt.step(0.1, pool);
        QVERIFY(std::abs(w - (1.0 - 0.045 - 0.05)) < 1e-7);
    }

    void adam() { compareRun(make("adam", 0.01)); }

    void adamFirstStepByHand() {
        // The first bias-corrected Adam step moves each weight by lr * g / (|g| + eps').
        auto c = make("adam", 0.01);
        float w = 1.0f, g = 0.25f;
        Optimizer opt(c);
        opt.addParameter(&w, &g, 1);
        ThreadPool pool(1);
        opt.step(0.01, pool);
        const double alpha = 0.01 * std::sqrt(1 - 0.999) / (1 - 0.9);
        const double want = 1.0 - alpha * 0.025 / (std::sqrt(0.001 * 0.0625) + 1e-7);
        QVERIFY(std::abs(w - want) < 1e-7);
        QVERIFY(std::abs(w - (1.0 - 0.01)) < 1e-5);
    }

    void adamAmsgrad() {
        auto c = make("adam", 0.01);
        c.amsgrad = true;
        c.beta2 = 0.9;  // so that v actually decreases between steps and vhat matters
        compareRun(c, 5);
    }

    void adamW() {
        auto c = make("adamw", 0.01);  // default decoupled weight decay 0.004
        compareRun(c);
        c.weightDecay = 0.1;
        compareRun(c);
    }

    void rmsprop() { compareRun(make("rmsprop", 0.01)); }

    void rmspropCentered() {
        auto c = make("rmsprop", 0.01);
        c.centered = true;
        compareRun(c);
    }

    void rmspropMomentum() {
        auto c = make("rmsprop", 0.01);
        c.rmsMomentum = 0.5;
        compareRun(c);
        c.centered = true;
        compareRun(c);
    }

    void weightDecayAllTypes() {
        for (const char* type : {"sgd", "adam", "rmsprop"}) {
            auto c = make(type, 0.02);
            c.weightDecay = 0.5;
            compareRun(c);
        }
        // decay=false exempts a tensor.
        auto c = make("adamw", 0.02);
        c.weightDecay = 0.5;
        compareRun(c, 3, 1.0f, false);
    }

    void weightDecayExemption() {
        // With zero gradient, SGD moves only through weight decay: w *= (1 - lr * wd).
        auto c = make("sgd", 0.1);
        c.weightDecay = 0.2;
        float a = 2.0f, b = 2.0f, ga = 0.0f, gb = 0.0f;
        Optimizer opt(c);
        opt.addParameter(&a, &ga, 1, 1.0f, true);
        opt.addParameter(&b, &gb, 1, 1.0f, false);
        ThreadPool pool(1);
        opt.step(0.1, pool);
        QVERIFY(std::abs(a - 2.0 * (1 - 0.02)) < 1e-7);
        QCOMPARE(b, 2.0f);
    }

    void clipNorm() {
        auto c = make("sgd", 0.1);
        c.clipNorm = 0.2;
        compareRun(c);
        auto a = make("adam", 0.01);
        a.clipNorm = 0.2;
        compareRun(a);
    }

    void clipNormPerTensor() {
        // Per-tensor clipnorm scales each tensor to its own norm; global scales both together.
        for (bool global : {false, true}) {
            auto c = make("sgd", 1.0);
            if (global)
                c.globalClipNorm = 1.0;
            else
                c.clipNorm = 1.0;
            std::vector<float> a = {0, 0}, b = {0};
            std::vector<float> ga = {3, 4}, gb = {0.5f};
            Optimizer opt(c);
            opt.addParameter(a.data(), ga.data(), 2);
            opt.addParameter(b.data(), gb.data(), 1);
            ThreadPool pool(1);
            opt.step(1.0, pool);
            if (!global) {
                QVERIFY(std::abs(a[0] + 0.6f) < 1e-6 && std::abs(a[1] + 0.8f) < 1e-6);
                QVERIFY(std::abs(b[0] + 0.5f) < 1e-6);  // norm 0.5 < 1: unclipped
            } else {
                const double norm = std::sqrt(25.25);
                QVERIFY(std::abs(a[0] + 3 / norm) < 1e-6 && std::abs(a[1] + 4 / norm) < 1e-6);
                QVERIFY(std::abs(b[0] + 0.5 / norm) < 1e-6);
                QVERIFY(std::abs(opt.lastGlobalGradNorm() - norm) < 1e-9);
            }
        }
    }

    void globalClipNorm() {
        auto c = make("rmsprop", 0.01);
        c.globalClipNorm = 0.1;
        compareRun(c);
    }

    void clipValue() {
        auto c = make("sgd", 0.1);
        c.clipValue = 0.1;
        compareRun(c);
        auto a = make("adam", 0.01);
        a.clipValue = 0.05;
        compareRun(a);
    }

    void lrMultiplier() {
        compareRun(make("sgd", 0.1), 3, 0.5f);
        auto a = make("adamw", 0.01);
        compareRun(a, 3, 2.0f);
        compareRun(make("rmsprop", 0.01), 3, 0.25f);
    }

    void stateRoundTrip() {
        for (const char* type : {"sgd", "adam", "adamw", "rmsprop"}) {
            auto c = make(type, 0.01);
            c.momentum = 0.9;
            c.rmsMomentum = 0.5;
            c.centered = true;
            c.amsgrad = true;
            std::vector<float> w1 = kInitial, w2 = {0.1f, 0.2f};
            std::vector<float> g1(w1.size()), g2(w2.size());
            Optimizer a(c);
            a.addParameter(w1.data(), g1.data(), static_cast<int64_t>(w1.size()));
            a.addParameter(w2.data(), g2.data(), static_cast<int64_t>(w2.size()), 0.5f);
            ThreadPool pool(1);
            auto fill = [&](int t) {
                const std::vector<float> a1 = gradAt(t, w1.size()), a2 = gradAt(t + 7, w2.size());
                std::copy(a1.begin(), a1.end(), g1.begin());
                std::copy(a2.begin(), a2.end(), g2.begin());
            };
            for (int t = 0; t < 4; ++t) {
                fill(t);
                a.step(0.01, pool);
            }
            QCOMPARE(a.stateSize(), int64_t(a.stateSlots()) * 7);
            std::vector<float> saved(static_cast<size_t>(a.stateSize()));
            a.saveState(saved.data());
            const int64_t iters = a.iterations();

            std::vector<float> v1 = w1, v2 = w2;
            Optimizer b(c);
            b.addParameter(v1.data(), g1.data(), static_cast<int64_t>(v1.size()));
            b.addParameter(v2.data(), g2.data(), static_cast<int64_t>(v2.size()), 0.5f);
            b.loadState(saved.data());
            b.setIterations(iters);
            for (int t = 4; t < 8; ++t) {
                fill(t);
                a.step(0.01, pool);
                b.step(0.01, pool);
            }
            QVERIFY(std::memcmp(w1.data(), v1.data(), w1.size() * sizeof(float)) == 0);
            QVERIFY(std::memcmp(w2.data(), v2.data(), w2.size() * sizeof(float)) == 0);
            QCOMPARE(b.iterations(), int64_t(8));

            b.resetState();
            QCOMPARE(b.iterations(), int64_t(0));
            for (float s : b.state()) QCOMPARE(s, 0.0f);
        }
    }

    void convergesOnQuadratic() {
        // Minimise sum_i a_i (w_i - c_i)^2; every optimizer should get close to c.
        const std::vector<float> target = {1.0f, -2.0f, 0.5f, 3.0f};
        const std::vector<float> curvature = {1.0f, 0.5f, 2.0f, 0.25f};
        struct Case {
            const char* type;
            double lr;
            double momentum;
        };
        for (const Case& k : {Case{"sgd", 0.1, 0.0}, Case{"sgd", 0.05, 0.9}, Case{"adam", 0.05, 0},
                              Case{"adamw", 0.05, 0}, Case{"rmsprop", 0.01, 0}}) {
            auto c = make(k.type, k.lr);
            c.momentum = k.momentum;
            c.weightDecay = 0.0;
            std::vector<float> w(4, 0.0f), g(4);
            Optimizer opt(c);
            opt.addParameter(w.data(), g.data(), 4);
            ThreadPool pool(1);
            for (int t = 0; t < 2000; ++t) {
                for (size_t i = 0; i < 4; ++i) g[i] = 2 * curvature[i] * (w[i] - target[i]);
                opt.step(k.lr, pool);
            }
            for (size_t i = 0; i < 4; ++i)
                QVERIFY2(std::abs(w[i] - target[i]) < 2e-2, k.type);
        }
    }

    void deterministicAcrossThreadCounts() {
        // Large tensors (several norm blocks, parallel update) plus small ones; global clipping
        // makes the result depend on the reduction order.
        for (const char* type : {"adam", "sgd", "rmsprop"}) {
            auto c = make(type, 0.01);
            c.globalClipNorm = 1.0;
            c.momentum = 0.9;
            const std::vector<int64_t> sizes = {100003, 17, 70000, 1, 4096};
            std::vector<std::vector<float>> grads;
            for (size_t p = 0; p < sizes.size(); ++p) {
                std::vector<float> g(static_cast<size_t>(sizes[p]));
                for (size_t i = 0; i < g.size(); ++i)
                    g[i] = static_cast<float>(std::sin(0.001 * i + p) * 0.01 + 1e-4 * (i % 13));
                grads.push_back(g);
            }
            std::vector<std::vector<float>> results;
            for (int threads : {1, 2, 3}) {
                std::vector<std::vector<float>> ws;
                for (int64_t n : sizes) ws.emplace_back(static_cast<size_t>(n), 0.5f);
                Optimizer opt(c);
                for (size_t p = 0; p < sizes.size(); ++p)
                    opt.addParameter(ws[p].data(), grads[p].data(), sizes[p], p == 1 ? 3.0f : 1.0f, p != 3);
                ThreadPool pool(threads);
                for (int t = 0; t < 3; ++t) opt.step(0.01, pool);
                std::vector<float> flat;
                for (auto& w : ws) flat.insert(flat.end(), w.begin(), w.end());
                results.push_back(flat);
            }
            for (size_t r = 1; r < results.size(); ++r)
                QVERIFY(std::memcmp(results[0].data(), results[r].data(), results[0].size() * sizeof(float)) == 0);
        }
    }

    void stepDoesNotAllocate() {
        for (const char* type : {"sgd", "adam", "adamw", "rmsprop"}) {
            auto c = make(type, 0.01);
            c.momentum = 0.9;
            c.rmsMomentum = 0.9;
            c.centered = true;
            c.amsgrad = true;
            c.globalClipNorm = 1.0;
            std::vector<float> a(50000, 1.0f), ga(50000, 0.1f), b(3, 1.0f), gb(3, 0.2f);
            Optimizer opt(c);
            opt.addParameter(a.data(), ga.data(), 50000);
            opt.addParameter(b.data(), gb.data(), 3, 2.0f, false);
            ThreadPool pool(2);
            opt.step(0.01, pool);
            const int64_t before = g_allocations.load();
            for (int t = 0; t < 5; ++t) opt.step(0.01, pool);
            QCOMPARE(g_allocations.load() - before, int64_t(0));
        }
    }

    void validation() {
        auto expectField = [](const OptimizerConfig& c, const char* field) {
            Status s = c.validate();
            QVERIFY(!s.ok());
            QCOMPARE(s.error().code, ErrorCode::ConfigError);
            QCOMPARE(QString::fromStdString(s.error().param("field")), QString::fromLatin1(field));
            QVERIFY(s.error().message.find(field) != std::string::npos);
        };
        auto c = make("nadam", 0.1);
        expectField(c, "optimizer.type");
        c = make("adam", 0.0);
        expectField(c, "optimizer.learning_rate");
        c = make("sgd", 0.1);
        c.momentum = 1.5;
        expectField(c, "optimizer.momentum");
        c = make("adam", 0.1);
        c.beta1 = 1.0;
        expectField(c, "optimizer.beta_1");
        c = make("adam", 0.1);
        c.beta2 = -0.1;
        expectField(c, "optimizer.beta_2");
        c = make("adam", 0.1);
        c.epsilon = 0;
        expectField(c, "optimizer.epsilon");
        c = make("rmsprop", 0.1);
        c.rho = 1.0;
        expectField(c, "optimizer.rho");
        c = make("adamw", 0.1);
        c.weightDecay = -1;
        expectField(c, "optimizer.weight_decay");
        c = make("sgd", 0.1);
        c.clipNorm = 0;
        expectField(c, "optimizer.clipnorm");
        c = make("sgd", 0.1);
        c.clipValue = 1;
        c.globalClipNorm = 1;
        expectField(c, "optimizer.clipnorm");
        QVERIFY(!Optimizer::create(make("bogus", 0.1)).ok());
        QVERIFY(Optimizer::create(make("sgd", 0.1)).ok());
    }
};

QTEST_APPLESS_MAIN(TestOptimizer)
#include "tst_optimizer.moc"
