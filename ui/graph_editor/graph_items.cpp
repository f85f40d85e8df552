// SPDX-License-Identifier: Apache-2.0
// Painting and geometry of nodes, edges, groups and comments. Colours come from the theme
// (ui/common/theme.h); pens are cosmetic so lines stay crisp at every zoom. Zoomed out, items
// draw less (cardDetail): no text too small to read, then plain blocks and straight edges.
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/card_detail.h"

#include <QApplication>
#include <QFontInfo>
#include <QGraphicsSceneMouseEvent>
#include <QInputDialog>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

#include "engine/ops/op_table.h"
#include "engine/ops/plugin_ops.h"
#include "ui/common/theme.h"
#include "ui/graph_editor/graph_scene.h"

namespace kiln::ui {
namespace {

QPen cosmeticPen(const QColor& c, qreal width, Qt::PenStyle style = Qt::SolidLine) {
    QPen pen(c, width, style);
    pen.setCosmetic(true);
    return pen;
}

// A hue per category, toned to the theme's lightness so it reads in light and dark themes.
QColor categoryColor(const ThemeColors& tc, const std::string& op) {
    const auto* def = engine::ops::findOp(op);
    int hue = 95;  // composite layers (an unknown op shows its error instead)
    if (def) {
        static const int hues[] = {140, 210, 25, 280, 50, 0, 180, 320, 350};
        hue = hues[static_cast<int>(def->category) % 9];
    }
    return QColor::fromHsl(hue, 150, tc.categoryLightness);
}

}  // namespace

// ---- NodeCardStyle --------------------------------------------------------------------------

const NodeCardStyle& NodeCardStyle::get() {
    static const NodeCardStyle style = [] {
        NodeCardStyle s;
        const QFont base = QApplication::font();
        // Pixel sizes, so that the text size on screen is the font size times the zoom.
        const int textPx = std::max(static_cast<int>(kMinCardTextPx), QFontInfo(base).pixelSize());
        s.textFont = base;
        s.textFont.setPixelSize(textPx);
        s.titleFont = s.textFont;
        s.titleFont.setPixelSize(textPx + 1);
        s.titleFont.setBold(true);
        s.titleLine = std::ceil(QFontMetricsF(s.titleFont).height());
        s.textLine = std::ceil(QFontMetricsF(s.textFont).height());
        // Three lines (name and op, output shape, cost) with the margins and a gap below the title.
        s.height = std::max<qreal>(68, s.titleLine + 2 * s.textLine + 2 * s.margin + 4);
        // About 24 characters of text beside the category band, so that an output shape and a
        // cost line fit without eliding.
        s.width = std::max<qreal>(176, std::ceil(QFontMetricsF(s.textFont).averageCharWidth() * 24) + 20);
        return s;
    }();
    return style;
}

const QFont& cardOpFont() {
    static const QFont font = [] {
        QFont f = NodeCardStyle::get().titleFont;
        f.setPixelSize(std::max(2 * NodeCardStyle::get().textFont.pixelSize(), 24));
        return f;
    }();
    return font;
}

bool legibleAt(const QFont& font, qreal levelOfDetail) {
    const qreal px = font.pixelSize() > 0 ? font.pixelSize() : QFontInfo(font).pixelSize();
    return px * levelOfDetail >= kMinLegibleTextPx;
}

CardDetail cardDetail(qreal levelOfDetail) {
    const NodeCardStyle& st = NodeCardStyle::get();
    if (legibleAt(st.textFont, levelOfDetail)) return CardDetail::Full;
    if (legibleAt(cardOpFont(), levelOfDetail)) return CardDetail::Title;
    return CardDetail::Block;
}

// ---- NodeItem -------------------------------------------------------------------------------

NodeItem::NodeItem(GraphScene* scene, ItemId id) : m_graph(scene), m_id(id) {
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    setCacheMode(DeviceCoordinateCache);
    setZValue(2);
    syncFromDocument();
}

QRectF NodeItem::boundingRect() const {
    const qreal m = kPortRadius + 2;
    return QRectF(-m, -m, nodeWidth() + 2 * m, nodeHeight() + 2 * m);
}

QPainterPath NodeItem::shape() const {
    QPainterPath p;
    p.addRoundedRect(QRectF(0, 0, nodeWidth(), nodeHeight()), 6, 6);
    for (int i = 0; i < m_inputPorts; ++i)
        p.addEllipse(mapFromScene(inputPortPos(i)), kPortRadius + 2, kPortRadius + 2);
    p.addEllipse(mapFromScene(outputPortPos()), kPortRadius + 2, kPortRadius + 2);
    return p;
}

void NodeItem::syncFromDocument() {
    const auto* n = m_graph->document()->node(m_id);
    if (!n) return;
    m_name = QString::fromStdString(n->node.name);
    m_op = QString::fromStdString(n->node.op);
    // An imported operation Kiln cannot compute: the card says which ONNX op it stands for.
    m_placeholder = n->node.op == engine::ops::opDef(engine::ops::OpKind::Placeholder).name;
    m_opLabel = m_op;
    // A plugin operation's card shows the operation ("example.GroupNorm"), not "Plugin".
    if (n->node.op == engine::ops::opDef(engine::ops::OpKind::Plugin).name)
        m_opLabel = QString::fromStdString(engine::ops::pluginOpName(n->node));
    if (m_placeholder) {
        const auto& values = n->node.attrs.values();
        auto text = [&](const char* key) {
            const auto it = values.find(key);
            const std::string* s = it == values.end() ? nullptr : std::get_if<std::string>(&it->second);
            return s ? QString::fromStdString(*s) : QString();
        };
        QString source = text("keras_class");
        if (source.isEmpty()) source = text("onnx_op");
        m_opLabel = QCoreApplication::translate("NodeItem", "%1 · placeholder").arg(source.isEmpty() ? QStringLiteral("?") : source);
    }
    m_frozen = !n->node.trainable;
    m_shared = !n->node.shareWeightsWith.empty();
    const auto* def = engine::ops::findOp(n->node.op);
    const auto* layer = def ? nullptr : m_graph->document()->findLayer(n->node.op);
    m_isInput = def && def->maxInputs == 0;
    int ports = def     ? (def->maxInputs < 0 ? static_cast<int>(n->node.inputs.size()) + 1 : def->maxInputs)
                : layer ? static_cast<int>(layer->inputs.size())
                        : static_cast<int>(n->node.inputs.size());
    // A plugin operation has the ports its plugin declares (the Plugin row takes any number).
    if (const auto* plugin = def && def->kind == engine::ops::OpKind::Plugin ? engine::ops::pluginOpOf(n->node) : nullptr)
        ports = plugin->desc->max_inputs < 0 ? static_cast<int>(n->node.inputs.size()) + 1 : plugin->desc->max_inputs;
    ports = std::max(ports, static_cast<int>(n->node.inputs.size()));
    if (ports != m_inputPorts) prepareGeometryChange();
    m_inputPorts = ports;
    QString tip =
        m_error.isEmpty()
            ? m_graph->document()->opDoc(n->node)
            : m_error;
    setToolTip(QStringLiteral("<b>%1</b> (%2)<br>%3").arg(m_name.toHtmlEscaped(), m_op, tip.toHtmlEscaped()));
    update();
}

void NodeItem::setAnalysis(const QString& shape, const QString& stats, const QString& error) {
    if (shape == m_shape && stats == m_stats && error == m_error) return;
    m_shape = shape;
    m_stats = stats;
    m_error = error;
    syncFromDocument();
}

QPointF NodeItem::inputPortPos(int port) const {
    qreal x = nodeWidth() * (port + 1) / (m_inputPorts + 1);
    return mapToScene(QPointF(x, 0));
}

QPointF NodeItem::outputPortPos() const {
    return mapToScene(QPointF(nodeWidth() / 2, nodeHeight()));
}

int NodeItem::portAt(QPointF scenePos) const {
    const qreal r2 = (kPortRadius + 5) * (kPortRadius + 5);
    auto near = [&](QPointF p) {
        QPointF d = p - scenePos;
        return d.x() * d.x() + d.y() * d.y() <= r2;
    };
    for (int i = 0; i < m_inputPorts; ++i)
        if (near(inputPortPos(i))) return i;
    if (near(outputPortPos())) return kOutputPort;
    return -1;
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
    if (change == ItemPositionHasChanged) m_graph->noteItemMoved(m_id);
    return QGraphicsItem::itemChange(change, value);
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
    const ThemeColors& tc = Theme::instance().colors();
    const qreal lod = option->levelOfDetailFromTransform(p->worldTransform());
    const QRectF body(0, 0, nodeWidth(), nodeHeight());
    const QColor accent = categoryColor(tc, m_op.toStdString());
    QColor border = isSelected() ? tc.selection : tc.nodeBorder;
    if (!m_error.isEmpty()) border = tc.error;
    const qreal borderWidth = isSelected() || !m_error.isEmpty() ? 2.5 : 1.2;
    const Qt::PenStyle borderStyle = m_placeholder ? Qt::DashLine : Qt::SolidLine;
    const CardDetail detail = cardDetail(lod);
    if (detail == CardDetail::Block) {
        // Far out: a block in the category colour; the border only where it says something
        // (selected, an error, a placeholder).
        const bool marked = isSelected() || !m_error.isEmpty() || m_placeholder;
        p->setPen(marked ? cosmeticPen(border, borderWidth, borderStyle) : QPen(Qt::NoPen));
        p->setBrush(accent);
        p->drawRect(body);
        return;
    }
    p->setPen(cosmeticPen(border, borderWidth, borderStyle));
    p->setBrush(tc.nodeBody);
    p->drawRoundedRect(body, 6, 6);
    // Category band on the left.
    p->setPen(Qt::NoPen);
    p->setBrush(accent);
    p->drawRect(QRectF(1, 6, 5, nodeHeight() - 12));
    if (detail == CardDetail::Title) {
        // The card's small text would be unreadable: the op alone, large, in the card.
        const QFont& font = cardOpFont();
        p->setFont(font);
        p->setPen(m_error.isEmpty() ? tc.nodeText : tc.errorText);
        const QRectF box = body.adjusted(12, 2, -6, -2);
        p->drawText(box, Qt::AlignLeft | Qt::AlignVCenter, QFontMetricsF(font).elidedText(m_opLabel, Qt::ElideRight, box.width()));
        return;
    }
    const NodeCardStyle& st = NodeCardStyle::get();
    const QColor text = tc.nodeText;
    const QColor dim = tc.nodeTextDim;
    const QRectF inner = body.adjusted(12, st.margin, -8, -st.margin);
    const QRectF titleRow(inner.x(), inner.y(), inner.width(), st.titleLine);
    const QRectF shapeRow(inner.x(), titleRow.bottom() + 4, inner.width(), st.textLine);
    const QRectF statsRow(inner.x(), shapeRow.bottom(), inner.width(), st.textLine);
    // The op on the right of the title row, the name elided into what is left.
    p->setFont(st.textFont);
    p->setPen(dim);
    const QFontMetricsF tm(st.textFont);
    const QFontMetricsF nm(st.titleFont);
    // The op takes what the name leaves; a long name keeps at least 40 % of the row.
    const qreal nameWidth = std::min(nm.horizontalAdvance(m_name), inner.width() * 0.4);
    const qreal opWidth = std::min(tm.horizontalAdvance(m_opLabel), inner.width() - nameWidth - 8);
    p->drawText(titleRow, Qt::AlignRight | Qt::AlignVCenter, tm.elidedText(m_opLabel, Qt::ElideRight, opWidth + 1));
    p->setFont(st.titleFont);
    p->setPen(text);
    p->drawText(titleRow, Qt::AlignLeft | Qt::AlignVCenter,
                nm.elidedText(m_name, Qt::ElideRight, inner.width() - opWidth - 8));
    p->setFont(st.textFont);
    QString flags;
    if (m_frozen) flags += QObject::tr("frozen") + QLatin1Char(' ');
    if (m_shared) flags += QObject::tr("shared");
    flags = flags.trimmed();
    const qreal flagsWidth = flags.isEmpty() ? 0 : tm.horizontalAdvance(flags) + 6;
    if (m_error.isEmpty()) {
        p->drawText(shapeRow, Qt::AlignLeft | Qt::AlignVCenter, tm.elidedText(m_shape, Qt::ElideRight, inner.width()));
        p->setPen(dim);
        p->drawText(statsRow, Qt::AlignLeft | Qt::AlignVCenter,
                    tm.elidedText(m_stats, Qt::ElideRight, inner.width() - flagsWidth));
    }
    p->setPen(dim);
    if (!flags.isEmpty()) p->drawText(statsRow, Qt::AlignRight | Qt::AlignVCenter, flags);
    if (!m_error.isEmpty()) {
        p->setPen(tc.errorText);
        const QRectF errorBox(shapeRow.x(), shapeRow.y(), inner.width() - flagsWidth, 2 * st.textLine);
        p->drawText(errorBox, Qt::AlignLeft | Qt::TextWordWrap,
                    tm.elidedText(m_error, Qt::ElideRight, errorBox.width() * 2 - 10));
        // Badge.
        p->setBrush(tc.error);
        p->setPen(Qt::NoPen);
        p->drawEllipse(QPointF(nodeWidth() - 10, 10), 7, 7);
        p->setPen(tc.badgeText);
        p->setFont(st.titleFont);
        p->drawText(QRectF(nodeWidth() - 17, 3, 14, 14), Qt::AlignCenter, QStringLiteral("!"));
    }
    // Ports.
    p->setPen(cosmeticPen(tc.portOutline, 1));
    p->setBrush(tc.portFill);
    for (int i = 0; i < m_inputPorts; ++i)
        p->drawEllipse(mapFromScene(inputPortPos(i)), kPortRadius, kPortRadius);
    p->setBrush(accent);
    p->drawEllipse(mapFromScene(outputPortPos()), kPortRadius, kPortRadius);
}

// ---- EdgeItem -------------------------------------------------------------------------------

EdgeItem::EdgeItem(GraphScene* scene, Kind kind, ItemId from, ItemId to, int port)
    : m_graph(scene), m_kind(kind), m_from(from), m_to(to), m_port(port) {
    setZValue(kind == Kind::Data ? 1 : 0.5);
    if (kind == Kind::Data) setFlag(ItemIsSelectable);
    // No item cache: a long skip connection would cache a large, mostly empty pixmap; a path
    // with a cosmetic pen draws faster than such a pixmap blends.
    updatePath();
}

void EdgeItem::setLabel(const QString& text) {
    if (text == m_label) return;
    prepareGeometryChange();
    m_label = text;
    const QFontMetricsF fm(NodeCardStyle::get().textFont);
    m_labelSize = text.isEmpty() ? QSizeF() : QSizeF(fm.horizontalAdvance(text) + 8, fm.height() + 2);
    update();
}

void EdgeItem::updatePath() {
    QPointF a, b;
    QPainterPath path;
    if (m_kind == Kind::Data) {
        a = m_graph->outputAnchor(m_from);
        b = m_graph->inputAnchor(m_to, m_port);
        qreal dy = std::max<qreal>(40, std::abs(b.y() - a.y()) / 2);
        path.moveTo(a);
        path.cubicTo(a + QPointF(0, dy), b - QPointF(0, dy), b);
    } else {
        // Shared weights: a dashed arc between the right sides of the two nodes.
        a = m_graph->outputAnchor(m_from) + QPointF(nodeWidth() / 2, -nodeHeight() / 2);
        b = m_graph->outputAnchor(m_to) + QPointF(nodeWidth() / 2, -nodeHeight() / 2);
        qreal bulge = 40 + std::abs(b.y() - a.y()) * 0.15;
        path.moveTo(a);
        path.cubicTo(a + QPointF(bulge, 0), b + QPointF(bulge, 0), b);
    }
    m_mid = path.pointAtPercent(0.5);
    prepareGeometryChange();
    setPath(path);
}

QRectF EdgeItem::boundingRect() const {
    QRectF r = QGraphicsPathItem::boundingRect().adjusted(-4, -4, 4, 4);
    if (!m_label.isEmpty()) {
        QRectF box(QPointF(), m_labelSize + QSizeF(2, 2));
        box.moveCenter(m_mid);
        r |= box;
    }
    return r;
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
    const ThemeColors& tc = Theme::instance().colors();
    QColor c = isSelected() ? tc.selection : tc.edge;
    if (m_kind == Kind::Data) {
        p->setPen(cosmeticPen(c, isSelected() ? 2.5 : 1.4));
    } else {
        c = tc.selection;
        p->setPen(cosmeticPen(c, 1.6, Qt::DashLine));
    }
    p->setBrush(Qt::NoBrush);
    const qreal lod = option->levelOfDetailFromTransform(p->worldTransform());
    if (cardDetail(lod) == CardDetail::Block) {
        // Far out the cards are blocks and a curve's shape cannot be told from a line's: the
        // straight line from port to port is cheaper to draw.
        const QPainterPath& curve = path();
        p->drawLine(QPointF(curve.elementAt(0)), curve.currentPosition());
        return;
    }
    p->drawPath(path());
    if (m_label.isEmpty() || !legibleAt(NodeCardStyle::get().textFont, lod)) return;
    // The tensor shape in the card's text size, so that it reads at the same zooms.
    p->setFont(NodeCardStyle::get().textFont);
    QRectF box(QPointF(), m_labelSize);
    box.moveCenter(m_mid);
    p->setPen(Qt::NoPen);
    p->setBrush(tc.edgeLabelBackground);
    p->drawRoundedRect(box, 3, 3);
    p->setPen(tc.edgeLabelText);
    p->drawText(box, Qt::AlignCenter, m_label);
}

// ---- GroupItem ------------------------------------------------------------------------------

GroupItem::GroupItem(GraphScene* scene, ItemId id) : m_graph(scene), m_id(id) {
    setFlags(ItemIsSelectable | ItemSendsGeometryChanges);
    syncFromDocument();
}

void GroupItem::syncFromDocument() {
    const auto* g = m_graph->document()->group(m_id);
    if (!g) return;
    prepareGeometryChange();
    m_name = g->name;
    m_count = static_cast<int>(g->nodes.size());
    m_collapsed = g->collapsed;
    setFlag(ItemIsMovable, m_collapsed);
    if (m_collapsed) {
        setZValue(2);
        m_rect = QRectF(0, 0, nodeWidth(), nodeHeight());
        setPos(g->pos);
    } else {
        setZValue(-1);
        QRectF box;
        for (ItemId id : g->nodes)
            if (const auto* n = m_graph->document()->node(id))
                box |= QRectF(n->pos, QSizeF(nodeWidth(), nodeHeight()));
        setPos(box.topLeft() - QPointF(16, 30));
        m_rect = QRectF(0, 0, box.width() + 32, box.height() + 46);
    }
    setToolTip(QObject::tr("Block \"%1\": %n node(s). Double-click to collapse or expand.", nullptr, m_count)
                   .arg(m_name));
    update();
}

QPointF GroupItem::inputAnchor() const {
    return mapToScene(QPointF(nodeWidth() / 2, 0));
}
QPointF GroupItem::outputAnchor() const {
    return mapToScene(QPointF(nodeWidth() / 2, nodeHeight()));
}

QVariant GroupItem::itemChange(GraphicsItemChange change, const QVariant& value) {
    if (change == ItemPositionHasChanged && m_collapsed) m_graph->noteItemMoved(m_id);
    return QGraphicsItem::itemChange(change, value);
}

void GroupItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    m_graph->document()->setGroupCollapsed(m_id, !m_collapsed);
    event->accept();
}

void GroupItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
    const ThemeColors& tc = Theme::instance().colors();
    const qreal lod = option->levelOfDetailFromTransform(p->worldTransform());
    QColor frame = isSelected() ? tc.selection : tc.nodeBorder;
    QFont f = p->font();
    f.setPointSizeF(9);
    f.setBold(true);
    p->setFont(f);
    if (m_collapsed) {
        p->setPen(cosmeticPen(frame, isSelected() ? 2.5 : 1.5));
        p->setBrush(tc.groupStack);
        p->drawRoundedRect(m_rect.adjusted(4, 4, 4, 4), 6, 6);  // a stack: this box stands for several
        p->setBrush(tc.nodeBody);
        p->drawRoundedRect(m_rect, 6, 6);
        if (!legibleAt(f, lod)) return;
        p->setPen(tc.nodeText);
        p->drawText(m_rect.adjusted(12, 6, -8, -30), Qt::AlignLeft | Qt::AlignVCenter, m_name);
        f.setBold(false);
        f.setPointSizeF(7.5);
        p->setFont(f);
        p->drawText(m_rect.adjusted(12, 30, -8, -8), Qt::AlignLeft | Qt::AlignVCenter,
                    QObject::tr("block of %n node(s)", nullptr, m_count));
        p->setPen(cosmeticPen(tc.portOutline, 1));
        p->setBrush(tc.portFill);
        p->drawEllipse(QPointF(nodeWidth() / 2, 0), kPortRadius, kPortRadius);
        p->drawEllipse(QPointF(nodeWidth() / 2, nodeHeight()), kPortRadius, kPortRadius);
        return;
    }
    QColor fill = tc.selection;
    fill.setAlphaF(0.07);
    p->setPen(cosmeticPen(frame, isSelected() ? 2 : 1, Qt::DashLine));
    p->setBrush(fill);
    p->drawRoundedRect(m_rect, 10, 10);
    if (!legibleAt(f, lod)) return;
    p->setPen(tc.nodeText);
    p->drawText(QRectF(12, 4, m_rect.width() - 24, 22), Qt::AlignLeft | Qt::AlignVCenter, m_name);
}

// ---- CommentItem ----------------------------------------------------------------------------

CommentItem::CommentItem(GraphScene* scene, ItemId id) : m_graph(scene), m_id(id) {
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    setZValue(3);
    syncFromDocument();
}

void CommentItem::syncFromDocument() {
    const auto* c = m_graph->document()->comment(m_id);
    if (!c) return;
    prepareGeometryChange();
    m_rect = QRectF(QPointF(0, 0), c->rect.size());
    m_text = c->text;
    setPos(c->rect.topLeft());
    update();
}

void CommentItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    bool ok = false;
    QWidget* parent = event->widget();
    QString text =
        QInputDialog::getMultiLineText(parent, QObject::tr("Comment"), QObject::tr("Text:"), m_text, &ok);
    if (ok) m_graph->document()->editComment(m_id, text);
    event->accept();
}

void CommentItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
    const ThemeColors& tc = Theme::instance().colors();
    p->setPen(cosmeticPen(isSelected() ? tc.selection : tc.nodeBorder, isSelected() ? 2 : 1));
    p->setBrush(tc.noteBody);
    p->drawRect(m_rect);
    QFont f = p->font();
    f.setPointSizeF(8.5);
    if (!legibleAt(f, option->levelOfDetailFromTransform(p->worldTransform()))) return;
    p->setPen(tc.noteText);
    p->setFont(f);
    p->drawText(m_rect.adjusted(8, 6, -8, -6), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_text);
}

}  // namespace kiln::ui
