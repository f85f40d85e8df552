// SPDX-License-Identifier: Apache-2.0
// The "Make layer" dialog: name, exposed attributes, and the interface derived from the selection.
#include "ui/graph_editor/make_layer_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kiln::ui {
namespace {

constexpr int kNodeRole = Qt::UserRole + 1;
constexpr int kAttrRole = Qt::UserRole + 2;

}  // namespace

MakeLayerDialog::MakeLayerDialog(EditorDocument* document, QVector<ItemId> selection, QWidget* parent)
    : QDialog(parent), m_document(document), m_selection(std::move(selection)) {
    setWindowTitle(tr("Make Layer"));
    setObjectName(QStringLiteral("makeLayerDialog"));
    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("layerName"));
    m_name->setPlaceholderText(tr("for example ConvBlock"));
    m_doc = new QLineEdit(this);
    m_doc->setObjectName(QStringLiteral("layerDoc"));
    m_doc->setPlaceholderText(tr("one line about what the layer does (optional)"));
    m_interface = new QLabel(this);
    m_interface->setWordWrap(true);
    m_interface->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error = new QLabel(this);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: palette(highlighted-text); background: #b3261e; padding: 4px;"));
    m_error->setVisible(false);
    m_attributes = new QTreeWidget(this);
    m_attributes->setObjectName(QStringLiteral("exposedAttributes"));
    m_attributes->setHeaderLabels({tr("Attribute"), tr("Value"), tr("Exposed as")});
    m_attributes->setRootIsDecorated(false);
    m_attributes->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Make Layer"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &MakeLayerDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &MakeLayerDialog::reject);
    // A refused name's message goes once the name is edited (a selection that cannot become a
    // layer keeps its message: Make Layer stays disabled then).
    connect(m_name, &QLineEdit::textChanged, this, [this] {
        if (m_buttons->button(QDialogButtonBox::Ok)->isEnabled()) showError(QString());
    });

    auto* form = new QFormLayout;
    form->addRow(tr("Layer name:"), m_name);
    form->addRow(tr("Description:"), m_doc);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_interface);
    auto* hint = new QLabel(tr("Tick the attributes an instance of the layer should set; the others keep their "
                               "current values inside the layer."),
                            this);
    hint->setWordWrap(true);
    layout->addWidget(hint);
    layout->addWidget(m_attributes, 1);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    resize(560, 460);

    auto iface = m_document->selectionInterface(m_selection);
    if (!iface.ok()) {
        m_interface->setText(tr("This selection cannot become a layer."));
        showError(QString::fromStdString(iface.error().message));
        m_buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
        return;
    }
    QStringList inputs;
    for (const auto& in : iface.value().inputs) inputs << QString::fromStdString(in);
    m_interface->setText(tr("%n node(s) become one layer. Inputs: %1. Output: %2.", nullptr,
                            static_cast<int>(iface.value().nodes.size()))
                             .arg(inputs.join(QStringLiteral(", ")), QString::fromStdString(iface.value().output)));
    for (ItemId id : iface.value().nodes) {
        const EditorNode* n = m_document->node(id);
        for (const auto& spec : m_document->attributeSpecs(n->node)) {
            auto cur = n->node.attrs.values().find(spec.name);
            const bool set = cur != n->node.attrs.values().end();
            if (!set && spec.required) continue;
            auto* item = new QTreeWidgetItem(m_attributes);
            item->setText(AttributeColumn, QStringLiteral("%1.%2").arg(QString::fromStdString(n->node.name),
                                                                      QString::fromStdString(spec.name)));
            item->setText(ValueColumn, QString::fromStdString(
                                           engine::io::attrToJson(set ? cur->second : spec.defaultValue).dump()));
            item->setText(ExposeAsColumn, QString::fromStdString(spec.name));
            item->setToolTip(AttributeColumn, QString::fromStdString(spec.doc));
            item->setData(AttributeColumn, kNodeRole, QVariant::fromValue(id));
            item->setData(AttributeColumn, kAttrRole, QString::fromStdString(spec.name));
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable | Qt::ItemIsEditable);
            item->setCheckState(AttributeColumn, Qt::Unchecked);
        }
    }
    // Only the "Exposed as" column is edited in place.
    m_attributes->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(m_attributes, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item, int column) {
        if (column == ExposeAsColumn) m_attributes->editItem(item, column);
    });
}

QString MakeLayerDialog::errorText() const {
    return m_error->isVisible() ? m_error->text() : QString();
}

void MakeLayerDialog::showError(const QString& text) {
    m_error->setText(text);
    m_error->setVisible(!text.isEmpty());
}

bool MakeLayerDialog::setExposed(const QString& node, const QString& attr, bool on, const QString& as) {
    const QString key = node + QLatin1Char('.') + attr;
    for (int i = 0; i < m_attributes->topLevelItemCount(); ++i) {
        auto* item = m_attributes->topLevelItem(i);
        if (item->text(AttributeColumn) != key) continue;
        item->setCheckState(AttributeColumn, on ? Qt::Checked : Qt::Unchecked);
        if (!as.isEmpty()) item->setText(ExposeAsColumn, as);
        return true;
    }
    return false;
}

void MakeLayerDialog::accept() {
    if (!m_document) return;
    std::vector<ExposedAttribute> expose;
    for (int i = 0; i < m_attributes->topLevelItemCount(); ++i) {
        auto* item = m_attributes->topLevelItem(i);
        if (item->checkState(AttributeColumn) != Qt::Checked) continue;
        expose.push_back({item->data(AttributeColumn, kNodeRole).value<ItemId>(),
                          item->data(AttributeColumn, kAttrRole).toString().toStdString(),
                          item->text(ExposeAsColumn).trimmed().toStdString()});
    }
    auto r = m_document->makeLayer(m_selection, m_name->text().trimmed().toStdString(), expose,
                                   m_doc->text().trimmed().toStdString());
    if (!r.ok()) {
        showError(QString::fromStdString(r.error().message));
        return;
    }
    m_instance = r.value();
    QDialog::accept();
}

}  // namespace kiln::ui
