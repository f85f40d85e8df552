// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of engine/ops/kernels/dropout.h: the mask is exactly rng::uniform >= rate, its keep
// fraction matches, seeds reproduce it, scaling, identity modes, accumulation, pool independence.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/core/rng.h"
#include "engine/ops/kernels/dropout.h"

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

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool close(double got, double want, double rtol, double atol) {
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

}  // namespace

class TestDropout : public QObject {
    Q_OBJECT

private slots:
    void maskMatchesRngAndRate_data();
    void maskMatchesRngAndRate();
    void sameSeedSameMask();
    void inPlaceForward();
    void identityModes();
    void rateOneDropsEverything();
    void backwardAccumulatesAndMatchesFiniteDifferences();
    void noiseShapeSharesDecisions_data();
    void noiseShapeSharesDecisions();
    void noiseShapeWithoutSharedAxisIsPlainDropout();
    void poolSizeIndependence();
};

void TestDropout::maskMatchesRngAndRate_data() {
    QTest::addColumn<float>("rate");
    QTest::addColumn<qint64>("n");
    QTest::newRow("0.1") << 0.1f << qint64(200003);
    QTest::newRow("0.5") << 0.5f << qint64(200001);
    QTest::newRow("0.8") << 0.8f << qint64(200002);
    QTest::newRow("small") << 0.3f << qint64(7);
}

void TestDropout::maskMatchesRngAndRate() {
    QFETCH(float, rate);
    QFETCH(qint64, n);
    ThreadPool pool(2);
    const uint64_t seed = 0x1234abcd5678ull, stream = 77;
    const auto x = randomVector(n, -2, 2, 1);
    std::vector<float> y(idx(n));
    std::vector<uint8_t> mask(idx(n), 9);
    dropoutForward(x.data(), y.data(), mask.data(), n, rate, seed, stream, true, pool);
    const float scale = 1.0f / (1.0f - rate);
    QCOMPARE(dropoutScale(rate), scale);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
        const bool keep = rng::uniform(seed, stream, uint64_t(i)) >= rate;  // the documented rule
        QCOMPARE(mask[idx(i)], uint8_t(keep));
        QCOMPARE(y[idx(i)], keep ? x[idx(i)] * scale : 0.0f);
        kept += keep;
    }
    if (n > 1000) {
        const double dropped = 1.0 - double(kept) / double(n);
        QVERIFY2(std::fabs(dropped - rate) < 0.01, qPrintable(QString::number(dropped)));
    }
}

void TestDropout::sameSeedSameMask() {
    ThreadPool pool(2);
    const int64_t n = 50000;
    const auto x = randomVector(n, -1, 1, 2);
    auto maskOf = [&](uint64_t seed, uint64_t stream) {
        std::vector<float> y(idx(n));
        std::vector<uint8_t> m(idx(n));
        dropoutForward(x.data(), y.data(), m.data(), n, 0.4f, seed, stream, true, pool);
        return m;
    };
    const auto a = maskOf(5, 1);
    QCOMPARE(maskOf(5, 1), a);
    QVERIFY(maskOf(6, 1) != a);
    QVERIFY(maskOf(5, 2) != a);
}

void TestDropout::inPlaceForward() {
    ThreadPool pool(2);
    const int64_t n = 30001;
    auto x = randomVector(n, -1, 1, 3);
    std::vector<float> y(idx(n));
    dropoutForward(x.data(), y.data(), nullptr, n, 0.25f, 9, 3, true, pool);  // mask is nullable
    dropoutForward(x.data(), x.data(), nullptr, n, 0.25f, 9, 3, true, pool);
    QVERIFY(sameBits(x, y));
}

void TestDropout::identityModes() {
    ThreadPool pool(2);
    const int64_t n = 20000;
    const auto x = randomVector(n, -1, 1, 4);
    for (auto [rate, training] : {std::pair{0.5f, false}, std::pair{0.0f, true}}) {
        std::vector<float> y(idx(n));
        std::vector<uint8_t> mask(idx(n), 0);
        dropoutForward(x.data(), y.data(), mask.data(), n, rate, 1, 1, training, pool);
        QVERIFY(sameBits(x, y));
        for (uint8_t m : mask) QCOMPARE(m, uint8_t(1));
        std::vector<float> dx(idx(n), 1.0f);
        dropoutBackward(x.data(), nullptr, dx.data(), n, rate, training, pool);  // mask not read
        for (int64_t i = 0; i < n; ++i) QCOMPARE(dx[idx(i)], 1.0f + x[idx(i)]);
    }
}

void TestDropout::rateOneDropsEverything() {
    ThreadPool pool(1);
    const auto x = randomVector(100, -1, 1, 5);
    std::vector<float> y(100, 3.0f), dx(100, 2.0f);
    std::vector<uint8_t> mask(100, 1);
    dropoutForward(x.data(), y.data(), mask.data(), 100, 1.0f, 1, 1, true, pool);
    for (float v : y) QCOMPARE(v, 0.0f);
    for (uint8_t m : mask) QCOMPARE(m, uint8_t(0));
    dropoutBackward(x.data(), mask.data(), dx.data(), 100, 1.0f, true, pool);
    for (float v : dx) QCOMPARE(v, 2.0f);
    QCOMPARE(dropoutScale(1.0f), 0.0f);
    QCOMPARE(dropoutScale(0.0f), 1.0f);
}

void TestDropout::backwardAccumulatesAndMatchesFiniteDifferences() {
    ThreadPool pool(2);
    const int64_t n = 301;
    const float rate = 0.3f;
    const uint64_t seed = 42, stream = 7;
    const auto x = randomVector(n, -2, 2, 6);
    const auto w = randomVector(n, -1, 1, 7);
    std::vector<float> y(idx(n));
    std::vector<uint8_t> mask(idx(n));
    dropoutForward(x.data(), y.data(), mask.data(), n, rate, seed, stream, true, pool);
    const float prior = -0.25f;
    std::vector<float> dx(idx(n), prior);
    dropoutBackward(w.data(), mask.data(), dx.data(), n, rate, true, pool);
    // L = Σ w ⊙ dropout(x) in double, with the mask fixed by (seed, stream).
    std::vector<double> xd(x.begin(), x.end());
    auto loss = [&] {
        double s = 0;
        for (int64_t i = 0; i < n; ++i)
            if (rng::uniform(seed, stream, uint64_t(i)) >= rate) s += w[idx(i)] * xd[idx(i)] / (1.0 - rate);
        return s;
    };
    const double eps = 1e-3;
    for (int64_t i = 0; i < n; ++i) {
        const double analytic = mask[idx(i)] ? w[idx(i)] / (1.0 - rate) : 0.0;
        QVERIFY(close(dx[idx(i)] - prior, analytic, 1e-5, 1e-6));
        const double saved = xd[idx(i)];
        xd[idx(i)] = saved + eps;
        const double up = loss();
        xd[idx(i)] = saved - eps;
        const double down = loss();
        xd[idx(i)] = saved;
        QVERIFY(close(dx[idx(i)] - prior, (up - down) / (2 * eps), 1e-2, 1e-5));
    }
}

void TestDropout::noiseShapeSharesDecisions_data() {
    QTest::addColumn<QVector<qint64>>("dims");
    QTest::addColumn<QVector<qint64>>("noiseShape");
    QTest::addColumn<float>("rate");
    // Whole samples (stochastic depth), whole channels, one decision per (h, w) shared by the batch.
    QTest::newRow("samples") << QVector<qint64>{64, 5, 7, 3} << QVector<qint64>{-1, 1, 1, 1} << 0.2f;
    QTest::newRow("channels") << QVector<qint64>{8, 6, 6, 32} << QVector<qint64>{-1, 1, 1, 32} << 0.5f;
    QTest::newRow("positions") << QVector<qint64>{5, 9, 11, 2} << QVector<qint64>{1, -1, 11, 1} << 0.3f;
    QTest::newRow("ragged large") << QVector<qint64>{3, 4099, 5} << QVector<qint64>{-1, -1, 1} << 0.6f;
}

void TestDropout::noiseShapeSharesDecisions() {
    QFETCH(QVector<qint64>, dims);
    QFETCH(QVector<qint64>, noiseShape);
    QFETCH(float, rate);
    const std::vector<int64_t> d(dims.begin(), dims.end()), ns(noiseShape.begin(), noiseShape.end());
    const std::vector<int64_t> noise = dropoutNoiseDims(ns, d);
    QCOMPARE(noise.size(), d.size());
    int64_t n = 1, m = 1;
    for (size_t k = 0; k < d.size(); ++k) {
        n *= d[k];
        m *= noise[k];
        QCOMPARE(noise[k], ns[k] == 1 ? int64_t(1) : d[k]);
    }
    const uint64_t seed = 0x5eedull, stream = 12;
    const auto x = randomVector(n, -2, 2, 10);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> y(idx(n));
        std::vector<uint8_t> mask(idx(n), 9), keep(idx(m));
        dropoutBroadcastForward(x.data(), y.data(), mask.data(), keep.data(), d, noise, rate, seed, stream, true, pool);
        return std::pair{y, mask};
    };
    ThreadPool p1(1), p3(3);
    const auto [y, mask] = run(p3);
    QVERIFY(sameBits(y, run(p1).first));
    // Reference: element i takes rng::uniform(seed, stream, j) >= rate of its noise position j, the
    // row-major index over the noise sizes.
    const float scale = 1.0f / (1.0f - rate);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t rest = i, j = 0, stride = 1;
        for (int64_t k = int64_t(d.size()) - 1; k >= 0; --k) {
            const int64_t at = rest % d[idx(k)];
            rest /= d[idx(k)];
            j += (noise[idx(k)] == 1 ? 0 : at) * stride;
            stride *= noise[idx(k)];
        }
        const bool keep = rng::uniform(seed, stream, uint64_t(j)) >= rate;
        QCOMPARE(mask[idx(i)], uint8_t(keep));
        QCOMPARE(y[idx(i)], keep ? x[idx(i)] * scale : 0.0f);
        kept += keep;
    }
    QVERIFY(kept > 0 && kept < n);
    // The backward of plain dropout applies to the per-element mask.
    std::vector<float> dx(idx(n), 0.0f);
    ThreadPool p2(2);
    dropoutBackward(x.data(), mask.data(), dx.data(), n, rate, true, p2);
    for (int64_t i = 0; i < n; ++i) QCOMPARE(dx[idx(i)], mask[idx(i)] ? x[idx(i)] * scale : 0.0f);
}

void TestDropout::noiseShapeWithoutSharedAxisIsPlainDropout() {
    // No entry 1 on an axis longer than 1: every element draws its own decision, as plain dropout.
    const std::vector<int64_t> d{4, 1, 6};
    QVERIFY(dropoutNoiseDims(std::vector<int64_t>{-1, 1, 6}, d).empty());
    QVERIFY(dropoutNoiseDims(std::vector<int64_t>{}, d).empty());
    QCOMPARE(dropoutNoiseDims(std::vector<int64_t>{1, -1, -1}, d), (std::vector<int64_t>{1, 1, 6}));
}

void TestDropout::poolSizeIndependence() {
    const int64_t n = 200003;
    const auto x = randomVector(n, -1, 1, 8), dy = randomVector(n, -1, 1, 9);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> y(idx(n)), dx(idx(n), 0.5f);
        std::vector<uint8_t> mask(idx(n));
        dropoutForward(x.data(), y.data(), mask.data(), n, 0.35f, 123, 4, true, pool);
        dropoutBackward(dy.data(), mask.data(), dx.data(), n, 0.35f, true, pool);
        y.insert(y.end(), dx.begin(), dx.end());
        for (uint8_t m : mask) y.push_back(m);
        return y;
    };
    ThreadPool p1(1), p2(2), p3(3);
    const auto r = run(p1);
    QVERIFY(sameBits(r, run(p1)));
    QVERIFY(sameBits(r, run(p2)));
    QVERIFY(sameBits(r, run(p3)));
}

QTEST_APPLESS_MAIN(TestDropout)
#include "tst_dropout.moc"
