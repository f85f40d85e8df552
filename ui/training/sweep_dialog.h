// SPDX-License-Identifier: Apache-2.0
// "Sweep…": a hyper-parameter sweep of the project (engine/api/sweep.h, the code of kiln-train
// --sweep) set up in a table of parameters, run off the GUI thread with Cancel, its trials in a
// sortable table and a parallel-coordinates chart as they finish; "Apply best" hands the best
// trial's project to the editor. Specs are saved to and opened from JSON files in the format of
// kiln-train --sweep, and the last one of a saved project comes back when the dialog reopens.
#pragma once

#include <QDialog>

#include <atomic>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/api/sweep.h"
#include "engine/io/project.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QStandardItemModel;
class QTableView;
class QTableWidget;
class QTimer;

namespace kiln::ui::training {

class SweepDialog : public QDialog {
    Q_OBJECT
public:
    // `project` is the document as it is (possibly unsaved); trials train copies of it.
    SweepDialog(const engine::io::Project& project, const QString& projectPath, QWidget* parent = nullptr);
    ~SweepDialog() override;
    // Closing keeps the spec as this project's last one (rememberedSpecPath).
    void done(int result) override;

    bool running() const { return m_running; }
    // The spec the controls describe, or the problem (naming the field) in `error`.
    std::optional<engine::api::SweepSpec> spec(QString* error = nullptr) const;
    // Fills the controls from a spec (parameters, strategy, budget, objective, early stopping).
    void setSpec(const engine::api::SweepSpec& spec);
    // Writes the controls' spec to a file kiln-train --sweep reads; false (the problem in the
    // status line) when the spec is not valid or the file cannot be written.
    bool saveSpecFile(const QString& path);
    // Fills the controls from a spec file; false (the problem, naming the file and the JSON path,
    // in the status line) when it cannot be read or parsed. A spec that parses but does not fit
    // the project opens with that problem shown.
    bool openSpecFile(const QString& path);
    // Where this project's last spec is kept ("" for a project never saved).
    QString rememberedSpecPath() const;
    const std::vector<engine::api::TrialResult>& trials() const { return m_trials; }
    int bestTrial() const { return m_best; }
    QTableView* resultsView() const { return m_results; }
    QCustomPlot* chart() const { return m_chart; }

public slots:
    void start();
    void cancel();

signals:
    // "Apply best": the project with the best trial's parameters, and those parameters.
    void applyBestRequested(const engine::io::Project& project, const nlohmann::json& params);
    // After a sweep ends; `message` is the error or the summary.
    void finished(bool ok, const QString& message);

protected:
    void changeEvent(QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void retranslate();
    void addParameterRow(const QString& path = {}, int kind = 0, const QString& values = {});
    void onEvent(const engine::api::SweepEvent& e);
    void showTrial(const engine::api::TrialResult& t, bool training = false);
    void rebuildResultColumns();
    void replotChart();
    void applyBest();
    void updateButtons();
    QStringList pathSuggestions() const;
    void chooseSpecFile(bool save);
    void rememberSpec();
    void restoreSpec();

    engine::io::Project m_project;
    QString m_projectPath;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_running = false;
    engine::api::SweepSpec m_runningSpec;
    std::vector<engine::api::TrialResult> m_trials;
    int m_best = -1;
    int m_gridPoints = 3;  // grid_points of the spec last set (no control shows it)

    QLabel* m_paramsLabel = nullptr;
    QTableWidget* m_params = nullptr;
    QPushButton* m_addParam = nullptr;
    QPushButton* m_removeParam = nullptr;
    QLabel* m_strategyLabel = nullptr;
    QComboBox* m_strategy = nullptr;
    QLabel* m_trialsLabel = nullptr;
    QSpinBox* m_trialsBox = nullptr;
    QLabel* m_seedLabel = nullptr;
    QSpinBox* m_seed = nullptr;
    QLabel* m_epochsLabel = nullptr;
    QSpinBox* m_epochs = nullptr;
    QLabel* m_objectiveLabel = nullptr;
    QComboBox* m_objective = nullptr;
    QComboBox* m_mode = nullptr;
    QLabel* m_pruningLabel = nullptr;
    QComboBox* m_pruning = nullptr;
    QLabel* m_minEpochsLabel = nullptr;
    QSpinBox* m_minEpochs = nullptr;
    QLabel* m_minTrialsLabel = nullptr;
    QSpinBox* m_minTrials = nullptr;
    QLabel* m_reductionLabel = nullptr;
    QSpinBox* m_reduction = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QPushButton* m_apply = nullptr;
    QPushButton* m_saveSpec = nullptr;
    QPushButton* m_openSpec = nullptr;
    QStandardItemModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_results = nullptr;
    QCustomPlot* m_chart = nullptr;
    QTimer* m_replot = nullptr;
    QLabel* m_status = nullptr;
};

}  // namespace kiln::ui::training
