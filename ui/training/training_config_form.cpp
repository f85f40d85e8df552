// SPDX-License-Identifier: Apache-2.0
// TrainingConfigForm: widgets <-> the "training" JSON, validated by api::validateTraining.
#include "ui/training/training_config_form.h"

#include <algorithm>
#include <limits>
#include <map>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QPushButton>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "engine/api/devices.h"
#include "engine/api/plugins.h"
#include "engine/api/training_config.h"
#include "engine/api/training_setup.h"
#include "engine/ops/plugin_ops.h"
#include "ui/common/plugin_notifier.h"
#include "ui/common/theme.h"
#include "ui/training/attribute_form.h"
#include "ui/training/loss_editor.h"

namespace kiln::ui::training {

using nlohmann::json;

namespace {

QSpinBox* intBox(QWidget* parent, int lo, int hi, const char* name)
{
    auto* box = new QSpinBox(parent);
    box->setRange(lo, hi);
    box->setObjectName(QLatin1String(name));
    box->setKeyboardTracking(false);
    return box;
}

QDoubleSpinBox* realBox(QWidget* parent, double lo, double hi, int decimals, double step, const char* name)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(lo, hi);
    box->setDecimals(decimals);
    box->setSingleStep(step);
    box->setObjectName(QLatin1String(name));
    box->setKeyboardTracking(false);
    return box;
}

template <typename T>
T value(const json& j, const char* key, T fallback)
{
    if (j.is_object() && j.contains(key)) {
        try {
            return j.at(key).get<T>();
        } catch (const json::exception&) {
        }
    }
    return fallback;
}

}  // namespace

TrainingConfigForm::TrainingConfigForm(QWidget* parent) : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* host = new QWidget(scroll);
    auto* column = new QVBoxLayout(host);
    m_form = new QFormLayout;
    column->addLayout(m_form);

    m_epochs = intBox(host, 0, 100000, "epochs");
    m_batch = intBox(host, 1, 1 << 20, "batchSize");
    m_seed = intBox(host, 0, std::numeric_limits<int>::max(), "seed");
    m_validation = realBox(host, 0, 0.95, 3, 0.05, "validationSplit");
    m_shuffle = new QCheckBox(host);
    m_shuffle->setObjectName(QStringLiteral("shuffle"));
    m_optimizer = new QComboBox(host);
    m_optimizer->setObjectName(QStringLiteral("optimizer"));
    for (const char* o : {"sgd", "adam", "adamw", "rmsprop"}) {
        m_optimizer->addItem(QString(), QLatin1String(o));
    }
    m_lr = realBox(host, 1e-7, 10, 7, 1e-4, "learningRate");
    m_momentum = realBox(host, 0, 0.9999, 4, 0.05, "momentum");
    m_weightDecay = realBox(host, 0, 1, 6, 1e-4, "weightDecay");
    m_schedule = new QComboBox(host);
    m_schedule->setObjectName(QStringLiteral("schedule"));
    for (const char* s : {"constant", "step", "exponential", "cosine"}) {
        m_schedule->addItem(QString(), QLatin1String(s));
    }
    m_decaySteps = intBox(host, 1, std::numeric_limits<int>::max(), "decaySteps");
    m_warmup = intBox(host, 0, std::numeric_limits<int>::max(), "warmupSteps");
    auto* metrics = new QWidget(host);
    auto* metricsRow = new QHBoxLayout(metrics);
    metricsRow->setContentsMargins(0, 0, 0, 0);
    m_metricAccuracy = new QCheckBox(metrics);
    m_metricPrecision = new QCheckBox(metrics);
    m_metricRecall = new QCheckBox(metrics);
    m_metricAuc = new QCheckBox(metrics);
    for (auto* c : {m_metricAccuracy, m_metricPrecision, m_metricRecall, m_metricAuc}) {
        metricsRow->addWidget(c);
    }
    metricsRow->addStretch();
    // The further metrics, and under them the settings of the plugin metric selected there.
    auto* moreMetrics = new QWidget(host);
    auto* moreLayout = new QVBoxLayout(moreMetrics);
    moreLayout->setContentsMargins(0, 0, 0, 0);
    m_metricList = new QListWidget(moreMetrics);
    m_metricList->setObjectName(QStringLiteral("metricList"));
    m_metricList->setMaximumHeight(110);
    moreLayout->addWidget(m_metricList);
    m_metricSettings = new QWidget(moreMetrics);
    m_metricSettings->setObjectName(QStringLiteral("metricSettings"));
    auto* settingsLayout = new QVBoxLayout(m_metricSettings);
    settingsLayout->setContentsMargins(0, 0, 0, 0);
    m_metricSettingsTitle = new QLabel(m_metricSettings);
    settingsLayout->addWidget(m_metricSettingsTitle);
    auto* nameForm = new QFormLayout;
    m_metricName = new QLineEdit(m_metricSettings);
    m_metricName->setObjectName(QStringLiteral("metricName"));
    m_metricNameLabel = new QLabel(m_metricSettings);
    m_metricNameLabel->setBuddy(m_metricName);
    nameForm->addRow(m_metricNameLabel, m_metricName);
    settingsLayout->addLayout(nameForm);
    m_metricAttrHost = new QWidget(m_metricSettings);
    m_metricAttrForm = new QFormLayout(m_metricAttrHost);
    m_metricAttrForm->setContentsMargins(0, 0, 0, 0);
    settingsLayout->addWidget(m_metricAttrHost);
    moreLayout->addWidget(m_metricSettings);
    m_metricSettings->hide();
    m_device = new QComboBox(host);
    m_device->setObjectName(QStringLiteral("device"));
    m_device->addItem(QString(), QStringLiteral("cpu"));
    for (const auto& d : engine::api::availableDevices()) {
        if (d.device.isCpu()) {
            continue;  // the first item, named in retranslate()
        }
        const QString id = QString::fromStdString(d.device.toString());
        m_device->addItem(QStringLiteral("%1 — %2").arg(id, QString::fromStdString(d.name)), id);
    }
    m_precision = new QComboBox(host);
    m_precision->setObjectName(QStringLiteral("precision"));
    for (const char* p : {"float32", "mixed_float16", "mixed_bfloat16"}) {
        m_precision->addItem(QString(), QLatin1String(p));
    }
    m_memoryLimit = new QComboBox(host);
    m_memoryLimit->setObjectName(QStringLiteral("memoryLimit"));
    m_memoryLimit->setEditable(true);
    m_memoryLimit->setInsertPolicy(QComboBox::NoInsert);
    for (const char* p : {"growth", "50%", "80%", "all"}) {
        m_memoryLimit->addItem(QLatin1String(p), QLatin1String(p));
    }
    m_histogramFreq = intBox(host, 0, 100000, "histogramFreq");

    // The learning rate with the range test's button beside it.
    auto* lrRow = new QWidget(host);
    auto* lrLayout = new QHBoxLayout(lrRow);
    lrLayout->setContentsMargins(0, 0, 0, 0);
    lrLayout->addWidget(m_lr, 1);
    m_findLr = new QPushButton(lrRow);
    m_findLr->setObjectName(QStringLiteral("findLearningRate"));
    lrLayout->addWidget(m_findLr);
    connect(m_findLr, &QPushButton::clicked, this, &TrainingConfigForm::findLearningRateRequested);

    // The batch size with the note that says when the data section's overrides it.
    auto* batchRow = new QWidget(host);
    auto* batchLayout = new QHBoxLayout(batchRow);
    batchLayout->setContentsMargins(0, 0, 0, 0);
    batchLayout->addWidget(m_batch, 1);
    m_batchNote = new QLabel(batchRow);
    m_batchNote->setObjectName(QStringLiteral("batchSizeNote"));
    m_batchNote->hide();
    batchLayout->addWidget(m_batchNote);

    const QList<QWidget*> rows = {m_epochs, batchRow, m_seed, m_validation, m_shuffle, m_optimizer, lrRow, m_momentum,
                                  m_weightDecay, m_schedule, m_decaySteps, m_warmup, metrics, moreMetrics, m_device,
                                  m_precision, m_memoryLimit, m_histogramFreq};
    for (QWidget* w : rows) {
        auto* label = new QLabel(host);
        label->setBuddy(w == lrRow ? m_lr : w == batchRow ? m_batch : w == moreMetrics ? static_cast<QWidget*>(m_metricList) : w);
        m_labels << label;
        m_form->addRow(label, w);
    }

    // Loss terms, before the callbacks: with the optimizer, what the training minimises.
    m_lossBox = new QGroupBox(host);
    m_lossBox->setObjectName(QStringLiteral("lossBox"));
    auto* lossLayout = new QVBoxLayout(m_lossBox);
    m_lossEditor = new LossEditor(m_lossBox);
    lossLayout->addWidget(m_lossEditor);
    column->insertWidget(0, m_lossBox);

    // Callbacks.
    m_reduceLr = new QGroupBox(host);
    m_reduceLr->setCheckable(true);
    m_reduceLr->setObjectName(QStringLiteral("reduceLrOnPlateau"));
    auto* reduceForm = new QFormLayout(m_reduceLr);
    m_reducePatience = intBox(m_reduceLr, 0, 10000, "reducePatience");
    m_reduceFactor = realBox(m_reduceLr, 0.001, 0.999, 3, 0.05, "reduceFactor");
    reduceForm->addRow(new QLabel(m_reduceLr), m_reducePatience);
    reduceForm->addRow(new QLabel(m_reduceLr), m_reduceFactor);
    m_early = new QGroupBox(host);
    m_early->setCheckable(true);
    m_early->setObjectName(QStringLiteral("earlyStopping"));
    auto* earlyForm = new QFormLayout(m_early);
    m_earlyPatience = intBox(m_early, 0, 10000, "earlyPatience");
    m_earlyRestore = new QCheckBox(m_early);
    m_earlyRestore->setObjectName(QStringLiteral("restoreBest"));
    earlyForm->addRow(new QLabel(m_early), m_earlyPatience);
    earlyForm->addRow(m_earlyRestore);
    m_checkpoint = new QGroupBox(host);
    m_checkpoint->setCheckable(true);
    m_checkpoint->setObjectName(QStringLiteral("modelCheckpoint"));
    auto* checkpointForm = new QFormLayout(m_checkpoint);
    m_checkpointMonitor = new QComboBox(m_checkpoint);
    m_checkpointMonitor->setEditable(true);
    m_checkpointMonitor->setObjectName(QStringLiteral("checkpointMonitor"));
    m_checkpointMonitor->addItems({QStringLiteral("val_loss"), QStringLiteral("val_accuracy"), QStringLiteral("loss")});
    checkpointForm->addRow(new QLabel(m_checkpoint), m_checkpointMonitor);
    m_backup = new QCheckBox(host);
    m_backup->setObjectName(QStringLiteral("backupAndRestore"));
    m_tensorboard = new QCheckBox(host);
    m_tensorboard->setObjectName(QStringLiteral("tensorBoard"));
    m_csvLogger = new QCheckBox(host);
    m_csvLogger->setObjectName(QStringLiteral("csvLogger"));
    m_nanStop = new QCheckBox(host);
    m_nanStop->setObjectName(QStringLiteral("terminateOnNaN"));
    for (QWidget* w : QList<QWidget*>{m_reduceLr, m_early, m_checkpoint, m_backup, m_tensorboard, m_csvLogger, m_nanStop}) {
        column->addWidget(w);
    }

    // Fine-tuning stages.
    m_stagesBox = new QGroupBox(host);
    m_stagesBox->setObjectName(QStringLiteral("stages"));
    auto* stagesLayout = new QVBoxLayout(m_stagesBox);
    m_stagesHint = new QLabel(m_stagesBox);
    m_stagesHint->setWordWrap(true);
    stagesLayout->addWidget(m_stagesHint);
    m_stages = new QTableWidget(0, StageColumnCount, m_stagesBox);
    m_stages->setObjectName(QStringLiteral("stagesTable"));
    m_stages->verticalHeader()->hide();
    m_stages->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_stages->horizontalHeader()->setStretchLastSection(true);
    m_stages->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_stages->setSelectionMode(QAbstractItemView::SingleSelection);
    m_stages->setMinimumHeight(120);
    stagesLayout->addWidget(m_stages);
    auto* stageButtons = new QHBoxLayout;
    m_addStage = new QPushButton(m_stagesBox);
    m_addStage->setObjectName(QStringLiteral("addStage"));
    m_removeStage = new QPushButton(m_stagesBox);
    m_removeStage->setObjectName(QStringLiteral("removeStage"));
    m_discriminative = new QPushButton(m_stagesBox);
    m_discriminative->setObjectName(QStringLiteral("discriminativeRates"));
    stageButtons->addWidget(m_addStage);
    stageButtons->addWidget(m_removeStage);
    stageButtons->addStretch();
    stageButtons->addWidget(m_discriminative);
    stagesLayout->addLayout(stageButtons);
    column->addWidget(m_stagesBox);
    m_error = new QLabel(host);
    m_error->setObjectName(QStringLiteral("configError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    Theme::markAsError(m_error);
    m_error->hide();
    column->addWidget(m_error);
    column->addStretch();
    scroll->setWidget(host);
    outer->addWidget(scroll);
    retranslate();

    auto edited = [this] { onEdited(); };
    for (auto* box : {m_epochs, m_batch, m_seed, m_decaySteps, m_warmup, m_reducePatience, m_earlyPatience, m_histogramFreq}) {
        connect(box, qOverload<int>(&QSpinBox::valueChanged), this, edited);
    }
    for (auto* box : {m_validation, m_lr, m_momentum, m_weightDecay, m_reduceFactor}) {
        connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged), this, edited);
    }
    for (auto* combo : {m_optimizer, m_schedule, m_device, m_precision, m_checkpointMonitor}) {
        connect(combo, qOverload<int>(&QComboBox::currentIndexChanged), this, edited);
    }
    connect(m_memoryLimit, &QComboBox::currentTextChanged, this, edited);
    for (auto* check : {m_shuffle, m_metricAccuracy, m_metricPrecision, m_metricRecall, m_metricAuc, m_earlyRestore,
                        m_backup, m_tensorboard, m_csvLogger, m_nanStop}) {
        connect(check, &QCheckBox::toggled, this, edited);
    }
    for (auto* group : {m_reduceLr, m_early, m_checkpoint}) {
        connect(group, &QGroupBox::toggled, this, edited);
    }
    connect(m_stages, &QTableWidget::itemChanged, this, edited);
    connect(m_metricList, &QListWidget::itemChanged, this, edited);
    connect(m_metricList, &QListWidget::itemChanged, this, [this] { showMetricSettings(); });
    connect(m_metricList, &QListWidget::currentItemChanged, this, [this] { showMetricSettings(); });
    connect(m_metricName, &QLineEdit::editingFinished, this, [this] {
        const QString type = currentPluginMetric();
        if (m_loading || type.isEmpty()) return;
        json& settings = metricSettings(type);
        const std::string name = m_metricName->text().trimmed().toStdString();
        if (name.empty())
            settings.erase("name");
        else
            settings["name"] = name;
        onEdited();
    });
    connect(m_lossEditor, &LossEditor::edited, this, edited);
    connect(m_addStage, &QPushButton::clicked, this, &TrainingConfigForm::addStage);
    connect(m_removeStage, &QPushButton::clicked, this, [this] {
        removeStage(m_stages->currentRow() >= 0 ? m_stages->currentRow() : m_stages->rowCount() - 1);
    });
    connect(m_discriminative, &QPushButton::clicked, this, &TrainingConfigForm::applyDiscriminativePreset);
    // The losses and metrics of a plugin loaded now are offered at once.
    connect(&PluginNotifier::instance(), &PluginNotifier::pluginsChanged, this, &TrainingConfigForm::refreshPlugins);
    setConfig(json::object());
}

void TrainingConfigForm::setLearningRate(double lr)
{
    m_lr->setValue(lr);
}

void TrainingConfigForm::retranslate()
{
    m_findLr->setText(tr("Find learning rate…"));
    if (m_batchNote) {
        m_batchNote->setText(tr("data section: %1").arg(m_dataBatch));
        const QString why = tr("The project's data section sets batch_size %1, which training uses for this data. Change it in the "
                               "Data workspace (Pipeline tab) or remove it from the data section to use this setting.")
                                .arg(m_dataBatch);
        m_batchNote->setToolTip(why);
        m_batch->setToolTip(m_dataBatch > 0 ? why : QString());
    }
    m_findLr->setToolTip(tr("Try learning rates from 1e-7 to 10 on the training data and suggest one."));
    const QStringList names = {tr("Epochs"), tr("Batch size"), tr("Seed"), tr("Validation split"), tr("Shuffle"),
                               tr("Optimizer"), tr("Learning rate"), tr("Momentum"), tr("Weight decay"),
                               tr("Schedule"), tr("Decay steps"), tr("Warm-up steps"), tr("Metrics"),
                               tr("More metrics"), tr("Device"), tr("Precision"), tr("GPU memory limit"),
                               tr("Histograms every")};
    for (int i = 0; i < m_labels.size() && i < names.size(); ++i) {
        m_labels[i]->setText(names[i]);
    }
    m_shuffle->setText(tr("Reshuffle the training data every epoch"));
    m_optimizer->setItemText(0, tr("SGD"));
    m_optimizer->setItemText(1, tr("Adam"));
    m_optimizer->setItemText(2, tr("AdamW"));
    m_optimizer->setItemText(3, tr("RMSprop"));
    m_schedule->setItemText(0, tr("Constant"));
    m_schedule->setItemText(1, tr("Step decay"));
    m_schedule->setItemText(2, tr("Exponential decay"));
    m_schedule->setItemText(3, tr("Cosine decay"));
    m_metricAccuracy->setText(tr("Accuracy"));
    m_metricPrecision->setText(tr("Precision", "metric: the share of predicted positives that are right"));
    m_metricRecall->setText(tr("Recall"));
    m_metricAuc->setText(tr("ROC AUC"));
    m_metricList->setToolTip(tr("Further metrics to log; plugin metrics appear here once their plugin is loaded. "
                                "Select a plugin metric to change its settings."));
    m_metricNameLabel->setText(tr("Name"));
    m_metricName->setToolTip(tr("The metric's name in the logs and charts; empty: the plugin's name for it"));
    fillMetricList(checkedListMetrics());
    m_lossBox->setTitle(tr("Loss"));
    m_device->setItemText(0, tr("CPU"));
    m_precision->setItemText(0, tr("32-bit float"));
    m_precision->setItemText(1, tr("Mixed 16-bit float (GPU)"));
    m_precision->setItemText(2, tr("Mixed bfloat16 (GPU)"));
    m_precision->setToolTip(tr("Mixed precision needs a GPU; on the CPU Kiln trains in 32-bit float."));
    m_memoryLimit->setToolTip(tr("How much GPU memory Kiln may take: growth (as needed), all, a share such as "
                                 "80% or a size such as 12GiB."));
    m_histogramFreq->setSuffix(tr(" epoch(s)"));
    m_histogramFreq->setSpecialValueText(tr("never"));
    m_histogramFreq->setToolTip(tr("Records the weight and gradient histograms of every parameter every so many "
                                   "epochs, for the Histograms tab (0: never)."));
    m_reduceLr->setTitle(tr("Reduce the learning rate on a plateau of the validation loss"));
    qobject_cast<QLabel*>(qobject_cast<QFormLayout*>(m_reduceLr->layout())->labelForField(m_reducePatience))
        ->setText(tr("Patience (epochs)"));
    qobject_cast<QLabel*>(qobject_cast<QFormLayout*>(m_reduceLr->layout())->labelForField(m_reduceFactor))
        ->setText(tr("Factor"));
    m_early->setTitle(tr("Stop early when the validation loss stops improving"));
    qobject_cast<QLabel*>(qobject_cast<QFormLayout*>(m_early->layout())->labelForField(m_earlyPatience))
        ->setText(tr("Patience (epochs)"));
    m_earlyRestore->setText(tr("Restore the best weights"));
    m_checkpoint->setTitle(tr("Keep the best weights (checkpoint)"));
    qobject_cast<QLabel*>(qobject_cast<QFormLayout*>(m_checkpoint->layout())->labelForField(m_checkpointMonitor))
        ->setText(tr("Monitor"));
    m_backup->setText(tr("Back up the full training state every epoch (resume after a crash)"));
    m_tensorboard->setText(tr("Write TensorBoard logs"));
    m_csvLogger->setText(tr("Log epochs to a CSV file"));
    m_nanStop->setText(tr("Stop when the loss becomes NaN"));
    m_stagesBox->setTitle(tr("Fine-tuning stages"));
    m_stagesHint->setText(tr("Stages run one after another in one run; each trains the chosen part of the model "
                             "(the rest is frozen) at the learning rate times its factor. With stages, the number of "
                             "epochs is their sum."));
    m_stages->setHorizontalHeaderLabels({tr("Name"), tr("Epochs"), tr("Trainable"), tr("LR factor"),
                                         tr("Reset optimizer")});
    m_addStage->setText(tr("Add stage"));
    m_removeStage->setText(tr("Remove stage"));
    m_discriminative->setText(tr("Discriminative learning rates"));
    m_discriminative->setToolTip(tr("Sets lower learning-rate multipliers for earlier layers: the model's layers "
                                    "are split into four blocks by depth, each block learning 2.6 times slower "
                                    "than the next; the last block keeps the full rate."));
    if (!m_loading) {
        m_loading = true;
        showStages(composeStages());  // the choices' texts in the new language
        m_loading = false;
    }
}

void TrainingConfigForm::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(event);
}

void TrainingConfigForm::fillMetricList(const QStringList& checked)
{
    const QSignalBlocker block(m_metricList);
    const QVariant current = m_metricList->currentItem() ? m_metricList->currentItem()->data(Qt::UserRole) : QVariant();
    m_metricList->clear();
    const std::pair<const char*, QString> builtIn[] = {
        {"mse", tr("Mean squared error (mse)")},
        {"mae", tr("Mean absolute error (mae)")},
        {"top_k_categorical_accuracy", tr("Top-k accuracy (top_k_categorical_accuracy)")},
        {"binary_accuracy", tr("Binary accuracy (binary_accuracy)")}};
    auto add = [&](const QString& name, const QString& text) {
        auto* item = new QListWidgetItem(text, m_metricList);
        item->setData(Qt::UserRole, name);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(checked.contains(name) ? Qt::Checked : Qt::Unchecked);
    };
    for (const auto& [name, text] : builtIn) add(QLatin1String(name), text);
    QStringList plugin;
    for (const auto& m : engine::api::pluginMetrics()) {
        const QString name = QString::fromStdString(std::string(engine::ops::kPluginPrefix) + m.name);
        plugin << name;
        add(name, tr("%1 (plugin): %2").arg(QString::fromStdString(m.name), QString::fromStdString(m.doc)));
    }
    // A checked plugin metric whose plugin is not loaded stays listed (and checked).
    for (const QString& name : checked)
        if (name.startsWith(QLatin1String("plugin:")) && !plugin.contains(name))
            add(name, tr("%1 (plugin not loaded)").arg(name.mid(7)));
    for (int i = 0; i < m_metricList->count(); ++i)
        if (current.isValid() && m_metricList->item(i)->data(Qt::UserRole) == current) m_metricList->setCurrentRow(i);
    showMetricSettings();
}

QString TrainingConfigForm::currentPluginMetric() const
{
    const QListWidgetItem* item = m_metricList->currentItem();
    const QString type = item ? item->data(Qt::UserRole).toString() : QString();
    if (!type.startsWith(QLatin1String("plugin:"))) return {};
    return engine::api::findPluginMetric(engine::ops::pluginTypeName(type.toStdString())) ? type : QString();
}

json& TrainingConfigForm::metricSettings(const QString& type)
{
    json& settings = m_metricObjects[type.toStdString()];
    if (!settings.is_object()) settings = json{{"type", type.toStdString()}};
    return settings;
}

void TrainingConfigForm::showMetricSettings()
{
    const QString type = currentPluginMetric();
    if (type.isEmpty()) {
        fillAttributeForm(m_metricAttrForm, m_metricAttrHost, {}, json::object(), QString(), {});
        m_metricSettings->hide();
        return;
    }
    const auto metric = engine::api::findPluginMetric(engine::ops::pluginTypeName(type.toStdString()));
    const bool on = m_metricList->currentItem()->checkState() == Qt::Checked;
    const auto found = m_metricObjects.find(type.toStdString());
    const json settings = found != m_metricObjects.end() ? found->second : json::object();
    m_metricSettingsTitle->setText(on ? tr("Settings of %1:").arg(type)
                                      : tr("Settings of %1 (check it to use them):").arg(type));
    m_metricName->setText(QString::fromStdString(settings.value("name", std::string())));
    m_metricName->setPlaceholderText(QString::fromStdString(metric->name));
    fillAttributeForm(m_metricAttrForm, m_metricAttrHost, metric->attrs, settings, QStringLiteral("metricAttr_"),
                      [this, type](const engine::AttrSpec& spec, const json& value) {
                          if (m_loading) return;
                          setAttributeJson(metricSettings(type), spec, value);
                          onEdited();
                      });
    m_metricSettings->setEnabled(on);
    m_metricSettings->show();
}

QStringList TrainingConfigForm::checkedListMetrics() const
{
    QStringList out;
    for (int i = 0; i < m_metricList->count(); ++i)
        if (m_metricList->item(i)->checkState() == Qt::Checked) out << m_metricList->item(i)->data(Qt::UserRole).toString();
    return out;
}

void TrainingConfigForm::refreshPlugins()
{
    m_loading = true;
    fillMetricList(checkedListMetrics());
    m_lossEditor->refreshChoices();
    m_loading = false;
    onEdited();
}

void TrainingConfigForm::setGraph(const engine::Graph& graph)
{
    m_graph = graph;
    m_lossEditor->setGraph(graph);
    // The trainable choices list the graph's nodes.
    m_loading = true;
    showStages(composeStages());
    m_loading = false;
    onEdited();
}

void TrainingConfigForm::showStages(const json& stages)
{
    const QSignalBlocker block(m_stages);
    m_stages->setRowCount(0);
    if (stages.is_array()) {
        for (const auto& st : stages) {
            addStageRow(st.is_object() ? st : json::object());
        }
    }
    m_epochs->setEnabled(m_stages->rowCount() == 0);
    m_epochs->setToolTip(m_stages->rowCount() == 0 ? QString() : tr("The sum of the stages' epochs."));
    m_removeStage->setEnabled(m_stages->rowCount() > 0);
}

void TrainingConfigForm::addStageRow(const json& stage)
{
    const int row = m_stages->rowCount();
    const QSignalBlocker block(m_stages);
    m_stages->insertRow(row);
    auto* name = new QTableWidgetItem(QString::fromStdString(value<std::string>(stage, "name", "")));
    // The row's JSON, so that a stage's fields the table does not show survive an edit.
    name->setData(Qt::UserRole, QString::fromStdString(stage.dump()));
    m_stages->setItem(row, StageName, name);

    auto* epochs = intBox(m_stages, 1, 100000, "stageEpochs");
    epochs->setValue(std::max(1, value<int>(stage, "epochs", 1)));
    m_stages->setCellWidget(row, StageEpochs, epochs);

    auto* trainable = new QComboBox(m_stages);
    trainable->setObjectName(QStringLiteral("stageTrainable"));
    trainable->addItem(tr("Whole model"), QStringLiteral("all"));
    trainable->addItem(tr("Head (last layers)"), QStringLiteral("head"));
    if (auto headNodes = engine::api::headLayers(m_graph); headNodes.ok()) {
        QStringList head;
        for (const auto& name : *headNodes) {
            head << QString::fromStdString(name);
        }
        trainable->setItemData(1, tr("Trains %1; the rest is frozen.").arg(head.join(QStringLiteral(", "))),
                               Qt::ToolTipRole);
    }
    for (const auto& n : m_graph.nodes) {
        if (n.op != "Input") {
            trainable->addItem(tr("From %1 on").arg(QString::fromStdString(n.name)),
                               QStringLiteral("from:") + QString::fromStdString(n.name));
        }
    }
    QString current = QStringLiteral("all");
    const json t = stage.value("trainable", json("all"));
    if (t.is_string()) {
        current = QString::fromStdString(t.get<std::string>());
    } else if (t.is_object() && t.contains("from") && t["from"].is_string()) {
        current = QStringLiteral("from:") + QString::fromStdString(t["from"].get<std::string>());
        if (trainable->findData(current) < 0) {  // a node the graph does not have (the error says so)
            trainable->addItem(tr("From %1 on").arg(QString::fromStdString(t["from"].get<std::string>())), current);
        }
    } else if (t.is_object() && t.contains("nodes")) {
        QStringList names;
        if (t["nodes"].is_array()) {
            for (const auto& n : t["nodes"]) {
                names << QString::fromStdString(n.is_string() ? n.get<std::string>() : n.dump());
            }
        }
        current = QStringLiteral("nodes:") + QString::fromStdString(t.dump());
        trainable->addItem(tr("Nodes: %1").arg(names.join(QStringLiteral(", "))), current);
    }
    trainable->setCurrentIndex(std::max(0, trainable->findData(current)));
    m_stages->setCellWidget(row, StageTrainable, trainable);

    auto* factor = realBox(m_stages, 1e-6, 1000, 6, 0.1, "stageLrFactor");
    double shown = value<double>(stage, "lr_factor", 1.0);
    if (stage.contains("lr") && m_lr->value() > 0) {
        shown = value<double>(stage, "lr", m_lr->value()) / m_lr->value();
    }
    factor->setValue(shown);
    // A stage given as an absolute "lr" keeps it until its factor is edited.
    factor->setProperty("shownFactor", factor->value());
    m_stages->setCellWidget(row, StageLrFactor, factor);

    auto* reset = new QTableWidgetItem;
    reset->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    reset->setCheckState(value<std::string>(stage, "optimizer", "reset") == "keep" ? Qt::Unchecked : Qt::Checked);
    m_stages->setItem(row, StageResetOptimizer, reset);

    auto edited = [this] { onEdited(); };
    connect(epochs, qOverload<int>(&QSpinBox::valueChanged), this, edited);
    connect(trainable, qOverload<int>(&QComboBox::currentIndexChanged), this, edited);
    connect(factor, qOverload<double>(&QDoubleSpinBox::valueChanged), this, edited);
}

json TrainingConfigForm::composeStages() const
{
    json out = json::array();
    for (int row = 0; row < m_stages->rowCount(); ++row) {
        const QTableWidgetItem* nameItem = m_stages->item(row, StageName);
        json st = json::parse(nameItem->data(Qt::UserRole).toString().toStdString(), nullptr, false);
        if (!st.is_object()) {
            st = json::object();
        }
        const std::string name = nameItem->text().trimmed().toStdString();
        if (name.empty()) {
            st.erase("name");
        } else {
            st["name"] = name;
        }
        st["epochs"] = qobject_cast<QSpinBox*>(m_stages->cellWidget(row, StageEpochs))->value();
        const QString choice = qobject_cast<QComboBox*>(m_stages->cellWidget(row, StageTrainable))->currentData().toString();
        if (choice.startsWith(QLatin1String("from:"))) {
            st["trainable"] = json{{"from", choice.mid(5).toStdString()}};
        } else if (choice.startsWith(QLatin1String("nodes:"))) {
            st["trainable"] = json::parse(choice.mid(6).toStdString(), nullptr, false);
        } else {
            st["trainable"] = choice.toStdString();
        }
        const auto* factor = qobject_cast<QDoubleSpinBox*>(m_stages->cellWidget(row, StageLrFactor));
        if (st.contains("lr") && factor->value() == factor->property("shownFactor").toDouble()) {
            st.erase("lr_factor");
        } else {
            st.erase("lr");
            if (factor->value() == 1.0) {
                st.erase("lr_factor");
            } else {
                st["lr_factor"] = factor->value();
            }
        }
        st["optimizer"] = m_stages->item(row, StageResetOptimizer)->checkState() == Qt::Checked ? "reset" : "keep";
        out.push_back(std::move(st));
    }
    return out;
}

void TrainingConfigForm::addStage()
{
    json st = {{"name", tr("stage %1").arg(m_stages->rowCount() + 1).toStdString()}, {"epochs", 1}, {"trainable", "all"}};
    addStageRow(st);
    m_epochs->setEnabled(false);
    m_epochs->setToolTip(tr("The sum of the stages' epochs."));
    m_removeStage->setEnabled(true);
    onEdited();
}

void TrainingConfigForm::removeStage(int row)
{
    if (row < 0 || row >= m_stages->rowCount()) {
        return;
    }
    m_stages->removeRow(row);
    m_epochs->setEnabled(m_stages->rowCount() == 0);
    if (m_stages->rowCount() == 0) {
        m_epochs->setToolTip(QString());
    }
    m_removeStage->setEnabled(m_stages->rowCount() > 0);
    onEdited();
}

void TrainingConfigForm::applyDiscriminativePreset()
{
    auto multipliers = engine::api::discriminativeLearningRates(m_graph);
    if (!multipliers.ok()) {
        m_error->setText(tr("The model has an error; fix it before setting learning rates per layer: %1")
                             .arg(QString::fromStdString(multipliers.error().message)));
        m_error->show();
        return;
    }
    QHash<QString, double> out;
    for (const auto& [name, mult] : *multipliers) {
        out.insert(QString::fromStdString(name), mult);
    }
    if (!out.isEmpty()) {
        emit lrMultipliersRequested(out);
    }
}

json TrainingConfigForm::findCallback(const json& training, const char* type)
{
    if (training.is_object() && training.contains("callbacks") && training["callbacks"].is_array()) {
        for (const auto& cb : training["callbacks"]) {
            if (cb.is_object() && cb.value("type", std::string()) == type) {
                return cb;
            }
        }
    }
    return json();
}

void TrainingConfigForm::setDataSection(const json& data)
{
    m_dataBatch = int(std::min<int64_t>(engine::api::streamedDataBatchSize(data), std::numeric_limits<int>::max()));
    m_batch->setEnabled(m_dataBatch <= 0);
    m_batchNote->setVisible(m_dataBatch > 0);
    retranslate();
}

void TrainingConfigForm::setConfig(const json& training)
{
    m_loading = true;
    m_base = training.is_object() ? training : json::object();
    const json& t = m_base;
    m_epochs->setValue(value<int>(t, "epochs", 10));
    m_batch->setValue(value<int>(t, "batch_size", 32));
    m_seed->setValue(value<int>(t, "seed", 0));
    m_validation->setValue(value<double>(t, "validation_split", 0.0));
    m_shuffle->setChecked(value<bool>(t, "shuffle", true));
    const json opt = t.value("optimizer", json::object());
    const QString type = QString::fromStdString(value<std::string>(opt, "type", "adam"));
    m_optimizer->setCurrentIndex(std::max(0, m_optimizer->findData(type)));
    m_lr->setValue(value<double>(opt, "learning_rate", type == QLatin1String("sgd") ? 0.01 : 0.001));
    m_momentum->setValue(value<double>(opt, "momentum", 0.0));
    m_weightDecay->setValue(value<double>(opt, "weight_decay", 0.0));
    const json sched = t.value("schedule", json::object());
    m_schedule->setCurrentIndex(std::max(0, m_schedule->findData(QString::fromStdString(value<std::string>(sched, "type", "constant")))));
    m_decaySteps->setValue(value<int>(sched, "decay_steps", value<int>(sched, "step_size", 1000)));
    m_warmup->setValue(value<int>(sched, "warmup_steps", 0));
    QStringList metrics;
    m_metricObjects.clear();
    if (t.contains("metrics") && t["metrics"].is_array()) {
        for (const auto& m : t["metrics"]) {
            if (m.is_string()) {
                metrics << QString::fromStdString(m.get<std::string>());
            } else if (m.is_object() && m.contains("type") && m["type"].is_string()) {
                metrics << QString::fromStdString(m["type"].get<std::string>());  // a plugin metric with settings
                m_metricObjects[m["type"].get<std::string>()] = m;
            }
        }
    }
    fillMetricList(metrics);
    m_lossEditor->setLoss(t.value("loss", json()));
    m_metricAccuracy->setChecked(metrics.contains(QStringLiteral("accuracy")));
    m_metricPrecision->setChecked(metrics.contains(QStringLiteral("precision")));
    m_metricRecall->setChecked(metrics.contains(QStringLiteral("recall")));
    m_metricAuc->setChecked(metrics.contains(QStringLiteral("auc")));
    m_device->setCurrentIndex(std::max(0, m_device->findData(QString::fromStdString(value<std::string>(t, "device", "cpu")))));
    m_precision->setCurrentIndex(std::max(0, m_precision->findData(QString::fromStdString(value<std::string>(t, "precision", "float32")))));
    m_memoryLimit->setCurrentText(QString::fromStdString(value<std::string>(t, "memory_limit", "growth")));
    m_histogramFreq->setValue(value<int>(t, "histogram_freq", 1));

    const json reduce = findCallback(t, "ReduceLROnPlateau");
    m_reduceLr->setChecked(!reduce.is_null());
    m_reducePatience->setValue(value<int>(reduce, "patience", 10));
    m_reduceFactor->setValue(value<double>(reduce, "factor", 0.1));
    const json early = findCallback(t, "EarlyStopping");
    m_early->setChecked(!early.is_null());
    m_earlyPatience->setValue(value<int>(early, "patience", 5));
    m_earlyRestore->setChecked(value<bool>(early, "restore_best_weights", true));
    const json checkpoint = findCallback(t, "ModelCheckpoint");
    m_checkpoint->setChecked(!checkpoint.is_null());
    m_checkpointMonitor->setCurrentText(QString::fromStdString(value<std::string>(checkpoint, "monitor", "val_loss")));
    m_backup->setChecked(!findCallback(t, "BackupAndRestore").is_null());
    m_tensorboard->setChecked(!findCallback(t, "TensorBoard").is_null());
    m_csvLogger->setChecked(!findCallback(t, "CSVLogger").is_null());
    m_nanStop->setChecked(!findCallback(t, "TerminateOnNaN").is_null());
    showStages(t.value("stages", json::array()));
    m_loading = false;
    updateEnabled();
    m_valid = m_base;
    // Show (without emitting) whether the configuration as loaded is valid.
    m_errorText.clear();
    auto parsed = engine::api::validateTraining(m_base, m_graph);
    if (!parsed.ok() && !m_graph.nodes.empty()) {
        m_errorText = QString::fromStdString(parsed.error().message);
    }
    m_error->setText(m_errorText);
    m_error->setVisible(!m_errorText.isEmpty());
}

void TrainingConfigForm::updateEnabled()
{
    const QString opt = m_optimizer->currentData().toString();
    m_momentum->setEnabled(opt == QLatin1String("sgd") || opt == QLatin1String("rmsprop"));
    const bool decays = m_schedule->currentData().toString() != QLatin1String("constant");
    m_decaySteps->setEnabled(decays);
    const bool gpu = m_device->currentData().toString() != QLatin1String("cpu");
    m_precision->setEnabled(gpu);
    m_memoryLimit->setEnabled(gpu);
}

json TrainingConfigForm::compose() const
{
    json t = m_base;
    const json stages = composeStages();
    if (stages.empty()) {
        t.erase("stages");
        t["epochs"] = m_epochs->value();
    } else {
        int total = 0;
        for (const auto& st : stages) {
            total += st.value("epochs", 0);
        }
        t["stages"] = stages;
        t["epochs"] = total;
    }
    t["batch_size"] = m_batch->value();
    t["seed"] = m_seed->value();
    t["validation_split"] = m_validation->value();
    t["shuffle"] = m_shuffle->isChecked();
    if (m_histogramFreq->value() == 1) {
        t.erase("histogram_freq");  // the default
    } else {
        t["histogram_freq"] = m_histogramFreq->value();
    }

    json opt = t.value("optimizer", json::object());
    const std::string optType = m_optimizer->currentData().toString().toStdString();
    if (value<std::string>(opt, "type", "") != optType) {
        opt = json::object();  // another optimizer: its own defaults, not the old one's options
    }
    opt["type"] = optType;
    opt["learning_rate"] = m_lr->value();
    if (optType == "sgd" || optType == "rmsprop") {
        opt["momentum"] = m_momentum->value();
    } else {
        opt.erase("momentum");
    }
    if (m_weightDecay->value() > 0) {
        opt["weight_decay"] = m_weightDecay->value();
    } else {
        opt.erase("weight_decay");
    }
    t["optimizer"] = opt;

    const std::string schedType = m_schedule->currentData().toString().toStdString();
    if (schedType == "constant" && m_warmup->value() == 0) {
        t.erase("schedule");
    } else {
        json s = t.value("schedule", json::object());
        if (value<std::string>(s, "type", "") != schedType) {
            s = json::object();
        }
        s["type"] = schedType;
        if (schedType == "step") {
            s["step_size"] = m_decaySteps->value();
        } else if (schedType != "constant") {
            s["decay_steps"] = m_decaySteps->value();
        }
        if (m_warmup->value() > 0) {
            s["warmup_steps"] = m_warmup->value();
        } else {
            s.erase("warmup_steps");
        }
        t["schedule"] = s;
    }

    // Metrics: the ones the form shows (check boxes and list) are set, others kept; a plugin
    // metric written as an object keeps its settings while it stays checked.
    const json loss = m_lossEditor->loss();
    if (!loss.is_null()) {
        t["loss"] = loss;
    }
    json metrics = json::array();
    std::vector<std::pair<std::string, bool>> shown = {{"accuracy", m_metricAccuracy->isChecked()},
                                                       {"precision", m_metricPrecision->isChecked()},
                                                       {"recall", m_metricRecall->isChecked()},
                                                       {"auc", m_metricAuc->isChecked()}};
    for (int i = 0; i < m_metricList->count(); ++i) {
        shown.emplace_back(m_metricList->item(i)->data(Qt::UserRole).toString().toStdString(),
                           m_metricList->item(i)->checkState() == Qt::Checked);
    }
    std::map<std::string, json> written;
    if (t.contains("metrics") && t["metrics"].is_array()) {
        for (const auto& m : t["metrics"]) {
            const std::string key = m.is_string() ? m.get<std::string>()
                                    : m.is_object() && m.contains("type") && m["type"].is_string() ? m["type"].get<std::string>()
                                                                                                    : std::string();
            const bool isShown = std::any_of(shown.begin(), shown.end(), [&](const auto& s) { return s.first == key; });
            if (!isShown) {
                metrics.push_back(m);
            } else if (m.is_object()) {
                written[key] = m;
            }
        }
    }
    for (const auto& [name, on] : shown) {
        if (!on) {
            continue;
        }
        // A plugin metric's settings as edited (just its name when none is left), else as written.
        if (const auto edited = m_metricObjects.find(name); edited != m_metricObjects.end()) {
            metrics.push_back(edited->second.size() > 1 ? edited->second : json(name));
        } else {
            metrics.push_back(written.count(name) ? written[name] : json(name));
        }
    }
    if (metrics.empty()) {
        t.erase("metrics");
    } else {
        t["metrics"] = metrics;
    }

    const std::string device = m_device->currentData().toString().toStdString();
    const std::string precision = m_precision->isEnabled() ? m_precision->currentData().toString().toStdString() : "float32";
    if (device == "cpu") {
        t.erase("device");
    } else {
        t["device"] = device;
    }
    if (precision == "float32") {
        t.erase("precision");
    } else {
        t["precision"] = precision;
    }
    const std::string limit = m_memoryLimit->currentText().trimmed().toStdString();
    if (limit.empty() || limit == "growth") {
        t.erase("memory_limit");
    } else {
        t["memory_limit"] = limit;
    }

    // Callbacks: the ones the form shows are rebuilt from their old entries (keeping options the
    // form does not show); others are kept in place.
    json callbacks = json::array();
    const char* managed[] = {"ReduceLROnPlateau", "EarlyStopping", "ModelCheckpoint", "BackupAndRestore",
                             "TensorBoard", "CSVLogger", "TerminateOnNaN"};
    if (t.contains("callbacks") && t["callbacks"].is_array()) {
        for (const auto& cb : t["callbacks"]) {
            const std::string type = cb.is_object() ? cb.value("type", std::string()) : std::string();
            if (std::none_of(std::begin(managed), std::end(managed), [&](const char* m) { return type == m; })) {
                callbacks.push_back(cb);
            }
        }
    }
    auto keep = [&](const char* type) {
        json cb = findCallback(m_base, type);
        if (cb.is_null()) {
            cb = json{{"type", type}};
        }
        return cb;
    };
    if (m_reduceLr->isChecked()) {
        json cb = keep("ReduceLROnPlateau");
        cb["patience"] = m_reducePatience->value();
        cb["factor"] = m_reduceFactor->value();
        callbacks.push_back(cb);
    }
    if (m_early->isChecked()) {
        json cb = keep("EarlyStopping");
        cb["patience"] = m_earlyPatience->value();
        cb["restore_best_weights"] = m_earlyRestore->isChecked();
        callbacks.push_back(cb);
    }
    if (m_checkpoint->isChecked()) {
        json cb = keep("ModelCheckpoint");
        cb["monitor"] = m_checkpointMonitor->currentText().toStdString();
        cb["save_best_only"] = true;
        callbacks.push_back(cb);
    }
    if (m_backup->isChecked()) {
        callbacks.push_back(keep("BackupAndRestore"));
    }
    if (m_tensorboard->isChecked()) {
        callbacks.push_back(keep("TensorBoard"));
    }
    if (m_csvLogger->isChecked()) {
        callbacks.push_back(keep("CSVLogger"));
    }
    if (m_nanStop->isChecked()) {
        callbacks.push_back(keep("TerminateOnNaN"));
    }
    if (callbacks.empty()) {
        t.erase("callbacks");
    } else {
        t["callbacks"] = callbacks;
    }
    return t;
}

void TrainingConfigForm::onEdited()
{
    if (m_loading) {
        return;
    }
    updateEnabled();
    const json t = compose();
    if (t.contains("stages")) {
        const QSignalBlocker block(m_epochs);
        m_epochs->setValue(t.value("epochs", 0));  // their sum
    }
    auto parsed = engine::api::validateTraining(t, m_graph);
    const QString error = parsed.ok() ? QString() : QString::fromStdString(parsed.error().message);
    const bool changed = error != m_errorText;
    m_errorText = error;
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
    if (changed) {
        emit validityChanged(error.isEmpty(), error);
    }
    if (error.isEmpty() && t != m_valid) {
        m_valid = t;
        m_base = t;
        emit configEdited(t);
    }
}

}  // namespace kiln::ui::training
