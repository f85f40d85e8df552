// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of engine/ops/kernels/embedding.h: gather, id validation, scatter-add against a naive
// reference and finite differences, accumulation, determinism for any pool size.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/ops/kernels/embedding.h"

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

// Ids skewed towards small values, so rows repeat many times (the scatter-add's hard case).
std::vector<float> randomIds(int64_t n, int64_t vocab, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int64_t> dist(0, vocab - 1);
    std::vector<float> v(idx(n));
    for (auto& x : v) x = static_cast<float>(std::min(dist(gen), dist(gen)));
    return v;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool close(double got, double want, double rtol, double atol) {
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

}  // namespace

class TestEmbedding : public QObject {
    Q_OBJECT

private slots:
    void forwardGathers();
    void forwardReportsBadIds();
    void backwardMatchesReferenceAndAccumulates();
    void backwardMatchesFiniteDifferences();
    void backwardSkipsInvalidIds();
    void poolSizeIndependence();
};

void TestEmbedding::forwardGathers() {
    ThreadPool pool(2);
    const int64_t vocab = 50, dim = 33, n = 5000;
    const auto table = randomVector(vocab * dim, -1, 1, 1);
    const auto ids = randomIds(n, vocab, 2);
    std::vector<float> y(idx(n * dim), NAN);
    const IndexError e = embeddingForward(ids.data(), n, table.data(), vocab, dim, y.data(), pool);
    QVERIFY(e.ok());
    for (int64_t i = 0; i < n; ++i)
        QVERIFY(std::memcmp(y.data() + i * dim, table.data() + int64_t(ids[idx(i)]) * dim, idx(dim) * sizeof(float)) == 0);
}

void TestEmbedding::forwardReportsBadIds() {
    ThreadPool pool(2);
    const int64_t vocab = 10, dim = 4;
    const auto table = randomVector(vocab * dim, -1, 1, 3);
    for (float bad : {10.0f, -1.0f, 3.5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        const std::vector<float> ids = {0.0f, 9.0f, 2.0f, bad, 1.0f, 11.0f};
        std::vector<float> y(ids.size() * idx(dim), 5.0f);
        const IndexError e = embeddingForward(ids.data(), int64_t(ids.size()), table.data(), vocab, dim, y.data(), pool);
        QVERIFY(!e.ok());
        QCOMPARE(e.position, int64_t(3));  // the first bad one, not the later 11
        QVERIFY(e.value == bad || (std::isnan(e.value) && std::isnan(bad)));
        QCOMPARE(e.limit, vocab);
        for (float v : y) QCOMPARE(v, 5.0f);  // nothing written
    }
}

void TestEmbedding::backwardMatchesReferenceAndAccumulates() {
    ThreadPool pool(2);
    const int64_t vocab = 40, dim = 9, n = 3000;
    const auto ids = randomIds(n, vocab, 4);
    const auto dy = randomVector(n * dim, -1, 1, 5);
    std::vector<float> dtable(idx(vocab * dim), 0.5f);
    embeddingBackward(ids.data(), n, dy.data(), vocab, dim, dtable.data(), pool);
    std::vector<double> want(dtable.size(), 0.5);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < dim; ++j) want[idx(int64_t(ids[idx(i)]) * dim + j)] += dy[idx(i * dim + j)];
    for (size_t k = 0; k < want.size(); ++k) QVERIFY(close(dtable[k], want[k], 1e-5, 1e-4));

    // Exactly in order of position: row r gets ((prior + dy_a) + dy_b) + ... in float.
    std::vector<float> ordered(idx(vocab * dim), 0.5f);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < dim; ++j) ordered[idx(int64_t(ids[idx(i)]) * dim + j)] += dy[idx(i * dim + j)];
    QVERIFY(sameBits(dtable, ordered));
}

void TestEmbedding::backwardMatchesFiniteDifferences() {
    // L = Σ w ⊙ gather(table, ids) in double; dL/dtable by central differences.
    ThreadPool pool(1);
    const int64_t vocab = 6, dim = 3;
    const std::vector<float> ids = {1, 4, 1, 0, 5, 1};
    const int64_t n = int64_t(ids.size());
    const auto table = randomVector(vocab * dim, -1, 1, 6);
    const auto w = randomVector(n * dim, -1, 1, 7);
    std::vector<float> dtable(table.size(), 0.0f);
    embeddingBackward(ids.data(), n, w.data(), vocab, dim, dtable.data(), pool);
    std::vector<double> td(table.begin(), table.end());
    auto loss = [&] {
        double s = 0;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < dim; ++j) s += w[idx(i * dim + j)] * td[idx(int64_t(ids[idx(i)]) * dim + j)];
        return s;
    };
    const double eps = 1e-3;
    for (size_t k = 0; k < td.size(); ++k) {
        const double saved = td[k];
        td[k] = saved + eps;
        const double up = loss();
        td[k] = saved - eps;
        const double down = loss();
        td[k] = saved;
        QVERIFY(close(dtable[k], (up - down) / (2 * eps), 1e-2, 1e-5));
    }
    // Row 2 and 3 are never used: zero gradient.
    for (int64_t j = 0; j < dim; ++j) {
        QCOMPARE(dtable[idx(2 * dim + j)], 0.0f);
        QCOMPARE(dtable[idx(3 * dim + j)], 0.0f);
    }
}

void TestEmbedding::backwardSkipsInvalidIds() {
    ThreadPool pool(2);
    const int64_t vocab = 3, dim = 2;
    const std::vector<float> ids = {0.0f, 7.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
    const std::vector<float> dy = {1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
    std::vector<float> dtable(6, 0.0f);
    embeddingBackward(ids.data(), 5, dy.data(), vocab, dim, dtable.data(), pool);
    QCOMPARE(dtable, (std::vector<float>{1, 1, 0, 0, 5, 5}));
}

void TestEmbedding::poolSizeIndependence() {
    const int64_t vocab = 1000, dim = 16, n = 40000;
    const auto table = randomVector(vocab * dim, -1, 1, 8);
    const auto ids = randomIds(n, vocab, 9);
    const auto dy = randomVector(n * dim, -1, 1, 10);
    auto run = [&](ThreadPool& pool) {
        std::vector<float> y(idx(n * dim)), dtable(idx(vocab * dim), 0.0f);
        (void)embeddingForward(ids.data(), n, table.data(), vocab, dim, y.data(), pool);
        embeddingBackward(ids.data(), n, dy.data(), vocab, dim, dtable.data(), pool);
        y.insert(y.end(), dtable.begin(), dtable.end());
        return y;
    };
    ThreadPool p1(1), p2(2), p3(3);
    const auto r = run(p1);
    QVERIFY(sameBits(r, run(p1)));
    QVERIFY(sameBits(r, run(p2)));
    QVERIFY(sameBits(r, run(p3)));
}

QTEST_APPLESS_MAIN(TestEmbedding)
#include "tst_embedding.moc"
