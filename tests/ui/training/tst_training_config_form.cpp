// SPDX-License-Identifier: Apache-2.0
// The configuration form's fine-tuning stages: the table shows and edits training.stages (fields it
// does not show are kept), errors name the stage, the discriminative learning-rate preset, and a
// real staged run in the training view whose charts mark where each stage begins, and a run started
// from another model's weights (refused when they do not fit, loaded by name with a report); the
// histogram frequency field.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "ui/charts/charts_panel.h"
#include "ui/training/training_config_form.h"
#include "ui/training/training_panel.h"

using namespace kiln;
using namespace kiln::ui::training;
using nlohmann::json;

namespace {

// x [4] -> body (Dense 8, relu) -> bn -> logits (Dense 2): training data in a CSV beside it.
engine::io::Project project(const QString& csv, const json& training)
{
    const json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", "stages"},
        {"graph",
         {{"nodes",
           json::array({{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                        {{"name", "body"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 8}, {"activation", "relu"}}}},
                        {{"name", "bn"}, {"op", "BatchNormalization"}, {"inputs", {"body"}}},
                        {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"bn"}}, {"attrs", {{"units", 2}}}}})}}},
        {"data", {{"format", "csv"}, {"path", csv.toStdString()}, {"split", {{"validation", 0.25}}}}},
        {"training", training}};
    auto p = engine::io::parseProject(j.dump(), "stages.kiln");
    if (!p.ok()) {
        qFatal("parseProject: %s", p.error().toString().c_str());
    }
    return p.value();
}

json baseTraining()
{
    return {{"epochs", 3},
            {"batch_size", 16},
            {"seed", 2},
            {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
            {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
            {"metrics", {"accuracy"}}};
}

template <typename W>
W* cell(QTableWidget* t, int row, int column)
{
    return qobject_cast<W*>(t->cellWidget(row, column));
}

}  // namespace

class TestTrainingConfigForm : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_csv;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_csv = m_dir.filePath(QStringLiteral("blobs.csv"));
        QFile f(m_csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (int i = 0; i < 160; ++i) {
            const int label = i % 2;
            for (int k = 0; k < 4; ++k) {
                f.write(QByteArray::number((label ? 1.2 : -1.2) + std::sin(i * 7.1 + k * 3.3) * 0.9, 'f', 4) + ',');
            }
            f.write(QByteArray::number(label) + '\n');
        }
    }

    void histogramFrequencyField()
    {
        json training = baseTraining();
        training["histogram_freq"] = 3;
        const auto p = project(m_csv, training);
        TrainingConfigForm form;
        form.setGraph(p.graph);
        form.setConfig(p.training);
        auto* freq = form.findChild<QSpinBox*>(QStringLiteral("histogramFreq"));
        QVERIFY(freq);
        QCOMPARE(freq->value(), 3);
        QSignalSpy edited(&form, &TrainingConfigForm::configEdited);
        freq->setValue(0);  // never
        QCOMPARE(edited.count(), 1);
        QCOMPARE(form.config().at("histogram_freq").get<int>(), 0);
        QCOMPARE(freq->text(), QStringLiteral("never"));
        freq->setValue(1);  // the default: left out of the file
        QVERIFY(!form.config().contains("histogram_freq"));
        QVERIFY(form.isValid());
        // Without the key the field shows the default.
        form.setConfig(baseTraining());
        QCOMPARE(freq->value(), 1);
    }

    // A data.batch_size of streamed data is what training uses: the form's field is shown as
    // overridden (off, with a note naming the data section's value) and is left in the config.
    void batchSizeOverriddenByTheDataSection()
    {
        const auto p = project(m_csv, baseTraining());
        TrainingConfigForm form;
        form.resize(700, 900);
        form.show();
        form.setGraph(p.graph);
        form.setConfig(p.training);
        auto* batch = form.findChild<QSpinBox*>(QStringLiteral("batchSize"));
        auto* note = form.findChild<QLabel*>(QStringLiteral("batchSizeNote"));
        QVERIFY(batch && note);
        form.setDataSection(json{{"format", "folder"}, {"path", "pictures"}, {"batch_size", 64}});
        QVERIFY(!batch->isEnabled());
        QVERIFY(note->isVisible());
        QVERIFY(note->text().contains(QStringLiteral("64")));
        QVERIFY(batch->toolTip().contains(QStringLiteral("64")));
        QCOMPARE(form.dataBatchSize(), 64);
        const int ownBatch = batch->value();
        QCOMPARE(form.config().value("batch_size", 0), ownBatch);
        // Data read whole into memory (a CSV table, IDX files) batch with the training section's
        // size: no override.
        for (const char* format : {"csv", "idx"}) {
            form.setDataSection(json{{"format", format}, {"path", "table.csv"}, {"batch_size", 64}});
            QVERIFY(batch->isEnabled());
            QVERIFY(!note->isVisible());
        }
        form.setDataSection(json{{"format", "folder"}, {"path", "pictures"}});
        QVERIFY(batch->isEnabled());
        QCOMPARE(form.dataBatchSize(), 0);
    }

    void showsAndEditsStages()
    {
        json training = baseTraining();
        training["stages"] = json::array(
            {{{"name", "warm-up"}, {"epochs", 2}, {"trainable", "head"}, {"lr", 0.001}},
             {{"name", "body"}, {"epochs", 3}, {"trainable", {{"from", "bn"}}}, {"lr_factor", 0.1}, {"optimizer", "keep"}},
             {{"epochs", 1}, {"trainable", {{"nodes", {"body", "logits"}}}}}});
        const auto p = project(m_csv, training);
        TrainingConfigForm form;
        form.setGraph(p.graph);
        form.setConfig(p.training);
        QVERIFY2(form.isValid(), qPrintable(form.errorText()));
        QTableWidget* table = form.stagesTable();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, TrainingConfigForm::StageName)->text(), QStringLiteral("warm-up"));
        QCOMPARE(cell<QSpinBox>(table, 1, TrainingConfigForm::StageEpochs)->value(), 3);
        QCOMPARE(cell<QComboBox>(table, 0, TrainingConfigForm::StageTrainable)->currentData().toString(),
                 QStringLiteral("head"));
        // The head choice says which nodes it trains.
        QCOMPARE(cell<QComboBox>(table, 0, TrainingConfigForm::StageTrainable)->itemData(1, Qt::ToolTipRole).toString(),
                 QStringLiteral("Trains logits; the rest is frozen."));
        QCOMPARE(cell<QComboBox>(table, 1, TrainingConfigForm::StageTrainable)->currentData().toString(),
                 QStringLiteral("from:bn"));
        QVERIFY(cell<QComboBox>(table, 2, TrainingConfigForm::StageTrainable)->currentText().contains(QStringLiteral("body, logits")));
        // An absolute rate shows as its factor of the optimizer's rate.
        QCOMPARE(cell<QDoubleSpinBox>(table, 0, TrainingConfigForm::StageLrFactor)->value(), 0.1);
        QCOMPARE(table->item(0, TrainingConfigForm::StageResetOptimizer)->checkState(), Qt::Checked);
        QCOMPARE(table->item(1, TrainingConfigForm::StageResetOptimizer)->checkState(), Qt::Unchecked);
        // With stages the epochs are their sum and not edited on their own.
        auto* epochs = form.findChild<QSpinBox*>(QStringLiteral("epochs"));
        QVERIFY(!epochs->isEnabled());

        QSignalSpy edited(&form, &TrainingConfigForm::configEdited);
        cell<QSpinBox>(table, 1, TrainingConfigForm::StageEpochs)->setValue(4);
        QCOMPARE(edited.count(), 1);
        json t = form.config();
        QCOMPARE(t["epochs"].get<int>(), 7);
        QCOMPARE(epochs->value(), 7);
        QCOMPARE(t["stages"][1]["epochs"].get<int>(), 4);
        QCOMPARE(t["stages"][1]["trainable"], json({{"from", "bn"}}));
        QCOMPARE(t["stages"][1]["optimizer"].get<std::string>(), std::string("keep"));
        // Untouched: the absolute rate of stage 1 and the node list of stage 3.
        QCOMPARE(t["stages"][0]["lr"].get<double>(), 0.001);
        QVERIFY(!t["stages"][0].contains("lr_factor"));
        QCOMPARE(t["stages"][2]["trainable"], json({{"nodes", {"body", "logits"}}}));

        // Editing the factor of stage 1 replaces its absolute rate.
        cell<QDoubleSpinBox>(table, 0, TrainingConfigForm::StageLrFactor)->setValue(0.5);
        t = form.config();
        QVERIFY(!t["stages"][0].contains("lr"));
        QCOMPARE(t["stages"][0]["lr_factor"].get<double>(), 0.5);
        // Trainable choice, name and optimizer reset.
        auto* choice = cell<QComboBox>(table, 0, TrainingConfigForm::StageTrainable);
        choice->setCurrentIndex(choice->findData(QStringLiteral("from:body")));
        table->item(0, TrainingConfigForm::StageName)->setText(QStringLiteral("first"));
        table->item(0, TrainingConfigForm::StageResetOptimizer)->setCheckState(Qt::Unchecked);
        t = form.config();
        QCOMPARE(t["stages"][0]["trainable"], json({{"from", "body"}}));
        QCOMPARE(t["stages"][0]["name"].get<std::string>(), std::string("first"));
        QCOMPARE(t["stages"][0]["optimizer"].get<std::string>(), std::string("keep"));

        // Buttons: add a stage, remove the selected one; without stages the epochs are free again.
        QTest::mouseClick(form.findChild<QPushButton*>(QStringLiteral("addStage")), Qt::LeftButton);
        QCOMPARE(table->rowCount(), 4);
        t = form.config();
        QCOMPARE(t["stages"][3]["trainable"].get<std::string>(), std::string("all"));
        QCOMPARE(t["epochs"].get<int>(), 8);
        for (int i = 0; i < 4; ++i) {
            table->selectRow(0);
            QTest::mouseClick(form.findChild<QPushButton*>(QStringLiteral("removeStage")), Qt::LeftButton);
        }
        QCOMPARE(table->rowCount(), 0);
        t = form.config();
        QVERIFY(!t.contains("stages"));
        QVERIFY(epochs->isEnabled());
    }

    void stageErrorsAreShownAndNotEmitted()
    {
        json training = baseTraining();
        training["stages"] = json::array({{{"epochs", 1}}, {{"epochs", 1}, {"trainable", {{"from", "conv7"}}}}});
        const auto p = project(m_csv, training);
        TrainingConfigForm form;
        form.setGraph(p.graph);
        form.setConfig(p.training);
        QVERIFY(!form.isValid());
        QVERIFY2(form.errorText().contains(QStringLiteral("training.stages[1].trainable.from")), qPrintable(form.errorText()));
        QVERIFY(form.errorText().contains(QStringLiteral("conv7")));
        // Choosing a node the model has makes it valid.
        QSignalSpy edited(&form, &TrainingConfigForm::configEdited);
        auto* choice = cell<QComboBox>(form.stagesTable(), 1, TrainingConfigForm::StageTrainable);
        choice->setCurrentIndex(choice->findData(QStringLiteral("from:logits")));
        QVERIFY2(form.isValid(), qPrintable(form.errorText()));
        QCOMPARE(edited.count(), 1);
    }

    void discriminativePresetLowersEarlierLayers()
    {
        const auto p = project(m_csv, baseTraining());
        TrainingConfigForm form;
        form.setGraph(p.graph);
        form.setConfig(p.training);
        QSignalSpy requested(&form, &TrainingConfigForm::lrMultipliersRequested);
        QTest::mouseClick(form.discriminativeButton(), Qt::LeftButton);
        QCOMPARE(requested.count(), 1);
        const auto m = requested.first().first().value<QHash<QString, double>>();
        // Three layers with parameters, one block each: 2.6^-2, 2.6^-1, 1.
        QCOMPARE(m.size(), 3);
        QCOMPARE(m.value(QStringLiteral("logits")), 1.0);
        QCOMPARE(m.value(QStringLiteral("bn")), 0.3846);
        QCOMPARE(m.value(QStringLiteral("body")), 0.1479);
    }

    // A staged run in the training view: the charts get one marker per stage, where it began.
    void stagedRunMarksStageBoundaries()
    {
        json training = baseTraining();
        training["stages"] = json::array({{{"name", "head"}, {"epochs", 1}, {"trainable", "head"}},
                                          {{"name", "all"}, {"epochs", 2}, {"lr_factor", 0.1}, {"optimizer", "keep"}}});
        const auto p = project(m_csv, training);
        const QString path = m_dir.filePath(QStringLiteral("stages.kiln"));
        QVERIFY(engine::io::saveProject(p, path.toStdString()).ok());
        TrainingPanel panel;
        panel.resize(1000, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProject(p, path);
        QVERIFY2(panel.configForm()->isValid(), qPrintable(panel.configForm()->errorText()));
        QSignalSpy finished(panel.session(), &TrainingSession::finished);
        QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("trainButton")), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        ui::charts::MetricChart* loss = panel.charts()->chart(QStringLiteral("loss"));
        QVERIFY(loss);
        // 120 training samples in batches of 16: 8 steps per epoch; stage 2 begins at step 8.
        QCOMPARE(loss->markerCount(), 2);
        QCOMPARE(loss->markerLabel(0), QStringLiteral("Stage 1: head"));
        QCOMPARE(loss->markerLabel(1), QStringLiteral("Stage 2: all"));
        QCOMPARE(loss->markerX(0), 0.0);
        QCOMPARE(loss->markerX(1), 8.0);
        panel.charts()->setXAxisMode(ui::charts::XAxisMode::Epoch);
        QCOMPARE(loss->markerX(1), 1.0);
        // The learning rate chart shows the drop at the boundary.
        const auto* lr = panel.charts()->chart(QStringLiteral("learning_rate"))->series(panel.liveRunKey(), ui::charts::Split::Train);
        QVERIFY(lr && lr->size() == 24);
        // (The optimizer's rate is stored in single precision.)
        QVERIFY(std::abs(lr->value(7) - 0.01) < 1e-8);
        QVERIFY(std::abs(lr->value(8) - 0.001) < 1e-9);
    }

    // Weights of a model with a 3-class head: body/kernel fits, logits/kernel does not, and one
    // tensor belongs to no node.
    void startsFromPartialWeights()
    {
        const auto p = project(m_csv, baseTraining());
        const QString path = m_dir.filePath(QStringLiteral("weights.kiln"));
        QVERIFY(engine::io::saveProject(p, path.toStdString()).ok());
        const QString weights = m_dir.filePath(QStringLiteral("other.safetensors"));
        std::vector<float> ones(4 * 8, 0.5f);
        QVERIFY(engine::io::saveSafetensors(weights.toStdString(),
                                            {{"body/kernel", engine::Tensor::fromVector(engine::Shape{4, 8}, ones)},
                                             {"logits/kernel", engine::Tensor(engine::Shape{8, 3})},
                                             {"extra/kernel", engine::Tensor(engine::Shape{2})}},
                                            {})
                    .ok());
        TrainingPanel panel;
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setProject(p, path);
        auto* train = panel.findChild<QPushButton*>(QStringLiteral("trainButton"));
        panel.findChild<QLineEdit*>(QStringLiteral("startWeights"))->setText(weights);

        // Exact loading refuses the file and names what does not fit.
        QSignalSpy finished(panel.session(), &TrainingSession::finished);
        QTest::mouseClick(train, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY(!finished.first().at(0).toBool());
        const QString message = finished.first().at(1).toString();
        QVERIFY2(message.contains(QStringLiteral("logits/kernel")) && message.contains(QStringLiteral("extra/kernel")),
                 qPrintable(message));

        // Matching tensors only: trains, and the log gets the report.
        panel.findChild<QCheckBox*>(QStringLiteral("startWeightsPartial"))->setChecked(true);
        QSignalSpy notices(&panel, &TrainingPanel::notice);
        QTRY_VERIFY(train->isEnabled());
        QTest::mouseClick(train, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
        QVERIFY2(finished.last().at(0).toBool(), qPrintable(finished.last().at(1).toString()));
        const QStringList report = panel.weightsReport();
        QVERIFY(!report.isEmpty());
        QVERIFY2(report.first().contains(QStringLiteral("1 tensor(s) loaded, 6 initialised (not in the file), 1 with another shape, 1 unused")),
                 qPrintable(report.first()));
        QVERIFY(report.contains(QStringLiteral("shape mismatch: logits/kernel is [8,3] in the file, [8,2] in the model (initialised)")));
        QVERIFY(report.contains(QStringLiteral("unused: extra/kernel")));
        bool logged = false;
        for (const auto& n : notices) {
            logged = logged || n.at(0).toString().startsWith(report.first());
        }
        QVERIFY(logged);
    }
};

QTEST_MAIN(TestTrainingConfigForm)
#include "tst_training_config_form.moc"
