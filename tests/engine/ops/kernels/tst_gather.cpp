// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of engine/ops/kernels/gather.h: per-sample and shared indices against a naive reference,
// negative indices, index validation (nothing written on a bad one), the scatter-add gradient
// (accumulating, repeated rows) and its independence of the pool size.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/ops/kernels/gather.h"

using namespace kiln::engine;
using namespace kiln::engine::kernels;

namespace {

inline size_t at(int64_t i) { return static_cast<size_t>(i); }

std::vector<float> randomVector(int64_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(at(n));
    for (auto& x : v) x = dist(gen);
    return v;
}

// Indices in [-axis, axis), skewed so that rows repeat (the scatter-add's hard case).
std::vector<float> randomIndices(int64_t n, int64_t axis, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int64_t> dist(0, axis - 1);
    std::vector<float> v(at(n));
    for (auto& x : v) {
        const int64_t row = std::min(dist(gen), dist(gen));
        x = static_cast<float>(dist(gen) % 2 == 0 ? row : row - axis);
    }
    return v;
}

int64_t rowOf(float v, int64_t axis) { return v < 0 ? int64_t(v) + axis : int64_t(v); }

// The naive forward and backward of the definition.
std::vector<float> referenceForward(const std::vector<float>& x, const std::vector<float>& idx, const GatherDims& d) {
    std::vector<float> y;
    for (int64_t s = 0; s < d.batch * d.outer; ++s)
        for (int64_t j = 0; j < d.count; ++j) {
            const int64_t row = rowOf(idx[at((d.perSample ? (s / d.outer) * d.count : 0) + j)], d.axis);
            for (int64_t q = 0; q < d.inner; ++q) y.push_back(x[at((s * d.axis + row) * d.inner + q)]);
        }
    return y;
}

}  // namespace

class TestGather : public QObject {
    Q_OBJECT

private slots:
    void forwardMatchesReference_data() {
        QTest::addColumn<bool>("perSample");
        QTest::newRow("per sample") << true;
        QTest::newRow("shared") << false;
    }
    void forwardMatchesReference() {
        QFETCH(bool, perSample);
        ThreadPool pool(2);
        GatherDims d{6, 3, 17, 5, 23, perSample};
        const auto x = randomVector(d.batch * d.outer * d.axis * d.inner, 1);
        const auto idx = randomIndices(perSample ? d.batch * d.count : d.count, d.axis, 2);
        std::vector<float> y(at(d.batch * d.outer * d.count * d.inner), NAN);
        QVERIFY(gatherForward(x.data(), idx.data(), d, y.data(), pool).ok());
        const auto want = referenceForward(x, idx, d);
        QVERIFY(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)) == 0);
    }

    void forwardReportsBadIndices() {
        ThreadPool pool(2);
        GatherDims d{2, 1, 4, 3, 3, true};
        const auto x = randomVector(2 * 4 * 3, 3);
        for (float bad : {4.0f, -5.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
            const std::vector<float> idx = {0.0f, 3.0f, -4.0f, 1.0f, bad, 9.0f};
            std::vector<float> y(2 * 3 * 3, 5.0f);
            const IndexError e = gatherForward(x.data(), idx.data(), d, y.data(), pool);
            QVERIFY(!e.ok());
            QCOMPARE(e.position, int64_t(4));
            QCOMPARE(e.limit, int64_t(4));
            for (float v : y) QCOMPARE(v, 5.0f);  // nothing written
        }
    }

    void backwardAccumulatesRepeatedRows() {
        ThreadPool pool(2);
        GatherDims d{2, 2, 3, 2, 4, false};
        const std::vector<float> idx = {2, 0, -1, 2};  // row 2 three times
        const auto dy = randomVector(d.batch * d.outer * d.count * d.inner, 4);
        std::vector<float> dx(at(d.batch * d.outer * d.axis * d.inner), 1.0f);  // accumulates onto 1
        gatherBackward(idx.data(), dy.data(), d, dx.data(), pool);
        for (int64_t s = 0; s < d.batch * d.outer; ++s)
            for (int64_t q = 0; q < d.inner; ++q) {
                auto g = [&](int64_t j) { return double(dy[at((s * d.count + j) * d.inner + q)]); };
                QVERIFY(std::fabs(dx[at((s * d.axis + 0) * d.inner + q)] - (1.0 + g(1))) < 1e-6);
                QCOMPARE(dx[at((s * d.axis + 1) * d.inner + q)], 1.0f);
                QVERIFY(std::fabs(dx[at((s * d.axis + 2) * d.inner + q)] - (1.0 + g(0) + g(2) + g(3))) < 1e-6);
            }
    }

    // The gradient is the same bits whatever the pool size: each task owns whole slices.
    void poolSizeIndependence() {
        GatherDims d{16, 3, 40, 7, 90, true};
        const auto idx = randomIndices(d.batch * d.count, d.axis, 5);
        const auto dy = randomVector(d.batch * d.outer * d.count * d.inner, 6);
        std::vector<std::vector<float>> results;
        for (int threads : {1, 2, 5}) {
            ThreadPool pool(threads);
            std::vector<float> dx(at(d.batch * d.outer * d.axis * d.inner), 0.0f);
            gatherBackward(idx.data(), dy.data(), d, dx.data(), pool);
            results.push_back(std::move(dx));
        }
        QVERIFY(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)) == 0);
        QVERIFY(std::memcmp(results[0].data(), results[2].data(), results[0].size() * sizeof(float)) == 0);
    }
};

QTEST_GUILESS_MAIN(TestGather)
#include "tst_gather.moc"
