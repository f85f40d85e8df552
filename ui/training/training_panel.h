// SPDX-License-Identifier: Apache-2.0
// The training view: Train / Pause / Resume / Stop, the learning rate changed live, progress with
// ETA and rate, live charts, the configuration form and the project's run history (overlay,
// compare, rename, delete, clone a configuration).
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include <QHash>
#include <QWidget>

#include "engine/io/project.h"
#include "ui/training/training_session.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

namespace kiln::ui::charts {
class ChartsPanel;
}

namespace kiln::ui::training {

class HistogramView;
class RunListModel;
class TrainingConfigForm;

class TrainingPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainingPanel(QWidget* parent = nullptr);
    ~TrainingPanel() override;

    // Where Train takes the project from (the open document); returns false when there is none.
    using ProjectProvider = std::function<bool(engine::io::Project& project, QString& path)>;
    void setProjectProvider(ProjectProvider provider);
    // Shows a project's training configuration and opens its run history. With no provider set,
    // Train uses this snapshot. `source` is the file the project was read from when runs are not
    // kept beside it (`path` empty: a shipped example opened in place); names in the project,
    // such as a backbone's weights, resolve against it.
    void setProject(const engine::io::Project& project, const QString& path, const QString& source = QString());
    // Training options for the next run (threads, epochs override...); the run folder and name
    // are chosen per run.
    void setDefaultOptions(const engine::api::TrainingOptions& options) { m_options = options; }
    // Starting weights for the next runs (safetensors; "" : initialise). partial: load the
    // tensors whose name and shape match and report the rest (transfer learning).
    void setStartWeights(const QString& path, bool partial);

    TrainingSession* session() const { return m_session; }
    charts::ChartsPanel* charts() const { return m_charts; }
    TrainingConfigForm* configForm() const { return m_form; }
    RunListModel* runs() const { return m_runs; }
    HistogramView* histograms() const { return m_histograms; }
    // The folder of the one run selected in Runs ("" when none or several are selected).
    QString selectedRunDir() const;
    // Selects a run in Runs (tests, and the studio after a run).
    void selectRun(qint64 runId);
    QString liveRunKey() const { return m_liveKey; }
    // The lines of the last run's starting-weights report (also sent as a notice to the log).
    QStringList weightsReport() const { return m_weightsReport; }

    // The folder of the run to evaluate or export: the one selected in the run history when
    // exactly one is, else the newest completed (or stopped) run; "" when there is none.
    QString runForEvaluation() const;

    // Overlays stored runs in the charts (epoch metrics and the step loss).
    void overlayRun(qint64 runId);

public slots:
    void startTraining();
    // Opens the learning-rate range test on the project with the form's configuration.
    void findLearningRate();
    void togglePause();
    void stopTraining();

signals:
    // A valid edit of the configuration (or a cloned one): the document takes it over.
    void trainingConfigChanged(const nlohmann::json& training);
    // A background problem or result worth a non-modal notice; severity 0 info, 1 warning, 2 error.
    void notice(const QString& text, int severity);
    void runFinished(qint64 runId, const QString& runDir, bool ok);
    // The selection in Runs changed: the one selected run's folder and name, or empty strings.
    void selectedRunChanged(const QString& runDir, const QString& name);
    // The configuration form's "discriminative learning rates" preset: node -> multiplier.
    void lrMultipliersRequested(const QHash<QString, double>& multipliers);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void onState(TrainingSession::State state);
    void onEvents(const std::vector<engine::api::TrainEvent>& events);
    void onFinished(bool ok, const QString& message, const QJsonObject& results);
    void compareSelected();
    // Opens the Evaluate view (a window of its own) on the selected run's weights.
    void evaluateSelected();
    void cloneSelected();
    void deleteSelected();
    QList<qint64> selectedRuns() const;
    void setStatus(const QString& text);
    // A project made from a pretrained backbone: start weights (a newly opened project) and the
    // preprocessing check against the backbone's preset.
    void applyPretrained(bool otherProject);
    void onWeightsLoaded(const engine::api::WeightsReport& report);
    void onRunSelection();

    TrainingSession* m_session = nullptr;
    ProjectProvider m_provider;
    engine::io::Project m_project;
    QString m_projectPath;
    QString m_sourcePath;  // the file the project came from (path, or an example's file)
    engine::api::TrainingOptions m_options;
    QString m_liveKey;
    QStringList m_weightsReport;
    QString m_preprocessingWarning;  // the last preprocessing difference reported (a pretrained backbone's)
    int64_t m_batch = 0;
    int64_t m_totalSteps = 0;
    bool m_inputBoundNoticed = false;  // the input-bound notice is given once per run
    int64_t m_badSamplesSeen = 0;
    int m_markedStage = -1;  // the last fine-tuning stage marked in the charts
    double m_wallStart = 0;

    QPushButton* m_train = nullptr;
    QPushButton* m_pause = nullptr;
    QPushButton* m_stop = nullptr;
    QLabel* m_lrLabel = nullptr;
    QDoubleSpinBox* m_lr = nullptr;
    QPushButton* m_lrApply = nullptr;
    QLabel* m_weightsLabel = nullptr;
    QLineEdit* m_weights = nullptr;
    QPushButton* m_weightsBrowse = nullptr;
    QCheckBox* m_weightsPartial = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QTabWidget* m_tabs = nullptr;
    charts::ChartsPanel* m_charts = nullptr;
    TrainingConfigForm* m_form = nullptr;
    HistogramView* m_histograms = nullptr;
    RunListModel* m_runs = nullptr;
    QSortFilterProxyModel* m_runsProxy = nullptr;
    QTableView* m_runsView = nullptr;
    QLineEdit* m_runFilter = nullptr;
    QPushButton* m_overlay = nullptr;
    QPushButton* m_compare = nullptr;
    QPushButton* m_clone = nullptr;
    QPushButton* m_delete = nullptr;
    QPushButton* m_evaluate = nullptr;
};

}  // namespace kiln::ui::training
