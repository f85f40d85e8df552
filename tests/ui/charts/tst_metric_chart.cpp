// SPDX-License-Identifier: Apache-2.0
// MetricChart and ChartsPanel: coalesced redraws, decimation bound, hover text, axis modes, export,
// stage markers.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_charts
#include <QtTest>

#include <qcustomplot.h>

#include "ui/charts/charts_panel.h"
#include "ui/charts/metric_chart.h"

using namespace kiln::ui::charts;

class TestMetricChart : public QObject {
    Q_OBJECT
private slots:
    void appendsCoalesceIntoOneRedraw();
    void drawsAtMostTwoPointsPerPixel();
    void followsDataUntilUserNavigates();
    void hoverNamesRunSplitAndValue();
    void logAxisAndHiddenRuns();
    void exportCsvWritesEveryPoint();
    void panelCreatesChartsPerMetricLossFirst();
    void panelControlsReachCharts();
    void stageMarkersFollowTheAxisAndTheRun();
};

void TestMetricChart::stageMarkersFollowTheAxisAndTheRun()
{
    ChartsPanel panel;
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setRun(QStringLiteral("r1"), QStringLiteral("run 1"), runColour(0));
    for (int i = 0; i < 40; ++i) {
        panel.append(QStringLiteral("loss"), QStringLiteral("r1"), Split::Train, i + 1, (i + 1) / 10.0, 500 + i, 1.0 / (1 + i));
    }
    panel.addMarker(QStringLiteral("r1"), 20, 2.0, 519.5, QStringLiteral("Stage 2: body"));
    // A chart made after the marker gets it too.
    panel.append(QStringLiteral("accuracy"), QStringLiteral("r1"), Split::Train, 1, 0.1, 500, 0.5);
    for (const char* metric : {"loss", "accuracy"}) {
        MetricChart* chart = panel.chart(QLatin1String(metric));
        QVERIFY(chart);
        QCOMPARE(chart->markerCount(), 1);
        QCOMPARE(chart->markerLabel(0), QStringLiteral("Stage 2: body"));
    }
    MetricChart* loss = panel.chart(QStringLiteral("loss"));
    QCOMPARE(loss->markerX(0), 20.0);
    panel.setXAxisMode(XAxisMode::Epoch);
    QCOMPARE(loss->markerX(0), 2.0);
    panel.setXAxisMode(XAxisMode::Relative);
    QCOMPARE(loss->markerX(0), 19.5);  // from the run's first point at wall time 500
    panel.setXAxisMode(XAxisMode::WallTime);
    QCOMPARE(loss->markerX(0), 519.5);
    panel.setXAxisMode(XAxisMode::Step);
    loss->rebuildNow();
    // The line and its label are items of the plot at the marker's x.
    int lines = 0;
    for (int i = 0; i < loss->plot()->itemCount(); ++i) {
        if (auto* line = qobject_cast<QCPItemStraightLine*>(loss->plot()->item(i)); line && line->visible()) {
            lines += line->point1->coords().x() == 20.0 ? 1 : 0;
        }
    }
    QCOMPARE(lines, 1);
    // Removing the run removes its markers.
    panel.removeRun(QStringLiteral("r1"));
    QCOMPARE(loss->markerCount(), 0);
}

void TestMetricChart::appendsCoalesceIntoOneRedraw()
{
    MetricChart chart(QStringLiteral("loss"));
    chart.resize(600, 300);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    int replots = 0;
    connect(chart.plot(), &QCustomPlot::afterReplot, this, [&] { ++replots; });
    for (int i = 0; i < 5000; ++i) {
        chart.append(QStringLiteral("r1"), Split::Train, i, i / 1000.0, 1000 + i * 0.01, 1.0 / (1 + i));
    }
    QCOMPARE(replots, 0);  // nothing drawn synchronously while appending
    QTRY_VERIFY(replots >= 1);
    QTest::qWait(MetricChart::replotInterval() * 3);
    QVERIFY2(replots <= 2, qPrintable(QString::number(replots)));
    QCOMPARE(chart.series(QStringLiteral("r1"), Split::Train)->size(), size_t(5000));
}

void TestMetricChart::drawsAtMostTwoPointsPerPixel()
{
    MetricChart chart(QStringLiteral("loss"));
    chart.resize(800, 300);
    chart.setSmoothing(0);
    for (int i = 0; i < 300000; ++i) {
        chart.append(QStringLiteral("r1"), Split::Train, i, i / 1000.0, i * 0.01, std::sin(i * 0.001));
    }
    chart.rebuildNow();
    const int width = chart.plot()->axisRect()->width();
    QVERIFY(chart.lastDrawnPoints() > 100);
    QVERIFY2(chart.lastDrawnPoints() <= 2 * std::max(50, width) + 2, qPrintable(QString::number(chart.lastDrawnPoints())));
    QCPGraph* graph = chart.plot()->graph(0);
    QCOMPARE(graph->dataCount(), chart.lastDrawnPoints());
    // The envelope survives: the drawn range spans [-1, 1].
    bool found;
    const QCPRange range = graph->getValueRange(found);
    QVERIFY(found);
    QVERIFY(range.lower < -0.999 && range.upper > 0.999);
}

void TestMetricChart::followsDataUntilUserNavigates()
{
    MetricChart chart(QStringLiteral("loss"));
    chart.resize(600, 300);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    for (int i = 0; i <= 100; ++i) {
        chart.append(QStringLiteral("r1"), Split::Train, i, 0, i, i);
    }
    chart.rebuildNow();
    QCOMPARE(chart.plot()->xAxis->range().upper, 100.0);
    // A wheel zoom is navigation: the range no longer follows new points.
    QWheelEvent wheel(QPointF(300, 150), chart.plot()->mapToGlobal(QPointF(300, 150)), QPoint(), QPoint(0, 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(chart.plot(), &wheel);
    QVERIFY(!chart.following());
    const QCPRange zoomed = chart.plot()->xAxis->range();
    QVERIFY(zoomed.size() < 100);
    chart.append(QStringLiteral("r1"), Split::Train, 200, 0, 200, 200);
    chart.rebuildNow();
    QCOMPARE(chart.plot()->xAxis->range().upper, zoomed.upper);
    chart.resetView();
    chart.rebuildNow();
    QCOMPARE(chart.plot()->xAxis->range().upper, 200.0);
}

void TestMetricChart::hoverNamesRunSplitAndValue()
{
    MetricChart chart(QStringLiteral("accuracy"));
    chart.resize(600, 300);
    chart.setRun(QStringLiteral("r1"), QStringLiteral("baseline"), runColour(0));
    chart.setSmoothing(0);
    for (int i = 0; i < 10; ++i) {
        chart.append(QStringLiteral("r1"), Split::Validation, i * 100, i, 1700000000 + i, 0.5 + i * 0.01);
    }
    chart.rebuildNow();
    const QString text = chart.describeNearest(300, 0.53);
    QVERIFY2(text.contains(QStringLiteral("baseline")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("step 300")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("0.53")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("validation")), qPrintable(text));
}

void TestMetricChart::logAxisAndHiddenRuns()
{
    MetricChart chart(QStringLiteral("loss"));
    chart.resize(600, 300);
    for (int i = 0; i < 100; ++i) {
        chart.append(QStringLiteral("a"), Split::Train, i, 0, i, std::pow(10.0, -i / 20.0));
        chart.append(QStringLiteral("b"), Split::Train, i, 0, i, 1000.0);
    }
    chart.setLogY(true);
    chart.rebuildNow();
    QCOMPARE(chart.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(chart.plot()->yAxis->range().upper > 1000);
    chart.setRunVisible(QStringLiteral("b"), false);
    chart.rebuildNow();
    QVERIFY(chart.plot()->yAxis->range().upper < 10);  // fitted to the visible run only
    QVERIFY(chart.plot()->yAxis->range().lower > 0);
}

void TestMetricChart::exportCsvWritesEveryPoint()
{
    MetricChart chart(QStringLiteral("loss"));
    chart.setRun(QStringLiteral("r1"), QStringLiteral("run \"one\""), runColour(1));
    for (int i = 0; i < 250; ++i) {
        chart.append(QStringLiteral("r1"), Split::Train, i, i / 100.0, 5000 + i, 2.0 - i * 0.001);
    }
    chart.append(QStringLiteral("r1"), Split::Validation, 249, 2.49, 5300, 1.5);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("loss.csv"));
    QString error;
    QVERIFY2(chart.exportCsv(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 250 + 1);
    QCOMPARE(lines[0], QStringLiteral("run,split,step,epoch,wall_time,value,smoothed"));
    QVERIFY2(lines[1].startsWith(QStringLiteral("\"run \"\"one\"\"\",train,0,0,5000.000,2,")), qPrintable(lines[1]));
    QVERIFY(lines.last().contains(QStringLiteral(",validation,249,")));
    QVERIFY(!chart.exportCsv(dir.filePath(QStringLiteral("missing/dir/x.csv")), &error));
    QVERIFY(error.contains(QStringLiteral("x.csv")));
    const QString png = dir.filePath(QStringLiteral("loss.png"));
    QVERIFY(chart.exportPng(png, 400, 200));
    QImage image(png);
    QCOMPARE(image.size(), QSize(400, 200));
}

void TestMetricChart::panelCreatesChartsPerMetricLossFirst()
{
    ChartsPanel panel;
    panel.append(QStringLiteral("accuracy"), QStringLiteral("r"), Split::Train, 1, 0, 1, 0.5);
    panel.append(QStringLiteral("loss"), QStringLiteral("r"), Split::Train, 1, 0, 1, 2.0);
    panel.append(QStringLiteral("lr"), QStringLiteral("r"), Split::Train, 1, 0, 1, 0.01);
    QCOMPARE(panel.metrics(), (QStringList{QStringLiteral("loss"), QStringLiteral("accuracy"), QStringLiteral("lr")}));
    QVERIFY(panel.chart(QStringLiteral("loss")));
    QVERIFY(!panel.chart(QStringLiteral("missing")));
    QTemporaryDir dir;
    QVERIFY(panel.exportCsv(dir.path()));
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("accuracy.csv"))));
}

void TestMetricChart::panelControlsReachCharts()
{
    ChartsPanel panel;
    panel.append(QStringLiteral("loss"), QStringLiteral("r"), Split::Train, 1, 0, 1, 2.0);
    auto* slider = panel.findChild<QSlider*>(QStringLiteral("smoothingSlider"));
    QVERIFY(slider);
    slider->setValue(90);
    QCOMPARE(panel.chart(QStringLiteral("loss"))->smoothing(), 0.9);
    auto* combo = panel.findChild<QComboBox*>(QStringLiteral("xAxisCombo"));
    combo->setCurrentIndex(3);
    QCOMPARE(panel.chart(QStringLiteral("loss"))->xAxisMode(), XAxisMode::WallTime);
    auto* log = panel.findChild<QCheckBox*>(QStringLiteral("logYCheck"));
    log->setChecked(true);
    QVERIFY(panel.chart(QStringLiteral("loss"))->logY());
    // A chart created later picks up the current settings.
    panel.append(QStringLiteral("accuracy"), QStringLiteral("r"), Split::Train, 1, 0, 1, 0.5);
    QCOMPARE(panel.chart(QStringLiteral("accuracy"))->xAxisMode(), XAxisMode::WallTime);
    QCOMPARE(panel.chart(QStringLiteral("accuracy"))->smoothing(), 0.9);
}

QTEST_MAIN(TestMetricChart)
#include "tst_metric_chart.moc"
