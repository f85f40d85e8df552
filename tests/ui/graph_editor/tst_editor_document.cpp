// SPDX-License-Identifier: Apache-2.0
// The editor document: hand-written projects open laid out, save/open round trips, undo/redo of
// every command class, merging of drags and edits, the connection rule, groups, and the
// background analysis (shapes, errors on nodes, latest request wins).
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <fstream>

#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "engine/ops/summary.h"
#include "ui/graph_editor/editor_commands.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_layout.h"

using namespace kiln::ui;
using kiln::engine::AttrValue;

namespace {

const char* kHandWritten = R"({
  "format": "kiln-project", "version": 2, "name": "small_cnn",
  "graph": {"nodes": [
    {"name": "image", "op": "Input", "attrs": {"shape": [28, 28, 1]}},
    {"name": "conv1", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same"}},
    {"name": "bn1", "op": "BatchNormalization", "inputs": ["conv1"]},
    {"name": "relu1", "op": "ReLU", "inputs": ["bn1"]},
    {"name": "conv2", "op": "Conv2D", "inputs": ["relu1"], "attrs": {"filters": 8, "kernel_size": 3, "padding": "same"}},
    {"name": "skip", "op": "Add", "inputs": ["conv2", "conv1"]},
    {"name": "pool", "op": "GlobalAveragePooling2D", "inputs": ["skip"]},
    {"name": "logits", "op": "Dense", "inputs": ["pool"], "attrs": {"units": 10}}
  ], "outputs": ["logits"]},
  "data": {"format": "idx"},
  "training": {"epochs": 1},
  "notes": "kept verbatim"
})";

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    QString path = dir.filePath(name);
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(text);
    return path;
}

ItemId id(const EditorDocument& doc, const char* name) {
    return doc.idOf(name);
}

}  // namespace

class TestEditorDocument : public QObject {
    Q_OBJECT
private slots:
    void newDocumentIsCleanWithOneInput() {
        EditorDocument doc;
        QCOMPARE(doc.nodes().size(), size_t(1));
        QCOMPARE(QString::fromStdString(doc.nodes()[0].node.op), QStringLiteral("Input"));
        QVERIFY(!doc.isModified());
        QVERIFY(doc.filePath().isEmpty());
    }

    void handWrittenProjectOpensLaidOut() {
        QTemporaryDir dir;
        QString path = writeFile(dir, "cnn.kiln", kHandWritten);
        EditorDocument doc;
        auto st = doc.load(path);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.nodes().size(), size_t(8));
        // Every producer sits above its consumers; no two nodes overlap.
        for (const auto& n : doc.nodes()) {
            for (const auto& in : n.node.inputs) {
                const auto* p = doc.nodeByName(in);
                QVERIFY(p);
                QVERIFY2(p->pos.y() + nodeHeight() < n.pos.y(), (in + " -> " + n.node.name).c_str());
            }
            for (const auto& m : doc.nodes())
                if (m.id != n.id)
                    QVERIFY(!QRectF(n.pos, QSizeF(nodeWidth(), nodeHeight()))
                                 .intersects(QRectF(m.pos, QSizeF(nodeWidth(), nodeHeight()))));
        }
        // The skip connection spans layers and the layout still has no crossings.
        std::vector<std::vector<int>> inputs;
        std::vector<QPointF> pos;
        for (const auto& n : doc.nodes()) {
            std::vector<int> ins;
            for (const auto& in : n.node.inputs)
                for (size_t k = 0; k < doc.nodes().size(); ++k)
                    if (doc.nodes()[k].node.name == in) ins.push_back(static_cast<int>(k));
            inputs.push_back(ins);
            pos.push_back(doc.nodes()[inputs.size() - 1].pos);
        }
        QCOMPARE(countCrossings(inputs, pos), 0);
    }

    void layoutRemovesCrossings() {
        // Two sources feeding two sinks crosswise in file order: a→d, b→c, plus a→c.
        std::vector<std::vector<int>> inputs = {{}, {}, {1}, {0}};
        auto pos = layeredLayout(inputs);
        QCOMPARE(countCrossings(inputs, pos), 0);
        // A wider bipartite tangle.
        std::vector<std::vector<int>> tangle = {{}, {}, {}, {}, {3}, {2}, {1}, {0}};
        auto p2 = layeredLayout(tangle);
        QCOMPARE(countCrossings(tangle, p2), 0);
        // Cycles do not hang the layout.
        std::vector<std::vector<int>> loop = {{2}, {0}, {1}};
        QCOMPARE(layeredLayout(loop).size(), size_t(3));
    }

    // The editor does not edit composite layers yet, but it must not lose them: the project's
    // "layers" section and the nodes using a layer survive open and save.
    void compositeLayersSurviveSave() {
        QTemporaryDir dir;
        const QByteArray text = R"({
  "format": "kiln-project", "version": 2,
  "layers": [{"name": "Pair", "inputs": ["x"], "outputs": ["b"],
              "attributes": [{"name": "units", "type": "int", "default": 4, "min": 1}],
              "nodes": [{"name": "a", "op": "Dense", "inputs": ["x"], "attrs": {"units": {"$attr": "units"}}},
                        {"name": "b", "op": "ReLU", "inputs": ["a"]}]}],
  "graph": {"nodes": [
    {"name": "x", "op": "Input", "attrs": {"shape": [3]}},
    {"name": "p", "op": "Pair", "inputs": ["x"], "attrs": {"units": 6}},
    {"name": "out", "op": "Dense", "inputs": ["p"], "attrs": {"units": 2}}]}
})";
        EditorDocument doc;
        QVERIFY(doc.load(writeFile(dir, "layers.kiln", text)).ok());
        QVERIFY(doc.setAttribute(id(doc, "out"), "units", AttrValue(int64_t{3})).ok());
        const QString path = dir.filePath("saved.kiln");
        QVERIFY(doc.save(path).ok());
        auto back = kiln::engine::io::loadProject(path.toStdString());
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QCOMPARE(back->layers.size(), size_t{1});
        QCOMPARE(back->layers[0].name, std::string("Pair"));
        QCOMPARE(back->layers[0].nodes[0].attrRefs.at("units"), std::string("units"));
        QCOMPARE(back->graph.nodes[1].op, std::string("Pair"));
        auto g = kiln::engine::io::modelGraph(*back);
        QVERIFY2(g.ok(), g.ok() ? "" : g.error().toString().c_str());
        QCOMPARE(g->node("p/a")->attrs.getInt("units"), int64_t{6});
        QCOMPARE(g->node("out")->inputs, std::vector<std::string>{"p/b"});
    }

    void saveOpenRoundTripIsIdentical() {
        QTemporaryDir dir;
        EditorDocument doc;
        QVERIFY(doc.load(writeFile(dir, "cnn.kiln", kHandWritten)).ok());
        doc.moveNodes({{id(doc, "pool"), QPointF(512.5, 77.25)}});
        QVERIFY(doc.setAttribute(id(doc, "logits"), "activation", AttrValue(std::string("softmax"))).ok());
        doc.setTrainable(id(doc, "bn1"), false);
        QVERIFY(doc.setLrMultiplier(id(doc, "conv2"), 0.5).ok());
        ItemId g = doc.groupNodes({id(doc, "conv1"), id(doc, "bn1"), id(doc, "relu1")}, "stem");
        doc.setGroupCollapsed(g, true);
        doc.addComment(QRectF(10, 20, 200, 80), "Residual stem\nsecond line");
        QVERIFY(doc.isModified());
        QString path = dir.filePath("saved.kiln");
        QVERIFY(doc.save(path).ok());
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.filePath(), path);

        EditorDocument other;
        QVERIFY(other.load(path).ok());
        QCOMPARE(other.toJson(), doc.toJson());
        QCOMPARE(other.nodes().size(), doc.nodes().size());
        for (size_t i = 0; i < doc.nodes().size(); ++i) {
            QCOMPARE(other.nodes()[i].pos, doc.nodes()[i].pos);
            QCOMPARE(other.nodes()[i].node.name, doc.nodes()[i].node.name);
            QVERIFY(other.nodes()[i].node.attrs == doc.nodes()[i].node.attrs);
            QCOMPARE(other.nodes()[i].node.inputs, doc.nodes()[i].node.inputs);
        }
        QCOMPARE(other.content().groups.size(), 1);
        QCOMPARE(other.content().groups[0].name, QStringLiteral("stem"));
        QVERIFY(other.content().groups[0].collapsed);
        QCOMPARE(other.content().groups[0].nodes.size(), 3);
        QCOMPARE(other.content().comments.size(), 1);
        QCOMPARE(other.content().comments[0].text, QStringLiteral("Residual stem\nsecond line"));
        QCOMPARE(other.project().extra["notes"].get<std::string>(), std::string("kept verbatim"));
        // The layout member is in the file, the engine still reads the project.
        auto reread = kiln::engine::io::loadProject(path.toStdString());
        QVERIFY(reread.ok());
        QVERIFY(reread->layout.contains("nodes"));
        QCOMPARE(reread->layout["nodes"]["pool"][0].get<double>(), 512.5);
        QVERIFY(reread->extra.find("layout") == reread->extra.end());
        // Autosave text round trip.
        EditorDocument recovered;
        QVERIFY(recovered.fromJson(doc.toJson(), path).ok());
        QVERIFY(recovered.isModified());
        QCOMPARE(recovered.toJson(), doc.toJson());
    }

    void undoRedoEveryCommandClass() {
        QTemporaryDir dir;
        EditorDocument doc;
        QVERIFY(doc.load(writeFile(dir, "cnn.kiln", kHandWritten)).ok());
        QUndoStack* stack = doc.undoStack();
        int checked = 0;
        // Runs `action`, expects one new command of class T, then undo and redo restore the states.
        auto roundTrip = [&]<typename T>(const char* what, auto action) {
            const QByteArray before = doc.toJson();
            const int index = stack->index();
            action();
            QVERIFY2(stack->index() == index + 1, what);
            QVERIFY2(dynamic_cast<const T*>(stack->command(stack->index() - 1)) != nullptr, what);
            const QByteArray after = doc.toJson();
            QVERIFY2(after != before, what);
            stack->undo();
            QVERIFY2(doc.toJson() == before, what);
            stack->redo();
            QVERIFY2(doc.toJson() == after, what);
            ++checked;
        };
        roundTrip.operator()<AddNodesCommand>("add node", [&] { doc.addNode("Dropout", QPointF(0, 900)); });
        roundTrip.operator()<AddNodesCommand>("layer instance", [&] { doc.addNode("TwoTower", QPointF(800, 0)); });
        roundTrip.operator()<ConnectCommand>(
            "connect", [&] { QVERIFY(doc.connectNodes(id(doc, "logits"), id(doc, "dropout"), 0).ok()); });
        roundTrip.operator()<DisconnectCommand>("disconnect", [&] { doc.disconnect(id(doc, "skip"), 1); });
        roundTrip.operator()<RemoveItemsCommand>("delete", [&] { doc.removeItems({id(doc, "pool")}); });
        roundTrip.operator()<PasteCommand>("paste", [&] {
            QVERIFY(!doc.pasteNodes(doc.copyNodes({id(doc, "conv1"), id(doc, "bn1")}), QPointF(30, 30))
                         .isEmpty());
        });
        roundTrip.operator()<PasteCommand>(
            "duplicate", [&] { QCOMPARE(doc.duplicateNodes({id(doc, "relu1")}).size(), 1); });
        roundTrip.operator()<MoveCommand>("move", [&] {
            doc.moveNodes({{id(doc, "conv2"), QPointF(-300, 40)}});
        });
        roundTrip.operator()<AutoLayoutCommand>("layout", [&] { doc.autoLayout(); });
        roundTrip.operator()<AlignCommand>("align", [&] {
            doc.alignNodes({{id(doc, "conv1"), QPointF(0, 0)}, {id(doc, "bn1"), QPointF(0, 100)}});
        });
        roundTrip.operator()<SetAttributeCommand>("attribute", [&] {
            QVERIFY(doc.setAttribute(id(doc, "conv1"), "filters", AttrValue(int64_t{16})).ok());
        });
        roundTrip.operator()<SetAttributeCommand>("reset",
                                                  [&] { doc.resetAttribute(id(doc, "conv1"), "padding"); });
        roundTrip.operator()<RenameNodeCommand>(
            "rename", [&] { QVERIFY(doc.renameNode(id(doc, "relu1"), "act1").ok()); });
        roundTrip.operator()<SetNodeFlagsCommand>("freeze",
                                                  [&] { doc.setTrainable(id(doc, "conv2"), false); });
        roundTrip.operator()<SetNodeFlagsCommand>(
            "lr", [&] { QVERIFY(doc.setLrMultiplier(id(doc, "bn1"), 0.1).ok()); });
        roundTrip.operator()<SetNodeFlagsCommand>("share", [&] {
            auto st = doc.setShareWeightsWith(id(doc, "conv2"), "conv1");
            QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
        });
        ItemId g = 0;
        roundTrip.operator()<GroupCommand>("group", [&] {
            g = doc.groupNodes({id(doc, "conv1"), id(doc, "bn1")});
        });
        roundTrip.operator()<GroupStateCommand>("collapse", [&] { doc.setGroupCollapsed(g, true); });
        roundTrip.operator()<UngroupCommand>("ungroup", [&] { doc.ungroup(g); });
        ItemId c = 0;
        roundTrip.operator()<AddCommentCommand>("comment",
                                                [&] { c = doc.addComment(QRectF(0, 0, 100, 50), "note"); });
        roundTrip.operator()<CommentTextCommand>("comment text", [&] { doc.editComment(c, "changed"); });
        QCOMPARE(checked, 21);
        // The whole history unwinds to the file as loaded and the document is clean again.
        while (stack->canUndo()) stack->undo();
        QVERIFY(!doc.isModified());
    }

    void dragsAndEditsMerge() {
        EditorDocument doc;
        ItemId d = doc.addNode("Dense", QPointF(0, 100));
        const int base = doc.undoStack()->index();
        doc.moveNodes({{d, QPointF(10, 100)}});
        doc.moveNodes({{d, QPointF(20, 100)}});
        doc.moveNodes({{d, QPointF(30, 110)}});
        QCOMPARE(doc.undoStack()->index(), base + 1);
        QVERIFY(doc.setAttribute(d, "units", AttrValue(int64_t{10})).ok());
        QVERIFY(doc.setAttribute(d, "units", AttrValue(int64_t{20})).ok());
        QCOMPARE(doc.undoStack()->index(), base + 2);
        QCOMPARE(doc.node(d)->node.attrs.getInt("units"), int64_t{20});
        doc.undoStack()->undo();
        QCOMPARE(doc.node(d)->node.attrs.getInt("units"), int64_t{64});
        doc.undoStack()->undo();
        QCOMPARE(doc.node(d)->pos, QPointF(0, 100));
    }

    void sectionEditsAreUndoable() {
        EditorDocument doc;
        doc.addNode("Dense", QPointF(0, 100));
        const int base = doc.undoStack()->index();
        const nlohmann::json data = doc.project().data;
        nlohmann::json training = {{"epochs", 3}};
        QSignalSpy changed(&doc, &EditorDocument::sectionsChanged);
        doc.setSections(data, training);
        training["epochs"] = 4;
        doc.setSections(data, training);  // a run of edits in the training form: one step
        QCOMPARE(doc.undoStack()->index(), base + 1);
        QCOMPARE(doc.project().training["epochs"].get<int>(), 4);
        doc.setSections({{"format", "folder"}, {"path", "pics"}}, training);  // another section: a new step
        QCOMPARE(doc.undoStack()->index(), base + 2);
        doc.setSections(doc.project().data, doc.project().training);  // unchanged: nothing pushed
        QCOMPARE(doc.undoStack()->index(), base + 2);
        QCOMPARE(changed.count(), 3);
        doc.undoStack()->undo();
        QCOMPARE(doc.project().data, data);
        doc.undoStack()->undo();
        QVERIFY(!doc.project().training.contains("epochs"));
        QCOMPARE(doc.nodes().size(), size_t(2));  // the graph's history is untouched
        doc.undoStack()->redo();
        QCOMPARE(doc.project().training["epochs"].get<int>(), 4);
    }

    void connectionRule_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("reason");
        QTest::newRow("into an Input") << "flat"
                                       << "image" << 0 << "takes no inputs";
        QTest::newRow("arity") << "image"
                               << "fc" << 1 << "no free one";
        QTest::newRow("cycle") << "fc"
                               << "flat" << 0 << "loop";
        QTest::newRow("self") << "fc"
                              << "fc" << 0 << "own output";
        QTest::newRow("shape rule") << "image"
                                    << "fc" << 0 << "rank-2";
        QTest::newRow("merge shapes") << "fc"
                                      << "sum" << 1 << "one shape";
    }

    void connectionRule() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, port);
        QFETCH(QString, reason);
        kiln::engine::io::Project p;
        auto node = [](const char* name, const char* op, std::vector<std::string> in) {
            kiln::engine::Node n;
            n.name = name;
            n.op = op;
            n.inputs = std::move(in);
            return n;
        };
        p.graph.nodes = {node("image", "Input", {}), node("flat", "Flatten", {"image"}),
                         node("fc", "Dense", {"flat"}), node("fc2", "Dense", {"flat"}),
                         node("sum", "Add", {"fc2"})};
        p.graph.nodes[0].attrs.set("shape", std::vector<int64_t>{28, 28, 1});
        p.graph.nodes[2].attrs.set("units", int64_t{10});
        p.graph.nodes[3].attrs.set("units", int64_t{20});
        EditorDocument doc;
        doc.setProject(p, true);
        const QByteArray before = doc.toJson();
        auto st = doc.connectNodes(doc.idOf(from.toStdString()), doc.idOf(to.toStdString()), port);
        QVERIFY(!st.ok());
        QVERIFY2(QString::fromStdString(st.error().message).contains(reason), st.error().message.c_str());
        QCOMPARE(doc.toJson(), before);
        QCOMPARE(doc.undoStack()->count(), 0);
        // A valid one is accepted: fc2 feeds the Add's second port.
        QVERIFY(doc.connectNodes(doc.idOf("fc2"), doc.idOf("sum"), 1).ok());
    }

    void renameKeepsReferencesAndNamesUnique() {
        QTemporaryDir dir;
        EditorDocument doc;
        QVERIFY(doc.load(writeFile(dir, "cnn.kiln", kHandWritten)).ok());
        QVERIFY(doc.renameNode(id(doc, "conv1"), "stem_conv").ok());
        QCOMPARE(doc.nodeByName("skip")->node.inputs[1], std::string("stem_conv"));
        QCOMPARE(doc.nodeByName("bn1")->node.inputs[0], std::string("stem_conv"));
        auto clash = doc.renameNode(id(doc, "bn1"), "conv2");
        QVERIFY(!clash.ok());
        QVERIFY(QString::fromStdString(clash.error().message).contains("already called"));
        QVERIFY(!doc.renameNode(id(doc, "bn1"), "has space").ok());
        QVERIFY(!doc.renameNode(id(doc, "bn1"), "").ok());
        doc.undoStack()->undo();
        QCOMPARE(doc.nodeByName("skip")->node.inputs[1], std::string("conv1"));
        QCOMPARE(doc.project().graph.outputs, std::vector<std::string>{"logits"});
    }

    void invalidValuesAreRefused() {
        EditorDocument doc;
        ItemId d = doc.addNode("Dense", QPointF(0, 100));
        const int index = doc.undoStack()->index();
        auto st = doc.setAttribute(d, "units", AttrValue(int64_t{0}));
        QVERIFY(!st.ok());
        QVERIFY(!st.error().message.empty());
        QVERIFY(!doc.setAttribute(d, "activation", AttrValue(std::string("swish"))).ok());
        QVERIFY(!doc.setAttribute(d, "no_such", AttrValue(true)).ok());
        QVERIFY(!doc.setLrMultiplier(d, -1).ok());
        ItemId c = doc.addNode("Conv2D", QPointF(0, 200));
        QVERIFY(!doc.setShareWeightsWith(d, doc.node(c)->node.name).ok());  // different op
        QCOMPARE(doc.undoStack()->index(), index + 1);                      // only the Conv2D was added
    }

    void groupsSurviveDeletesAndRoundTrip() {
        QTemporaryDir dir;
        EditorDocument doc;
        QVERIFY(doc.load(writeFile(dir, "cnn.kiln", kHandWritten)).ok());
        ItemId g = doc.groupNodes({id(doc, "conv2"), id(doc, "skip")}, "tail");
        QVERIFY(g);
        QCOMPARE(doc.groupOf(id(doc, "skip")), g);
        doc.removeItems({id(doc, "skip")});
        QCOMPARE(doc.group(g)->nodes.size(), 1);
        QVERIFY(doc.nodeByName("pool")->node.inputs.empty());
        doc.undoStack()->undo();
        QCOMPARE(doc.group(g)->nodes.size(), 2);
        // Deleting a group deletes its nodes.
        doc.removeItems({}, {}, {g});
        QVERIFY(!doc.nodeByName("conv2"));
        QVERIFY(!doc.group(g));
        doc.undoStack()->undo();
        QVERIFY(doc.nodeByName("conv2"));
    }

    void analysisShapesAndErrors() {
        QTemporaryDir dir;
        EditorDocument doc;
        QVERIFY(doc.load(writeFile(dir, "cnn.kiln", kHandWritten)).ok());
        auto a = analyzeGraph(doc.project().graph);
        QVERIFY(!a.modelError);
        QVERIFY(a.summary);
        QCOMPARE(a.find("conv1")->output.toString(), std::string("[N,28,28,8]"));
        QCOMPARE(a.find("logits")->output.toString(), std::string("[N,10]"));
        QCOMPARE(a.find("conv1")->params, int64_t{3 * 3 * 1 * 8 + 8});
        QCOMPARE(a.find("logits")->macs, int64_t{8 * 10});
        // The editor's summary is the engine's, row for row, shared weights included.
        QVERIFY(doc.setShareWeightsWith(id(doc, "conv2"), "conv1").ok());
        {
            auto ours = analyzeGraph(doc.project().graph, 32);
            auto model = kiln::engine::ops::analyzeModel(doc.project().graph);
            // conv1 sees 1 channel and conv2 8: their kernels differ, both checks refuse it.
            QVERIFY(!model.ok());
            QVERIFY(ours.modelError);
            QCOMPARE(ours.modelError->node, model.error().node);
            QCOMPARE(ours.modelError->message, model.error().message);
            doc.undoStack()->undo();
            ours = analyzeGraph(doc.project().graph, 32);
            model = kiln::engine::ops::analyzeModel(doc.project().graph);
            QVERIFY(model.ok() && ours.summary);
            QCOMPARE(QString::fromStdString(kiln::engine::ops::summaryText(*ours.summary)),
                     QString::fromStdString(
                         kiln::engine::ops::summaryText(kiln::engine::ops::summarize(model.value(), 32))));
        }
        // A kernel larger than the image: the error is on conv2, downstream nodes have no shape,
        // upstream ones keep theirs.
        QVERIFY(
            doc.setAttribute(id(doc, "conv2"), "kernel_size", AttrValue(std::vector<int64_t>{40, 40})).ok());
        QVERIFY(doc.setAttribute(id(doc, "conv2"), "padding", AttrValue(std::string("valid"))).ok());
        a = analyzeGraph(doc.project().graph);
        QVERIFY(a.modelError);
        QCOMPARE(a.modelError->node, std::string("conv2"));
        QVERIFY(QString::fromStdString(a.find("conv2")->error).contains("does not fit"));
        QVERIFY(!a.find("skip")->hasShape);
        QVERIFY(a.find("relu1")->hasShape);
        QVERIFY(!a.summary);
    }

    void runnerKeepsOnlyTheLatest() {
        AnalysisRunner runner;
        QSignalSpy spy(&runner, &AnalysisRunner::finished);
        kiln::engine::Graph g;
        kiln::engine::Node in;
        in.name = "x";
        in.op = "Input";
        in.attrs.set("shape", std::vector<int64_t>{4});
        g.nodes.push_back(in);
        for (int i = 0; i < 5; ++i) {
            g.nodes[0].attrs.set("shape", std::vector<int64_t>{i + 1});
            runner.request(g);
        }
        runner.waitForIdle();
        QCoreApplication::processEvents();
        QVERIFY(spy.count() >= 1);
        QCOMPARE(runner.latest().generation, runner.generation());
        QCOMPARE(runner.latest().find("x")->output.toString(), std::string("[N,5]"));
        // Every reply delivered was the newest at its time: never an older generation after a newer one.
        quint64 last = 0;
        for (const auto& args : spy) {
            auto a = args.at(0).value<GraphAnalysis>();
            QVERIFY(a.generation > last);
            last = a.generation;
        }
        QCOMPARE(last, runner.generation());
    }
};

QTEST_MAIN(TestEditorDocument)
#include "tst_editor_document.moc"
