// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of the elementwise kernels in engine/ops/kernels/elementwise.h: values against naive
// references, gradients against finite differences, accumulation, aliasing, pool independence.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "engine/ops/kernels/elementwise.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

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

bool close(double got, double want, double rtol, double atol = 1e-7) {
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// Central finite difference of a double loss with respect to x[i].
double finiteDifference(std::vector<double>& x, size_t i, const std::function<double()>& loss, double eps = 1e-3) {
    const double saved = x[i];
    x[i] = saved + eps;
    const double up = loss();
    x[i] = saved - eps;
    const double down = loss();
    x[i] = saved;
    return (up - down) / (2.0 * eps);
}

std::vector<double> toDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

class TestElementwise : public QObject {
    Q_OBJECT

private slots:
    void binaryForward();
    void binaryForwardInPlace();
    void addAndSubtractBackwardAccumulate();
    void multiplyBackwardMatchesFiniteDifferences();
    void multiplyBackwardSameBuffer();
    void addNOrderAndAliasing();
    void scaleAndAccumulateScaled();
    void fillZeroCopy();
    void copy2dStrides();
    void concatForwardBackward();
    void concatBackwardMatchesFiniteDifferences();
    void parallelElementsAlignedChunks();
    void poolSizeIndependence();
};

void TestElementwise::binaryForward() {
    ThreadPool pool(2);
    const int64_t n = 100003;
    auto a = randomVector(n, -2, 2, 1), b = randomVector(n, -2, 2, 2);
    std::vector<float> y(static_cast<size_t>(n));
    add(a.data(), b.data(), y.data(), n, pool);
    for (int64_t i = 0; i < n; ++i) QCOMPARE(y[size_t(i)], a[size_t(i)] + b[size_t(i)]);
    subtract(a.data(), b.data(), y.data(), n, pool);
    for (int64_t i = 0; i < n; ++i) QCOMPARE(y[size_t(i)], a[size_t(i)] - b[size_t(i)]);
    multiply(a.data(), b.data(), y.data(), n, pool);
    for (int64_t i = 0; i < n; ++i) QCOMPARE(y[size_t(i)], a[size_t(i)] * b[size_t(i)]);
}

void TestElementwise::binaryForwardInPlace() {
    ThreadPool pool(2);
    const int64_t n = 40001;
    auto a = randomVector(n, -2, 2, 3), b = randomVector(n, -2, 2, 4);
    std::vector<float> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i) want[i] = a[i] + b[i];
    add(a.data(), b.data(), a.data(), n, pool);  // y == a
    QVERIFY(sameBits(a, want));
    for (size_t i = 0; i < want.size(); ++i) want[i] = a[i] * b[i];
    multiply(a.data(), b.data(), b.data(), n, pool);  // y == b
    QVERIFY(sameBits(b, want));
}

void TestElementwise::addAndSubtractBackwardAccumulate() {
    ThreadPool pool(2);
    const int64_t n = 33333;
    auto dy = randomVector(n, -1, 1, 5);
    auto da = randomVector(n, -1, 1, 6), db = randomVector(n, -1, 1, 7);
    const auto da0 = da, db0 = db;
    addBackward(dy.data(), da.data(), db.data(), n, pool);
    for (size_t i = 0; i < da.size(); ++i) {
        QCOMPARE(da[i], da0[i] + dy[i]);
        QCOMPARE(db[i], db0[i] + dy[i]);
    }
    addBackward(dy.data(), nullptr, db.data(), n, pool);  // nullable
    for (size_t i = 0; i < db.size(); ++i) QCOMPARE(db[i], (db0[i] + dy[i]) + dy[i]);
    da = da0;
    db = db0;
    subtractBackward(dy.data(), da.data(), db.data(), n, pool);
    for (size_t i = 0; i < da.size(); ++i) {
        QCOMPARE(da[i], da0[i] + dy[i]);
        QCOMPARE(db[i], db0[i] - dy[i]);
    }
    // x + x: both gradients land in the same buffer.
    std::vector<float> dx(static_cast<size_t>(n), 0.0f);
    addBackward(dy.data(), dx.data(), dx.data(), n, pool);
    for (size_t i = 0; i < dx.size(); ++i) QCOMPARE(dx[i], dy[i] + dy[i]);
}

void TestElementwise::multiplyBackwardMatchesFiniteDifferences() {
    ThreadPool pool(2);
    const int64_t n = 41;
    auto a = randomVector(n, -2, 2, 8), b = randomVector(n, -2, 2, 9), w = randomVector(n, -1, 1, 10);
    std::vector<float> da(static_cast<size_t>(n), 0.0f), db(size_t(n), 0.0f);
    multiplyBackward(a.data(), b.data(), w.data(), da.data(), db.data(), n, pool);
    auto ad = toDouble(a), bd = toDouble(b);
    auto loss = [&] {
        double s = 0;
        for (size_t i = 0; i < ad.size(); ++i) s += w[i] * ad[i] * bd[i];
        return s;
    };
    for (size_t i = 0; i < size_t(n); ++i) {
        QVERIFY(close(da[i], double(w[i]) * b[i], 1e-5));
        QVERIFY(close(db[i], double(w[i]) * a[i], 1e-5));
        QVERIFY(close(da[i], finiteDifference(ad, i, loss), 1e-2, 1e-5));
        QVERIFY(close(db[i], finiteDifference(bd, i, loss), 1e-2, 1e-5));
    }
}

void TestElementwise::multiplyBackwardSameBuffer() {
    // y = x * x: da and db are the same buffer, the gradient is 2·x·dy.
    ThreadPool pool(2);
    const int64_t n = 20000;
    auto x = randomVector(n, -2, 2, 11), dy = randomVector(n, -1, 1, 12);
    std::vector<float> dx(static_cast<size_t>(n), 0.0f);
    multiplyBackward(x.data(), x.data(), dy.data(), dx.data(), dx.data(), n, pool);
    for (size_t i = 0; i < dx.size(); ++i) QVERIFY(close(dx[i], 2.0 * x[i] * dy[i], 1e-6));
}

void TestElementwise::addNOrderAndAliasing() {
    ThreadPool pool(2);
    const int64_t n = 50001;
    std::vector<std::vector<float>> ins;
    for (uint32_t k = 0; k < 4; ++k) ins.push_back(randomVector(n, -3, 3, 20 + k));
    std::vector<float> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i) want[i] = ((ins[0][i] + ins[1][i]) + ins[2][i]) + ins[3][i];
    const float* ptrs[4] = {ins[0].data(), ins[1].data(), ins[2].data(), ins[3].data()};
    std::vector<float> y(static_cast<size_t>(n));
    addN(ptrs, 4, y.data(), n, pool);
    QVERIFY(sameBits(y, want));
    // Writing into the third input must still read it first.
    addN(ptrs, 4, ins[2].data(), n, pool);
    QVERIFY(sameBits(ins[2], want));

    addN(ptrs, 1, y.data(), n, pool);
    QVERIFY(sameBits(y, ins[0]));
    addN(ptrs, 0, y.data(), n, pool);
    for (float v : y) QCOMPARE(v, 0.0f);
}

void TestElementwise::scaleAndAccumulateScaled() {
    ThreadPool pool(2);
    const int64_t n = 30000;
    auto x = randomVector(n, -2, 2, 30);
    std::vector<float> y(static_cast<size_t>(n));
    scale(x.data(), -1.5f, y.data(), n, pool);
    for (size_t i = 0; i < y.size(); ++i) QCOMPARE(y[i], -1.5f * x[i]);
    auto dx = randomVector(n, -1, 1, 31);
    const auto dx0 = dx;
    accumulateScaled(x.data(), 0.25f, dx.data(), n, pool);
    for (size_t i = 0; i < dx.size(); ++i) QVERIFY(close(dx[i], dx0[i] + 0.25 * x[i], 1e-6, 1e-7));
    dx = dx0;
    accumulate(x.data(), dx.data(), n, pool);
    for (size_t i = 0; i < dx.size(); ++i) QCOMPARE(dx[i], dx0[i] + x[i]);
}

void TestElementwise::fillZeroCopy() {
    ThreadPool pool(2);
    const int64_t n = 70001;
    std::vector<float> y(static_cast<size_t>(n), 3.0f);
    fill(y.data(), n, -2.0f, pool);
    for (float v : y) QCOMPARE(v, -2.0f);
    zero(y.data(), n, pool);
    for (float v : y) QCOMPARE(v, 0.0f);
    auto x = randomVector(n, -1, 1, 40);
    copy(x.data(), y.data(), n, pool);
    QVERIFY(sameBits(x, y));
    copy(x.data(), x.data(), n, pool);  // self-copy is a no-op
    QVERIFY(sameBits(x, y));
}

void TestElementwise::copy2dStrides() {
    ThreadPool pool(2);
    const int64_t rows = 300, srcStride = 70, dstStride = 50, cols = 45;
    auto src = randomVector(rows * srcStride, -1, 1, 41);
    std::vector<float> dst(static_cast<size_t>(rows * dstStride), 9.0f);
    copy2d(src.data() + 3, srcStride, dst.data() + 2, dstStride, rows, cols, pool);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < dstStride; ++c) {
            const float got = dst[size_t(r * dstStride + c)];
            if (c >= 2 && c < 2 + cols)
                QCOMPARE(got, src[size_t(r * srcStride + 3 + c - 2)]);
            else
                QCOMPARE(got, 9.0f);
        }
}

void TestElementwise::concatForwardBackward() {
    ThreadPool pool(2);
    const int64_t outer = 2000;
    const int64_t inners[3] = {3, 17, 8};
    const int64_t total = 28;
    std::vector<std::vector<float>> ins;
    for (int k = 0; k < 3; ++k) ins.push_back(randomVector(outer * inners[k], -1, 1, 50 + uint32_t(k)));
    const float* ptrs[3] = {ins[0].data(), ins[1].data(), ins[2].data()};
    std::vector<float> y(static_cast<size_t>(outer * total));
    concatForward(ptrs, inners, 3, outer, y.data(), pool);
    for (int64_t o = 0; o < outer; ++o) {
        int64_t off = 0;
        for (int k = 0; k < 3; ++k) {
            for (int64_t j = 0; j < inners[k]; ++j)
                QCOMPARE(y[size_t(o * total + off + j)], ins[size_t(k)][size_t(o * inners[k] + j)]);
            off += inners[k];
        }
    }
    // Backward accumulates into each input gradient; a null entry is skipped.
    auto dy = randomVector(outer * total, -1, 1, 60);
    std::vector<float> d0(static_cast<size_t>(outer * inners[0]), 1.0f), d2(size_t(outer * inners[2]), -1.0f);
    float* dxs[3] = {d0.data(), nullptr, d2.data()};
    concatBackward(dy.data(), inners, 3, outer, dxs, pool);
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inners[0]; ++j)
            QCOMPARE(d0[size_t(o * inners[0] + j)], 1.0f + dy[size_t(o * total + j)]);
        for (int64_t j = 0; j < inners[2]; ++j)
            QCOMPARE(d2[size_t(o * inners[2] + j)], -1.0f + dy[size_t(o * total + 20 + j)]);
    }
}

void TestElementwise::concatBackwardMatchesFiniteDifferences() {
    ThreadPool pool(1);
    const int64_t outer = 3;
    const int64_t inners[2] = {2, 3};
    auto a = randomVector(outer * 2, -1, 1, 70), b = randomVector(outer * 3, -1, 1, 71);
    auto w = randomVector(outer * 5, -1, 1, 72);
    auto ad = toDouble(a), bd = toDouble(b);
    auto loss = [&] {  // Σ w ⊙ concat(a, b), in double
        double s = 0;
        for (int64_t o = 0; o < outer; ++o) {
            for (int64_t j = 0; j < 2; ++j) s += w[size_t(o * 5 + j)] * ad[size_t(o * 2 + j)];
            for (int64_t j = 0; j < 3; ++j) s += w[size_t(o * 5 + 2 + j)] * bd[size_t(o * 3 + j)];
        }
        return s;
    };
    std::vector<float> da(a.size(), 0.0f), db(b.size(), 0.0f);
    float* dxs[2] = {da.data(), db.data()};
    concatBackward(w.data(), inners, 2, outer, dxs, pool);
    for (size_t i = 0; i < da.size(); ++i) QVERIFY(close(da[i], finiteDifference(ad, i, loss), 1e-2, 1e-5));
    for (size_t i = 0; i < db.size(); ++i) QVERIFY(close(db[i], finiteDifference(bd, i, loss), 1e-2, 1e-5));
}

void TestElementwise::parallelElementsAlignedChunks() {
    ThreadPool pool(3);
    const int64_t n = 100001;
    std::vector<int> hits(static_cast<size_t>(n), 0);
    std::vector<int64_t> starts(16, -1);
    std::atomic<int> chunks{0};
    parallelElements(pool, n, 1000, [&](int64_t b, int64_t e) {
        starts[size_t(chunks.fetch_add(1))] = b;
        for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
    });
    for (int h : hits) QCOMPARE(h, 1);
    QCOMPARE(chunks.load(), 3);
    for (int c = 0; c < chunks.load(); ++c) QCOMPARE(starts[size_t(c)] % 64, int64_t(0));
}

void TestElementwise::poolSizeIndependence() {
    const int64_t n = 200003;
    auto a = randomVector(n, -2, 2, 80), b = randomVector(n, -2, 2, 81), dy = randomVector(n, -1, 1, 82);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> out(static_cast<size_t>(n) * 4);
        float* y = out.data();
        multiply(a.data(), b.data(), y, n, pool);
        std::vector<float> da(static_cast<size_t>(n), 0.5f), db(size_t(n), -0.5f);
        multiplyBackward(a.data(), b.data(), dy.data(), da.data(), db.data(), n, pool);
        std::memcpy(y + n, da.data(), size_t(n) * sizeof(float));
        std::memcpy(y + 2 * n, db.data(), size_t(n) * sizeof(float));
        const float* ptrs[3] = {a.data(), b.data(), dy.data()};
        addN(ptrs, 3, y + 3 * n, n, pool);
        return out;
    };
    ThreadPool p1(1), p2(2);
    const auto r1 = run(p1);
    QVERIFY(sameBits(r1, run(p1)));
    QVERIFY(sameBits(r1, run(p2)));
}

QTEST_APPLESS_MAIN(TestElementwise)
#include "tst_elementwise.moc"
