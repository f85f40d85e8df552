// SPDX-License-Identifier: Apache-2.0
// The studio's workspaces, driven as a user drives them: the bar's buttons and Ctrl+number switch
// the central area (canvas, dataset browser, training view, evaluation, export), each workspace
// keeps its own dock layout across switches and restarts, the training view and the dataset
// browser move between their docks and the centre, and Evaluate and Deploy pick up the newest run.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDialog>
#include <QDockWidget>
#include <QFileInfo>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QUndoStack>

#include "app/kiln/main_window.h"
#include "app/kiln/welcome_page.h"
#include "engine/api/training_job.h"
#include "engine/store/run_store.h"
#include "ui/charts/charts_panel.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/evaluate/evaluate_view.h"
#include "ui/export/export_dialog.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/training/preflight_panel.h"
#include "ui/training/training_panel.h"

using kiln::app::MainWindow;
using Workspace = kiln::app::MainWindow::Workspace;
using kiln::app::WelcomePage;

namespace {
const QString kExample = QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_mlp.kiln");

void settle() {
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(10);
    }
}

// Clicks the workspace's button on the bar, as a user does.
void clickWorkspace(MainWindow& w, Workspace which) {
    auto* bar = w.findChild<QToolBar*>(QStringLiteral("workspaceBar"));
    QVERIFY(bar);
    QWidget* button = bar->widgetForAction(w.workspaceAction(which));
    QVERIFY(button);
    QTest::mouseClick(button, Qt::LeftButton);
    settle();
}

bool inside(const QWidget* widget, const QWidget* ancestor) {
    for (const QWidget* p = widget; p; p = p->parentWidget())
        if (p == ancestor) return true;
    return false;
}
}  // namespace

class TestWorkspaces : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString recoveryDir() const { return m_dir.filePath(QStringLiteral("recovery")); }

    // A copy of the example with one completed run in its history (real SQLite, a real folder).
    QString projectWithRun(QString* runDir) {
        QDir(m_dir.path()).mkpath(QStringLiteral("project"));
        const QString path = m_dir.filePath(QStringLiteral("project/fashion_mlp.kiln"));
        if (!QFile::exists(path)) {
            if (!QFile::copy(kExample, path)) return {};
            QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        }
        const QString dir = m_dir.filePath(QStringLiteral("project/runs/first"));
        QDir().mkpath(dir);
        QFile weights(dir + QStringLiteral("/weights.safetensors"));
        if (!weights.open(QIODevice::WriteOnly)) return {};
        weights.write("not a tensor file: the form only checks that it exists");
        weights.close();
        auto store = kiln::engine::store::RunStore::open(kiln::engine::api::runStorePath(path.toStdString()));
        if (!store.ok()) return {};
        kiln::engine::store::NewRun run;
        run.name = "first";
        run.runDir = dir.toStdString();
        auto id = (*store)->createRun(run);
        if (!id.ok() || !(*store)->setStatus(*id, kiln::engine::store::RunStatus::Completed).ok()) return {};
        *runDir = dir;
        return path;
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_workspaces"));
        QVERIFY(m_dir.isValid());
        QSettings().clear();
    }

    void barSwitchesTheCentralArea() {
        MainWindow w(recoveryDir());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openExample(kExample));
        settle();
        auto* stack = w.findChild<QStackedWidget*>(QStringLiteral("workspaceStack"));
        QVERIFY(stack);

        // Design: the canvas with its editing panels; the training view and the dataset browser
        // have workspaces of their own, so their docks start hidden here.
        QCOMPARE(w.workspace(), Workspace::Design);
        QVERIFY(w.workspaceAction(Workspace::Design)->isChecked());
        QCOMPARE(stack->currentWidget(), w.editor());
        QVERIFY(w.panel(QStringLiteral("palette"))->isVisible());
        QVERIFY(w.panel(QStringLiteral("inspector"))->isVisible());
        QVERIFY(!w.panel(QStringLiteral("training"))->isVisible());
        QVERIFY(!w.panel(QStringLiteral("datasets"))->isVisible());

        // Train: the training view owns the centre, charts first, with most of the width.
        clickWorkspace(w, Workspace::Train);
        QCOMPARE(w.workspace(), Workspace::Train);
        QVERIFY(w.workspaceAction(Workspace::Train)->isChecked());
        QCOMPARE(stack->currentWidget()->objectName(), QStringLiteral("trainWorkspace"));
        kiln::ui::training::TrainingPanel* training = w.trainingPanel();
        QVERIFY(inside(training, stack->currentWidget()));
        QVERIFY(training->isVisible());
        QVERIFY(training->charts()->isVisible());
        // (the column beside them, "Before you train", takes the rest)
        QVERIFY(w.preflightPanel()->isVisible());
        QVERIFY2(training->charts()->width() >= 0.7 * w.width(),
                 qPrintable(QStringLiteral("charts %1 of %2 px").arg(training->charts()->width()).arg(w.width())));
        QVERIFY2(training->charts()->height() >= 0.6 * w.height(),
                 qPrintable(QStringLiteral("charts %1 of %2 px").arg(training->charts()->height()).arg(w.height())));
        // Its dock is empty meanwhile: hidden, and the View menu cannot show it.
        QVERIFY(!w.panel(QStringLiteral("training"))->isVisible());
        QVERIFY(!w.panel(QStringLiteral("training"))->toggleViewAction()->isEnabled());
        QVERIFY(!w.panel(QStringLiteral("palette"))->isVisible());

        // Ctrl+2: Data, the dataset browser in the centre.
        QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
        settle();
        QCOMPARE(w.workspace(), Workspace::Data);
        QCOMPARE(stack->currentWidget()->objectName(), QStringLiteral("dataWorkspace"));
        QVERIFY(inside(w.datasetBrowser(), stack->currentWidget()));
        QVERIFY(w.datasetBrowser()->isVisible());
        // The training view went back into its dock.
        QCOMPARE(w.panel(QStringLiteral("training"))->widget(), training);
        QVERIFY(w.panel(QStringLiteral("training"))->toggleViewAction()->isEnabled());

        // Back to Design (Ctrl+1): the canvas and the docks as they were.
        QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
        settle();
        QCOMPARE(stack->currentWidget(), w.editor());
        QVERIFY(w.panel(QStringLiteral("palette"))->isVisible());
        QVERIFY(w.editor()->isVisible());
        QVERIFY(!inside(w.datasetBrowser(), stack));
        // A power user can still dock the training view beside the canvas.
        w.panel(QStringLiteral("training"))->toggleViewAction()->trigger();
        settle();
        QVERIFY(w.panel(QStringLiteral("training"))->isVisible());
        QVERIFY(training->isVisible());
        QVERIFY(w.close());
    }

    void eachWorkspaceKeepsItsLayout() {
        {
            MainWindow w(recoveryDir());
            w.resize(1600, 1000);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.resetLayout();
            settle();
            // Design without the inspector ...
            w.panel(QStringLiteral("inspector"))->toggleViewAction()->trigger();
            QVERIFY(!w.panel(QStringLiteral("inspector"))->isVisible());
            // ... Data with it (Data starts with no docks at all).
            clickWorkspace(w, Workspace::Data);
            QVERIFY(!w.panel(QStringLiteral("inspector"))->isVisible());
            QVERIFY(!w.panel(QStringLiteral("log"))->isVisible());
            w.panel(QStringLiteral("inspector"))->toggleViewAction()->trigger();
            settle();
            QVERIFY(w.panel(QStringLiteral("inspector"))->isVisible());
            clickWorkspace(w, Workspace::Design);
            QVERIFY(!w.panel(QStringLiteral("inspector"))->isVisible());
            clickWorkspace(w, Workspace::Data);
            QVERIFY(w.panel(QStringLiteral("inspector"))->isVisible());
            QVERIFY(w.close());  // closed in Data: both layouts are kept
        }
        MainWindow again(recoveryDir());
        again.resize(1600, 1000);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QCOMPARE(again.workspace(), Workspace::Design);  // the studio opens on Design
        QVERIFY(!again.panel(QStringLiteral("inspector"))->isVisible());
        QVERIFY(again.panel(QStringLiteral("palette"))->isVisible());
        clickWorkspace(again, Workspace::Data);
        QVERIFY(again.panel(QStringLiteral("inspector"))->isVisible());
        QVERIFY(!again.panel(QStringLiteral("palette"))->isVisible());
        // Reset Layout: every workspace back to its defaults.
        again.findChild<QAction*>(QStringLiteral("actionResetLayout"))->trigger();
        settle();
        QVERIFY(!again.panel(QStringLiteral("inspector"))->isVisible());
        clickWorkspace(again, Workspace::Design);
        QVERIFY(again.panel(QStringLiteral("inspector"))->isVisible());
        QVERIFY(again.close());
    }

    void evaluateAndDeployTakeTheNewestRun() {
        QString runDir;
        const QString path = projectWithRun(&runDir);
        QVERIFY(!path.isEmpty());
        MainWindow w(recoveryDir());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        settle();

        QSignalSpy evaluated(w.evaluateView(), &kiln::ui::evaluate::EvaluateView::finished);
        clickWorkspace(w, Workspace::Evaluate);
        auto* stack = w.findChild<QStackedWidget*>(QStringLiteral("workspaceStack"));
        QCOMPARE(stack->currentWidget()->objectName(), QStringLiteral("evaluateWorkspace"));
        QVERIFY(w.evaluateView()->isVisible());
        QCOMPARE(QDir::cleanPath(w.evaluateView()->weights()), QDir::cleanPath(runDir));
        QVERIFY(!w.findChild<QLabel*>(QStringLiteral("evaluateHint"))->isVisible());
        // The run is evaluated without a click; its weights file here is not a tensor file, and the
        // view says so, naming it.
        QTRY_COMPARE_WITH_TIMEOUT(evaluated.size(), 1, 60000);
        QCOMPARE(evaluated.front().at(0).toBool(), false);
        QVERIFY2(evaluated.front().at(1).toString().contains(QLatin1String("weights.safetensors")),
                 qPrintable(evaluated.front().at(1).toString()));

        // Deploy: the export form, in the window (not a dialog of its own), given the run's weights.
        clickWorkspace(w, Workspace::Deploy);
        kiln::ui::ExportDialog* form = w.deployView();
        QVERIFY(form);
        QVERIFY(form->isVisible());
        QVERIFY(!form->isWindow());
        auto* weights = form->findChild<QComboBox*>(QStringLiteral("weights"));
        QVERIFY(weights);
        QCOMPARE(QDir::cleanPath(weights->currentText()), QDir::cleanPath(runDir + QStringLiteral("/weights.safetensors")));
        QVERIFY(!w.findChild<QPushButton*>(QStringLiteral("deploySave"))->isVisible());
        // Escape (which closes a dialog) leaves the embedded form in place.
        weights->setFocus();
        QTest::keyClick(weights, Qt::Key_Escape);
        settle();
        QVERIFY(form->isVisible());

        // File > Export Model... leads to the same place.
        clickWorkspace(w, Workspace::Design);
        w.findChild<QAction*>(QStringLiteral("actionExportModel"))->trigger();
        settle();
        QCOMPARE(w.workspace(), Workspace::Deploy);
        QCOMPARE(w.deployView(), form);

        // A new, untitled project: nothing to evaluate or export yet, and the pages say so.
        QVERIFY(w.newProject());
        settle();
        QVERIFY(!w.deployView());
        QVERIFY(w.findChild<QLabel*>(QStringLiteral("deployHint"))->isVisible());
        QVERIFY(w.findChild<QPushButton*>(QStringLiteral("deploySave"))->isVisible());
        clickWorkspace(w, Workspace::Evaluate);
        QVERIFY(w.findChild<QLabel*>(QStringLiteral("evaluateHint"))->isVisible());
        QVERIFY(w.close());
    }

    void welcomePageAndTour() {
        MainWindow w(recoveryDir());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.showWelcome();
        settle();
        auto* stack = w.findChild<QStackedWidget*>(QStringLiteral("workspaceStack"));
        QVERIFY(w.welcomeShown());
        QCOMPARE(stack->currentWidget(), w.welcomePage());
        QVERIFY(!w.panel(QStringLiteral("palette"))->isVisible());  // the page has the window
        // The examples, each with a picture of its graph.
        QListWidget* examples = w.welcomePage()->exampleList();
        QCOMPARE(examples->count(), MainWindow::exampleProjects().size());
        QVERIFY(examples->count() >= 4);
        for (int i = 0; i < examples->count(); ++i) QVERIFY(!examples->item(i)->icon().isNull());
        QVERIFY(!WelcomePage::projectThumbnail(MainWindow::exampleProjects().front(), QSize(200, 150)).isNull());

        // Step 1 of the tour opens the Fashion-MNIST example on the canvas, with its panels back.
        QTest::mouseClick(w.welcomePage()->tourButtons().at(0), Qt::LeftButton);
        settle();
        QVERIFY(!w.welcomeShown());
        QCOMPARE(stack->currentWidget(), w.editor());
        QCOMPARE(QFileInfo(w.document()->filePath()).fileName(), QStringLiteral("fashion_mlp.kiln"));
        QVERIFY(w.panel(QStringLiteral("palette"))->isVisible());
        // Step 4 shows Train.
        w.showWelcome();
        settle();
        QTest::mouseClick(w.welcomePage()->tourButtons().at(3), Qt::LeftButton);
        settle();
        QCOMPARE(w.workspace(), Workspace::Train);

        // Help > Welcome, then an example chosen with the keyboard.
        w.findChild<QAction*>(QStringLiteral("actionWelcome"))->trigger();
        settle();
        QCOMPARE(w.workspace(), Workspace::Design);
        QCOMPARE(stack->currentWidget(), w.welcomePage());
        // Another workspace and back: the page is still there, Design's panels still hidden.
        clickWorkspace(w, Workspace::Data);
        clickWorkspace(w, Workspace::Design);
        QCOMPARE(stack->currentWidget(), w.welcomePage());
        QVERIFY(!w.panel(QStringLiteral("palette"))->isVisible());
        int two = -1;
        for (int i = 0; i < examples->count(); ++i)
            if (examples->item(i)->text() == QLatin1String("two_tower")) two = i;
        QVERIFY(two >= 0);
        examples->setFocus();
        examples->setCurrentRow(two);
        QTest::keyClick(examples, Qt::Key_Return);
        settle();
        QCOMPARE(QFileInfo(w.document()->filePath()).fileName(), QStringLiteral("two_tower.kiln"));
        QCOMPARE(stack->currentWidget(), w.editor());
        QVERIFY(w.panel(QStringLiteral("inspector"))->isVisible());
        QVERIFY(w.close());
    }

    // Beside the charts: the device, the predicted memory against free memory with a one-click
    // batch that fits, and the time of an epoch from a few real steps.
    void beforeYouTrain() {
        if (!QFile::exists(QDir(qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data")))
                               .filePath(QStringLiteral("fashion-mnist/train-images-idx3-ubyte.gz"))))
            QSKIP("Fashion-MNIST is not installed (tools/fetch_data.sh)");
        QDir(m_dir.path()).mkpath(QStringLiteral("preflight"));
        const QString path = m_dir.filePath(QStringLiteral("preflight/fashion_mlp.kiln"));
        QFile::remove(path);
        QVERIFY(QFile::copy(kExample, path));
        QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        MainWindow w(recoveryDir());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        kiln::ui::training::PreflightPanel* preflight = w.preflightPanel();
        QSignalSpy checked(preflight, &kiln::ui::training::PreflightPanel::checked);
        clickWorkspace(w, Workspace::Train);
        QVERIFY(preflight->isVisible());
        QVERIFY(checked.wait(30000));
        QVERIFY2(preflight->hasReport(), qPrintable(preflight->errorText()));
        QCOMPARE(preflight->report().batch, qint64(128));
        QVERIFY(preflight->report().fits);
        QVERIFY(w.findChild<QLabel*>(QStringLiteral("preflightDevice"))->text().contains(QStringLiteral("CPU")));
        QVERIFY(w.findChild<QLabel*>(QStringLiteral("preflightMemory"))->text().contains(QStringLiteral("128")));
        QVERIFY(!w.findChild<QPushButton*>(QStringLiteral("useSuggestedBatch"))->isVisible());

        // Timing: a few real steps give the epoch time.
        checked.clear();
        QTest::mouseClick(w.findChild<QPushButton*>(QStringLiteral("measureEpochTime")), Qt::LeftButton);
        QVERIFY(checked.wait(60000));
        const auto& timed = preflight->report();
        QCOMPARE(timed.measuredSteps, kiln::ui::training::PreflightPanel::kCalibrationSteps);
        QCOMPARE(timed.stepsPerEpoch, qint64(446));  // 57,000 training samples (5 % held out) / 128
        QVERIFY(timed.epochSeconds > 0);
        qInfo("Fashion-MNIST MLP: %lld steps of %.1f ms = %.1f s per epoch (first step %.0f ms)",
              static_cast<long long>(timed.stepsPerEpoch), timed.secondsPerStep * 1000, timed.epochSeconds,
              timed.firstStepSeconds * 1000);
        QVERIFY(w.findChild<QLabel*>(QStringLiteral("preflightTime"))->text().contains(QStringLiteral("446")));

        // A batch no machine holds: the panel offers one that fits, and one click sets it.
        kiln::engine::io::Project huge = w.document()->project();
        huge.training["batch_size"] = qint64(1) << 40;
        w.document()->setSections(huge.data, huge.training);
        checked.clear();
        QVERIFY(checked.wait(30000));
        QVERIFY(!preflight->report().fits);
        const qint64 suggested = preflight->report().suggestedBatch;
        QVERIFY(suggested > 0);
        auto* use = w.findChild<QPushButton*>(QStringLiteral("useSuggestedBatch"));
        QTRY_VERIFY(use->isVisible());
        QTest::mouseClick(use, Qt::LeftButton);
        QCOMPARE(w.document()->project().training["batch_size"].get<qint64>(), suggested);
        checked.clear();
        QVERIFY(checked.wait(30000));
        QVERIFY(preflight->report().fits);
        QVERIFY(!use->isVisible());
        // Undo takes it back (a run of edits to the training settings is one step).
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->project().training["batch_size"].get<qint64>(), qint64(128));
        QVERIFY(!w.document()->isModified());
        QVERIFY(w.close());
    }

    void shortcutSheetListsTheWindowsShortcuts() {
        MainWindow w(recoveryDir());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.findChild<QAction*>(QStringLiteral("actionShortcuts"))->trigger();
        auto* dialog = w.findChild<QDialog*>(QStringLiteral("shortcutsDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
        QVERIFY(table && table->rowCount() > 10);
        QStringList lines;
        for (int r = 0; r < table->rowCount(); ++r) lines << table->item(r, 0)->text() + QLatin1Char('=') + table->item(r, 1)->text();
        const QString all = lines.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("Find Node…=Ctrl+F")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("Train=Ctrl+3")), qPrintable(all));
        QVERIFY2(all.contains(QStringLiteral("Save=Ctrl+S")), qPrintable(all));
        dialog->close();
        QVERIFY(w.close());
    }
};

QTEST_MAIN(TestWorkspaces)
#include "tst_workspaces.moc"
