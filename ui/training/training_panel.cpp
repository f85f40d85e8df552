// SPDX-License-Identifier: Apache-2.0
// TrainingPanel: controls, progress, live charts, configuration and run history.
#include "ui/training/training_panel.h"

#include "app/common/error_text.h"
#include "engine/api/pretrained.h"
#include "ui/evaluate/evaluate_view.h"

#include <QCheckBox>
#include <QDateTime>
#include <QDialog>
#include <QDir>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>
#include <map>
#include <set>

#include "ui/charts/charts_panel.h"
#include "ui/training/histogram_view.h"
#include "ui/training/lr_finder_dialog.h"
#include "ui/training/run_list_model.h"
#include "ui/training/training_config_form.h"

namespace kiln::ui::training {

using engine::api::TrainEvent;
using nlohmann::json;
using charts::Split;

namespace {

QString formatDuration(double seconds)
{
    const auto s = static_cast<qint64>(std::llround(std::max(0.0, seconds)));
    if (s >= 3600) {
        return QStringLiteral("%1:%2:%3")
            .arg(s / 3600)
            .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
            .arg(s % 60, 2, 10, QLatin1Char('0'));
    }
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

double nowSeconds()
{
    return QDateTime::currentMSecsSinceEpoch() / 1000.0;
}

// "a.b.c" -> value for every leaf of a JSON document (arrays indexed).
void flatten(const json& j, const std::string& prefix, std::map<std::string, std::string>& out)
{
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        }
    } else if (j.is_array() && !j.empty()) {
        for (size_t i = 0; i < j.size(); ++i) {
            flatten(j[i], prefix + "[" + std::to_string(i) + "]", out);
        }
    } else {
        out[prefix] = j.dump();
    }
}

}  // namespace

TrainingPanel::TrainingPanel(QWidget* parent) : QWidget(parent)
{
    m_session = new TrainingSession(this);
    auto* layout = new QVBoxLayout(this);

    auto* controls = new QHBoxLayout;
    m_train = new QPushButton(this);
    m_train->setObjectName(QStringLiteral("trainButton"));
    m_pause = new QPushButton(this);
    m_pause->setObjectName(QStringLiteral("pauseButton"));
    m_stop = new QPushButton(this);
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_lrLabel = new QLabel(this);
    m_lr = new QDoubleSpinBox(this);
    m_lr->setObjectName(QStringLiteral("liveLearningRate"));
    m_lr->setDecimals(7);
    m_lr->setRange(1e-7, 10);
    m_lr->setSingleStep(1e-4);
    m_lr->setValue(1e-3);
    m_lrApply = new QPushButton(this);
    m_lrApply->setObjectName(QStringLiteral("applyLearningRate"));
    controls->addWidget(m_train);
    controls->addWidget(m_pause);
    controls->addWidget(m_stop);
    controls->addSpacing(16);
    controls->addWidget(m_lrLabel);
    controls->addWidget(m_lr);
    controls->addWidget(m_lrApply);
    controls->addStretch();
    layout->addLayout(controls);

    // Starting weights (transfer learning).
    auto* weightsRow = new QHBoxLayout;
    m_weightsLabel = new QLabel(this);
    m_weights = new QLineEdit(this);
    m_weights->setObjectName(QStringLiteral("startWeights"));
    m_weights->setClearButtonEnabled(true);
    m_weightsBrowse = new QPushButton(this);
    m_weightsBrowse->setObjectName(QStringLiteral("browseStartWeights"));
    m_weightsPartial = new QCheckBox(this);
    m_weightsPartial->setObjectName(QStringLiteral("startWeightsPartial"));
    weightsRow->addWidget(m_weightsLabel);
    weightsRow->addWidget(m_weights, 1);
    weightsRow->addWidget(m_weightsBrowse);
    weightsRow->addWidget(m_weightsPartial);
    layout->addLayout(weightsRow);

    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("trainingProgress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    layout->addWidget(m_progress);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("trainingStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    m_tabs = new QTabWidget(this);
    m_charts = new charts::ChartsPanel(m_tabs);
    m_form = new TrainingConfigForm(m_tabs);
    auto* runsPage = new QWidget(m_tabs);
    auto* runsLayout = new QVBoxLayout(runsPage);
    auto* runsTools = new QHBoxLayout;
    m_runFilter = new QLineEdit(runsPage);
    m_runFilter->setObjectName(QStringLiteral("runFilter"));
    m_runFilter->setClearButtonEnabled(true);
    m_overlay = new QPushButton(runsPage);
    m_compare = new QPushButton(runsPage);
    m_clone = new QPushButton(runsPage);
    m_delete = new QPushButton(runsPage);
    m_evaluate = new QPushButton(runsPage);
    m_evaluate->setObjectName(QStringLiteral("evaluateRun"));
    m_overlay->setObjectName(QStringLiteral("overlayRuns"));
    m_compare->setObjectName(QStringLiteral("compareRuns"));
    m_clone->setObjectName(QStringLiteral("cloneRun"));
    m_delete->setObjectName(QStringLiteral("deleteRun"));
    runsTools->addWidget(m_runFilter, 1);
    for (auto* b : {m_overlay, m_compare, m_evaluate, m_clone, m_delete}) {
        runsTools->addWidget(b);
    }
    runsLayout->addLayout(runsTools);
    m_runs = new RunListModel(this);
    m_runsProxy = new QSortFilterProxyModel(this);
    m_runsProxy->setSourceModel(m_runs);
    m_runsProxy->setSortRole(RunListModel::SortRole);
    m_runsProxy->setFilterKeyColumn(RunListModel::Name);
    m_runsProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_runsView = new QTableView(runsPage);
    m_runsView->setObjectName(QStringLiteral("runsView"));
    m_runsView->setModel(m_runsProxy);
    m_runsView->setSortingEnabled(true);
    m_runsView->sortByColumn(RunListModel::Created, Qt::DescendingOrder);
    m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_runsView->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    m_runsView->horizontalHeader()->setStretchLastSection(true);
    m_runsView->verticalHeader()->hide();
    runsLayout->addWidget(m_runsView, 1);
    m_tabs->addTab(m_charts, QString());
    m_tabs->addTab(m_form, QString());
    m_tabs->addTab(runsPage, QString());
    m_histograms = new HistogramView(m_tabs);
    m_histograms->setObjectName(QStringLiteral("histogramView"));
    m_tabs->addTab(m_histograms, QString());
    layout->addWidget(m_tabs, 1);
    retranslate();
    onState(TrainingSession::State::Idle);

    connect(m_train, &QPushButton::clicked, this, &TrainingPanel::startTraining);
    connect(m_pause, &QPushButton::clicked, this, &TrainingPanel::togglePause);
    connect(m_stop, &QPushButton::clicked, this, &TrainingPanel::stopTraining);
    connect(m_lrApply, &QPushButton::clicked, this, [this] {
        m_session->setLearningRate(m_lr->value());
    });
    connect(m_session, &TrainingSession::stateChanged, this, &TrainingPanel::onState);
    connect(m_session, &TrainingSession::eventsArrived, this, &TrainingPanel::onEvents);
    connect(m_session, &TrainingSession::finished, this, &TrainingPanel::onFinished);
    connect(m_session, &TrainingSession::weightsLoaded, this, &TrainingPanel::onWeightsLoaded);
    connect(m_weightsBrowse, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Start from weights"), m_weights->text(),
                                                          tr("Weights (*.safetensors)"));
        if (!file.isEmpty()) {
            m_weights->setText(file);
        }
    });
    connect(m_session, &TrainingSession::prepared, this, [this](const QString& runDir, qint64 runId, qint64) {
        m_liveKey = runId > 0 ? QStringLiteral("run-%1").arg(runId) : runDir;
        const QString name = runId > 0 && m_runs->history() ? tr("Run %1").arg(runId) : QStringLiteral("live");
        m_charts->setRun(m_liveKey, name, charts::runColour(int(runId)));
        m_histograms->clear(runId > 0 ? tr("Run %1, live").arg(runId) : tr("This run, live"));
        m_runs->refresh();
    });
    connect(m_form, &TrainingConfigForm::findLearningRateRequested, this, &TrainingPanel::findLearningRate);
    connect(m_form, &TrainingConfigForm::configEdited, this, [this](const json& training) {
        m_project.training = training;
        emit trainingConfigChanged(training);
    });
    connect(m_form, &TrainingConfigForm::lrMultipliersRequested, this, &TrainingPanel::lrMultipliersRequested);
    connect(m_form, &TrainingConfigForm::validityChanged, this, [this](bool valid, const QString&) {
        m_train->setEnabled(valid && !m_session->isActive());
    });
    connect(m_runFilter, &QLineEdit::textChanged, m_runsProxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_runsView->selectionModel(), &QItemSelectionModel::selectionChanged, this, &TrainingPanel::onRunSelection);
    connect(m_overlay, &QPushButton::clicked, this, [this] {
        for (qint64 id : selectedRuns()) {
            overlayRun(id);
        }
        m_tabs->setCurrentWidget(m_charts);
    });
    connect(m_compare, &QPushButton::clicked, this, &TrainingPanel::compareSelected);
    connect(m_evaluate, &QPushButton::clicked, this, &TrainingPanel::evaluateSelected);
    connect(m_clone, &QPushButton::clicked, this, &TrainingPanel::cloneSelected);
    connect(m_delete, &QPushButton::clicked, this, &TrainingPanel::deleteSelected);
}

TrainingPanel::~TrainingPanel() = default;

void TrainingPanel::retranslate()
{
    m_train->setText(tr("Train"));
    m_pause->setText(m_session->state() == TrainingSession::State::Paused ? tr("Resume") : tr("Pause"));
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stops after the current step and saves the full training state, so the run can be resumed."));
    m_lrLabel->setText(tr("Learning rate"));
    m_weightsLabel->setText(tr("Start from weights"));
    m_weights->setPlaceholderText(tr("none: initialise the weights"));
    m_weightsBrowse->setText(tr("Browse…"));
    m_weightsPartial->setText(tr("Load matching tensors only"));
    m_weightsPartial->setToolTip(tr("Loads the tensors whose name and shape match the model and initialises the "
                                    "others (transfer learning); the training log lists what loaded."));
    m_lrApply->setText(tr("Apply now"));
    m_lrApply->setToolTip(tr("Changes the learning rate of the running training from the next step on."));
    m_tabs->setTabText(0, tr("Charts"));
    m_tabs->setTabText(1, tr("Configuration"));
    m_tabs->setTabText(2, tr("Runs"));
    m_tabs->setTabText(3, tr("Histograms"));
    m_runFilter->setPlaceholderText(tr("Filter runs by name"));
    m_overlay->setText(tr("Show in charts"));
    m_compare->setText(tr("Compare"));
    m_clone->setText(tr("Clone configuration"));
    m_delete->setText(tr("Delete"));
    m_evaluate->setText(tr("Evaluate"));
    m_evaluate->setToolTip(tr("Evaluates the selected run's weights: confusion matrix, per-class figures, ROC curves and samples."));
}

void TrainingPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
    }
    QWidget::changeEvent(event);
}

void TrainingPanel::setProjectProvider(ProjectProvider provider)
{
    m_provider = std::move(provider);
}

void TrainingPanel::setProject(const engine::io::Project& project, const QString& path, const QString& source)
{
    const QString from = source.isEmpty() ? path : source;
    const bool otherProject = path != m_projectPath || from != m_sourcePath;
    m_project = project;
    m_projectPath = path;
    m_sourcePath = from;
    applyPretrained(otherProject);
    m_form->setGraph(project.graph);
    m_form->setConfig(project.training);
    m_form->setDataSection(project.data);
    m_train->setEnabled(m_form->isValid() && !m_session->isActive());
    if (!path.isEmpty()) {
        QString error;
        if (!m_runs->open(QString::fromStdString(engine::api::runStorePath(path.toStdString())), &error)) {
            emit notice(error, 1);
        }
    } else {
        m_runs->open(QString());
    }
    // Another project: its newest finished run is in the charts instead of the last project's curves.
    if (otherProject && !m_session->isActive()) {
        m_charts->clear();
        qint64 newest = -1;
        qint64 newestMs = 0;
        for (int row = 0; row < m_runs->rowCount(); ++row) {
            const auto* run = m_runs->runAt(row);
            if (run && run->status != engine::api::RunStatus::Running && (newest < 0 || run->createdMs > newestMs)) {
                newest = run->id;
                newestMs = run->createdMs;
            }
        }
        if (newest >= 0) {
            overlayRun(newest);
        }
        // The Histograms tab likewise shows that run's recorded histograms.
        const auto* run = newest >= 0 ? m_runs->runAt(m_runs->rowOf(newest)) : nullptr;
        if (run && !run->runDir.empty()) {
            m_histograms->loadRun(QString::fromStdString(run->runDir),
                                  tr("Run %1: %2").arg(run->id).arg(QString::fromStdString(run->name)));
        } else {
            m_histograms->clear();
        }
    }
}

void TrainingPanel::findLearningRate()
{
    engine::io::Project project = m_project;
    QString path = m_projectPath;
    if (m_provider && !m_provider(project, path)) {
        setStatus(tr("Open or create a project first."));
        return;
    }
    if (!m_form->isValid()) {
        setStatus(tr("The training configuration has a problem: %1").arg(m_form->errorText()));
        return;
    }
    project.training = m_form->config();
    auto* dialog = new LrFinderDialog(project, path, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &LrFinderDialog::learningRateChosen, m_form, &TrainingConfigForm::setLearningRate);
    dialog->show();
    dialog->start();
}

void TrainingPanel::applyPretrained(bool otherProject)
{
    const auto pretrained = m_project.extra.find("pretrained");
    if (pretrained == m_project.extra.end() || !pretrained->is_object()) {
        m_preprocessingWarning.clear();
        return;
    }
    // A project made from a backbone starts from the backbone's weights, loaded by name, so that
    // its new head starts fresh; the user may still clear or change the file. The file is named
    // as data paths are: relative to the project, or through ${KILN_DATA} (the texture example).
    // An example opened in place has no folder of its own; a backbone the catalogue caches is then
    // found in the data folder, as New from Pretrained finds it.
    if (otherProject) {
        const auto w = engine::api::pretrainedWeights(m_project, m_sourcePath.toStdString());
        if (!w.path.empty()) {
            setStartWeights(QDir::toNativeSeparators(QString::fromStdString(w.path)), true);
            if (!w.exists && w.backbone && !w.backbone->fetchCommand.empty())
                emit notice(tr("The start weights of %1 are not on this machine (%2 is missing). Get them once, in Kiln's source folder, with:\n%3")
                                .arg(QString::fromStdString(w.backbone->name), QDir::toNativeSeparators(QString::fromStdString(w.path)),
                                     QString::fromStdString(w.backbone->fetchCommand)),
                            1);
        }
    }
    // Data prepared otherwise than the backbone was trained with: said once per new difference.
    QStringList lines;
    for (const auto& m : engine::api::preprocessingMismatches(m_project)) {
        const QString backbone = QString::fromStdString(m.backbone), formula = QString::fromStdString(m.formula);
        switch (m.kind) {
        case engine::api::PreprocessingMismatch::Kind::Size:
            lines << tr("The data transforms make %1×%2 pictures, but %3 was trained on %4×%5.")
                         .arg(m.height).arg(m.width).arg(backbone).arg(m.wantHeight).arg(m.wantWidth);
            break;
        case engine::api::PreprocessingMismatch::Kind::Normalization:
            lines << tr("The data transforms normalise the pictures otherwise than %1 expects (%2).").arg(backbone, formula);
            break;
        case engine::api::PreprocessingMismatch::Kind::NoNormalization:
            lines << tr("The data transforms do not normalise the pictures, but %1 expects %2.").arg(backbone, formula);
            break;
        }
    }
    const QString text = lines.join(QLatin1Char('\n'));
    if (text != m_preprocessingWarning && !text.isEmpty())
        emit notice(tr("This project was made from a pretrained backbone: %1").arg(text), 1);
    m_preprocessingWarning = text;
}

void TrainingPanel::setStartWeights(const QString& path, bool partial)
{
    m_weights->setText(path);
    m_weightsPartial->setChecked(partial);
}

void TrainingPanel::onWeightsLoaded(const engine::api::WeightsReport& r) {
    const QStringList lines = kiln::app::WeightsText::describe(r);
    m_weightsReport = lines;
    emit notice(lines.join(QLatin1Char('\n')), r.exact() ? 0 : 1);
}

void TrainingPanel::setStatus(const QString& text)
{
    m_status->setText(text);
}

void TrainingPanel::startTraining()
{
    if (m_session->isActive()) {
        return;
    }
    engine::io::Project project = m_project;
    QString path = m_projectPath;
    if (m_provider && !m_provider(project, path)) {
        setStatus(tr("Open or create a project first."));
        return;
    }
    if (path.isEmpty()) {
        setStatus(tr("Save the project first: runs are kept next to the project file."));
        return;
    }
    if (!m_form->isValid()) {
        setStatus(tr("The training configuration has a problem: %1").arg(m_form->errorText()));
        m_tabs->setCurrentWidget(m_form);
        return;
    }
    if (m_provider) {
        // The document may have changed since the form last showed it: keep the form's edits only
        // where the document agrees with what the form started from.
        m_form->setGraph(project.graph);
    }
    project.training = m_form->config();
    if (m_runs->storePath().isEmpty() || path != m_projectPath) {
        m_projectPath = path;
        m_runs->open(QString::fromStdString(engine::api::runStorePath(path.toStdString())));
    }
    m_batch = project.training.value("batch_size", int64_t(32));
    m_totalSteps = 0;
    m_inputBoundNoticed = false;
    m_badSamplesSeen = 0;
    m_markedStage = -1;
    m_weightsReport.clear();
    m_wallStart = nowSeconds();
    m_progress->setRange(0, 0);  // busy until the data is loaded
    setStatus(tr("Loading the data..."));
    if (const auto it = project.training.find("optimizer"); it != project.training.end() && it->is_object()) {
        m_lr->setValue(it->value("learning_rate", m_lr->value()));
    }
    engine::api::TrainingOptions options = m_options;
    options.weightsPath = m_weights->text().trimmed().toStdString();
    options.weightsPartial = m_weightsPartial->isChecked();
    m_session->start(project, path, options);
}

void TrainingPanel::togglePause()
{
    if (m_session->state() == TrainingSession::State::Paused) {
        m_session->resume();
    } else {
        m_session->pause();
    }
}

void TrainingPanel::stopTraining()
{
    m_session->stop();
}

void TrainingPanel::onState(TrainingSession::State state)
{
    using S = TrainingSession::State;
    const bool active = state == S::Preparing || state == S::Running || state == S::Paused || state == S::Stopping;
    m_train->setEnabled(!active && m_form->isValid());
    m_pause->setEnabled(state == S::Running || state == S::Paused);
    m_pause->setText(state == S::Paused ? tr("Resume") : tr("Pause"));
    m_stop->setEnabled(state == S::Running || state == S::Paused || state == S::Preparing);
    m_lrApply->setEnabled(state == S::Running || state == S::Paused);
    m_form->setEnabled(!active);
    for (QWidget* w : {static_cast<QWidget*>(m_weights), static_cast<QWidget*>(m_weightsBrowse),
                       static_cast<QWidget*>(m_weightsPartial)}) {
        w->setEnabled(!active);
    }
    if (state == S::Paused) {
        setStatus(tr("Paused. Resume continues with the next step."));
    } else if (state == S::Stopping) {
        setStatus(tr("Stopping after the current step..."));
    }
}

void TrainingPanel::onEvents(const std::vector<TrainEvent>& events)
{
    const double now = nowSeconds();
    const TrainEvent* lastStep = nullptr;
    for (const auto& e : events) {
        switch (e.kind) {
        case TrainEvent::Kind::Begin:
            m_totalSteps = int64_t(e.epochs) * e.stepsPerEpoch;
            m_progress->setRange(0, int(std::min<int64_t>(m_totalSteps, std::numeric_limits<int>::max())));
            m_progress->setValue(int(std::min<int64_t>(e.globalStep, m_progress->maximum())));
            break;
        case TrainEvent::Kind::Step: {
            const double epoch = e.epoch - 1 + (e.stepsPerEpoch > 0 ? double(e.step) / double(e.stepsPerEpoch) : 0.0);
            if (e.stage >= 0 && e.stage != m_markedStage) {
                // Stages begin at epoch boundaries: the marker sits where the stage's first step was.
                m_markedStage = e.stage;
                const double stageEpoch = e.stepsPerEpoch > 0 ? double(e.stageStartStep) / double(e.stepsPerEpoch) : e.epoch - 1;
                m_charts->addMarker(m_liveKey, e.stageStartStep, stageEpoch, now,
                                    tr("Stage %1: %2").arg(e.stage + 1).arg(QString::fromStdString(e.stageName)));
            }
            m_charts->append(QStringLiteral("loss"), m_liveKey, Split::Train, e.globalStep, epoch, now, e.loss);
            for (const auto& m : e.metrics) {
                m_charts->append(QString::fromStdString(m.name), m_liveKey, Split::Train, e.globalStep, epoch, now, m.value);
            }
            m_charts->append(QStringLiteral("learning_rate"), m_liveKey, Split::Train, e.globalStep, epoch, now,
                             e.learningRate);
            if (e.samplesPerSecond > 0) {
                m_charts->append(QStringLiteral("samples_per_second"), m_liveKey, Split::Train, e.globalStep, epoch, now,
                                 e.samplesPerSecond);
                m_charts->append(QStringLiteral("step_time_ms"), m_liveKey, Split::Train, e.globalStep, epoch, now,
                                 1000.0 * double(m_batch) / e.samplesPerSecond);
            }
            if (e.deviceMemory.inUse > 0) {
                m_charts->append(QStringLiteral("gpu_memory_gib"), m_liveKey, Split::Train, e.globalStep, epoch, now,
                                 double(e.deviceMemory.inUse) / double(1ull << 30));
            }
            if (e.inputWaitFraction >= 0) {
                m_charts->append(QStringLiteral("input_wait_percent"), m_liveKey, Split::Train, e.globalStep, epoch, now,
                                 100.0 * e.inputWaitFraction);
                // Judged once the epoch has run long enough for the fraction to mean something.
                if (!m_inputBoundNoticed && e.step >= 20 && e.inputWaitFraction > 0.3) {
                    m_inputBoundNoticed = true;
                    emit notice(tr("Training is input-bound: each step waited for data %1% of the time. Add pipeline "
                                   "workers, turn on the cache or make the pictures smaller in the data settings.")
                                    .arg(qRound(100.0 * e.inputWaitFraction)),
                                1);
                }
            }
            if (e.badSamples > m_badSamplesSeen) {
                m_badSamplesSeen = e.badSamples;
            }
            lastStep = &e;
            break;
        }
        case TrainEvent::Kind::Epoch:
            if (e.validation) {
                const double epoch = e.epoch;
                m_charts->append(QStringLiteral("loss"), m_liveKey, Split::Validation, e.globalStep, epoch, now,
                                 e.validation->loss);
                for (const auto& m : e.validation->metrics) {
                    m_charts->append(QString::fromStdString(m.name), m_liveKey, Split::Validation, e.globalStep, epoch,
                                     now, m.value);
                }
            }
            m_histograms->addEpoch(e.epoch, e.histograms);
            break;
        case TrainEvent::Kind::LearningRateChanged:
            setStatus(tr("Learning rate set to %1.").arg(e.learningRate, 0, 'g', 6));
            break;
        case TrainEvent::Kind::End:
            if (!e.message.empty()) {
                setStatus(QString::fromStdString(e.message));
            }
            break;
        default:
            break;
        }
    }
    if (lastStep) {
        const auto& e = *lastStep;
        m_progress->setValue(int(std::min<int64_t>(e.globalStep, m_progress->maximum())));
        QString text = tr("Epoch %1/%2 · step %3/%4 · loss %5 · %6 samples/s · ETA %7")
                           .arg(e.epoch)
                           .arg(e.epochs)
                           .arg(e.step)
                           .arg(e.stepsPerEpoch)
                           .arg(e.loss, 0, 'f', 4)
                           .arg(e.samplesPerSecond, 0, 'f', 0)
                           .arg(formatDuration(e.etaSeconds));
        if (e.stage >= 0) {
            text = tr("Stage %1 (%2)").arg(e.stage + 1).arg(QString::fromStdString(e.stageName)) + QStringLiteral(" · ") + text;
        }
        if (e.inputWaitFraction >= 0) {
            text += QStringLiteral(" · ") + tr("waiting for data %1%").arg(qRound(100.0 * e.inputWaitFraction));
        }
        if (e.deviceMemory.inUse > 0) {
            text += QStringLiteral(" · ") + tr("GPU memory %1 GiB").arg(double(e.deviceMemory.inUse) / double(1ull << 30), 0, 'f', 2);
        }
        if (e.badSamples > 0) {
            text += QStringLiteral(" · ") + tr("%n unreadable file(s) left out", "", int(e.badSamples));
        }
        setStatus(text);
        m_progress->setFormat(tr("%p% · ETA %1").arg(formatDuration(e.etaSeconds)));
    }
}

void TrainingPanel::onFinished(bool ok, const QString& message, const QJsonObject& results)
{
    m_progress->setRange(0, std::max(1, m_progress->maximum()));
    m_runs->refresh();
    if (!ok) {
        setStatus(tr("Training failed: %1").arg(message));
        emit notice(tr("Training failed: %1").arg(message), 2);
    } else {
        QString text = message.isEmpty() ? tr("Training finished.") : message;
        if (results.contains(QStringLiteral("val_loss"))) {
            text += QLatin1Char(' ') + tr("Validation loss %1.").arg(results.value(QStringLiteral("val_loss")).toDouble(), 0, 'f', 4);
        }
        if (results.contains(QStringLiteral("bad_samples"))) {
            const auto bad = results.value(QStringLiteral("bad_samples")).toArray();
            text += QLatin1Char(' ') + tr("%n unreadable file(s) were left out (listed in the run's results).", "",
                                          int(bad.size()));
        }
        if (results.contains(QStringLiteral("skipped_steps"))) {
            text += QLatin1Char(' ') + tr("%n step(s) skipped because float16 gradients overflowed.", "",
                                          results.value(QStringLiteral("skipped_steps")).toInt());
        }
        if (results.contains(QStringLiteral("test_accuracy"))) {
            text += QLatin1Char(' ') +
                    tr("Test accuracy %1.").arg(results.value(QStringLiteral("test_accuracy")).toDouble(), 0, 'f', 4);
        }
        setStatus(text);
        emit notice(text, 0);
    }
    emit runFinished(m_session->runId(), m_session->runDir(), ok);
}

QString TrainingPanel::selectedRunDir() const
{
    const QList<qint64> ids = selectedRuns();
    const auto* run = ids.size() == 1 ? m_runs->runAt(m_runs->rowOf(ids.front())) : nullptr;
    return run ? QString::fromStdString(run->runDir) : QString();
}

void TrainingPanel::selectRun(qint64 runId)
{
    const int row = m_runs->rowOf(runId);
    if (row < 0) {
        return;
    }
    const QModelIndex index = m_runsProxy->mapFromSource(m_runs->index(row, 0));
    m_runsView->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void TrainingPanel::onRunSelection()
{
    const QList<qint64> ids = selectedRuns();
    const auto* run = ids.size() == 1 ? m_runs->runAt(m_runs->rowOf(ids.front())) : nullptr;
    if (!run) {
        emit selectedRunChanged(QString(), QString());
        return;
    }
    const QString name = QString::fromStdString(run->name);
    emit selectedRunChanged(QString::fromStdString(run->runDir), name);
    // The live run's histograms come from its events while it trains.
    if (m_session->isActive() && m_liveKey == QStringLiteral("run-%1").arg(run->id)) {
        return;
    }
    m_histograms->loadRun(QString::fromStdString(run->runDir), tr("Run %1: %2").arg(run->id).arg(name));
}

QList<qint64> TrainingPanel::selectedRuns() const
{
    QList<qint64> ids;
    for (const QModelIndex& index : m_runsView->selectionModel()->selectedRows()) {
        ids << m_runsProxy->mapToSource(index).data(RunListModel::RunIdRole).toLongLong();
    }
    return ids;
}

void TrainingPanel::overlayRun(qint64 runId)
{
    auto* history = m_runs->history();
    const int row = m_runs->rowOf(runId);
    if (!history || row < 0) {
        return;
    }
    const auto* run = m_runs->runAt(row);
    const QString key = QStringLiteral("run-%1").arg(runId);
    if (key == m_liveKey && m_session->isActive()) {
        return;  // already live
    }
    // The run list does not carry the last step and epoch (the store counts them per run on
    // request), so they are asked for here.
    auto counted = history->run(runId);
    if (counted.ok()) {
        run = &*counted;
    }
    m_charts->removeRun(key);
    m_charts->setRun(key, QString::fromStdString(run->name), charts::runColour(int(runId)));
    // Steps are stored per step and validation per epoch: the run's steps per epoch place each on
    // both axes (a validation value at its epoch's last step, a step at its fraction of epochs).
    const double stepsPerEpoch = run->lastEpoch > 0 ? double(run->lastStep) / run->lastEpoch : 0.0;
    auto addSeries = [&](engine::api::MetricScope scope, Split split, const std::string& name, const QString& metric) {
        auto points = history->series(runId, scope, name);
        if (!points.ok()) {
            return;
        }
        for (const auto& p : *points) {
            if (scope == engine::api::MetricScope::Epoch) {
                const auto step = stepsPerEpoch > 0 ? int64_t(std::llround(double(p.step) * stepsPerEpoch)) : p.step;
                m_charts->append(metric, key, split, step, double(p.step), p.wallTime, p.value);
            } else {
                m_charts->append(metric, key, split, p.step, stepsPerEpoch > 0 ? double(p.step) / stepsPerEpoch : 0.0,
                                 p.wallTime, p.value);
            }
        }
    };
    if (auto names = history->metricNames(runId, engine::api::MetricScope::Step); names.ok()) {
        for (const auto& n : *names) {
            addSeries(engine::api::MetricScope::Step, Split::Train, n, QString::fromStdString(n));
        }
    }
    // Validation values are recorded per epoch ("val_<metric>") and share the metric's chart.
    if (auto names = history->metricNames(runId, engine::api::MetricScope::Epoch); names.ok()) {
        for (const auto& n : *names) {
            if (n.rfind("val_", 0) == 0) {
                addSeries(engine::api::MetricScope::Epoch, Split::Validation, n, QString::fromStdString(n.substr(4)));
            }
        }
    }
}

QString TrainingPanel::runForEvaluation() const
{
    const QList<qint64> ids = selectedRuns();
    if (ids.size() == 1) {
        if (const auto* run = m_runs->runAt(m_runs->rowOf(ids.front()))) {
            return QString::fromStdString(run->runDir);
        }
    }
    const engine::api::RunInfo* newest = nullptr;
    for (int row = 0; row < m_runs->rowCount(); ++row) {
        const auto* run = m_runs->runAt(row);
        if (!run || run->runDir.empty()) {
            continue;
        }
        if (run->status != engine::api::RunStatus::Completed && run->status != engine::api::RunStatus::Stopped) {
            continue;
        }
        if (!newest || run->createdMs > newest->createdMs) {
            newest = run;
        }
    }
    return newest ? QString::fromStdString(newest->runDir) : QString();
}

void TrainingPanel::evaluateSelected()
{
    const QList<qint64> ids = selectedRuns();
    if (ids.size() != 1) {
        setStatus(tr("Select one run to evaluate."));
        return;
    }
    const auto* run = m_runs->runAt(m_runs->rowOf(ids.front()));
    if (!run) {
        return;
    }
    engine::io::Project project = m_project;
    QString path = m_projectPath;
    if (m_provider && !m_provider(project, path)) {
        setStatus(tr("Open or create a project first."));
        return;
    }
    auto* window = new QWidget(this, Qt::Window);
    window->setObjectName(QStringLiteral("evaluateWindow"));
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->setWindowTitle(tr("Evaluate %1").arg(QString::fromStdString(run->name)));
    auto* layout = new QVBoxLayout(window);
    auto* view = new evaluate::EvaluateView(window);
    layout->addWidget(view);
    view->setProject(project, path);
    view->setWeights(QString::fromStdString(run->runDir));
    window->resize(900, 650);
    window->show();
    view->evaluate();
}

void TrainingPanel::compareSelected()
{
    const QList<qint64> ids = selectedRuns();
    if (ids.size() != 2) {
        setStatus(tr("Select two runs to compare."));
        return;
    }
    const auto* a = m_runs->runAt(m_runs->rowOf(ids[0]));
    const auto* b = m_runs->runAt(m_runs->rowOf(ids[1]));
    if (!a || !b) {
        return;
    }
    std::map<std::string, std::string> fa, fb;
    flatten(json::parse(a->configJson, nullptr, false), "", fa);
    flatten(json::parse(b->configJson, nullptr, false), "", fb);
    fa["graph_hash"] = a->graphHash;
    fb["graph_hash"] = b->graphHash;
    fa["dataset_fingerprint"] = a->datasetFingerprint;
    fb["dataset_fingerprint"] = b->datasetFingerprint;

    QDialog dialog(this);
    dialog.setWindowTitle(tr("Compare runs"));
    auto* layout = new QVBoxLayout(&dialog);
    auto* tree = new QTreeWidget(&dialog);
    tree->setObjectName(QStringLiteral("configDiff"));
    tree->setHeaderLabels({tr("Setting"), QString::fromStdString(a->name), QString::fromStdString(b->name)});
    std::set<std::string> keys;
    for (const auto& [k, v] : fa) {
        keys.insert(k);
    }
    for (const auto& [k, v] : fb) {
        keys.insert(k);
    }
    const QString missing = tr("(not set)");
    for (const auto& k : keys) {
        const auto ia = fa.find(k), ib = fb.find(k);
        const QString va = ia == fa.end() ? missing : QString::fromStdString(ia->second);
        const QString vb = ib == fb.end() ? missing : QString::fromStdString(ib->second);
        if (va != vb) {
            new QTreeWidgetItem(tree, {QString::fromStdString(k), va, vb});
        }
    }
    if (tree->topLevelItemCount() == 0) {
        new QTreeWidgetItem(tree, {tr("The configurations are identical.")});
    }
    tree->resizeColumnToContents(0);
    layout->addWidget(tree);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(720, 420);
    overlayRun(ids[0]);
    overlayRun(ids[1]);
    dialog.exec();
}

void TrainingPanel::cloneSelected()
{
    const QList<qint64> ids = selectedRuns();
    if (ids.size() != 1) {
        setStatus(tr("Select one run to clone its configuration."));
        return;
    }
    const auto* run = m_runs->runAt(m_runs->rowOf(ids[0]));
    const json config = json::parse(run->configJson, nullptr, false);
    if (!config.is_object() || !config.contains("training")) {
        setStatus(tr("This run has no stored configuration."));
        return;
    }
    m_form->setConfig(config["training"]);
    m_project.training = config["training"];
    emit trainingConfigChanged(config["training"]);
    m_tabs->setCurrentWidget(m_form);
    setStatus(tr("Configuration of \"%1\" copied into the project.").arg(QString::fromStdString(run->name)));
}

void TrainingPanel::deleteSelected()
{
    const QList<qint64> ids = selectedRuns();
    if (ids.isEmpty()) {
        return;
    }
    if (QMessageBox::question(this, tr("Delete runs"),
                              tr("Delete %n run(s) from the history? Their folders on disk are kept.", nullptr,
                                 int(ids.size()))) != QMessageBox::Yes) {
        return;
    }
    for (qint64 id : ids) {
        QString error;
        if (!m_runs->removeRun(id, &error) && !error.isEmpty()) {
            emit notice(error, 2);
        }
        m_charts->removeRun(QStringLiteral("run-%1").arg(id));
    }
}

}  // namespace kiln::ui::training
