// SPDX-License-Identifier: Apache-2.0
// The canvas in both themes: the background, a node card, the overview (minimap) and an exported
// picture take the theme's colours, and a live theme switch repaints what is already on screen
// (the view's cached grid and the cards' cached pixmaps included).
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <memory>

#include "ui/common/theme.h"
#include "ui/graph_editor/canvas_minimap.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"

using namespace kiln::ui;

namespace {

kiln::engine::Node makeNode(const char* name, const char* op, std::vector<std::string> inputs = {}) {
    kiln::engine::Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(inputs);
    return n;
}

void loadFixture(EditorDocument& doc) {
    kiln::engine::io::Project p;
    p.name = "fixture";
    p.graph.nodes = {makeNode("image", "Input"), makeNode("flat", "Flatten", {"image"}), makeNode("fc", "Dense", {"flat"})};
    p.graph.nodes[0].attrs.set("shape", std::vector<int64_t>{28, 28, 1});
    p.graph.nodes[2].attrs.set("units", int64_t{10});
    p.layout = {{"nodes", {{"image", {0, 0}}, {"flat", {0, 150}}, {"fc", {0, 300}}}}};
    doc.setProject(p, true);
}

// The most frequent colour in a square around a point (ignores a grid line or a text pixel).
QColor dominant(const QImage& image, QPoint at, int radius = 3) {
    std::map<QRgb, int> counts;
    for (int y = at.y() - radius; y <= at.y() + radius; ++y)
        for (int x = at.x() - radius; x <= at.x() + radius; ++x)
            if (image.rect().contains(x, y)) ++counts[image.pixel(x, y) | 0xff000000u];
    QRgb best = 0;
    int n = -1;
    for (const auto& [rgb, count] : counts)
        if (count > n) best = rgb, n = count;
    return QColor::fromRgb(best);
}

bool near(const QColor& a, const QColor& b) {
    return std::abs(a.red() - b.red()) <= 2 && std::abs(a.green() - b.green()) <= 2 && std::abs(a.blue() - b.blue()) <= 2;
}

}  // namespace

class TestGraphScene : public QObject {
    Q_OBJECT

private slots:
    void init() { Theme::instance().apply(ThemeChoice::Light); }
    void cleanupTestCase() { Theme::instance().apply(ThemeChoice::Light); }

    void liveSwitchRepaintsCanvasAndCards() {
        EditorDocument doc;
        loadFixture(doc);
        GraphEditorWidget widget(&doc);
        widget.resize(900, 700);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        GraphView* view = widget.view();
        view->resetTransform();
        view->centerOn(QPointF(100, 200));
        QCoreApplication::processEvents();
        NodeItem* fc = widget.scene()->nodeItem(doc.idOf("fc"));
        QVERIFY(fc);
        // Far from every node: canvas. Inside the card's right margin, beside no text: card body.
        const QPoint empty = view->mapFromScene(QPointF(-250, 200));
        const QPoint body = view->mapFromScene(fc->mapToScene(QPointF(nodeWidth() - 5, nodeHeight() / 2)));
        QVERIFY(view->viewport()->rect().contains(empty));
        QVERIFY(view->viewport()->rect().contains(body));

        const ThemeColors& light = Theme::colors(ThemeKind::Light);
        const ThemeColors& dark = Theme::colors(ThemeKind::Dark);
        QImage before = view->viewport()->grab().toImage();
        QVERIFY2(near(dominant(before, empty), light.canvasBackground), qPrintable(dominant(before, empty).name()));
        QVERIFY2(near(dominant(before, body, 1), light.nodeBody), qPrintable(dominant(before, body, 1).name()));

        Theme::instance().apply(ThemeChoice::Dark);
        QCoreApplication::processEvents();
        QImage after = view->viewport()->grab().toImage();
        QVERIFY2(near(dominant(after, empty), dark.canvasBackground), qPrintable(dominant(after, empty).name()));
        QVERIFY2(near(dominant(after, body, 1), dark.nodeBody), qPrintable(dominant(after, body, 1).name()));

        // And back: nothing of the dark theme stays cached.
        Theme::instance().apply(ThemeChoice::Light);
        QCoreApplication::processEvents();
        QImage again = view->viewport()->grab().toImage();
        QVERIFY(near(dominant(again, empty), light.canvasBackground));
        QVERIFY(near(dominant(again, body, 1), light.nodeBody));
    }

    void minimapFollowsTheTheme() {
        EditorDocument doc;
        loadFixture(doc);
        GraphEditorWidget widget(&doc);
        widget.resize(900, 700);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.zoomBy(3.0);  // part of the diagram out of view: the overview shows
        QCoreApplication::processEvents();
        // The view on the last node, so that the overview's frame of the view stays clear of the
        // diagram's top-left margin, where the test looks.
        widget.view()->centerOnScene(widget.scene()->nodeItem(doc.idOf("fc"))->sceneBoundingRect().center());
        QCoreApplication::processEvents();
        CanvasMinimap* map = widget.view()->minimap();
        QVERIFY(map->isVisible());
        const QPoint margin = map->toWidget(widget.scene()->diagramRect().topLeft() + QPointF(6, 6)).toPoint();
        QVERIFY(!widget.view()->visibleSceneRect().contains(widget.scene()->diagramRect().topLeft() + QPointF(6, 6)));
        auto background = [&] { return dominant(map->grab().toImage(), margin, 1); };
        const QColor before = background();
        QVERIFY2(near(before, Theme::colors(ThemeKind::Light).minimapBackground), qPrintable(before.name()));
        Theme::instance().apply(ThemeChoice::Dark);
        QCoreApplication::processEvents();
        const QColor after = background();
        QVERIFY2(near(after, Theme::colors(ThemeKind::Dark).minimapBackground), qPrintable(after.name()));
    }

    void exportedPictureUsesTheCanvasColour() {
        EditorDocument doc;
        loadFixture(doc);
        GraphEditorWidget widget(&doc);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("graph.png"));
        Theme::instance().apply(ThemeChoice::Dark);
        QVERIFY(widget.exportPng(path, 1.0));
        const QImage image(path);
        QVERIFY(!image.isNull());
        QVERIFY(near(image.pixelColor(1, 1), Theme::colors(ThemeKind::Dark).canvasBackground));
    }
};

QTEST_MAIN(TestGraphScene)
#include "tst_graph_scene.moc"
