// SPDX-License-Identifier: Apache-2.0
// The loss and metric choices of the training configuration form: loss terms shown from the
// project, added and removed with the buttons, retyped (built-in focal losses and plugin losses),
// their attributes and weights typed in; the metric list with plugin metrics once the example
// plugin huber_fbeta is loaded (KILN_TEST_PLUGIN_DIR) and a plugin metric that is not loaded kept
// and reported; a term's name typed into its cell; a plugin metric's name and attributes edited
// in the settings shown when it is selected; every edit an undoable step of the document, and
// the result parsed by the engine. With KILN_SCREENSHOT=<file.png> set (and KILN_SCREENSHOT_LANG=zh_CN
// for the Chinese one), `screenshot` saves the Loss box with a plugin loss term as a picture.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training kiln_ui_graph_editor
#include <QtTest>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QTableWidget>
#include <QTranslator>
#include <QUndoStack>

#include <nlohmann/json.hpp>

#include "engine/io/project.h"
#include "engine/ops/plugin_registry.h"
#include "engine/train/config.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/training/loss_editor.h"
#include "ui/training/training_config_form.h"

using namespace kiln;
using namespace kiln::ui::training;
using nlohmann::json;

namespace {

engine::io::Project project(const json& training) {
    const json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", "losses"},
        {"graph",
         {{"nodes",
           json::array(
               {{{"name", "x"}, {"op", "Input"}, {"attrs", {{"shape", {4}}}}},
                {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"x"}}, {"attrs", {{"units", 3}}}}})}}},
        {"training", training}};
    auto p = engine::io::parseProject(j.dump(), "losses.kiln");
    if (!p.ok()) {
        qFatal("parseProject: %s", p.error().toString().c_str());
    }
    return p.value();
}

json baseTraining() {
    return {{"epochs", 2},
            {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
            {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
            {"metrics", {"accuracy"}}};
}

template <typename W>
W* cell(QTableWidget* t, int row, int column) {
    return qobject_cast<W*>(t->cellWidget(row, column));
}

// Types a value into a spin box as a user does: select all, type, Enter.
void typeInto(QAbstractSpinBox* box, const QString& text) {
    box->setFocus();
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, text);
    QTest::keyClick(box, Qt::Key_Return);
}

void choose(QComboBox* combo, const QString& data) {
    const int i = combo->findData(data);
    QVERIFY2(i >= 0, qPrintable(data));
    combo->setCurrentIndex(i);
}

}  // namespace

class TestLossEditor : public QObject {
    Q_OBJECT

private slots:
    void editsLossTermsWithUndo() {
        const auto p = project(baseTraining());
        ui::EditorDocument doc;
        doc.setProject(p, true);
        const int base = doc.undoStack()->index();
        TrainingConfigForm form;
        form.setGraph(p.graph);
        form.setConfig(p.training);
        form.show();
        QVERIFY(QTest::qWaitForWindowExposed(&form));
        connect(&form, &TrainingConfigForm::configEdited, &doc,
                [&doc](const json& t) { doc.setSections(doc.project().data, t); });
        LossEditor* editor = form.lossEditor();
        QTableWidget* table = editor->table();
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(cell<QComboBox>(table, 0, LossEditor::TypeColumn)->currentData().toString(),
                 QStringLiteral("SparseCategoricalCrossentropy"));
        QCOMPARE(cell<QComboBox>(table, 0, LossEditor::OutputColumn)->currentText(),
                 QStringLiteral("logits"));
        auto* fromLogits =
            editor->attributeForm()->findChild<QCheckBox*>(QStringLiteral("lossAttr_from_logits"));
        QVERIFY(fromLogits);
        QVERIFY(fromLogits->isChecked());

        // A second term, made a focal loss with its own gamma and weight.
        QTest::mouseClick(editor->addButton(), Qt::LeftButton);
        QCOMPARE(table->rowCount(), 2);
        choose(cell<QComboBox>(table, 1, LossEditor::TypeColumn),
               QStringLiteral("SparseCategoricalFocalCrossentropy"));
        auto* gamma = editor->attributeForm()->findChild<QDoubleSpinBox*>(QStringLiteral("lossAttr_gamma"));
        QVERIFY(gamma);
        QCOMPARE(gamma->value(), 2.0);
        QVERIFY(editor->attributeForm()->findChild<QDoubleSpinBox*>(QStringLiteral("lossAttr_alpha")));
        typeInto(gamma, QStringLiteral("3"));
        auto* focalLogits =
            editor->attributeForm()->findChild<QCheckBox*>(QStringLiteral("lossAttr_from_logits"));
        QVERIFY(focalLogits && !focalLogits->isChecked());
        QTest::mouseClick(focalLogits, Qt::LeftButton, {}, QPoint(6, focalLogits->height() / 2));
        QVERIFY(focalLogits->isChecked());
        typeInto(cell<QDoubleSpinBox>(table, 1, LossEditor::WeightColumn), QStringLiteral("0.3"));
        QVERIFY2(form.isValid(), qPrintable(form.errorText()));
        const json loss = form.config().at("loss");
        QVERIFY2(loss.is_array() && loss.size() == 2, loss.dump().c_str());
        QCOMPARE(loss[0], (json{{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}));
        QCOMPARE(loss[1], (json{{"type", "SparseCategoricalFocalCrossentropy"},
                                {"gamma", 3.0},
                                {"from_logits", true},
                                {"weight", 0.3}}));
        auto parsed = engine::train::parseTrainingConfig(form.config(), p.graph);
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
        QCOMPARE(parsed->losses[1].spec.weight, 0.3f);
        QCOMPARE(parsed->losses[1].spec.attrs.getFloat("gamma"), 3.0);
        // The edits are in the document, and undo takes them back.
        QCOMPARE(doc.project().training.at("loss"), loss);
        QVERIFY(doc.undoStack()->index() > base);
        while (doc.undoStack()->index() > base) doc.undoStack()->undo();
        QCOMPARE(doc.project().training.at("loss"), p.training.at("loss"));
        form.setConfig(doc.project().training);
        QCOMPARE(table->rowCount(), 1);
        doc.undoStack()->redo();
        form.setConfig(doc.project().training);
        QCOMPARE(table->rowCount(), 2);

        // Remove the first term with the button.
        table->setCurrentCell(0, LossEditor::TargetColumn);
        QTest::mouseClick(editor->removeButton(), Qt::LeftButton);
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(cell<QComboBox>(table, 0, LossEditor::TypeColumn)->currentData().toString(),
                 QStringLiteral("SparseCategoricalFocalCrossentropy"));
        QVERIFY(form.config().at("loss").is_object());
        // The last term cannot be removed: a configuration needs a loss.
        QTest::mouseClick(editor->removeButton(), Qt::LeftButton);
        QCOMPARE(table->rowCount(), 1);
    }

    void offersPluginLossesAndMetrics() {
        json training = baseTraining();
        training["metrics"] = {"accuracy", "plugin:acme.Missing"};
        const auto p = project(training);
        TrainingConfigForm form;
        form.setGraph(p.graph);
        form.setConfig(p.training);
        form.show();
        QVERIFY(QTest::qWaitForWindowExposed(&form));
        QListWidget* metrics = form.metricList();
        auto find = [&](const QString& name) -> QListWidgetItem* {
            for (int i = 0; i < metrics->count(); ++i)
                if (metrics->item(i)->data(Qt::UserRole).toString() == name) return metrics->item(i);
            return nullptr;
        };
        // A plugin metric that is not loaded stays checked and listed; the engine's error shows.
        QListWidgetItem* missing = find(QStringLiteral("plugin:acme.Missing"));
        QVERIFY(missing);
        QCOMPARE(missing->checkState(), Qt::Checked);
        QVERIFY(missing->text().contains(QStringLiteral("not loaded")));
        QVERIFY(!form.isValid());
        QVERIFY2(form.errorText().contains(QStringLiteral("training.metrics[1]")),
                 qPrintable(form.errorText()));
        QVERIFY(!find(QStringLiteral("plugin:example.FBeta")));
        QVERIFY(!LossEditor::lossTypes().contains(QStringLiteral("plugin:example.Huber")));

        auto info = engine::ops::PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/huber_fbeta.so");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        form.refreshPlugins();  // the list is filled again: the plugin's metric joins, the missing one stays
        missing = find(QStringLiteral("plugin:acme.Missing"));
        QVERIFY(missing);
        QCOMPARE(missing->checkState(), Qt::Checked);
        QListWidgetItem* fbeta = find(QStringLiteral("plugin:example.FBeta"));
        QVERIFY(fbeta);
        QVERIFY(fbeta->text().contains(QStringLiteral("F-beta")));
        QSignalSpy edited(&form, &TrainingConfigForm::configEdited);
        missing->setCheckState(Qt::Unchecked);  // fixes the configuration
        QVERIFY2(form.isValid(), qPrintable(form.errorText()));
        fbeta->setCheckState(Qt::Checked);
        QVERIFY(edited.count() >= 2);
        QCOMPARE(form.config().at("metrics"), (json{"accuracy", "plugin:example.FBeta"}));

        // The plugin loss is offered with its own attribute.
        QTableWidget* table = form.lossEditor()->table();
        QComboBox* type = cell<QComboBox>(table, 0, LossEditor::TypeColumn);
        QVERIFY(type->findData(QStringLiteral("plugin:example.Huber")) >= 0);
        QCOMPARE(type->itemText(type->findData(QStringLiteral("plugin:example.Huber"))),
                 QStringLiteral("example.Huber (plugin)"));
        choose(type, QStringLiteral("plugin:example.Huber"));
        auto* delta =
            form.lossEditor()->attributeForm()->findChild<QDoubleSpinBox*>(QStringLiteral("lossAttr_delta"));
        QVERIFY(delta);
        QVERIFY(!form.lossEditor()->attributeForm()->findChild<QCheckBox*>(
            QStringLiteral("lossAttr_from_logits")));
        typeInto(delta, QStringLiteral("0.5"));
        QVERIFY2(form.isValid(), qPrintable(form.errorText()));
        QCOMPARE(form.config().at("loss"), (json{{"type", "plugin:example.Huber"}, {"delta", 0.5}}));
        auto parsed = engine::train::parseTrainingConfig(form.config(), p.graph);
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());

        // A plugin metric written with settings keeps them while it stays checked.
        training["metrics"] = {{{"type", "plugin:example.FBeta"}, {"beta", 2}, {"name", "f2"}}};
        form.setConfig(training);
        QCOMPARE(find(QStringLiteral("plugin:example.FBeta"))->checkState(), Qt::Checked);
        QTest::mouseClick(form.lossEditor()->addButton(), Qt::LeftButton);
        QCOMPARE(form.config().at("metrics"), training["metrics"]);
        find(QStringLiteral("plugin:example.FBeta"))->setCheckState(Qt::Unchecked);
        QVERIFY(!form.config().contains("metrics"));
    }
    // After offersPluginLossesAndMetrics, which starts without the plugin.
    void namesTermsAndMetricSettingsWithUndo();
    void screenshot();
};

void TestLossEditor::namesTermsAndMetricSettingsWithUndo() {
    auto info = engine::ops::PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/huber_fbeta.so");
    QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
    json training = baseTraining();
    training["metrics"] = {"accuracy", "plugin:example.FBeta"};
    const auto p = project(training);
    ui::EditorDocument doc;
    doc.setProject(p, true);
    const int base = doc.undoStack()->index();
    TrainingConfigForm form;
    form.setGraph(p.graph);
    form.setConfig(p.training);
    form.show();
    form.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&form));
    connect(&form, &TrainingConfigForm::configEdited, &doc,
            [&doc](const json& t) { doc.setSections(doc.project().data, t); });

    // The term's name: its cell clicked, F2, typed, Enter.
    QTableWidget* table = form.lossEditor()->table();
    auto typeName = [&](const QString& text) {
        const QRect cellRect = table->visualRect(table->model()->index(0, LossEditor::NameColumn));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cellRect.center());
        QCOMPARE(table->currentColumn(), int(LossEditor::NameColumn));
        QTest::keyClick(table, Qt::Key_F2);
        // The cell's editor has the focus.
        auto* line = qobject_cast<QLineEdit*>(QApplication::focusWidget());
        QVERIFY(line && line->parentWidget() == table->viewport());
        line->selectAll();
        if (text.isEmpty())
            QTest::keyClick(line, Qt::Key_Backspace);
        else
            QTest::keyClicks(line, text);
        QTest::keyClick(line, Qt::Key_Return);
        // The view commits the editor's text on its next turn.
        QTRY_COMPARE(table->item(0, LossEditor::NameColumn)->text(), text);
    };
    typeName(QStringLiteral("main"));
    QVERIFY2(form.isValid(), qPrintable(form.errorText()));
    QVERIFY2(form.config().at("loss") ==
                 (json{{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}, {"name", "main"}}),
             form.config().at("loss").dump().c_str());
    QCOMPARE(doc.project().training.at("loss").value("name", std::string()), std::string("main"));
    auto parsed = engine::train::parseTrainingConfig(form.config(), p.graph);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
    QCOMPARE(QString::fromStdString(parsed->losses[0].name), QStringLiteral("main"));
    // A name the engine refuses shows its error; the document keeps the last valid one.
    typeName(QStringLiteral("bad name"));
    QVERIFY(!form.isValid());
    QVERIFY2(form.errorText().contains(QStringLiteral("training.loss.name")), qPrintable(form.errorText()));
    QCOMPARE(doc.project().training.at("loss").value("name", std::string()), std::string("main"));
    typeName(QString());  // empty again: the engine names the term
    QVERIFY2(form.isValid(), qPrintable(form.errorText()));
    QVERIFY(!form.config().at("loss").contains("name"));

    // The plugin metric's settings appear when it is selected with the mouse.
    QListWidget* metrics = form.metricList();
    QListWidgetItem* fbeta = nullptr;
    for (int i = 0; i < metrics->count(); ++i)
        if (metrics->item(i)->data(Qt::UserRole).toString() == QStringLiteral("plugin:example.FBeta")) fbeta = metrics->item(i);
    QVERIFY(fbeta);
    QVERIFY(form.metricSettingsForm()->isHidden());
    metrics->scrollToItem(fbeta);
    QTest::mouseClick(metrics->viewport(), Qt::LeftButton, {}, metrics->visualItemRect(fbeta).center() + QPoint(20, 0));
    QCOMPARE(metrics->currentItem(), fbeta);
    QCOMPARE(fbeta->checkState(), Qt::Checked);  // a click on the text selects, it does not uncheck
    QVERIFY(form.metricSettingsForm()->isVisible());
    QVERIFY(form.metricSettingsForm()->isEnabled());
    auto* beta = form.metricSettingsForm()->findChild<QDoubleSpinBox*>(QStringLiteral("metricAttr_beta"));
    auto* threshold = form.metricSettingsForm()->findChild<QDoubleSpinBox*>(QStringLiteral("metricAttr_threshold"));
    auto* name = form.metricSettingsForm()->findChild<QLineEdit*>(QStringLiteral("metricName"));
    QVERIFY(beta && threshold && name);
    QCOMPARE(beta->value(), 1.0);
    QCOMPARE(threshold->value(), 0.5);
    QCOMPARE(name->placeholderText(), QStringLiteral("example.FBeta"));
    typeInto(beta, QStringLiteral("2"));
    name->setFocus();
    QTest::keyClicks(name, QStringLiteral("f2"));
    QTest::keyClick(name, Qt::Key_Return);
    QVERIFY2(form.isValid(), qPrintable(form.errorText()));
    const json written = json{"accuracy", {{"type", "plugin:example.FBeta"}, {"beta", 2.0}, {"name", "f2"}}};
    QCOMPARE(form.config().at("metrics"), written);
    QCOMPARE(doc.project().training.at("metrics"), written);
    parsed = engine::train::parseTrainingConfig(form.config(), p.graph);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
    QVERIFY(parsed->pluginMetrics.count("f2"));
    // A value out of the schema's range is refused by the editor itself.
    typeInto(threshold, QStringLiteral("7"));
    QVERIFY(threshold->value() <= 1.0);

    // Every edit is an undo step: undoing them all gives back the project's configuration.
    QVERIFY(doc.undoStack()->index() > base);
    while (doc.undoStack()->index() > base) doc.undoStack()->undo();
    QCOMPARE(doc.project().training, p.training);
    while (doc.undoStack()->canRedo()) doc.undoStack()->redo();
    QCOMPARE(doc.project().training.at("metrics"), written);
    // Shown again from the document, the settings are as written there.
    form.setConfig(doc.project().training);
    QCOMPARE(form.metricSettingsForm()->findChild<QDoubleSpinBox*>(QStringLiteral("metricAttr_beta"))->value(), 2.0);
    QCOMPARE(form.config().at("metrics"), doc.project().training.at("metrics"));
}

void TestLossEditor::screenshot() {
    const QString shot = qEnvironmentVariable("KILN_SCREENSHOT");
    if (shot.isEmpty()) QSKIP("KILN_SCREENSHOT is not set");
    QTranslator translator;
    if (qEnvironmentVariable("KILN_SCREENSHOT_LANG") == QLatin1String("zh_CN")) {
        QVERIFY(translator.load(QStringLiteral(":/i18n/kiln_zh_CN.qm")));
        QCoreApplication::installTranslator(&translator);
    }
    auto info = engine::ops::PluginRegistry::global().load(KILN_TEST_PLUGIN_DIR "/huber_fbeta.so");
    QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
    json training = baseTraining();
    training["loss"] = json::array({{{"type", "plugin:example.Huber"}, {"delta", 0.5}, {"name", "huber_main"}},
                                    {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}, {"weight", 0.2}}});
    training["metrics"] = {"accuracy", {{"type", "plugin:example.FBeta"}, {"beta", 2}, {"name", "f2"}}};
    const auto p = project(training);
    TrainingConfigForm form;
    form.setGraph(p.graph);
    form.setConfig(p.training);
    form.resize(760, 900);
    form.show();
    QVERIFY(QTest::qWaitForWindowExposed(&form));
    QVERIFY2(form.isValid(), qPrintable(form.errorText()));
    QTableWidget* table = form.lossEditor()->table();
    table->setCurrentCell(0, LossEditor::TypeColumn);
    QTest::qWait(200);
    auto* box = form.findChild<QWidget*>(QStringLiteral("lossBox"));
    QVERIFY(box);
    QVERIFY(box->grab().save(shot, "PNG"));
    QCoreApplication::removeTranslator(&translator);
}

QTEST_MAIN(TestLossEditor)
#include "tst_loss_editor.moc"
