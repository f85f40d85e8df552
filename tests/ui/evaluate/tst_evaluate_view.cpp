// SPDX-License-Identifier: Apache-2.0
// The Evaluate view driven with real clicks: a small three-class project is trained in process,
// then evaluated from the view and from the run history's Evaluate button. Checks the models
// (QAbstractItemModelTester), the confusion matrix against the per-sample records, the samples'
// order (most confidently wrong first) and sorting by a header click, the ROC plot, an error shown
// for missing weights, and that a newer evaluation replaces a running one. A second evaluation of
// the same run reads the stored results (no model pass, "cached from" with a Re-evaluate button),
// and a changed weights file is evaluated again.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>
#include <QTabBar>
#include <QTabWidget>
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>

#include <cmath>
#include <random>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include "engine/api/training_job.h"
#include "engine/io/project.h"
#include "ui/evaluate/evaluate_view.h"
#include "ui/evaluate/evaluation_models.h"
#include "ui/training/training_panel.h"

using namespace kiln;
using namespace kiln::ui::evaluate;
using nlohmann::json;

namespace {

// Three overlapping blobs in 4 features, so that some samples are predicted wrong.
void writeBlobs(const QString& path) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    std::mt19937 gen(7);
    std::normal_distribution<double> noise(0.0, 1.0);
    for (int i = 0; i < 240; ++i) {
        const int label = i % 3;
        QByteArray line;
        for (int k = 0; k < 4; ++k) {
            const double v = (label - 1) * 0.8 + noise(gen);
            line += QByteArray::number(v, 'f', 4) + ',';
        }
        f.write(line + QByteArray::number(label) + '\n');
    }
}

engine::io::Project blobProject() {
    const json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", "blobs"},
        {"graph",
         {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                                 {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 3}}}}})}}},
        {"data", {{"format", "csv"}, {"path", "blobs.csv"}, {"split", {{"validation", 0.25}, {"test", 0.25}}}}},
        {"training",
         {{"epochs", 3},
          {"batch_size", 16},
          {"seed", 4},
          {"optimizer", {{"type", "adam"}, {"learning_rate", 0.05}}},
          {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
          {"metrics", {"accuracy"}}}}};
    auto p = engine::io::parseProject(j.dump(), "blobs.kiln");
    return p.ok() ? p.value() : engine::io::Project{};
}

void clickHeader(QTableView* view, int section) {
    QHeaderView* h = view->horizontalHeader();
    const QPoint at(h->sectionViewportPosition(section) + h->sectionSize(section) / 2, h->height() / 2);
    QTest::mouseClick(h->viewport(), Qt::LeftButton, {}, at);
}

}  // namespace

class TestEvaluateView : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    engine::io::Project m_project;
    QString m_projectPath;
    QString m_runDir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        writeBlobs(m_dir.filePath(QStringLiteral("blobs.csv")));
        m_project = blobProject();
        QVERIFY(!m_project.graph.nodes.empty());
        m_projectPath = m_dir.filePath(QStringLiteral("blobs.kiln"));
        QVERIFY(engine::io::saveProject(m_project, m_projectPath.toStdString()).ok());
        engine::api::TrainingOptions options;
        options.runDir = m_dir.filePath(QStringLiteral("runs/first")).toStdString();
        options.runName = "first";
        auto job = engine::api::TrainingJob::prepare(m_project, m_projectPath.toStdString(), options);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().message.c_str());
        auto outcome = (*job)->run({});
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());
        m_runDir = QString::fromStdString(outcome->runDir);
    }

    void evaluatesWithClicks() {
        EvaluateView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QAbstractItemModelTester t1(view.confusionModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(view.classModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(view.sampleProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setProject(m_project, m_projectPath);
        auto* weights = view.findChild<QLineEdit*>(QStringLiteral("evalWeights"));
        QVERIFY(weights);
        weights->clear();
        QTest::keyClicks(weights, m_runDir);
        QSignalSpy finished(&view, &EvaluateView::finished);
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
        QVERIFY(view.busy());  // the work runs off the GUI thread
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        // The confusion matrix counts what the per-sample records say.
        auto* confusion = view.confusionModel();
        QCOMPARE(confusion->rowCount(), 3);
        auto* samples = view.sampleModel();
        QCOMPARE(samples->rowCount(), 60);
        std::vector<int> counts(9, 0);
        for (int r = 0; r < samples->rowCount(); ++r) {
            const auto& rec = samples->record(r);
            ++counts[size_t(rec.trueClass * 3 + rec.predicted)];
        }
        int trace = 0;
        for (int t = 0; t < 3; ++t)
            for (int p = 0; p < 3; ++p) {
                QCOMPARE(confusion->data(confusion->index(t, p)).toLongLong(), qlonglong(counts[size_t(t * 3 + p)]));
                if (t == p) trace += counts[size_t(t * 3 + p)];
            }
        QVERIFY2(trace < 60, "the blobs overlap: some samples must be wrong");
        QVERIFY(trace > 30);
        QVERIFY(confusion->data(confusion->index(0, 0), Qt::BackgroundRole).isValid());
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QString::number(double(trace) / 60, 'f', 4)));
        // Per class: three classes and two averages.
        QCOMPARE(view.classModel()->rowCount(), 5);

        // The samples table starts with the most confidently wrong ones.
        auto* table = view.findChild<QTableView*>(QStringLiteral("samplesView"));
        QVERIFY(table);
        auto* proxy = view.sampleProxy();
        auto at = [&](int row, int column, int role) { return proxy->data(proxy->index(row, column), role); };
        const int wrong = 60 - trace;
        for (int r = 0; r < 60; ++r) QCOMPARE(at(r, 0, SampleTableModel::CorrectRole).toBool(), r >= wrong);
        for (int r = 1; r < wrong; ++r)
            QVERIFY(at(r - 1, SampleTableModel::Confidence, SampleTableModel::SortRole).toDouble() >=
                    at(r, SampleTableModel::Confidence, SampleTableModel::SortRole).toDouble());
        // A click on the loss header sorts by loss.
        clickHeader(table, SampleTableModel::Loss);
        const Qt::SortOrder order = table->horizontalHeader()->sortIndicatorOrder();
        for (int r = 1; r < 60; ++r) {
            const double a = at(r - 1, SampleTableModel::Loss, SampleTableModel::SortRole).toDouble();
            const double b = at(r, SampleTableModel::Loss, SampleTableModel::SortRole).toDouble();
            QVERIFY(order == Qt::AscendingOrder ? a <= b : a >= b);
        }
        // ROC: one curve per class plus the chance diagonal; precision-recall: one per class;
        // calibration: the accuracy bars, the confidence points and the diagonal.
        QCOMPARE(view.rocPlot()->graphCount(), 4);
        QCOMPARE(view.prPlot()->plottableCount(), 3);
        QCOMPARE(view.calibrationPlot()->plottableCount(), 3);
        auto* bars = qobject_cast<QCPBars*>(view.calibrationPlot()->plottable(0));
        QVERIFY(bars);
        double counted = 0;
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
            QVERIFY(it->value >= 0 && it->value <= 1);
            ++counted;
        }
        QVERIFY(counted >= 1);
        auto* tabs = view.findChild<QTabWidget*>();
        QVERIFY(tabs->isTabVisible(tabs->indexOf(view.prPlot())));
        QVERIFY(!tabs->isTabVisible(tabs->indexOf(view.regressionPlot())));
        // A click on the Calibration tab shows the reliability diagram.
        tabs->tabBar()->setCurrentIndex(tabs->indexOf(view.calibrationPlot()));
        QVERIFY(view.calibrationPlot()->isVisible());

        // The validation split from the combo box.
        auto* split = view.findChild<QComboBox*>(QStringLiteral("evalSplit"));
        split->setCurrentIndex(1);
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 120000);
        QVERIFY(finished.last().at(0).toBool());
        QCOMPARE(view.sampleModel()->rowCount(), 60);

        // Weights that do not exist: the error names them, the tables are emptied.
        weights->clear();
        QTest::keyClicks(weights, m_dir.filePath(QStringLiteral("missing.safetensors")));
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, 120000);
        QVERIFY(!finished.last().at(0).toBool());
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("missing.safetensors")));
        QCOMPARE(view.sampleModel()->rowCount(), 0);
        QCOMPARE(view.confusionModel()->rowCount(), 0);
    }

    // A regression head (the blob's label as a number, mean squared error): the classification
    // tabs give way to predicted-vs-true and residual plots of every test sample.
    void regressionShowsPredictedAndResiduals() {
        json j = json::parse(engine::io::serializeProject(m_project));
        j["name"] = "blobs_regression";
        j["graph"]["nodes"][1]["attrs"]["units"] = 1;
        j["training"]["loss"] = {{"type", "MeanSquaredError"}};
        j["training"]["metrics"] = json::array();
        auto parsed = engine::io::parseProject(j.dump(), "regression.kiln");
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
        // A folder of its own: its run history is not the classification project's.
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("regression")));
        QVERIFY(QFile::copy(m_dir.filePath(QStringLiteral("blobs.csv")), m_dir.filePath(QStringLiteral("regression/blobs.csv"))));
        const QString path = m_dir.filePath(QStringLiteral("regression/regression.kiln"));
        QVERIFY(engine::io::saveProject(*parsed, path.toStdString()).ok());
        engine::api::TrainingOptions options;
        options.runDir = m_dir.filePath(QStringLiteral("regression/runs/regression")).toStdString();
        options.runName = "regression";
        auto job = engine::api::TrainingJob::prepare(*parsed, path.toStdString(), options);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().message.c_str());
        auto outcome = (*job)->run({});
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());

        EvaluateView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(*parsed, path);
        view.setWeights(QString::fromStdString(outcome->runDir));
        QSignalSpy finished(&view, &EvaluateView::finished);
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("RMSE")));
        auto* tabs = view.findChild<QTabWidget*>();
        QVERIFY(tabs->isTabVisible(tabs->indexOf(view.regressionPlot())));
        QVERIFY(tabs->isTabVisible(tabs->indexOf(view.residualPlot())));
        QVERIFY(!tabs->isTabVisible(tabs->indexOf(view.rocPlot())));
        QVERIFY(!tabs->isTabVisible(tabs->indexOf(view.calibrationPlot())));
        QCOMPARE(view.regressionPlot()->graphCount(), 2);  // the samples and the diagonal
        QCOMPARE(view.regressionPlot()->graph(0)->dataCount(), view.sampleModel()->rowCount());
        QCOMPARE(view.residualPlot()->graph(0)->dataCount(), view.sampleModel()->rowCount());
        // Residual = true - predicted, point by point.
        auto truth = view.regressionPlot()->graph(0)->data();
        auto residual = view.residualPlot()->graph(0)->data();
        QVERIFY(view.sampleModel()->rowCount() > 10);
        tabs->tabBar()->setCurrentIndex(tabs->indexOf(view.residualPlot()));
        QVERIFY(view.residualPlot()->isVisible());
        // The data of the two plots agree: the residual's x is the prediction of the first plot.
        double sumTruth = 0, sumPredicted = 0, sumResidual = 0;
        for (auto it = truth->constBegin(); it != truth->constEnd(); ++it) {
            sumTruth += it->key;
            sumPredicted += it->value;
        }
        for (auto it = residual->constBegin(); it != residual->constEnd(); ++it) sumResidual += it->value;
        QVERIFY(std::abs((sumTruth - sumPredicted) - sumResidual) < 1e-6 * std::max(1.0, std::abs(sumTruth)));
    }

    void secondOpenReadsStoredResults() {
        // A run of its own, evaluated by nothing else.
        engine::api::TrainingOptions options;
        options.runDir = m_dir.filePath(QStringLiteral("runs/cached")).toStdString();
        options.runName = "cached";
        options.recordRun = false;
        auto job = engine::api::TrainingJob::prepare(m_project, m_projectPath.toStdString(), options);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().message.c_str());
        auto outcome = (*job)->run({});
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());
        const QString runDir = QString::fromStdString(outcome->runDir);
        auto evaluateWithClick = [](EvaluateView& view, const char* button) {
            QSignalSpy finished(&view, &EvaluateView::finished);
            QTest::mouseClick(view.findChild<QPushButton*>(QLatin1String(button)), Qt::LeftButton);
            return QTest::qWaitFor([&] { return finished.count() == 1; }, 120000) && finished.first().at(0).toBool();
        };
        std::vector<qlonglong> firstCounts;

        {  // The first opening runs the model and stores its outputs beside the weights.
            EvaluateView view;
            view.resize(900, 600);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            view.setProject(m_project, m_projectPath);
            view.setWeights(runDir);
            QVERIFY(evaluateWithClick(view, "evalRun"));
            QCOMPARE(view.modelPasses(), 1);
            QVERIFY(!view.shownFromCache());
            QVERIFY(!view.findChild<QPushButton*>(QStringLiteral("evalRerun"))->isVisible());
            QVERIFY(QDir(runDir + QStringLiteral("/evaluations")).entryList(QDir::Files).contains(
                QStringLiteral("weights.safetensors.test.kiln-eval")));
            for (int t = 0; t < 3; ++t)
                for (int p = 0; p < 3; ++p) firstCounts.push_back(view.confusionModel()->index(t, p).data().toLongLong());
        }

        // The second opening reads them: no model pass, the same figures, "cached from".
        EvaluateView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(m_project, m_projectPath);
        view.setWeights(runDir);
        QVERIFY(evaluateWithClick(view, "evalRun"));
        QCOMPARE(view.modelPasses(), 0);
        QVERIFY(view.shownFromCache());
        QVERIFY(view.shownCachedAt().isValid());
        QVERIFY(view.shownCachedAt().secsTo(QDateTime::currentDateTime()) < 600);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("cached from")));
        auto* rerun = view.findChild<QPushButton*>(QStringLiteral("evalRerun"));
        QVERIFY(rerun->isVisible());
        QCOMPARE(view.sampleModel()->rowCount(), 60);
        std::vector<qlonglong> counts;
        for (int t = 0; t < 3; ++t)
            for (int p = 0; p < 3; ++p) counts.push_back(view.confusionModel()->index(t, p).data().toLongLong());
        QVERIFY(counts == firstCounts);

        // Re-evaluate runs the model although the stored results match.
        QVERIFY(evaluateWithClick(view, "evalRerun"));
        QCOMPARE(view.modelPasses(), 1);
        QVERIFY(!view.shownFromCache());
        QVERIFY(!rerun->isVisible());
        QVERIFY(!view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("cached from")));

        // A changed weights file (one weight altered in place): the stored results are stale and
        // the model runs again; the next opening reads the new ones.
        const QString weights = runDir + QStringLiteral("/weights.safetensors");
        QFile file(weights);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QByteArray bytes = file.readAll();
        bytes[bytes.size() - 2] = char(bytes[bytes.size() - 2] ^ 0x40);
        QVERIFY(file.seek(0));
        QCOMPARE(file.write(bytes), bytes.size());
        file.close();
        QVERIFY(evaluateWithClick(view, "evalRun"));
        QCOMPARE(view.modelPasses(), 2);
        QVERIFY(!view.shownFromCache());
        QVERIFY(evaluateWithClick(view, "evalRun"));
        QCOMPARE(view.modelPasses(), 2);
        QVERIFY(view.shownFromCache());
    }

    void newerEvaluationWins() {
        EvaluateView view;
        view.setProject(m_project, m_projectPath);
        view.setWeights(m_dir.filePath(QStringLiteral("missing.safetensors")));
        QSignalSpy finished(&view, &EvaluateView::finished);
        view.evaluate();
        view.setWeights(m_runDir);
        view.evaluate();
        QTRY_VERIFY_WITH_TIMEOUT(!view.busy(), 120000);
        QCOMPARE(finished.count(), 1);
        QVERIFY(finished.first().at(0).toBool());
        QCOMPARE(view.sampleModel()->rowCount(), 60);
    }

    void openedFromRunHistory() {
        ui::training::TrainingPanel panel;
        panel.resize(1000, 700);
        panel.setProject(m_project, m_projectPath);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* runs = panel.findChild<QTableView*>(QStringLiteral("runsView"));
        QVERIFY(runs);
        QTRY_VERIFY(runs->model()->rowCount() >= 1);
        auto* tabs = panel.findChild<QTabWidget*>();
        tabs->setCurrentIndex(2);
        QTest::mouseClick(runs->viewport(), Qt::LeftButton, {}, runs->visualRect(runs->model()->index(0, 1)).center());
        QCOMPARE(runs->selectionModel()->selectedRows().size(), 1);
        QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("evaluateRun")), Qt::LeftButton);
        auto* window = panel.findChild<QWidget*>(QStringLiteral("evaluateWindow"));
        QVERIFY(window);
        auto* view = window->findChild<EvaluateView*>();
        QVERIFY(view);
        QCOMPARE(view->weights(), m_runDir);
        QTRY_VERIFY_WITH_TIMEOUT(!view->busy(), 120000);
        QCOMPARE(view->sampleModel()->rowCount(), 60);
        QCOMPARE(view->confusionModel()->rowCount(), 3);
        window->close();
    }
};

QTEST_MAIN(TestEvaluateView)
#include "tst_evaluate_view.moc"
