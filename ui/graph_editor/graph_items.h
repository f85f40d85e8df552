// SPDX-License-Identifier: Apache-2.0
// Graphics items of the canvas. Items hold ids and display strings only; the document holds the
// data. Nodes flow top to bottom: input ports on the top edge, the output port at the bottom.
#pragma once

#include <QGraphicsItem>
#include <QGraphicsObject>
#include <QGraphicsPathItem>
#include <QFont>
#include <QStaticText>

#include "ui/graph_editor/editor_document.h"

namespace kiln::ui {

class GraphScene;

inline constexpr qreal kPortRadius = 6;
// Card text is never drawn smaller than this many pixels at 100 % zoom.
inline constexpr qreal kMinCardTextPx = 11;

// Fonts and size of a node card, derived once from the application's default font: the text
// uses the default pixel size (at least kMinCardTextPx), the card is sized to hold its three
// lines (name and op, output shape, cost) and never shrinks below 176 x 68, the size saved
// layouts were made with.
struct NodeCardStyle {
    QFont titleFont;  // node name, bold, one pixel larger than textFont
    QFont textFont;   // op, output shape, cost, flags
    qreal width = 176, height = 68;
    qreal margin = 6;                    // inner margin, left band excluded
    qreal titleLine = 16, textLine = 14;  // line heights in scene units
    static const NodeCardStyle& get();
};
inline qreal nodeWidth() {
    return NodeCardStyle::get().width;
}
inline qreal nodeHeight() {
    return NodeCardStyle::get().height;
}

enum ItemType {
    NodeItemType = QGraphicsItem::UserType + 1,
    EdgeItemType,
    GroupItemType,
    CommentItemType,
};

class NodeItem : public QGraphicsItem {
public:
    NodeItem(GraphScene* scene, ItemId id);
    int type() const override { return NodeItemType; }
    ItemId id() const { return m_id; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    // Refreshes the display strings from the document (name, op, port count).
    void syncFromDocument();
    void setAnalysis(const QString& shape, const QString& stats, const QString& error);
    QString errorText() const { return m_error; }
    QString shapeText() const { return m_shape; }
    QString statsText() const { return m_stats; }
    // The smallest font on the card (op, shape, cost), in scene pixels.
    const QFont& textFont() const { return NodeCardStyle::get().textFont; }
    int inputPortCount() const { return m_inputPorts; }
    bool isInput() const { return m_isInput; }  // an op without inputs: where data enters
    bool isFrozen() const { return m_frozen; }  // drawn as frozen (the node does not train)
    bool isPlaceholder() const { return m_placeholder; }  // an imported op Kiln cannot compute
    QString opLabel() const { return m_opLabel; }  // the op as the card shows it
    QPointF inputPortPos(int port) const;  // scene coordinates
    QPointF outputPortPos() const;
    // -1 when not on a port; else the input port index, or kOutputPort.
    static constexpr int kOutputPort = 1000000;
    int portAt(QPointF scenePos) const;

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
    GraphScene* m_graph;
    ItemId m_id;
    QString m_name, m_op, m_opLabel, m_shape, m_stats, m_error;
    bool m_placeholder = false;
    bool m_frozen = false, m_shared = false, m_isInput = false;
    int m_inputPorts = 0;
};

// A data edge (producer -> input `port` of consumer) or a shared-weights link (dashed).
class EdgeItem : public QGraphicsPathItem {
public:
    enum class Kind { Data, SharedWeights };
    EdgeItem(GraphScene* scene, Kind kind, ItemId from, ItemId to, int port);
    int type() const override { return EdgeItemType; }
    Kind kind() const { return m_kind; }
    ItemId from() const { return m_from; }
    ItemId to() const { return m_to; }
    int port() const { return m_port; }
    void setLabel(const QString& text);
    QString label() const { return m_label; }
    void updatePath();
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    GraphScene* m_graph;
    Kind m_kind;
    ItemId m_from, m_to;
    int m_port;
    QString m_label;
    QSizeF m_labelSize;  // the label's box, in the card's text font
    QPointF m_mid;
};

// A group: a titled frame behind its nodes, or one box standing for them when collapsed.
class GroupItem : public QGraphicsItem {
public:
    GroupItem(GraphScene* scene, ItemId id);
    int type() const override { return GroupItemType; }
    ItemId id() const { return m_id; }
    QRectF boundingRect() const override { return m_rect; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void syncFromDocument();
    bool collapsed() const { return m_collapsed; }
    // Anchor for edges entering/leaving the collapsed box (scene coordinates).
    QPointF inputAnchor() const;
    QPointF outputAnchor() const;

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
    GraphScene* m_graph;
    ItemId m_id;
    QRectF m_rect;
    QString m_name;
    int m_count = 0;
    bool m_collapsed = false;
};

// A sticky note.
class CommentItem : public QGraphicsItem {
public:
    CommentItem(GraphScene* scene, ItemId id);
    int type() const override { return CommentItemType; }
    ItemId id() const { return m_id; }
    QRectF boundingRect() const override { return m_rect; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    void syncFromDocument();

protected:
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
    GraphScene* m_graph;
    ItemId m_id;
    QRectF m_rect;
    QString m_text;
};

}  // namespace kiln::ui
