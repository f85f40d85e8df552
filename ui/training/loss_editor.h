// SPDX-License-Identifier: Apache-2.0
// The loss part of the training configuration: one row per loss term (type, output, weight,
// target column, name), built-in and plugin losses alike, and a form of the selected term's
// attributes generated from the loss's schema (from_logits, gamma, alpha, delta...). Edits come
// out as the "loss" JSON value; settings the editor does not show are kept.
#pragma once

#include <nlohmann/json.hpp>

#include <QWidget>

#include "engine/graph/attr.h"
#include "engine/graph/graph.h"

class QFormLayout;
class QLabel;
class QPushButton;
class QTableWidget;

namespace kiln::ui::training {

class LossEditor : public QWidget {
    Q_OBJECT
public:
    enum Column { TypeColumn, OutputColumn, WeightColumn, TargetColumn, NameColumn, ColumnCount };

    explicit LossEditor(QWidget* parent = nullptr);

    // The model: its outputs are the output column's choices.
    void setGraph(const engine::Graph& graph);
    // Shows a "loss" value (a name, an object or a list of them; null: none). Emits nothing.
    void setLoss(const nlohmann::json& loss);
    // The terms as edited: a name when one term has only a type, an object for one term with
    // settings, a list for several; null when there is none.
    nlohmann::json loss() const;
    // Lists the losses of the plugins loaded now (after a plugin was loaded).
    void refreshChoices();

    // The loss types offered: the built-in losses, then "plugin:<name>" of each loaded plugin loss.
    static QStringList lossTypes();
    // The attribute schema of a loss type (empty for an unknown type).
    static std::vector<engine::AttrSpec> attributesOf(const std::string& type);

    QTableWidget* table() const { return m_table; }
    QPushButton* addButton() const { return m_add; }
    QPushButton* removeButton() const { return m_remove; }
    // The attribute form of the selected term: one widget per attribute, named "lossAttr_<name>".
    QWidget* attributeForm() const { return m_attrHost; }

    void addTerm();
    void removeTerm(int row);

signals:
    void edited();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void addRow(const nlohmann::json& term);
    void fillTypeCombo(int row);
    void fillOutputCombo(int row);
    void onRowEdited(int row);
    void showAttributes();
    void setAttribute(int row, const engine::AttrSpec& spec, const nlohmann::json& value);
    QStringList outputs() const;

    engine::Graph m_graph;
    std::vector<nlohmann::json> m_terms;  // per row: the term's JSON object, kept fields included
    bool m_loading = false;
    QTableWidget* m_table = nullptr;
    QPushButton* m_add = nullptr;
    QPushButton* m_remove = nullptr;
    QLabel* m_attrTitle = nullptr;
    QWidget* m_attrHost = nullptr;
    QFormLayout* m_attrForm = nullptr;
};

}  // namespace kiln::ui::training
