// SPDX-License-Identifier: Apache-2.0
// "Make layer": names a new composite layer made of the selected nodes, shows the inputs and
// the output the selection's crossing edges give it, and picks the node attributes it exposes.
#pragma once

#include <QDialog>
#include <QPointer>

#include "ui/graph_editor/editor_document.h"

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QTreeWidget;

namespace kiln::ui {

class MakeLayerDialog : public QDialog {
    Q_OBJECT
public:
    enum Column { AttributeColumn, ValueColumn, ExposeAsColumn };
    MakeLayerDialog(EditorDocument* document, QVector<ItemId> selection, QWidget* parent = nullptr);

    QLineEdit* nameEdit() const { return m_name; }
    QLineEdit* docEdit() const { return m_doc; }
    // One row per attribute of each selected node ("conv.filters"); checked rows are exposed
    // under the name in the third column.
    QTreeWidget* attributeList() const { return m_attributes; }
    QLabel* interfaceLabel() const { return m_interface; }
    QString errorText() const;
    QDialogButtonBox* buttons() const { return m_buttons; }
    // Checks (or unchecks) the row of node.attr and sets the name it is exposed as; false when
    // there is no such row.
    bool setExposed(const QString& node, const QString& attr, bool on, const QString& as = {});
    // The new instance node, after the dialog was accepted.
    ItemId instance() const { return m_instance; }

    // Makes the layer; on a refusal the reason shows in the dialog, which stays open.
    void accept() override;

private:
    void showError(const QString& text);

    QPointer<EditorDocument> m_document;
    QVector<ItemId> m_selection;
    QLineEdit* m_name = nullptr;
    QLineEdit* m_doc = nullptr;
    QLabel* m_interface = nullptr;
    QLabel* m_error = nullptr;
    QTreeWidget* m_attributes = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    ItemId m_instance = 0;
};

}  // namespace kiln::ui
