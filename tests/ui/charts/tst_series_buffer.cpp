// SPDX-License-Identifier: Apache-2.0
// SeriesBuffer: TensorBoard's debiased EMA, visible ranges and a decimation that keeps the envelope.
// kiln-test-libs: kiln_ui_charts
#include <QtTest>

#include <cmath>
#include <random>

#include "ui/charts/series_buffer.h"

using namespace kiln::ui::charts;

class TestSeriesBuffer : public QObject {
    Q_OBJECT
private slots:
    void emaMatchesTensorBoardFormula();
    void emaSkipsNonFinite();
    void visibleRangeBinarySearch();
    void decimationKeepsExtremes();
    void decimationOfSmallRangeIsExact();
    void valueRangeMatchesScan();
    void logRangeIgnoresNonPositive();
};

void TestSeriesBuffer::emaMatchesTensorBoardFormula()
{
    // TensorBoard: last = last * w + (1 - w) * v; smoothed = last / (1 - w^n).
    SeriesBuffer b;
    b.setSmoothing(0.6);
    const double values[] = {1.0, 3.0, 2.0, 5.0};
    for (int i = 0; i < 4; ++i) {
        b.append(i, 0, 100 + i, values[i]);
    }
    double last = 0;
    for (int i = 0; i < 4; ++i) {
        last = last * 0.6 + 0.4 * values[i];
        const double expected = last / (1 - std::pow(0.6, i + 1));
        QVERIFY2(std::abs(b.smoothed(size_t(i)) - expected) < 1e-6, qPrintable(QString::number(i)));
    }
    QCOMPARE(b.smoothed(0), 1.0f);  // debiasing makes the first point its own value
    // Changing the weight recomputes everything.
    b.setSmoothing(0);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(b.smoothed(size_t(i)), float(values[i]));
    }
}

void TestSeriesBuffer::emaSkipsNonFinite()
{
    SeriesBuffer b;
    b.setSmoothing(0.5);
    b.append(0, 0, 0, 2.0);
    b.append(1, 0, 1, std::nan(""));
    b.append(2, 0, 2, 4.0);
    QVERIFY(std::isnan(b.smoothed(1)));
    // n counts finite values only: (0.5*1 + 0.5*4 ... ) with last = 0.5*(0.5*2)+0.5*4 = 2.5, n = 2.
    QVERIFY(std::abs(b.smoothed(2) - 2.5 / 0.75) < 1e-6);
}

void TestSeriesBuffer::visibleRangeBinarySearch()
{
    SeriesBuffer b;
    for (int i = 0; i < 1000; ++i) {
        b.append(i * 2, i / 100.0, 1000.0 + i, i);
    }
    auto [first, last] = b.visibleRange(100, 200, XAxisMode::Step);
    QCOMPARE(first, size_t(49));  // x=98 (one before 100)
    QCOMPARE(last, size_t(102));  // up to x=202 (one after 200), exclusive end
    auto [f2, l2] = b.visibleRange(-50, -10, XAxisMode::Step);
    QCOMPARE(f2, size_t(0));
    QVERIFY(l2 <= 1);
    QCOMPARE(b.nearest(101, XAxisMode::Step), size_t(50));
    QCOMPARE(b.x(10, XAxisMode::Relative), 10.0);
    QCOMPARE(b.x(10, XAxisMode::WallTime), 1010.0);
}

void TestSeriesBuffer::decimationKeepsExtremes()
{
    std::mt19937 rng(7);
    std::normal_distribution<float> noise(0, 1);
    SeriesBuffer b;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        b.append(i, 0, i, std::sin(i * 1e-4) + noise(rng));
    }
    std::vector<double> xs, ys;
    const int buckets = 500;
    b.decimate(0, b.size(), buckets, XAxisMode::Step, false, xs, ys);
    QVERIFY(xs.size() <= size_t(buckets) * 2 + 2);
    QVERIFY(xs.size() >= size_t(buckets));
    // x is non-decreasing, and each bucket's true min and max appear in the output.
    for (size_t i = 1; i < xs.size(); ++i) {
        QVERIFY(xs[i] >= xs[i - 1]);
    }
    for (int k = 0; k < buckets; k += 37) {
        const size_t a = size_t(n) * size_t(k) / buckets, e = size_t(n) * size_t(k + 1) / buckets;
        double lo = 1e9, hi = -1e9;
        for (size_t i = a; i < e; ++i) {
            lo = std::min(lo, b.value(i));
            hi = std::max(hi, b.value(i));
        }
        bool foundLo = false, foundHi = false;
        for (size_t i = 0; i < xs.size(); ++i) {
            if (xs[i] >= double(a) && xs[i] < double(e)) {
                foundLo |= ys[i] == lo;
                foundHi |= ys[i] == hi;
            }
        }
        QVERIFY2(foundLo && foundHi, qPrintable(QStringLiteral("bucket %1").arg(k)));
    }
}

void TestSeriesBuffer::decimationOfSmallRangeIsExact()
{
    SeriesBuffer b;
    for (int i = 0; i < 100; ++i) {
        b.append(i, 0, i, i * i);
    }
    std::vector<double> xs, ys;
    b.decimate(10, 30, 500, XAxisMode::Step, false, xs, ys);
    QCOMPARE(xs.size(), size_t(20));
    QCOMPARE(ys.front(), 100.0);
    QCOMPARE(ys.back(), 29.0 * 29.0);
}

void TestSeriesBuffer::valueRangeMatchesScan()
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-5, 5);
    SeriesBuffer b;
    for (int i = 0; i < 50000; ++i) {
        b.append(i, 0, i, u(rng));
    }
    for (auto [a, e] : {std::pair<size_t, size_t>{0, 50000}, {17, 33}, {1000, 40961}, {4095, 4097}}) {
        double lo = 0, hi = 0;
        QVERIFY(b.valueRange(a, e, false, false, lo, hi));
        double slo = 1e9, shi = -1e9;
        for (size_t i = a; i < e; ++i) {
            slo = std::min(slo, b.value(i));
            shi = std::max(shi, b.value(i));
        }
        QCOMPARE(lo, slo);
        QCOMPARE(hi, shi);
    }
}

void TestSeriesBuffer::logRangeIgnoresNonPositive()
{
    SeriesBuffer b;
    b.append(0, 0, 0, -1);
    b.append(1, 0, 1, 0);
    b.append(2, 0, 2, 0.5);
    b.append(3, 0, 3, 8);
    double lo = 0, hi = 0;
    QVERIFY(b.valueRange(0, 4, false, true, lo, hi));
    QCOMPARE(lo, 0.5);
    QCOMPARE(hi, 8.0);
}

QTEST_APPLESS_MAIN(TestSeriesBuffer)
#include "tst_series_buffer.moc"
