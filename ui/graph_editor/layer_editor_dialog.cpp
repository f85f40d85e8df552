// SPDX-License-Identifier: Apache-2.0
// Editing a project layer's inside in its own canvas, applied to the definition on "Back".
#include "ui/graph_editor/layer_editor_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/inspector_widget.h"

namespace kiln::ui {

LayerEditorDialog::LayerEditorDialog(EditorDocument* project, const std::string& layer,
                                     const engine::io::Project& inside, QWidget* parent)
    : QDialog(parent), m_project(project), m_layer(layer) {
    setObjectName(QStringLiteral("layerEditorDialog"));
    const QString name = QString::fromStdString(layer);
    setWindowTitle(tr("Layer %1").arg(name));
    m_inside = new EditorDocument(this);
    m_inside->setProject(inside, true);
    m_editor = new GraphEditorWidget(m_inside, this);
    m_inspector = new InspectorWidget(m_inside, this);
    connect(m_editor, &GraphEditorWidget::currentNodeChanged, m_inspector, &InspectorWidget::setNode);

    const QString projectName = project->filePath().isEmpty()
                                    ? QString::fromStdString(project->project().name)
                                    : QFileInfo(project->filePath()).completeBaseName();
    m_breadcrumb = new QLabel(tr("%1 › layer %2").arg(projectName, name), this);
    m_breadcrumb->setObjectName(QStringLiteral("breadcrumb"));
    auto* note = new QLabel(tr("Edits change the layer's definition: every instance of %1 follows. "
                               "The Input nodes stand for the layer's inputs."),
                            this);
    note->setWordWrap(true);
    m_error = new QLabel(this);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: white; background: #b3261e; padding: 4px;"));
    m_error->setVisible(false);
    auto* buttons = new QDialogButtonBox(this);
    m_back = buttons->addButton(tr("Back to the Project"), QDialogButtonBox::AcceptRole);
    buttons->addButton(tr("Discard Changes"), QDialogButtonBox::RejectRole);
    connect(buttons, &QDialogButtonBox::accepted, this, &LayerEditorDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &LayerEditorDialog::reject);

    auto* split = new QSplitter(this);
    split->addWidget(m_editor);
    split->addWidget(m_inspector);
    split->setStretchFactor(0, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_breadcrumb);
    layout->addWidget(note);
    layout->addWidget(split, 1);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    resize(1000, 700);
}

LayerEditorDialog::~LayerEditorDialog() {
    // The views go before the document they show (it is an older child of the dialog).
    delete m_editor;
    delete m_inspector;
}

void LayerEditorDialog::keyPressEvent(QKeyEvent* event) {
    // Enter commits an inspector field; it must not also press "Back".
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) {
        event->accept();
        return;
    }
    QDialog::keyPressEvent(event);
}

QString LayerEditorDialog::errorText() const {
    return m_error->isVisible() ? m_error->text() : QString();
}

void LayerEditorDialog::accept() {
    if (!m_project) return;
    auto st = m_project->applyLayerInside(m_layer, m_inside->project());
    if (!st.ok()) {
        m_error->setText(QString::fromStdString(st.error().message));
        m_error->setVisible(true);
        return;
    }
    QDialog::accept();
}

}  // namespace kiln::ui
