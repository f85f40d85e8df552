// SPDX-License-Identifier: Apache-2.0
// File > Import Model: choose an ONNX or Keras file and where to save the Kiln project, import off the GUI
// thread, read the report's summary (what was mapped, folded, kept as placeholders; the weights),
// then open the project.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include "app/kiln_import/import_job.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace kiln::ui {

class ImportDialog : public QDialog {
    Q_OBJECT

public:
    explicit ImportDialog(QWidget* parent = nullptr);
    ~ImportDialog() override;

    void setModelPath(const QString& path);    // also proposes <folder>/<name>.kiln as the project
    void setProjectPath(const QString& path);
    QString modelPath() const;
    QString projectPath() const;

    bool isImporting() const { return m_watcher.isRunning(); }
    bool succeeded() const { return m_done; }
    QString summaryText() const;  // the report's summary as shown, or the error
    QPushButton* importButton() const { return m_importButton; }
    QPushButton* openButton() const { return m_openButton; }

    // The summary of an import report in the user's words.
    static QString describeReport(const nlohmann::json& report);

signals:
    // The user chose to open the imported project.
    void openRequested(const QString& projectPath);

public slots:
    void startImport();
    void browseModel();
    void browseProject();

private:
    void finished();
    void updateButtons();
    void proposeProject();

    QLineEdit* m_model = nullptr;
    QLineEdit* m_project = nullptr;
    QPlainTextEdit* m_summary = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_importButton = nullptr;
    QPushButton* m_openButton = nullptr;
    QFutureWatcher<engine::Result<app::ImportJobResult>> m_watcher;
    bool m_done = false;
    bool m_projectEdited = false;
};

}  // namespace kiln::ui
