// SPDX-License-Identifier: Apache-2.0
// The training view driven with real clicks: train, see the charts fill, pause, resume, stop (the
// state is saved), the event loop's longest stall at a high step rate, the configuration form and
// the run history (rename, filter, compare, clone, delete).
// kiln-test-labels: ui slow
// kiln-test-libs: kiln_ui_training
// kiln-test-serial (measures event-loop stalls)
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDialog>
#include <QFile>
#include <QImage>
#include <QRandomGenerator>
#include <QLineEdit>
#include <QDoubleSpinBox>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QTreeWidget>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "ui/charts/charts_panel.h"
#include "ui/training/run_list_model.h"
#include "ui/training/training_config_form.h"
#include "ui/training/training_panel.h"
#include "tests/test_data.h"
#include "tests/ui/event_loop_watchdog.h"

using namespace kiln;
using namespace kiln::ui::training;
using nlohmann::json;

using kiln::test::dataDir;

namespace {

// A tiny classifier on the iris table (4 features, 3 classes), batch size 1: thousands of steps/s.
engine::io::Project irisProject(int epochs)
{
    return test::irisProject("iris_tiny", epochs, 1, 0.01);
}

}  // namespace

class TestTrainingPanel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void clickTrainPauseResumeStopOnFashionCnn();
    void eventLoopStaysResponsiveAtHighStepRate();
    void configFormEditsValidateAndKeepOtherSettings();
    void inputBoundNoticeOnASlowFolder();
    void runHistoryRenameFilterCompareCloneDelete();

private:
    QTemporaryDir m_dir;
};

void TestTrainingPanel::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

void TestTrainingPanel::clickTrainPauseResumeStopOnFashionCnn()
{
    if (!QFile::exists(dataDir() + QStringLiteral("/fashion-mnist/train-images-idx3-ubyte.gz"))) {
        QSKIP("Fashion-MNIST is not in the data cache (tools/fetch_data.sh)");
    }
    auto loaded = engine::io::loadProject(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln");
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    const QString path = m_dir.filePath(QStringLiteral("fashion_cnn.kiln"));
    QVERIFY(engine::io::saveProject(*loaded, path.toStdString()).ok());

    TrainingPanel panel;
    panel.resize(1100, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setProject(*loaded, path);
    auto* train = panel.findChild<QPushButton*>(QStringLiteral("trainButton"));
    auto* pause = panel.findChild<QPushButton*>(QStringLiteral("pauseButton"));
    auto* stop = panel.findChild<QPushButton*>(QStringLiteral("stopButton"));
    QVERIFY(train && pause && stop);
    QVERIFY(train->isEnabled());
    QSignalSpy finished(panel.session(), &TrainingSession::finished);

    QTest::mouseClick(train, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel.session()->stepEventsDelivered() >= 3, 120000);
    QCOMPARE(panel.session()->state(), TrainingSession::State::Running);
    QVERIFY(!train->isEnabled());
    // The charts fill: loss, accuracy, learning rate, rate.
    QTRY_VERIFY(panel.charts()->chart(QStringLiteral("loss")) != nullptr);
    QVERIFY(panel.charts()->chart(QStringLiteral("learning_rate")));
    const auto* loss = panel.charts()->chart(QStringLiteral("loss"))->series(panel.liveRunKey(), ui::charts::Split::Train);
    QVERIFY(loss && loss->size() >= 3);

    // tools/training_screenshot.sh runs this under Xvfb with KILN_SCREENSHOT set: the real window
    // mid-run, once the curves have a few hundred points.
    if (const QByteArray shot = qgetenv("KILN_SCREENSHOT"); !shot.isEmpty()) {
        QTRY_VERIFY_WITH_TIMEOUT(panel.session()->stepEventsDelivered() >= 300, 120000);
        QTest::qWait(300);
        QVERIFY(panel.grab().save(QString::fromLocal8Bit(shot)));
    }

    QTest::mouseClick(pause, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(panel.session()->state(), TrainingSession::State::Paused, 20000);
    const qint64 atPause = panel.session()->stepEventsDelivered();
    QTest::qWait(400);
    QCOMPARE(panel.session()->stepEventsDelivered(), atPause);  // paused within one step
    QCOMPARE(pause->text(), QStringLiteral("Resume"));

    QTest::mouseClick(pause, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel.session()->stepEventsDelivered() > atPause, 20000);
    QCOMPARE(panel.session()->state(), TrainingSession::State::Running);

    QTest::mouseClick(stop, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    QCOMPARE(panel.session()->state(), TrainingSession::State::Finished);
    const QString runDir = panel.session()->runDir();
    QVERIFY(QFile::exists(runDir + QStringLiteral("/weights.safetensors")));
    QVERIFY(QFile::exists(runDir + QStringLiteral("/run.json")));
    QVERIFY2(QDir(QString::fromStdString(engine::api::stopStateDir(runDir.toStdString()))).exists(),
             "Stop saves the full training state");
    // The run is in the history, stopped.
    QTRY_COMPARE(panel.runs()->rowCount(), 1);
    QCOMPARE(panel.runs()->runAt(0)->status, engine::api::RunStatus::Stopped);
    QVERIFY(train->isEnabled());
}

void TestTrainingPanel::eventLoopStaysResponsiveAtHighStepRate()
{
    if (!QFile::exists(dataDir() + QStringLiteral("/sklearn/iris.csv"))) {
        QSKIP("the iris table is not in the data cache (tools/fetch_data.sh)");
    }
    const QString path = m_dir.filePath(QStringLiteral("iris_tiny.kiln"));
    const auto project = irisProject(400);
    QVERIFY(!project.graph.nodes.empty());
    TrainingPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setProject(project, path);
    QVERIFY2(panel.configForm()->isValid(), qPrintable(panel.configForm()->errorText()));

    test::EventLoopWatchdog watchdog;

    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("trainButton")), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel.session()->stepEventsDelivered() > 100, 60000);
    QTest::qWait(300);  // the charts' first layout and paint happen once, before measuring
    // A shared machine sometimes takes the core away from the GUI thread mid-event, which no code
    // of the panel causes: a stall the panel causes shows in every window, so up to three windows
    // of 2.5 s are measured while training runs, and one within the budget passes.
    QStringList windows;
    bool within = false;
    double stepsPerSecond = 0;
    for (int attempt = 1; attempt <= 3 && !within; ++attempt) {
        const qint64 stepsBefore = panel.session()->stepEventsDelivered();
        QElapsedTimer window;
        window.start();
        watchdog.start();
        QTest::qWait(2500);
        watchdog.stop();
        const double seconds = window.nsecsElapsed() / 1e9;
        stepsPerSecond = (panel.session()->stepEventsDelivered() - stepsBefore) / seconds;
        const qint64 worst = watchdog.longestStallMs(), worstCpu = watchdog.longestBusyMs();
        const bool oversubscribed = test::machineOversubscribed();
        qInfo("steps/s while measuring: %.0f; longest event-loop stall: %lld ms; longest GUI-thread work: "
              "%lld ms; load average %s",
              stepsPerSecond, static_cast<long long>(worst), static_cast<long long>(worstCpu),
              qPrintable(test::loadAverage()));
        // The GUI thread never works for 50 ms at a stretch; the wall-clock stall stays under 50 ms
        // too, checked when the machine is not oversubscribed (training threads share its cores).
        within = worstCpu < 50 && (oversubscribed || worst < 50);
        windows << QStringLiteral("window %1: GUI thread busy %2 ms, stall %3 ms%4")
                       .arg(attempt)
                       .arg(worstCpu)
                       .arg(worst)
                       .arg(oversubscribed ? QStringLiteral(" (not checked: oversubscribed)") : QString());
    }
    panel.stopTraining();
    QTRY_VERIFY_WITH_TIMEOUT(!panel.session()->isActive(), 30000);
    QVERIFY2(stepsPerSecond >= 1000, qPrintable(QStringLiteral("only %1 steps/s").arg(stepsPerSecond)));
    QVERIFY2(within, qPrintable(windows.join(QStringLiteral("; "))));
    // Every step reached the charts (no event dropped on the way).
    const auto* loss = panel.charts()->chart(QStringLiteral("loss"))->series(panel.liveRunKey(), ui::charts::Split::Train);
    QCOMPARE(qint64(loss->size()), panel.session()->stepEventsDelivered());
}

void TestTrainingPanel::configFormEditsValidateAndKeepOtherSettings()
{
    auto project = irisProject(5);
    project.training["callbacks"] = json::array({{{"type", "CSVLogger"}, {"filename", "log.csv"}},
                                                 {{"type", "EarlyStopping"}, {"patience", 3}, {"min_delta", 0.01}}});
    project.training["metrics"] = json::array({"accuracy", "top_k_categorical_accuracy"});
    TrainingConfigForm form;
    form.setGraph(project.graph);
    form.setConfig(project.training);
    QVERIFY2(form.isValid(), qPrintable(form.errorText()));
    QSignalSpy edited(&form, &TrainingConfigForm::configEdited);
    auto* epochs = form.findChild<QSpinBox*>(QStringLiteral("epochs"));
    epochs->setValue(12);
    QCOMPARE(edited.count(), 1);
    json t = form.config();
    QCOMPARE(t["epochs"].get<int>(), 12);
    QCOMPARE(t["loss"]["type"].get<std::string>(), std::string("SparseCategoricalCrossentropy"));  // kept
    // The EarlyStopping entry keeps min_delta, which the form does not show.
    bool sawEarly = false;
    for (const auto& cb : t["callbacks"]) {
        if (cb["type"] == "EarlyStopping") {
            sawEarly = true;
            QCOMPARE(cb["min_delta"].get<double>(), 0.01);
        }
    }
    QVERIFY(sawEarly);
    QVERIFY(std::find(t["metrics"].begin(), t["metrics"].end(), "top_k_categorical_accuracy") != t["metrics"].end());
    // Switching the optimizer drops the old optimizer's options.
    auto* optimizer = form.findChild<QComboBox*>(QStringLiteral("optimizer"));
    optimizer->setCurrentIndex(optimizer->findData(QStringLiteral("adam")));
    t = form.config();
    QCOMPARE(t["optimizer"]["type"].get<std::string>(), std::string("adam"));
    QVERIFY(!t["optimizer"].contains("momentum"));
    // Device settings: the GPU memory limit is written only for a GPU and kept when read back.
    json gpu = project.training;
    gpu["device"] = "cuda:0";
    gpu["memory_limit"] = "12GiB";
    form.setConfig(gpu);
    auto* limit = form.findChild<QComboBox*>(QStringLiteral("memoryLimit"));
    QVERIFY(limit);
    QCOMPARE(limit->currentText(), QStringLiteral("12GiB"));
    QCOMPARE(form.config().value("memory_limit", std::string()), std::string("12GiB"));
    limit->setCurrentText(QStringLiteral("growth"));
    QVERIFY(!form.config().contains("memory_limit"));
    // A configuration the engine refuses is shown as an error, never emitted.
    json bad = project.training;
    bad["loss"]["output"] = "no_such_node";
    form.setConfig(bad);
    QVERIFY(!form.isValid());
    QVERIFY2(form.errorText().contains(QStringLiteral("no_such_node")), qPrintable(form.errorText()));
}

// A folder of 256x256 noise pictures read by one worker and shrunk to 8x8 for a one-layer model:
// each step waits for a picture to be decoded, and the view says so once.
void TestTrainingPanel::inputBoundNoticeOnASlowFolder()
{
    QTemporaryDir dir;
    QRandomGenerator rng(7);
    for (int c = 0; c < 2; ++c) {
        const QString cls = dir.filePath(QStringLiteral("pics/%1").arg(c ? QStringLiteral("b") : QStringLiteral("a")));
        QVERIFY(QDir().mkpath(cls));
        for (int i = 0; i < 24; ++i) {
            QImage img(256, 256, QImage::Format_RGB888);
            for (int y = 0; y < img.height(); ++y) {
                uchar* row = img.scanLine(y);
                for (int x = 0; x < img.width() * 3; ++x) row[x] = uchar(rng.bounded(256));
            }
            QVERIFY(img.save(QStringLiteral("%1/%2.png").arg(cls).arg(i)));
        }
    }
    const json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", "slow_folder"},
        {"graph",
         {{"nodes",
           json::array({{{"name", "image"}, {"op", "Input"}, {"attrs", {{"shape", {8, 8, 3}}}}},
                        {{"name", "flat"}, {"op", "Flatten"}, {"inputs", {"image"}}},
                        {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"flat"}}, {"attrs", {{"units", 2}}}}})}}},
        {"data",
         {{"format", "folder"},
          {"path", "pics"},
          {"workers", 1},
          {"prefetch", 1},
          {"transforms", json::array({{{"type", "resize"}, {"size", 8}},
                                      {{"type", "normalize"}, {"preset", "unit"}}})}}},
        {"training",
         {{"epochs", 1},
          {"batch_size", 1},
          {"seed", 1},
          {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}}}}};
    auto project = engine::io::parseProject(j.dump(), "slow_folder.kiln");
    QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
    const QString path = dir.filePath(QStringLiteral("slow_folder.kiln"));
    QVERIFY(engine::io::saveProject(*project, path.toStdString()).ok());

    TrainingPanel panel;
    panel.setProject(*project, path);
    QSignalSpy notices(&panel, &TrainingPanel::notice);
    QSignalSpy finished(panel.session(), &TrainingSession::finished);
    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("trainButton")), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    int inputBound = 0;
    for (const auto& n : notices) {
        if (n.at(0).toString().contains(QStringLiteral("input-bound")) && n.at(1).toInt() == 1) {
            ++inputBound;
        }
    }
    QCOMPARE(inputBound, 1);
    QVERIFY(panel.charts()->chart(QStringLiteral("input_wait_percent")) != nullptr);
}

void TestTrainingPanel::runHistoryRenameFilterCompareCloneDelete()
{
    if (!QFile::exists(dataDir() + QStringLiteral("/sklearn/iris.csv"))) {
        QSKIP("the iris table is not in the data cache (tools/fetch_data.sh)");
    }
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("iris.kiln"));
    TrainingPanel panel;
    panel.show();
    auto project = irisProject(1);
    panel.setProject(project, path);
    QSignalSpy finished(panel.session(), &TrainingSession::finished);
    panel.startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    // A second run with another learning rate.
    auto* lr = panel.configForm()->findChild<QDoubleSpinBox*>(QStringLiteral("learningRate"));
    lr->setValue(0.05);
    panel.startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
    QVERIFY(finished.at(1).at(0).toBool());

    RunListModel* runs = panel.runs();
    QAbstractItemModelTester tester(runs, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(runs->rowCount(), 2);
    QCOMPARE(runs->runAt(0)->status, engine::api::RunStatus::Completed);
    // Rename through the model writes to the store.
    QVERIFY(runs->setData(runs->index(0, RunListModel::Name), QStringLiteral("baseline")));
    runs->refresh();
    QVERIFY(runs->rowOf(runs->runAt(0)->id) >= 0);
    bool renamed = false;
    for (int r = 0; r < runs->rowCount(); ++r) {
        renamed |= runs->runAt(r)->name == "baseline";
    }
    QVERIFY(renamed);
    auto* view = panel.findChild<QTableView*>(QStringLiteral("runsView"));
    auto* filter = panel.findChild<QLineEdit*>(QStringLiteral("runFilter"));
    filter->setText(QStringLiteral("basel"));
    QCOMPARE(view->model()->rowCount(), 1);
    filter->clear();
    QCOMPARE(view->model()->rowCount(), 2);

    // Compare both: the dialog lists the learning rate as the difference.
    view->selectAll();
    bool sawLearningRate = false;
    QTimer::singleShot(300, this, [&] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (auto* dialog = qobject_cast<QDialog*>(w); dialog && dialog->isVisible()) {
                auto* tree = dialog->findChild<QTreeWidget*>(QStringLiteral("configDiff"));
                for (int i = 0; tree && i < tree->topLevelItemCount(); ++i) {
                    sawLearningRate |= tree->topLevelItem(i)->text(0) == QStringLiteral("training.optimizer.learning_rate");
                }
                dialog->reject();
            }
        }
    });
    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("compareRuns")), Qt::LeftButton);
    QVERIFY(sawLearningRate);
    // Both runs are overlaid in the charts.
    QVERIFY(panel.charts()->chart(QStringLiteral("loss")));
    QCOMPARE(panel.charts()->chart(QStringLiteral("loss"))->runs().size(), 2);
    // Each run's validation loss (one value per epoch) sits at its epoch's last step, where the
    // run's training steps end, not at the epoch's number.
    for (const QString& key : panel.charts()->chart(QStringLiteral("loss"))->runs()) {
        const auto* train = panel.charts()->chart(QStringLiteral("loss"))->series(key, ui::charts::Split::Train);
        const auto* validation = panel.charts()->chart(QStringLiteral("loss"))->series(key, ui::charts::Split::Validation);
        QVERIFY(train && !train->empty() && validation && validation->size() == 1);
        QVERIFY2(train->step(train->size() - 1) > 1, qPrintable(key));
        QCOMPARE(validation->step(0), train->step(train->size() - 1));
        QCOMPARE(validation->epoch(0), 1.0);
    }

    // Clone the first run's configuration (learning rate 0.01) into the project.
    view->clearSelection();
    const int baselineRow = [&] {
        for (int r = 0; r < view->model()->rowCount(); ++r) {
            if (view->model()->index(r, 0).data().toString() == QStringLiteral("baseline")) {
                return r;
            }
        }
        return -1;
    }();
    QVERIFY(baselineRow >= 0);
    view->selectRow(baselineRow);
    QSignalSpy cloned(&panel, &TrainingPanel::trainingConfigChanged);
    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("cloneRun")), Qt::LeftButton);
    QCOMPARE(cloned.count(), 1);

    // Delete it (the confirmation answered by a timer).
    QTimer::singleShot(200, this, [] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) {
                box->button(QMessageBox::Yes)->click();
            }
        }
    });
    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("deleteRun")), Qt::LeftButton);
    QCOMPARE(runs->rowCount(), 1);
    RunListModel reopened;
    QVERIFY(reopened.open(QString::fromStdString(engine::api::runStorePath(path.toStdString()))));
    QCOMPARE(reopened.rowCount(), 1);
}

QTEST_MAIN(TestTrainingPanel)
#include "tst_training_panel.moc"
