// SPDX-License-Identifier: Apache-2.0
// The node-graph canvas with its small toolbar (zoom, fit, layout, align) and the editing
// actions the main window puts in its menus.
#pragma once

#include <QPointer>
#include <QWidget>

#include "ui/graph_editor/editor_document.h"

class QAction;
class QMenu;
class QLineEdit;
class QToolBar;
class QUndoStack;

namespace kiln::ui {

class GraphScene;
class GraphView;
class AnalysisRunner;
class UserLayerLibrary;
struct GraphAnalysis;

class GraphEditorWidget : public QWidget {
    Q_OBJECT
public:
    enum class Align { Left, HCenter, Right, Top, VCenter, Bottom };
    enum class StandardAction {
        Undo,
        Redo,
        Cut,
        Copy,
        Paste,
        Duplicate,
        Delete,
        SelectAll,
        Group,
        Ungroup,
        CollapseGroup,
        AddComment,
        AutoLayout,
        ZoomIn,
        ZoomOut,
        FitView,
        ExportPng,
        ExportSvg,
        MakeLayer,
        SaveLayerToLibrary,
        FindNode,
    };

    explicit GraphEditorWidget(EditorDocument* document, QWidget* parent = nullptr);
    ~GraphEditorWidget() override;

    EditorDocument* document() const { return m_document; }
    GraphScene* scene() const { return m_scene; }
    GraphView* view() const { return m_view; }
    AnalysisRunner* analysis() const { return m_analysis; }
    QToolBar* toolBar() const { return m_toolBar; }

    // Actions with shortcuts (Ctrl+X/C/V/D, Delete, Ctrl+A, Ctrl+G, Ctrl+Shift+G, Ctrl+L,
    // Ctrl+0 fit, Ctrl++/-); undo/redo come from the document's stack.
    QAction* action(StandardAction which) const;
    QList<QAction*> editActions() const;

    QVector<ItemId> selectedNodes() const;
    ItemId currentNode() const;  // the single selected node, 0 otherwise
    void selectNodes(const QVector<ItemId>& ids);

    bool exportPng(const QString& path, qreal scale = 2.0);
    bool exportSvg(const QString& path);
    void align(Align how);
    void fitView();
    // The opening view of a document (GraphView::showStart): readable text, the inputs on top.
    void showStart();
    void zoomBy(qreal factor);
    // Find (Ctrl+F, the toolbar's search field): selects the node whose name is `text` (any case),
    // else one whose name contains it, else one whose op is it, and centres the view on it at a
    // readable zoom. Pressing Enter again with the same text goes to the next match. False (and a
    // status message) when nothing matches.
    bool findNode(const QString& text);
    QLineEdit* findField() const { return m_find; }

    // The context menu of a node: freeze or unfreeze it, freeze everything up to it (transfer
    // learning), unfreeze all, and the edit actions. Owned by `parent`.
    QMenu* nodeMenu(ItemId node, QWidget* parent);

    // Adds an op (mime data from the palette) at the view's centre.
    void addOpAtCenter(const QString& op);
    // Adds an instance of a palette layer (a layerPayload()) at the view's centre.
    void addLayerAtCenter(const QByteArray& payload);

    // The user's layer library, which "Save Layer to Library" writes to (none: the action is off).
    void setUserLibrary(UserLayerLibrary* library);
    UserLayerLibrary* userLibrary() const;
    // "Make Layer…" on the selection: the dialog, then one undoable step. Returns the new
    // instance, 0 when cancelled or refused.
    ItemId makeLayerInteractive();
    // Writes the selected instance's project layer (and the project layers it uses) to the
    // user's library; the error says why not.
    engine::Status saveLayerToLibrary(ItemId instance);
    // Opens the inside of the instance's project layer (a double-click on its card does too);
    // false when the node is not an instance of a project layer (the status bar says why).
    bool openLayer(ItemId instance);
    // The canvas context menu for the current selection (the caller owns it).
    QMenu* createContextMenu(QWidget* parent);

signals:
    void selectionChanged();
    void currentNodeChanged(kiln::ui::ItemId id);
    // A short message for the status bar (why a connection was refused, export done, ...).
    void statusMessage(const QString& text);
    void analysisUpdated(const kiln::ui::GraphAnalysis& analysis);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void createActions();
    void updateActions();
    void exportPngInteractive();
    void exportSvgInteractive();

    QPointer<EditorDocument> m_document;
    GraphScene* m_scene = nullptr;
    GraphView* m_view = nullptr;
    AnalysisRunner* m_analysis = nullptr;
    QToolBar* m_toolBar = nullptr;
    QHash<int, QAction*> m_actions;
    QLineEdit* m_find = nullptr;
    QString m_lastFind;
    int m_findMatch = -1;  // index into the matches of m_lastFind
    QPointer<UserLayerLibrary> m_library;
};

}  // namespace kiln::ui
