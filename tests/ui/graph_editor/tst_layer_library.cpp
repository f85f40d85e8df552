// SPDX-License-Identifier: Apache-2.0
// The user's layer library and the palette's "Layers" section: a layer made in one project is
// saved with "Save Layer to Library", shows in a second project's palette, is dropped onto its
// canvas (copying the definition in, one undo step), and bundled layers analyse through their
// expansion; the two-tower model drops as one two-input instance with the layer's inspector, and a
// project made with the former two-tower template opens unchanged. Library files of a later version or broken JSON are skipped with a message that
// names the file.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QGraphicsView>
#include <QLineEdit>
#include <QMimeData>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QUndoStack>
#include <QtTest>

#include <memory>

#include "engine/core/json_checked.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/graph_editor/inspector_widget.h"
#include "ui/graph_editor/layer_library.h"
#include "ui/graph_editor/palette_widget.h"

using namespace kiln::ui;
namespace engine = kiln::engine;

namespace {

QString example(const char* name) {
    return QStringLiteral(KILN_SOURCE_DIR "/resources/examples/") + QLatin1String(name);
}

QModelIndex layerEntry(PaletteModel* model, const QString& name) {
    for (int s = 0; s < model->rowCount(); ++s) {
        QModelIndex section = model->index(s, 0);
        for (int r = 0; r < model->rowCount(section); ++r) {
            QModelIndex idx = model->index(r, 0, section);
            if (idx.data(PaletteModel::KindRole) == QLatin1String("layer") &&
                idx.data(PaletteModel::IdRole).toString() == name)
                return idx;
        }
    }
    return {};
}

void dropOn(GraphView* view, QMimeData* mime, QPoint at) {
    QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view->viewport(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(at), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view->viewport(), &drop);
}

}  // namespace

class TestLayerLibrary : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_home.isValid());
    }

    void saveToLibraryAndReuseInAnotherProject() {
        UserLayerLibrary library(m_home.filePath("layers"));
        QVERIFY(library.layers().isEmpty());

        // Project A: make a layer of conv1/bn1/relu1 and save it to the library from the menu.
        EditorDocument a;
        QVERIFY(a.load(example("fashion_cnn.kiln")).ok());
        GraphEditorWidget editorA(&a);
        editorA.setUserLibrary(&library);
        editorA.show();
        auto made = a.makeLayer({a.idOf("conv1"), a.idOf("bn1"), a.idOf("relu1")}, "ConvBlock",
                                {{a.idOf("conv1"), "filters", "filters"}}, "conv, batch norm, ReLU");
        QVERIFY(made.ok());
        editorA.selectNodes({made.value()});
        QAction* save = editorA.action(GraphEditorWidget::StandardAction::SaveLayerToLibrary);
        QVERIFY(save->isEnabled());
        QVERIFY(editorA.editActions().contains(save));
        QSignalSpy changed(&library, &UserLayerLibrary::changed);
        save->trigger();
        QCOMPARE(changed.count(), 1);
        QCOMPARE(library.layers().size(), 1);
        const QString file = library.layers().front().file;
        QCOMPARE(QFileInfo(file).fileName(), QStringLiteral("ConvBlock.json"));
        auto json = engine::readJsonFileChecked(file.toStdString());
        QVERIFY(json.ok());
        QCOMPARE(json.value()["format"].get<std::string>(), std::string("kiln-layer"));
        QCOMPARE(json.value()["version"].get<int>(), kLayerFileVersion);
        QCOMPARE(json.value()["layers"][0]["name"].get<std::string>(), std::string("ConvBlock"));

        // Project B lists it in its palette (with the bundled layers) and uses it by a drop.
        EditorDocument b;
        QVERIFY(b.load(example("fashion_mlp.kiln")).ok());
        QVERIFY(b.content().layers.empty());
        GraphEditorWidget editorB(&b);
        editorB.resize(900, 700);
        editorB.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editorB));
        PaletteWidget palette;
        QAbstractItemModelTester tester(palette.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        palette.setUserLibrary(&library);
        palette.setProjectLayers(b.content().layers);
        const QModelIndex entry = layerEntry(palette.model(), "ConvBlock");
        QVERIFY(entry.isValid());
        QCOMPARE(entry.data(PaletteModel::SourceRole).toString(), QStringLiteral("library"));
        QCOMPARE(entry.parent().data().toString(), PaletteModel::tr("Layers"));
        QVERIFY(layerEntry(palette.model(), "ResidualBlock").isValid());
        // The search field finds it.
        palette.setFilter("convblock");
        QCOMPARE(palette.view()->model()->rowCount(), 1);
        palette.setFilter({});

        std::unique_ptr<QMimeData> mime(palette.mimeDataFor("ConvBlock"));
        QVERIFY(mime && mime->hasFormat(kLayerMimeType));
        const size_t nodesBefore = b.nodes().size();
        dropOn(editorB.view(), mime.get(), editorB.view()->viewport()->rect().center());
        QCOMPARE(b.nodes().size(), nodesBefore + 1);
        const EditorNode& inst = b.nodes().back();
        QCOMPARE(inst.node.op, std::string("ConvBlock"));
        QCOMPARE(std::get<int64_t>(inst.node.attrs.values().at("filters")), int64_t{16});
        QCOMPARE(b.content().layers.size(), size_t(1));
        QCOMPARE(b.content().layers.front().doc, std::string("conv, batch norm, ReLU"));
        // The palette now lists it as the project's own.
        palette.setProjectLayers(b.content().layers);
        QCOMPARE(layerEntry(palette.model(), "ConvBlock").data(PaletteModel::SourceRole).toString(),
                 QStringLiteral("project"));
        // One undo step takes back the node and the copied definition.
        QCOMPARE(b.undoStack()->count(), 1);
        b.undoStack()->undo();
        QCOMPARE(b.nodes().size(), nodesBefore);
        QVERIFY(b.content().layers.empty());
        b.undoStack()->redo();

        // Connected after the image input, the instance analyses through its expansion.
        QVERIFY(b.connectNodes(b.idOf("image"), inst.id, 0).ok());
        editorB.analysis()->waitForIdle();
        const auto* r = editorB.analysis()->latest().find(inst.node.name);
        QVERIFY(r && r->hasShape);
        QCOMPARE(r->output.toString(), std::string("[N,28,28,16]"));

        // A project with a different layer of that name refuses the library's.
        EditorDocument c;
        QVERIFY(c.load(example("fashion_cnn.kiln")).ok());
        QVERIFY(c.makeLayer({c.idOf("conv2"), c.idOf("bn2"), c.idOf("relu2")}, "ConvBlock", {}).ok());
        auto clash = addLayerFromPayload(&c, mime->data(kLayerMimeType), QPointF());
        QVERIFY(!clash.ok());
        QVERIFY2(clash.error().message.find("different layer called \"ConvBlock\"") != std::string::npos,
                 clash.error().message.c_str());
    }

    void bundledLayerFromPaletteAnalysesLikeItsExpansion() {
        EditorDocument doc;
        QVERIFY(doc.load(example("fashion_cnn.kiln")).ok());
        PaletteWidget palette;
        std::unique_ptr<QMimeData> mime(palette.mimeDataFor("ResidualBlock"));
        QVERIFY(mime);
        auto id = addLayerFromPayload(&doc, mime->data(kLayerMimeType), QPointF(500, 500));
        QVERIFY(id.ok());
        QVERIFY(doc.content().layers.empty());  // bundled layers are not copied
        QVERIFY(doc.setAttribute(id.value(), "filters", engine::AttrValue(int64_t{16})).ok());
        QVERIFY(doc.connectNodes(doc.idOf("relu1"), id.value(), 0).ok());
        // A wrong value is refused by the layer's own schema.
        QVERIFY(!doc.setAttribute(id.value(), "filters", engine::AttrValue(int64_t{0})).ok());
        QVERIFY(!doc.setAttribute(id.value(), "units", engine::AttrValue(int64_t{3})).ok());
        engine::Graph g;
        for (const auto& n : doc.nodes()) g.nodes.push_back(n.node);
        const auto lib = doc.layerLibrary();
        GraphAnalysis a = analyzeGraph(g, 1, &lib);
        const auto* r = a.find(doc.node(id.value())->node.name);
        QVERIFY(r && r->hasShape && r->error.empty());
        QCOMPARE(r->output.toString(), std::string("[N,28,28,16]"));
        // Two 3x3 convolutions of 16 -> 16 channels without bias and two batch norms.
        QCOMPARE(r->params, int64_t{2 * (3 * 3 * 16 * 16) + 2 * 4 * 16});
        // The summary is the expanded graph's.
        auto flat = engine::io::expandLayers(g, lib);
        QVERIFY(flat.ok());
        GraphAnalysis b = analyzeGraph(flat.value());
        QVERIFY(a.summary && b.summary);
        QCOMPARE(a.summary->trainableParams, b.summary->trainableParams);
        // A wrong channel count shows on the instance, with the expanded node's message.
        QVERIFY(doc.setAttribute(id.value(), "filters", engine::AttrValue(int64_t{8})).ok());
        g.nodes.clear();
        for (const auto& n : doc.nodes()) g.nodes.push_back(n.node);
        a = analyzeGraph(g, 1, &lib);
        QVERIFY(!a.find(doc.node(id.value())->node.name)->error.empty());
        QVERIFY(a.modelError);
    }

    // The two-tower model is a bundled layer: dropped from the palette it is one instance with two
    // input ports, its inspector is the layer's attributes, and it analyses through its expansion.
    void twoTowerFromThePaletteIsOneInstance() {
        QTemporaryDir dir;
        const QString path = dir.filePath("towers.kiln");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "kiln-project", "version": 2, "name": "towers", "graph": {"nodes": [
            {"name": "left", "op": "Input", "attrs": {"shape": [15]}},
            {"name": "right", "op": "Input", "attrs": {"shape": [15]}}]}})");
        f.close();
        EditorDocument doc;
        QVERIFY(doc.load(path).ok());
        GraphEditorWidget editor(&doc);
        editor.resize(900, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        PaletteWidget palette;
        const QModelIndex entry = layerEntry(palette.model(), "TwoTower");
        QVERIFY(entry.isValid());
        QCOMPARE(entry.data(PaletteModel::SourceRole).toString(), QStringLiteral("bundled"));
        QCOMPARE(entry.parent().data().toString(), PaletteModel::tr("Layers"));
        std::unique_ptr<QMimeData> mime(palette.mimeDataFor("TwoTower"));
        QVERIFY(mime && mime->hasFormat(kLayerMimeType));
        dropOn(editor.view(), mime.get(), editor.view()->viewport()->rect().center());
        QCOMPARE(doc.nodes().size(), size_t(3));
        const ItemId inst = doc.nodes().back().id;
        QCOMPARE(doc.node(inst)->node.op, std::string("TwoTower"));
        QVERIFY(doc.content().layers.empty());  // bundled layers are not copied
        auto* card = editor.scene()->nodeItem(inst);
        QVERIFY(card);
        QCOMPARE(card->inputPortCount(), 2);

        // The inspector: one field per exposed attribute, checked by the layer's schema.
        InspectorWidget inspector(&doc);
        inspector.show();
        inspector.setNode(inst);
        auto* units = qobject_cast<QLineEdit*>(inspector.editorFor("units"));
        auto* headUnits = qobject_cast<QLineEdit*>(inspector.editorFor("head_units"));
        auto* activation = qobject_cast<QComboBox*>(inspector.editorFor("activation"));
        QVERIFY(units && headUnits && activation && inspector.editorFor("head_activation"));
        QVERIFY(!inspector.editorFor("filters"));
        QCOMPARE(units->placeholderText(), QStringLiteral("64"));
        QCOMPARE(activation->currentText(), QStringLiteral("relu"));
        units->clear();
        QTest::keyClicks(units, "0");
        QTest::keyClick(units, Qt::Key_Return);
        QVERIFY2(inspector.lastError().contains("at least 1"), qPrintable(inspector.lastError()));
        units->clear();
        QTest::keyClicks(units, "32");
        QTest::keyClick(units, Qt::Key_Return);
        QVERIFY2(inspector.lastError().isEmpty(), qPrintable(inspector.lastError()));
        QCOMPARE(std::get<int64_t>(doc.node(inst)->node.attrs.values().at("units")), int64_t{32});
        activation->setFocus();
        QTest::keyClick(activation, Qt::Key_Down);  // relu -> relu6
        QCOMPARE(std::get<std::string>(doc.node(inst)->node.attrs.values().at("activation")), std::string("relu6"));

        // Fed by both inputs it analyses as the expanded towers, head and all.
        QVERIFY(doc.connectNodes(doc.idOf("left"), inst, 0).ok());
        QVERIFY(doc.connectNodes(doc.idOf("right"), inst, 1).ok());
        editor.analysis()->waitForIdle();
        const auto* r = editor.analysis()->latest().find(doc.node(inst)->node.name);
        QVERIFY(r && r->hasShape && r->error.empty());
        QCOMPARE(r->output.toString(), std::string("[N,1]"));
        QCOMPARE(r->params, int64_t{2 * (15 * 32 + 32) + (64 + 1)});
        // One undo step per edit: the two connections, the two attributes, the drop.
        for (int i = 0; i < 5; ++i) doc.undoStack()->undo();
        QCOMPARE(doc.nodes().size(), size_t(2));
    }

    // A project written by an earlier Kiln with the two-tower template holds plain nodes: it
    // opens unmodified, stays plain (no instance appears) and saves the same graph.
    void twoTowerTemplateProjectOpensUnchanged() {
        QTemporaryDir dir;
        const QString path = dir.filePath("old_towers.kiln");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "kiln-project", "version": 2, "name": "old_towers", "graph": {"nodes": [
            {"name": "tower_a", "op": "Input", "attrs": {"shape": [16]}},
            {"name": "dense_a", "op": "Dense", "inputs": ["tower_a"], "attrs": {"units": 64, "activation": "relu"}},
            {"name": "tower_b", "op": "Input", "attrs": {"shape": [16]}},
            {"name": "dense_b", "op": "Dense", "inputs": ["tower_b"], "attrs": {"units": 64, "activation": "relu"}},
            {"name": "concat", "op": "Concatenate", "inputs": ["dense_a", "dense_b"]},
            {"name": "head", "op": "Dense", "inputs": ["concat"], "attrs": {"units": 1}}]}})");
        f.close();
        EditorDocument doc;
        QVERIFY(doc.load(path).ok());
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(doc.content().layers.empty());
        std::vector<std::string> ops;
        for (const auto& n : doc.nodes()) ops.push_back(n.node.op);
        QCOMPARE(ops, (std::vector<std::string>{"Input", "Dense", "Input", "Dense", "Concatenate", "Dense"}));
        engine::Graph g;
        for (const auto& n : doc.nodes()) g.nodes.push_back(n.node);
        const auto lib = doc.layerLibrary();
        GraphAnalysis a = analyzeGraph(g, 1, &lib);
        QVERIFY(!a.modelError);
        QCOMPARE(a.find("head")->output.toString(), std::string("[N,1]"));
        QCOMPARE(a.summary->trainableParams, int64_t{2 * (16 * 64 + 64) + 128 + 1});
        const QString again = dir.filePath("saved.kiln");
        QVERIFY(doc.save(again).ok());
        auto before = engine::readJsonFileChecked(path.toStdString());
        auto after = engine::readJsonFileChecked(again.toStdString());
        QVERIFY(before.ok() && after.ok());
        QCOMPARE(after.value()["graph"]["nodes"], before.value()["graph"]["nodes"]);
        QVERIFY(!after.value().contains("layers"));
    }

    void copyPasteCarriesTheDefinition() {
        EditorDocument a;
        QVERIFY(a.load(example("fashion_cnn.kiln")).ok());
        auto made = a.makeLayer({a.idOf("conv1"), a.idOf("bn1"), a.idOf("relu1")}, "ConvBlock", {});
        QVERIFY(made.ok());
        const QByteArray data = a.copyNodes({made.value()});
        EditorDocument b;
        QVERIFY(b.load(example("fashion_mlp.kiln")).ok());
        const auto ids = b.pasteNodes(data, QPointF(40, 40));
        QCOMPARE(ids.size(), 1);
        QCOMPARE(b.node(ids.front())->node.op, std::string("ConvBlock"));
        QCOMPARE(b.content().layers.size(), size_t(1));
        QCOMPARE(b.content().layers.front().nodes.size(), size_t(3));
        b.undoStack()->undo();
        QVERIFY(b.content().layers.empty());
    }

    void multiOutputInstancesAnalysePerOutput() {
        // A project layer with two outputs of different widths; consumers name one each.
        auto defs = engine::io::parseLayerDefs(nlohmann::json::parse(R"([
            {"name": "Fork", "inputs": ["x"], "outputs": ["wide", "narrow"],
             "nodes": [{"name": "wide", "op": "Dense", "inputs": ["x"], "attrs": {"units": 8}},
                       {"name": "narrow", "op": "Dense", "inputs": ["x"], "attrs": {"units": 2}}]}])"),
                                               {}, "layers");
        QVERIFY(defs.ok());
        engine::io::Project p;
        p.layers = defs.value();
        auto node = [](const char* name, const char* op, std::vector<std::string> in) {
            engine::Node n;
            n.name = name;
            n.op = op;
            n.inputs = std::move(in);
            return n;
        };
        p.graph.nodes = {node("in", "Input", {}), node("fork", "Fork", {"in"}), node("a", "ReLU", {"fork:wide"}),
                         node("b", "ReLU", {"fork:narrow"}), node("c", "ReLU", {"fork"})};
        p.graph.nodes[0].attrs.set("shape", std::vector<int64_t>{4});
        EditorDocument doc;
        doc.setProject(p, true);
        engine::Graph g;
        for (const auto& n : doc.nodes()) g.nodes.push_back(n.node);
        const auto lib = doc.layerLibrary();
        GraphAnalysis a = analyzeGraph(g, 1, &lib);
        QCOMPARE(a.find("a")->output.toString(), std::string("[N,8]"));
        QCOMPARE(a.find("b")->output.toString(), std::string("[N,2]"));
        QCOMPARE(a.find("fork")->ports.size(), size_t(2));
        QCOMPARE(a.find("fork")->params, int64_t{4 * 8 + 8 + 4 * 2 + 2});
        // Naming the instance alone is ambiguous.
        QVERIFY2(a.find("c")->error.find("several outputs") != std::string::npos, a.find("c")->error.c_str());
        // The canvas draws the two named edges from the instance's card.
        GraphEditorWidget editor(&doc);
        int fromFork = 0;
        for (auto* item : editor.scene()->items())
            if (item->type() == EdgeItemType && static_cast<EdgeItem*>(item)->from() == doc.idOf("fork")) ++fromFork;
        QCOMPARE(fromFork, 3);
    }

    void badLibraryFilesAreNamed() {
        QTemporaryDir dir;
        QFile newer(dir.filePath("Future.json"));
        QVERIFY(newer.open(QIODevice::WriteOnly));
        newer.write(R"({"format": "kiln-layer", "version": 99, "layers": []})");
        newer.close();
        QFile broken(dir.filePath("Broken.json"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"format\": \"kiln-layer\",\n \"version\": 1, \"layers\": [");
        broken.close();
        QFile unknown(dir.filePath("Unknown.json"));
        QVERIFY(unknown.open(QIODevice::WriteOnly));
        unknown.write(R"({"format": "kiln-layer", "version": 1, "layers": [
            {"name": "Odd", "inputs": ["x"], "outputs": ["d"],
             "nodes": [{"name": "d", "op": "Dense", "inputs": ["x"], "attrs": {"units": {"$attr": "size"}}}]}]})");
        unknown.close();
        UserLayerLibrary library(dir.path());
        QVERIFY(library.layers().isEmpty());
        const QString all = library.problems().join('\n');
        QCOMPARE(library.problems().size(), 3);
        QVERIFY2(all.contains("Future.json") && all.contains("newer Kiln"), qPrintable(all));
        QVERIFY2(all.contains("Broken.json"), qPrintable(all));
        QVERIFY2(all.contains("size"), qPrintable(all));
    }

private:
    QTemporaryDir m_home;
};

QTEST_MAIN(TestLayerLibrary)
#include "tst_layer_library.moc"
