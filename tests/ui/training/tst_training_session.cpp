// SPDX-License-Identifier: Apache-2.0
// The training thread's top level: a plugin loss that throws a C++ exception through Kiln's C
// interface ends the run with an error the studio shows (state, status line, notice and the run's
// record marked failed); the studio stays alive and the next run of the same window trains.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>

#include "engine/io/project.h"
#include "engine/ops/plugin_registry.h"
#include "ui/training/run_list_model.h"
#include "ui/training/training_config_form.h"
#include "ui/training/training_panel.h"
#include "ui/training/training_session.h"
#include "tests/test_data.h"

using namespace kiln;
using namespace kiln::ui::training;

class TestTrainingSession : public QObject {
    Q_OBJECT

private slots:
    void throwingPluginLossFailsTheRunAndTheStudioLives() {
        if (!QFile::exists(test::dataDir() + QStringLiteral("/sklearn/iris.csv"))) {
            QSKIP("the iris table is not in the data cache (tools/fetch_data.sh)");
        }
        auto loaded = engine::ops::PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/bad/throwing_loss.so");
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("iris_throw.kiln"));
        engine::io::Project project = test::irisProject("iris_throw", 2, 16, 0.05);
        QVERIFY(!project.graph.nodes.empty());
        project.training["loss"] = {{"type", "plugin:throw.ThrowingLoss"}};
        QVERIFY(engine::io::saveProject(project, path.toStdString()).ok());

        TrainingPanel panel;
        panel.resize(1000, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProject(project, path);
        QVERIFY2(panel.configForm()->isValid(), qPrintable(panel.configForm()->errorText()));
        QSignalSpy finished(panel.session(), &TrainingSession::finished);
        QSignalSpy notices(&panel, &TrainingPanel::notice);
        auto* train = panel.findChild<QPushButton*>(QStringLiteral("trainButton"));
        QVERIFY(train);

        QTest::mouseClick(train, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished.first().at(0).toBool(), false);
        const QString message = finished.first().at(1).toString();
        // The code's headline and the exception's own text, through the usual error composition.
        QVERIFY2(message.contains(QStringLiteral("Internal error in Kiln")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("training stopped on an unexpected exception")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("the throwing loss throws on every batch")), qPrintable(message));
        QCOMPARE(panel.session()->state(), TrainingSession::State::Failed);
        // Shown to the user: the status line and an error notice (level 2).
        auto* status = panel.findChild<QLabel*>(QStringLiteral("trainingStatus"));
        QVERIFY(status);
        QVERIFY2(status->text().contains(QStringLiteral("the throwing loss throws on every batch")),
                 qPrintable(status->text()));
        bool errorNotice = false;
        for (const auto& n : notices) {
            errorNotice = errorNotice || (n.at(1).toInt() == 2 && n.at(0).toString().contains(QStringLiteral("throwing loss")));
        }
        QVERIFY(errorNotice);
        // The run's record says it failed.
        QTRY_COMPARE(panel.runs()->rowCount(), 1);
        QCOMPARE(panel.runs()->runAt(0)->status, engine::api::RunStatus::Failed);

        // Alive: the same window trains the project once its loss is a built-in one.
        project.training["loss"] = {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}};
        QVERIFY(engine::io::saveProject(project, path.toStdString()).ok());
        panel.setProject(project, path);
        QVERIFY(train->isEnabled());
        QTest::mouseClick(train, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
        QVERIFY2(finished.at(1).at(0).toBool(), qPrintable(finished.at(1).at(1).toString()));
        QCOMPARE(panel.session()->state(), TrainingSession::State::Finished);
    }
};

QTEST_MAIN(TestTrainingSession)
#include "tst_training_session.moc"
