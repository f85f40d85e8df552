// SPDX-License-Identifier: Apache-2.0
// Train > Sweep… in the studio: the menu entry opens the sweep dialog on the open project; a
// two-trial sweep of the two-tower example runs; Apply best sets the best learning rate and a
// node attribute in the document as one step that Edit > Undo takes back and Redo puts again.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAction>
#include <QApplication>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <nlohmann/json.hpp>

#include "app/kiln/main_window.h"
#include "engine/api/sweep.h"
#include "engine/io/project.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/training/sweep_dialog.h"

using kiln::app::MainWindow;
using namespace kiln::ui;
using namespace kiln::engine;

class TestSweepMenu : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_sweep_menu"));
        QVERIFY(m_dir.isValid());
        QSettings().clear();
        const QString data = qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!QFileInfo::exists(data + QStringLiteral("/sklearn/breast_cancer.csv")))
            QSKIP("the breast-cancer table is not cached: run tools/fetch_data.sh");
    }

    void sweepFromTheTrainMenuAndUndoApplyBest() {
        const QString path = m_dir.filePath(QStringLiteral("two_tower.kiln"));
        QVERIFY(QFile::copy(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/two_tower.kiln"), path));
        MainWindow w(m_dir.filePath(QStringLiteral("recovery")));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        const io::Project before = w.document()->project();
        const double lrBefore = before.training["optimizer"]["learning_rate"].get<double>();
        QCOMPARE(before.graph.node("a_fc1")->attrs.getInt("units"), int64_t(16));

        auto* action = w.findChild<QAction*>(QStringLiteral("actionSweep"));
        QVERIFY(action);
        auto* trainMenu = w.menuBar()->findChild<QMenu*>(QStringLiteral("menuTrain"));
        QVERIFY(trainMenu && trainMenu->actions().contains(action));
        QVERIFY(!action->text().isEmpty());
        action->trigger();
        training::SweepDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = w.findChild<training::SweepDialog*>(QStringLiteral("sweepDialog"))) != nullptr);
        QTRY_VERIFY(dialog->isVisible());
        auto spec = api::parseSweepSpec(nlohmann::json::parse(R"({
          "parameters": [{"path": "learning_rate", "values": [0.0001, 0.005]},
                         {"path": "nodes.a_fc1.units", "values": [12]}],
          "strategy": "grid", "epochs": 6, "objective": "val_loss"})"));
        QVERIFY(spec.ok());
        dialog->setSpec(*spec);
        QSignalSpy finished(dialog, &training::SweepDialog::finished);
        QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("sweepRun")), Qt::LeftButton);
        QVERIFY(finished.wait(120000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(dialog->trials().size(), size_t(2));
        const auto& best = dialog->trials()[size_t(dialog->bestTrial())];
        const double bestLr = best.params["learning_rate"].get<double>();

        const int steps = w.document()->undoStack()->count();
        QTest::mouseClick(dialog->findChild<QPushButton*>(QStringLiteral("sweepApplyBest")), Qt::LeftButton);
        io::Project after = w.document()->project();
        QCOMPARE(after.training["optimizer"]["learning_rate"].get<double>(), bestLr);
        QCOMPARE(after.graph.node("a_fc1")->attrs.getInt("units"), int64_t(12));
        QVERIFY(w.document()->isModified());
        // One step of the undo stack.
        QCOMPARE(w.document()->undoStack()->count(), steps + 1);
        w.document()->undoStack()->undo();
        after = w.document()->project();
        QCOMPARE(after.training["optimizer"]["learning_rate"].get<double>(), lrBefore);
        QCOMPARE(after.graph.node("a_fc1")->attrs.getInt("units"), int64_t(16));
        w.document()->undoStack()->redo();
        after = w.document()->project();
        QCOMPARE(after.training["optimizer"]["learning_rate"].get<double>(), bestLr);
        QCOMPARE(after.graph.node("a_fc1")->attrs.getInt("units"), int64_t(12));
        dialog->close();
    }
};

QTEST_MAIN(TestSweepMenu)
#include "tst_sweep_menu.moc"
