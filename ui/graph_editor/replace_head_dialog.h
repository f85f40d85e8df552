// SPDX-License-Identifier: Apache-2.0
// "Replace Head From Here…": asks for the classes and the dropout rate of the new head and applies
// it to the document as one undoable step; a refusal stays in the dialog, naming the node.
#pragma once

#include <QDialog>

#include "ui/graph_editor/editor_document.h"

class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace kiln::ui {

class ReplaceHeadDialog : public QDialog {
    Q_OBJECT
public:
    ReplaceHeadDialog(EditorDocument* document, ItemId node, QWidget* parent = nullptr);

    void accept() override;
    // The new nodes once accepted.
    QVector<ItemId> addedNodes() const { return m_added; }

private:
    EditorDocument* m_document;
    ItemId m_node;
    QSpinBox* m_classes = nullptr;
    QDoubleSpinBox* m_dropout = nullptr;
    QLabel* m_error = nullptr;
    QVector<ItemId> m_added;
};

}  // namespace kiln::ui
