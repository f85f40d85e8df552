// SPDX-License-Identifier: Apache-2.0
// File > New from Pretrained: the backbone catalogue (input size, preprocessing, parameters,
// licence, whether it is on this machine), the new classifier's classes, dropout and optional
// data folder, then the project made off the GUI thread; a backbone that is missing shows how to
// get it, a template asks for the user's model file.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include "engine/api/pretrained.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
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
    bool isCreating() const { return m_watcher.isRunning(); }
    // Whether the selected backbone can be used now (cached, or a template with a model file).
    bool backboneUsable() const;

    void setProjectPath(const QString& path);
    void setDataFolder(const QString& path);
    void setModelFile(const QString& path);

signals:
    // The project was written; the studio opens it.
    void projectCreated(const QString& projectPath);

public slots:
    void create();

private:
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
    QFutureWatcher<engine::Result<engine::api::PretrainedProject>> m_watcher;
    bool m_projectEdited = false;
};

}  // namespace kiln::ui
