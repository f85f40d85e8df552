// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Max/average/global-average pooling kernels against naive double-precision loops and finite
// differences, over same/valid padding, overlapping windows, odd sizes and batches.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/pooling.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

std::vector<float> randomVector(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

// Distinct values 0.01 apart in random order: no two window elements are within a
// finite-difference step of each other, so max pooling's argmax is stable under perturbation.
std::vector<float> distinctVector(size_t n, uint32_t seed) {
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = (perm[i] - float(n) / 2) * 0.01f;
    return v;
}

template <typename A, typename B>
double relErr(const A& a, const B& b) {
    double err = 0.0, mag = 1e-30;
    for (size_t i = 0; i < b.size(); ++i) {
        if (!std::isfinite(double(a[i]))) return INFINITY;
        err = std::max(err, std::abs(double(a[i]) - double(b[i])));
        mag = std::max(mag, std::abs(double(b[i])));
    }
    return err / mag;
}

bool bitEqual(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Spec {
    const char* name;
    int64_t n, h, w, c, ph, pw, sh, sw;
    bool same;
};

const Spec kSpecs[] = {
    {"2x2 s2 valid", 1, 4, 4, 3, 2, 2, 2, 2, false},
    {"2x2 s2 same odd batch3", 3, 5, 7, 2, 2, 2, 2, 2, true},
    {"3x3 s2 same overlapping", 2, 7, 6, 5, 3, 3, 2, 2, true},
    {"3x3 s1 valid overlapping", 1, 6, 6, 4, 3, 3, 1, 1, false},
    {"3x2 s2x1 same", 3, 5, 6, 3, 3, 2, 2, 1, true},
    {"2x2 s1 same", 1, 5, 5, 2, 2, 2, 1, 1, true},
    {"4x4 s3 same", 1, 10, 11, 3, 4, 4, 3, 3, true},
    {"5x5 s1 same on 3x3", 2, 3, 3, 17, 5, 5, 1, 1, true},
    {"3x3 s3 valid odd", 3, 11, 10, 33, 3, 3, 3, 3, false},
    {"1x1", 1, 3, 4, 5, 1, 1, 1, 1, false},
    {"2x2 s3 valid with gaps", 3, 8, 8, 2, 2, 2, 3, 3, false},
    {"3x3 s3 same", 1, 8, 7, 3, 3, 3, 3, 3, true},
};

Pool2DGeom geomOf(const Spec& s) {
    return makePool2DGeom(s.n, s.h, s.w, s.c, s.ph, s.pw, s.sh, s.sw, s.same);
}

// Naive pooling in double. For max, also the flat input index chosen (first maximum).
void refPool(const Pool2DGeom& g, const std::vector<float>& x, bool isMax, std::vector<double>& y,
             std::vector<int64_t>& arg, std::vector<double>& count) {
    const size_t outN = size_t(g.n * g.oh * g.ow * g.c);
    y.assign(outN, 0.0);
    arg.assign(outN, -1);
    count.assign(outN, 0.0);
    for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox)
                for (int64_t ci = 0; ci < g.c; ++ci) {
                    const size_t o = size_t(((b * g.oh + oy) * g.ow + ox) * g.c + ci);
                    double best = -INFINITY, sum = 0.0;
                    int64_t cnt = 0, at = -1;
                    for (int64_t ky = 0; ky < g.poolH; ++ky)
                        for (int64_t kx = 0; kx < g.poolW; ++kx) {
                            const int64_t iy = oy * g.strideH - g.padTop + ky;
                            const int64_t ix = ox * g.strideW - g.padLeft + kx;
                            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                            const int64_t xi = ((b * g.h + iy) * g.w + ix) * g.c + ci;
                            if (x[xi] > best) {
                                best = x[xi];
                                at = xi;
                            }
                            sum += x[xi];
                            ++cnt;
                        }
                    y[o] = isMax ? best : sum / cnt;
                    arg[o] = at;
                    count[o] = double(cnt);
                }
}

std::vector<double> refBackward(const Pool2DGeom& g, const std::vector<float>& x,
                                const std::vector<float>& dy, bool isMax) {
    std::vector<double> y, count;
    std::vector<int64_t> arg;
    refPool(g, x, isMax, y, arg, count);
    std::vector<double> dx(x.size(), 0.0);
    for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox)
                for (int64_t ci = 0; ci < g.c; ++ci) {
                    const size_t o = size_t(((b * g.oh + oy) * g.ow + ox) * g.c + ci);
                    if (isMax) {
                        dx[size_t(arg[o])] += dy[o];
                        continue;
                    }
                    for (int64_t ky = 0; ky < g.poolH; ++ky)
                        for (int64_t kx = 0; kx < g.poolW; ++kx) {
                            const int64_t iy = oy * g.strideH - g.padTop + ky;
                            const int64_t ix = ox * g.strideW - g.padLeft + kx;
                            if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                            dx[size_t(((b * g.h + iy) * g.w + ix) * g.c + ci)] += dy[o] / count[o];
                        }
                }
    return dx;
}

// Runs the kernel under test: forward into y (and argmax), backward accumulating into dx.
struct Runner {
    Pool2DGeom g;
    bool isMax;
    ThreadPool& pool;
    std::vector<int32_t> argmax;
    void forward(const std::vector<float>& x, std::vector<float>& y) {
        y.assign(size_t(g.n * g.oh * g.ow * g.c), NAN);
        if (isMax) {
            argmax.assign(maxPool2DIndexCount(g), -7);
            maxPool2DForward(g, x.data(), y.data(), argmax.data(), pool);
        } else {
            avgPool2DForward(g, x.data(), y.data(), pool);
        }
    }
    void backward(const std::vector<float>& dy, std::vector<float>& dx) {
        if (isMax)
            maxPool2DBackward(g, dy.data(), argmax.data(), dx.data(), pool);
        else
            avgPool2DBackward(g, dy.data(), dx.data(), pool);
    }
};

}  // namespace

class TestPooling : public QObject {
    Q_OBJECT

private slots:
    void geometry();
    void pool2d_data();
    void pool2d();
    void maxPoolWithoutIndices();
    void maxPoolNanAndInfinity();
    void globalAverage_data();
    void globalAverage();
};

void TestPooling::geometry() {
    Pool2DGeom g = makePool2DGeom(1, 5, 7, 2, 2, 2, 2, 2, true);
    QCOMPARE(g.oh, int64_t(3));
    QCOMPARE(g.ow, int64_t(4));
    QCOMPARE(g.padTop, int64_t(0));  // total 1: goes to the bottom
    QCOMPARE(g.padLeft, int64_t(0));
    g = makePool2DGeom(1, 3, 3, 1, 5, 5, 1, 1, true);
    QCOMPARE(g.oh, int64_t(3));
    QCOMPARE(g.padTop, int64_t(2));
    g = makePool2DGeom(1, 11, 10, 1, 3, 3, 3, 3, false);
    QCOMPARE(g.oh, int64_t(3));
    QCOMPARE(g.ow, int64_t(3));
    QVERIFY(pool2dGeomIsValid(g));
}

void TestPooling::pool2d_data() {
    QTest::addColumn<int>("spec");
    QTest::addColumn<bool>("isMax");
    for (size_t i = 0; i < std::size(kSpecs); ++i) {
        QTest::newRow(qPrintable(QString("max %1").arg(kSpecs[i].name))) << int(i) << true;
        QTest::newRow(qPrintable(QString("avg %1").arg(kSpecs[i].name))) << int(i) << false;
    }
}

void TestPooling::pool2d() {
    QFETCH(int, spec);
    QFETCH(bool, isMax);
    const Spec& s = kSpecs[spec];
    ThreadPool pool(2);
    Runner run{geomOf(s), isMax, pool, {}};
    const Pool2DGeom& g = run.g;
    QVERIFY(pool2dGeomIsValid(g));
    auto x = distinctVector(size_t(g.n * g.h * g.w * g.c), 100 + spec);
    auto dy = randomVector(size_t(g.n * g.oh * g.ow * g.c), 200 + spec);

    // Forward against the naive loops.
    std::vector<float> y;
    run.forward(x, y);
    std::vector<double> ry, rc;
    std::vector<int64_t> rarg;
    refPool(g, x, isMax, ry, rarg, rc);
    QVERIFY(relErr(y, ry) <= 1e-6);

    // Backward against the naive analytic gradient.
    std::vector<float> dx(x.size(), 0.0f);
    run.backward(dy, dx);
    const auto rdx = refBackward(g, x, dy, isMax);
    QVERIFY(relErr(dx, rdx) <= 1e-4);

    // Accumulation: a second call doubles; and results are bit-identical run to run.
    std::vector<float> dx2 = dx;
    run.backward(dy, dx2);
    std::vector<float> twice(dx.size());
    for (size_t i = 0; i < dx.size(); ++i) twice[i] = 2 * dx[i];
    QVERIFY(relErr(dx2, twice) <= 1e-6);
    std::vector<float> y2, dx3(x.size(), 0.0f);
    run.forward(x, y2);
    run.backward(dy, dx3);
    QVERIFY(bitEqual(y, y2));
    QVERIFY(bitEqual(dx, dx3));

    // Central finite differences of sum(dy * y) on sampled inputs.
    auto loss = [&](const std::vector<float>& xx) {
        std::vector<float> yy;
        Runner r{g, isMax, pool, {}};
        r.forward(xx, yy);
        double l = 0.0;
        for (size_t i = 0; i < yy.size(); ++i) l += double(dy[i]) * yy[i];
        return l;
    };
    std::mt19937 rng(7 + spec);
    std::vector<double> fd, an;
    const double eps = 1e-3;
    for (int k = 0; k < 24; ++k) {
        const size_t i = std::uniform_int_distribution<size_t>(0, x.size() - 1)(rng);
        const float saved = x[i];
        x[i] = float(saved + eps);
        const double lp = loss(x);
        x[i] = float(saved - eps);
        const double lm = loss(x);
        x[i] = saved;
        fd.push_back((lp - lm) / (2 * eps));
        an.push_back(dx[i]);
    }
    const double err = relErr(fd, an);
    if (err > 1e-2) qWarning("finite-difference rel err %g", err);
    QVERIFY(err <= 1e-2);
}

void TestPooling::maxPoolWithoutIndices() {
    ThreadPool pool(2);
    const Pool2DGeom g = geomOf(kSpecs[2]);
    auto x = randomVector(size_t(g.n * g.h * g.w * g.c), 3);
    std::vector<float> y1(maxPool2DIndexCount(g)), y2(y1.size());
    std::vector<int32_t> idx(maxPool2DIndexCount(g));
    maxPool2DForward(g, x.data(), y1.data(), idx.data(), pool);
    maxPool2DForward(g, x.data(), y2.data(), nullptr, pool);
    QVERIFY(bitEqual(y1, y2));
}

void TestPooling::maxPoolNanAndInfinity() {
    ThreadPool pool(1);
    // One image, one channel, 2x2 windows with stride 2 over 2x4: two windows.
    const Pool2DGeom g = makePool2DGeom(1, 2, 4, 1, 2, 2, 2, 2, false);
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x = {1.0f, NAN, -inf, -inf, 5.0f, 2.0f, -inf, -inf};
    std::vector<float> y(2);
    std::vector<int32_t> idx(2);
    maxPool2DForward(g, x.data(), y.data(), idx.data(), pool);
    QVERIFY(std::isnan(y[0]));  // NaN propagates
    QCOMPARE(idx[0], 1);
    QCOMPARE(y[1], -inf);  // all -inf: the first element is named
    QCOMPARE(idx[1], 2);
    std::vector<float> dy = {1.0f, 2.0f}, dx(8, 0.0f);
    maxPool2DBackward(g, dy.data(), idx.data(), dx.data(), pool);
    const std::vector<float> expect = {0, 1, 2, 0, 0, 0, 0, 0};
    QVERIFY(bitEqual(dx, expect));
}

void TestPooling::globalAverage_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("h");
    QTest::addColumn<int>("w");
    QTest::addColumn<int>("c");
    QTest::newRow("1x1x1x1") << 1 << 1 << 1 << 1;
    QTest::newRow("3x5x7x3") << 3 << 5 << 7 << 3;
    QTest::newRow("1x4x4x130") << 1 << 4 << 4 << 130;
    QTest::newRow("2x7x7x64") << 2 << 7 << 7 << 64;
}

void TestPooling::globalAverage() {
    QFETCH(int, n);
    QFETCH(int, h);
    QFETCH(int, w);
    QFETCH(int, c);
    ThreadPool pool(2);
    auto x = randomVector(size_t(n * h * w * c), 5), dy = randomVector(size_t(n * c), 6);
    std::vector<float> y(size_t(n * c), NAN), dx(x.size(), 0.0f);
    globalAvgPool2DForward(n, h, w, c, x.data(), y.data(), pool);
    globalAvgPool2DBackward(n, h, w, c, dy.data(), dx.data(), pool);
    std::vector<double> ry(y.size(), 0.0), rdx(x.size());
    for (int b = 0; b < n; ++b)
        for (int p = 0; p < h * w; ++p)
            for (int ci = 0; ci < c; ++ci) {
                ry[b * c + ci] += double(x[(size_t(b) * h * w + p) * c + ci]) / (h * w);
                rdx[(size_t(b) * h * w + p) * c + ci] = double(dy[b * c + ci]) / (h * w);
            }
    QVERIFY(relErr(y, ry) <= 1e-5);
    QVERIFY(relErr(dx, rdx) <= 1e-6);
    // Accumulates.
    globalAvgPool2DBackward(n, h, w, c, dy.data(), dx.data(), pool);
    for (auto& v : rdx) v *= 2;
    QVERIFY(relErr(dx, rdx) <= 1e-6);
    // Finite differences (the op is linear, so they are exact up to rounding).
    const double eps = 1e-3;
    std::vector<double> fd, an;
    for (size_t i = 0; i < x.size(); i += std::max<size_t>(1, x.size() / 16)) {
        auto lossAt = [&](float v) {
            auto xx = x;
            xx[i] = v;
            std::vector<float> yy(y.size());
            globalAvgPool2DForward(n, h, w, c, xx.data(), yy.data(), pool);
            double l = 0.0;
            for (size_t k = 0; k < yy.size(); ++k) l += double(dy[k]) * yy[k];
            return l;
        };
        fd.push_back((lossAt(float(x[i] + eps)) - lossAt(float(x[i] - eps))) / (2 * eps));
        an.push_back(rdx[i] / 2);
    }
    QVERIFY(relErr(fd, an) <= 1e-2);
}

QTEST_APPLESS_MAIN(TestPooling)
#include "tst_pooling.moc"
