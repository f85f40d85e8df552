// SPDX-License-Identifier: Apache-2.0
// The Histograms tab: bucket counts land on the value grid in proportion to the range they cover,
// a short training run started with the Train button fills the tab live from its epoch events,
// and selecting the finished run in Runs shows the same maps again from its histograms.jsonl.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QComboBox>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>

#include <nlohmann/json.hpp>

#include "engine/api/histogram_log.h"
#include "engine/io/project.h"
#include "engine/io/tfevents.h"
#include "ui/training/histogram_view.h"
#include "ui/training/run_list_model.h"
#include "ui/training/training_panel.h"
#include "tests/test_data.h"

using namespace kiln;
using namespace kiln::ui::training;
using nlohmann::json;

using kiln::test::dataDir;

namespace {

engine::io::Project irisProject(int epochs)
{
    return test::irisProject("iris_hist", epochs, 8, 0.05);
}

// The engine's histogram of `values` (what the trainer records), as the api's.
engine::api::Histogram histogramOf(const std::vector<float>& values, int buckets) {
    const engine::io::Histogram h = engine::io::Histogram::of(values, buckets);
    return engine::api::Histogram{h.min, h.max, h.num, h.sum, h.sumSquares, h.bucketLimit, h.bucket};
}

engine::api::ParamHistogram param(const std::string& name, std::vector<float> weights, std::vector<float> grads, int buckets) {
    engine::api::ParamHistogram p;
    p.name = name;
    p.weights = histogramOf(weights, buckets);
    if (!grads.empty()) {
        p.gradients = histogramOf(grads, buckets);
    }
    return p;
}

}  // namespace

class TestHistogramView : public QObject {
    Q_OBJECT
private slots:
    void gridSpreadsBucketsOverTheirRange()
    {
        HistogramView view;
        view.resize(700, 500);
        view.show();
        QVERIFY(!view.messageText().isEmpty());  // nothing yet: it says how histograms come
        // Weights {0, 0, 0, 1} in two buckets: [0, 0.5] holds 3, (0.5, 1] holds 1.
        view.addEpoch(1, {param("d/kernel", {0, 0, 0, 1}, {-1, 1}, 2), param("d/moving_mean", {2, 2}, {}, 2)});
        view.addEpoch(2, {param("d/kernel", {0, 1, 1, 1}, {-1, 1}, 2), param("d/moving_mean", {2, 2}, {}, 2)});
        QCOMPARE(view.parameters(), (QStringList{QStringLiteral("d/kernel"), QStringLiteral("d/moving_mean")}));
        QCOMPARE(view.currentParameter(), QStringLiteral("d/kernel"));
        QCOMPARE(view.epochs(), (QList<int>{1, 2}));
        QTRY_VERIFY(view.messageText().isEmpty());
        const HistogramView::Grid g = view.grid(false);
        QCOMPARE(g.columns, 2);
        QCOMPARE(g.firstEpoch, 1);
        QCOMPARE(g.rows, HistogramView::kRows);
        QCOMPARE(g.low, 0.0);
        QCOMPARE(g.high, 1.0);
        const int half = g.rows / 2;
        for (int r = 0; r < g.rows; ++r) {
            // Each epoch's column is scaled to its highest cell.
            QCOMPARE(g.values[static_cast<size_t>(r)], r < half ? 1.0 : 1.0 / 3.0);
            QCOMPARE(g.values[static_cast<size_t>(g.rows + r)], r < half ? 1.0 / 3.0 : 1.0);
        }
        const HistogramView::Grid gg = view.grid(true);
        QCOMPARE(gg.low, -1.0);
        QCOMPARE(gg.high, 1.0);
        // A parameter without gradients (it does not train) has no gradient map.
        view.setCurrentParameter(QStringLiteral("d/moving_mean"));
        QCOMPARE(view.grid(true).columns, 0);
        const HistogramView::Grid constant = view.grid(false);
        QCOMPARE(constant.columns, 2);
        QVERIFY(constant.low < 2.0 && constant.high > 2.0);  // a band around the one value
        view.clear();
        QVERIFY(view.parameters().isEmpty());
        QTRY_VERIFY(!view.messageText().isEmpty());
    }

    void fillsLiveThenFromTheRunFolder()
    {
        if (!QFile::exists(dataDir() + QStringLiteral("/sklearn/iris.csv"))) {
            QSKIP("iris.csv is not in the data cache (tools/fetch_data.sh)");
        }
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("iris_hist.kiln"));
        // tools/histograms_screenshot.sh sets KILN_SCREENSHOT: a longer run makes a better picture.
        const QByteArray shot = qgetenv("KILN_SCREENSHOT");
        const int epochs = shot.isEmpty() ? 3 : 24;
        QList<int> allEpochs;
        for (int e = 1; e <= epochs; ++e) allEpochs << e;
        const engine::io::Project project = irisProject(epochs);
        QVERIFY(!project.graph.nodes.empty());
        QVERIFY(engine::io::saveProject(project, path.toStdString()).ok());

        TrainingPanel panel;
        panel.resize(1000, 760);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProject(project, path);
        auto* tabs = panel.findChild<QTabWidget*>();
        QVERIFY(tabs);
        HistogramView* view = panel.histograms();
        QCOMPARE(tabs->tabText(tabs->indexOf(view)), QStringLiteral("Histograms"));
        tabs->setCurrentWidget(view);
        auto* train = panel.findChild<QPushButton*>(QStringLiteral("trainButton"));
        QVERIFY(train && train->isEnabled());
        QSignalSpy finished(panel.session(), &TrainingSession::finished);
        QTest::mouseClick(train, Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
        QCoreApplication::processEvents();

        // Live: every epoch, every parameter, from the engine's events.
        QCOMPARE(view->epochs(), allEpochs);
        QCOMPARE(view->parameters(), (QStringList{QStringLiteral("hidden/kernel"), QStringLiteral("hidden/bias"),
                                                  QStringLiteral("logits/kernel"), QStringLiteral("logits/bias")}));
        QVERIFY(view->sourceText().contains(QStringLiteral("live")));
        auto* combo = view->findChild<QComboBox*>(QStringLiteral("histogramParameter"));
        QVERIFY(combo);
        combo->setCurrentIndex(2);
        QCOMPARE(view->currentParameter(), QStringLiteral("logits/kernel"));
        const HistogramView::Grid liveWeights = view->grid(false);
        const HistogramView::Grid liveGrads = view->grid(true);
        QCOMPARE(liveWeights.columns, epochs);
        QCOMPARE(liveGrads.columns, epochs);
        for (int c = 0; c < epochs; ++c) {
            double top = 0;
            for (int r = 0; r < liveGrads.rows; ++r) top = std::max(top, liveGrads.values[static_cast<size_t>(c * liveGrads.rows + r)]);
            QCOMPARE(top, 1.0);  // every epoch has a gradient distribution
        }
        // The weights moved: the epochs' distributions differ.
        QVERIFY(std::vector<double>(liveWeights.values.begin(), liveWeights.values.begin() + liveWeights.rows) !=
                std::vector<double>(liveWeights.values.end() - liveWeights.rows, liveWeights.values.end()));

        // The run folder kept them: the same maps after selecting the finished run in Runs.
        const QString runDir = panel.session()->runDir();
        auto log = engine::api::readHistograms(engine::api::histogramLogPath(runDir.toStdString()));
        QVERIFY2(log.ok(), log.ok() ? "" : log.error().toString().c_str());
        QCOMPARE(log->size(), static_cast<size_t>(epochs));
        view->clear();
        QVERIFY(view->epochs().isEmpty());
        QSignalSpy loaded(view, &HistogramView::loaded);
        auto* runsView = panel.findChild<QTableView*>(QStringLiteral("runsView"));
        QVERIFY(runsView);
        tabs->setCurrentIndex(2);
        QCOMPARE(panel.runs()->rowCount(), 1);
        const QRect cell = runsView->visualRect(runsView->model()->index(0, 0));
        QTest::mouseClick(runsView->viewport(), Qt::LeftButton, {}, cell.center());
        QVERIFY(loaded.wait(10000) || loaded.count() > 0);
        QCOMPARE(loaded.front().at(0).toBool(), true);
        QCOMPARE(view->epochs(), allEpochs);
        QCOMPARE(panel.selectedRunDir(), runDir);
        view->setCurrentParameter(QStringLiteral("logits/kernel"));
        QCOMPARE(view->grid(false).values, liveWeights.values);
        QCOMPARE(view->grid(true).values, liveGrads.values);
        QVERIFY(view->sourceText().contains(QStringLiteral("Run")));

        if (!shot.isEmpty()) {
            view->setCurrentParameter(QStringLiteral("hidden/kernel"));
            tabs->setCurrentWidget(view);
            QTest::qWait(300);
            QVERIFY(panel.grab().save(QString::fromLocal8Bit(shot)));
        }
    }
};

QTEST_MAIN(TestHistogramView)
#include "tst_histogram_view.moc"
