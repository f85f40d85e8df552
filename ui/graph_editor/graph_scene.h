// SPDX-License-Identifier: Apache-2.0
// The canvas scene and view: keeps items in step with the document, shows the live analysis,
// and turns mouse gestures (port-to-port drags, moves, drops from the palette) into commands.
#pragma once

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHash>
#include <QPointer>

#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_analysis.h"

namespace kiln::ui {

class NodeItem;
class EdgeItem;
class GroupItem;
class CommentItem;

class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(EditorDocument* document, QObject* parent = nullptr);
    EditorDocument* document() const { return m_document; }

    NodeItem* nodeItem(ItemId id) const { return m_nodes.value(id); }
    GroupItem* groupItem(ItemId id) const { return m_groups.value(id); }
    CommentItem* commentItem(ItemId id) const { return m_comments.value(id); }
    QList<EdgeItem*> edgeItems() const { return m_edges; }
    EdgeItem* edgeItem(ItemId from, ItemId to, int port) const;
    // Where an edge attaches to a node, following collapsed groups.
    QPointF outputAnchor(ItemId node) const;
    QPointF inputAnchor(ItemId node, int port) const;

    QVector<ItemId> selectedNodes() const;
    QVector<ItemId> selectedComments() const;
    QVector<ItemId> selectedGroups() const;
    void applyAnalysis(const GraphAnalysis& analysis);
    const GraphAnalysis& analysis() const { return m_analysis; }
    // Renders the whole diagram (for PNG/SVG export), without selection highlights.
    void renderDiagram(QPainter* painter, const QRectF& target, const QRectF& source);
    QRectF diagramRect() const;

    // Called by items when the user moves them; positions are committed on mouse release.
    void noteItemMoved(ItemId id);
    void updateEdgesOf(ItemId node);
    bool syncing() const { return m_syncing; }

signals:
    void statusMessage(const QString& text);
    void connectionRefused(const QString& reason);

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseMoveEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;
    void drawBackground(QPainter* painter, const QRectF& rect) override;

private:
    void rebuild();
    void growSceneRect();
    void rebuildEdges();
    void syncNode(ItemId id);
    void syncPositions(const QVector<ItemId>& ids);
    void syncGroups();
    void applyAnalysisToItems();
    NodeItem* nodeAt(QPointF scenePos, int* port) const;

    QPointer<EditorDocument> m_document;
    QHash<ItemId, NodeItem*> m_nodes;
    QHash<ItemId, GroupItem*> m_groups;
    QHash<ItemId, CommentItem*> m_comments;
    QList<EdgeItem*> m_edges;
    QHash<ItemId, QList<EdgeItem*>> m_edgesByNode;
    GraphAnalysis m_analysis;
    bool m_syncing = false;
    bool m_exporting = false;

    // Connection drag state.
    ItemId m_dragNode = 0;
    int m_dragPort = -1;
    QGraphicsPathItem* m_dragLine = nullptr;
    QSet<ItemId> m_moved;
};

class CanvasMinimap;

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);
    GraphScene* graphScene() const { return m_scene; }
    CanvasMinimap* minimap() const { return m_minimap; }
    qreal zoom() const { return transform().m11(); }
    void zoomBy(qreal factor, QPointF viewAnchor);
    // Fits the whole diagram (at most 150 %), however small its text becomes.
    void fit();
    // The opening view of a document: 100 %, or less down to readableZoom() when that shows the
    // whole diagram, centred on the diagram when it fits, else on the model's inputs at the
    // top. Until the user zooms or scrolls, the view follows resizes of the window with it.
    void showStart();
    // The smallest zoom at which card text is still kMinCardTextPx pixels high (at most 1).
    static qreal readableZoom();
    // The part of the scene the viewport shows.
    QRectF visibleSceneRect() const;
    // Centres the view on a scene point (the minimap uses it); ends the opening view.
    void centerOnScene(QPointF scenePos);

signals:
    void opDropped(const QString& op, QPointF scenePos);
    // The visible part of the scene moved or changed scale.
    void viewChanged();

protected:
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void keyReleaseEvent(QKeyEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void applyStart();
    void userMovedView() { m_followStart = false; }

    GraphScene* m_scene;
    CanvasMinimap* m_minimap = nullptr;
    bool m_followStart = false;  // the opening view is shown and the user has not moved it
    bool m_panning = false;
    bool m_spaceHeld = false;
    QPoint m_panLast;
};

}  // namespace kiln::ui
