// SPDX-License-Identifier: Apache-2.0
// The canvas's level of detail: cards, edges, blocks and comments are painted into a recording
// paint device at a range of zooms, and what they draw is counted. Text appears only where it is
// at least kMinLegibleTextPx high on screen; zoomed out a card shows its op alone, then becomes a
// plain block, and edges become straight lines; less is drawn at each step down.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_graph_editor
#include <QPaintDevice>
#include <QPaintEngine>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QTextItem>
#include <QtTest>

#include "ui/graph_editor/card_detail.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"

using namespace kiln::ui;

namespace {

// What was painted: calls by kind, the text drawn and its smallest height on screen.
struct Record {
    int paths = 0, lines = 0, rects = 0, ellipses = 0, texts = 0;
    QStringList text;
    qreal smallestTextPx = 1e9;
    int total() const { return paths + lines + rects + ellipses + texts; }
};

class RecordingEngine : public QPaintEngine {
public:
    explicit RecordingEngine(Record* r) : QPaintEngine(AllFeatures), m_r(r) {}
    bool begin(QPaintDevice*) override { return true; }
    bool end() override { return true; }
    void updateState(const QPaintEngineState&) override {}
    Type type() const override { return User; }
    void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
    void drawPath(const QPainterPath&) override { ++m_r->paths; }
    void drawLines(const QLineF*, int n) override { m_r->lines += n; }
    void drawLines(const QLine*, int n) override { m_r->lines += n; }
    void drawRects(const QRectF*, int n) override { m_r->rects += n; }
    void drawRects(const QRect*, int n) override { m_r->rects += n; }
    void drawEllipse(const QRectF&) override { ++m_r->ellipses; }
    void drawEllipse(const QRect&) override { ++m_r->ellipses; }
    void drawPolygon(const QPointF*, int, PolygonDrawMode) override { ++m_r->paths; }
    void drawPolygon(const QPoint*, int, PolygonDrawMode) override { ++m_r->paths; }
    void drawTextItem(const QPointF&, const QTextItem& item) override {
        ++m_r->texts;
        m_r->text << item.text();
        const qreal px = item.font().pixelSize() > 0 ? item.font().pixelSize() : QFontInfo(item.font()).pixelSize();
        m_r->smallestTextPx = std::min(m_r->smallestTextPx, px * painter()->worldTransform().m11());
    }

private:
    Record* m_r;
};

class RecordingDevice : public QPaintDevice {
public:
    explicit RecordingDevice(Record* r) : m_engine(r) {}
    QPaintEngine* paintEngine() const override { return &m_engine; }

protected:
    int metric(PaintDeviceMetric m) const override {
        switch (m) {
        case PdmWidth:
        case PdmHeight: return 4000;
        case PdmWidthMM:
        case PdmHeightMM: return 1000;
        case PdmDpiX:
        case PdmDpiY:
        case PdmPhysicalDpiX:
        case PdmPhysicalDpiY: return 96;
        case PdmDevicePixelRatio: return 1;
        case PdmDevicePixelRatioScaled: return int(devicePixelRatioFScale());
        case PdmNumColors: return INT_MAX;
        case PdmDepth: return 32;
        }
        return 0;
    }

private:
    mutable RecordingEngine m_engine;
};

// Paints one item as the view would at `zoom` and returns what it drew.
Record paintAt(QGraphicsItem* item, qreal zoom) {
    Record r;
    RecordingDevice device(&r);
    QPainter painter(&device);
    painter.scale(zoom, zoom);
    QStyleOptionGraphicsItem option;
    option.exposedRect = item->boundingRect();
    item->paint(&painter, &option, nullptr);
    return r;
}

kiln::engine::Node makeNode(const char* name, const char* op, std::vector<std::string> inputs = {}) {
    kiln::engine::Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(inputs);
    return n;
}

// Two cards far apart sideways, so that their edge is a real curve.
void loadFixture(EditorDocument& doc) {
    kiln::engine::io::Project p;
    p.name = "fixture";
    p.graph.nodes = {makeNode("image", "Input"), makeNode("classifier_head", "Dense", {"image"})};
    p.graph.nodes[0].attrs.set("shape", std::vector<int64_t>{8});
    p.graph.nodes[1].attrs.set("units", int64_t{3});
    p.layout = {{"nodes", {{"image", {0, 0}}, {"classifier_head", {500, 400}}}}};
    doc.setProject(p, true);
}

}  // namespace

class TestCardDetail : public QObject {
    Q_OBJECT

private slots:
    void levelsFollowLegibility() {
        const QFont& text = NodeCardStyle::get().textFont;
        const qreal textPx = text.pixelSize();
        QVERIFY(textPx >= kMinCardTextPx);
        QCOMPARE(cardDetail(1.0), CardDetail::Full);
        // Full exactly while the card's text is kMinLegibleTextPx or more on screen.
        const qreal fullFrom = kMinLegibleTextPx / textPx;
        QCOMPARE(cardDetail(fullFrom * 1.001), CardDetail::Full);
        QCOMPARE(cardDetail(fullFrom * 0.999), CardDetail::Title);
        // Title while the op's large type is legible, then blocks.
        const qreal titleFrom = kMinLegibleTextPx / cardOpFont().pixelSize();
        QVERIFY(cardOpFont().pixelSize() >= 2 * textPx);
        QCOMPARE(cardDetail(titleFrom * 1.001), CardDetail::Title);
        QCOMPARE(cardDetail(titleFrom * 0.999), CardDetail::Block);
        QCOMPARE(cardDetail(0.05), CardDetail::Block);  // the canvas's smallest zoom
        // Never more detail further out.
        CardDetail last = CardDetail::Full;
        for (qreal lod = 4.0; lod > 0.04; lod *= 0.97) {
            const CardDetail d = cardDetail(lod);
            QVERIFY(int(d) >= int(last));
            last = d;
        }
        QVERIFY(legibleAt(text, 1.0));
        QVERIFY(!legibleAt(text, fullFrom * 0.99));
    }

    void cardsDrawLessFurtherOut() {
        EditorDocument doc;
        loadFixture(doc);
        GraphScene scene(&doc);
        NodeItem* node = scene.nodeItem(doc.idOf("classifier_head"));
        QVERIFY(node);
        const qreal textPx = NodeCardStyle::get().textFont.pixelSize();
        const qreal fullZoom = 1.0, titleZoom = (kMinLegibleTextPx / textPx) * 0.9, blockZoom = 0.1;
        QCOMPARE(cardDetail(titleZoom), CardDetail::Title);

        const Record full = paintAt(node, fullZoom);
        QVERIFY(full.text.contains(QStringLiteral("classifier_head")));
        QVERIFY(full.text.contains(QStringLiteral("Dense")));
        QVERIFY(full.ellipses >= 2);  // ports
        QVERIFY(full.smallestTextPx >= kMinLegibleTextPx);

        const Record title = paintAt(node, titleZoom);
        QCOMPARE(title.text, QStringList{QStringLiteral("Dense")});  // the op alone, no small text
        QVERIFY(title.smallestTextPx >= kMinLegibleTextPx);
        QCOMPARE(title.ellipses, 0);
        QVERIFY(title.total() < full.total());

        const Record block = paintAt(node, blockZoom);
        QCOMPARE(block.texts, 0);
        QCOMPARE(block.ellipses, 0);
        QVERIFY(block.total() >= 1);
        QVERIFY(block.total() < title.total());

        // A sweep of zooms: no text below the legible size, ever.
        for (qreal zoom = 2.0; zoom > 0.04; zoom *= 0.9) {
            const Record r = paintAt(node, zoom);
            if (r.texts > 0) QVERIFY2(r.smallestTextPx >= kMinLegibleTextPx - 1e-9, qPrintable(QString::number(zoom)));
        }
    }

    void edgesStraightenAndLoseLabels() {
        EditorDocument doc;
        loadFixture(doc);
        GraphScene scene(&doc);
        EdgeItem* edge = scene.edgeItem(doc.idOf("image"), doc.idOf("classifier_head"), 0);
        QVERIFY(edge);
        edge->setLabel(QStringLiteral("(8)"));
        const Record near = paintAt(edge, 1.0);
        QCOMPARE(near.paths >= 1, true);  // the curve (and the label's box)
        QCOMPARE(near.lines, 0);
        QVERIFY(near.text.contains(QStringLiteral("(8)")));
        const qreal textPx = NodeCardStyle::get().textFont.pixelSize();
        const Record mid = paintAt(edge, (kMinLegibleTextPx / textPx) * 0.9);
        QCOMPARE(mid.texts, 0);  // the label would be unreadable
        QVERIFY(mid.paths >= 1);
        const Record far = paintAt(edge, 0.1);
        QCOMPARE(far.lines, 1);  // one straight line, port to port
        QCOMPARE(far.paths, 0);
        QCOMPARE(far.texts, 0);
    }

    void blocksAndCommentsHideSmallText() {
        EditorDocument doc;
        loadFixture(doc);
        const ItemId comment = doc.addComment(QRectF(0, -200, 200, 80), QStringLiteral("normalise first"));
        QVERIFY(comment);
        GraphScene scene(&doc);
        QGraphicsItem* item = nullptr;
        for (QGraphicsItem* i : scene.items())
            if (i->type() == CommentItemType) item = i;
        QVERIFY(item);
        QVERIFY(paintAt(item, 1.0).text.contains(QStringLiteral("normalise first")));
        const Record far = paintAt(item, 0.2);
        QCOMPARE(far.texts, 0);
        QVERIFY(far.rects + far.paths >= 1);  // the note itself stays
    }
};

QTEST_MAIN(TestCardDetail)
#include "tst_card_detail.moc"
