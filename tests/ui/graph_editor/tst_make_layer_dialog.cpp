// SPDX-License-Identifier: Apache-2.0
// "Make layer" driven like a user: nodes picked with Ctrl+clicks on the canvas, the context
// menu's action, the dialog's refusals (no name, a clash, a bad name, a selection without
// inputs or with two ways out), then a layer exposing `filters`. The instance must analyse,
// expand in the engine to the very graph it replaced, compile for training, survive undo/redo
// and a save/reload, and take attribute edits from the inspector. With KILN_SCREENSHOT=<file.png>
// set (under an X server) it grabs the screen, palette and dialog open, with ImageMagick's `import`.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QAction>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProcess>
#include <QPixmap>
#include <QPushButton>
#include <QScreen>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>
#include <QtTest>

#include <functional>
#include <memory>

#include "engine/api/training_job.h"
#include "engine/ops/model.h"
#include "engine/ops/op_table.h"
#include "ui/common/language.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/graph_editor/inspector_widget.h"
#include "ui/graph_editor/layer_editor_dialog.h"
#include "ui/graph_editor/make_layer_dialog.h"
#include "ui/graph_editor/palette_widget.h"

using namespace kiln::ui;
namespace engine = kiln::engine;

namespace {

QString examplePath() {
    return QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln");
}

struct Fixture {
    EditorDocument doc;
    std::unique_ptr<GraphEditorWidget> widget;

    Fixture() {
        auto st = doc.load(examplePath());
        if (!st.ok()) qFatal("cannot load the example: %s", st.error().message.c_str());
        widget = std::make_unique<GraphEditorWidget>(&doc);
        widget->resize(1100, 900);
        widget->show();
    }
    GraphView* view() const { return widget->view(); }
    // Ctrl+click on a node's card, as a user adds it to the selection.
    void ctrlClick(const char* name) {
        NodeItem* item = widget->scene()->nodeItem(doc.idOf(name));
        QVERIFY(item);
        view()->centerOn(item);
        QPoint at = view()->mapFromScene(item->sceneBoundingRect().center() + QPointF(0, 8));
        QTest::mouseClick(view()->viewport(), Qt::LeftButton, Qt::ControlModifier, at);
    }
    void select(std::initializer_list<const char*> names) {
        widget->scene()->clearSelection();
        for (const char* n : names) ctrlClick(n);
    }
    void settle() {
        widget->analysis()->waitForIdle();
        QCoreApplication::processEvents();
    }
    QAction* contextAction(const QString& text) {
        std::unique_ptr<QMenu> menu(widget->createContextMenu(nullptr));
        for (QAction* a : menu->actions())
            if (a->text() == text) return a;
        return nullptr;
    }
};

// Runs `drive` on the dialog once it is open (the action's exec() blocks).
template <typename Dialog = MakeLayerDialog>
void whenDialogOpens(std::function<void(Dialog*)> drive) {
    auto* timer = new QTimer;
    timer->setInterval(20);
    QObject::connect(timer, &QTimer::timeout, [timer, drive] {
        auto* dialog = qobject_cast<Dialog*>(QApplication::activeModalWidget());
        if (!dialog) return;
        timer->stop();
        timer->deleteLater();
        drive(dialog);
    });
    timer->start();
}

void typeName(MakeLayerDialog* d, const QString& text) {
    d->nameEdit()->clear();
    QTest::keyClicks(d->nameEdit(), text);
}

void clickOk(MakeLayerDialog* d) {
    QTest::mouseClick(d->buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
}

// The original graph with conv1, bn1 and relu1 renamed as the expansion of instance `inst`
// names them.
engine::Graph renamedOriginal(const engine::Graph& g, const std::string& inst) {
    engine::Graph out = g;
    auto rename = [&](std::string& s) {
        if (s == "conv1" || s == "bn1" || s == "relu1") s = inst + "/" + s;
    };
    for (auto& n : out.nodes) {
        rename(n.name);
        for (auto& in : n.inputs) rename(in);
    }
    return out;
}

}  // namespace

class TestMakeLayerDialog : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
    }

    void makeLayerFromSelection() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        f.settle();
        const engine::io::Project before = f.doc.project();
        const auto* conv1Before = f.widget->analysis()->latest().find("conv1");
        QVERIFY(conv1Before);
        const int64_t blockParams = conv1Before->params + f.widget->analysis()->latest().find("bn1")->params;

        f.select({"conv1", "bn1", "relu1"});
        QCOMPARE(f.widget->selectedNodes().size(), 3);
        QAction* make = f.contextAction(GraphEditorWidget::tr("Make La&yer…"));
        QVERIFY(make);
        QVERIFY(make->isEnabled());

        QStringList seen;
        whenDialogOpens<MakeLayerDialog>([&](MakeLayerDialog* d) {
            QVERIFY(d->interfaceLabel()->text().contains("image"));
            QVERIFY(d->interfaceLabel()->text().contains("relu1"));
            clickOk(d);  // no name
            seen << d->errorText();
            typeName(d, "Conv2D");
            clickOk(d);
            seen << d->errorText();
            typeName(d, "1block");
            clickOk(d);
            seen << d->errorText();
            typeName(d, "ResidualBlock");
            clickOk(d);
            seen << d->errorText();
            typeName(d, "ConvBlock");
            QVERIFY(d->setExposed("conv1", "filters", true));
            QVERIFY(d->setExposed("conv1", "strides", true));
            const QString shot = qEnvironmentVariable("KILN_SCREENSHOT");
            if (!shot.isEmpty()) {
                PaletteWidget palette;
                palette.setGeometry(0, 0, 320, 900);
                palette.show();
                palette.view()->scrollToBottom();
                f.widget->setGeometry(320, 0, 1080, 900);
                d->docEdit()->setText("Conv2D, BatchNormalization, ReLU");
                d->move(560, 180);
                QTest::qWait(1500);
                QProcess import;
                import.start(QStringLiteral("import"), {QStringLiteral("-window"), QStringLiteral("root"), shot});
                QVERIFY(import.waitForFinished(60000));
                QCOMPARE(import.exitCode(), 0);
            }
            clickOk(d);
        });
        make->trigger();
        QCOMPARE(seen.size(), 4);
        QVERIFY2(seen[0].contains("needs a name"), qPrintable(seen[0]));
        QVERIFY2(seen[1].contains("built-in op"), qPrintable(seen[1]));
        QVERIFY2(seen[2].contains("cannot name a layer"), qPrintable(seen[2]));
        QVERIFY2(seen[3].contains("library"), qPrintable(seen[3]));

        // The selection became one instance; the definition is in the project.
        QVERIFY(!f.doc.nodeByName("conv1"));
        const EditorNode* inst = f.doc.nodeByName("conv_block");
        QVERIFY(inst);
        QCOMPARE(inst->node.op, std::string("ConvBlock"));
        QCOMPARE(inst->node.inputs, std::vector<std::string>{"image"});
        QCOMPARE(f.doc.nodeByName("pool1")->node.inputs, std::vector<std::string>{"conv_block"});
        QCOMPARE(f.widget->selectedNodes(), QVector<ItemId>{inst->id});
        QCOMPARE(f.doc.content().layers.size(), size_t(1));
        const auto& layer = f.doc.content().layers.front();
        QCOMPARE(layer.inputs, std::vector<std::string>{"x"});
        QCOMPARE(layer.outputs, std::vector<std::string>{"relu1"});
        QCOMPARE(layer.nodes.size(), size_t(3));
        QCOMPARE(layer.attributes.size(), size_t(2));
        QCOMPARE(layer.attributes[0].name, std::string("filters"));
        QCOMPARE(std::get<int64_t>(layer.attributes[0].defaultValue), int64_t{16});
        QCOMPARE(layer.nodes[0].attrRefs.at("filters"), std::string("filters"));

        // Live analysis goes through the expansion: shape and parameters of the block.
        f.settle();
        const auto& a = f.widget->analysis()->latest();
        QVERIFY2(!a.modelError, a.modelError ? a.modelError->message.c_str() : "");
        const auto* r = a.find("conv_block");
        QVERIFY(r && r->hasShape);
        QCOMPARE(r->output.toString(), std::string("[N,28,28,16]"));
        QCOMPARE(r->params, blockParams);
        QVERIFY(a.summary);

        // The engine expands the instance into exactly the nodes it replaced.
        auto expanded = engine::io::modelGraph(f.doc.project());
        QVERIFY2(expanded.ok(), expanded.ok() ? "" : expanded.error().message.c_str());
        const engine::Graph expected = renamedOriginal(before.graph, "conv_block");
        QCOMPARE(expanded.value().nodes.size(), expected.nodes.size());
        // Same names, ops, inputs and flags, and the same attribute values once the op's
        // defaults are filled in (an exposed attribute is always written out, "strides" too).
        for (size_t i = 0; i < expected.nodes.size(); ++i) {
            const auto& got = expanded.value().nodes[i];
            const auto& want = expected.nodes[i];
            QCOMPARE(got.name, want.name);
            QCOMPARE(got.op, want.op);
            QCOMPARE(got.inputs, want.inputs);
            QCOMPARE(got.trainable, want.trainable);
            const auto* def = engine::ops::findOp(got.op);
            QVERIFY(def);
            auto a1 = engine::ops::resolveAttrs(*def, got);
            auto a2 = engine::ops::resolveAttrs(*def, want);
            QVERIFY(a1.ok() && a2.ok());
            QVERIFY2(a1.value().values() == a2.value().values(), got.name.c_str());
        }
        QCOMPARE(expanded.value().outputs, expected.outputs);

        // And it compiles for training as the original does, with the same parameters.
        if (!QFileInfo::exists(QString::fromStdString(
                engine::io::resolveDataPath("${KILN_DATA}/fashion-mnist/train-images-idx3-ubyte.gz", {}))))
            QSKIP("the Fashion-MNIST files are not in KILN_DATA: the training compile is not checked");
        QTemporaryDir runs;
        engine::api::TrainingOptions options;
        options.runDir = runs.filePath("made").toStdString();
        options.threads = 1;
        auto made = engine::api::TrainingJob::prepare(f.doc.project(), examplePath().toStdString(), options);
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().message.c_str());
        options.runDir = runs.filePath("flat").toStdString();
        auto flat = engine::api::TrainingJob::prepare(before, examplePath().toStdString(), options);
        QVERIFY(flat.ok());
        int64_t p1 = 0, p2 = 0;
        for (const auto& n : made.value()->model().nodes)
            for (const auto& p : n.params) p1 += p.shape.numel();
        for (const auto& n : flat.value()->model().nodes)
            for (const auto& p : n.params) p2 += p.shape.numel();
        QCOMPARE(p1, p2);
        QVERIFY(p1 > 0);
    }

    void undoRedoSaveReloadAndInspector() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        const size_t nodesBefore = f.doc.nodes().size();
        f.select({"conv2", "bn2", "relu2"});
        auto made = f.doc.makeLayer(f.widget->selectedNodes(), "Block", {{f.doc.idOf("conv2"), "filters", "width"}});
        QVERIFY2(made.ok(), made.ok() ? "" : made.error().message.c_str());
        QCOMPARE(f.doc.nodes().size(), nodesBefore - 2);
        QCOMPARE(f.doc.undoStack()->count(), 1);
        // Ctrl+Z on the canvas brings the nodes back and drops the definition.
        f.view()->setFocus();
        QTest::keyClick(f.view(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(f.doc.nodes().size(), nodesBefore);
        QVERIFY(f.doc.nodeByName("conv2"));
        QVERIFY(f.doc.content().layers.empty());
        f.doc.undoStack()->redo();
        QCOMPARE(f.doc.content().layers.size(), size_t(1));
        const ItemId inst = f.doc.idOf("block");
        QVERIFY(inst);

        // The inspector is the layer's interface: "width", an int of at least 1.
        InspectorWidget inspector(&f.doc);
        inspector.show();
        inspector.setNode(inst);
        auto* width = qobject_cast<QLineEdit*>(inspector.editorFor("width"));
        QVERIFY(width);
        QVERIFY(!inspector.editorFor("units"));
        width->clear();
        QTest::keyClicks(width, "0");
        QTest::keyClick(width, Qt::Key_Return);
        QVERIFY2(inspector.lastError().contains("at least 1"), qPrintable(inspector.lastError()));
        width->clear();
        QTest::keyClicks(width, "8");
        QTest::keyClick(width, Qt::Key_Return);
        QVERIFY2(inspector.lastError().isEmpty(), qPrintable(inspector.lastError()));
        QCOMPARE(std::get<int64_t>(f.doc.node(inst)->node.attrs.values().at("width")), int64_t{8});
        f.settle();
        QCOMPARE(f.widget->analysis()->latest().find("block")->output.toString(), std::string("[N,14,14,8]"));

        // Save and reload: the definition and the instance come back and analyse cleanly.
        QTemporaryDir dir;
        const QString path = dir.filePath("with_layer.kiln");
        QVERIFY(f.doc.save(path).ok());
        EditorDocument reloaded;
        QVERIFY(reloaded.load(path).ok());
        QCOMPARE(reloaded.content().layers.size(), size_t(1));
        QCOMPARE(reloaded.content().layers.front().name, std::string("Block"));
        QCOMPARE(reloaded.nodeByName("block")->node.op, std::string("Block"));
        engine::Graph g;
        for (const auto& n : reloaded.nodes()) g.nodes.push_back(n.node);
        const auto lib = reloaded.layerLibrary();
        auto a = analyzeGraph(g, 1, &lib);
        QVERIFY2(!a.modelError, a.modelError ? a.modelError->message.c_str() : "");
        QCOMPARE(a.find("block")->output.toString(), std::string("[N,14,14,8]"));
    }

    void openLayerEditsTheDefinition() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        auto made = f.doc.makeLayer({f.doc.idOf("conv1"), f.doc.idOf("bn1"), f.doc.idOf("relu1")}, "ConvBlock",
                                    {{f.doc.idOf("conv1"), "filters", "filters"}});
        QVERIFY(made.ok());
        f.settle();
        const int steps = f.doc.undoStack()->count();
        // A double-click on the instance's card opens its inside under a breadcrumb.
        QString crumb, inputShape;
        whenDialogOpens<LayerEditorDialog>([&](LayerEditorDialog* d) {
            crumb = d->breadcrumb()->text();
            EditorDocument* in = d->inside();
            QVERIFY(in->nodeByName("x") && in->nodeByName("conv1") && in->nodeByName("relu1"));
            d->editor()->analysis()->waitForIdle();
            inputShape = QString::fromStdString(d->editor()->analysis()->latest().find("conv1")->output.toString());
            // Edit through the dialog's inspector: a wider kernel, and a new default for filters.
            d->inspector()->setNode(in->idOf("conv1"));
            auto* kernel = qobject_cast<QLineEdit*>(d->inspector()->editorFor("kernel_size"));
            QVERIFY(kernel);
            kernel->clear();
            QTest::keyClicks(kernel, "5, 5");
            QTest::keyClick(kernel, Qt::Key_Return);
            QVERIFY(d->isVisible());  // Enter in a field does not close the dialog
            auto* filters = qobject_cast<QLineEdit*>(d->inspector()->editorFor("filters"));
            filters->clear();
            QTest::keyClicks(filters, "24");
            QTest::keyClick(filters, Qt::Key_Return);
            QTest::mouseClick(d->backButton(), Qt::LeftButton);
        });
        NodeItem* card = f.widget->scene()->nodeItem(made.value());
        f.view()->centerOn(card);
        QTest::mouseDClick(f.view()->viewport(), Qt::LeftButton, {},
                           f.view()->mapFromScene(card->sceneBoundingRect().center() + QPointF(0, 8)));
        QVERIFY2(crumb.contains("fashion_cnn") && crumb.contains("ConvBlock"), qPrintable(crumb));
        QCOMPARE(inputShape, QStringLiteral("[N,28,28,16]"));
        QCOMPARE(f.doc.undoStack()->count(), steps + 1);
        const auto& layer = f.doc.content().layers.front();
        QCOMPARE(std::get<std::vector<int64_t>>(layer.nodes[0].node.attrs.values().at("kernel_size")),
                 (std::vector<int64_t>{5, 5}));
        QCOMPARE(std::get<int64_t>(layer.attributes[0].defaultValue), int64_t{24});
        QCOMPARE(layer.nodes[0].attrRefs.at("filters"), std::string("filters"));
        // The instance follows: its own filters (16), the new kernel.
        auto flat = engine::io::modelGraph(f.doc.project());
        QVERIFY(flat.ok());
        const auto& conv = flat.value().nodes[static_cast<size_t>(flat.value().find("conv_block/conv1"))];
        QCOMPARE(std::get<int64_t>(conv.attrs.values().at("filters")), int64_t{16});
        QCOMPARE(std::get<std::vector<int64_t>>(conv.attrs.values().at("kernel_size")), (std::vector<int64_t>{5, 5}));
        f.settle();
        QCOMPARE(f.widget->analysis()->latest().find("conv_block")->params, int64_t{5 * 5 * 16 + 4 * 16});
        // One undo step puts the old definition back.
        f.doc.undoStack()->undo();
        QVERIFY(!f.doc.content().layers.front().nodes[0].node.attrs.has("kernel_size") ||
                std::get<std::vector<int64_t>>(f.doc.content().layers.front().nodes[0].node.attrs.values().at(
                    "kernel_size")) == (std::vector<int64_t>{3, 3}));

        // Removing the layer's input inside is refused on Back; Discard leaves all as it was.
        QString refusal;
        whenDialogOpens<LayerEditorDialog>([&](LayerEditorDialog* d) {
            d->inside()->removeItems({d->inside()->idOf("x")});
            QTest::mouseClick(d->backButton(), Qt::LeftButton);
            refusal = d->errorText();
            d->reject();
        });
        QVERIFY(f.widget->openLayer(made.value()));
        QVERIFY2(refusal.contains("input \"x\""), qPrintable(refusal));
        QCOMPARE(f.doc.undoStack()->index(), steps);
        // Built-in layers have no inside to edit.
        auto bundled = f.doc.addLayerNode("ResidualBlock", QPointF(800, 0));
        QVERIFY(bundled.ok());
        QVERIFY(!f.widget->openLayer(bundled.value()));
    }

    void refusedSelections() {
        Fixture f;
        QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
        // The Input node cannot go inside: the dialog says so and offers no OK.
        f.select({"image", "conv1"});
        QString why;
        bool okEnabled = true;
        whenDialogOpens<MakeLayerDialog>([&](MakeLayerDialog* d) {
            why = d->errorText();
            okEnabled = d->buttons()->button(QDialogButtonBox::Ok)->isEnabled();
            d->reject();
        });
        QCOMPARE(f.widget->makeLayerInteractive(), ItemId{0});
        QVERIFY2(why.contains("takes no input"), qPrintable(why));
        QVERIFY(!okEnabled);
        // Two ways out (conv1 feeds bn1, pool1 feeds conv2).
        f.select({"conv1", "pool1"});
        auto r = f.doc.makeLayer(f.widget->selectedNodes(), "Split", {});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("(conv1, pool1)") != std::string::npos &&
                     r.error().message.find("exactly one output") != std::string::npos,
                 r.error().message.c_str());
        // Exposing two values under one name would change the graph: refused.
        f.select({"conv1", "bn1", "relu1", "pool1", "conv2"});
        r = f.doc.makeLayer(f.widget->selectedNodes(), "Twice",
                            {{f.doc.idOf("conv1"), "filters", "filters"}, {f.doc.idOf("conv2"), "filters", "filters"}});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("different types or values") != std::string::npos, r.error().message.c_str());
        QCOMPARE(f.doc.undoStack()->count(), 0);
        QVERIFY(f.doc.content().layers.empty());
    }

    // docs/custom_layers.md's pictures of the dialog, in English and Simplified Chinese:
    // tools/layers_screenshot.sh runs this under Xvfb with KILN_SCREENSHOT_DIR set, and it saves
    // make_layer_dialog_<en|zh_CN>.png there, the dialog alone at its own size (the whole
    // screen shrinks its text too much): conv1, bn1 and relu1 of the Fashion-MNIST CNN example
    // made into ConvBlock with `filters` and `strides` exposed. Skipped without KILN_SCREENSHOT_DIR.
    void screenshot() {
        const QString dir = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("takes the documentation's screenshots when KILN_SCREENSHOT_DIR names the folder");
        for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            QVERIFY(Language::apply(lang));
            Fixture f;
            QVERIFY(QTest::qWaitForWindowExposed(f.widget.get()));
            f.settle();
            f.select({"conv1", "bn1", "relu1"});
            QAction* make = f.contextAction(GraphEditorWidget::tr("Make La&yer…"));
            QVERIFY(make);
            bool saved = false;
            whenDialogOpens<MakeLayerDialog>([&](MakeLayerDialog* d) {
                typeName(d, "ConvBlock");
                d->setExposed("conv1", "filters", true);
                d->setExposed("conv1", "strides", true);
                d->docEdit()->setText("Conv2D, BatchNormalization, ReLU");
                QTest::qWait(500);
                const QPixmap shot = d->screen()->grabWindow(d->winId());
                saved = !shot.isNull() && shot.save(QDir(dir).filePath(QStringLiteral("make_layer_dialog_%1.png").arg(lang)));
                d->reject();
            });
            make->trigger();
            QVERIFY(saved);
        }
        QVERIFY(Language::apply(QStringLiteral("en")));
    }
};

QTEST_MAIN(TestMakeLayerDialog)
#include "tst_make_layer_dialog.moc"
