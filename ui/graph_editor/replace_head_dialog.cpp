// SPDX-License-Identifier: Apache-2.0
// The head replacement dialog: a short form, and the document's replaceHead() on OK.
#include "ui/graph_editor/replace_head_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "app/common/error_text.h"
#include "ui/common/theme.h"

namespace kiln::ui {

ReplaceHeadDialog::ReplaceHeadDialog(EditorDocument* document, ItemId node, QWidget* parent)
    : QDialog(parent), m_document(document), m_node(node) {
    setObjectName(QStringLiteral("replaceHeadDialog"));
    const auto* n = document->node(node);
    const QString name = n ? QString::fromStdString(n->node.name) : QString();
    setWindowTitle(tr("Replace Head From %1").arg(name));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Every node after %1 is removed. A new head follows it: global average pooling (when %1 gives "
                                "a feature map), dropout and a Dense layer with softmax over the classes.")
                                 .arg(name),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    m_classes = new QSpinBox(this);
    m_classes->setObjectName(QStringLiteral("headClasses"));
    m_classes->setRange(1, 1000000);
    m_classes->setValue(2);
    form->addRow(tr("Classes:"), m_classes);
    m_dropout = new QDoubleSpinBox(this);
    m_dropout->setObjectName(QStringLiteral("headDropout"));
    m_dropout->setRange(0.0, 0.95);
    m_dropout->setSingleStep(0.05);
    m_dropout->setDecimals(2);
    m_dropout->setValue(0.2);
    m_dropout->setToolTip(tr("0 leaves the Dropout layer out."));
    form->addRow(tr("Dropout rate:"), m_dropout);
    layout->addLayout(form);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("headError"));
    m_error->setWordWrap(true);
    Theme::markAsError(m_error);  // readable in both themes, and it follows a theme switch
    m_error->hide();
    layout->addWidget(m_error);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Replace Head"));
    connect(buttons, &QDialogButtonBox::accepted, this, &ReplaceHeadDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ReplaceHeadDialog::reject);
    layout->addWidget(buttons);
}

void ReplaceHeadDialog::accept() {
    auto r = m_document->replaceHead(m_node, m_classes->value(), m_dropout->value());
    if (!r.ok()) {
        m_error->setText(app::ErrorText::describe(r.error()));
        m_error->show();
        return;
    }
    m_added = *r;
    QDialog::accept();
}

}  // namespace kiln::ui
