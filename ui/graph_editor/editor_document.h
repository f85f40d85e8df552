// SPDX-License-Identifier: Apache-2.0
// The editor's document: the engine project plus node positions, groups and comments. It owns
// the undo stack; every user action is one QUndoCommand that calls the mutators below.
#pragma once

#include <QHash>
#include <QObject>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QVector>

#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/io/layers.h"
#include "engine/io/project.h"
#include "ui/graph_editor/graph_layout.h"

class QUndoStack;

namespace kiln::ui {

// Stable identity of a node, a group or a comment inside one document (names can change).
using ItemId = quint64;

struct EditorNode {
    ItemId id = 0;
    engine::Node node;  // name, op, inputs (producer names, in port order), attrs, flags
    QPointF pos;        // top-left corner in scene coordinates
};

// A block: a named set of nodes shown as one box when collapsed.
struct EditorGroup {
    ItemId id = 0;
    QString name;
    QVector<ItemId> nodes;
    bool collapsed = false;
    QPointF pos;  // where the collapsed box sits
};

struct EditorComment {
    ItemId id = 0;
    QRectF rect;
    QString text;
};

// Everything undoable, as one value (structural commands keep a before and an after copy).
struct DocumentContent {
    std::vector<EditorNode> nodes;     // file order
    std::vector<std::string> outputs;  // graph.outputs
    QVector<EditorGroup> groups;
    QVector<EditorComment> comments;
    std::vector<engine::io::LayerDef> layers;  // the project's own composite layers ("layers")
};

// One attribute of a selected node that a new layer exposes under the name `as` (several node
// attributes exposed under one name share one layer attribute).
struct ExposedAttribute {
    ItemId node = 0;
    std::string attr;
    std::string as;
};

// What "Make layer" turns a selection into: the producers outside the selection that feed it
// (the layer's inputs, in order) and the one selected node whose value leaves it.
struct SelectionInterface {
    std::vector<std::string> inputs;  // producer names outside the selection
    std::string output;               // a selected node's name
    std::vector<ItemId> nodes;        // the selected nodes, in file order
};

class EditorDocument : public QObject {
    Q_OBJECT
public:
    explicit EditorDocument(QObject* parent = nullptr);
    ~EditorDocument() override;

    // ---- files ----------------------------------------------------------------------------
    // Opens a project; nodes without a saved position are laid out automatically.
    engine::Status load(const QString& path);
    // Writes the project (with the layout) atomically and marks the document clean.
    engine::Status save(const QString& path);
    // An empty project with one Input node; clears the undo stack.
    void newDocument();
    QString filePath() const { return m_filePath; }
    bool isModified() const;
    // The engine project built from the document (graph + data + training + layout + unknown
    // fields): a value copy, safe to hand to another thread.
    engine::io::Project project() const;
    // Replaces the whole document (templates, crash recovery). Clears the undo stack; the
    // document counts as modified unless `clean`.
    void setProject(const engine::io::Project& project, bool clean = false);
    // Autosave: the project text with its layout, and back (path: for relative data paths).
    QByteArray toJson() const;
    engine::Status fromJson(const QByteArray& json, const QString& path = {});

    QUndoStack* undoStack() const { return m_undo; }

    // ---- reading -------------------------------------------------------------------------
    const DocumentContent& content() const { return m_content; }
    const std::vector<EditorNode>& nodes() const { return m_content.nodes; }
    const EditorNode* node(ItemId id) const;
    const EditorNode* nodeByName(const std::string& name) const;
    ItemId idOf(const std::string& name) const;
    const EditorGroup* group(ItemId id) const;
    const EditorComment* comment(ItemId id) const;
    // The group a node belongs to, 0 if none.
    ItemId groupOf(ItemId node) const;
    // "conv2d", "conv2d_1", ... not used by any node (nor by `reserved`).
    std::string uniqueName(const std::string& base, const std::vector<std::string>& reserved = {}) const;
    static std::string baseNameForOp(const std::string& op);
    // A new node of op `op` with attribute values that make it valid on its own where the op
    // has required attributes (Input gets [28, 28, 1], Dense 64 units, ...).
    engine::Node makeNode(const std::string& op, const std::string& name = {}) const;
    ItemId allocateId() { return ++m_nextId; }

    // ---- composite layers ------------------------------------------------------------------
    // The layer an op names: a project layer, else a bundled one; null for built-in ops.
    const engine::io::LayerDef* findLayer(const std::string& op) const;
    // The bundled layers plus the project's (what the engine expands the graph with).
    engine::io::LayerLibrary layerLibrary() const;
    // The attributes a node of `op` has: the op table's, or a layer's exposed attributes.
    std::vector<engine::AttrSpec> attributeSpecs(const std::string& op) const;
    // One line about an op or a layer; empty when `op` is neither.
    QString opDoc(const std::string& op) const;
    // The same for one node: a Plugin node's come from its plugin operation's schema (only
    // "plugin_op" while its plugin is not loaded).
    std::vector<engine::AttrSpec> attributeSpecs(const engine::Node& node) const;
    QString opDoc(const engine::Node& node) const;
    // Whether `name` may name a new layer: an identifier, not an op, not a layer already.
    engine::Status checkLayerName(const std::string& name) const;
    // The inputs and the output a selection would have as a layer, or why it cannot be one.
    engine::Result<SelectionInterface> selectionInterface(const QVector<ItemId>& nodes) const;
    // The inside of project layer `name` as a project to edit on its own: the layer's nodes
    // with one Input node per input port (shaped as `portShapes`, without the batch; [1] where
    // unknown) and the exposed attributes at their defaults.
    engine::Result<engine::io::Project> layerInside(const std::string& name,
                                                    const std::vector<std::vector<int64_t>>& portShapes = {}) const;
    // A project layer and the project layers it uses, itself first (what the library saves).
    std::vector<engine::io::LayerDef> layerWithDependencies(const std::string& name) const;


    // ---- edits (undoable: each pushes one command) -----------------------------------------
    ItemId addNode(const std::string& op, QPointF pos);
    // Producer `from` feeds input `port` of `to` (port == inputs().size() appends). Refused
    // (nothing pushed) with the reason when the engine's rules forbid it.
    engine::Status connectNodes(ItemId from, ItemId to, int port);
    void disconnect(ItemId to, int port);
    void removeItems(const QVector<ItemId>& nodes, const QVector<ItemId>& comments = {},
                     const QVector<ItemId>& groups = {});
    // One drag = one command; consecutive drags of the same nodes merge.
    void moveNodes(const QHash<ItemId, QPointF>& newPositions, bool mergeable = true);
    void alignNodes(const QHash<ItemId, QPointF>& newPositions);
    engine::Status setAttribute(ItemId node, const std::string& attr, const engine::AttrValue& value);
    void resetAttribute(ItemId node, const std::string& attr);
    engine::Status renameNode(ItemId node, const std::string& newName);
    void setTrainable(ItemId node, bool trainable);
    engine::Status setLrMultiplier(ItemId node, double multiplier);
    // Transfer learning: `node` and every node upstream of it are frozen, every other node is
    // trainable (one command; nothing pushed when nothing changes). Returns the nodes frozen.
    int freezeUpTo(ItemId node);
    void unfreezeAll();
    // Transfer learning: removes every node downstream of `node` and attaches a new head
    // (GlobalAveragePooling2D when the node gives a feature map, Dropout(dropout) when dropout > 0,
    // Dense(classes, softmax)) under it. One undo step; refused (nothing pushed) with the reason,
    // naming the node. Returns the new nodes.
    engine::Result<QVector<ItemId>> replaceHead(ItemId node, int64_t classes, double dropout);
    // Learning-rate multipliers by node name, one command; names the graph lacks are skipped.
    void setLrMultipliers(const QHash<QString, double>& multipliers);
    engine::Status setShareWeightsWith(ItemId node, const std::string& owner);
    ItemId groupNodes(const QVector<ItemId>& nodes, const QString& name = {});
    // The project's "data" and "training" sections as the dataset browser and the training view
    // edit them: one undoable command (consecutive edits of the same section merge); nothing
    // is pushed when both are unchanged.
    void setSections(const nlohmann::json& data, const nlohmann::json& training);
    void ungroup(ItemId group);
    void setGroupCollapsed(ItemId group, bool collapsed);
    ItemId addComment(const QRectF& rect, const QString& text);
    void editComment(ItemId comment, const QString& text);
    void autoLayout();
    // An instance of layer `layer` at pos with the layer's attributes at their defaults.
    // `definitions` (a library layer and the layers it uses) are copied into the project
    // first where the project has none of that name; one of the same name that differs is
    // refused. One undo step.
    engine::Result<ItemId> addLayerNode(const std::string& layer, QPointF pos,
                                        const std::vector<engine::io::LayerDef>& definitions = {});
    // Replaces the definition of project layer `name` by `inside` (a layerInside() project,
    // edited): its ports and outputs must still be there; an exposed attribute stays exposed and
    // a value given to it inside becomes the layer attribute's default. Every instance follows.
    // One undo step; refused (nothing pushed) with the reason.
    engine::Status applyLayerInside(const std::string& name, const engine::io::Project& inside);
    // Replaces the selected nodes by one instance of a new project layer `name` made of them;
    // `expose` picks the node attributes that become layer attributes. One undo step; refused
    // (nothing pushed) with the reason when the selection or the name does not fit.
    engine::Result<ItemId> makeLayer(const QVector<ItemId>& nodes, const std::string& name,
                                     const std::vector<ExposedAttribute>& expose, const std::string& doc = {});
    // Copy/paste: nodes (with their mutual connections and the project layers they use) as
    // JSON; paste renames clashes, keeps inputs whose producer exists in this document and adds
    // the layer definitions this project lacks. Returns the new node ids.
    QByteArray copyNodes(const QVector<ItemId>& nodes) const;
    QVector<ItemId> pasteNodes(const QByteArray& data, QPointF offset);
    QVector<ItemId> duplicateNodes(const QVector<ItemId>& nodes);

    // ---- raw mutators: used only by the commands -------------------------------------------
    void applyContent(const DocumentContent& content);
    void applyPositions(const QHash<ItemId, QPointF>& positions);
    void applyNode(ItemId id, const engine::Node& node);  // attrs/name/flags; renames update references
    void applyGroupCollapsed(ItemId group, bool collapsed, QPointF pos);
    void applyCommentText(ItemId comment, const QString& text);
    void applySections(const nlohmann::json& data, const nlohmann::json& training);

    // Layered positions for every node (pure; does not change the document).
    QHash<ItemId, QPointF> computeLayout() const;
    // The size of a node card on the canvas, which the automatic layout spaces nodes by
    // (the canvas sets it from its fonts; 176 x 68 until then).
    void setCardSize(QSizeF size) { m_layout.nodeSize = size; }
    QSizeF cardSize() const { return m_layout.nodeSize; }

signals:
    void modifiedChanged(bool modified);
    void filePathChanged(const QString& path);
    // Anything changed (the graph, a position, a group, a comment).
    void changed();
    // Nodes/edges/groups/comments were added or removed, or the whole document was replaced.
    void structureChanged();
    // A node's name, attributes or flags changed (edges may have changed too on rename).
    void nodeChanged(kiln::ui::ItemId id);
    void positionsChanged(const QVector<kiln::ui::ItemId>& ids);
    void groupChanged(kiln::ui::ItemId id);
    void commentChanged(kiln::ui::ItemId id);
    // The data or training section changed (an edit, its undo or redo).
    void sectionsChanged();
    // The project's layer definitions changed (an edit, its undo or redo, a new document).
    void layersChanged();

private:
    void reindex();
    void loadFrom(engine::io::Project project, bool clean);
    QHash<ItemId, QPointF> currentPositions(const QVector<ItemId>& ids) const;
    engine::Status pushNodeEdit(int kind, const QString& text, ItemId id, engine::Node after,
                                const QString& mergeKey);

    QUndoStack* m_undo = nullptr;
    DocumentContent m_content;
    QHash<ItemId, int> m_index;  // node id -> position in m_content.nodes
    engine::io::Project m_base;  // data, training, unknown fields, name (graph/layout unused)
    QString m_filePath;
    ItemId m_nextId = 0;
    LayoutOptions m_layout;
    bool m_forcedModified = false;  // set by setProject(..., clean = false) until saved
};

}  // namespace kiln::ui
