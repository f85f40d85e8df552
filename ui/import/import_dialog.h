// SPDX-License-Identifier: Apache-2.0
// File > Import Model: choose an ONNX or Keras file and where to save the Kiln project, import in a
// kiln-import child process (a busy dialog with Cancel, a time limit; the GUI thread never waits),
// read the report's summary (what was mapped, folded, kept as placeholders; the weights) or the
// error, then open the project.
#pragma once

#include <QDialog>
#include <QElapsedTimer>
#include <QPointer>

#include <memory>

#include "app/kiln_import/import_process.h"

class QLabel;
class QLineEdit;
class QMessageBox;
class QPlainTextEdit;
class QProgressDialog;
class QPushButton;
class QSpinBox;
class QTimer;

namespace kiln::ui {

// The arguments that give a kiln-import child the plugins this studio has loaded (--plugin LIB
// each), so that their ONNX nodes import as their operations there as here.
QStringList importPluginArguments();

class ImportDialog : public QDialog {
    Q_OBJECT

public:
    explicit ImportDialog(QWidget* parent = nullptr);
    ~ImportDialog() override;

    void setModelPath(const QString& path);    // also proposes <folder>/<name>.kiln as the project
    void setProjectPath(const QString& path);
    QString modelPath() const;
    QString projectPath() const;

    // Seconds the import may take before it counts as damaged (0: no limit; default 300).
    void setTimeLimit(int seconds);
    int timeLimit() const;
    // The kiln-import program to run (default: ImportProcess::findProgram()).
    void setImportProgram(const QString& program) { m_program = program; }

    bool isImporting() const { return m_process && m_process->isRunning(); }
    bool succeeded() const { return m_done; }
    QString summaryText() const;  // the report's summary as shown, or the error
    QPushButton* importButton() const { return m_importButton; }
    QPushButton* openButton() const { return m_openButton; }
    QProgressDialog* progressDialog() const;  // while importing
    QMessageBox* errorBox() const;            // after a failed import, until closed

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
    void updateProgress();
    void showError(const QString& text);

    QLineEdit* m_model = nullptr;
    QLineEdit* m_project = nullptr;
    QPlainTextEdit* m_summary = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_importButton = nullptr;
    QPushButton* m_openButton = nullptr;
    QSpinBox* m_timeLimit = nullptr;
    QPointer<QProgressDialog> m_progress;
    QPointer<QMessageBox> m_errorBox;
    QTimer* m_tick = nullptr;
    QElapsedTimer m_clock;
    QString m_program;
    QString m_importing;  // the model's file name while importing
    std::unique_ptr<app::ImportProcess> m_process;
    bool m_done = false;
    bool m_projectEdited = false;
};

}  // namespace kiln::ui
