// SPDX-License-Identifier: Apache-2.0
// The canvas widget: toolbar, actions, clipboard, alignment, export, and the wiring between the
// document, the scene and the background analysis.
#include "ui/graph_editor/graph_editor_widget.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCompleter>
#include <QFileDialog>
#include <QImage>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QStringListModel>
#include <QSvgGenerator>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include "ui/common/theme.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/graph_editor/graph_analysis.h"
#include "ui/graph_editor/layer_editor_dialog.h"
#include "ui/graph_editor/layer_library.h"
#include "ui/graph_editor/make_layer_dialog.h"
#include "ui/graph_editor/replace_head_dialog.h"

namespace kiln::ui {
namespace {

constexpr const char* kNodesMimeType = "application/x-kiln-nodes";

engine::Graph graphOf(const EditorDocument& doc) {
    engine::Graph g;
    g.nodes.reserve(doc.nodes().size());
    for (const auto& n : doc.nodes()) g.nodes.push_back(n.node);
    g.outputs = doc.content().outputs;
    return g;
}

}  // namespace

GraphEditorWidget::GraphEditorWidget(EditorDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document) {
    m_scene = new GraphScene(document, this);
    m_view = new GraphView(m_scene, this);
    m_analysis = new AnalysisRunner(this);
    m_toolBar = new QToolBar(tr("Canvas"), this);
    m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_toolBar);
    layout->addWidget(m_view, 1);
    createActions();

    auto reanalyse = [this] { m_analysis->request(graphOf(*m_document), m_document->layerLibrary()); };
    connect(document, &EditorDocument::structureChanged, this, reanalyse);
    connect(document, &EditorDocument::nodeChanged, this, reanalyse);
    connect(m_analysis, &AnalysisRunner::finished, this, [this](const GraphAnalysis& a) {
        m_scene->applyAnalysis(a);
        emit analysisUpdated(a);
    });
    connect(m_scene, &QGraphicsScene::selectionChanged, this, [this] {
        updateActions();
        emit selectionChanged();
        emit currentNodeChanged(currentNode());
    });
    connect(m_scene, &GraphScene::statusMessage, this, &GraphEditorWidget::statusMessage);
    m_view->viewport()->installEventFilter(this);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        // A right click on a node acts on it (selected first if it was not): its freezing and the
        // selection's actions; elsewhere on the canvas, the selection's actions.
        QMenu* menu = nullptr;
        for (QGraphicsItem* item = m_view->itemAt(at); item && !menu; item = item->parentItem())
            if (auto* nodeItem = dynamic_cast<NodeItem*>(item)) {
                if (!nodeItem->isSelected()) selectNodes({nodeItem->id()});
                menu = nodeMenu(nodeItem->id(), this);
            }
        if (!menu) menu = createContextMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_view->viewport()->mapToGlobal(at));
    });
    connect(document->undoStack(), &QUndoStack::indexChanged, this, [this] { updateActions(); });
    reanalyse();
    updateActions();
}

GraphEditorWidget::~GraphEditorWidget() {
    m_analysis->waitForIdle();
    // The scene emits selection changes while its items are destroyed: not to us any more.
    m_scene->disconnect(this);
    delete m_view;
    delete m_scene;
}

QMenu* GraphEditorWidget::nodeMenu(ItemId id, QWidget* parent) {
    auto* menu = new QMenu(parent);
    const auto* n = m_document->node(id);
    if (!n) return menu;
    const QString name = QString::fromStdString(n->node.name);
    QAction* toggle = menu->addAction(n->node.trainable ? tr("Freeze %1").arg(name) : tr("Unfreeze %1").arg(name));
    toggle->setObjectName(QStringLiteral("toggleFreeze"));
    connect(toggle, &QAction::triggered, this, [this, id, trainable = n->node.trainable] {
        m_document->setTrainable(id, !trainable);
    });
    QAction* upTo = menu->addAction(tr("Freeze Everything up to %1").arg(name));
    upTo->setObjectName(QStringLiteral("freezeUpTo"));
    upTo->setToolTip(tr("Freezes this node and every node before it; the nodes after it stay trainable."));
    connect(upTo, &QAction::triggered, this, [this, id, name] {
        const int frozen = m_document->freezeUpTo(id);
        emit statusMessage(tr("Froze %n node(s) up to %1; the nodes after it train.", nullptr, frozen).arg(name));
    });
    QAction* all = menu->addAction(tr("Unfreeze All"));
    all->setObjectName(QStringLiteral("unfreezeAll"));
    connect(all, &QAction::triggered, this, [this] { m_document->unfreezeAll(); });
    QAction* head = menu->addAction(tr("Replace Head From Here…"));
    head->setObjectName(QStringLiteral("replaceHead"));
    head->setToolTip(tr("Removes every node after %1 and attaches a new classification head.").arg(name));
    connect(head, &QAction::triggered, this, [this, id, name] {
        auto* dialog = new ReplaceHeadDialog(m_document, id, this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &QDialog::accepted, this, [this, dialog, name] {
            emit statusMessage(tr("New head after %1: %n node(s).", nullptr, int(dialog->addedNodes().size())).arg(name));
        });
        dialog->open();
    });
    menu->addSeparator();
    menu->addAction(action(StandardAction::MakeLayer));
    menu->addAction(action(StandardAction::SaveLayerToLibrary));
    menu->addSeparator();
    for (auto a : {StandardAction::Cut, StandardAction::Copy, StandardAction::Duplicate, StandardAction::Delete})
        menu->addAction(action(a));
    menu->addSeparator();
    menu->addAction(action(StandardAction::Group));
    menu->addAction(action(StandardAction::Ungroup));
    return menu;
}

QAction* GraphEditorWidget::action(StandardAction which) const {
    return m_actions.value(static_cast<int>(which));
}

QList<QAction*> GraphEditorWidget::editActions() const {
    QList<QAction*> out;
    for (auto a : {StandardAction::Undo, StandardAction::Redo, StandardAction::Cut, StandardAction::Copy,
                   StandardAction::Paste, StandardAction::Duplicate, StandardAction::Delete,
                   StandardAction::SelectAll, StandardAction::Group, StandardAction::Ungroup,
                   StandardAction::CollapseGroup, StandardAction::MakeLayer, StandardAction::SaveLayerToLibrary,
                   StandardAction::AddComment, StandardAction::AutoLayout, StandardAction::FindNode})
        out << action(a);
    return out;
}

void GraphEditorWidget::createActions() {
    auto make = [this](StandardAction id, const QString& text, const QKeySequence& key, auto slot) {
        auto* a = new QAction(text, this);
        if (!key.isEmpty()) a->setShortcut(key);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(a, &QAction::triggered, this, slot);
        addAction(a);
        m_actions.insert(static_cast<int>(id), a);
        return a;
    };
    QUndoStack* stack = m_document->undoStack();
    auto* undo = stack->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    auto* redo = stack->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    for (auto* a : {undo, redo}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
    }
    m_actions.insert(static_cast<int>(StandardAction::Undo), undo);
    m_actions.insert(static_cast<int>(StandardAction::Redo), redo);

    make(StandardAction::Copy, tr("&Copy"), QKeySequence::Copy, [this] {
        QByteArray data = m_document->copyNodes(selectedNodes());
        if (data.isEmpty()) return;
        auto* mime = new QMimeData;
        mime->setData(kNodesMimeType, data);
        mime->setText(QString::fromUtf8(data));
        QApplication::clipboard()->setMimeData(mime);
    });
    make(StandardAction::Cut, tr("Cu&t"), QKeySequence::Cut, [this] {
        action(StandardAction::Copy)->trigger();
        m_document->removeItems(selectedNodes());
    });
    make(StandardAction::Paste, tr("&Paste"), QKeySequence::Paste, [this] {
        const QMimeData* mime = QApplication::clipboard()->mimeData();
        if (!mime) return;
        QByteArray data =
            mime->hasFormat(kNodesMimeType) ? mime->data(kNodesMimeType) : mime->text().toUtf8();
        auto ids = m_document->pasteNodes(data, QPointF(40, 40));
        if (ids.isEmpty()) emit statusMessage(tr("The clipboard holds no Kiln nodes."));
        selectNodes(ids);
    });
    make(StandardAction::Duplicate, tr("D&uplicate"), QKeySequence(Qt::CTRL | Qt::Key_D),
         [this] { selectNodes(m_document->duplicateNodes(selectedNodes())); });
    make(StandardAction::Delete, tr("&Delete"), QKeySequence::Delete, [this] {
        // Selected edges: disconnect, highest port first so the lower ports keep their index.
        QList<EdgeItem*> edges;
        for (auto* item : m_scene->selectedItems())
            if (item->type() == EdgeItemType) edges << static_cast<EdgeItem*>(item);
        std::sort(edges.begin(), edges.end(), [](auto* a, auto* b) { return a->port() > b->port(); });
        QUndoStack* s = m_document->undoStack();
        const auto nodes = selectedNodes();
        const auto comments = m_scene->selectedComments();
        const auto groups = m_scene->selectedGroups();
        QVector<std::pair<ItemId, int>> cuts;
        for (auto* e : edges) cuts.push_back({e->to(), e->port()});
        if (cuts.isEmpty() && nodes.isEmpty() && comments.isEmpty() && groups.isEmpty()) return;
        s->beginMacro(tr("Delete"));
        for (auto [to, port] : cuts)
            if (!nodes.contains(to)) m_document->disconnect(to, port);
        m_document->removeItems(nodes, comments, groups);
        s->endMacro();
    });
    make(StandardAction::SelectAll, tr("Select &All"), QKeySequence::SelectAll, [this] {
        for (auto* item : m_scene->items())
            if (item->isVisible() && (item->flags() & QGraphicsItem::ItemIsSelectable) &&
                item->type() != EdgeItemType)
                item->setSelected(true);
    });
    make(StandardAction::Group, tr("&Group"), QKeySequence(Qt::CTRL | Qt::Key_G), [this] {
        if (m_document->groupNodes(selectedNodes())) emit statusMessage(tr("Grouped into a block."));
    });
    make(StandardAction::Ungroup, tr("U&ngroup"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G), [this] {
        QSet<ItemId> groups;
        for (ItemId g : m_scene->selectedGroups()) groups.insert(g);
        for (ItemId n : selectedNodes())
            if (ItemId g = m_document->groupOf(n)) groups.insert(g);
        m_document->undoStack()->beginMacro(tr("Ungroup"));
        for (ItemId g : groups) m_document->ungroup(g);
        m_document->undoStack()->endMacro();
    });
    make(StandardAction::CollapseGroup, tr("Collapse/Expand Block"), QKeySequence(Qt::CTRL | Qt::Key_E),
         [this] {
             QSet<ItemId> groups;
             for (ItemId g : m_scene->selectedGroups()) groups.insert(g);
             for (ItemId n : selectedNodes())
                 if (ItemId g = m_document->groupOf(n)) groups.insert(g);
             for (ItemId g : groups)
                 if (const auto* eg = m_document->group(g)) m_document->setGroupCollapsed(g, !eg->collapsed);
         });
    make(StandardAction::AddComment, tr("Add Co&mment"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M),
         [this] {
             QPointF c = m_view->mapToScene(m_view->viewport()->rect().center());
             m_document->addComment(QRectF(c - QPointF(100, 40), QSizeF(200, 80)), tr("Note"));
         });
    make(StandardAction::AutoLayout, tr("Auto &Layout"), QKeySequence(Qt::CTRL | Qt::Key_L), [this] {
        m_document->autoLayout();
        fitView();
    });
    make(StandardAction::MakeLayer, tr("Make La&yer…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L),
         [this] { makeLayerInteractive(); });
    make(StandardAction::SaveLayerToLibrary, tr("Save Layer to Li&brary"), QKeySequence(), [this] {
        const ItemId id = currentNode();
        const EditorNode* n = m_document->node(id);
        if (!n) return;
        const QString layer = QString::fromStdString(n->node.op);
        if (m_library && m_library->find(layer)) {
            const auto answer = QMessageBox::question(
                this, tr("Save Layer to Library"),
                tr("Your layer library already has a layer called %1. Replace it?").arg(layer));
            if (answer != QMessageBox::Yes) return;
        }
        auto st = saveLayerToLibrary(id);
        if (st.ok())
            emit statusMessage(tr("Layer %1 saved to your layer library.").arg(layer));
        else
            QMessageBox::warning(this, tr("Save Layer to Library"), QString::fromStdString(st.error().message));
    });
    make(StandardAction::FindNode, tr("&Find Node…"), QKeySequence::Find, [this] {
        m_find->setFocus(Qt::ShortcutFocusReason);
        m_find->selectAll();
    });
    make(StandardAction::ZoomIn, tr("Zoom &In"), QKeySequence::ZoomIn, [this] { zoomBy(1.25); });
    make(StandardAction::ZoomOut, tr("Zoom &Out"), QKeySequence::ZoomOut, [this] { zoomBy(0.8); });
    make(StandardAction::FitView, tr("&Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), [this] { fitView(); });
    make(StandardAction::ExportPng, tr("Export Diagram as &PNG…"), QKeySequence(),
         [this] { exportPngInteractive(); });
    make(StandardAction::ExportSvg, tr("Export Diagram as &SVG…"), QKeySequence(),
         [this] { exportSvgInteractive(); });

    m_toolBar->addAction(action(StandardAction::ZoomIn));
    m_toolBar->addAction(action(StandardAction::ZoomOut));
    m_toolBar->addAction(action(StandardAction::FitView));
    m_toolBar->addSeparator();
    m_toolBar->addAction(action(StandardAction::AutoLayout));
    auto* alignMenu = new QMenu(tr("Align"), this);
    const std::pair<Align, QString> aligns[] = {
        {Align::Left, tr("Left edges")},          {Align::HCenter, tr("Horizontal centres")},
        {Align::Right, tr("Right edges")},        {Align::Top, tr("Top edges")},
        {Align::VCenter, tr("Vertical centres")}, {Align::Bottom, tr("Bottom edges")}};
    for (const auto& [how, text] : aligns)
        alignMenu->addAction(text, this, [this, how = how] { align(how); });
    auto* alignButton = new QToolButton(m_toolBar);
    alignButton->setText(tr("Align"));
    alignButton->setMenu(alignMenu);
    alignButton->setPopupMode(QToolButton::InstantPopup);
    m_toolBar->addWidget(alignButton);
    m_toolBar->addSeparator();
    m_toolBar->addAction(action(StandardAction::Group));
    m_toolBar->addAction(action(StandardAction::CollapseGroup));
    m_toolBar->addAction(action(StandardAction::AddComment));
    m_toolBar->addSeparator();

    // Find: a search field with the names of the nodes as completions.
    m_find = new QLineEdit(m_toolBar);
    m_find->setObjectName(QStringLiteral("findNode"));
    m_find->setClearButtonEnabled(true);
    m_find->setPlaceholderText(tr("Find node… (%1)").arg(QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText)));
    m_find->setMinimumWidth(fontMetrics().horizontalAdvance(m_find->placeholderText()) + 40);
    auto* names = new QStringListModel(m_find);
    auto* completer = new QCompleter(names, m_find);
    completer->setCaseSensitivity(Qt::CaseInsensitive);
    completer->setFilterMode(Qt::MatchContains);
    m_find->setCompleter(completer);
    auto refreshNames = [this, names] {
        QStringList list;
        for (const EditorNode& n : m_document->nodes()) list << QString::fromStdString(n.node.name);
        list.sort(Qt::CaseInsensitive);
        names->setStringList(list);
    };
    refreshNames();
    connect(m_document, &EditorDocument::changed, names, refreshNames);
    connect(m_find, &QLineEdit::returnPressed, this, [this] { findNode(m_find->text()); });
    connect(completer, qOverload<const QString&>(&QCompleter::activated), this, [this](const QString& name) {
        m_lastFind.clear();  // a picked name goes to that node
        findNode(name);
    });
    m_toolBar->addWidget(m_find);
}

bool GraphEditorWidget::findNode(const QString& text) {
    const QString wanted = text.trimmed();
    if (wanted.isEmpty()) return false;
    // Exact names first, then names that contain the text, then nodes of that op.
    QVector<ItemId> exact, partial, byOp;
    for (const EditorNode& n : m_document->nodes()) {
        const QString name = QString::fromStdString(n.node.name);
        if (name.compare(wanted, Qt::CaseInsensitive) == 0) exact << n.id;
        else if (name.contains(wanted, Qt::CaseInsensitive)) partial << n.id;
        else if (QString::fromStdString(n.node.op).compare(wanted, Qt::CaseInsensitive) == 0) byOp << n.id;
    }
    const QVector<ItemId> matches = exact + partial + byOp;
    if (matches.isEmpty()) {
        emit statusMessage(tr("No node matches “%1”.").arg(wanted));
        m_lastFind.clear();
        return false;
    }
    m_findMatch = wanted == m_lastFind ? (m_findMatch + 1) % int(matches.size()) : 0;
    m_lastFind = wanted;
    const ItemId id = matches[m_findMatch];
    selectNodes({id});
    if (m_view->zoom() < GraphView::readableZoom())
        m_view->zoomBy(GraphView::readableZoom() / m_view->zoom(), QPointF(m_view->viewport()->rect().center()));
    if (NodeItem* item = m_scene->nodeItem(id)) m_view->centerOnScene(item->sceneBoundingRect().center());
    if (matches.size() > 1)
        emit statusMessage(tr("Match %1 of %2 for “%3”: Enter goes to the next.").arg(m_findMatch + 1).arg(matches.size()).arg(wanted));
    return true;
}

void GraphEditorWidget::updateActions() {
    const bool any = !selectedNodes().isEmpty();
    for (auto a : {StandardAction::Cut, StandardAction::Copy, StandardAction::Duplicate, StandardAction::Group,
                   StandardAction::MakeLayer})
        action(a)->setEnabled(any);
    bool projectLayer = false;
    if (const EditorNode* n = m_document->node(currentNode()))
        for (const auto& d : m_document->content().layers) projectLayer = projectLayer || d.name == n->node.op;
    action(StandardAction::SaveLayerToLibrary)->setEnabled(projectLayer && m_library);
}

UserLayerLibrary* GraphEditorWidget::userLibrary() const {
    return m_library;
}

void GraphEditorWidget::setUserLibrary(UserLayerLibrary* library) {
    m_library = library;
    updateActions();
}

ItemId GraphEditorWidget::makeLayerInteractive() {
    const auto nodes = selectedNodes();
    if (nodes.isEmpty()) {
        emit statusMessage(tr("Select the nodes that should become the layer."));
        return 0;
    }
    MakeLayerDialog dialog(m_document, nodes, this);
    if (dialog.exec() != QDialog::Accepted) return 0;
    const ItemId id = dialog.instance();
    selectNodes({id});
    if (const EditorNode* n = m_document->node(id))
        emit statusMessage(tr("Made layer %1; %2 is its first instance.")
                               .arg(QString::fromStdString(n->node.op), QString::fromStdString(n->node.name)));
    return id;
}

engine::Status GraphEditorWidget::saveLayerToLibrary(ItemId instance) {
    const EditorNode* n = m_document->node(instance);
    if (!n) return engine::Error(engine::ErrorCode::InvalidArgument, tr("Select one layer instance.").toStdString());
    if (!m_library)
        return engine::Error(engine::ErrorCode::InvalidArgument, tr("There is no layer library to save to.").toStdString());
    auto defs = m_document->layerWithDependencies(n->node.op);
    if (defs.empty()) {
        const QString why = m_document->findLayer(n->node.op)
                                ? tr("%1 is a built-in layer: every project can use it already.")
                                : tr("%1 is not a layer of this project.");
        return engine::Error(engine::ErrorCode::InvalidArgument,
                             why.arg(QString::fromStdString(n->node.op)).toStdString())
            .withNode(n->node.name);
    }
    return m_library->save(defs);
}

bool GraphEditorWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_view->viewport() && event->type() == QEvent::MouseButtonDblClick) {
        const QPoint at = static_cast<QMouseEvent*>(event)->position().toPoint();
        for (QGraphicsItem* item = m_view->itemAt(at); item; item = item->parentItem())
            if (item->type() == NodeItemType) {
                const EditorNode* n = m_document->node(static_cast<NodeItem*>(item)->id());
                if (n && m_document->findLayer(n->node.op)) {
                    openLayer(n->id);
                    return true;
                }
                break;
            }
    }
    return QWidget::eventFilter(watched, event);
}

bool GraphEditorWidget::openLayer(ItemId instance) {
    const EditorNode* n = m_document->node(instance);
    if (!n) return false;
    // The shapes feeding the instance, so that the inside analyses with real shapes.
    std::vector<std::vector<int64_t>> shapes;
    const GraphAnalysis& a = m_analysis->latest();
    for (const auto& in : n->node.inputs) {
        std::vector<int64_t> dims;
        const std::string base = in.substr(0, in.find(':'));
        if (const NodeResult* r = a.find(base); r && r->hasShape) {
            engine::Shape s = r->output;
            if (in.size() > base.size())
                for (const auto& [port, shape] : r->ports)
                    if (base + ":" + port == in) s = shape;
            dims = s.hasBatch() ? s.withoutFirst().dims() : s.dims();
        }
        shapes.push_back(std::move(dims));
    }
    const std::string layer = n->node.op;
    auto inside = m_document->layerInside(layer, shapes);
    if (!inside.ok()) {
        emit statusMessage(QString::fromStdString(inside.error().message));
        return false;
    }
    LayerEditorDialog dialog(m_document, layer, inside.value(), this);
    if (dialog.exec() == QDialog::Accepted)
        emit statusMessage(tr("Layer %1 updated; its instances follow.").arg(QString::fromStdString(layer)));
    return true;
}

QMenu* GraphEditorWidget::createContextMenu(QWidget* parent) {
    auto* menu = new QMenu(parent);
    menu->addAction(action(StandardAction::MakeLayer));
    menu->addAction(action(StandardAction::SaveLayerToLibrary));
    menu->addSeparator();
    for (auto a : {StandardAction::Cut, StandardAction::Copy, StandardAction::Paste, StandardAction::Duplicate,
                   StandardAction::Delete})
        menu->addAction(action(a));
    menu->addSeparator();
    menu->addAction(action(StandardAction::Group));
    menu->addAction(action(StandardAction::Ungroup));
    return menu;
}

QVector<ItemId> GraphEditorWidget::selectedNodes() const {
    return m_scene->selectedNodes();
}

ItemId GraphEditorWidget::currentNode() const {
    auto nodes = selectedNodes();
    return nodes.size() == 1 ? nodes.front() : 0;
}

void GraphEditorWidget::selectNodes(const QVector<ItemId>& ids) {
    m_scene->clearSelection();
    for (ItemId id : ids)
        if (auto* item = m_scene->nodeItem(id)) item->setSelected(true);
}

void GraphEditorWidget::align(Align how) {
    const auto ids = selectedNodes();
    if (ids.size() < 2) {
        emit statusMessage(tr("Select two or more nodes to align."));
        return;
    }
    QRectF box;
    for (ItemId id : ids) box |= QRectF(m_document->node(id)->pos, QSizeF(nodeWidth(), nodeHeight()));
    QHash<ItemId, QPointF> pos;
    for (ItemId id : ids) {
        QPointF p = m_document->node(id)->pos;
        switch (how) {
        case Align::Left:
            p.setX(box.left());
            break;
        case Align::HCenter:
            p.setX(box.center().x() - nodeWidth() / 2);
            break;
        case Align::Right:
            p.setX(box.right() - nodeWidth());
            break;
        case Align::Top:
            p.setY(box.top());
            break;
        case Align::VCenter:
            p.setY(box.center().y() - nodeHeight() / 2);
            break;
        case Align::Bottom:
            p.setY(box.bottom() - nodeHeight());
            break;
        }
        pos.insert(id, p);
    }
    m_document->alignNodes(pos);
}

void GraphEditorWidget::fitView() {
    m_view->fit();
}

void GraphEditorWidget::showStart() {
    m_view->showStart();
}

void GraphEditorWidget::zoomBy(qreal factor) {
    m_view->zoomBy(factor, m_view->viewport()->rect().center());
}

void GraphEditorWidget::addOpAtCenter(const QString& op) {
    QPointF c =
        m_view->mapToScene(m_view->viewport()->rect().center()) - QPointF(nodeWidth() / 2, nodeHeight() / 2);
    if (ItemId id = m_document->addNode(op.toStdString(), c)) selectNodes({id});
}

void GraphEditorWidget::addLayerAtCenter(const QByteArray& payload) {
    QPointF c =
        m_view->mapToScene(m_view->viewport()->rect().center()) - QPointF(nodeWidth() / 2, nodeHeight() / 2);
    auto r = addLayerFromPayload(m_document, payload, c);
    if (r.ok())
        selectNodes({r.value()});
    else
        emit statusMessage(QString::fromStdString(r.error().message));
}

bool GraphEditorWidget::exportPng(const QString& path, qreal scale) {
    const QRectF source = m_scene->diagramRect();
    if (source.isEmpty()) return false;
    QSize size = (source.size() * scale).toSize();
    // Keep very large diagrams within a sane image size.
    const int maxSide = 16000;
    if (size.width() > maxSide || size.height() > maxSide) size.scale(maxSide, maxSide, Qt::KeepAspectRatio);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Theme::instance().colors().canvasBackground);  // the picture looks like the canvas
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        m_scene->renderDiagram(&painter, QRectF(QPointF(0, 0), QSizeF(size)), source);
    }
    return image.save(path, "PNG");
}

bool GraphEditorWidget::exportSvg(const QString& path) {
    const QRectF source = m_scene->diagramRect();
    if (source.isEmpty()) return false;
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(QString::fromStdString(m_document->project().name));
    svg.setDescription(tr("Model diagram exported by Kiln"));
    QPainter painter;
    if (!painter.begin(&svg)) return false;
    m_scene->renderDiagram(&painter, QRectF(QPointF(0, 0), source.size()), source);
    return painter.end();
}

void GraphEditorWidget::exportPngInteractive() {
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export Diagram as PNG"), QString(), tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)) path += QLatin1String(".png");
    if (exportPng(path))
        emit statusMessage(tr("Diagram saved to %1").arg(path));
    else
        QMessageBox::warning(this, tr("Export Diagram"), tr("Could not write %1.").arg(path));
}

void GraphEditorWidget::exportSvgInteractive() {
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export Diagram as SVG"), QString(), tr("SVG images (*.svg)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) path += QLatin1String(".svg");
    if (exportSvg(path))
        emit statusMessage(tr("Diagram saved to %1").arg(path));
    else
        QMessageBox::warning(this, tr("Export Diagram"), tr("Could not write %1.").arg(path));
}

}  // namespace kiln::ui
