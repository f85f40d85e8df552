// SPDX-License-Identifier: Apache-2.0
// The inside of a project layer, opened from one of its instances: a canvas and an inspector on
// a document of the layer's own nodes (one Input node per port), under a breadcrumb. "Back"
// writes the edits into the definition as one undo step of the project, so every instance
// follows; "Discard" leaves the definition as it was.
#pragma once

#include <QDialog>
#include <QPointer>

#include <memory>

#include "ui/graph_editor/editor_document.h"

class QLabel;
class QPushButton;

namespace kiln::ui {

class GraphEditorWidget;
class InspectorWidget;

class LayerEditorDialog : public QDialog {
    Q_OBJECT
public:
    // `inside`: EditorDocument::layerInside() of `layer` in `project`.
    LayerEditorDialog(EditorDocument* project, const std::string& layer, const engine::io::Project& inside,
                      QWidget* parent = nullptr);
    ~LayerEditorDialog() override;

    EditorDocument* inside() const { return m_inside; }
    GraphEditorWidget* editor() const { return m_editor; }
    InspectorWidget* inspector() const { return m_inspector; }
    QLabel* breadcrumb() const { return m_breadcrumb; }
    QPushButton* backButton() const { return m_back; }
    QString errorText() const;

    // Back: applies the edits; on a refusal the reason shows and the dialog stays open.
    void accept() override;

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    QPointer<EditorDocument> m_project;
    std::string m_layer;
    EditorDocument* m_inside = nullptr;
    GraphEditorWidget* m_editor = nullptr;
    InspectorWidget* m_inspector = nullptr;
    QLabel* m_breadcrumb = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_back = nullptr;
};

}  // namespace kiln::ui
