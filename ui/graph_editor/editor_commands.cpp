// SPDX-License-Identifier: Apache-2.0
// Undo commands: each applies its change through the document's raw mutators.
#include "ui/graph_editor/editor_commands.h"

namespace kiln::ui {

ContentCommand::ContentCommand(EditorDocument* doc, const QString& text, DocumentContent before,
                               DocumentContent after)
    : QUndoCommand(text), m_doc(doc), m_before(std::move(before)), m_after(std::move(after)) {}

void ContentCommand::undo() {
    m_doc->applyContent(m_before);
}
void ContentCommand::redo() {
    m_doc->applyContent(m_after);
}

MoveCommand::MoveCommand(EditorDocument* doc, const QString& text, QHash<ItemId, QPointF> before,
                         QHash<ItemId, QPointF> after, bool mergeable)
    : QUndoCommand(text),
      m_doc(doc),
      m_before(std::move(before)),
      m_after(std::move(after)),
      m_mergeable(mergeable) {}

bool MoveCommand::mergeWith(const QUndoCommand* other) {
    auto* o = dynamic_cast<const MoveCommand*>(other);
    if (!o || !o->m_mergeable || o->m_after.size() != m_after.size()) return false;
    for (auto it = o->m_after.begin(); it != o->m_after.end(); ++it)
        if (!m_after.contains(it.key())) return false;
    m_after = o->m_after;
    return true;
}

void MoveCommand::undo() {
    m_doc->applyPositions(m_before);
}
void MoveCommand::redo() {
    m_doc->applyPositions(m_after);
}

NodeEditCommand::NodeEditCommand(EditorDocument* doc, const QString& text, ItemId node, engine::Node before,
                                 engine::Node after, QString mergeKey)
    : QUndoCommand(text),
      m_doc(doc),
      m_node(node),
      m_before(std::move(before)),
      m_after(std::move(after)),
      m_mergeKey(std::move(mergeKey)) {}

bool NodeEditCommand::mergeWith(const QUndoCommand* other) {
    auto* o = dynamic_cast<const NodeEditCommand*>(other);
    if (!o || o->m_node != m_node || o->m_mergeKey != m_mergeKey) return false;
    m_after = o->m_after;
    return true;
}

void NodeEditCommand::undo() {
    m_doc->applyNode(m_node, m_before);
}
void NodeEditCommand::redo() {
    m_doc->applyNode(m_node, m_after);
}

GroupStateCommand::GroupStateCommand(EditorDocument* doc, const QString& text, ItemId group,
                                     bool beforeCollapsed, QPointF beforePos, bool afterCollapsed,
                                     QPointF afterPos)
    : QUndoCommand(text),
      m_doc(doc),
      m_group(group),
      m_beforeCollapsed(beforeCollapsed),
      m_afterCollapsed(afterCollapsed),
      m_beforePos(beforePos),
      m_afterPos(afterPos) {}

void GroupStateCommand::undo() {
    m_doc->applyGroupCollapsed(m_group, m_beforeCollapsed, m_beforePos);
}
void GroupStateCommand::redo() {
    m_doc->applyGroupCollapsed(m_group, m_afterCollapsed, m_afterPos);
}

CommentTextCommand::CommentTextCommand(EditorDocument* doc, ItemId comment, QString before, QString after)
    : QUndoCommand(EditorDocument::tr("Edit comment")),
      m_doc(doc),
      m_comment(comment),
      m_before(std::move(before)),
      m_after(std::move(after)) {}

bool CommentTextCommand::mergeWith(const QUndoCommand* other) {
    auto* o = dynamic_cast<const CommentTextCommand*>(other);
    if (!o || o->m_comment != m_comment) return false;
    m_after = o->m_after;
    return true;
}

void CommentTextCommand::undo() {
    m_doc->applyCommentText(m_comment, m_before);
}
void CommentTextCommand::redo() {
    m_doc->applyCommentText(m_comment, m_after);
}

SectionsCommand::SectionsCommand(EditorDocument* doc, const QString& text, nlohmann::json dataBefore,
                                 nlohmann::json trainingBefore, nlohmann::json dataAfter, nlohmann::json trainingAfter)
    : QUndoCommand(text),
      m_doc(doc),
      m_dataBefore(std::move(dataBefore)),
      m_trainingBefore(std::move(trainingBefore)),
      m_dataAfter(std::move(dataAfter)),
      m_trainingAfter(std::move(trainingAfter)) {}

bool SectionsCommand::mergeWith(const QUndoCommand* other) {
    auto* o = dynamic_cast<const SectionsCommand*>(other);
    if (!o || o->dataEdit() != dataEdit()) return false;
    m_dataAfter = o->m_dataAfter;
    m_trainingAfter = o->m_trainingAfter;
    return true;
}

void SectionsCommand::undo() {
    m_doc->applySections(m_dataBefore, m_trainingBefore);
}
void SectionsCommand::redo() {
    m_doc->applySections(m_dataAfter, m_trainingAfter);
}

}  // namespace kiln::ui
