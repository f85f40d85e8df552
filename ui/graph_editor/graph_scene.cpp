// SPDX-License-Identifier: Apache-2.0
// Scene synchronisation with the document, live analysis display, and canvas gestures.
#include "ui/graph_editor/graph_scene.h"

#include <QFontInfo>
#include <QGraphicsSceneMouseEvent>
#include <QKeyEvent>
#include <QMimeData>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QUndoStack>
#include <QWheelEvent>

#include <cmath>
#include <unordered_map>

#include "ui/common/theme.h"
#include "ui/graph_editor/canvas_minimap.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/layer_library.h"
#include "ui/graph_editor/palette_widget.h"

namespace kiln::ui {
namespace {

QString compact(int64_t v) {
    double d = static_cast<double>(v);
    if (d >= 1e9) return QString::number(d / 1e9, 'f', d >= 1e10 ? 0 : 1) + QLatin1Char('G');
    if (d >= 1e6) return QString::number(d / 1e6, 'f', d >= 1e7 ? 0 : 1) + QLatin1Char('M');
    if (d >= 1e3) return QString::number(d / 1e3, 'f', d >= 1e4 ? 0 : 1) + QLatin1Char('K');
    return QString::number(v);
}

// Guards a block that changes items because the document changed (not the user).
struct SyncGuard {
    bool& flag;
    bool old;
    explicit SyncGuard(bool& f) : flag(f), old(f) { flag = true; }
    ~SyncGuard() { flag = old; }
};

}  // namespace

GraphScene::GraphScene(EditorDocument* document, QObject* parent)
    : QGraphicsScene(parent), m_document(document) {
    setItemIndexMethod(BspTreeIndex);
    setSceneRect(-20000, -20000, 40000, 40000);
    document->setCardSize(QSizeF(nodeWidth(), nodeHeight()));
    connect(document, &EditorDocument::structureChanged, this, &GraphScene::rebuild);
    connect(document, &EditorDocument::nodeChanged, this, &GraphScene::syncNode);
    connect(document, &EditorDocument::positionsChanged, this, &GraphScene::syncPositions);
    connect(document, &EditorDocument::groupChanged, this, [this] { syncGroups(); });
    connect(document, &EditorDocument::commentChanged, this, [this](ItemId id) {
        if (auto* c = m_comments.value(id)) {
            SyncGuard g(m_syncing);
            c->syncFromDocument();
        }
    });
    // A new theme: every item repaints (update() also drops the cached pixmaps of node cards) and
    // the views draw their cached grid again.
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        for (QGraphicsItem* item : items()) item->update();
        for (QGraphicsView* view : views()) view->resetCachedContent();
        update();
    });
    rebuild();
}

void GraphScene::rebuild() {
    SyncGuard guard(m_syncing);
    const auto& nodes = m_document->nodes();
    QSet<ItemId> alive;
    alive.reserve(static_cast<qsizetype>(nodes.size()));
    for (const auto& n : nodes) {
        alive.insert(n.id);
        NodeItem* item = m_nodes.value(n.id);
        if (!item) {
            item = new NodeItem(this, n.id);
            addItem(item);
            m_nodes.insert(n.id, item);
        } else {
            item->syncFromDocument();
        }
        if (item->pos() != n.pos) item->setPos(n.pos);
    }
    for (auto it = m_nodes.begin(); it != m_nodes.end();) {
        if (!alive.contains(it.key())) {
            delete it.value();
            it = m_nodes.erase(it);
        } else {
            ++it;
        }
    }
    // Comments and groups are few: recreate them.
    qDeleteAll(m_comments);
    m_comments.clear();
    for (const auto& c : m_document->content().comments) {
        auto* item = new CommentItem(this, c.id);
        addItem(item);
        m_comments.insert(c.id, item);
    }
    syncGroups();
    growSceneRect();
}

void GraphScene::growSceneRect() {
    // Room to pan well beyond the diagram; the rect only grows so the view never jumps.
    QRectF want = itemsBoundingRect().adjusted(-20000, -20000, 20000, 20000);
    if (!sceneRect().contains(want)) setSceneRect(sceneRect().united(want));
}

void GraphScene::syncGroups() {
    SyncGuard guard(m_syncing);
    qDeleteAll(m_groups);
    m_groups.clear();
    QSet<ItemId> hidden;
    for (const auto& g : m_document->content().groups) {
        auto* item = new GroupItem(this, g.id);
        addItem(item);
        m_groups.insert(g.id, item);
        if (g.collapsed)
            for (ItemId id : g.nodes) hidden.insert(id);
    }
    for (auto it = m_nodes.begin(); it != m_nodes.end(); ++it) {
        bool visible = !hidden.contains(it.key());
        if (it.value()->isVisible() != visible) {
            it.value()->setVisible(visible);
            if (!visible) it.value()->setSelected(false);
        }
    }
    rebuildEdges();
}

void GraphScene::rebuildEdges() {
    SyncGuard guard(m_syncing);
    qDeleteAll(m_edges);
    m_edges.clear();
    m_edgesByNode.clear();
    const auto& nodes = m_document->nodes();
    std::unordered_map<std::string, ItemId> ids;
    ids.reserve(nodes.size() * 2);
    for (const auto& n : nodes) ids.emplace(n.node.name, n.id);
    // Edges inside one collapsed group are hidden with it.
    QHash<ItemId, ItemId> collapsedGroup;
    for (const auto& g : m_document->content().groups)
        if (g.collapsed)
            for (ItemId id : g.nodes) collapsedGroup.insert(id, g.id);
    auto add = [&](EdgeItem* e) {
        addItem(e);
        m_edges.push_back(e);
        m_edgesByNode[e->from()].push_back(e);
        m_edgesByNode[e->to()].push_back(e);
    };
    for (const auto& n : nodes) {
        for (size_t k = 0; k < n.node.inputs.size(); ++k) {
            auto it = ids.find(n.node.inputs[k]);
            // "block:out": one output of a layer instance with several, drawn from its card.
            if (it == ids.end()) it = ids.find(n.node.inputs[k].substr(0, n.node.inputs[k].find(':')));
            if (it == ids.end()) continue;
            ItemId g1 = collapsedGroup.value(it->second), g2 = collapsedGroup.value(n.id);
            if (g1 && g1 == g2) continue;
            add(new EdgeItem(this, EdgeItem::Kind::Data, it->second, n.id, static_cast<int>(k)));
        }
        if (!n.node.shareWeightsWith.empty())
            if (auto it = ids.find(n.node.shareWeightsWith); it != ids.end())
                add(new EdgeItem(this, EdgeItem::Kind::SharedWeights, it->second, n.id, -1));
    }
    applyAnalysisToItems();
}

void GraphScene::syncNode(ItemId id) {
    SyncGuard guard(m_syncing);
    auto* item = m_nodes.value(id);
    const auto* n = m_document->node(id);
    if (!item || !n) return;
    const int ports = item->inputPortCount();
    item->syncFromDocument();
    // Only a new shared-weights link changes the set of edges; a new port count moves them.
    ItemId owner = n->node.shareWeightsWith.empty() ? 0 : m_document->idOf(n->node.shareWeightsWith);
    ItemId shown = 0;
    for (auto* e : m_edgesByNode.value(id))
        if (e->kind() == EdgeItem::Kind::SharedWeights && e->to() == id) shown = e->from();
    if (owner != shown) {
        rebuildEdges();
        return;
    }
    if (ports != item->inputPortCount()) updateEdgesOf(id);
}

void GraphScene::syncPositions(const QVector<ItemId>& ids) {
    SyncGuard guard(m_syncing);
    bool groupsMoved = false;
    for (ItemId id : ids) {
        if (auto* item = m_nodes.value(id)) {
            if (const auto* n = m_document->node(id); n && item->pos() != n->pos) item->setPos(n->pos);
            updateEdgesOf(id);
            if (m_document->groupOf(id)) groupsMoved = true;
        } else if (auto* c = m_comments.value(id)) {
            c->syncFromDocument();
        } else if (m_groups.contains(id)) {
            groupsMoved = true;
        }
    }
    if (groupsMoved) {
        for (auto* g : std::as_const(m_groups)) g->syncFromDocument();
        for (auto* e : std::as_const(m_edges)) e->updatePath();
    }
    if (ids.size() > 8) growSceneRect();  // a layout or a large move
}

EdgeItem* GraphScene::edgeItem(ItemId from, ItemId to, int port) const {
    for (auto* e : m_edgesByNode.value(to))
        if (e->from() == from && e->to() == to && e->port() == port) return e;
    return nullptr;
}

QPointF GraphScene::outputAnchor(ItemId node) const {
    if (ItemId g = m_document->groupOf(node))
        if (auto* gi = m_groups.value(g); gi && gi->collapsed()) return gi->outputAnchor();
    if (auto* n = m_nodes.value(node)) return n->outputPortPos();
    return {};
}

QPointF GraphScene::inputAnchor(ItemId node, int port) const {
    if (ItemId g = m_document->groupOf(node))
        if (auto* gi = m_groups.value(g); gi && gi->collapsed()) return gi->inputAnchor();
    if (auto* n = m_nodes.value(node)) return n->inputPortPos(port);
    return {};
}

void GraphScene::updateEdgesOf(ItemId node) {
    for (auto* e : m_edgesByNode.value(node)) e->updatePath();
}

void GraphScene::noteItemMoved(ItemId id) {
    if (m_syncing) return;
    m_moved.insert(id);
    if (m_nodes.contains(id)) {
        updateEdgesOf(id);
    } else if (const auto* g = m_document->group(id)) {
        for (ItemId m : g->nodes) updateEdgesOf(m);
    }
}

QVector<ItemId> GraphScene::selectedNodes() const {
    QVector<ItemId> out;
    for (auto* item : selectedItems())
        if (item->type() == NodeItemType) out.push_back(static_cast<NodeItem*>(item)->id());
    // Keep file order so copies and groups are deterministic.
    std::sort(out.begin(), out.end());
    return out;
}

QVector<ItemId> GraphScene::selectedComments() const {
    QVector<ItemId> out;
    for (auto* item : selectedItems())
        if (item->type() == CommentItemType) out.push_back(static_cast<CommentItem*>(item)->id());
    return out;
}

QVector<ItemId> GraphScene::selectedGroups() const {
    QVector<ItemId> out;
    for (auto* item : selectedItems())
        if (item->type() == GroupItemType) out.push_back(static_cast<GroupItem*>(item)->id());
    return out;
}

void GraphScene::applyAnalysis(const GraphAnalysis& analysis) {
    m_analysis = analysis;
    applyAnalysisToItems();
}

void GraphScene::applyAnalysisToItems() {
    std::unordered_map<std::string, size_t> index;
    index.reserve(m_analysis.names.size() * 2);
    for (size_t i = 0; i < m_analysis.names.size(); ++i) index.emplace(m_analysis.names[i], i);
    QHash<ItemId, QString> shapes;
    for (const auto& n : m_document->nodes()) {
        auto* item = m_nodes.value(n.id);
        if (!item) continue;
        auto it = index.find(n.node.name);
        if (it == index.end()) {
            item->setAnalysis({}, {}, {});
            continue;
        }
        const auto& r = m_analysis.nodes[it->second];
        QString shape = r.hasShape ? QString::fromStdString(r.output.toString()) : QString();
        QString stats =
            r.hasShape ? tr("%1 params · %2 MACs").arg(compact(r.params), compact(r.macs)) : QString();
        item->setAnalysis(shape, stats, QString::fromStdString(r.error));
        shapes.insert(n.id, shape);
    }
    for (auto* e : std::as_const(m_edges))
        if (e->kind() == EdgeItem::Kind::Data) e->setLabel(shapes.value(e->from()));
}

NodeItem* GraphScene::nodeAt(QPointF scenePos, int* port) const {
    const QRectF probe(scenePos - QPointF(12, 12), QSizeF(24, 24));
    for (auto* item : items(probe, Qt::IntersectsItemBoundingRect, Qt::DescendingOrder)) {
        if (item->type() != NodeItemType || !item->isVisible()) continue;
        auto* n = static_cast<NodeItem*>(item);
        int p = n->portAt(scenePos);
        if (p >= 0) {
            if (port) *port = p;
            return n;
        }
    }
    if (port) *port = -1;
    return nullptr;
}

void GraphScene::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    m_moved.clear();
    if (event->button() == Qt::LeftButton) {
        int port = -1;
        if (NodeItem* n = nodeAt(event->scenePos(), &port)) {
            m_dragNode = n->id();
            m_dragPort = port;
            m_dragLine = new QGraphicsPathItem;
            QPen pen(Theme::instance().colors().selection, 2, Qt::DashLine);
            pen.setCosmetic(true);
            m_dragLine->setPen(pen);
            m_dragLine->setZValue(10);
            addItem(m_dragLine);
            event->accept();
            return;
        }
    }
    QGraphicsScene::mousePressEvent(event);
}

void GraphScene::mouseMoveEvent(QGraphicsSceneMouseEvent* event) {
    if (m_dragLine) {
        auto* n = m_nodes.value(m_dragNode);
        if (!n) return;
        QPointF a = m_dragPort == NodeItem::kOutputPort ? n->outputPortPos() : n->inputPortPos(m_dragPort);
        QPainterPath path(a);
        path.lineTo(event->scenePos());
        m_dragLine->setPath(path);
        event->accept();
        return;
    }
    QGraphicsScene::mouseMoveEvent(event);
}

void GraphScene::mouseReleaseEvent(QGraphicsSceneMouseEvent* event) {
    if (m_dragLine) {
        delete m_dragLine;
        m_dragLine = nullptr;
        ItemId start = m_dragNode;
        int startPort = m_dragPort;
        m_dragNode = 0;
        m_dragPort = -1;
        int port = -1;
        NodeItem* target = nodeAt(event->scenePos(), &port);
        event->accept();
        if (!target || target->id() == start) {
            if (target && target->id() == start) {
                QString why = tr("A node cannot take its own output as input.");
                emit connectionRefused(why);
                emit statusMessage(why);
            }
            return;
        }
        ItemId from = 0, to = 0;
        int inPort = -1;
        if (startPort == NodeItem::kOutputPort && port != NodeItem::kOutputPort) {
            from = start;
            to = target->id();
            inPort = port;
        } else if (startPort != NodeItem::kOutputPort && port == NodeItem::kOutputPort) {
            from = target->id();
            to = start;
            inPort = startPort;
        } else {
            QString why = startPort == NodeItem::kOutputPort ? tr("Connect an output to an input port.")
                                                             : tr("Connect an input to an output port.");
            emit connectionRefused(why);
            emit statusMessage(why);
            return;
        }
        auto status = m_document->connectNodes(from, to, inPort);
        if (!status.ok()) {
            QString why = tr("Connection refused: %1").arg(QString::fromStdString(status.error().message));
            emit connectionRefused(why);
            emit statusMessage(why);
            QToolTip::showText(event->screenPos(), why, event->widget());
        }
        return;
    }
    QGraphicsScene::mouseReleaseEvent(event);
    if (!m_moved.isEmpty()) {
        QHash<ItemId, QPointF> positions;
        for (ItemId id : std::as_const(m_moved)) {
            if (auto* n = m_nodes.value(id))
                positions.insert(id, n->pos());
            else if (auto* c = m_comments.value(id))
                positions.insert(id, c->pos());
            else if (auto* g = m_groups.value(id))
                positions.insert(id, g->pos());
        }
        m_moved.clear();
        m_document->moveNodes(positions);
    }
}

void GraphScene::drawBackground(QPainter* painter, const QRectF& rect) {
    const ThemeColors& tc = Theme::instance().colors();
    painter->fillRect(rect, tc.canvasBackground);
    if (m_exporting) return;
    const qreal lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    if (lod < 0.5) return;
    const qreal step = 24;
    QPen pen(tc.canvasGrid, 1);
    pen.setCosmetic(true);
    painter->setPen(pen);
    // Axis-aligned hairlines need no antialiasing, which is the expensive part of the grid.
    painter->setRenderHint(QPainter::Antialiasing, false);
    qreal left = std::floor(rect.left() / step) * step, top = std::floor(rect.top() / step) * step;
    QVector<QLineF> lines;
    for (qreal x = left; x < rect.right(); x += step) lines.append(QLineF(x, rect.top(), x, rect.bottom()));
    for (qreal y = top; y < rect.bottom(); y += step) lines.append(QLineF(rect.left(), y, rect.right(), y));
    painter->drawLines(lines);
    painter->setRenderHint(QPainter::Antialiasing, true);
}

QRectF GraphScene::diagramRect() const {
    QRectF r;
    for (auto* item : items())
        if (item->isVisible() && item != m_dragLine) r |= item->sceneBoundingRect();
    return r.adjusted(-20, -20, 20, 20);
}

void GraphScene::renderDiagram(QPainter* painter, const QRectF& target, const QRectF& source) {
    auto selection = selectedItems();
    clearSelection();
    QList<QGraphicsItem*> cached;
    for (auto* item : items())
        if (item->cacheMode() != QGraphicsItem::NoCache) {
            cached.push_back(item);
            item->setCacheMode(QGraphicsItem::NoCache);
        }
    m_exporting = true;
    render(painter, target, source);
    m_exporting = false;
    for (auto* item : cached) item->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    for (auto* item : selection) item->setSelected(true);
}

// ---- GraphView ------------------------------------------------------------------------------

GraphView::GraphView(GraphScene* scene, QWidget* parent) : QGraphicsView(scene, parent), m_scene(scene) {
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(RubberBandDrag);
    setTransformationAnchor(NoAnchor);
    setResizeAnchor(AnchorViewCenter);
    setViewportUpdateMode(MinimalViewportUpdate);
    // The grid is drawn once per zoom level and scrolled with the view.
    setCacheMode(CacheBackground);
    setOptimizationFlags(DontSavePainterState);
    setAcceptDrops(true);
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    // Scrolling with the scroll bars or the keyboard is the user moving the view.
    for (QScrollBar* bar : {horizontalScrollBar(), verticalScrollBar()})
        connect(bar, &QScrollBar::actionTriggered, this, [this] { userMovedView(); });
    m_minimap = new CanvasMinimap(this);
}

qreal GraphView::readableZoom() {
    const qreal px = QFontInfo(NodeCardStyle::get().textFont).pixelSize();
    // Rounded up to 1/1000 so that px * zoom never falls below the minimum by rounding.
    return std::min<qreal>(1.0, std::ceil(kMinCardTextPx / px * 1000.0) / 1000.0);
}

QRectF GraphView::visibleSceneRect() const {
    return mapToScene(viewport()->rect()).boundingRect();
}

void GraphView::showStart() {
    m_followStart = true;
    applyStart();
}

void GraphView::applyStart() {
    const QRectF r = m_scene->diagramRect();
    if (r.isEmpty()) {
        setTransform(QTransform());
        emit viewChanged();
        return;
    }
    const QSizeF vp = viewport()->size();
    const qreal fitZoom = std::min(vp.width() / r.width(), vp.height() / r.height());
    const qreal z = std::clamp(fitZoom, readableZoom(), 1.0);
    setTransform(QTransform::fromScale(z, z));
    if (fitZoom >= z) {
        centerOn(r.center());
    } else {
        // Too large to show whole at a readable zoom: start where the data enters, at the top.
        QRectF inputs;
        for (QGraphicsItem* item : m_scene->items())
            if (item->type() == NodeItemType && item->isVisible() && static_cast<NodeItem*>(item)->isInput())
                inputs |= item->sceneBoundingRect();
        const qreal viewH = vp.height() / z;
        const qreal x = inputs.isEmpty() ? r.center().x() : inputs.center().x();
        const qreal top = inputs.isEmpty() ? r.top() : std::min(r.top(), inputs.top() - 20);
        centerOn(QPointF(x, top + viewH / 2));
    }
    emit viewChanged();
}

void GraphView::centerOnScene(QPointF scenePos) {
    userMovedView();
    centerOn(scenePos);
    emit viewChanged();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    emit viewChanged();
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    if (m_followStart) applyStart();
    emit viewChanged();
}

void GraphView::zoomBy(qreal factor, QPointF viewAnchor) {
    userMovedView();
    const qreal current = transform().m11();
    const qreal target = std::clamp(current * factor, 0.05, 4.0);
    factor = target / current;
    if (std::abs(factor - 1.0) < 1e-9) return;
    const QPointF before = mapToScene(viewAnchor.toPoint());
    scale(factor, factor);
    const QPointF after = mapToScene(viewAnchor.toPoint());
    const QPointF delta = (after - before) * transform().m11();
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - qRound(delta.x()));
    verticalScrollBar()->setValue(verticalScrollBar()->value() - qRound(delta.y()));
    emit viewChanged();
}

void GraphView::fit() {
    QRectF r = m_scene->diagramRect();
    if (r.isEmpty()) return;
    userMovedView();
    fitInView(r, Qt::KeepAspectRatio);
    if (transform().m11() > 1.5) {
        const qreal f = 1.5 / transform().m11();
        scale(f, f);
        centerOn(r.center());
    }
    emit viewChanged();
}

void GraphView::wheelEvent(QWheelEvent* event) {
    const int dy = event->angleDelta().y();
    if (dy == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(1.0015, dy), event->position());
    event->accept();
}

void GraphView::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && m_spaceHeld)) {
        userMovedView();
        m_panning = true;
        m_panLast = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseMoveEvent(QMouseEvent* event) {
    if (m_panning) {
        QPoint p = event->position().toPoint();
        QPoint d = p - m_panLast;
        m_panLast = p;
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - d.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
}

void GraphView::mouseReleaseEvent(QMouseEvent* event) {
    if (m_panning) {
        m_panning = false;
        viewport()->setCursor(m_spaceHeld ? Qt::OpenHandCursor : Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

void GraphView::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = true;
        viewport()->setCursor(Qt::OpenHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void GraphView::keyReleaseEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = false;
        viewport()->setCursor(Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyReleaseEvent(event);
}

namespace {
bool paletteMime(const QMimeData* mime) {
    return mime->hasFormat(kOpMimeType) || mime->hasFormat(kLayerMimeType);
}
}  // namespace

void GraphView::dragEnterEvent(QDragEnterEvent* event) {
    if (paletteMime(event->mimeData()))
        event->acceptProposedAction();
    else
        QGraphicsView::dragEnterEvent(event);
}

void GraphView::dragMoveEvent(QDragMoveEvent* event) {
    if (paletteMime(event->mimeData()))
        event->acceptProposedAction();
    else
        QGraphicsView::dragMoveEvent(event);
}

void GraphView::dropEvent(QDropEvent* event) {
    const QMimeData* mime = event->mimeData();
    const QPointF pos = mapToScene(event->position().toPoint()) - QPointF(nodeWidth() / 2, nodeHeight() / 2);
    if (mime->hasFormat(kOpMimeType)) {
        QString op = QString::fromUtf8(mime->data(kOpMimeType));
        m_scene->document()->addNode(op.toStdString(), pos);
        emit opDropped(op, pos);
        event->acceptProposedAction();
    } else if (mime->hasFormat(kLayerMimeType)) {
        auto r = addLayerFromPayload(m_scene->document(), mime->data(kLayerMimeType), pos);
        if (!r.ok()) emit m_scene->statusMessage(QString::fromStdString(r.error().message));
        event->acceptProposedAction();
    } else {
        QGraphicsView::dropEvent(event);
    }
}

}  // namespace kiln::ui
