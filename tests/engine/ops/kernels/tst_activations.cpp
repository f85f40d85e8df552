// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of engine/ops/kernels/activations.h: forward against double references, backward against
// analytic derivatives and finite differences, accumulation, the fused bias epilogue, softmax,
// and bit-identical results for any pool size.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "engine/ops/kernels/activations.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

Q_DECLARE_METATYPE(kiln::engine::kernels::Activation)

namespace {

// Index conversion (also avoids the vexing parse of `std::vector<float> v(size_t(n))`).
inline size_t idx(int64_t i) { return static_cast<size_t>(i); }

std::vector<float> randomVector(int64_t n, float lo, float hi, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(gen);
    return v;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool close(double got, double want, double rtol, double atol) {
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// Moves values off the kinks (0 and 6) so finite differences see a smooth function.
void avoidKinks(std::vector<float>& x) {
    for (auto& v : x) {
        if (std::fabs(v) < 0.05f) v += v < 0 ? -0.1f : 0.1f;
        if (std::fabs(v - 6.0f) < 0.05f) v += 0.1f;
        if (std::fabs(std::fabs(v) - 3.0f) < 0.05f) v += 0.1f;  // HardSigmoid, HardSwish
    }
}

double normalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

constexpr double kPi = 3.14159265358979323846;

double refForward(Activation act, double x, double param) {
    switch (act) {
    case Activation::Linear: return x;
    case Activation::ReLU: return x > 0 ? x : 0;
    case Activation::ReLU6: return std::min(std::max(x, 0.0), 6.0);
    case Activation::LeakyReLU: return x > 0 ? x : param * x;
    case Activation::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::Tanh: return std::tanh(x);
    case Activation::GELU:
        if (param != 0) return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
        return x * normalCdf(x);
    case Activation::SiLU: return x / (1.0 + std::exp(-x));
    case Activation::HardSigmoid: return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case Activation::HardSwish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case Activation::Softmax: break;
    }
    return NAN;
}

double refDerivative(Activation act, double x, double param) {
    switch (act) {
    case Activation::Linear: return 1;
    case Activation::ReLU: return x > 0 ? 1 : 0;
    case Activation::ReLU6: return x > 0 && x < 6 ? 1 : 0;
    case Activation::LeakyReLU: return x > 0 ? 1 : param;
    case Activation::Sigmoid: {
        const double s = 1.0 / (1.0 + std::exp(-x));
        return s * (1 - s);
    }
    case Activation::Tanh: {
        const double t = std::tanh(x);
        return 1 - t * t;
    }
    case Activation::GELU:
        if (param != 0) {
            const double k = std::sqrt(2.0 / kPi);
            const double t = std::tanh(k * (x + 0.044715 * x * x * x));
            return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
        }
        return normalCdf(x) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * kPi);
    case Activation::SiLU: {
        const double s = 1.0 / (1.0 + std::exp(-x));
        return s * (1 + x * (1 - s));
    }
    case Activation::HardSigmoid: return x > -3 && x < 3 ? 1.0 / 6.0 : 0;
    case Activation::HardSwish: return x <= -3 ? 0 : x >= 3 ? 1 : (2 * x + 3) / 6.0;
    case Activation::Softmax: break;
    }
    return NAN;
}

void refSoftmaxRow(const double* x, double* y, int64_t cols) {
    double m = x[0];
    for (int64_t c = 1; c < cols; ++c) m = std::max(m, x[c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[c] - m);
    for (int64_t c = 0; c < cols; ++c) y[c] = std::exp(x[c] - m) / s;
}

// The elementwise activations with their (param, input range) for the data-driven tests.
void addElementwiseRows() {
    QTest::addColumn<Activation>("act");
    QTest::addColumn<float>("param");
    QTest::addColumn<float>("lo");
    QTest::addColumn<float>("hi");
    QTest::newRow("linear") << Activation::Linear << 0.0f << -4.0f << 4.0f;
    QTest::newRow("relu") << Activation::ReLU << 0.0f << -4.0f << 4.0f;
    QTest::newRow("relu6") << Activation::ReLU6 << 0.0f << -9.0f << 9.0f;
    QTest::newRow("leaky0.3") << Activation::LeakyReLU << kLeakyReluDefaultAlpha << -4.0f << 4.0f;
    QTest::newRow("leaky0.01") << Activation::LeakyReLU << 0.01f << -4.0f << 4.0f;
    QTest::newRow("sigmoid") << Activation::Sigmoid << 0.0f << -12.0f << 12.0f;
    QTest::newRow("tanh") << Activation::Tanh << 0.0f << -5.0f << 5.0f;
    QTest::newRow("gelu") << Activation::GELU << kGeluExact << -6.0f << 6.0f;
    QTest::newRow("gelu-tanh") << Activation::GELU << kGeluApproximate << -6.0f << 6.0f;
    QTest::newRow("silu") << Activation::SiLU << 0.0f << -12.0f << 12.0f;
    QTest::newRow("hard-sigmoid") << Activation::HardSigmoid << 0.0f << -5.0f << 5.0f;
    QTest::newRow("hard-swish") << Activation::HardSwish << 0.0f << -5.0f << 5.0f;
}

}  // namespace

class TestActivations : public QObject {
    Q_OBJECT

private slots:
    void forwardMatchesReference_data() { addElementwiseRows(); }
    void forwardMatchesReference();
    void forwardInPlace_data() { addElementwiseRows(); }
    void forwardInPlace();
    void backwardMatchesAnalyticAndAccumulates_data() { addElementwiseRows(); }
    void backwardMatchesAnalyticAndAccumulates();
    void backwardMatchesFiniteDifferences_data() { addElementwiseRows(); }
    void backwardMatchesFiniteDifferences();
    void poolSizeIndependence_data() { addElementwiseRows(); }
    void poolSizeIndependence();
    void kerasSpotValues();
    void softmaxForward();
    void softmaxStableForHugeLogits();
    void softmaxBackward();
    void softmaxViaActivationIsOneRow();
    void softmaxPoolSizeIndependence();
    void derivableFromOutput();
    void biasActivationForward_data();
    void biasActivationForward();
    void biasActivationBackward_data();
    void biasActivationBackward();
    void biasActivationBackwardFiniteDifferences();
    void biasActivationBackwardUnsupported();
    void biasActivationPoolSizeIndependence();
};

void TestActivations::forwardMatchesReference() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    QFETCH(float, lo);
    QFETCH(float, hi);
    ThreadPool pool(2);
    auto x = randomVector(3001, lo, hi, 1);
    x.insert(x.end(), {0.0f, -0.0f, 6.0f, -1e-3f, 1e-3f, lo, hi});
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<float> y(x.size(), NAN);
    activationForward(act, x.data(), y.data(), n, param, pool);
    for (size_t i = 0; i < x.size(); ++i) {
        const double want = refForward(act, x[i], param);
        if (!close(y[i], want, 1e-5, 1e-6))
            QFAIL(qPrintable(QStringLiteral("x=%1 got %2 want %3").arg(x[i]).arg(y[i]).arg(want)));
    }
}

void TestActivations::forwardInPlace() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    QFETCH(float, lo);
    QFETCH(float, hi);
    ThreadPool pool(2);
    auto x = randomVector(40000, lo, hi, 2);
    std::vector<float> y(x.size());
    activationForward(act, x.data(), y.data(), int64_t(x.size()), param, pool);
    activationForward(act, x.data(), x.data(), int64_t(x.size()), param, pool);
    QVERIFY(sameBits(x, y));
}

void TestActivations::backwardMatchesAnalyticAndAccumulates() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    QFETCH(float, lo);
    QFETCH(float, hi);
    ThreadPool pool(2);
    auto x = randomVector(3001, lo, hi, 3);
    avoidKinks(x);
    const int64_t n = int64_t(x.size());
    std::vector<float> y(x.size());
    activationForward(act, x.data(), y.data(), n, param, pool);
    const auto dy = randomVector(n, -1, 1, 4);
    const float prior = 0.375f;  // backward must add to what is there

    auto check = [&](const float* xp, const float* yp, const char* what) {
        std::vector<float> dx(x.size(), prior);
        activationBackward(act, xp, yp, dy.data(), dx.data(), n, param, pool);
        for (size_t i = 0; i < x.size(); ++i) {
            const double want = prior + dy[i] * refDerivative(act, x[i], param);
            if (!close(dx[i], want, 1e-5, 1e-6))
                QFAIL(qPrintable(QStringLiteral("%1: x=%2 got %3 want %4").arg(what).arg(x[i]).arg(dx[i]).arg(want)));
        }
    };
    check(x.data(), y.data(), "x and y");
    // The documented fallbacks: piecewise ones from y alone, sigmoid/tanh from x alone.
    if (act == Activation::ReLU || act == Activation::ReLU6 || act == Activation::LeakyReLU ||
        act == Activation::HardSigmoid)
        check(nullptr, y.data(), "y only");
    if (act == Activation::Sigmoid || act == Activation::Tanh) check(x.data(), nullptr, "x only");
    if (act == Activation::Linear) check(nullptr, nullptr, "neither");
}

void TestActivations::backwardMatchesFiniteDifferences() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    QFETCH(float, lo);
    QFETCH(float, hi);
    ThreadPool pool(1);
    auto x = randomVector(200, lo, hi, 5);
    avoidKinks(x);
    const int64_t n = int64_t(x.size());
    const auto w = randomVector(n, -1, 1, 6);
    std::vector<float> y(x.size()), dx(x.size(), 0.0f);
    activationForward(act, x.data(), y.data(), n, param, pool);
    activationBackward(act, x.data(), y.data(), w.data(), dx.data(), n, param, pool);
    const double eps = 1e-3;
    for (size_t i = 0; i < x.size(); ++i) {
        // L = Σ w·f(x) in double; only term i depends on x[i].
        const double fd = w[i] * (refForward(act, x[i] + eps, param) - refForward(act, x[i] - eps, param)) / (2 * eps);
        if (!close(dx[i], fd, 1e-2, 1e-4))
            QFAIL(qPrintable(QStringLiteral("x=%1 got %2 fd %3").arg(x[i]).arg(dx[i]).arg(fd)));
    }
}

void TestActivations::poolSizeIndependence() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    QFETCH(float, lo);
    QFETCH(float, hi);
    const int64_t n = 100003;
    const auto x = randomVector(n, lo, hi, 7), dy = randomVector(n, -1, 1, 8);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> out(idx(2 * n), 0.25f);
        activationForward(act, x.data(), out.data(), n, param, pool);
        activationBackward(act, x.data(), out.data(), dy.data(), out.data() + n, n, param, pool);
        return out;
    };
    ThreadPool p1(1), p2(2), p3(3);
    const auto r = run(p1);
    QVERIFY(sameBits(r, run(p1)));
    QVERIFY(sameBits(r, run(p2)));
    QVERIFY(sameBits(r, run(p3)));
}

void TestActivations::kerasSpotValues() {
    // Values as Keras computes them (tf.keras.activations / layers).
    ThreadPool pool(1);
    const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.5f, 7.0f};
    std::vector<float> y(x.size());
    activationForward(Activation::LeakyReLU, x.data(), y.data(), 5, kLeakyReluDefaultAlpha, pool);
    QCOMPARE(y, (std::vector<float>{-0.6f, -0.15f, 0.0f, 0.5f, 7.0f}));
    activationForward(Activation::ReLU6, x.data(), y.data(), 5, 0, pool);
    QCOMPARE(y, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.5f, 6.0f}));
    activationForward(Activation::GELU, x.data(), y.data(), 5, kGeluExact, pool);
    QVERIFY(close(y[0], -0.04550026389635842, 1e-6, 0));
    QVERIFY(close(y[3], 0.34573123063700656, 1e-6, 0));
    activationForward(Activation::GELU, x.data(), y.data(), 5, kGeluApproximate, pool);
    QVERIFY(close(y[0], -0.04540230591222272, 1e-6, 0));
    QVERIFY(close(y[3], 0.34571400982514394, 1e-6, 0));
    // Sigmoid saturates without overflow or NaN.
    const std::vector<float> big = {-200.0f, 200.0f};
    std::vector<float> s(2);
    activationForward(Activation::Sigmoid, big.data(), s.data(), 2, 0, pool);
    QCOMPARE(s[0], 0.0f);
    QCOMPARE(s[1], 1.0f);
}

void TestActivations::softmaxForward() {
    ThreadPool pool(2);
    const int64_t rows = 37, cols = 13;
    auto x = randomVector(rows * cols, -5, 5, 9);
    for (int64_t c = 0; c < cols; ++c) x[idx(5 * cols + c)] += 80.0f;  // a shifted row
    std::vector<float> y(x.size());
    kernels::softmaxForward(x.data(), y.data(), rows, cols, pool);
    std::vector<double> xd(x.begin(), x.end()), yd(x.size());
    for (int64_t r = 0; r < rows; ++r) refSoftmaxRow(xd.data() + r * cols, yd.data() + r * cols, cols);
    for (size_t i = 0; i < y.size(); ++i) QVERIFY(close(y[i], yd[i], 1e-5, 1e-7));
    // In place.
    kernels::softmaxForward(x.data(), x.data(), rows, cols, pool);
    QVERIFY(sameBits(x, y));
}

void TestActivations::softmaxStableForHugeLogits() {
    ThreadPool pool(1);
    const std::vector<float> x = {1000.0f, 1000.0f, -1000.0f, 3e38f, -3e38f, 0.0f};
    std::vector<float> y(6);
    kernels::softmaxForward(x.data(), y.data(), 2, 3, pool);
    QCOMPARE(y[0], 0.5f);
    QCOMPARE(y[1], 0.5f);
    QCOMPARE(y[2], 0.0f);
    QCOMPARE(y[3], 1.0f);
    QCOMPARE(y[4], 0.0f);
    QCOMPARE(y[5], 0.0f);
}

void TestActivations::softmaxBackward() {
    ThreadPool pool(2);
    const int64_t rows = 7, cols = 11;
    const auto x = randomVector(rows * cols, -3, 3, 10);
    const auto w = randomVector(rows * cols, -1, 1, 11);
    std::vector<float> y(x.size());
    kernels::softmaxForward(x.data(), y.data(), rows, cols, pool);
    std::vector<float> dx(x.size(), -0.5f);
    kernels::softmaxBackward(y.data(), w.data(), dx.data(), rows, cols, pool);

    std::vector<double> xd(x.begin(), x.end());
    auto loss = [&] {
        std::vector<double> yd(xd.size());
        double s = 0;
        for (int64_t r = 0; r < rows; ++r) refSoftmaxRow(xd.data() + r * cols, yd.data() + r * cols, cols);
        for (size_t i = 0; i < yd.size(); ++i) s += w[i] * yd[i];
        return s;
    };
    std::vector<double> yd(xd.size());
    for (int64_t r = 0; r < rows; ++r) refSoftmaxRow(xd.data() + r * cols, yd.data() + r * cols, cols);
    const double eps = 1e-3;
    for (int64_t r = 0; r < rows; ++r) {
        double dot = 0;
        for (int64_t c = 0; c < cols; ++c) dot += w[idx(r * cols + c)] * yd[idx(r * cols + c)];
        for (int64_t c = 0; c < cols; ++c) {
            const size_t i = idx(r * cols + c);
            const double analytic = yd[i] * (w[i] - dot);
            QVERIFY(close(dx[i] + 0.5, analytic, 1e-5, 1e-6));
            const double saved = xd[i];
            xd[i] = saved + eps;
            const double up = loss();
            xd[i] = saved - eps;
            const double down = loss();
            xd[i] = saved;
            QVERIFY(close(dx[i] + 0.5, (up - down) / (2 * eps), 1e-2, 1e-4));
        }
    }
}

void TestActivations::softmaxViaActivationIsOneRow() {
    ThreadPool pool(1);
    const auto x = randomVector(50, -2, 2, 12), dy = randomVector(50, -1, 1, 13);
    std::vector<float> a(50), b(50), da(50, 0.0f), db(50, 0.0f);
    activationForward(Activation::Softmax, x.data(), a.data(), 50, 0, pool);
    kernels::softmaxForward(x.data(), b.data(), 1, 50, pool);
    QVERIFY(sameBits(a, b));
    activationBackward(Activation::Softmax, nullptr, a.data(), dy.data(), da.data(), 50, 0, pool);
    kernels::softmaxBackward(b.data(), dy.data(), db.data(), 1, 50, pool);
    QVERIFY(sameBits(da, db));
}

void TestActivations::softmaxPoolSizeIndependence() {
    const int64_t rows = 3001, cols = 37;
    const auto x = randomVector(rows * cols, -4, 4, 14), dy = randomVector(rows * cols, -1, 1, 15);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> out(x.size() * 2, 0.125f);
        kernels::softmaxForward(x.data(), out.data(), rows, cols, pool);
        kernels::softmaxBackward(out.data(), dy.data(), out.data() + x.size(), rows, cols, pool);
        return out;
    };
    ThreadPool p1(1), p2(2);
    const auto r = run(p1);
    QVERIFY(sameBits(r, run(p1)));
    QVERIFY(sameBits(r, run(p2)));
}

void TestActivations::derivableFromOutput() {
    for (Activation a : {Activation::Linear, Activation::ReLU, Activation::ReLU6, Activation::Sigmoid,
                         Activation::Tanh, Activation::Softmax, Activation::HardSigmoid})
        QVERIFY(activationDerivableFromOutput(a, 0.0f));
    QVERIFY(!activationDerivableFromOutput(Activation::SiLU, 0.0f));
    QVERIFY(!activationDerivableFromOutput(Activation::HardSwish, 0.0f));
    QVERIFY(activationDerivableFromOutput(Activation::LeakyReLU, 0.3f));
    QVERIFY(!activationDerivableFromOutput(Activation::LeakyReLU, 0.0f));
    QVERIFY(!activationDerivableFromOutput(Activation::LeakyReLU, -0.5f));
    QVERIFY(!activationDerivableFromOutput(Activation::GELU, kGeluExact));
    QVERIFY(!activationDerivableFromOutput(Activation::GELU, kGeluApproximate));
}

void TestActivations::biasActivationForward_data() {
    addElementwiseRows();
    QTest::newRow("softmax") << Activation::Softmax << 0.0f << -3.0f << 3.0f;
}

void TestActivations::biasActivationForward() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    QFETCH(float, lo);
    QFETCH(float, hi);
    ThreadPool pool(2);
    const int64_t rows = 301, cols = 37;
    const auto pre = randomVector(rows * cols, lo, hi, 16);
    const auto bias = randomVector(cols, -1, 1, 17);
    for (bool withBias : {true, false}) {
        auto y = pre;
        kernels::biasActivationForward(y.data(), withBias ? bias.data() : nullptr, rows, cols, act, param, pool);
        for (int64_t r = 0; r < rows; ++r) {
            // The kernel adds the bias in float; the reference applies the activation in double.
            std::vector<double> z(idx(cols)), want(idx(cols));
            for (int64_t c = 0; c < cols; ++c)
                z[idx(c)] = pre[idx(r * cols + c)] + (withBias ? bias[idx(c)] : 0.0f);
            if (act == Activation::Softmax)
                refSoftmaxRow(z.data(), want.data(), cols);
            else
                for (int64_t c = 0; c < cols; ++c) want[idx(c)] = refForward(act, z[idx(c)], param);
            for (int64_t c = 0; c < cols; ++c) QVERIFY(close(y[idx(r * cols + c)], want[idx(c)], 1e-5, 1e-6));
        }
    }
}

void TestActivations::biasActivationBackward_data() {
    QTest::addColumn<Activation>("act");
    QTest::addColumn<float>("param");
    QTest::newRow("linear") << Activation::Linear << 0.0f;
    QTest::newRow("relu") << Activation::ReLU << 0.0f;
    QTest::newRow("relu6") << Activation::ReLU6 << 0.0f;
    QTest::newRow("leaky") << Activation::LeakyReLU << 0.3f;
    QTest::newRow("sigmoid") << Activation::Sigmoid << 0.0f;
    QTest::newRow("tanh") << Activation::Tanh << 0.0f;
    QTest::newRow("hard-sigmoid") << Activation::HardSigmoid << 0.0f;
    QTest::newRow("softmax") << Activation::Softmax << 0.0f;
}

void TestActivations::biasActivationBackward() {
    QFETCH(Activation, act);
    QFETCH(float, param);
    ThreadPool pool(2);
    const int64_t rows = 203, cols = 300;  // two column tiles of the dbias reduction
    auto pre = randomVector(rows * cols, -8, 8, 18);
    avoidKinks(pre);
    const auto dy = randomVector(rows * cols, -1, 1, 19);
    auto y = pre;
    kernels::biasActivationForward(y.data(), nullptr, rows, cols, act, param, pool);
    std::vector<float> dpre(y.size(), 123.0f);  // overwritten, so the sentinel must vanish
    std::vector<float> dbias(idx(cols), 0.5f);  // accumulated
    QVERIFY(kernels::biasActivationBackward(y.data(), dy.data(), dpre.data(), dbias.data(), rows, cols, act, param, pool));

    std::vector<double> wantBias(idx(cols), 0.5);
    for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> g(idx(cols));
        if (act == Activation::Softmax) {
            std::vector<double> z(pre.begin() + r * cols, pre.begin() + (r + 1) * cols), s(idx(cols));
            refSoftmaxRow(z.data(), s.data(), cols);
            double dot = 0;
            for (int64_t c = 0; c < cols; ++c) dot += dy[idx(r * cols + c)] * s[idx(c)];
            for (int64_t c = 0; c < cols; ++c) g[idx(c)] = s[idx(c)] * (dy[idx(r * cols + c)] - dot);
        } else {
            for (int64_t c = 0; c < cols; ++c)
                g[idx(c)] = dy[idx(r * cols + c)] * refDerivative(act, pre[idx(r * cols + c)], param);
        }
        for (int64_t c = 0; c < cols; ++c) {
            const size_t i = idx(r * cols + c);
            if (!close(dpre[i], g[idx(c)], 1e-5, 1e-6))
                QFAIL(qPrintable(QStringLiteral("pre=%1 got %2 want %3").arg(pre[i]).arg(dpre[i]).arg(g[idx(c)])));
            wantBias[idx(c)] += g[idx(c)];
        }
    }
    for (int64_t c = 0; c < cols; ++c) QVERIFY(close(dbias[idx(c)], wantBias[idx(c)], 1e-5, 1e-5));

    // dpre may be dy itself.
    auto inPlace = dy;
    std::vector<float> dbias2(idx(cols), 0.5f);
    QVERIFY(kernels::biasActivationBackward(y.data(), inPlace.data(), inPlace.data(), dbias2.data(), rows, cols, act, param, pool));
    QVERIFY(sameBits(inPlace, dpre));
    QVERIFY(sameBits(dbias2, dbias));
}

void TestActivations::biasActivationBackwardFiniteDifferences() {
    // L = Σ w ⊙ act(x + b) in double; check dL/db (through dbias) and dL/dx (dpre).
    ThreadPool pool(1);
    const int64_t rows = 5, cols = 6;
    for (Activation act : {Activation::Sigmoid, Activation::Tanh, Activation::Softmax, Activation::LeakyReLU}) {
        const float param = act == Activation::LeakyReLU ? 0.2f : 0.0f;
        auto x = randomVector(rows * cols, -2, 2, 20);
        const auto b = randomVector(cols, -1, 1, 21);
        const auto w = randomVector(rows * cols, -1, 1, 22);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                float& v = x[idx(r * cols + c)];
                if (std::fabs(v + b[idx(c)]) < 0.05f) v += 0.2f;
            }
        auto y = x;
        kernels::biasActivationForward(y.data(), b.data(), rows, cols, act, param, pool);
        std::vector<float> dpre(y.size()), dbias(idx(cols), 0.0f);
        QVERIFY(kernels::biasActivationBackward(y.data(), w.data(), dpre.data(), dbias.data(), rows, cols, act, param, pool));

        std::vector<double> xd(x.begin(), x.end()), bd(b.begin(), b.end());
        auto loss = [&] {
            double s = 0;
            for (int64_t r = 0; r < rows; ++r) {
                std::vector<double> z(idx(cols)), out(idx(cols));
                for (int64_t c = 0; c < cols; ++c) z[idx(c)] = xd[idx(r * cols + c)] + bd[idx(c)];
                if (act == Activation::Softmax)
                    refSoftmaxRow(z.data(), out.data(), cols);
                else
                    for (int64_t c = 0; c < cols; ++c) out[idx(c)] = refForward(act, z[idx(c)], param);
                for (int64_t c = 0; c < cols; ++c) s += w[idx(r * cols + c)] * out[idx(c)];
            }
            return s;
        };
        auto fd = [&](std::vector<double>& v, size_t i) {
            const double eps = 1e-3, saved = v[i];
            v[i] = saved + eps;
            const double up = loss();
            v[i] = saved - eps;
            const double down = loss();
            v[i] = saved;
            return (up - down) / (2 * eps);
        };
        for (size_t i = 0; i < xd.size(); ++i) QVERIFY(close(dpre[i], fd(xd, i), 1e-2, 1e-4));
        for (size_t c = 0; c < bd.size(); ++c) QVERIFY(close(dbias[c], fd(bd, c), 1e-2, 1e-4));
    }
}

void TestActivations::biasActivationBackwardUnsupported() {
    ThreadPool pool(1);
    std::vector<float> y(12, 1.0f), dy(12, 1.0f), dpre(12, 7.0f), dbias(3, 7.0f);
    QVERIFY(!kernels::biasActivationBackward(y.data(), dy.data(), dpre.data(), dbias.data(), 4, 3, Activation::GELU, kGeluExact, pool));
    QVERIFY(!kernels::biasActivationBackward(y.data(), dy.data(), dpre.data(), dbias.data(), 4, 3, Activation::LeakyReLU, 0.0f, pool));
    for (float v : dpre) QCOMPARE(v, 7.0f);
    for (float v : dbias) QCOMPARE(v, 7.0f);
}

void TestActivations::biasActivationPoolSizeIndependence() {
    struct Case { int64_t rows, cols; Activation act; };
    for (Case k : {Case{70001, 3, Activation::ReLU}, Case{3000, 300, Activation::Tanh}, Case{2000, 40, Activation::Softmax},
                   Case{1000, 50, Activation::GELU}}) {
        const auto pre = randomVector(k.rows * k.cols, -3, 3, 23);
        const auto bias = randomVector(k.cols, -1, 1, 24);
        const auto dy = randomVector(k.rows * k.cols, -1, 1, 25);
        bool supported = true;
        auto run = [&](ThreadPool& pool) {
            auto y = pre;
            kernels::biasActivationForward(y.data(), bias.data(), k.rows, k.cols, k.act, 0.0f, pool);
            std::vector<float> dpre(y.size()), dbias(idx(k.cols), 0.0f);
            if (activationDerivableFromOutput(k.act, 0.0f))
                supported &= (kernels::biasActivationBackward(y.data(), dy.data(), dpre.data(), dbias.data(), k.rows, k.cols, k.act, 0.0f, pool));
            y.insert(y.end(), dpre.begin(), dpre.end());
            y.insert(y.end(), dbias.begin(), dbias.end());
            return y;
        };
        ThreadPool p1(1), p2(2), p3(3);
        const auto r = run(p1);
        QVERIFY(sameBits(r, run(p1)));
        QVERIFY(sameBits(r, run(p2)));
        QVERIFY(sameBits(r, run(p3)));
        QVERIFY(supported);
    }
}

QTEST_APPLESS_MAIN(TestActivations)
#include "tst_activations.moc"
