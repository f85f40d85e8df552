// SPDX-License-Identifier: Apache-2.0
// The canvas driven by real input events: drops from the palette, port-to-port drags (valid and
// refused), node drags, rubber-band selection, wheel zoom and panning, keyboard shortcuts, the
// inspector's validated edits, readable cards, the overview (minimap), groups, live shape errors
// within 100 ms, export, the item models (palette, summary) under QAbstractItemModelTester, and the
// node menu's freezing for transfer learning (freeze up to a node, unfreeze all, frozen counts).
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QGraphicsView>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeView>
#include <QUndoStack>
#include <QtTest>

#include <memory>

#include "engine/ops/op_table.h"
#include "ui/graph_editor/canvas_minimap.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/graph_editor/inspector_widget.h"
#include "ui/graph_editor/palette_widget.h"
#include "ui/graph_editor/summary_widget.h"

using namespace kiln::ui;
using kiln::engine::AttrValue;

namespace {

kiln::engine::Node makeNode(const char* name, const char* op, std::vector<std::string> inputs = {}) {
    kiln::engine::Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(inputs);
    return n;
}

// image [28,28,1] -> flat -> fc (Dense 10); "free" is an unconnected Dense; "conv" an
// unconnected Conv2D. Positions are fixed so the test knows where the ports are.
void loadFixture(EditorDocument& doc) {
    kiln::engine::io::Project p;
    p.name = "fixture";
    p.graph.nodes = {makeNode("image", "Input"), makeNode("flat", "Flatten", {"image"}),
                     makeNode("fc", "Dense", {"flat"}), makeNode("free", "Dense"),
                     makeNode("conv", "Conv2D")};
    p.graph.nodes[0].attrs.set("shape", std::vector<int64_t>{28, 28, 1});
    p.graph.nodes[2].attrs.set("units", int64_t{10});
    p.graph.nodes[3].attrs.set("units", int64_t{32});
    p.graph.nodes[4].attrs.set("filters", int64_t{4});
    p.layout = {{"nodes",
                 {{"image", {0, 0}},
                  {"flat", {0, 150}},
                  {"fc", {0, 300}},
                  {"free", {300, 150}},
                  {"conv", {300, 300}}}}};
    doc.setProject(p, true);
}

struct Fixture {
    EditorDocument doc;
    std::unique_ptr<GraphEditorWidget> widget;
    GraphView* view = nullptr;
    GraphScene* scene = nullptr;

    Fixture() {
        loadFixture(doc);
        widget = std::make_unique<GraphEditorWidget>(&doc);
        widget->resize(1000, 800);
        widget->show();
        view = widget->view();
        scene = widget->scene();
        view->resetTransform();
        view->centerOn(QPointF(240, 220));
    }
    QPoint toView(QPointF scenePos) const { return view->mapFromScene(scenePos); }
    NodeItem* item(const char* name) const { return scene->nodeItem(doc.idOf(name)); }
    void settle() {
        widget->analysis()->waitForIdle();
        QCoreApplication::processEvents();
    }
};

void dragOnViewport(QWidget* viewport, QPoint from, QPoint to, Qt::MouseButton button = Qt::LeftButton) {
    QTest::mousePress(viewport, button, {}, from);
    for (int i = 1; i <= 8; ++i) QTest::mouseMove(viewport, from + (to - from) * i / 8);
    QTest::mouseRelease(viewport, button, {}, to);
}

}  // namespace

class TestGraphEditorWidget : public QObject {
    Q_OBJECT
private slots:
    void paletteListsEveryOpAndFilters() {
        PaletteWidget palette;
        QAbstractItemModelTester tester(palette.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(palette.view()->model(),
                                             QAbstractItemModelTester::FailureReportingMode::QtTest);
        QStringList ops;
        auto* m = palette.model();
        for (int s = 0; s < m->rowCount(); ++s)
            for (int r = 0; r < m->rowCount(m->index(s, 0)); ++r)
                ops << m->index(r, 0, m->index(s, 0)).data(PaletteModel::IdRole).toString();
        // Placeholders come from imports only; the generic Plugin row is listed as the loaded
        // plugins' operations (none here).
        for (const auto& def : kiln::engine::ops::opTable())
            if (def.kind != kiln::engine::ops::OpKind::Placeholder && def.kind != kiln::engine::ops::OpKind::Plugin)
                QVERIFY2(ops.contains(QString::fromUtf8(def.name.data(), int(def.name.size()))), def.name.data());
        // The former templates are bundled layers.
        for (const char* layer : {"ConvBNReLU", "ResidualBlock", "TwoTower", "TransformerEncoder"})
            QVERIFY2(ops.contains(layer), layer);
        QCOMPARE(m->rowCount(), 10);  // nine categories (no Plugins without plugins) and the layers
        // Typing in the search field filters recursively.
        QTest::keyClicks(palette.searchField(), "pool");
        auto* view = palette.view()->model();
        int visible = 0;
        for (int s = 0; s < view->rowCount(); ++s) visible += view->rowCount(view->index(s, 0));
        // MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, GlobalMaxPooling2D, GlobalAveragePooling1D
        QCOMPARE(visible, 5);
        // Enter on an entry (as a double-click) emits the op.
        QSignalSpy spy(&palette, &PaletteWidget::opActivated);
        palette.resize(300, 600);
        palette.show();
        QVERIFY(QTest::qWaitForWindowExposed(&palette));
        QModelIndex first = view->index(0, 0, view->index(0, 0));
        palette.view()->setFocus();
        palette.view()->setCurrentIndex(first);
        QTest::keyClick(palette.view(), Qt::Key_Return);
        QCOMPARE(spy.count(), 1);
        QVERIFY(spy.at(0).at(0).toString().contains("Pooling"));
    }

    void dropFromPaletteAddsNode() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        PaletteWidget palette;
        std::unique_ptr<QMimeData> mime(palette.mimeDataFor("BatchNormalization"));
        QVERIFY(mime);
        const QPoint at(500, 420);
        QDragEnterEvent enter(at, Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(f.view->viewport(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(at), Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(f.view->viewport(), &drop);
        QVERIFY(drop.isAccepted());
        const auto* added = f.doc.nodeByName("batch_normalization");
        QVERIFY(added);
        // Centred under the cursor.
        QPointF centre = added->pos + QPointF(nodeWidth() / 2, nodeHeight() / 2);
        QVERIFY((f.toView(centre) - at).manhattanLength() <= 2);
        QVERIFY(f.scene->nodeItem(added->id));
        // A bundled layer drops as one instance node; undo removes it.
        std::unique_ptr<QMimeData> layer(palette.mimeDataFor("ConvBNReLU"));
        QVERIFY(layer);
        QDragEnterEvent enter2(at, Qt::CopyAction, layer.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(f.view->viewport(), &enter2);
        QVERIFY(enter2.isAccepted());
        QDropEvent drop2(QPointF(at), Qt::CopyAction, layer.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(f.view->viewport(), &drop2);
        QCOMPARE(f.doc.nodes().size(), size_t(7));
        QCOMPARE(f.doc.nodes().back().node.op, std::string("ConvBNReLU"));
        f.doc.undoStack()->undo();
        QCOMPARE(f.doc.nodes().size(), size_t(6));
    }

    void connectPortsByMouseDrag() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        NodeItem* flat = f.item("flat");
        NodeItem* free = f.item("free");
        QPoint from = f.toView(flat->outputPortPos());
        QPoint to = f.toView(free->inputPortPos(0));
        dragOnViewport(f.view->viewport(), from, to);
        QCOMPARE(f.doc.nodeByName("free")->node.inputs, std::vector<std::string>{"flat"});
        QVERIFY(f.scene->edgeItem(f.doc.idOf("flat"), f.doc.idOf("free"), 0));
        // Dragging from the input port back to an output works too (fc's input replaced by image is
        // refused below; here free's port 0 gets re-wired to fc's output).
        dragOnViewport(f.view->viewport(), f.toView(free->inputPortPos(0)),
                       f.toView(f.item("fc")->outputPortPos()));
        QCOMPARE(f.doc.nodeByName("free")->node.inputs, std::vector<std::string>{"fc"});
        f.settle();
        // The edge shows the tensor shape; the node its parameter count.
        auto* edge = f.scene->edgeItem(f.doc.idOf("fc"), f.doc.idOf("free"), 0);
        QVERIFY(edge);
        QCOMPARE(edge->label(), QStringLiteral("[N,10]"));
        QVERIFY(free->statsText().contains("352"));  // 10*32 + 32
    }

    void refuseInvalidConnection() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        QSignalSpy refused(f.scene, &GraphScene::connectionRefused);
        QSignalSpy status(f.widget.get(), &GraphEditorWidget::statusMessage);
        const QByteArray before = f.doc.toJson();
        // The image is [28,28,1]: a Dense needs rank 2.
        dragOnViewport(f.view->viewport(), f.toView(f.item("image")->outputPortPos()),
                       f.toView(f.item("free")->inputPortPos(0)));
        QCOMPARE(refused.count(), 1);
        QVERIFY(refused.at(0).at(0).toString().contains("rank-2"));
        QVERIFY(status.count() >= 1);
        // A cycle: fc's output into flat's input.
        dragOnViewport(f.view->viewport(), f.toView(f.item("fc")->outputPortPos()),
                       f.toView(f.item("flat")->inputPortPos(0)));
        QCOMPARE(refused.count(), 2);
        QVERIFY(refused.at(1).at(0).toString().contains("loop"));
        QCOMPARE(f.doc.toJson(), before);
        QCOMPARE(f.doc.undoStack()->count(), 0);
    }

    void dragNodesRubberBandAndKeyboard() {
        Fixture f;
        f.widget->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(f.widget.get()));
        // Drag a node by its body: one Move command, the document follows.
        NodeItem* conv = f.item("conv");
        QPoint grab = f.toView(conv->mapToScene(QPointF(nodeWidth() / 2, nodeHeight() / 2 + 8)));
        dragOnViewport(f.view->viewport(), grab, grab + QPoint(60, 40));
        QCOMPARE(f.doc.nodeByName("conv")->pos, QPointF(360, 340));
        QCOMPARE(f.doc.undoStack()->count(), 1);
        // Rubber band around image and flat only.
        f.scene->clearSelection();
        dragOnViewport(f.view->viewport(), f.toView(QPointF(-40, -30)),
                       f.toView(QPointF(nodeWidth() + 20, 150 + nodeHeight() + 20)));
        QCOMPARE(f.widget->selectedNodes().size(), 2);
        // Keyboard: Delete removes them, Ctrl+Z brings them back.
        f.view->setFocus();
        QTest::keyClick(f.view, Qt::Key_Delete);
        QVERIFY(!f.doc.nodeByName("image"));
        QVERIFY(f.doc.nodeByName("fc")->node.inputs.empty());
        QTest::keyClick(f.view, Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(f.doc.nodeByName("image"));
        QCOMPARE(f.doc.nodeByName("fc")->node.inputs, std::vector<std::string>{"flat"});
        // Ctrl+D duplicates the selection.
        f.widget->selectNodes({f.doc.idOf("fc")});
        QTest::keyClick(f.view, Qt::Key_D, Qt::ControlModifier);
        QVERIFY(f.doc.nodeByName("fc_1"));
        QCOMPARE(f.doc.nodeByName("fc_1")->node.inputs, std::vector<std::string>{"flat"});
    }

    void wheelZoomsAroundCursorAndMiddleDragPans() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        const QPoint at(200, 150);
        const QPointF under = f.view->mapToScene(at);
        QWheelEvent wheel(QPointF(at), QPointF(f.view->viewport()->mapToGlobal(at)), QPoint(), QPoint(0, 240),
                          Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(f.view->viewport(), &wheel);
        QVERIFY(f.view->zoom() > 1.2);
        QVERIFY(QLineF(f.view->mapToScene(at), under).length() < 2.0);
        // Middle-drag pans by the mouse delta.
        const QPointF centre = f.view->mapToScene(f.view->viewport()->rect().center());
        dragOnViewport(f.view->viewport(), QPoint(400, 400), QPoint(300, 350), Qt::MiddleButton);
        const QPointF moved = f.view->mapToScene(f.view->viewport()->rect().center());
        QVERIFY(std::abs((moved - centre).x() - 100 / f.view->zoom()) < 2);
        QVERIFY(std::abs((moved - centre).y() - 50 / f.view->zoom()) < 2);
        QCOMPARE(f.doc.undoStack()->count(), 0);  // navigation is not an edit
    }

    void cardTextIsReadableAndFitsTheCard() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        f.settle();
        const NodeCardStyle& st = NodeCardStyle::get();
        // At 100 %, scene pixels are screen pixels: every line of the card is at least 11 px.
        QCOMPARE(f.view->zoom(), 1.0);
        QVERIFY(st.textFont.pixelSize() >= kMinCardTextPx);
        QVERIFY(st.titleFont.pixelSize() > st.textFont.pixelSize());
        QVERIFY(QFontInfo(st.textFont).pixelSize() >= kMinCardTextPx);
        QCOMPARE(f.item("fc")->textFont(), st.textFont);
        // The card is sized to its text: three lines and the margins inside the height, an
        // output shape and the cost line inside the width.
        QVERIFY(st.titleLine >= QFontMetricsF(st.titleFont).height());
        QVERIFY(st.textLine >= QFontMetricsF(st.textFont).height());
        QVERIFY(st.titleLine + 2 * st.textLine + 2 * st.margin + 4 <= nodeHeight());
        NodeItem* fc = f.item("fc");
        QVERIFY(!fc->shapeText().isEmpty());
        QVERIFY(!fc->statsText().isEmpty());
        const qreal room = nodeWidth() - 20;
        QFontMetricsF tm(st.textFont);
        QVERIFY2(tm.horizontalAdvance(fc->shapeText()) <= room, qPrintable(fc->shapeText()));
        QVERIFY2(tm.horizontalAdvance(fc->statsText()) <= room, qPrintable(fc->statsText()));
        QVERIFY(QFontMetricsF(st.titleFont).horizontalAdvance(QStringLiteral("flat")) +
                    tm.horizontalAdvance(QStringLiteral("Flatten")) + 8 <= room);
        // The automatic layout spaces nodes by the card's size.
        QCOMPARE(f.doc.cardSize(), QSizeF(nodeWidth(), nodeHeight()));
    }

    void minimapClickAndDragMoveTheView() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        f.settle();
        CanvasMinimap* map = f.view->minimap();
        // The whole fixture is in view at 100 %: no overview.
        QVERIFY(f.view->visibleSceneRect().contains(f.scene->diagramRect()));
        QVERIFY(!map->isVisible());
        // Zoomed in, part of it is out of view: the overview appears in the bottom-right corner.
        f.widget->zoomBy(3.0);
        QCoreApplication::processEvents();
        QVERIFY(map->isVisible());
        const QRect vp = f.view->viewport()->rect();
        QCOMPARE(map->geometry().bottomRight(),
                 vp.bottomRight() - QPoint(CanvasMinimap::kCornerGap, CanvasMinimap::kCornerGap));
        // A click centres the view on the clicked point of the diagram, at the same zoom.
        const qreal zoom = f.view->zoom();
        const QPointF conv = f.item("conv")->sceneBoundingRect().center();
        const QPoint click = map->toWidget(conv).toPoint();
        QTest::mouseClick(map, Qt::LeftButton, {}, click);
        QVERIFY(QLineF(f.view->visibleSceneRect().center(), map->toScene(click)).length() < 2.0);
        QVERIFY(f.view->visibleSceneRect().contains(f.item("conv")->sceneBoundingRect()));
        QCOMPARE(f.view->zoom(), zoom);
        // A drag follows the mouse.
        const QPointF image = f.item("image")->sceneBoundingRect().center();
        const QPoint from = map->toWidget(conv).toPoint(), to = map->toWidget(image).toPoint();
        QTest::mousePress(map, Qt::LeftButton, {}, from);
        for (int i = 1; i <= 6; ++i) QTest::mouseMove(map, from + (to - from) * i / 6);
        QTest::mouseRelease(map, Qt::LeftButton, {}, to);
        QVERIFY(QLineF(f.view->visibleSceneRect().center(), map->toScene(to)).length() < 2.0);
        QVERIFY(f.view->visibleSceneRect().contains(f.item("image")->sceneBoundingRect()));
        QCOMPARE(f.doc.undoStack()->count(), 0);  // navigation is not an edit
        // Fit shows everything again and the overview goes away.
        f.widget->action(GraphEditorWidget::StandardAction::FitView)->trigger();
        QVERIFY(f.view->visibleSceneRect().contains(f.scene->diagramRect().adjusted(1, 1, -1, -1)));
        QVERIFY(!map->isVisible());
    }

    void findNodeByTypingJumpsToIt() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        f.settle();
        f.widget->zoomBy(3.0);  // zoomed in on one corner: "conv" is out of view
        f.view->centerOnScene(f.item("image")->sceneBoundingRect().center());
        QVERIFY(!f.view->visibleSceneRect().contains(f.item("conv")->sceneBoundingRect()));
        QSignalSpy messages(f.widget.get(), &GraphEditorWidget::statusMessage);
        // Ctrl+F puts the cursor in the search field.
        QTest::keyClick(f.view->viewport(), Qt::Key_F, Qt::ControlModifier);
        QLineEdit* find = f.widget->findField();
        QTRY_VERIFY(find->hasFocus());
        QTest::keyClicks(find, QStringLiteral("CONV"));
        QTest::keyClick(find, Qt::Key_Return);
        QCOMPARE(f.widget->currentNode(), f.doc.idOf("conv"));
        QVERIFY(f.view->visibleSceneRect().contains(f.item("conv")->sceneBoundingRect()));
        QCOMPARE(f.doc.undoStack()->count(), 0);  // finding is not an edit
        // An op name finds its nodes, one after the other on Enter.
        find->selectAll();
        QTest::keyClicks(find, QStringLiteral("Dense"));
        QTest::keyClick(find, Qt::Key_Return);
        const ItemId first = f.widget->currentNode();
        QTest::keyClick(find, Qt::Key_Return);
        const ItemId second = f.widget->currentNode();
        QVERIFY(first != second);
        QVERIFY((first == f.doc.idOf("fc") || first == f.doc.idOf("free")) &&
                (second == f.doc.idOf("fc") || second == f.doc.idOf("free")));
        // Nothing found: the selection stays, the status bar says so.
        find->selectAll();
        QTest::keyClicks(find, QStringLiteral("nosuchnode"));
        QTest::keyClick(find, Qt::Key_Return);
        QCOMPARE(f.widget->currentNode(), second);
        QVERIFY(messages.last().at(0).toString().contains(QStringLiteral("nosuchnode")));
    }

    void inspectorEditsAreValidated() {
        Fixture f;
        InspectorWidget inspector(&f.doc);
        inspector.show();
        const ItemId fc = f.doc.idOf("fc");
        inspector.setNode(fc);
        auto* units = qobject_cast<QLineEdit*>(inspector.editorFor("units"));
        QVERIFY(units);
        QVERIFY(!units->toolTip().isEmpty());
        units->selectAll();
        QTest::keyClicks(units, "128");
        QTest::keyClick(units, Qt::Key_Return);
        QCOMPARE(f.doc.node(fc)->node.attrs.getInt("units"), int64_t{128});
        QVERIFY(inspector.lastError().isEmpty());
        // Out of range: refused with the engine's reason; the value stays.
        units->selectAll();
        QTest::keyClicks(units, "0");
        QTest::keyClick(units, Qt::Key_Return);
        QCOMPARE(f.doc.node(fc)->node.attrs.getInt("units"), int64_t{128});
        QVERIFY(inspector.lastError().contains("units"));
        QCOMPARE(units->text(), QStringLiteral("128"));
        // Not a number.
        units->selectAll();
        QTest::keyClicks(units, "many");
        QTest::keyClick(units, Qt::Key_Return);
        QVERIFY(inspector.lastError().contains("whole number"));
        QCOMPARE(f.doc.node(fc)->node.attrs.getInt("units"), int64_t{128});
        // Choices: a combo box.
        auto* act = qobject_cast<QComboBox*>(inspector.editorFor("activation"));
        QVERIFY(act);
        act->setFocus();
        const int relu = act->findText("relu");
        QVERIFY(relu > 0);
        QTest::keyClick(act, Qt::Key_Down);
        while (act->currentIndex() != relu) QTest::keyClick(act, Qt::Key_Down);
        QCOMPARE(f.doc.node(fc)->node.attrs.getString("activation"), std::string("relu"));
        // Consecutive edits of one field merge; a different field is a new command.
        const int before = f.doc.undoStack()->count();
        units->selectAll();
        QTest::keyClicks(units, "64");
        QTest::keyClick(units, Qt::Key_Return);
        QCOMPARE(f.doc.undoStack()->count(), before + 1);
        units->selectAll();
        QTest::keyClicks(units, "65");
        QTest::keyClick(units, Qt::Key_Return);
        QCOMPARE(f.doc.undoStack()->count(), before + 1);
        // Rename: unique names only.
        inspector.nameEdit()->selectAll();
        QTest::keyClicks(inspector.nameEdit(), "flat");
        QTest::keyClick(inspector.nameEdit(), Qt::Key_Return);
        QVERIFY(inspector.lastError().contains("already"));
        QVERIFY(f.doc.nodeByName("fc"));
        inspector.nameEdit()->selectAll();
        QTest::keyClicks(inspector.nameEdit(), "classifier");
        QTest::keyClick(inspector.nameEdit(), Qt::Key_Return);
        QVERIFY(f.doc.nodeByName("classifier"));
        // Freeze, learning-rate multiplier (negative refused).
        QTest::mouseClick(inspector.trainableBox(), Qt::LeftButton);
        QVERIFY(!f.doc.node(fc)->node.trainable);
        inspector.lrMultiplierEdit()->selectAll();
        QTest::keyClicks(inspector.lrMultiplierEdit(), "-2");
        QTest::keyClick(inspector.lrMultiplierEdit(), Qt::Key_Return);
        QCOMPARE(f.doc.node(fc)->node.lrMultiplier, 1.0);
        QVERIFY(!inspector.lastError().isEmpty());
        // Share weights offers nodes of the same op only.
        QVERIFY(inspector.shareWeightsBox()->findText("free") >= 0);
        QCOMPARE(inspector.shareWeightsBox()->findText("conv"), -1);
        // Reset restores the default (units is required: no reset; use_bias has one).
        auto* bias = qobject_cast<QCheckBox*>(inspector.editorFor("use_bias"));
        QVERIFY(bias && bias->isChecked());
        QTest::mouseClick(bias, Qt::LeftButton);
        QVERIFY(!f.doc.node(fc)->node.attrs.getBool("use_bias"));
        auto* reset = inspector.editorFor("use_bias")->parentWidget()->findChild<QToolButton*>();
        QVERIFY(reset);
        QTest::mouseClick(reset, Qt::LeftButton);
        QVERIFY(!f.doc.node(fc)->node.attrs.has("use_bias"));
        QVERIFY(bias->isChecked());
    }

    void liveShapeErrorWithin100ms() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        QVERIFY(f.doc.connectNodes(f.doc.idOf("image"), f.doc.idOf("conv"), 0).ok());
        f.settle();
        NodeItem* conv = f.item("conv");
        QVERIFY(conv->errorText().isEmpty());
        QCOMPARE(conv->shapeText(), QStringLiteral("[N,26,26,4]"));
        QElapsedTimer clock;
        clock.start();
        QVERIFY(f.doc.setAttribute(f.doc.idOf("conv"), "kernel_size", AttrValue(std::vector<int64_t>{40, 40}))
                    .ok());
        while (conv->errorText().isEmpty() && clock.elapsed() < 2000)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 2);
        const qint64 ms = clock.elapsed();
        QVERIFY2(!conv->errorText().isEmpty(), "no error shown");
        QVERIFY2(ms < 100, qPrintable(QString("error shown after %1 ms").arg(ms)));
        QVERIFY(conv->errorText().contains("does not fit"));
        QVERIFY(conv->toolTip().contains("does not fit"));
        // Fixing it clears the error.
        f.doc.undoStack()->undo();
        f.settle();
        QVERIFY(conv->errorText().isEmpty());
    }

    void groupCollapseUngroupByActions() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        f.widget->selectNodes({f.doc.idOf("image"), f.doc.idOf("flat")});
        f.widget->action(GraphEditorWidget::StandardAction::Group)->trigger();
        QCOMPARE(f.doc.content().groups.size(), 1);
        const ItemId g = f.doc.content().groups[0].id;
        QVERIFY(f.scene->groupItem(g));
        f.widget->action(GraphEditorWidget::StandardAction::CollapseGroup)->trigger();
        QVERIFY(f.doc.group(g)->collapsed);
        QVERIFY(!f.item("image")->isVisible());
        QVERIFY(f.scene->groupItem(g)->collapsed());
        // The edge into fc now starts at the collapsed box.
        auto* edge = f.scene->edgeItem(f.doc.idOf("flat"), f.doc.idOf("fc"), 0);
        QVERIFY(edge);
        QCOMPARE(edge->path().pointAtPercent(0), f.scene->groupItem(g)->outputAnchor());
        // Double-click on the box expands it.
        QPoint box = f.toView(f.scene->groupItem(g)->mapToScene(QPointF(nodeWidth() / 2, nodeHeight() / 2)));
        QTest::mouseDClick(f.view->viewport(), Qt::LeftButton, {}, box);
        QVERIFY(!f.doc.group(g)->collapsed);
        QVERIFY(f.item("image")->isVisible());
        f.widget->selectNodes({f.doc.idOf("image")});
        f.widget->action(GraphEditorWidget::StandardAction::Ungroup)->trigger();
        QVERIFY(f.doc.content().groups.isEmpty());
        f.doc.undoStack()->undo();
        QCOMPARE(f.doc.content().groups.size(), 1);
    }

    void exportsAndSummary() {
        Fixture f;
        QVERIFY(f.doc.connectNodes(f.doc.idOf("image"), f.doc.idOf("conv"), 0).ok());
        f.doc.removeItems({f.doc.idOf("free")});
        f.settle();
        QTemporaryDir dir;
        QVERIFY(f.widget->exportPng(dir.filePath("g.png")));
        QImage png(dir.filePath("g.png"));
        QVERIFY(!png.isNull());
        QVERIFY(png.width() > 200 && png.height() > 200);
        QVERIFY(f.widget->exportSvg(dir.filePath("g.svg")));
        QFile svg(dir.filePath("g.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("conv"));  // node names are drawn as text

        SummaryWidget summary;
        QAbstractItemModelTester tester(summary.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        summary.setAnalysis(f.widget->analysis()->latest());
        QCOMPARE(summary.model()->rowCount(), 4);
        // fc: 784 * 10 + 10, conv: 3 * 3 * 1 * 4 + 4.
        QCOMPARE(summary.model()->summary()->trainableParams, int64_t{7890});
        QVERIFY(summary.totalsText().contains(QLocale().toString(7890LL)));
        QVERIFY(summary.exportText(dir.filePath("summary.txt")));
        QFile st(dir.filePath("summary.txt"));
        QVERIFY(st.open(QIODevice::ReadOnly));
        QVERIFY(st.readAll().contains("fc"));
        // A model with a problem: no rows, the reason in the totals.
        QVERIFY(f.doc.setAttribute(f.doc.idOf("conv"), "kernel_size", AttrValue(std::vector<int64_t>{40, 40}))
                    .ok());
        f.settle();
        summary.setAnalysis(f.widget->analysis()->latest());
        QCOMPARE(summary.model()->rowCount(), 0);
        QVERIFY(summary.totalsText().contains("conv"));
    }

    void nodeMenuFreezesUpToANode() {
        Fixture f;
        QVERIFY(f.doc.connectNodes(f.doc.idOf("image"), f.doc.idOf("conv"), 0).ok());
        f.doc.removeItems({f.doc.idOf("free")});
        f.settle();
        QCOMPARE(f.widget->analysis()->latest().summary->frozenParams, int64_t{0});
        auto trainable = [&](const char* name) { return f.doc.nodeByName(name)->node.trainable; };

        // A right click on a card opens the node's menu.
        const QPoint onFlat = f.toView(f.item("flat")->sceneBoundingRect().center());
        emit f.view->customContextMenuRequested(onFlat);
        QTRY_VERIFY(qobject_cast<QMenu*>(QApplication::activePopupWidget()) != nullptr);
        auto* popup = qobject_cast<QMenu*>(QApplication::activePopupWidget());
        QVERIFY(popup->findChild<QAction*>(QStringLiteral("freezeUpTo")));
        QCOMPARE(f.widget->selectedNodes(), QVector<ItemId>{f.doc.idOf("flat")});
        popup->close();

        // "Freeze everything up to fc": fc and what feeds it are frozen, the conv branch trains.
        std::unique_ptr<QMenu> menu(f.widget->nodeMenu(f.doc.idOf("fc"), nullptr));
        QSignalSpy status(f.widget.get(), &GraphEditorWidget::statusMessage);
        menu->findChild<QAction*>(QStringLiteral("freezeUpTo"))->trigger();
        QVERIFY(!trainable("image") && !trainable("flat") && !trainable("fc"));
        QVERIFY(trainable("conv"));
        QCOMPARE(status.count(), 1);
        QVERIFY(status.first().first().toString().contains(QStringLiteral("fc")));
        f.settle();
        // The summary counts fc's 784 * 10 + 10 parameters as frozen.
        QCOMPARE(f.widget->analysis()->latest().summary->frozenParams, int64_t{7850});
        QCOMPARE(f.widget->analysis()->latest().summary->trainableParams, int64_t{40});
        QVERIFY(f.item("fc")->isFrozen());
        // One command, undone in one step.
        QCOMPARE(f.doc.undoStack()->undoText(), QStringLiteral("Freeze up to fc"));
        f.doc.undoStack()->undo();
        QVERIFY(trainable("image") && trainable("flat") && trainable("fc"));
        f.doc.undoStack()->redo();
        QVERIFY(!trainable("fc"));

        // Freezing up to conv unfreezes fc again: the choice describes the whole model.
        std::unique_ptr<QMenu> convMenu(f.widget->nodeMenu(f.doc.idOf("conv"), nullptr));
        convMenu->findChild<QAction*>(QStringLiteral("freezeUpTo"))->trigger();
        QVERIFY(!trainable("conv") && !trainable("image"));
        QVERIFY(trainable("fc") && trainable("flat"));

        // The single-node toggle and "Unfreeze all".
        std::unique_ptr<QMenu> fcMenu(f.widget->nodeMenu(f.doc.idOf("fc"), nullptr));
        fcMenu->findChild<QAction*>(QStringLiteral("toggleFreeze"))->trigger();
        QVERIFY(!trainable("fc"));
        std::unique_ptr<QMenu> again(f.widget->nodeMenu(f.doc.idOf("fc"), nullptr));
        again->findChild<QAction*>(QStringLiteral("unfreezeAll"))->trigger();
        for (const char* n : {"image", "flat", "fc", "conv"}) QVERIFY2(trainable(n), n);
        const int commands = f.doc.undoStack()->count();
        again->findChild<QAction*>(QStringLiteral("unfreezeAll"))->trigger();
        QCOMPARE(f.doc.undoStack()->count(), commands);  // nothing to change: nothing pushed
    }

    void lrMultipliersInOneCommand() {
        Fixture f;
        QHash<QString, double> m{{QStringLiteral("fc"), 0.25}, {QStringLiteral("conv"), 0.5},
                                 {QStringLiteral("nope"), 3.0}};
        f.doc.setLrMultipliers(m);
        QCOMPARE(f.doc.nodeByName("fc")->node.lrMultiplier, 0.25);
        QCOMPARE(f.doc.nodeByName("conv")->node.lrMultiplier, 0.5);
        QCOMPARE(f.doc.nodeByName("flat")->node.lrMultiplier, 1.0);
        f.doc.undoStack()->undo();
        QCOMPARE(f.doc.nodeByName("fc")->node.lrMultiplier, 1.0);
        QCOMPARE(f.doc.nodeByName("conv")->node.lrMultiplier, 1.0);
    }
};

QTEST_MAIN(TestGraphEditorWidget)
#include "tst_graph_editor_widget.moc"
