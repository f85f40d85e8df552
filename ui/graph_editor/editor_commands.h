// SPDX-License-Identifier: Apache-2.0
// The undo commands of the editor, one class per user action. Structural edits keep the
// document content before and after; moves and value edits keep only what they change and
// merge with the previous command of the same kind (one drag, one run of edits to a field).
#pragma once

#include <QHash>
#include <QUndoCommand>

#include "ui/graph_editor/editor_document.h"

namespace kiln::ui {

enum CommandId { MoveCommandId = 1, NodeEditCommandId, GroupStateCommandId, CommentTextCommandId, SectionsCommandId };

// Replaces the document content (nodes, edges, groups, comments) and restores it on undo.
class ContentCommand : public QUndoCommand {
public:
    ContentCommand(EditorDocument* doc, const QString& text, DocumentContent before, DocumentContent after);
    void undo() override;
    void redo() override;

private:
    EditorDocument* m_doc;
    DocumentContent m_before, m_after;
};

class AddNodesCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class RemoveItemsCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class ConnectCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class DisconnectCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class PasteCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class GroupCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class UngroupCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
class AddCommentCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
// A selection replaced by an instance of a new layer (the definition is part of the content).
class MakeLayerCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
// A project layer's inside replaced (every instance follows).
class EditLayerCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
// Freezes or unfreezes many nodes at once (freeze up to a node, unfreeze all).
class FreezeNodesCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
// Transfer learning: everything after a node replaced by a new classification head.
class ReplaceHeadCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};
// Learning-rate multipliers of many nodes (the discriminative learning-rate preset).
class LrMultipliersCommand : public ContentCommand {
    using ContentCommand::ContentCommand;
};

// Positions of nodes, comments and collapsed groups (ids share one space).
class MoveCommand : public QUndoCommand {
public:
    MoveCommand(EditorDocument* doc, const QString& text, QHash<ItemId, QPointF> before,
                QHash<ItemId, QPointF> after, bool mergeable);
    int id() const override { return m_mergeable ? MoveCommandId : -1; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

private:
    EditorDocument* m_doc;
    QHash<ItemId, QPointF> m_before, m_after;
    bool m_mergeable;
};

class AutoLayoutCommand : public MoveCommand {
    using MoveCommand::MoveCommand;
};
class AlignCommand : public MoveCommand {
    using MoveCommand::MoveCommand;
};

// One node's name, attributes or flags. Edits with the same key (node + field) merge.
class NodeEditCommand : public QUndoCommand {
public:
    NodeEditCommand(EditorDocument* doc, const QString& text, ItemId node, engine::Node before,
                    engine::Node after, QString mergeKey);
    int id() const override { return m_mergeKey.isEmpty() ? -1 : NodeEditCommandId; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

private:
    EditorDocument* m_doc;
    ItemId m_node;
    engine::Node m_before, m_after;
    QString m_mergeKey;
};

class SetAttributeCommand : public NodeEditCommand {
    using NodeEditCommand::NodeEditCommand;
};
class RenameNodeCommand : public NodeEditCommand {
    using NodeEditCommand::NodeEditCommand;
};
class SetNodeFlagsCommand : public NodeEditCommand {
    using NodeEditCommand::NodeEditCommand;
};

// Collapse or expand a group (and where its box sits).
class GroupStateCommand : public QUndoCommand {
public:
    GroupStateCommand(EditorDocument* doc, const QString& text, ItemId group, bool beforeCollapsed,
                      QPointF beforePos, bool afterCollapsed, QPointF afterPos);
    void undo() override;
    void redo() override;

private:
    EditorDocument* m_doc;
    ItemId m_group;
    bool m_beforeCollapsed, m_afterCollapsed;
    QPointF m_beforePos, m_afterPos;
};

class CommentTextCommand : public QUndoCommand {
public:
    CommentTextCommand(EditorDocument* doc, ItemId comment, QString before, QString after);
    int id() const override { return CommentTextCommandId; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

private:
    EditorDocument* m_doc;
    ItemId m_comment;
    QString m_before, m_after;
};

// The data and training sections before and after; consecutive edits of the same section merge
// (a run of changes in one settings form is one step).
class SectionsCommand : public QUndoCommand {
public:
    SectionsCommand(EditorDocument* doc, const QString& text, nlohmann::json dataBefore, nlohmann::json trainingBefore,
                    nlohmann::json dataAfter, nlohmann::json trainingAfter);
    int id() const override { return SectionsCommandId; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

private:
    bool dataEdit() const { return m_dataBefore != m_dataAfter; }
    EditorDocument* m_doc;
    nlohmann::json m_dataBefore, m_trainingBefore, m_dataAfter, m_trainingAfter;
};

}  // namespace kiln::ui
