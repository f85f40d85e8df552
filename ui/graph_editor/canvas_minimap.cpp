// SPDX-License-Identifier: Apache-2.0
// The canvas overview. Nodes are drawn into a pixmap once per change of the diagram, so that
// scrolling the canvas only repaints the pixmap and the outline of the visible part.
#include "ui/graph_editor/canvas_minimap.h"

#include <QMouseEvent>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <cmath>

#include "ui/common/theme.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"

namespace kiln::ui {

CanvasMinimap::CanvasMinimap(GraphView* view) : QWidget(view->viewport()), m_view(view) {
    setObjectName(QStringLiteral("canvasMinimap"));
    setAttribute(Qt::WA_OpaquePaintEvent);
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: click or drag to move the view"));
    hide();
    connect(view, &GraphView::viewChanged, this, &CanvasMinimap::refresh);
    EditorDocument* doc = view->graphScene()->document();
    connect(doc, &EditorDocument::changed, this, &CanvasMinimap::diagramChanged);
    connect(doc, &EditorDocument::structureChanged, this, &CanvasMinimap::diagramChanged);
    connect(doc, &EditorDocument::positionsChanged, this, &CanvasMinimap::diagramChanged);
    connect(doc, &EditorDocument::groupChanged, this, &CanvasMinimap::diagramChanged);
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        m_dirty = true;
        refresh();
    });
    diagramChanged();
}

void CanvasMinimap::diagramChanged() {
    m_dirty = true;
    m_rectDirty = true;
    // The scene updates its items from the same signals: measure once it has, after them all.
    if (m_refreshQueued) return;
    m_refreshQueued = true;
    QTimer::singleShot(0, this, [this] {
        m_refreshQueued = false;
        refresh();
    });
}

QPointF CanvasMinimap::toScene(QPointF widgetPos) const {
    return m_diagram.topLeft() + (widgetPos - m_offset) / m_scale;
}

QPointF CanvasMinimap::toWidget(QPointF scenePos) const {
    return m_offset + (scenePos - m_diagram.topLeft()) * m_scale;
}

void CanvasMinimap::refresh() {
    if (!m_view) return;
    if (m_rectDirty) {
        m_rectDirty = false;
        const QRectF d = m_view->graphScene()->diagramRect();
        if (d != m_diagram) {
            m_diagram = d;
            if (!d.isEmpty()) {
                m_scale = std::min(kMaxSide / d.width(), kMaxSide / d.height());
                // A long chain still gets a frame wide enough to hit with the mouse.
                const QSize content(std::max(40, static_cast<int>(std::ceil(d.width() * m_scale))),
                                    std::max(40, static_cast<int>(std::ceil(d.height() * m_scale))));
                resize(content + QSize(2 * kMargin, 2 * kMargin));
                m_offset = QPointF(kMargin + (content.width() - d.width() * m_scale) / 2,
                                   kMargin + (content.height() - d.height() * m_scale) / 2);
                m_dirty = true;
            }
        }
    }
    const QRectF visible = m_view->visibleSceneRect();
    // Hidden when everything is already in view (the diagram's margin may be cut off).
    const bool needed = !m_diagram.isEmpty() && !visible.contains(m_diagram.adjusted(20, 20, -20, -20));
    if (needed) {
        const QSize vp = m_view->viewport()->size();
        move(vp.width() - width() - kCornerGap, vp.height() - height() - kCornerGap);
        if (m_dirty) renderNodes();
        if (isHidden()) show();
        raise();
        update();
    } else if (!isHidden()) {
        hide();
    }
}

void CanvasMinimap::renderNodes() {
    m_dirty = false;
    const qreal dpr = devicePixelRatioF();
    m_nodes = QPixmap(size() * dpr);
    m_nodes.setDevicePixelRatio(dpr);
    const ThemeColors& tc = Theme::instance().colors();
    m_nodes.fill(tc.minimapBackground);
    QPainter p(&m_nodes);
    p.setRenderHint(QPainter::Antialiasing, false);
    const QColor node = tc.minimapNode;
    const QColor note = tc.minimapNote;
    p.setPen(QPen(tc.minimapEdge, 1));
    for (QGraphicsItem* item : m_view->graphScene()->items()) {
        if (!item->isVisible() || item->type() != EdgeItemType) continue;
        const auto* e = static_cast<const EdgeItem*>(item);
        if (e->kind() != EdgeItem::Kind::Data) continue;
        const QPainterPath path = e->path();
        if (path.isEmpty()) continue;
        p.drawLine(toWidget(path.pointAtPercent(0)), toWidget(path.pointAtPercent(1)));
    }
    p.setPen(Qt::NoPen);
    for (QGraphicsItem* item : m_view->graphScene()->items()) {
        if (!item->isVisible()) continue;
        QRectF r;
        if (item->type() == NodeItemType) {
            p.setBrush(node);
            r = item->mapRectToScene(QRectF(0, 0, nodeWidth(), nodeHeight()));
        } else if (item->type() == GroupItemType && static_cast<const GroupItem*>(item)->collapsed()) {
            p.setBrush(node);
            r = item->sceneBoundingRect();
        } else if (item->type() == CommentItemType) {
            p.setBrush(note);
            r = item->sceneBoundingRect();
        } else {
            continue;
        }
        QRectF w(toWidget(r.topLeft()), toWidget(r.bottomRight()));
        // At least a pixel high, so that every node of a long chain shows.
        if (w.height() < 1) w.setHeight(1);
        p.drawRect(w);
    }
}

void CanvasMinimap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.drawPixmap(0, 0, m_nodes);
    if (!m_view) return;
    const QRectF visible = m_view->visibleSceneRect();
    QRectF w(toWidget(visible.topLeft()), toWidget(visible.bottomRight()));
    w = w.intersected(QRectF(rect()).adjusted(1, 1, -1, -1));
    const ThemeColors& tc = Theme::instance().colors();
    QColor fill = tc.selection;
    fill.setAlphaF(0.18);
    p.setBrush(fill);
    p.setPen(QPen(tc.selection, 1.5));
    p.drawRect(w);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(tc.minimapFrame, 1));
    p.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
}

void CanvasMinimap::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !m_view) return QWidget::mousePressEvent(event);
    m_dragging = true;
    m_view->centerOnScene(toScene(event->position()));
    event->accept();
}

void CanvasMinimap::mouseMoveEvent(QMouseEvent* event) {
    if (!m_dragging || !m_view) return QWidget::mouseMoveEvent(event);
    m_view->centerOnScene(toScene(event->position()));
    event->accept();
}

void CanvasMinimap::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) m_dragging = false;
    event->accept();
}

}  // namespace kiln::ui
