// SPDX-License-Identifier: Apache-2.0
// "Replace Head From Here…" in the editor, driven like a user: the node menu opens the dialog,
// typed classes and dropout and a click on Replace Head cut the graph after the node and attach
// the new head as one undo step; undo restores the graph exactly, redo applies it again. A node
// whose output cannot take a head keeps the dialog open with the error naming it.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QApplication>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QUndoStack>
#include <QtTest>

#include <memory>

#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/replace_head_dialog.h"

using namespace kiln::ui;
using namespace kiln::engine;

namespace {

// Names, ops, inputs and flags of every node, and the outputs: what undo must give back.
QString graphText(const EditorDocument& doc) {
    const auto p = doc.project();
    QString s;
    for (const auto& n : p.graph.nodes) {
        s += QString::fromStdString(n.name + ":" + n.op + "<");
        for (const auto& in : n.inputs) s += QString::fromStdString(in) + ",";
        s += n.trainable ? QStringLiteral("> ") : QStringLiteral(">frozen ");
        s += QString::fromStdString(io::nodeToJson(n).dump()) + "\n";
    }
    for (const auto& o : p.graph.outputs) s += QString::fromStdString("out " + o + "\n");
    return s;
}

ReplaceHeadDialog* openDialog(GraphEditorWidget& widget, EditorDocument& doc, const char* node) {
    std::unique_ptr<QMenu> menu(widget.nodeMenu(doc.idOf(node), nullptr));
    auto* action = menu->findChild<QAction*>(QStringLiteral("replaceHead"));
    if (!action) return nullptr;
    action->trigger();
    return widget.findChild<ReplaceHeadDialog*>(QStringLiteral("replaceHeadDialog"));
}

void typeInto(QAbstractSpinBox* box, const QString& text) {
    auto* edit = box->findChild<QLineEdit*>();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Tab);
}

}  // namespace

class TestReplaceHeadDialog : public QObject {
    Q_OBJECT

private slots:
    void replaceFromTheNodeMenuAndUndo() {
        EditorDocument doc;
        QVERIFY(doc.load(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln")).ok());
        GraphEditorWidget widget(&doc);
        widget.resize(900, 700);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        const QString before = graphText(doc);
        const int commands = doc.undoStack()->count();
        // The example's last feature map: the node the flatten/dense head reads from.
        std::string cut;
        for (const auto& n : doc.nodes())
            if (n.node.op == "Flatten" || n.node.op == "GlobalAveragePooling2D") cut = n.node.inputs.at(0);
        QVERIFY(!cut.empty());

        auto* dialog = openDialog(widget, doc, cut.c_str());
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        QVERIFY(dialog->windowTitle().contains(QString::fromStdString(cut)));
        typeInto(dialog->findChild<QSpinBox*>(QStringLiteral("headClasses")), QStringLiteral("6"));
        typeInto(dialog->findChild<QDoubleSpinBox*>(QStringLiteral("headDropout")), QLocale().toString(0.35, 'f', 2));
        auto* ok = dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        QSignalSpy status(&widget, &GraphEditorWidget::statusMessage);
        QTest::mouseClick(ok, Qt::LeftButton);
        QTRY_VERIFY(!widget.findChild<ReplaceHeadDialog*>(QStringLiteral("replaceHeadDialog")));  // closed and deleted
        QCOMPARE(status.count(), 1);

        // One command: the nodes after the cut are gone, the head hangs under it.
        QCOMPARE(doc.undoStack()->count(), commands + 1);
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Replace head after %1").arg(QString::fromStdString(cut)));
        const auto p = doc.project();
        QCOMPARE(p.graph.outputs, std::vector<std::string>{"head_predictions"});
        QCOMPARE(p.graph.node("head_pooling")->inputs, std::vector<std::string>{cut});
        QCOMPARE(p.graph.node("head_dropout")->attrs.getFloat("rate"), 0.35);
        QCOMPARE(p.graph.node("head_predictions")->attrs.getInt("units"), int64_t{6});
        for (const auto& n : p.graph.nodes) QVERIFY2(n.op != "Flatten", n.name.c_str());
        auto info = ops::analyzeModel(p.graph);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().toString().c_str());
        QCOMPARE(info->nodes[size_t(info->outputs[0])].output.dims(), (std::vector<int64_t>{-1, 6}));
        // The head's cards sit below the cut node's.
        QVERIFY(doc.nodeByName("head_predictions")->pos.y() > doc.nodeByName(cut)->pos.y());

        // Undo gives the graph back exactly; redo applies the same head.
        const QString after = graphText(doc);
        doc.undoStack()->undo();
        QCOMPARE(graphText(doc), before);
        doc.undoStack()->redo();
        QCOMPARE(graphText(doc), after);
    }

    void refusalStaysInTheDialog() {
        EditorDocument doc;
        auto p = io::parseProject(R"({"format":"kiln-project","version":2,"name":"seq","graph":{"nodes":[
            {"name":"tokens","op":"Input","attrs":{"shape":[10,4]}},
            {"name":"out","op":"Dense","inputs":["tokens"],"attrs":{"units":2}}],"outputs":["out"]}})",
                                  "seq.kiln");
        QVERIFY(p.ok());
        doc.setProject(*p, true);
        GraphEditorWidget widget(&doc);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        const int commands = doc.undoStack()->count();
        auto* dialog = openDialog(widget, doc, "tokens");
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        QTest::mouseClick(dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok), Qt::LeftButton);
        auto* error = dialog->findChild<QLabel*>(QStringLiteral("headError"));
        QTRY_VERIFY(error->isVisible());
        QVERIFY2(error->text().contains(QStringLiteral("\"tokens\"")), qPrintable(error->text()));
        QVERIFY(dialog->isVisible());
        QCOMPARE(doc.undoStack()->count(), commands);  // nothing pushed
        dialog->reject();
    }
};

QTEST_MAIN(TestReplaceHeadDialog)
#include "tst_replace_head_dialog.moc"
