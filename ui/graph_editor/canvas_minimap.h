// SPDX-License-Identifier: Apache-2.0
// The canvas overview: the whole diagram in miniature in the canvas's bottom-right corner with
// the visible part outlined; clicking or dragging in it moves the view there.
#pragma once

#include <QPixmap>
#include <QPointer>
#include <QWidget>

namespace kiln::ui {

class GraphView;

class CanvasMinimap : public QWidget {
    Q_OBJECT
public:
    // Lives on the view's viewport; keeps itself in the corner and hides while the whole
    // diagram is in view.
    explicit CanvasMinimap(GraphView* view);

    // The scene rectangle the overview shows, and the mapping between it and the widget.
    QRectF diagramRect() const { return m_diagram; }
    QPointF toScene(QPointF widgetPos) const;
    QPointF toWidget(QPointF scenePos) const;

    static constexpr int kMaxSide = 200;  // longest side of the drawn diagram, pixels
    static constexpr int kMargin = 6;      // inside the frame
    static constexpr int kCornerGap = 10;  // from the viewport's edges

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

private:
    void diagramChanged();  // coalesced: the scene's content changed
    void refresh();         // size, place and visibility from the diagram and the view
    void renderNodes();

    QPointer<GraphView> m_view;
    QRectF m_diagram;
    qreal m_scale = 1;    // widget pixels per scene unit
    QPointF m_offset;     // widget position of m_diagram's top-left corner
    QPixmap m_nodes;      // the miniature, redrawn when the diagram changes
    bool m_dirty = true;      // the diagram changed since m_nodes was drawn
    bool m_rectDirty = true;  // the diagram changed since m_diagram was measured
    bool m_refreshQueued = false;
    bool m_dragging = false;
};

}  // namespace kiln::ui
