// SPDX-License-Identifier: Apache-2.0
// Inspector form generated from the op table's attribute specs; every edit goes through the
// document, which validates it with the engine and refuses invalid values with the reason.
#include "ui/graph_editor/inspector_widget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QToolButton>
#include <QVBoxLayout>

#include "engine/ops/op_table.h"
#include "engine/ops/plugin_ops.h"
#include "ui/common/plugin_notifier.h"
#include "ui/common/theme.h"

namespace kiln::ui {
namespace {

QString valueText(const engine::AttrValue& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return QString::fromStdString(*s);
    if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) {
        QStringList parts;
        for (int64_t x : *l) parts << QString::number(x);
        return parts.join(QStringLiteral(", "));
    }
    return QString::fromStdString(engine::attrValueToString(v));
}

const engine::AttrSpec* findSpec(const std::vector<engine::AttrSpec>& specs, const QString& name) {
    for (const auto& s : specs)
        if (QString::fromStdString(s.name) == name) return &s;
    return nullptr;
}

}  // namespace

InspectorWidget::InspectorWidget(EditorDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document) {
    auto* outer = new QVBoxLayout(this);
    m_title = new QLabel(this);
    QFont tf = m_title->font();
    tf.setBold(true);
    m_title->setFont(tf);
    m_doc = new QLabel(this);
    m_doc->setWordWrap(true);
    m_error = new QLabel(this);
    m_error->setWordWrap(true);
    Theme::markAsError(m_error);
    m_error->hide();
    outer->addWidget(m_title);
    outer->addWidget(m_doc);

    auto* common = new QFormLayout;
    m_name = new QLineEdit(this);
    m_name->setToolTip(tr("Unique node name; parameters are saved as name/kernel, name/bias, …"));
    common->addRow(tr("Name"), m_name);
    m_trainable = new QCheckBox(tr("Trainable"), this);
    m_trainable->setToolTip(tr("Unchecked: the node's parameters are frozen (no gradient, no update)."));
    common->addRow(QString(), m_trainable);
    m_lr = new QLineEdit(this);
    m_lr->setToolTip(tr("Scales the learning rate for this node's parameters (1 = unchanged)."));
    common->addRow(tr("LR multiplier"), m_lr);
    m_share = new QComboBox(this);
    m_share->setToolTip(tr("Use another node's parameters (same op and parameter shapes)."));
    common->addRow(tr("Share weights with"), m_share);
    outer->addLayout(common);

    m_form = new QWidget(this);
    m_attrLayout = new QFormLayout(m_form);
    m_attrLayout->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_form);
    outer->addWidget(m_error);
    outer->addStretch(1);

    connect(m_name, &QLineEdit::editingFinished, this, [this] {
        if (m_updating || !m_node) return;
        auto st = m_document->renameNode(m_node, m_name->text().trimmed().toStdString());
        if (!st.ok()) {
            showError(QString::fromStdString(st.error().message));
            refreshValues();
        } else {
            showError({});
        }
    });
    connect(m_trainable, &QCheckBox::toggled, this, [this](bool on) {
        if (m_updating || !m_node) return;
        m_document->setTrainable(m_node, on);
    });
    connect(m_lr, &QLineEdit::editingFinished, this, [this] {
        if (m_updating || !m_node) return;
        bool ok = false;
        double v = QLocale::c().toDouble(m_lr->text().trimmed(), &ok);
        if (!ok) {
            showError(tr("\"%1\" is not a number.").arg(m_lr->text()));
            refreshValues();
            return;
        }
        auto st = m_document->setLrMultiplier(m_node, v);
        showError(st.ok() ? QString() : QString::fromStdString(st.error().message));
        if (!st.ok()) refreshValues();
    });
    connect(m_share, &QComboBox::activated, this, [this](int index) {
        if (m_updating || !m_node) return;
        auto st = m_document->setShareWeightsWith(m_node, m_share->itemData(index).toString().toStdString());
        showError(st.ok() ? QString() : QString::fromStdString(st.error().message));
        if (!st.ok()) refreshValues();
    });
    connect(document, &EditorDocument::nodeChanged, this, [this](ItemId id) {
        if (id == m_node) refreshValues();
    });
    connect(document, &EditorDocument::layersChanged, this, [this] {
        if (m_node && m_document->node(m_node)) rebuild();
    });
    // A Plugin node's form comes from its plugin's schema, which exists once the plugin loads.
    connect(&PluginNotifier::instance(), &PluginNotifier::pluginsChanged, this, [this] {
        if (m_node && m_document->node(m_node)) rebuild();
    });
    connect(document, &EditorDocument::structureChanged, this, [this] {
        if (m_node && !m_document->node(m_node))
            setNode(0);
        else
            refreshValues();
    });
    setNode(0);
}

QString InspectorWidget::lastError() const {
    return m_error->isVisible() ? m_error->text() : QString();
}

void InspectorWidget::showError(const QString& text) {
    m_error->setText(text);
    m_error->setVisible(!text.isEmpty());
    if (!text.isEmpty()) emit statusMessage(text);
}

QWidget* InspectorWidget::editorFor(const QString& attr) const {
    return m_editors.value(attr);
}

void InspectorWidget::setNode(ItemId id) {
    m_node = m_document && m_document->node(id) ? id : 0;
    showError({});
    rebuild();
}

void InspectorWidget::rebuild() {
    m_updating = true;
    while (m_attrLayout->rowCount() > 0) m_attrLayout->removeRow(0);
    m_editors.clear();
    const EditorNode* n = m_node ? m_document->node(m_node) : nullptr;
    for (QWidget* w : {static_cast<QWidget*>(m_name), static_cast<QWidget*>(m_trainable),
                       static_cast<QWidget*>(m_lr), static_cast<QWidget*>(m_share)})
        w->setEnabled(n != nullptr);
    if (!n) {
        m_title->setText(tr("No node selected"));
        m_doc->setText(tr("Select one node on the canvas to edit it."));
        m_op.clear();
        m_specs.clear();
        m_updating = false;
        return;
    }
    m_op = QString::fromStdString(n->node.op);
    // A layer instance's form comes from the layer's exposed attributes, an op's from its row.
    const QString doc = m_document->opDoc(n->node);
    const bool isLayer = m_document->findLayer(n->node.op) != nullptr;
    m_doc->setText(doc.isEmpty() ? tr("Unknown op") : isLayer ? tr("Layer: %1").arg(doc) : doc);
    m_specs = m_document->attributeSpecs(n->node);
    {
        for (const auto& spec : m_specs) {
            const QString attr = QString::fromStdString(spec.name);
            const QString doc = QString::fromStdString(spec.doc);
            QWidget* editor = nullptr;
            if (spec.type == engine::AttrType::Bool) {
                auto* box = new QCheckBox(m_form);
                connect(box, &QCheckBox::toggled, this, [this, attr](bool on) {
                    if (m_updating) return;
                    auto st = m_document->setAttribute(m_node, attr.toStdString(), engine::AttrValue(on));
                    showError(st.ok() ? QString() : QString::fromStdString(st.error().message));
                });
                editor = box;
            } else if (spec.type == engine::AttrType::String && !spec.choices.empty()) {
                auto* combo = new QComboBox(m_form);
                for (const auto& c : spec.choices) combo->addItem(QString::fromStdString(c));
                connect(combo, &QComboBox::activated, this, [this, attr, combo](int i) {
                    if (m_updating) return;
                    auto st = m_document->setAttribute(m_node, attr.toStdString(),
                                                       engine::AttrValue(combo->itemText(i).toStdString()));
                    showError(st.ok() ? QString() : QString::fromStdString(st.error().message));
                });
                editor = combo;
            } else {
                auto* line = new QLineEdit(m_form);
                line->setPlaceholderText(spec.required ? tr("required") : valueText(spec.defaultValue));
                connect(line, &QLineEdit::editingFinished, this, [this, attr, line] {
                    if (!m_updating) commitText(attr, line->text());
                });
                editor = line;
            }
            QString tip = doc;
            if (!spec.required)
                tip += QLatin1Char('\n') + tr("Default: %1").arg(valueText(spec.defaultValue));
            if (spec.min || spec.max)
                tip +=
                    QLatin1Char('\n') + tr("Range: %1 to %2")
                                            .arg(spec.min ? QString::number(*spec.min) : QStringLiteral("−∞"),
                                                 spec.max ? QString::number(*spec.max) : QStringLiteral("∞"));
            editor->setToolTip(tip);
            editor->setObjectName(attr);
            auto* row = new QWidget(m_form);
            auto* h = new QHBoxLayout(row);
            h->setContentsMargins(0, 0, 0, 0);
            h->addWidget(editor, 1);
            auto* reset = new QToolButton(row);
            reset->setText(QStringLiteral("↺"));
            reset->setToolTip(spec.required
                                  ? tr("Required: no default")
                                  : tr("Reset to the default (%1)").arg(valueText(spec.defaultValue)));
            reset->setEnabled(!spec.required);
            connect(reset, &QToolButton::clicked, this, [this, attr] {
                m_document->resetAttribute(m_node, attr.toStdString());
                showError({});
            });
            h->addWidget(reset);
            auto* label = new QLabel(attr, m_form);
            label->setToolTip(doc);
            m_attrLayout->addRow(label, row);
            m_editors.insert(attr, editor);
        }
    }
    m_updating = false;
    refreshValues();
}

void InspectorWidget::refreshValues() {
    const EditorNode* n = m_node ? m_document->node(m_node) : nullptr;
    if (!n) return;
    if (QString::fromStdString(n->node.op) != m_op) {
        rebuild();
        return;
    }
    m_updating = true;
    const std::string pluginOp = engine::ops::pluginOpName(n->node);
    m_title->setText(tr("%1 — %2").arg(QString::fromStdString(n->node.name),
                                      pluginOp.empty() ? m_op : QString::fromStdString(pluginOp)));
    m_name->setText(QString::fromStdString(n->node.name));
    m_trainable->setChecked(n->node.trainable);
    m_lr->setText(QLocale::c().toString(n->node.lrMultiplier, 'g', 6));
    m_share->clear();
    m_share->addItem(tr("(none)"), QString());
    for (const auto& other : m_document->nodes())
        if (other.id != m_node && other.node.op == n->node.op)
            m_share->addItem(QString::fromStdString(other.node.name),
                             QString::fromStdString(other.node.name));
    m_share->setCurrentIndex(
        std::max(0, m_share->findData(QString::fromStdString(n->node.shareWeightsWith))));
    for (auto it = m_editors.begin(); it != m_editors.end(); ++it) {
        const auto* spec = findSpec(m_specs, it.key());
        if (!spec) continue;
        auto cur = n->node.attrs.values().find(spec->name);
        const bool set = cur != n->node.attrs.values().end();
        const engine::AttrValue& v = set ? cur->second : spec->defaultValue;
        if (auto* box = qobject_cast<QCheckBox*>(it.value())) {
            const bool* b = std::get_if<bool>(&v);
            box->setChecked(b && *b);
        } else if (auto* combo = qobject_cast<QComboBox*>(it.value())) {
            combo->setCurrentIndex(std::max(0, combo->findText(valueText(v))));
        } else if (auto* line = qobject_cast<QLineEdit*>(it.value())) {
            line->setText(set ? valueText(v) : QString());
        }
    }
    m_updating = false;
}

void InspectorWidget::commitText(const QString& attr, const QString& text) {
    const EditorNode* n = m_node ? m_document->node(m_node) : nullptr;
    if (!n) return;
    const auto* spec = findSpec(m_specs, attr);
    if (!spec) return;
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        // An emptied field means "use the default".
        if (!spec->required) {
            m_document->resetAttribute(m_node, spec->name);
            showError({});
        } else {
            showError(tr("%1 is required: %2").arg(attr, QString::fromStdString(spec->doc)));
            refreshValues();
        }
        return;
    }
    engine::AttrValue value;
    bool ok = true;
    switch (spec->type) {
    case engine::AttrType::Int: {
        qlonglong v = t.toLongLong(&ok);
        value = static_cast<int64_t>(v);
        if (!ok) showError(tr("%1 must be a whole number, not \"%2\".").arg(attr, t));
        break;
    }
    case engine::AttrType::Float: {
        double v = QLocale::c().toDouble(t, &ok);
        if (!ok) v = QLocale().toDouble(t, &ok);  // the user's own decimal separator
        value = v;
        if (!ok) showError(tr("%1 must be a number, not \"%2\".").arg(attr, t));
        break;
    }
    case engine::AttrType::IntList: {
        QString inner = t;
        inner.remove(QLatin1Char('['))
            .remove(QLatin1Char(']'))
            .remove(QLatin1Char('('))
            .remove(QLatin1Char(')'));
        std::vector<int64_t> list;
        const auto parts = inner.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
        for (const auto& p : parts) {
            bool good = false;
            list.push_back(p.toLongLong(&good));
            ok = ok && good;
        }
        if (!ok || list.empty()) {
            ok = false;
            showError(tr("%1 must be whole numbers separated by commas, not \"%2\".").arg(attr, t));
        }
        value =
            list.size() == 1 && spec->listLength > 1 ? engine::AttrValue(list[0]) : engine::AttrValue(list);
        break;
    }
    case engine::AttrType::Bool:
        value = t == QLatin1String("true") || t == QLatin1String("1");
        break;
    case engine::AttrType::String:
        value = t.toStdString();
        break;
    }
    if (!ok) {
        refreshValues();
        return;
    }
    auto st = m_document->setAttribute(m_node, spec->name, value);
    if (!st.ok()) {
        showError(QString::fromStdString(st.error().message));
        refreshValues();
    } else {
        showError({});
    }
}

}  // namespace kiln::ui
