// SPDX-License-Identifier: Apache-2.0
// The training configuration editor: loss terms, optimizer, schedule, epochs, batch size,
// validation, seed, metrics (built-in and plugin ones), callbacks, device and precision. Every edit
// is validated by the engine's own parser; settings the form does not show (custom fields) are
// kept as they are.
#pragma once

#include <nlohmann/json.hpp>

#include <QHash>
#include <QWidget>

#include <map>

#include "engine/graph/graph.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace kiln::ui::training {

class LossEditor;

class TrainingConfigForm : public QWidget {
    Q_OBJECT
public:
    explicit TrainingConfigForm(QWidget* parent = nullptr);

    // The model the configuration is checked against (loss outputs, metric kinds).
    void setGraph(const engine::Graph& graph);
    // Shows a configuration ("training" section of a project). Emits nothing.
    void setConfig(const nlohmann::json& training);
    // The project's data section: a data.batch_size of streamed data (image folders, CSV index,
    // TFRecord) is the batch size training uses, so the form's own is shown as overridden.
    void setDataSection(const nlohmann::json& data);
    int dataBatchSize() const { return m_dataBatch; }
    // The configuration as edited (always the last valid one when the form shows an error).
    nlohmann::json config() const { return m_valid; }
    bool isValid() const { return m_errorText.isEmpty(); }
    QString errorText() const { return m_errorText; }
    // Sets the optimizer's learning rate as if typed (an edit: configEdited follows when valid).
    void setLearningRate(double lr);

    // The fine-tuning stages table (one row per entry of "stages").
    enum StageColumn { StageName, StageEpochs, StageTrainable, StageLrFactor, StageResetOptimizer, StageColumnCount };
    QTableWidget* stagesTable() const { return m_stages; }
    // Appends a stage (the whole model, one epoch, the rate unchanged, a fresh optimizer).
    void addStage();
    void removeStage(int row);
    QPushButton* discriminativeButton() const { return m_discriminative; }

    LossEditor* lossEditor() const { return m_lossEditor; }
    // Metrics beyond the four check boxes: checkable items whose data is the metric's name in
    // the configuration ("mse", "plugin:acme.FBeta").
    QListWidget* metricList() const { return m_metricList; }
    // The settings of the plugin metric selected in metricList(): a "metricName" line and one
    // editor per attribute named "metricAttr_<name>"; hidden unless a loaded plugin metric is selected.
    QWidget* metricSettingsForm() const { return m_metricSettings; }
    // Offers the losses and metrics of the plugins loaded now; called whenever PluginNotifier
    // reports a new plugin.
    void refreshPlugins();

signals:
    // The "Find learning rate…" button: the owner, who knows the project and its data, runs the
    // range test (LrFinderDialog).
    void findLearningRateRequested();
    // A valid edit; the document takes it over (with undo).
    void configEdited(const nlohmann::json& training);
    void validityChanged(bool valid, const QString& error);
    // The "discriminative learning rates" preset: per-node learning-rate multipliers (node name
    // -> multiplier) for the document to set on the graph's nodes.
    void lrMultipliersRequested(const QHash<QString, double>& multipliers);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void onEdited();
    nlohmann::json compose() const;
    void updateEnabled();
    static nlohmann::json findCallback(const nlohmann::json& training, const char* type);
    // Fills the stages table from a "stages" array (rows keep their JSON for fields not shown).
    void showStages(const nlohmann::json& stages);
    void addStageRow(const nlohmann::json& stage);
    nlohmann::json composeStages() const;
    void applyDiscriminativePreset();
    // Fills the metric list (built-ins, then loaded plugin metrics; checked ones kept) and checks
    // those `checked` names.
    void fillMetricList(const QStringList& checked);
    QStringList checkedListMetrics() const;
    // The loaded plugin metric selected in the list ("plugin:acme.FBeta"), or "".
    QString currentPluginMetric() const;
    // The settings object of a plugin metric ({"type": ..., "name"?, attributes...}), made on first use.
    nlohmann::json& metricSettings(const QString& type);
    // Shows the name and attribute editors of the selected plugin metric (hidden for others).
    void showMetricSettings();

    engine::Graph m_graph;
    nlohmann::json m_base = nlohmann::json::object();   // what setConfig() showed, for kept fields
    nlohmann::json m_valid = nlohmann::json::object();
    QString m_errorText;
    bool m_loading = false;

    QFormLayout* m_form = nullptr;
    QSpinBox* m_epochs = nullptr;
    QSpinBox* m_batch = nullptr;
    QLabel* m_batchNote = nullptr;  // "set by the data section" when data.batch_size overrides it
    int m_dataBatch = 0;
    QSpinBox* m_seed = nullptr;
    QDoubleSpinBox* m_validation = nullptr;
    QCheckBox* m_shuffle = nullptr;
    QComboBox* m_optimizer = nullptr;
    QDoubleSpinBox* m_lr = nullptr;
    QPushButton* m_findLr = nullptr;
    QDoubleSpinBox* m_momentum = nullptr;
    QDoubleSpinBox* m_weightDecay = nullptr;
    QComboBox* m_schedule = nullptr;
    QSpinBox* m_decaySteps = nullptr;
    QSpinBox* m_warmup = nullptr;
    QCheckBox* m_metricAccuracy = nullptr;
    QCheckBox* m_metricPrecision = nullptr;
    QCheckBox* m_metricRecall = nullptr;
    QCheckBox* m_metricAuc = nullptr;
    QListWidget* m_metricList = nullptr;
    QWidget* m_metricSettings = nullptr;
    QLabel* m_metricSettingsTitle = nullptr;
    QLabel* m_metricNameLabel = nullptr;
    QLineEdit* m_metricName = nullptr;
    QWidget* m_metricAttrHost = nullptr;
    QFormLayout* m_metricAttrForm = nullptr;
    // Plugin metrics written with settings, by type: kept while unchecked, written while checked.
    std::map<std::string, nlohmann::json> m_metricObjects;
    QGroupBox* m_lossBox = nullptr;
    LossEditor* m_lossEditor = nullptr;
    QComboBox* m_device = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_memoryLimit = nullptr;
    QSpinBox* m_histogramFreq = nullptr;  // training.histogram_freq  // editable: presets or a size such as 12GiB
    QGroupBox* m_reduceLr = nullptr;
    QSpinBox* m_reducePatience = nullptr;
    QDoubleSpinBox* m_reduceFactor = nullptr;
    QGroupBox* m_early = nullptr;
    QSpinBox* m_earlyPatience = nullptr;
    QCheckBox* m_earlyRestore = nullptr;
    QGroupBox* m_checkpoint = nullptr;
    QComboBox* m_checkpointMonitor = nullptr;
    QCheckBox* m_backup = nullptr;
    QCheckBox* m_tensorboard = nullptr;
    QCheckBox* m_csvLogger = nullptr;
    QCheckBox* m_nanStop = nullptr;
    QGroupBox* m_stagesBox = nullptr;
    QTableWidget* m_stages = nullptr;
    QPushButton* m_addStage = nullptr;
    QPushButton* m_removeStage = nullptr;
    QPushButton* m_discriminative = nullptr;
    QLabel* m_stagesHint = nullptr;
    QLabel* m_error = nullptr;
    QList<QLabel*> m_labels;
};

}  // namespace kiln::ui::training
