// SPDX-License-Identifier: Apache-2.0
// The sweep dialog driven with keys and clicks: two parameters typed into the table (the
// learning rate as a choice of two, a node attribute), a grid of two trials run off the GUI
// thread, the results table filled and sortable, one polyline per trial in the parallel
// coordinates, and "Apply best" handing over the project with the best trial's values. A path
// the project lacks is refused naming the JSON path, before anything trains. Save Spec… and
// Open Spec… (the dialog's save and open of a chosen file): the file is the spec kiln-train --sweep reads,
// the dialog reopened for the project comes back with its last spec, and specs with errors open
// with the error naming the file and the JSON path.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QAbstractItemModel>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>

#include <random>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include "engine/api/sweep.h"
#include "engine/io/project.h"
#include "engine/store/run_store.h"
#include "ui/training/sweep_dialog.h"

using namespace kiln;
using namespace kiln::ui::training;
using nlohmann::json;

namespace {

// A small 3-class CSV project with a validation split, saved in `dir`.
QString blobsProject(const QTemporaryDir& dir, engine::io::Project& project) {
    QFile f(dir.filePath(QStringLiteral("blobs.csv")));
    if (!f.open(QIODevice::WriteOnly)) return {};
    std::mt19937 gen(3);
    std::normal_distribution<double> noise(0.0, 1.0);
    for (int i = 0; i < 240; ++i) {
        QByteArray line;
        for (int k = 0; k < 4; ++k) line += QByteArray::number((i % 3 - 1) * 1.5 + noise(gen), 'f', 4) + ',';
        f.write(line + QByteArray::number(i % 3) + '\n');
    }
    f.close();
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
         {{"epochs", 3},
          {"batch_size", 16},
          {"seed", 2},
          {"validation_split", 0.25},
          {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.01}}},
          {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
          {"metrics", {"accuracy"}}}}};
    auto p = engine::io::parseProject(j.dump(), "blobs.kiln");
    if (!p.ok()) return {};
    const QString path = dir.filePath(QStringLiteral("blobs.kiln"));
    if (!engine::io::saveProject(*p, path.toStdString()).ok()) return {};
    project = *engine::io::loadProject(path.toStdString());
    return path;
}

// Types `text` into the values cell of `row` through the table's own editor.
void typeValues(QTableWidget* table, int row, const QString& text) {
    const QRect cell = table->visualItemRect(table->item(row, 2));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QLineEdit* editor = nullptr;
    QTRY_VERIFY((editor = qobject_cast<QLineEdit*>(QApplication::focusWidget())) != nullptr);
    editor->selectAll();
    QTest::keyClicks(editor, text);
    QTest::keyClick(editor, Qt::Key_Return);
}

void typePath(QComboBox* box, const QString& path) {
    box->lineEdit()->selectAll();
    QTest::keyClicks(box->lineEdit(), path);
}

void typeNumber(QSpinBox* box, int value) {
    box->setFocus();
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, QString::number(value));
    QTest::keyClick(box, Qt::Key_Tab);
}

void writeText(const QString& path, const QByteArray& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) qFatal("cannot write %s", qPrintable(path));
}

}  // namespace

class TestSweepDialog : public QObject {
    Q_OBJECT

private slots:
    void runTwoTrialsAndApplyBest() {
        QTemporaryDir dir;
        engine::io::Project project;
        const QString path = blobsProject(dir, project);
        QVERIFY(!path.isEmpty());
        SweepDialog dialog(project, path);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));

        auto* table = dialog.findChild<QTableWidget*>(QStringLiteral("sweepParameters"));
        auto* add = dialog.findChild<QPushButton*>(QStringLiteral("sweepAddParameter"));
        auto* run = dialog.findChild<QPushButton*>(QStringLiteral("sweepRun"));
        auto* apply = dialog.findChild<QPushButton*>(QStringLiteral("sweepApplyBest"));
        QVERIFY(table && add && run && apply);
        QVERIFY(!run->isEnabled());  // nothing to sweep yet
        QTest::mouseClick(add, Qt::LeftButton);
        QTest::mouseClick(add, Qt::LeftButton);
        QCOMPARE(table->rowCount(), 2);
        typePath(dialog.findChild<QComboBox*>(QStringLiteral("sweepPath0")), QStringLiteral("learning_rate"));
        typeValues(table, 0, QStringLiteral("0.0005, 0.2"));
        typePath(dialog.findChild<QComboBox*>(QStringLiteral("sweepPath1")), QStringLiteral("nodes.h.units"));
        typeValues(table, 1, QStringLiteral("8"));
        QCOMPARE(table->item(0, 2)->text(), QStringLiteral("0.0005, 0.2"));

        // Grid (the second strategy), a budget of two trials, four epochs each.
        auto* strategy = dialog.findChild<QComboBox*>(QStringLiteral("sweepStrategy"));
        strategy->setFocus();
        QTest::keyClick(strategy, Qt::Key_Down);
        QCOMPARE(strategy->currentIndex(), 1);
        typeNumber(dialog.findChild<QSpinBox*>(QStringLiteral("sweepTrials")), 2);
        typeNumber(dialog.findChild<QSpinBox*>(QStringLiteral("sweepEpochs")), 4);
        QCOMPARE(dialog.findChild<QComboBox*>(QStringLiteral("sweepObjective"))->currentText(), QStringLiteral("val_accuracy"));
        QCOMPARE(dialog.findChild<QComboBox*>(QStringLiteral("sweepMode"))->currentIndex(), 1);  // maximise

        QString error;
        const auto spec = dialog.spec(&error);
        QVERIFY2(spec, qPrintable(error));
        QCOMPARE(spec->parameters.size(), size_t(2));
        QCOMPARE(spec->parameters[1].values.front().get<int64_t>(), int64_t(8));

        QSignalSpy finished(&dialog, &SweepDialog::finished);
        QTest::mouseClick(run, Qt::LeftButton);
        QVERIFY(dialog.running());
        QVERIFY(!run->isEnabled());
        QVERIFY(finished.wait(120000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        // The table: two completed trials with their values; the chart: one polyline each.
        QAbstractItemModel* model = dialog.resultsView()->model();
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(model->headerData(2, Qt::Horizontal).toString(), QStringLiteral("val_accuracy"));
        QCOMPARE(model->headerData(5, Qt::Horizontal).toString(), QStringLiteral("learning_rate"));
        for (int r = 0; r < 2; ++r) {
            QCOMPARE(model->index(r, 1).data().toString(), QStringLiteral("completed"));
            QCOMPARE(model->index(r, 3).data().toString(), QStringLiteral("4"));
            QCOMPARE(model->index(r, 6).data().toString(), QStringLiteral("8"));
        }
        QCOMPARE(dialog.chart()->plottableCount(), 2);
        // Sorting by the objective (a click on its header, twice: descending) puts the best first.
        QHeaderView* header = dialog.resultsView()->horizontalHeader();
        const int x = header->sectionViewportPosition(2) + header->sectionSize(2) / 2;
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, QPoint(x, header->height() / 2));
        if (header->sortIndicatorOrder() != Qt::DescendingOrder)
            QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, QPoint(x, header->height() / 2));
        QCOMPARE(header->sortIndicatorSection(), 2);
        const int best = dialog.bestTrial();
        QVERIFY(best >= 0);
        const auto& bestTrial = dialog.trials()[size_t(best)];
        QCOMPARE(model->index(0, 0).data().toInt(), bestTrial.number);
        QVERIFY(model->index(0, 2).data(Qt::UserRole).toDouble() >= model->index(1, 2).data(Qt::UserRole).toDouble());

        // Both trials are runs in the project's history.
        auto store = engine::store::RunStore::open(dir.filePath(QStringLiteral(".kiln/runs.sqlite")).toStdString());
        QVERIFY(store.ok());
        QCOMPARE((*store)->listRuns()->size(), size_t(2));

        QVERIFY(apply->isEnabled());
        QSignalSpy applied(&dialog, &SweepDialog::applyBestRequested);
        QTest::mouseClick(apply, Qt::LeftButton);
        QCOMPARE(applied.count(), 1);
        const auto changed = applied.first().at(0).value<engine::io::Project>();
        QCOMPARE(changed.training["optimizer"]["learning_rate"].get<double>(), bestTrial.params["learning_rate"].get<double>());
        QVERIFY(changed.training["optimizer"]["learning_rate"].get<double>() != 0.01);
        QCOMPARE(changed.graph.node("h")->attrs.getInt("units"), int64_t(8));
        QCOMPARE(project.graph.node("h")->attrs.getInt("units"), int64_t(16));
    }

    void badPathIsRefusedBeforeTraining() {
        QTemporaryDir dir;
        engine::io::Project project;
        const QString path = blobsProject(dir, project);
        QVERIFY(!path.isEmpty());
        SweepDialog dialog(project, path);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* table = dialog.findChild<QTableWidget*>(QStringLiteral("sweepParameters"));
        QTest::mouseClick(dialog.findChild<QPushButton*>(QStringLiteral("sweepAddParameter")), Qt::LeftButton);
        typePath(dialog.findChild<QComboBox*>(QStringLiteral("sweepPath0")), QStringLiteral("nodes.hidden.units"));
        typeValues(table, 0, QStringLiteral("8, 32"));
        QSignalSpy finished(&dialog, &SweepDialog::finished);
        QTest::mouseClick(dialog.findChild<QPushButton*>(QStringLiteral("sweepRun")), Qt::LeftButton);
        QCOMPARE(finished.count(), 1);
        QVERIFY(!finished.first().at(0).toBool());
        QVERIFY(!dialog.running());
        const QString status = dialog.findChild<QLabel*>(QStringLiteral("sweepStatus"))->text();
        QVERIFY2(status.contains(QLatin1String("parameters[0].path")) && status.contains(QLatin1String("hidden")), qPrintable(status));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral(".kiln/runs.sqlite"))));
    }

    void cancelStopsTheSweep() {
        QTemporaryDir dir;
        engine::io::Project project;
        const QString path = blobsProject(dir, project);
        QVERIFY(!path.isEmpty());
        auto spec = engine::api::parseSweepSpec(json::parse(R"({
          "parameters": [{"path": "learning_rate", "kind": "log_uniform", "min": 0.001, "max": 0.1}],
          "strategy": "random", "trials": 50, "epochs": 2000, "objective": "val_loss"})"));
        QVERIFY(spec.ok());
        SweepDialog dialog(project, path);
        dialog.setSpec(*spec);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* cancel = dialog.findChild<QPushButton*>(QStringLiteral("sweepCancel"));
        QVERIFY(!cancel->isEnabled());
        QSignalSpy finished(&dialog, &SweepDialog::finished);
        QTest::mouseClick(dialog.findChild<QPushButton*>(QStringLiteral("sweepRun")), Qt::LeftButton);
        QTRY_VERIFY(dialog.resultsView()->model()->rowCount() >= 1);
        QVERIFY(cancel->isEnabled());
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QVERIFY(finished.first().at(0).toBool());
        QVERIFY(!dialog.running());
        // The trial in progress stopped early and no other started.
        QVERIFY(dialog.trials().size() < 50);
        QCOMPARE(dialog.trials().back().status, engine::api::TrialStatus::Cancelled);
        QVERIFY(dialog.trials().back().epochs < 2000);
        QVERIFY(finished.first().at(1).toString().startsWith(QLatin1String("Cancelled.")));
    }

    void saveOpenAndRemember() {
        QTemporaryDir dir;
        engine::io::Project project;
        const QString path = blobsProject(dir, project);
        QVERIFY(!path.isEmpty());
        const QString saved = dir.filePath(QStringLiteral("lr-grid.json"));
        {
            SweepDialog dialog(project, path);
            dialog.show();
            QVERIFY(QTest::qWaitForWindowExposed(&dialog));
            QTest::mouseClick(dialog.findChild<QPushButton*>(QStringLiteral("sweepAddParameter")), Qt::LeftButton);
            typePath(dialog.findChild<QComboBox*>(QStringLiteral("sweepPath0")), QStringLiteral("learning_rate"));
            typeValues(dialog.findChild<QTableWidget*>(QStringLiteral("sweepParameters")), 0, QStringLiteral("0.001, 0.01, 0.1"));
            auto* strategy = dialog.findChild<QComboBox*>(QStringLiteral("sweepStrategy"));
            strategy->setFocus();
            QTest::keyClick(strategy, Qt::Key_Down);  // grid
            auto* trials = dialog.findChild<QSpinBox*>(QStringLiteral("sweepTrials"));
            typeNumber(trials, 0);  // every point of the grid
            QCOMPARE(trials->text(), QStringLiteral("all"));
            typeNumber(dialog.findChild<QSpinBox*>(QStringLiteral("sweepEpochs")), 2);

            QVERIFY(dialog.findChild<QPushButton*>(QStringLiteral("sweepSaveSpec"))->isEnabled());
            QVERIFY(dialog.saveSpecFile(saved));
            const QString status = dialog.findChild<QLabel*>(QStringLiteral("sweepStatus"))->text();
            QVERIFY2(QFileInfo::exists(saved), qPrintable(status));
            QVERIFY2(status.contains(QLatin1String("lr-grid.json")), qPrintable(status));
            // The file is a spec as kiln-train --sweep reads it.
            auto spec = engine::api::loadSweepSpec(saved.toStdString());
            QVERIFY2(spec.ok(), spec.ok() ? "" : spec.error().toString().c_str());
            QCOMPARE(spec->parameters.size(), size_t(1));
            QCOMPARE(spec->parameters[0].path, std::string("learning_rate"));
            QCOMPARE(spec->parameters[0].values, (std::vector<json>{0.001, 0.01, 0.1}));
            QCOMPARE(spec->strategy, engine::api::SweepStrategy::Grid);
            QCOMPARE(spec->trials, 0);
            QCOMPARE(spec->epochs.value_or(0), 2);
            QCOMPARE(spec->objective, std::string("val_accuracy"));
            QCOMPARE(engine::api::sweepConfigurations(*spec).size(), size_t(3));
            QVERIFY(!QFileInfo::exists(dialog.rememberedSpecPath()));
            QTest::keyClick(&dialog, Qt::Key_Escape);  // closing keeps it as the project's last spec
            QVERIFY(!dialog.isVisible());
            QVERIFY(QFileInfo::exists(dialog.rememberedSpecPath()));
            QVERIFY(dialog.rememberedSpecPath().startsWith(dir.path()));
        }

        // Reopened for the same project: the spec is back.
        SweepDialog dialog(project, path);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* table = dialog.findChild<QTableWidget*>(QStringLiteral("sweepParameters"));
        auto* status = dialog.findChild<QLabel*>(QStringLiteral("sweepStatus"));
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(dialog.findChild<QComboBox*>(QStringLiteral("sweepPath0"))->currentText(), QStringLiteral("learning_rate"));
        QCOMPARE(table->item(0, 2)->text(), QStringLiteral("0.001, 0.01, 0.1"));
        QCOMPARE(dialog.findChild<QComboBox*>(QStringLiteral("sweepStrategy"))->currentIndex(), 1);
        QCOMPARE(dialog.findChild<QSpinBox*>(QStringLiteral("sweepTrials"))->text(), QStringLiteral("all"));
        QVERIFY2(status->text().contains(QLatin1String("last sweep spec")), qPrintable(status->text()));

        // A spec with a bad value: the error names the file and the JSON path; the controls stay.
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        writeText(bad, R"({"parameters": [{"path": "learning_rate", "kind": "uniform", "min": 0.1, "max": "high"}]})");
        dialog.openSpecFile(bad);
        QVERIFY2(status->text().contains(QLatin1String("bad.json")) && status->text().contains(QLatin1String("parameters[0].max")),
                 qPrintable(status->text()));
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(table->item(0, 2)->text(), QStringLiteral("0.001, 0.01, 0.1"));

        // Not JSON at all: the file and the line.
        const QString broken = dir.filePath(QStringLiteral("broken.json"));
        writeText(broken, "{\n  \"parameters\": [\n    {\"path\": \"learning_rate\",,}\n  ]\n}\n");
        dialog.openSpecFile(broken);
        QVERIFY2(status->text().contains(QLatin1String("broken.json:3")), qPrintable(status->text()));

        // A spec that parses but names a node the project lacks opens, with that problem shown.
        const QString other = dir.filePath(QStringLiteral("other.json"));
        writeText(other, R"({"parameters": [{"path": "nodes.hidden.units", "kind": "choice", "values": [8, 32]}],
                             "strategy": "random", "trials": 4, "seed": 9, "objective": "val_loss"})");
        dialog.openSpecFile(other);
        // (the row's old widgets are deleted later: the table's own cell holds the new one)
        QCOMPARE(qobject_cast<QComboBox*>(table->cellWidget(0, 0))->currentText(), QStringLiteral("nodes.hidden.units"));
        QCOMPARE(dialog.findChild<QComboBox*>(QStringLiteral("sweepStrategy"))->currentIndex(), 0);
        QCOMPARE(dialog.findChild<QSpinBox*>(QStringLiteral("sweepSeed"))->value(), 9);
        QVERIFY2(status->text().contains(QLatin1String("parameters[0].path")) && status->text().contains(QLatin1String("hidden")),
                 qPrintable(status->text()));
        // It is not valid for this project, so it does not replace the remembered one.
        dialog.close();
        auto remembered = engine::api::loadSweepSpec(dialog.rememberedSpecPath().toStdString());
        QVERIFY(remembered.ok());
        QCOMPARE(remembered->parameters[0].path, std::string("learning_rate"));
    }

    // tools/sweep_screenshot.sh runs this under Xvfb with KILN_SCREENSHOT set: the real window
    // after a 16-trial sweep of the two-tower example.
    void screenshot() {
        const QByteArray shot = qgetenv("KILN_SCREENSHOT");
        if (shot.isEmpty()) QSKIP("takes the documentation's screenshot when KILN_SCREENSHOT names the file");
        const QString data = qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!QFileInfo::exists(data + QStringLiteral("/sklearn/breast_cancer.csv"))) QSKIP("the breast-cancer table is not cached");
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("two_tower.kiln"));
        QVERIFY(QFile::copy(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/two_tower.kiln"), path));
        auto project = engine::io::loadProject(path.toStdString());
        QVERIFY(project.ok());
        auto spec = engine::api::parseSweepSpec(json::parse(R"({
          "parameters": [
            {"path": "learning_rate", "kind": "log_uniform", "min": 0.0001, "max": 0.01},
            {"path": "nodes.a_drop.rate", "kind": "uniform", "min": 0.0, "max": 0.5},
            {"path": "nodes.a_fc1.units", "kind": "int_uniform", "min": 4, "max": 32},
            {"path": "batch_size", "kind": "choice", "values": [16, 32, 64]}],
          "strategy": "random", "seed": 4, "trials": 16, "epochs": 20,
          "objective": {"metric": "val_loss", "mode": "min"},
          "early_stopping": {"type": "median", "min_epochs": 5, "min_trials": 4}})"));
        QVERIFY(spec.ok());
        SweepDialog dialog(*project, path);
        dialog.setSpec(*spec);
        dialog.resize(1100, 820);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QSignalSpy finished(&dialog, &SweepDialog::finished);
        dialog.start();
        QVERIFY(finished.wait(300000));
        QVERIFY(finished.first().at(0).toBool());
        dialog.resultsView()->sortByColumn(2, Qt::AscendingOrder);
        QTest::qWait(300);
        QVERIFY(dialog.grab().save(QString::fromLocal8Bit(shot)));
    }
};

QTEST_MAIN(TestSweepDialog)
#include "tst_sweep_dialog.moc"
