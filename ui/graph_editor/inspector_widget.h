// SPDX-License-Identifier: Apache-2.0
// The inspector: a form generated from the selected node's op attributes (typed, validated by
// the engine, with defaults, reset and one-line docs), plus name, trainable, learning-rate
// multiplier and shared weights.
#pragma once

#include <QPointer>
#include <QWidget>

#include "ui/graph_editor/editor_document.h"

class QFormLayout;
class QLabel;
class QLineEdit;
class QCheckBox;
class QComboBox;

namespace kiln::ui {

class InspectorWidget : public QWidget {
    Q_OBJECT
public:
    explicit InspectorWidget(EditorDocument* document, QWidget* parent = nullptr);
    void setNode(ItemId id);  // 0 clears
    ItemId node() const { return m_node; }
    // The editor of an attribute (QLineEdit, QComboBox or QCheckBox), for tests and focus.
    QWidget* editorFor(const QString& attr) const;
    QLineEdit* nameEdit() const { return m_name; }
    QCheckBox* trainableBox() const { return m_trainable; }
    QLineEdit* lrMultiplierEdit() const { return m_lr; }
    QComboBox* shareWeightsBox() const { return m_share; }
    // The last refusal shown (empty when the last edit was accepted).
    QString lastError() const;

signals:
    void statusMessage(const QString& text);

private:
    void rebuild();
    void refreshValues();
    void commitText(const QString& attr, const QString& text);
    void showError(const QString& text);

    QPointer<EditorDocument> m_document;
    ItemId m_node = 0;
    QString m_op;
    QLabel* m_title = nullptr;
    QLabel* m_doc = nullptr;
    QLabel* m_error = nullptr;
    QLineEdit* m_name = nullptr;
    QCheckBox* m_trainable = nullptr;
    QLineEdit* m_lr = nullptr;
    QComboBox* m_share = nullptr;
    QWidget* m_form = nullptr;
    QFormLayout* m_attrLayout = nullptr;
    QHash<QString, QWidget*> m_editors;
    std::vector<engine::AttrSpec> m_specs;  // the attributes the form shows
    bool m_updating = false;
};

}  // namespace kiln::ui
