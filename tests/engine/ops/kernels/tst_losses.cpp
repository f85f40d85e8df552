// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of engine/ops/kernels/losses.h: mean losses and per-sample values against double
// references, gradients against analytic references and finite differences, gradScale and
// accumulation, label validation, stability for extreme logits, pool-size independence.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "engine/ops/kernels/losses.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

inline size_t idx(int64_t i) { return static_cast<size_t>(i); }

std::vector<float> randomVector(int64_t n, float lo, float hi, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(idx(n));
    for (auto& x : v) x = dist(gen);
    return v;
}

std::vector<float> randomLabels(int64_t n, int64_t classes, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int64_t> dist(0, classes - 1);
    std::vector<float> v(idx(n));
    for (auto& x : v) x = static_cast<float>(dist(gen));
    return v;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool close(double got, double want, double rtol, double atol) {
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

double logSumExp(const double* x, int64_t n) {
    double m = x[0];
    for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
    return m + std::log(s);
}

// Double references: per-sample losses of a [batch, width] problem; the mean is their average.
using Reference = std::function<std::vector<double>(const std::vector<double>& x)>;

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}

// Checks gradAccumulated - prior against central differences of gradScale · mean(ref(x)).
void checkFiniteDifferences(const std::vector<float>& x, const std::vector<float>& grad, float prior,
                            float gradScale, const Reference& ref) {
    std::vector<double> xd(x.begin(), x.end());
    const double eps = 1e-3;
    for (size_t i = 0; i < xd.size(); ++i) {
        const double saved = xd[i];
        xd[i] = saved + eps;
        const double up = mean(ref(xd));
        xd[i] = saved - eps;
        const double down = mean(ref(xd));
        xd[i] = saved;
        const double fd = gradScale * (up - down) / (2 * eps);
        if (!close(grad[i] - prior, fd, 1e-2, 1e-5))
            QFAIL(qPrintable(QStringLiteral("element %1: grad %2 fd %3").arg(i).arg(grad[i] - prior).arg(fd)));
    }
}

}  // namespace

class TestLosses : public QObject {
    Q_OBJECT

private slots:
    void sparseCrossentropy();
    void sparseCrossentropyBadLabels();
    void categoricalCrossentropy();
    void categoricalSoftTargets();
    void crossentropyStableForExtremeLogits();
    void binaryCrossentropy();
    void meanSquaredError();
    void meanAbsoluteError();
    void nullableOutputsAndEmptyBatch();
    void deterministicAndPoolIndependent();
};

void TestLosses::sparseCrossentropy() {
    ThreadPool pool(2);
    const int64_t batch = 9, classes = 7;
    const auto logits = randomVector(batch * classes, -4, 4, 1);
    const auto labels = randomLabels(batch, classes, 2);
    auto ref = [&](const std::vector<double>& x) {
        std::vector<double> l(idx(batch));
        for (int64_t i = 0; i < batch; ++i)
            l[idx(i)] = logSumExp(x.data() + i * classes, classes) - x[idx(i * classes + int64_t(labels[idx(i)]))];
        return l;
    };
    const float prior = 0.25f, gradScale = 1.5f;
    std::vector<float> perSample(idx(batch)), grad(logits.size(), prior);
    SparseLossResult r = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes,
                                                           perSample.data(), grad.data(), gradScale, pool);
    QVERIFY(r.ok());
    const std::vector<double> xd(logits.begin(), logits.end());
    const auto want = ref(xd);
    QVERIFY(close(r.loss, mean(want), 1e-6, 1e-7));
    for (int64_t i = 0; i < batch; ++i) QVERIFY(close(perSample[idx(i)], want[idx(i)], 1e-6, 1e-7));
    // Analytic: gradScale/batch · (softmax - onehot).
    for (int64_t i = 0; i < batch; ++i) {
        const double lse = logSumExp(xd.data() + i * classes, classes);
        for (int64_t c = 0; c < classes; ++c) {
            const size_t k = idx(i * classes + c);
            const double g = gradScale / double(batch) * (std::exp(xd[k] - lse) - (c == int64_t(labels[idx(i)]) ? 1 : 0));
            QVERIFY(close(grad[k] - prior, g, 1e-5, 1e-6));
        }
    }
    checkFiniteDifferences(logits, grad, prior, gradScale, ref);
}

void TestLosses::sparseCrossentropyBadLabels() {
    ThreadPool pool(2);
    const int64_t batch = 6, classes = 10;
    const auto logits = randomVector(batch * classes, -1, 1, 3);
    std::vector<float> labels = {1, 2, 3, 12, 4, -1};
    std::vector<float> perSample(idx(batch), 7.0f), grad(logits.size(), 7.0f);
    SparseLossResult r = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes,
                                                           perSample.data(), grad.data(), 1.0f, pool);
    QVERIFY(!r.ok());
    QVERIFY(std::isnan(r.loss));
    QCOMPARE(r.badLabel.position, int64_t(3));  // "label 12 out of range [0, 10) at sample 3"
    QCOMPARE(r.badLabel.value, 12.0f);
    QCOMPARE(r.badLabel.limit, int64_t(10));
    for (float v : perSample) QCOMPARE(v, 7.0f);  // nothing written
    for (float v : grad) QCOMPARE(v, 7.0f);

    for (float bad : {10.0f, 2.5f, std::numeric_limits<float>::quiet_NaN(), -0.5f}) {
        labels = {1, 2, 3, 4, 5, bad};
        r = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes, nullptr, nullptr, 1.0f, pool);
        QVERIFY(!r.ok());
        QCOMPARE(r.badLabel.position, int64_t(5));
    }
}

void TestLosses::categoricalCrossentropy() {
    // One-hot targets: must agree with the sparse form.
    ThreadPool pool(2);
    const int64_t batch = 11, classes = 5;
    const auto logits = randomVector(batch * classes, -3, 3, 4);
    const auto labels = randomLabels(batch, classes, 5);
    std::vector<float> onehot(logits.size(), 0.0f);
    for (int64_t i = 0; i < batch; ++i) onehot[idx(i * classes + int64_t(labels[idx(i)]))] = 1.0f;
    std::vector<float> ps1(idx(batch)), ps2(idx(batch)), g1(logits.size(), 0.0f), g2(logits.size(), 0.0f);
    const SparseLossResult a = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes,
                                                                 ps1.data(), g1.data(), 1.0f, pool);
    const float b = categoricalCrossentropyLoss(logits.data(), onehot.data(), batch, classes, ps2.data(), g2.data(), 1.0f, pool);
    QVERIFY(a.ok());
    QVERIFY(close(b, a.loss, 1e-6, 1e-7));
    for (size_t i = 0; i < ps1.size(); ++i) QVERIFY(close(ps2[i], ps1[i], 1e-6, 1e-7));
    for (size_t i = 0; i < g1.size(); ++i) QVERIFY(close(g2[i], g1[i], 1e-5, 1e-7));
}

void TestLosses::categoricalSoftTargets() {
    ThreadPool pool(2);
    const int64_t batch = 6, classes = 8;
    const auto logits = randomVector(batch * classes, -3, 3, 6);
    auto targets = randomVector(batch * classes, 0, 1, 7);  // rows deliberately not normalised
    auto ref = [&](const std::vector<double>& x) {
        std::vector<double> l(idx(batch));
        for (int64_t i = 0; i < batch; ++i) {
            const double lse = logSumExp(x.data() + i * classes, classes);
            double s = 0;
            for (int64_t c = 0; c < classes; ++c) s -= targets[idx(i * classes + c)] * (x[idx(i * classes + c)] - lse);
            l[idx(i)] = s;
        }
        return l;
    };
    const float prior = -1.0f, gradScale = 0.5f;
    std::vector<float> perSample(idx(batch)), grad(logits.size(), prior);
    const float loss = categoricalCrossentropyLoss(logits.data(), targets.data(), batch, classes, perSample.data(),
                                                   grad.data(), gradScale, pool);
    const std::vector<double> xd(logits.begin(), logits.end());
    const auto want = ref(xd);
    QVERIFY(close(loss, mean(want), 1e-6, 1e-7));
    for (int64_t i = 0; i < batch; ++i) QVERIFY(close(perSample[idx(i)], want[idx(i)], 1e-6, 1e-7));
    for (int64_t i = 0; i < batch; ++i) {
        const double lse = logSumExp(xd.data() + i * classes, classes);
        double tsum = 0;
        for (int64_t c = 0; c < classes; ++c) tsum += targets[idx(i * classes + c)];
        for (int64_t c = 0; c < classes; ++c) {
            const size_t k = idx(i * classes + c);
            const double g = gradScale / double(batch) * (std::exp(xd[k] - lse) * tsum - targets[k]);
            QVERIFY(close(grad[k] - prior, g, 1e-5, 1e-6));
        }
    }
    checkFiniteDifferences(logits, grad, prior, gradScale, ref);
}

void TestLosses::crossentropyStableForExtremeLogits() {
    ThreadPool pool(1);
    const std::vector<float> logits = {1000.0f, -1000.0f, 0.0f, -1e30f, 1e30f, 5.0f};
    const std::vector<float> labels = {1.0f, 1.0f};
    std::vector<float> perSample(2), grad(6, 0.0f);
    SparseLossResult r = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), 2, 3, perSample.data(),
                                                           grad.data(), 1.0f, pool);
    QVERIFY(r.ok());
    QCOMPARE(perSample[0], 2000.0f);  // logsumexp = 1000, minus x[1] = -1000
    QCOMPARE(perSample[1], 0.0f);
    for (float g : grad) QVERIFY(std::isfinite(g));
    QVERIFY(close(grad[0], 0.5, 1e-6, 0));
    QVERIFY(close(grad[1], -0.5, 1e-6, 0));

    const std::vector<float> bx = {100.0f, -100.0f, 0.0f, 1e30f};
    const std::vector<float> bz = {0.0f, 1.0f, 1.0f, 1.0f};
    std::vector<float> bg(4, 0.0f), bps(1);
    const float bl = binaryCrossentropyLoss(bx.data(), bz.data(), 1, 4, bps.data(), bg.data(), 1.0f, pool);
    QVERIFY(close(bl, (100.0 + 100.0 + std::log(2.0) + 0.0) / 4.0, 1e-6, 0));
    for (float g : bg) QVERIFY(std::isfinite(g));
}

void TestLosses::binaryCrossentropy() {
    ThreadPool pool(2);
    const int64_t batch = 5, width = 7;
    const auto logits = randomVector(batch * width, -6, 6, 8);
    auto targets = randomVector(batch * width, 0, 1, 9);
    for (size_t i = 0; i < targets.size(); i += 3) targets[i] = targets[i] < 0.5f ? 0.0f : 1.0f;
    auto ref = [&](const std::vector<double>& x) {
        std::vector<double> l(idx(batch), 0.0);
        for (int64_t i = 0; i < batch; ++i) {
            for (int64_t j = 0; j < width; ++j) {
                // The textbook form, -z·log σ(x) - (1 - z)·log(1 - σ(x)), in double.
                const double v = x[idx(i * width + j)], z = targets[idx(i * width + j)];
                const double s = 1.0 / (1.0 + std::exp(-v));
                l[idx(i)] -= z * std::log(s) + (1 - z) * std::log(1 - s);
            }
            l[idx(i)] /= double(width);
        }
        return l;
    };
    const float prior = 0.125f, gradScale = 2.0f;
    std::vector<float> perSample(idx(batch)), grad(logits.size(), prior);
    const float loss = binaryCrossentropyLoss(logits.data(), targets.data(), batch, width, perSample.data(),
                                              grad.data(), gradScale, pool);
    const std::vector<double> xd(logits.begin(), logits.end());
    const auto want = ref(xd);
    QVERIFY(close(loss, mean(want), 1e-6, 1e-7));
    for (int64_t i = 0; i < batch; ++i) QVERIFY(close(perSample[idx(i)], want[idx(i)], 1e-6, 1e-7));
    for (size_t k = 0; k < xd.size(); ++k) {
        const double g = gradScale / double(batch * width) * (1.0 / (1.0 + std::exp(-xd[k])) - targets[k]);
        QVERIFY(close(grad[k] - prior, g, 1e-5, 1e-7));
    }
    checkFiniteDifferences(logits, grad, prior, gradScale, ref);
}

void TestLosses::meanSquaredError() {
    ThreadPool pool(2);
    const int64_t batch = 6, width = 4;
    const auto pred = randomVector(batch * width, -2, 2, 10);
    const auto target = randomVector(batch * width, -2, 2, 11);
    auto ref = [&](const std::vector<double>& p) {
        std::vector<double> l(idx(batch), 0.0);
        for (int64_t i = 0; i < batch; ++i) {
            for (int64_t j = 0; j < width; ++j) {
                const double d = p[idx(i * width + j)] - target[idx(i * width + j)];
                l[idx(i)] += d * d / double(width);
            }
        }
        return l;
    };
    const float prior = 1.0f, gradScale = 1.0f;
    std::vector<float> perSample(idx(batch)), grad(pred.size(), prior);
    const float loss = meanSquaredErrorLoss(pred.data(), target.data(), batch, width, perSample.data(), grad.data(),
                                            gradScale, pool);
    const std::vector<double> pd(pred.begin(), pred.end());
    const auto want = ref(pd);
    QVERIFY(close(loss, mean(want), 1e-6, 1e-7));
    for (int64_t i = 0; i < batch; ++i) QVERIFY(close(perSample[idx(i)], want[idx(i)], 1e-6, 1e-7));
    for (size_t k = 0; k < pd.size(); ++k)
        QVERIFY(close(grad[k] - prior, 2.0 * (pd[k] - target[k]) / double(batch * width), 1e-5, 1e-6));
    checkFiniteDifferences(pred, grad, prior, gradScale, ref);
}

void TestLosses::meanAbsoluteError() {
    ThreadPool pool(2);
    const int64_t batch = 5, width = 3;
    auto pred = randomVector(batch * width, -2, 2, 12);
    const auto target = randomVector(batch * width, -2, 2, 13);
    for (size_t k = 0; k < pred.size(); ++k)  // keep away from the kink at p == t
        if (std::fabs(pred[k] - target[k]) < 0.01f) pred[k] += 0.05f;
    auto ref = [&](const std::vector<double>& p) {
        std::vector<double> l(idx(batch), 0.0);
        for (int64_t i = 0; i < batch; ++i)
            for (int64_t j = 0; j < width; ++j)
                l[idx(i)] += std::fabs(p[idx(i * width + j)] - target[idx(i * width + j)]) / double(width);
        return l;
    };
    const float prior = 0.0f, gradScale = 3.0f;
    std::vector<float> perSample(idx(batch)), grad(pred.size(), prior);
    const float loss = meanAbsoluteErrorLoss(pred.data(), target.data(), batch, width, perSample.data(), grad.data(),
                                             gradScale, pool);
    const std::vector<double> pd(pred.begin(), pred.end());
    const auto want = ref(pd);
    QVERIFY(close(loss, mean(want), 1e-6, 1e-7));
    for (int64_t i = 0; i < batch; ++i) QVERIFY(close(perSample[idx(i)], want[idx(i)], 1e-6, 1e-7));
    for (size_t k = 0; k < pd.size(); ++k)
        QVERIFY(close(grad[k], gradScale * (pd[k] > target[k] ? 1.0 : -1.0) / double(batch * width), 1e-6, 1e-7));
    checkFiniteDifferences(pred, grad, prior, gradScale, ref);
    // sign(0) = 0.
    const std::vector<float> same = {1.0f};
    std::vector<float> g0(1, 0.0f);
    QCOMPARE(meanAbsoluteErrorLoss(same.data(), same.data(), 1, 1, nullptr, g0.data(), 1.0f, pool), 0.0f);
    QCOMPARE(g0[0], 0.0f);
}

void TestLosses::nullableOutputsAndEmptyBatch() {
    ThreadPool pool(2);
    const int64_t batch = 4, classes = 3;
    const auto logits = randomVector(batch * classes, -1, 1, 14);
    const auto labels = randomLabels(batch, classes, 15);
    std::vector<float> grad(logits.size(), 0.0f);
    const SparseLossResult withAll = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes,
                                                                       nullptr, grad.data(), 1.0f, pool);
    const SparseLossResult lossOnly = sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes,
                                                                        nullptr, nullptr, 1.0f, pool);
    QCOMPARE(withAll.loss, lossOnly.loss);
    QCOMPARE(sparseCategoricalCrossentropyLoss(nullptr, nullptr, 0, classes, nullptr, nullptr, 1.0f, pool).loss, 0.0f);
    QCOMPARE(categoricalCrossentropyLoss(nullptr, nullptr, 0, classes, nullptr, nullptr, 1.0f, pool), 0.0f);
    QCOMPARE(binaryCrossentropyLoss(nullptr, nullptr, 0, 3, nullptr, nullptr, 1.0f, pool), 0.0f);
    QCOMPARE(meanSquaredErrorLoss(nullptr, nullptr, 0, 3, nullptr, nullptr, 1.0f, pool), 0.0f);
    QCOMPARE(meanAbsoluteErrorLoss(nullptr, nullptr, 0, 3, nullptr, nullptr, 1.0f, pool), 0.0f);
}

void TestLosses::deterministicAndPoolIndependent() {
    const int64_t batch = 20011, classes = 10;  // many row blocks
    const auto logits = randomVector(batch * classes, -8, 8, 16);
    const auto labels = randomLabels(batch, classes, 17);
    auto targets = randomVector(batch * classes, 0, 1, 18);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> out;
        std::vector<float> ps(idx(batch)), g(logits.size(), 0.0f);
        out.push_back(sparseCategoricalCrossentropyLoss(logits.data(), labels.data(), batch, classes, ps.data(),
                                                        g.data(), 1.0f, pool).loss);
        out.push_back(categoricalCrossentropyLoss(logits.data(), targets.data(), batch, classes, ps.data(), g.data(), 1.0f, pool));
        out.push_back(binaryCrossentropyLoss(logits.data(), targets.data(), batch, classes, ps.data(), g.data(), 1.0f, pool));
        out.push_back(meanSquaredErrorLoss(logits.data(), targets.data(), batch, classes, ps.data(), g.data(), 1.0f, pool));
        out.push_back(meanAbsoluteErrorLoss(logits.data(), targets.data(), batch, classes, ps.data(), g.data(), 1.0f, pool));
        out.insert(out.end(), ps.begin(), ps.end());
        out.insert(out.end(), g.begin(), g.end());
        return out;
    };
    ThreadPool p1(1), p2(2), p3(3);
    const auto r = run(p1);
    QVERIFY(sameBits(r, run(p1)));
    QVERIFY(sameBits(r, run(p2)));
    QVERIFY(sameBits(r, run(p3)));
}

QTEST_APPLESS_MAIN(TestLosses)
#include "tst_losses.moc"
