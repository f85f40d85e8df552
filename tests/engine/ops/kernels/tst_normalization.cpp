// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// kiln-test-avx2
// Batch and layer normalisation kernels against naive double-precision formulas and finite
// differences, including the moving-statistics update conventions and accumulation.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/normalization.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

std::vector<float> randomVector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
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

// Checks sampled entries of `param` against `grad` with central differences of lossOf().
template <typename F>
double finiteDiffErr(std::vector<float>& param, const std::vector<float>& grad, F&& lossOf, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<double> fd, an;
    const double eps = 1e-3;
    const int samples = std::min<int>(16, int(param.size()));
    for (int k = 0; k < samples; ++k) {
        const size_t i =
            param.size() <= 16 ? size_t(k) : std::uniform_int_distribution<size_t>(0, param.size() - 1)(rng);
        const float saved = param[i];
        param[i] = float(saved + eps);
        const double lp = lossOf();
        param[i] = float(saved - eps);
        const double lm = lossOf();
        param[i] = saved;
        fd.push_back((lp - lm) / (2 * eps));
        an.push_back(grad[i]);
    }
    return relErr(fd, an);
}

double dotLoss(const std::vector<float>& dy, const std::vector<float>& y) {
    double l = 0.0;
    for (size_t i = 0; i < y.size(); ++i) l += double(dy[i]) * y[i];
    return l;
}

struct Case {
    int64_t rows, c;
    bool affine;  // gamma/beta present
};

// The last three have enough rows for batch norm's fixed row chunks (full and partial channel
// blocks) and, for 300 channels, its channel-block-only path.
const Case kCases[] = {{5, 1, true}, {7, 3, true}, {75, 20, true}, {200, 33, false}, {1, 5, true}, {64, 128, true}, {3000, 16, true}, {1100, 21, false}, {600, 300, true}};

}  // namespace

class TestNormalization : public QObject {
    Q_OBJECT

private slots:
    void batchNormTraining_data();
    void batchNormTraining();
    void batchNormInference_data();
    void batchNormInference();
    void layerNorm_data();
    void layerNorm();
    void batchNormFusedRelu_data();
    void batchNormFusedRelu();
    void batchNormConstantChannels_data();
    void batchNormConstantChannels();
};

static void addCaseRows() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < std::size(kCases); ++i)
        QTest::newRow(qPrintable(QString("rows %1 c %2%3")
                                     .arg(kCases[i].rows)
                                     .arg(kCases[i].c)
                                     .arg(kCases[i].affine ? "" : " no affine")))
            << int(i);
}

void TestNormalization::batchNormTraining_data() {
    addCaseRows();
}

void TestNormalization::batchNormTraining() {
    QFETCH(int, index);
    const Case cs = kCases[index];
    if (cs.rows < 2) QSKIP("batch statistics need at least two rows for a meaningful check");
    const int64_t rows = cs.rows, c = cs.c;
    ThreadPool pool(2);
    // An offset mean checks the two-pass variance.
    auto x = randomVector(size_t(rows * c), 1 + index, 2.0f, 5.0f);
    auto gamma = randomVector(size_t(c), 2 + index, 0.5f, 1.5f);
    auto beta = randomVector(size_t(c), 3 + index);
    auto dy = randomVector(size_t(rows * c), 4 + index);
    const float* g = cs.affine ? gamma.data() : nullptr;
    const float* bt = cs.affine ? beta.data() : nullptr;
    BatchNormParams params;
    params.epsilon = 1e-3f;
    params.momentum = 0.9f;

    std::vector<float> y(x.size()), mean(c), inv(c);
    auto mm = randomVector(size_t(c), 5), mv = randomVector(size_t(c), 6, 0.5f, 2.0f);
    const auto mm0 = mm, mv0 = mv;
    batchNormForwardTraining(rows, c, x.data(), g, bt, params, y.data(), mean.data(), inv.data(), mm.data(),
                             mv.data(), pool);

    // Naive double reference.
    std::vector<double> rmean(c, 0.0), rvar(c, 0.0), ry(x.size());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t ci = 0; ci < c; ++ci) rmean[ci] += x[r * c + ci] / double(rows);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t ci = 0; ci < c; ++ci) rvar[ci] += std::pow(x[r * c + ci] - rmean[ci], 2) / double(rows);
    std::vector<double> rinv(c), rmm(c), rmv(c);
    for (int64_t ci = 0; ci < c; ++ci) {
        rinv[ci] = 1.0 / std::sqrt(rvar[ci] + params.epsilon);
        const double m = params.momentum;  // Keras rule, biased variance
        rmm[ci] = mm0[ci] * m + rmean[ci] * (1 - m);
        rmv[ci] = mv0[ci] * m + rvar[ci] * (1 - m);
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t ci = 0; ci < c; ++ci)
            ry[r * c + ci] = (x[r * c + ci] - rmean[ci]) * rinv[ci] * (g ? g[ci] : 1.0) + (bt ? bt[ci] : 0.0);
    QVERIFY(relErr(mean, rmean) <= 1e-6);
    QVERIFY(relErr(inv, rinv) <= 1e-5);
    QVERIFY(relErr(y, ry) <= 1e-5);
    if (relErr(mm, rmm) > 1e-6) qWarning("moving mean %g vs %g", mm[0], rmm[0]);
    QVERIFY(relErr(mm, rmm) <= 1e-6);
    QVERIFY(relErr(mv, rmv) <= 1e-6);

    // Unbiased moving variance (PyTorch / TF fused convention).
    {
        BatchNormParams p2 = params;
        p2.unbiasedMovingVariance = true;
        auto mv2 = mv0;
        std::vector<float> y2(x.size()), m2(c), i2(c);
        batchNormForwardTraining(rows, c, x.data(), g, bt, p2, y2.data(), m2.data(), i2.data(), nullptr,
                                 mv2.data(), pool);
        std::vector<double> rmvU(c);
        const double m = params.momentum;
        for (int64_t ci = 0; ci < c; ++ci) rmvU[ci] = mv0[ci] * m + rvar[ci] * rows / (rows - 1.0) * (1 - m);
        QVERIFY(relErr(mv2, rmvU) <= 1e-6);
        QVERIFY(bitEqual(y2, y));
    }

    // Backward against the analytic formula in double.
    std::vector<float> dx(x.size(), 0.0f), dg(c, 0.0f), db(c, 0.0f);
    batchNormBackwardTraining(rows, c, x.data(), g, mean.data(), inv.data(), dy.data(), dx.data(), dg.data(),
                              db.data(), pool);
    std::vector<double> rdg(c, 0.0), rdb(c, 0.0), rdx(x.size());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t ci = 0; ci < c; ++ci) {
            const double xhat = (x[r * c + ci] - rmean[ci]) * rinv[ci];
            rdb[ci] += dy[r * c + ci];
            rdg[ci] += dy[r * c + ci] * xhat;
        }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t ci = 0; ci < c; ++ci) {
            const double xhat = (x[r * c + ci] - rmean[ci]) * rinv[ci];
            rdx[r * c + ci] =
                (g ? g[ci] : 1.0) * rinv[ci] * (dy[r * c + ci] - rdb[ci] / rows - xhat * rdg[ci] / rows);
        }
    QVERIFY(relErr(dx, rdx) <= 1e-4);
    QVERIFY(relErr(dg, rdg) <= 1e-4);
    QVERIFY(relErr(db, rdb) <= 1e-4);

    // Finite differences through the kernel's own forward.
    auto loss = [&]() {
        std::vector<float> yy(x.size()), m(c), iv(c);
        batchNormForwardTraining(rows, c, x.data(), cs.affine ? gamma.data() : nullptr,
                                 cs.affine ? beta.data() : nullptr, params, yy.data(), m.data(), iv.data(),
                                 nullptr, nullptr, pool);
        return dotLoss(dy, yy);
    };
    double e = finiteDiffErr(x, dx, loss, 11);
    if (e > 1e-2) qWarning("dx fd err %g", e);
    QVERIFY(e <= 1e-2);
    if (cs.affine) {
        QVERIFY(finiteDiffErr(gamma, dg, loss, 12) <= 1e-2);
        QVERIFY(finiteDiffErr(beta, db, loss, 13) <= 1e-2);
    }

    // Accumulation and determinism.
    std::vector<float> dx2 = dx, dg2 = dg, db2 = db;
    batchNormBackwardTraining(rows, c, x.data(), g, mean.data(), inv.data(), dy.data(), dx2.data(),
                              dg2.data(), db2.data(), pool);
    auto doubled = [](std::vector<float> v) {
        for (auto& e2 : v) e2 *= 2;
        return v;
    };
    QVERIFY(relErr(dx2, doubled(dx)) <= 1e-6);
    QVERIFY(relErr(dg2, doubled(dg)) <= 1e-6);
    QVERIFY(relErr(db2, doubled(db)) <= 1e-6);
    std::vector<float> dx3(x.size(), 0.0f), dg3(c, 0.0f), db3(c, 0.0f);
    ThreadPool pool3(3);  // the reduction order does not depend on the thread count
    batchNormBackwardTraining(rows, c, x.data(), g, mean.data(), inv.data(), dy.data(), dx3.data(),
                              dg3.data(), db3.data(), pool3);
    QVERIFY(bitEqual(dx3, dx));
    QVERIFY(bitEqual(dg3, dg));
    QVERIFY(bitEqual(db3, db));
    // The forward pass does not depend on the thread count either.
    for (const int threads : {1, 3}) {
        ThreadPool other(threads);
        std::vector<float> yT(x.size()), mT(c), iT(c);
        batchNormForwardTraining(rows, c, x.data(), g, bt, params, yT.data(), mT.data(), iT.data(), nullptr,
                                 nullptr, other);
        QVERIFY2(bitEqual(yT, y) && bitEqual(mT, mean) && bitEqual(iT, inv),
                 qPrintable(QString("forward, %1 threads").arg(threads)));
    }
    // In-place forward (y aliases x) gives the same result.
    auto xi = x;
    std::vector<float> m4(c), i4(c);
    batchNormForwardTraining(rows, c, xi.data(), g, bt, params, xi.data(), m4.data(), i4.data(), nullptr,
                             nullptr, pool);
    QVERIFY(bitEqual(xi, y));
}

void TestNormalization::batchNormInference_data() {
    addCaseRows();
}

void TestNormalization::batchNormInference() {
    QFETCH(int, index);
    const Case cs = kCases[index];
    const int64_t rows = cs.rows, c = cs.c;
    ThreadPool pool(2);
    auto x = randomVector(size_t(rows * c), 21 + index);
    auto gamma = randomVector(size_t(c), 22 + index, 0.5f, 1.5f);
    auto beta = randomVector(size_t(c), 23 + index);
    auto mm = randomVector(size_t(c), 24 + index), mv = randomVector(size_t(c), 25 + index, 0.5f, 2.0f);
    auto dy = randomVector(size_t(rows * c), 26 + index);
    const float* g = cs.affine ? gamma.data() : nullptr;
    const float* bt = cs.affine ? beta.data() : nullptr;
    const float eps = 1e-3f;
    std::vector<float> y(x.size());
    batchNormForwardInference(rows, c, x.data(), g, bt, mm.data(), mv.data(), eps, y.data(), pool);
    std::vector<double> ry(x.size()), rdx(x.size()), rdg(c, 0.0), rdb(c, 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t ci = 0; ci < c; ++ci) {
            const double inv = 1.0 / std::sqrt(double(mv[ci]) + eps);
            const double xhat = (x[r * c + ci] - double(mm[ci])) * inv;
            ry[r * c + ci] = xhat * (g ? g[ci] : 1.0) + (bt ? bt[ci] : 0.0);
            rdx[r * c + ci] = dy[r * c + ci] * (g ? g[ci] : 1.0) * inv;
            rdg[ci] += dy[r * c + ci] * xhat;
            rdb[ci] += dy[r * c + ci];
        }
    QVERIFY(relErr(y, ry) <= 1e-5);
    std::vector<float> dx(x.size(), 0.0f), dg(c, 0.0f), db(c, 0.0f);
    batchNormBackwardInference(rows, c, x.data(), g, mm.data(), mv.data(), eps, dy.data(), dx.data(),
                               dg.data(), db.data(), pool);
    QVERIFY(relErr(dx, rdx) <= 1e-4);
    QVERIFY(relErr(dg, rdg) <= 1e-4);
    QVERIFY(relErr(db, rdb) <= 1e-4);
    auto loss = [&]() {
        std::vector<float> yy(x.size());
        batchNormForwardInference(rows, c, x.data(), cs.affine ? gamma.data() : nullptr,
                                  cs.affine ? beta.data() : nullptr, mm.data(), mv.data(), eps, yy.data(),
                                  pool);
        return dotLoss(dy, yy);
    };
    QVERIFY(finiteDiffErr(x, dx, loss, 27) <= 1e-2);
    if (cs.affine) {
        QVERIFY(finiteDiffErr(gamma, dg, loss, 28) <= 1e-2);
        QVERIFY(finiteDiffErr(beta, db, loss, 29) <= 1e-2);
    }
    std::vector<float> dx2 = dx, dg2 = dg, db2 = db;
    batchNormBackwardInference(rows, c, x.data(), g, mm.data(), mv.data(), eps, dy.data(), dx2.data(),
                               dg2.data(), db2.data(), pool);
    for (size_t i = 0; i < dx.size(); ++i)
        QVERIFY(std::abs(dx2[i] - 2 * dx[i]) <= 1e-6f * (1 + std::abs(dx[i])));
    for (int64_t i = 0; i < c; ++i) QVERIFY(std::abs(dg2[i] - 2 * dg[i]) <= 1e-6f * (1 + std::abs(dg[i])));
}

void TestNormalization::layerNorm_data() {
    addCaseRows();
}

void TestNormalization::layerNorm() {
    QFETCH(int, index);
    const Case cs = kCases[index];
    const int64_t rows = cs.rows, c = cs.c;
    if (c < 2) QSKIP("layer normalisation over one channel is constant");
    ThreadPool pool(2);
    auto x = randomVector(size_t(rows * c), 31 + index, -3.0f, 4.0f);
    auto gamma = randomVector(size_t(c), 32 + index, 0.5f, 1.5f);
    auto beta = randomVector(size_t(c), 33 + index);
    auto dy = randomVector(size_t(rows * c), 34 + index);
    const float* g = cs.affine ? gamma.data() : nullptr;
    const float* bt = cs.affine ? beta.data() : nullptr;
    const float eps = 1e-3f;
    std::vector<float> y(x.size()), mean(rows), rstd(rows);
    layerNormForward(rows, c, x.data(), g, bt, eps, y.data(), mean.data(), rstd.data(), pool);

    std::vector<double> ry(x.size()), rdx(x.size()), rdg(c, 0.0), rdb(c, 0.0), rm(rows), rr(rows);
    for (int64_t r = 0; r < rows; ++r) {
        double m = 0.0, v = 0.0;
        for (int64_t ci = 0; ci < c; ++ci) m += x[r * c + ci];
        m /= c;
        for (int64_t ci = 0; ci < c; ++ci) v += std::pow(x[r * c + ci] - m, 2);
        v /= c;
        const double rs = 1.0 / std::sqrt(v + eps);
        rm[r] = m;
        rr[r] = rs;
        double sg = 0.0, sgx = 0.0;
        for (int64_t ci = 0; ci < c; ++ci) {
            const double xhat = (x[r * c + ci] - m) * rs;
            const double gg = dy[r * c + ci] * (g ? g[ci] : 1.0);
            ry[r * c + ci] = xhat * (g ? g[ci] : 1.0) + (bt ? bt[ci] : 0.0);
            sg += gg;
            sgx += gg * xhat;
            rdg[ci] += dy[r * c + ci] * xhat;
            rdb[ci] += dy[r * c + ci];
        }
        for (int64_t ci = 0; ci < c; ++ci) {
            const double xhat = (x[r * c + ci] - m) * rs;
            const double gg = dy[r * c + ci] * (g ? g[ci] : 1.0);
            rdx[r * c + ci] = rs * (gg - sg / c - xhat * sgx / c);
        }
    }
    QVERIFY(relErr(mean, rm) <= 1e-6);
    QVERIFY(relErr(rstd, rr) <= 1e-5);
    QVERIFY(relErr(y, ry) <= 1e-5);

    std::vector<float> dx(x.size(), 0.0f), dg(c, 0.0f), db(c, 0.0f);
    layerNormBackward(rows, c, x.data(), g, mean.data(), rstd.data(), dy.data(), dx.data(), dg.data(),
                      db.data(), pool);
    QVERIFY(relErr(dx, rdx) <= 1e-4);
    QVERIFY(relErr(dg, rdg) <= 1e-4);
    QVERIFY(relErr(db, rdb) <= 1e-4);

    auto loss = [&]() {
        std::vector<float> yy(x.size()), m(rows), rs(rows);
        layerNormForward(rows, c, x.data(), cs.affine ? gamma.data() : nullptr,
                         cs.affine ? beta.data() : nullptr, eps, yy.data(), m.data(), rs.data(), pool);
        return dotLoss(dy, yy);
    };
    double e = finiteDiffErr(x, dx, loss, 35);
    if (e > 1e-2) qWarning("dx fd err %g", e);
    QVERIFY(e <= 1e-2);
    if (cs.affine) {
        QVERIFY(finiteDiffErr(gamma, dg, loss, 36) <= 1e-2);
        QVERIFY(finiteDiffErr(beta, db, loss, 37) <= 1e-2);
    }

    std::vector<float> dx2 = dx, dg2 = dg, db2 = db;
    layerNormBackward(rows, c, x.data(), g, mean.data(), rstd.data(), dy.data(), dx2.data(), dg2.data(),
                      db2.data(), pool);
    auto doubled = [](std::vector<float> v) {
        for (auto& e2 : v) e2 *= 2;
        return v;
    };
    QVERIFY(relErr(dx2, doubled(dx)) <= 1e-6);
    QVERIFY(relErr(dg2, doubled(dg)) <= 1e-6);
    QVERIFY(relErr(db2, doubled(db)) <= 1e-6);
    ThreadPool pool3(3);
    std::vector<float> y3(x.size()), m3(rows), r3(rows), dx3(x.size(), 0.0f), dg3(c, 0.0f), db3(c, 0.0f);
    layerNormForward(rows, c, x.data(), g, bt, eps, y3.data(), m3.data(), r3.data(), pool3);
    layerNormBackward(rows, c, x.data(), g, m3.data(), r3.data(), dy.data(), dx3.data(), dg3.data(),
                      db3.data(), pool3);
    QVERIFY(bitEqual(y3, y));
    QVERIFY(bitEqual(dx3, dx));
    QVERIFY(bitEqual(dg3, dg));
    QVERIFY(bitEqual(db3, db));
}

// Channels that are constant (exactly representable sums and not), and channels with one far
// outlier in the first row or a large offset: finite statistics, no NaN anywhere, and the
// moments as accurate as a double-precision reference allows.
void TestNormalization::batchNormConstantChannels_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("c");
    QTest::newRow("chunked rows, 21 channels") << 4096 << 21;
    QTest::newRow("chunked rows, 64 channels") << 1000 << 64;
    QTest::newRow("few rows, 21 channels") << 300 << 21;
    QTest::newRow("wide, 300 channels") << 600 << 300;
}

void TestNormalization::batchNormConstantChannels() {
    QFETCH(int, rows);
    QFETCH(int, c);
    const size_t n = size_t(rows) * size_t(c);
    std::vector<float> x = randomVector(n, 31, -1.0f, 1.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < c; ++j) {
            float& v = x[size_t(r * c + j)];
            switch (j % 4) {
            case 0: v = 0.1f; break;                  // constant, its sums round
            case 1: v = 1000.25f; break;              // constant, exact sums
            case 2: v = r == 0 ? 1000.0f : v; break;  // one outlier, in the first row
            default: v = 3000.0f + v; break;          // large offset
            }
        }
    const auto gamma = randomVector(size_t(c), 32, 0.5f, 1.5f), beta = randomVector(size_t(c), 33);
    const auto dy = randomVector(n, 34);
    BatchNormParams params;
    ThreadPool pool(2);
    std::vector<float> y(n), mean(static_cast<size_t>(c)), inv(static_cast<size_t>(c));
    batchNormForwardTraining(rows, c, x.data(), gamma.data(), beta.data(), params, y.data(), mean.data(), inv.data(),
                             nullptr, nullptr, pool);
    for (int64_t j = 0; j < c; ++j) {
        double m = 0.0, v = 0.0;
        for (int64_t r = 0; r < rows; ++r) m += x[size_t(r * c + j)];
        m /= rows;
        for (int64_t r = 0; r < rows; ++r) v += std::pow(x[size_t(r * c + j)] - m, 2);
        v /= rows;
        const double rinv = 1.0 / std::sqrt(v + params.epsilon);
        QVERIFY2(std::abs(mean[size_t(j)] - m) <= 1e-6 * std::max(1.0, std::abs(m)),
                 qPrintable(QString("channel %1: mean %2, reference %3").arg(j).arg(mean[size_t(j)]).arg(m)));
        QVERIFY2(std::abs(inv[size_t(j)] - rinv) <= 1e-5 * rinv,
                 qPrintable(QString("channel %1: 1/std %2, reference %3").arg(j).arg(inv[size_t(j)]).arg(rinv)));
    }
    for (size_t i = 0; i < n; ++i) QVERIFY(std::isfinite(y[i]));
    for (int64_t r = 0; r < rows; ++r)  // a constant channel normalises to beta
        QVERIFY(std::abs(y[size_t(r * c + 1)] - beta[1]) <= 1e-5f && std::abs(y[size_t(r * c)] - beta[0]) <= 1e-4f);
    for (const bool relu : {false, true}) {
        BatchNormFusion f;
        f.relu = relu;
        f.maskFromInput = relu;
        f.beta = beta.data();
        f.overwriteDx = true;
        std::vector<float> dx(n, std::numeric_limits<float>::quiet_NaN()), dg(size_t(c), 0.0f), db(size_t(c), 0.0f);
        batchNormBackwardTraining(rows, c, x.data(), gamma.data(), mean.data(), inv.data(), dy.data(), dx.data(),
                                  dg.data(), db.data(), pool, f);
        for (size_t i = 0; i < n; ++i) QVERIFY(std::isfinite(dx[i]));
        for (int64_t j = 0; j < c; ++j) QVERIFY(std::isfinite(dg[size_t(j)]) && std::isfinite(db[size_t(j)]));
    }
}

QTEST_APPLESS_MAIN(TestNormalization)
// A ReLU folded into batch normalisation (BatchNormFusion) gives exactly the separate ReLU's
// values and gradients, and overwriting dx equals accumulating into zeros: training, inference
// (frozen) and synchronised forms. The same with a residual Add taken in before the ReLU.
void TestNormalization::batchNormFusedRelu_data() {
    addCaseRows();
}

namespace {
// One replica: the sums are already the global sums.
class SingleReplica final : public BatchNormSync {
public:
    bool allReduceSum(double*, int64_t) override { return true; }
};
}  // namespace

void TestNormalization::batchNormFusedRelu() {
    QFETCH(int, index);
    const Case cs = kCases[index];
    const int64_t rows = cs.rows, c = cs.c;
    const size_t n = size_t(rows * c);
    ThreadPool pool(2);
    const auto x = randomVector(n, 11 + index, -1.0f, 2.0f);
    const auto gamma = randomVector(size_t(c), 12 + index, 0.5f, 1.5f);
    const auto beta = randomVector(size_t(c), 13 + index, -0.5f, 0.5f);
    const auto dy = randomVector(n, 14 + index);
    const auto mm = randomVector(size_t(c), 15 + index, -0.5f, 0.5f), mv = randomVector(size_t(c), 16 + index, 0.5f, 2.0f);
    const float* g = cs.affine ? gamma.data() : nullptr;
    const float* bt = cs.affine ? beta.data() : nullptr;
    BatchNormParams params;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    SingleReplica sync;
    for (int form = 0; form < 3; ++form) {  // 0 training, 1 inference, 2 synchronised training
        // Reference: the layer, then a separate ReLU and its gradient (dy where the output > 0).
        std::vector<float> y(n), mean(static_cast<size_t>(c)), inv(static_cast<size_t>(c)), m1 = mm, v1 = mv;
        auto forward = [&](std::vector<float>& out, std::vector<float>& mo, std::vector<float>& vo,
                           const BatchNormFusion& f) {
            if (form == 0)
                batchNormForwardTraining(rows, c, x.data(), g, bt, params, out.data(), mean.data(), inv.data(),
                                         mo.data(), vo.data(), pool, f);
            else if (form == 1)
                batchNormForwardInference(rows, c, x.data(), g, bt, mm.data(), mv.data(), params.epsilon, out.data(),
                                          pool, f);
            else
                QVERIFY(batchNormForwardTrainingSync(rows, c, x.data(), g, bt, params, out.data(), mean.data(),
                                                     inv.data(), mo.data(), vo.data(), sync, pool, f));
        };
        auto backward = [&](const std::vector<float>& d, std::vector<float>& dx, std::vector<float>& dg,
                            std::vector<float>& db, const BatchNormFusion& f) {
            if (form == 0)
                batchNormBackwardTraining(rows, c, x.data(), g, mean.data(), inv.data(), d.data(), dx.data(),
                                          dg.data(), db.data(), pool, f);
            else if (form == 1)
                batchNormBackwardInference(rows, c, x.data(), g, mm.data(), mv.data(), params.epsilon, d.data(),
                                           dx.data(), dg.data(), db.data(), pool, f);
            else
                QVERIFY(batchNormBackwardTrainingSync(rows, c, x.data(), g, mean.data(), inv.data(), d.data(),
                                                      dx.data(), dg.data(), db.data(), sync, pool, f));
        };
        forward(y, m1, v1, {});
        std::vector<float> yRelu = y, dMasked(n);
        for (size_t i = 0; i < n; ++i) {
            yRelu[i] = y[i] < 0.0f ? 0.0f : y[i];  // the ReLU kernel's form
            dMasked[i] = yRelu[i] > 0.0f ? dy[i] : 0.0f;
        }
        std::vector<float> dxRef(n, 0.0f), dgRef(size_t(c), 0.0f), dbRef(size_t(c), 0.0f);
        backward(dMasked, dxRef, dgRef, dbRef, {});

        std::vector<float> yF(n), m2 = mm, v2 = mv;
        BatchNormFusion f;
        f.relu = true;
        forward(yF, m2, v2, f);
        QVERIFY2(bitEqual(yF, yRelu), qPrintable(QString("form %1: forward").arg(form)));
        QVERIFY(bitEqual(m1, m2) && bitEqual(v1, v2));
        f.out = yF.data();
        f.overwriteDx = true;
        std::vector<float> dx(n, nan), dg(size_t(c), 0.0f), db(size_t(c), 0.0f);
        backward(dy, dx, dg, db, f);
        QVERIFY2(bitEqual(dx, dxRef), qPrintable(QString("form %1: dx").arg(form)));
        QVERIFY2(bitEqual(dg, dgRef) && bitEqual(db, dbRef), qPrintable(QString("form %1: dgamma/dbeta").arg(form)));
        if (form == 0) {
            // The mask recomputed from x instead of read from the output: the same bits, and the
            // output is not read (it is not even given).
            BatchNormFusion fx = f;
            fx.out = nullptr;
            fx.maskFromInput = true;
            fx.beta = bt;
            std::vector<float> dxX(n, nan), dgX(size_t(c), 0.0f), dbX(size_t(c), 0.0f);
            backward(dy, dxX, dgX, dbX, fx);
            QVERIFY2(bitEqual(dxX, dxRef), "dx, mask from x");
            QVERIFY2(bitEqual(dgX, dgRef) && bitEqual(dbX, dbRef), "dgamma/dbeta, mask from x");
            // The same with 1 and 3 threads.
            for (const int threads : {1, 3}) {
                ThreadPool other(threads);
                std::vector<float> dxT(n, nan), dgT(size_t(c), 0.0f), dbT(size_t(c), 0.0f);
                batchNormBackwardTraining(rows, c, x.data(), g, mean.data(), inv.data(), dy.data(), dxT.data(),
                                          dgT.data(), dbT.data(), other, fx);
                QVERIFY2(bitEqual(dxT, dxRef) && bitEqual(dgT, dgRef) && bitEqual(dbT, dbRef),
                         qPrintable(QString("mask from x, %1 threads").arg(threads)));
            }
        }

        // A residual taken in as well (Add(BatchNorm(x), r), then the ReLU): the forward adds r
        // before the ReLU; backward passes the masked gradient to dr, overwriting or adding.
        const auto res = randomVector(n, 17 + index, -1.0f, 1.0f);
        std::vector<float> yAdd(n), dAdd(n);
        for (size_t i = 0; i < n; ++i) {
            const float v = y[i] + res[i];
            yAdd[i] = v < 0.0f ? 0.0f : v;
            dAdd[i] = yAdd[i] > 0.0f ? dy[i] : 0.0f;
        }
        std::vector<float> dxAddRef(n, 0.0f), dgAddRef(size_t(c), 0.0f), dbAddRef(size_t(c), 0.0f);
        backward(dAdd, dxAddRef, dgAddRef, dbAddRef, {});
        std::vector<float> yR(n), m3 = mm, v3 = mv;
        BatchNormFusion fr;
        fr.relu = true;
        fr.residual = res.data();
        forward(yR, m3, v3, fr);
        QVERIFY2(bitEqual(yR, yAdd), qPrintable(QString("form %1: forward with residual").arg(form)));
        fr.out = yR.data();
        fr.overwriteDx = true;
        // With a residual the mask cannot come from x; maskFromInput is ignored and `out` is read.
        fr.maskFromInput = true;
        fr.beta = bt;
        for (const bool overwrite : {true, false}) {
            const auto dres0 = randomVector(n, 18 + index);
            std::vector<float> dxR(n, nan), dgR(size_t(c), 0.0f), dbR(size_t(c), 0.0f);
            std::vector<float> dres = overwrite ? std::vector<float>(n, nan) : dres0;
            fr.dResidual = dres.data();
            fr.overwriteResidual = overwrite;
            backward(dy, dxR, dgR, dbR, fr);
            std::vector<float> dresRef(n);
            for (size_t i = 0; i < n; ++i) dresRef[i] = overwrite ? dAdd[i] : dres0[i] + dAdd[i];
            QVERIFY2(bitEqual(dxR, dxAddRef), qPrintable(QString("form %1: dx with residual").arg(form)));
            QVERIFY2(bitEqual(dres, dresRef), qPrintable(QString("form %1: residual gradient").arg(form)));
            QVERIFY(bitEqual(dgR, dgAddRef) && bitEqual(dbR, dbAddRef));
        }
    }
}

#include "tst_normalization.moc"
