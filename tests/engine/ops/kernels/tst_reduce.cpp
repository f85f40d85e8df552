// SPDX-License-Identifier: Apache-2.0
// kiln-test-libs: kiln_kernels
// Tests of the deterministic reductions and index validation in engine/ops/kernels/reduce.h.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/ops/kernels/reduce.h"

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

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

class TestReduce : public QObject {
    Q_OBJECT

private slots:
    void sumMatchesReference_data();
    void sumMatchesReference();
    void emptyInputs();
    void maxAbsPropagatesNan();
    void deterministicAcrossRunsAndPoolSizes();
    void blockedSumCoversEachItemOnce();
    void findInvalidIndexReportsFirstBad();
    void findInvalidIndexRejectsNonIntegers();
    void findInvalidIndexPoolIndependent();
};

void TestReduce::sumMatchesReference_data() {
    QTest::addColumn<qint64>("n");
    QTest::newRow("1") << qint64(1);
    QTest::newRow("7") << qint64(7);
    QTest::newRow("1000") << qint64(1000);
    QTest::newRow("100003") << qint64(100003);
    QTest::newRow("1000003") << qint64(1000003);
}

void TestReduce::sumMatchesReference() {
    QFETCH(qint64, n);
    ThreadPool pool(2);
    auto x = randomVector(n, -3.0f, 2.0f, 11);
    x[static_cast<size_t>(n / 2)] = -7.5f;  // the max-abs element
    double sum = 0.0, sq = 0.0;
    for (float v : x) {
        sum += v;
        sq += static_cast<double>(v) * v;
    }
    QVERIFY(std::fabs(reduceSum(x.data(), n, pool) - sum) <= 1e-9 * std::max(1.0, std::fabs(sum)) + 1e-9 * n);
    QVERIFY(std::fabs(reduceSumSquares(x.data(), n, pool) - sq) <= 1e-12 * sq + 1e-12);
    QCOMPARE(reduceMaxAbs(x.data(), n, pool), 7.5f);
}

void TestReduce::emptyInputs() {
    ThreadPool pool(2);
    QCOMPARE(reduceSum(nullptr, 0, pool), 0.0);
    QCOMPARE(reduceSumSquares(nullptr, 0, pool), 0.0);
    QCOMPARE(reduceMaxAbs(nullptr, 0, pool), 0.0f);
    QVERIFY(findInvalidIndex(nullptr, 0, 10, pool).ok());
}

void TestReduce::maxAbsPropagatesNan() {
    ThreadPool pool(2);
    auto x = randomVector(200000, -1.0f, 1.0f, 3);
    x[150000] = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(std::isnan(reduceMaxAbs(x.data(), static_cast<int64_t>(x.size()), pool)));
    x[150000] = -std::numeric_limits<float>::infinity();
    QVERIFY(std::isinf(reduceMaxAbs(x.data(), static_cast<int64_t>(x.size()), pool)));
}

void TestReduce::deterministicAcrossRunsAndPoolSizes() {
    const int64_t n = 1000003;
    // Values of very different magnitude make float association order visible.
    auto x = randomVector(n, -1.0f, 1.0f, 5);
    for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= 1e6f;
    ThreadPool p1(1), p2(2), p3(3);
    const double s1 = reduceSum(x.data(), n, p1);
    const double q1 = reduceSumSquares(x.data(), n, p1);
    const float m1 = reduceMaxAbs(x.data(), n, p1);
    for (ThreadPool* p : {&p1, &p2, &p3}) {
        for (int run = 0; run < 2; ++run) {
            QVERIFY(sameBits(reduceSum(x.data(), n, *p), s1));
            QVERIFY(sameBits(reduceSumSquares(x.data(), n, *p), q1));
            QVERIFY(sameBits(reduceMaxAbs(x.data(), n, *p), m1));
        }
    }
}

void TestReduce::blockedSumCoversEachItemOnce() {
    ThreadPool pool(2);
    for (int64_t n : {int64_t(1), int64_t(5), int64_t(1000), int64_t(12345678)}) {
        for (int64_t minBlock : {int64_t(1), int64_t(3), int64_t(16384)}) {
            // Σ over items of (i + 1), computed per block in closed form: equals n(n+1)/2 only when
            // the blocks tile [0, n) exactly.
            const double got = blockedSum(n, minBlock, [](int64_t b, int64_t e) {
                return (static_cast<double>(e) * (e + 1) - static_cast<double>(b) * (b + 1)) / 2.0;
            }, pool);
            QCOMPARE(got, static_cast<double>(n) * (n + 1) / 2.0);
        }
    }
    QCOMPARE(blockedSum(0, 1, [](int64_t, int64_t) { return 1.0; }, pool), 0.0);
}

void TestReduce::findInvalidIndexReportsFirstBad() {
    ThreadPool pool(2);
    const int64_t n = 100000;
    std::vector<float> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = static_cast<float>(i % 10);
    IndexError ok = findInvalidIndex(ids.data(), n, 10, pool);
    QVERIFY(ok.ok());
    QCOMPARE(ok.limit, int64_t(10));

    ids[90000] = -1.0f;
    ids[70000] = 12.0f;  // the first bad one, in a later block than position 0
    IndexError bad = findInvalidIndex(ids.data(), n, 10, pool);
    QVERIFY(!bad.ok());
    QCOMPARE(bad.position, int64_t(70000));
    QCOMPARE(bad.value, 12.0f);
    QCOMPARE(bad.limit, int64_t(10));

    ids[3] = 10.0f;  // exactly the limit is out of range
    bad = findInvalidIndex(ids.data(), n, 10, pool);
    QCOMPARE(bad.position, int64_t(3));
    QCOMPARE(bad.value, 10.0f);
}

void TestReduce::findInvalidIndexRejectsNonIntegers() {
    ThreadPool pool(1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    for (float badValue : {2.5f, -0.5f, nan, inf, -inf, 1e30f}) {
        std::vector<float> ids = {0.0f, 1.0f, 2.0f, badValue, 3.0f};
        IndexError e = findInvalidIndex(ids.data(), 5, 4, pool);
        QVERIFY(!e.ok());
        QCOMPARE(e.position, int64_t(3));
    }
    std::vector<float> ids = {0.0f, -0.0f, 3.0f};
    QVERIFY(findInvalidIndex(ids.data(), 3, 4, pool).ok());
    QVERIFY(!findInvalidIndex(ids.data(), 3, 0, pool).ok());  // no valid class at all
}

void TestReduce::findInvalidIndexPoolIndependent() {
    const int64_t n = 300000;
    std::vector<float> ids(static_cast<size_t>(n), 1.0f);
    ids[250001] = 7.0f;
    ids[120000] = 9.0f;
    ThreadPool p1(1), p2(2), p3(3);
    for (ThreadPool* p : {&p1, &p2, &p3}) {
        IndexError e = findInvalidIndex(ids.data(), n, 5, *p);
        QCOMPARE(e.position, int64_t(120000));
        QCOMPARE(e.value, 9.0f);
    }
}

QTEST_APPLESS_MAIN(TestReduce)
#include "tst_reduce.moc"
