// SPDX-License-Identifier: Apache-2.0
// "Find learning rate…" in the training configuration form, with clicks: the range test runs on a
// small CSV project, the plot (logarithmic learning-rate axis) holds its points and the suggested
// rate's marker, and "Use suggested" puts the rate into the form.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QDoubleSpinBox>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>

#include <random>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include "engine/io/project.h"
#include "ui/training/lr_finder_dialog.h"
#include "ui/training/training_config_form.h"
#include "ui/training/training_panel.h"

using namespace kiln;
using namespace kiln::ui::training;
using nlohmann::json;

class TestLrFinderDialog : public QObject {
    Q_OBJECT

private slots:
    void findAndUseSuggested() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        {
            QFile f(dir.filePath(QStringLiteral("blobs.csv")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            std::mt19937 gen(3);
            std::normal_distribution<double> noise(0.0, 1.0);
            for (int i = 0; i < 192; ++i) {
                QByteArray line;
                for (int k = 0; k < 4; ++k) line += QByteArray::number((i % 3 - 1) * 1.5 + noise(gen), 'f', 4) + ',';
                f.write(line + QByteArray::number(i % 3) + '\n');
            }
        }
        const json j = {
            {"format", "kiln-project"},
            {"version", 2},
            {"name", "blobs"},
            {"graph",
             {{"nodes", json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                                     {{"name", "h"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 16}, {"activation", "relu"}}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"h"}}, {"attrs", {{"units", 3}}}}})}}},
            {"data", {{"format", "csv"}, {"path", "blobs.csv"}}},
            {"training",
             {{"epochs", 1},
              {"batch_size", 16},
              {"seed", 2},
              {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.01}, {"momentum", 0.9}}},
              {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}}}}};
        auto project = engine::io::parseProject(j.dump(), "blobs.kiln");
        QVERIFY2(project.ok(), project.ok() ? "" : project.error().toString().c_str());
        const QString path = dir.filePath(QStringLiteral("blobs.kiln"));
        QVERIFY(engine::io::saveProject(*project, path.toStdString()).ok());

        TrainingPanel panel;
        panel.resize(900, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProject(*project, path);
        auto* form = panel.findChild<TrainingConfigForm*>();
        QVERIFY(form);
        panel.findChild<QTabWidget*>()->setCurrentWidget(form);
        auto* button = form->findChild<QPushButton*>(QStringLiteral("findLearningRate"));
        QVERIFY(button);
        QTRY_VERIFY(button->isVisible());
        QSignalSpy edited(form, &TrainingConfigForm::configEdited);
        QTest::mouseClick(button, Qt::LeftButton);
        LrFinderDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = panel.findChild<LrFinderDialog*>()) != nullptr);
        QVERIFY(dialog->isVisible());
        QSignalSpy finished(dialog, &LrFinderDialog::finished);
        QVERIFY(finished.wait(60000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        const auto& r = dialog->result();
        QVERIFY(r.points.size() >= 10);
        QCustomPlot* plot = dialog->plot();
        QCOMPARE(plot->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(plot->graph(0)->data()->size(), int(r.points.size()));
        QCOMPARE(plot->graph(1)->data()->size(), int(r.points.size()));
        QCOMPARE(plot->graph(0)->data()->at(0)->key, 1e-7);
        QVERIFY(r.suggestedLr >= 1e-7 && r.suggestedLr <= 10);

        auto* use = dialog->findChild<QPushButton*>(QStringLiteral("lrFinderUse"));
        QVERIFY(use->isEnabled());
        QTest::mouseClick(use, Qt::LeftButton);
        auto* lr = form->findChild<QDoubleSpinBox*>(QStringLiteral("learningRate"));
        QVERIFY(std::abs(lr->value() - r.suggestedLr) <= 0.5e-7 + 1e-12);
        QVERIFY(!edited.isEmpty());
        QCOMPARE(form->config()["optimizer"]["learning_rate"].get<double>(), lr->value());
        QTRY_VERIFY(panel.findChild<LrFinderDialog*>() == nullptr);  // closed and deleted
    }
};

QTEST_MAIN(TestLrFinderDialog)
#include "tst_lr_finder_dialog.moc"
