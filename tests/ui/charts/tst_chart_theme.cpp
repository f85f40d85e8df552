// SPDX-License-Identifier: Apache-2.0
// The shared chart look: a plot that follows the theme takes the theme's background, axis, tick
// label, grid, legend and title colours, and a live switch recolours and repaints it; a metric
// chart (which uses the same helper) shows the new background on screen.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_charts
#include <QtTest>

#include <qcustomplot.h>

#include "ui/charts/chart_theme.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/theme.h"

using namespace kiln::ui;

namespace {
bool near(const QColor& a, const QColor& b) {
    return std::abs(a.red() - b.red()) <= 2 && std::abs(a.green() - b.green()) <= 2 && std::abs(a.blue() - b.blue()) <= 2;
}
}  // namespace

class TestChartTheme : public QObject {
    Q_OBJECT

private slots:
    void init() { Theme::instance().apply(ThemeChoice::Light); }
    void cleanupTestCase() { Theme::instance().apply(ThemeChoice::Light); }

    void everyPartTakesTheThemeColours() {
        QCustomPlot plot;
        plot.legend->setVisible(true);
        plot.addGraph()->setName(QStringLiteral("loss"));
        plot.plotLayout()->insertRow(0);
        auto* title = new QCPTextElement(&plot, QStringLiteral("Loss"));
        plot.plotLayout()->addElement(0, 0, title);
        charts::followTheme(&plot);
        for (ThemeKind kind : {ThemeKind::Light, ThemeKind::Dark, ThemeKind::Light}) {
            Theme::instance().apply(kind == ThemeKind::Dark ? ThemeChoice::Dark : ThemeChoice::Light);
            const ThemeColors& c = Theme::colors(kind);
            // QCustomPlot keeps its background brush to itself: the rendered corner shows it.
            QVERIFY(near(plot.toPixmap(300, 200).toImage().pixelColor(1, 198), c.chartBackground));
            for (QCPAxis* axis : plot.axisRect()->axes()) {
                QCOMPARE(axis->basePen().color(), c.chartAxis);
                QCOMPARE(axis->tickPen().color(), c.chartAxis);
                QCOMPARE(axis->tickLabelColor(), c.chartText);
                QCOMPARE(axis->labelColor(), c.chartText);
                QCOMPARE(axis->grid()->pen().color(), c.chartGrid);
            }
            QCOMPARE(plot.legend->brush().color(), c.chartLegendBackground);
            QCOMPARE(plot.legend->textColor(), c.chartText);
            QCOMPARE(plot.legend->item(0)->textColor(), c.chartText);  // the entry already listed
            QCOMPARE(title->textColor(), c.chartText);
        }
    }

    void metricChartRepaintsInTheNewTheme() {
        charts::MetricChart chart(QStringLiteral("loss"));
        chart.resize(500, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        auto* plot = chart.findChild<QCustomPlot*>();
        QVERIFY(plot);
        plot->replot();
        auto corner = [&] { return plot->grab().toImage().pixelColor(2, plot->height() - 3); };
        QVERIFY2(near(corner(), Theme::colors(ThemeKind::Light).chartBackground), qPrintable(corner().name()));
        Theme::instance().apply(ThemeChoice::Dark);
        // The replot is queued: it happens once the event loop runs.
        QTRY_VERIFY2(near(corner(), Theme::colors(ThemeKind::Dark).chartBackground), qPrintable(corner().name()));
    }
};

QTEST_MAIN(TestChartTheme)
#include "tst_chart_theme.moc"
