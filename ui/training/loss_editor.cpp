// SPDX-License-Identifier: Apache-2.0
// LossEditor: loss terms <-> the "loss" JSON of the training configuration.
#include "ui/training/loss_editor.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

#include "engine/ops/op_table.h"
#include "engine/ops/plugin_ops.h"
#include "engine/api/plugins.h"
#include "ui/training/attribute_form.h"

namespace kiln::ui::training {

using nlohmann::json;
namespace ops = engine::ops;

namespace {

// Fields of a term that are not attributes of its loss.
bool isTermField(const std::string& key) {
    return key == "type" || key == "output" || key == "target" || key == "weight" || key == "name";
}

json termObject(const json& term) {
    if (term.is_string()) return json{{"type", term.get<std::string>()}};
    if (term.is_object()) return term;
    return json{{"type", "MeanSquaredError"}};
}

}  // namespace

LossEditor::LossEditor(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("lossTable"));
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setMinimumHeight(100);
    layout->addWidget(m_table);
    auto* buttons = new QHBoxLayout;
    m_add = new QPushButton(this);
    m_add->setObjectName(QStringLiteral("addLossTerm"));
    m_remove = new QPushButton(this);
    m_remove->setObjectName(QStringLiteral("removeLossTerm"));
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addStretch();
    layout->addLayout(buttons);
    m_attrTitle = new QLabel(this);
    layout->addWidget(m_attrTitle);
    m_attrHost = new QWidget(this);
    m_attrHost->setObjectName(QStringLiteral("lossAttributes"));
    m_attrForm = new QFormLayout(m_attrHost);
    m_attrForm->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_attrHost);
    retranslate();

    connect(m_add, &QPushButton::clicked, this, &LossEditor::addTerm);
    connect(m_remove, &QPushButton::clicked, this, [this] { removeTerm(m_table->currentRow()); });
    connect(m_table, &QTableWidget::currentCellChanged, this, [this] { showAttributes(); });
    connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (!m_loading && item) onRowEdited(item->row());
    });
}

void LossEditor::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

void LossEditor::retranslate() {
    m_table->setHorizontalHeaderLabels({tr("Loss"), tr("Output"), tr("Weight"), tr("Target column"), tr("Name")});
    m_table->horizontalHeaderItem(NameColumn)
        ->setToolTip(tr("The term's name in the logs and charts (loss_<name>); empty: made from the output and the "
                        "loss"));
    m_table->setToolTip(
        tr("Each row is one loss term; the training minimises the sum of the terms times their "
           "weights. An output may have several terms."));
    m_add->setText(tr("Add loss term"));
    m_remove->setText(tr("Remove loss term"));
    showAttributes();
}

QStringList LossEditor::lossTypes() {
    QStringList out;
    for (const auto& row : ops::opTable()) {
        if (ops::isLoss(row.kind))
            out << QString::fromUtf8(row.name.data(), static_cast<qsizetype>(row.name.size()));
    }
    for (const auto& loss : engine::api::pluginLosses()) {
        out << QString::fromStdString(std::string(ops::kPluginPrefix) + loss.name);
    }
    return out;
}

std::vector<engine::AttrSpec> LossEditor::attributesOf(const std::string& type) {
    if (type.starts_with(ops::kPluginPrefix)) {
        const auto loss = engine::api::findPluginLoss(ops::pluginTypeName(type));
        return loss ? loss->attrs : std::vector<engine::AttrSpec>{};
    }
    const auto* def = ops::findOp(type);
    return def && ops::isLoss(def->kind) ? def->attrs : std::vector<engine::AttrSpec>{};
}

QStringList LossEditor::outputs() const {
    QStringList out;
    for (const auto& o : m_graph.outputs) out << QString::fromStdString(o);
    if (out.isEmpty()) {
        const auto users = m_graph.consumers();
        for (size_t i = 0; i < users.size(); ++i) {
            if (users[i].empty()) out << QString::fromStdString(m_graph.nodes[i].name);
        }
    }
    return out;
}

void LossEditor::setGraph(const engine::Graph& graph) {
    m_graph = graph;
    m_loading = true;
    for (int row = 0; row < m_table->rowCount(); ++row) fillOutputCombo(row);
    m_loading = false;
}

void LossEditor::setLoss(const json& loss) {
    m_loading = true;
    m_terms.clear();
    m_table->setRowCount(0);
    if (loss.is_array()) {
        for (const auto& t : loss) addRow(termObject(t));
    } else if (!loss.is_null()) {
        addRow(termObject(loss));
    }
    m_loading = false;
    if (m_table->rowCount() > 0) m_table->setCurrentCell(0, TypeColumn);
    showAttributes();
}

void LossEditor::refreshChoices() {
    m_loading = true;
    for (int row = 0; row < m_table->rowCount(); ++row) fillTypeCombo(row);
    m_loading = false;
    showAttributes();
}

void LossEditor::fillTypeCombo(int row) {
    auto* combo = qobject_cast<QComboBox*>(m_table->cellWidget(row, TypeColumn));
    const QSignalBlocker block(combo);
    const QString type =
        QString::fromStdString(m_terms[static_cast<size_t>(row)].value("type", std::string()));
    combo->clear();
    for (const QString& t : lossTypes())
        combo->addItem(t.startsWith(QLatin1String("plugin:")) ? tr("%1 (plugin)").arg(t.mid(7)) : t, t);
    if (combo->findData(type) < 0) {
        // A loss no loaded plugin provides stays as written (the form shows the engine's error).
        combo->addItem(tr("%1 (not loaded)").arg(type), type);
    }
    combo->setCurrentIndex(combo->findData(type));
}

void LossEditor::fillOutputCombo(int row) {
    auto* combo = qobject_cast<QComboBox*>(m_table->cellWidget(row, OutputColumn));
    const QSignalBlocker block(combo);
    const json& term = m_terms[static_cast<size_t>(row)];
    const QStringList outs = outputs();
    combo->clear();
    for (const QString& o : outs) combo->addItem(o, o);
    const QString output = QString::fromStdString(term.value("output", std::string()));
    if (!output.isEmpty() && combo->findData(output) < 0) combo->addItem(output, output);
    combo->setCurrentIndex(output.isEmpty() ? 0 : combo->findData(output));
}

void LossEditor::addRow(const json& term) {
    const int row = m_table->rowCount();
    m_terms.push_back(term);
    m_table->insertRow(row);
    auto* type = new QComboBox(m_table);
    type->setObjectName(QStringLiteral("lossType"));
    m_table->setCellWidget(row, TypeColumn, type);
    fillTypeCombo(row);
    auto* output = new QComboBox(m_table);
    output->setObjectName(QStringLiteral("lossOutput"));
    m_table->setCellWidget(row, OutputColumn, output);
    fillOutputCombo(row);
    auto* weight = new QDoubleSpinBox(m_table);
    weight->setObjectName(QStringLiteral("lossWeight"));
    weight->setRange(0, 1e6);
    weight->setDecimals(4);
    weight->setSingleStep(0.1);
    weight->setKeyboardTracking(false);
    weight->setValue(term.value("weight", 1.0));
    m_table->setCellWidget(row, WeightColumn, weight);
    m_table->setItem(
        row, TargetColumn,
        new QTableWidgetItem(QString::fromStdString(term.value("target", std::string("label")))));
    const json name = term.contains("name") ? term["name"] : json();
    m_table->setItem(row, NameColumn, new QTableWidgetItem(QString::fromStdString(name.is_string() ? name.get<std::string>() : std::string())));
    // Cell widgets find their row when they change (rows move when one above is removed).
    auto rowOf = [this](QWidget* w) {
        for (int r = 0; r < m_table->rowCount(); ++r)
            for (int c = 0; c < ColumnCount; ++c)
                if (m_table->cellWidget(r, c) == w) return r;
        return -1;
    };
    connect(type, qOverload<int>(&QComboBox::currentIndexChanged), this, [this, type, rowOf] {
        const int r = rowOf(type);
        if (r < 0 || m_loading) return;
        json& t = m_terms[static_cast<size_t>(r)];
        t["type"] = type->currentData().toString().toStdString();
        // Attributes of the old loss do not apply to the new one.
        for (auto it = t.begin(); it != t.end();) {
            if (!isTermField(it.key()))
                it = t.erase(it);
            else
                ++it;
        }
        m_table->setCurrentCell(r, TypeColumn);
        showAttributes();
        onRowEdited(r);
    });
    connect(output, qOverload<int>(&QComboBox::currentIndexChanged), this, [this, output, rowOf] {
        const int r = rowOf(output);
        if (r >= 0 && !m_loading) onRowEdited(r);
    });
    connect(weight, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this, weight, rowOf] {
        const int r = rowOf(weight);
        if (r >= 0 && !m_loading) onRowEdited(r);
    });
}

void LossEditor::addTerm() {
    // A new term on the first output, of the type of the last term (a second weighted term of
    // the same output is the usual reason to add one).
    json term = json{{"type", m_terms.empty() ? std::string("MeanSquaredError")
                                              : m_terms.back().value("type", std::string())}};
    const QStringList outs = outputs();
    if (outs.size() > 1) term["output"] = outs.first().toStdString();
    m_loading = true;
    addRow(term);
    m_loading = false;
    m_table->setCurrentCell(m_table->rowCount() - 1, TypeColumn);
    showAttributes();
    emit edited();
}

void LossEditor::removeTerm(int row) {
    if (row < 0 || row >= m_table->rowCount() || m_table->rowCount() <= 1) return;  // a config needs a loss
    m_loading = true;
    m_table->removeRow(row);
    m_terms.erase(m_terms.begin() + row);
    m_loading = false;
    m_table->setCurrentCell(std::min(row, m_table->rowCount() - 1), TypeColumn);
    showAttributes();
    emit edited();
}

void LossEditor::onRowEdited(int row) {
    if (row < 0 || row >= static_cast<int>(m_terms.size())) return;
    json& t = m_terms[static_cast<size_t>(row)];
    const auto* output = qobject_cast<QComboBox*>(m_table->cellWidget(row, OutputColumn));
    const std::string out = output->currentData().toString().toStdString();
    // The output is written when the model has several or the term named one already.
    if (outputs().size() > 1 || t.contains("output")) t["output"] = out;
    const double weight = qobject_cast<QDoubleSpinBox*>(m_table->cellWidget(row, WeightColumn))->value();
    if (weight != 1.0 || t.contains("weight")) t["weight"] = weight;
    const std::string target = m_table->item(row, TargetColumn)
                                   ? m_table->item(row, TargetColumn)->text().trimmed().toStdString()
                                   : std::string();
    if (target.empty() || (target == "label" && !t.contains("target")))
        t.erase("target");
    else
        t["target"] = target;
    // An empty name lets the engine name the term; the engine checks a typed one.
    const std::string name =
        m_table->item(row, NameColumn) ? m_table->item(row, NameColumn)->text().trimmed().toStdString() : std::string();
    if (name.empty())
        t.erase("name");
    else
        t["name"] = name;
    emit edited();
}

json LossEditor::loss() const {
    if (m_terms.empty()) return json();
    if (m_terms.size() == 1) {
        const json& t = m_terms.front();
        if (t.size() == 1 && t.contains("type")) return t["type"];
        return t;
    }
    return json(m_terms);
}

void LossEditor::setAttribute(int row, const engine::AttrSpec& spec, const json& value) {
    if (row < 0 || row >= static_cast<int>(m_terms.size())) return;
    setAttributeJson(m_terms[static_cast<size_t>(row)], spec, value);
    emit edited();
}

void LossEditor::showAttributes() {
    const int row = m_table->currentRow();
    if (row < 0 || row >= static_cast<int>(m_terms.size())) {
        fillAttributeForm(m_attrForm, m_attrHost, {}, json::object(), QString(), {});
        m_attrTitle->setText(QString());
        m_attrTitle->hide();
        return;
    }
    const json& term = m_terms[static_cast<size_t>(row)];
    const std::string type = term.value("type", std::string());
    const auto specs = attributesOf(type);
    m_attrTitle->setVisible(true);
    m_attrTitle->setText(specs.empty() ? tr("%1 has no settings.").arg(QString::fromStdString(type))
                                       : tr("Settings of %1:").arg(QString::fromStdString(type)));
    fillAttributeForm(m_attrForm, m_attrHost, specs, term, QStringLiteral("lossAttr_"),
                      [this, row](const engine::AttrSpec& spec, const json& value) { setAttribute(row, spec, value); });
}

}  // namespace kiln::ui::training
