// SPDX-License-Identifier: Apache-2.0
// File > New from Pretrained: the backbone catalogue (input size, preprocessing, parameters,
// licence, whether it is on this machine), the new classifier's classes, dropout and optional
// data folder, then the project made off the GUI thread; a backbone that is missing shows how to
// get it, a template asks for the user's model file. That file is read by a kiln-import child
// process, as File > Import Model reads one (a busy dialog with Cancel, a time limit), so that a
// damaged file that crashes or hangs the HDF5 library cannot take the studio with it.
#pragma once

#include <QDialog>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QPointer>

#include <memory>

#include "app/kiln_import/import_process.h"
#include "engine/api/pretrained.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressDialog;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTemporaryDir;
class QTimer;
class QWidget;

namespace kiln::ui {

class PretrainedDialog : public QDialog {
    Q_OBJECT

public:
    // `dataDir`: where cached backbones live ("" : $KILN_DATA or ~/.cache/kiln/data).
    explicit PretrainedDialog(QWidget* parent = nullptr, const QString& dataDir = {});
    ~PretrainedDialog() override;

    // A catalogue entry's descriptive texts in the user's language. The engine writes them in
    // English; the studio composes the words for the entries it knows and shows the engine's
    // text for any other.
    struct BackboneTexts {
        QString dataset, formula, licence, origin, note;
    };
    static BackboneTexts backboneTexts(const engine::api::Backbone& backbone);

    QTableWidget* table() const { return m_table; }
    QPushButton* createButton() const { return m_create; }
    QString selectedBackbone() const;  // catalogue id, "" when none is selected
    QString statusText() const;
    // Reading the model file (the child) or making the project (the worker thread).
    bool isCreating() const { return isReading() || m_watcher.isRunning(); }
    bool isReading() const { return m_process && m_process->isRunning(); }
    QProgressDialog* progressDialog() const;  // while the model file is read
    // Whether the selected backbone can be used now (cached, or a template with a model file).
    bool backboneUsable() const;

    void setProjectPath(const QString& path);
    void setDataFolder(const QString& path);
    void setModelFile(const QString& path);
    // Seconds reading the model file may take before it counts as damaged (0: no limit; default 300).
    void setTimeLimit(int seconds);
    int timeLimit() const;
    // The kiln-import program that reads it (default: ImportProcess::findProgram()).
    void setImportProgram(const QString& program) { m_program = program; }

signals:
    // The project was written; the studio opens it.
    void projectCreated(const QString& projectPath);

public slots:
    void create();
    // Also ends a child still reading the model file.
    void reject() override;

private:
    void startReading(const engine::api::PretrainedProjectRequest& request);
    void readFinished();
    void startCreating(const engine::api::PretrainedProjectRequest& request);
    void updateProgress();
    void closeProgress();
    void fillTable();
    // Each column as wide as its header and its texts, long texts wrapped at about 30 characters.
    void fitColumns();
    void selectionChanged();
    void updateButtons();
    void finished();
    void browseProject();
    void browseData();
    void browseModel();

    QString m_dataDir;
    std::vector<engine::api::BackboneAvailability> m_availability;  // catalogue order
    QTableWidget* m_table = nullptr;
    QLabel* m_details = nullptr;
    QLabel* m_missing = nullptr;
    QWidget* m_modelRow = nullptr;
    QLineEdit* m_modelFile = nullptr;
    QSpinBox* m_classes = nullptr;
    QDoubleSpinBox* m_dropout = nullptr;
    QLineEdit* m_dataFolder = nullptr;
    QLineEdit* m_project = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_create = nullptr;
    QSpinBox* m_timeLimit = nullptr;
    QFutureWatcher<engine::Result<engine::api::PretrainedProject>> m_watcher;
    bool m_projectEdited = false;

    // Reading a template's model file: the child, its busy dialog, where it writes the project and
    // weights it reads the file into (removed once the new project is made), the request waiting.
    std::unique_ptr<app::ImportProcess> m_process;
    std::unique_ptr<QTemporaryDir> m_readDir;
    engine::api::PretrainedProjectRequest m_pending;
    QPointer<QProgressDialog> m_progress;
    QTimer* m_tick = nullptr;
    QElapsedTimer m_clock;
    QString m_program;
    QString m_reading;  // the model file's name while it is read
};

}  // namespace kiln::ui
