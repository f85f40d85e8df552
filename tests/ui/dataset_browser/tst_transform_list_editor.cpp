// SPDX-License-Identifier: Apache-2.0
// The transforms form, used with the mouse and keyboard: adding from the menu, typed fields that
// write the project's JSON, reordering, removing, the engine's message for an invalid setting (and
// nothing passed on), and the augmentation preview following the form and the text in both ways.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_dataset_browser
#include <QtTest>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>

#include <nlohmann/json.hpp>

#include "ui/dataset_browser/augmentation_preview.h"
#include "ui/dataset_browser/transform_list_editor.h"

using kiln::ui::AugmentationPreview;
using kiln::ui::TransformListEditor;
using nlohmann::json;

namespace {
// Picks `type` from the Add button's menu.
void addFromMenu(TransformListEditor& editor, const QString& type) {
    auto* add = editor.findChild<QToolButton*>(QStringLiteral("addTransform"));
    QVERIFY(add && add->menu());
    QAction* action = add->menu()->findChild<QAction*>(QStringLiteral("add_") + type);
    QVERIFY2(action, qPrintable(type));
    action->trigger();
}

// Replaces a spin box's text as a user does (select all, type, Enter).
void typeInto(QAbstractSpinBox* box, const QString& text) {
    box->setFocus();
    box->selectAll();
    QTest::keyClicks(box, text);
    QTest::keyClick(box, Qt::Key_Return);
}
}  // namespace

class TestTransformListEditor : public QObject {
    Q_OBJECT

private slots:
    void fieldsWriteTheProjectJson() {
        TransformListEditor editor;
        editor.resize(420, 520);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QSignalSpy edited(&editor, &TransformListEditor::transformsEdited);

        addFromMenu(editor, QStringLiteral("random_crop"));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(editor.list()->count(), 1);
        typeInto(qobject_cast<QSpinBox*>(editor.field(QStringLiteral("height"))), QStringLiteral("32"));
        typeInto(qobject_cast<QSpinBox*>(editor.field(QStringLiteral("padding"))), QStringLiteral("4"));
        json t = editor.transforms()[0];
        QCOMPARE(t["type"], "random_crop");
        QCOMPARE(t["size"], json::array({32, 28}));
        QCOMPARE(t["padding"], 4);
        QVERIFY(editor.list()->item(0)->text().contains(QStringLiteral("32 × 28")));

        addFromMenu(editor, QStringLiteral("flip"));
        auto* vertical = qobject_cast<QCheckBox*>(editor.field(QStringLiteral("vertical")));
        QVERIFY(vertical);
        QTest::mouseClick(vertical, Qt::LeftButton);
        typeInto(qobject_cast<QDoubleSpinBox*>(editor.field(QStringLiteral("probability"))), QStringLiteral("0.25"));
        t = editor.transforms()[1];
        QCOMPARE(t["vertical"], true);
        QCOMPARE(t["probability"].get<double>(), 0.25);

        // Rotation: a symmetric range is "degrees", any other a "range".
        addFromMenu(editor, QStringLiteral("rotate"));
        typeInto(qobject_cast<QDoubleSpinBox*>(editor.field(QStringLiteral("max_degrees"))), QStringLiteral("30"));
        QCOMPARE(editor.transforms()[2]["range"], json::array({-15.0, 30.0}));
        typeInto(qobject_cast<QDoubleSpinBox*>(editor.field(QStringLiteral("min_degrees"))), QStringLiteral("-30"));
        QCOMPARE(editor.transforms()[2]["degrees"].get<double>(), 30.0);
        QVERIFY(!editor.transforms()[2].contains("range"));

        // Normalise: a preset, then custom values (the form grows the fields for them).
        addFromMenu(editor, QStringLiteral("normalize"));
        QCOMPARE(editor.transforms()[3]["preset"], "unit");
        auto* preset = qobject_cast<QComboBox*>(editor.field(QStringLiteral("preset")));
        preset->setFocus();
        QTest::keyClick(preset, Qt::Key_Home);  // "custom scale, mean and std" is first
        QTRY_VERIFY(editor.field(QStringLiteral("mean")) != nullptr);
        auto* mean = qobject_cast<QLineEdit*>(editor.field(QStringLiteral("mean")));
        mean->setFocus();
        mean->selectAll();
        QTest::keyClicks(mean, QStringLiteral("0.5, 0.25"));
        QTest::keyClick(mean, Qt::Key_Return);
        t = editor.transforms()[3];
        QVERIFY(!t.contains("preset"));
        QCOMPARE(t["mean"], json::array({0.5, 0.25}));

        // The list the form produced is what the engine reads, and what was announced last.
        QCOMPARE(edited.last().at(0).value<json>(), editor.transforms());
        QVERIFY(editor.errorText().isEmpty());
    }

    void reorderRemoveAndInvalidSettings() {
        TransformListEditor editor;
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.setTransforms(json::parse(R"([{"type": "decode", "channels": 3}, {"type": "resize", "shorter_side": 256},
                                              {"type": "center_crop", "size": 224}])"));
        QCOMPARE(editor.list()->count(), 3);
        QSignalSpy edited(&editor, &TransformListEditor::transformsEdited);
        editor.list()->setCurrentRow(2);
        QTest::mouseClick(editor.findChild<QPushButton*>(QStringLiteral("moveTransformUp")), Qt::LeftButton);
        QCOMPARE(editor.transforms()[1]["type"], "center_crop");
        QCOMPARE(editor.transforms()[2]["type"], "resize");
        QCOMPARE(edited.count(), 1);
        // Remove takes the selected one (the crop, which moved up with the selection).
        QCOMPARE(editor.list()->currentRow(), 1);
        QTest::mouseClick(editor.findChild<QPushButton*>(QStringLiteral("removeTransform")), Qt::LeftButton);
        const json left = editor.transforms();
        QCOMPARE(left.size(), size_t(2));
        QVERIFY2(left[1]["type"] == "resize", left.dump().c_str());

        // Standardise needs a column: until it has one the engine's message shows, naming the
        // field, and nothing is passed on.
        edited.clear();
        addFromMenu(editor, QStringLiteral("standardize"));
        QCOMPARE(edited.count(), 0);
        QVERIFY2(editor.errorText().contains(QStringLiteral("transforms[2].column")), qPrintable(editor.errorText()));
        QCOMPARE(editor.list()->currentRow(), 2);
        auto* column = qobject_cast<QLineEdit*>(editor.field(QStringLiteral("column")));
        column->setFocus();
        QTest::keyClicks(column, QStringLiteral("age"));
        QTest::keyClick(column, Qt::Key_Return);
        QCOMPARE(edited.count(), 1);
        QVERIFY(editor.errorText().isEmpty());
        QCOMPARE(editor.transforms()[2]["column"], "age");

        // A setting of the wrong type in the file does not upset the form; the message names it.
        editor.setTransforms(json::parse(R"([{"type": "flip", "probability": "often"}])"));
        QVERIFY(editor.errorText().contains(QStringLiteral("transforms[0].probability")));
        editor.list()->setCurrentRow(0);
        QVERIFY(editor.field(QStringLiteral("probability")));
    }

    void previewFollowsFormAndText() {
        AugmentationPreview preview;
        preview.show();
        QVERIFY(QTest::qWaitForWindowExposed(&preview));
        QVERIFY(!preview.textMode());
        QSignalSpy changed(&preview, &AugmentationPreview::transformsChanged);
        TransformListEditor* form = preview.form();
        QCOMPARE(form->transforms(), preview.transforms());
        addFromMenu(*form, QStringLiteral("brightness_contrast"));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(preview.transforms().back()["type"], "brightness_contrast");
        auto* text = preview.findChild<QPlainTextEdit*>();
        QVERIFY(text->toPlainText().contains(QStringLiteral("brightness_contrast")));

        // Edit as text, apply: the form shows the new list.
        QTest::mouseClick(preview.findChild<QPushButton*>(QStringLiteral("editTransformsAsText")), Qt::LeftButton);
        QVERIFY(preview.textMode());
        text->setPlainText(QStringLiteral(R"([{"type": "flip", "horizontal": true, "probability": 1.0}])"));
        QTest::mouseClick(preview.findChild<QPushButton*>(QStringLiteral("applyTransformsText")), Qt::LeftButton);
        QCOMPARE(form->list()->count(), 1);
        QCOMPARE(form->transforms(), preview.transforms());
        QTest::mouseClick(preview.findChild<QPushButton*>(QStringLiteral("editTransformsAsText")), Qt::LeftButton);
        QVERIFY(!preview.textMode());
        QVERIFY(form->isVisible());
    }
};

Q_DECLARE_METATYPE(nlohmann::json)

QTEST_MAIN(TestTransformListEditor)
#include "tst_transform_list_editor.moc"
