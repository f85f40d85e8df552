// SPDX-License-Identifier: Apache-2.0
// The sweep dialog: the spec comes from the controls through parseSweepSpec (so the studio and
// kiln-train refuse the same specs with the same words); a QtConcurrent job runs api::runSweep
// and streams its events back over queued calls; the chart replots on a coalescing timer.
#include "ui/training/sweep_dialog.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <qcustomplot.h>

#include "app/common/error_text.h"
#include "engine/api/training_setup.h"
#include "engine/api/training_config.h"
#include "ui/charts/chart_theme.h"

namespace kiln::ui::training {

namespace {

using engine::api::SweepParamKind;
using engine::api::TrialStatus;
using nlohmann::json;

struct Outcome {
    bool ok = false;
    QString error;
    engine::api::SweepOutcome result;
};

enum Column { ColTrial, ColStatus, ColObjective, ColEpochs, ColSeconds, ColFirstParam };
enum ParamColumn { ParamPath, ParamKind, ParamValues };

const SweepParamKind kKinds[] = {SweepParamKind::Choice, SweepParamKind::Uniform, SweepParamKind::LogUniform,
                                 SweepParamKind::IntUniform};

QString valueText(const json& v) {
    if (v.is_number_integer()) return QString::number(v.get<int64_t>());
    if (v.is_number()) return QString::number(v.get<double>(), 'g', 4);
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    if (v.is_boolean()) return v.get<bool>() ? QStringLiteral("true") : QStringLiteral("false");
    return QString::fromStdString(v.dump());
}

// A typed-in value: an integer, a number, true/false, else the text.
json parseValue(const QString& text) {
    const QString t = text.trimmed();
    bool ok = false;
    const qlonglong i = t.toLongLong(&ok);
    if (ok) return int64_t(i);
    const double d = t.toDouble(&ok);
    if (ok) return d;
    if (t == QLatin1String("true")) return true;
    if (t == QLatin1String("false")) return false;
    return t.toStdString();
}

// The position of a value on its parameter's axis, 0..1.
double axisPosition(const engine::api::SweepParameter& p, const json& v, double lo, double hi) {
    if (p.kind == SweepParamKind::Choice) {
        const auto it = std::find(p.values.begin(), p.values.end(), v);
        const auto n = double(p.values.size());
        return n <= 1 ? 0.5 : double(it - p.values.begin()) / (n - 1);
    }
    if (!v.is_number()) return 0.5;
    double x = v.get<double>();
    if (p.kind == SweepParamKind::LogUniform) {
        x = std::log(std::max(x, 1e-300));
        lo = std::log(lo);
        hi = std::log(hi);
    }
    return hi > lo ? std::clamp((x - lo) / (hi - lo), 0.0, 1.0) : 0.5;
}

}  // namespace

SweepDialog::SweepDialog(const engine::io::Project& project, const QString& projectPath, QWidget* parent)
    : QDialog(parent), m_project(project), m_projectPath(projectPath), m_cancel(std::make_shared<std::atomic<bool>>(false)) {
    setObjectName(QStringLiteral("sweepDialog"));
    auto* layout = new QVBoxLayout(this);

    // The spec: parameters on the left, the rest of the settings on the right.
    auto* top = new QHBoxLayout;
    auto* paramsBox = new QVBoxLayout;
    m_paramsLabel = new QLabel(this);
    paramsBox->addWidget(m_paramsLabel);
    m_params = new QTableWidget(0, 3, this);
    m_params->setObjectName(QStringLiteral("sweepParameters"));
    m_params->horizontalHeader()->setSectionResizeMode(ParamPath, QHeaderView::Stretch);
    m_params->horizontalHeader()->setSectionResizeMode(ParamKind, QHeaderView::ResizeToContents);
    m_params->horizontalHeader()->setSectionResizeMode(ParamValues, QHeaderView::Stretch);
    m_params->verticalHeader()->setVisible(false);
    m_params->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_params->setMinimumHeight(140);
    paramsBox->addWidget(m_params, 1);
    auto* paramButtons = new QHBoxLayout;
    m_addParam = new QPushButton(this);
    m_addParam->setObjectName(QStringLiteral("sweepAddParameter"));
    m_removeParam = new QPushButton(this);
    m_removeParam->setObjectName(QStringLiteral("sweepRemoveParameter"));
    paramButtons->addWidget(m_addParam);
    paramButtons->addWidget(m_removeParam);
    paramButtons->addStretch();
    paramsBox->addLayout(paramButtons);
    top->addLayout(paramsBox, 3);

    auto* form = new QFormLayout;
    m_strategyLabel = new QLabel(this);
    m_strategy = new QComboBox(this);
    m_strategy->setObjectName(QStringLiteral("sweepStrategy"));
    m_strategy->addItems({QString(), QString()});
    form->addRow(m_strategyLabel, m_strategy);
    m_trialsLabel = new QLabel(this);
    m_trialsBox = new QSpinBox(this);
    m_trialsBox->setObjectName(QStringLiteral("sweepTrials"));
    m_trialsBox->setRange(0, 10000);  // 0: every point of a grid
    m_trialsBox->setValue(10);
    form->addRow(m_trialsLabel, m_trialsBox);
    m_seedLabel = new QLabel(this);
    m_seed = new QSpinBox(this);
    m_seed->setObjectName(QStringLiteral("sweepSeed"));
    m_seed->setRange(0, 1000000);
    form->addRow(m_seedLabel, m_seed);
    m_epochsLabel = new QLabel(this);
    m_epochs = new QSpinBox(this);
    m_epochs->setObjectName(QStringLiteral("sweepEpochs"));
    m_epochs->setRange(0, 100000);
    form->addRow(m_epochsLabel, m_epochs);
    m_objectiveLabel = new QLabel(this);
    auto* objectiveRow = new QHBoxLayout;
    m_objective = new QComboBox(this);
    m_objective->setObjectName(QStringLiteral("sweepObjective"));
    m_objective->setEditable(true);
    {
        QStringList names = {QStringLiteral("val_loss"), QStringLiteral("loss")};
        if (auto metrics = engine::api::projectMetricNames(m_project, m_project.path); metrics.ok()) {
            for (const auto& m : *metrics) names.prepend(QStringLiteral("val_") + QString::fromStdString(m));
            for (const auto& m : *metrics) names << QString::fromStdString(m);
        }
        m_objective->addItems(names);
    }
    m_mode = new QComboBox(this);
    m_mode->setObjectName(QStringLiteral("sweepMode"));
    m_mode->addItems({QString(), QString()});
    objectiveRow->addWidget(m_objective, 1);
    objectiveRow->addWidget(m_mode);
    form->addRow(m_objectiveLabel, objectiveRow);
    m_pruningLabel = new QLabel(this);
    m_pruning = new QComboBox(this);
    m_pruning->setObjectName(QStringLiteral("sweepPruning"));
    m_pruning->addItems({QString(), QString(), QString()});
    form->addRow(m_pruningLabel, m_pruning);
    m_minEpochsLabel = new QLabel(this);
    m_minEpochs = new QSpinBox(this);
    m_minEpochs->setObjectName(QStringLiteral("sweepMinEpochs"));
    m_minEpochs->setRange(1, 10000);
    form->addRow(m_minEpochsLabel, m_minEpochs);
    m_minTrialsLabel = new QLabel(this);
    m_minTrials = new QSpinBox(this);
    m_minTrials->setObjectName(QStringLiteral("sweepMinTrials"));
    m_minTrials->setRange(1, 1000);
    m_minTrials->setValue(3);
    form->addRow(m_minTrialsLabel, m_minTrials);
    m_reductionLabel = new QLabel(this);
    m_reduction = new QSpinBox(this);
    m_reduction->setObjectName(QStringLiteral("sweepReduction"));
    m_reduction->setRange(2, 100);
    m_reduction->setValue(3);
    form->addRow(m_reductionLabel, m_reduction);
    top->addLayout(form, 2);
    layout->addLayout(top);

    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(this);
    m_run->setObjectName(QStringLiteral("sweepRun"));
    m_cancelButton = new QPushButton(this);
    m_cancelButton->setObjectName(QStringLiteral("sweepCancel"));
    m_apply = new QPushButton(this);
    m_apply->setObjectName(QStringLiteral("sweepApplyBest"));
    m_openSpec = new QPushButton(this);
    m_openSpec->setObjectName(QStringLiteral("sweepOpenSpec"));
    m_saveSpec = new QPushButton(this);
    m_saveSpec->setObjectName(QStringLiteral("sweepSaveSpec"));
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancelButton);
    buttons->addStretch();
    buttons->addWidget(m_openSpec);
    buttons->addWidget(m_saveSpec);
    buttons->addWidget(m_apply);
    layout->addLayout(buttons);

    // Results: the sortable table above the parallel coordinates.
    auto* split = new QSplitter(Qt::Vertical, this);
    m_model = new QStandardItemModel(0, ColFirstParam, this);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_results = new QTableView(split);
    m_results->setObjectName(QStringLiteral("sweepResults"));
    m_results->setModel(m_proxy);
    m_results->setSortingEnabled(true);
    m_results->sortByColumn(ColTrial, Qt::AscendingOrder);
    m_results->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_results->verticalHeader()->setVisible(false);
    m_results->horizontalHeader()->setStretchLastSection(true);
    m_chart = new QCustomPlot(split);
    m_chart->setObjectName(QStringLiteral("sweepChart"));
    m_chart->setMinimumSize(480, 220);
    m_chart->yAxis->setRange(-0.12, 1.12);
    m_chart->yAxis->setTicks(false);
    m_chart->yAxis->setTickLabels(false);
    m_chart->xAxis->grid()->setVisible(false);
    m_chart->yAxis->grid()->setVisible(false);
    charts::followTheme(m_chart);
    split->addWidget(m_results);
    split->addWidget(m_chart);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("sweepStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    m_replot = new QTimer(this);
    m_replot->setSingleShot(true);
    m_replot->setInterval(40);
    connect(m_replot, &QTimer::timeout, this, &SweepDialog::replotChart);
    connect(m_addParam, &QPushButton::clicked, this, [this] {
        addParameterRow();
        m_params->setCurrentCell(m_params->rowCount() - 1, ParamPath);
        if (auto* w = m_params->cellWidget(m_params->rowCount() - 1, ParamPath)) w->setFocus();
    });
    connect(m_removeParam, &QPushButton::clicked, this, [this] {
        const int row = m_params->currentRow();
        if (row >= 0) m_params->removeRow(row);
        updateButtons();
    });
    connect(m_run, &QPushButton::clicked, this, &SweepDialog::start);
    connect(m_cancelButton, &QPushButton::clicked, this, &SweepDialog::cancel);
    connect(m_apply, &QPushButton::clicked, this, &SweepDialog::applyBest);
    connect(m_saveSpec, &QPushButton::clicked, this, [this] { chooseSpecFile(true); });
    connect(m_openSpec, &QPushButton::clicked, this, [this] { chooseSpecFile(false); });
    connect(m_pruning, &QComboBox::currentIndexChanged, this, &SweepDialog::updateButtons);
    connect(m_strategy, &QComboBox::currentIndexChanged, this, &SweepDialog::updateButtons);
    connect(m_objective, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        // Accuracy-like values are maximised, losses minimised (the mode stays editable).
        const bool max = name.contains(QLatin1String("acc")) || name.contains(QLatin1String("auc")) ||
                         name.contains(QLatin1String("precision")) || name.contains(QLatin1String("recall"));
        m_mode->setCurrentIndex(max ? 1 : 0);
    });
    m_objective->setCurrentIndex(0);
    m_mode->setCurrentIndex(m_objective->currentText().startsWith(QLatin1String("val_loss")) ? 0 : 1);
    retranslate();
    updateButtons();
    restoreSpec();
    resize(980, 760);
}

SweepDialog::~SweepDialog() { m_cancel->store(true); }

QStringList SweepDialog::pathSuggestions() const {
    QStringList out = {QStringLiteral("learning_rate"), QStringLiteral("batch_size"), QStringLiteral("epochs"),
                       QStringLiteral("optimizer"), QStringLiteral("weight_decay")};
    for (const auto& node : m_project.graph.nodes) {
        if (const auto* op = engine::ops::findOp(node.op)) {
            for (const auto& a : op->attrs) {
                if (a.type == engine::AttrType::Int || a.type == engine::AttrType::Float || a.type == engine::AttrType::String ||
                    a.type == engine::AttrType::Bool)
                    out << QStringLiteral("nodes.%1.%2").arg(QString::fromStdString(node.name), QString::fromStdString(a.name));
            }
        }
    }
    if (m_project.training.contains("callbacks") && m_project.training["callbacks"].is_array()) {
        for (const auto& cb : m_project.training["callbacks"]) {
            if (!cb.is_object() || !cb.contains("type")) continue;
            for (const auto& [key, value] : cb.items())
                if (key != "type" && value.is_number())
                    out << QStringLiteral("callbacks.%1.%2").arg(QString::fromStdString(cb.value("type", std::string())),
                                                                 QString::fromStdString(key));
        }
    }
    return out;
}

void SweepDialog::addParameterRow(const QString& path, int kind, const QString& values) {
    const int row = m_params->rowCount();
    m_params->insertRow(row);
    auto* pathBox = new QComboBox(m_params);
    pathBox->setObjectName(QStringLiteral("sweepPath%1").arg(row));
    pathBox->setEditable(true);
    pathBox->addItems(pathSuggestions());
    pathBox->setInsertPolicy(QComboBox::NoInsert);
    pathBox->setCurrentText(path);
    m_params->setCellWidget(row, ParamPath, pathBox);
    auto* kindBox = new QComboBox(m_params);
    kindBox->setObjectName(QStringLiteral("sweepKind%1").arg(row));
    kindBox->addItems({tr("choice"), tr("uniform"), tr("log-uniform"), tr("integer uniform")});
    kindBox->setCurrentIndex(kind);
    m_params->setCellWidget(row, ParamKind, kindBox);
    auto* item = new QTableWidgetItem(values);
    m_params->setItem(row, ParamValues, item);
    connect(kindBox, &QComboBox::currentIndexChanged, this, [this, kindBox](int k) {
        kindBox->setToolTip(k == 0 ? tr("Values separated by commas, e.g. 0.1, 0.2, 0.5 or adam, sgd")
                                   : tr("The range as min, max, e.g. 0.0001, 0.01"));
    });
    updateButtons();
}

std::optional<engine::api::SweepSpec> SweepDialog::spec(QString* error) const {
    json params = json::array();
    for (int row = 0; row < m_params->rowCount(); ++row) {
        auto* pathBox = qobject_cast<QComboBox*>(m_params->cellWidget(row, ParamPath));
        auto* kindBox = qobject_cast<QComboBox*>(m_params->cellWidget(row, ParamKind));
        const QString text = m_params->item(row, ParamValues) ? m_params->item(row, ParamValues)->text() : QString();
        const int kind = kindBox ? kindBox->currentIndex() : 0;
        json p = {{"path", pathBox ? pathBox->currentText().trimmed().toStdString() : std::string()},
                  {"kind", engine::api::sweepParamKindName(kKinds[std::clamp(kind, 0, 3)])}};
        const QStringList parts = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (kind == 0) {
            json values = json::array();
            for (const QString& part : parts) values.push_back(parseValue(part));
            p["values"] = values;
        } else {
            if (parts.size() != 2) {
                if (error) *error = tr("Row %1: give the range as min, max (two numbers separated by a comma).").arg(row + 1);
                return std::nullopt;
            }
            p["min"] = parseValue(parts[0]);
            p["max"] = parseValue(parts[1]);
        }
        params.push_back(p);
    }
    json j = {{"parameters", params},
              {"strategy", m_strategy->currentIndex() == 1 ? "grid" : "random"},
              {"grid_points", m_gridPoints},
              {"seed", m_seed->value()},
              {"objective", {{"metric", m_objective->currentText().trimmed().toStdString()},
                             {"mode", m_mode->currentIndex() == 1 ? "max" : "min"}}}};
    // A grid without a number of trials runs all its points; a random search needs one (0 is
    // left for the spec's check to name).
    if (m_trialsBox->value() > 0 || m_strategy->currentIndex() != 1) j["trials"] = m_trialsBox->value();
    if (m_epochs->value() > 0) j["epochs"] = m_epochs->value();
    const int pruning = m_pruning->currentIndex();
    if (pruning > 0) {
        j["early_stopping"] = {{"type", pruning == 1 ? "median" : "successive_halving"}, {"min_epochs", m_minEpochs->value()}};
        if (pruning == 1) j["early_stopping"]["min_trials"] = m_minTrials->value();
        else j["early_stopping"]["reduction"] = m_reduction->value();
    }
    auto parsed = engine::api::parseSweepSpec(j);
    if (!parsed.ok()) {
        if (error) *error = app::ErrorText::describe(parsed.error());
        return std::nullopt;
    }
    auto checked = engine::api::checkSweepSpec(*parsed, m_project);
    if (!checked.ok()) {
        if (error) *error = app::ErrorText::describe(checked.error());
        return std::nullopt;
    }
    return std::move(parsed.value());
}

void SweepDialog::setSpec(const engine::api::SweepSpec& s) {
    m_params->setRowCount(0);
    for (const auto& p : s.parameters) {
        QString values;
        if (p.kind == SweepParamKind::Choice) {
            QStringList parts;
            for (const auto& v : p.values) parts << valueText(v);
            values = parts.join(QStringLiteral(", "));
        } else {
            values = QStringLiteral("%1, %2").arg(QString::number(p.min, 'g', 10), QString::number(p.max, 'g', 10));
        }
        addParameterRow(QString::fromStdString(p.path), int(std::find(std::begin(kKinds), std::end(kKinds), p.kind) - std::begin(kKinds)),
                        values);
    }
    m_strategy->setCurrentIndex(s.strategy == engine::api::SweepStrategy::Grid ? 1 : 0);
    m_trialsBox->setValue(s.trials);
    m_seed->setValue(int(s.seed));
    m_epochs->setValue(s.epochs.value_or(0));
    m_objective->setCurrentText(QString::fromStdString(s.objective));
    m_mode->setCurrentIndex(s.mode == engine::api::ObjectiveMode::Max ? 1 : 0);
    m_pruning->setCurrentIndex(s.pruning == engine::api::SweepPruning::None ? 0 : s.pruning == engine::api::SweepPruning::Median ? 1 : 2);
    m_minEpochs->setValue(s.minEpochs);
    m_minTrials->setValue(s.minTrials);
    m_reduction->setValue(s.reduction);
    m_gridPoints = s.gridPoints;
    updateButtons();
}

QString SweepDialog::rememberedSpecPath() const {
    if (m_projectPath.isEmpty()) return {};
    return QString::fromStdString(engine::api::lastSweepSpecPath(m_projectPath.toStdString()));
}

bool SweepDialog::saveSpecFile(const QString& path) {
    QString error;
    const auto s = spec(&error);
    if (!s) {
        m_status->setText(tr("The spec was not saved: %1").arg(error));
        return false;
    }
    if (auto saved = engine::api::saveSweepSpec(*s, path.toStdString()); !saved.ok()) {
        m_status->setText(app::ErrorText::describe(saved.error()));
        return false;
    }
    m_status->setText(tr("Saved the sweep spec to %1.").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool SweepDialog::openSpecFile(const QString& path) {
    auto loaded = engine::api::loadSweepSpec(path.toStdString());
    if (!loaded.ok()) {
        m_status->setText(app::ErrorText::describe(loaded.error()));
        return false;
    }
    setSpec(*loaded);
    if (auto checked = engine::api::checkSweepSpec(*loaded, m_project); !checked.ok()) {
        m_status->setText(tr("Opened %1, but it does not fit this project: %2")
                              .arg(QDir::toNativeSeparators(path), app::ErrorText::describe(checked.error().withFile(path.toStdString()))));
    } else {
        m_status->setText(tr("Opened the sweep spec %1.").arg(QDir::toNativeSeparators(path)));
    }
    return true;
}

void SweepDialog::chooseSpecFile(bool save) {
    // Qt's own file dialog: the same on every desktop, and driven by tests like the rest.
    QFileDialog chooser(this, save ? tr("Save the sweep spec") : tr("Open a sweep spec"));
    chooser.setObjectName(QStringLiteral("sweepSpecFileDialog"));
    chooser.setOption(QFileDialog::DontUseNativeDialog);
    chooser.setNameFilters({tr("Sweep specs (*.json)"), tr("All files (*)")});
    chooser.setAcceptMode(save ? QFileDialog::AcceptSave : QFileDialog::AcceptOpen);
    chooser.setFileMode(save ? QFileDialog::AnyFile : QFileDialog::ExistingFile);
    if (save) chooser.setDefaultSuffix(QStringLiteral("json"));
    if (!m_projectPath.isEmpty()) chooser.setDirectory(QFileInfo(m_projectPath).absolutePath());
    if (chooser.exec() != QDialog::Accepted || chooser.selectedFiles().isEmpty()) return;
    const QString file = chooser.selectedFiles().first();
    if (save) saveSpecFile(file);
    else openSpecFile(file);
}

// The spec the controls hold becomes the project's last one; a spec that is not valid yet is
// not kept (the last valid one stays).
void SweepDialog::rememberSpec() {
    const QString path = rememberedSpecPath();
    if (path.isEmpty()) return;
    const auto s = spec();
    if (!s) return;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path.toStdString()).parent_path(), ec);
    if (ec) return;
    (void)engine::api::saveSweepSpec(*s, path.toStdString());
}

void SweepDialog::restoreSpec() {
    const QString path = rememberedSpecPath();
    if (path.isEmpty() || !QFileInfo::exists(path)) return;
    auto loaded = engine::api::loadSweepSpec(path.toStdString());
    if (!loaded.ok()) {
        m_status->setText(tr("The last sweep spec of this project cannot be read: %1").arg(app::ErrorText::describe(loaded.error())));
        return;
    }
    setSpec(*loaded);
    if (auto checked = engine::api::checkSweepSpec(*loaded, m_project); !checked.ok()) {
        m_status->setText(tr("The last sweep spec of this project no longer fits it: %1")
                              .arg(app::ErrorText::describe(checked.error().withFile(path.toStdString()))));
        return;
    }
    m_status->setText(tr("The last sweep spec of this project is back."));
}

void SweepDialog::updateButtons() {
    m_run->setEnabled(!m_running && m_params->rowCount() > 0);
    m_cancelButton->setEnabled(m_running);
    m_apply->setEnabled(!m_running && m_best >= 0);
    m_removeParam->setEnabled(!m_running && m_params->rowCount() > 0);
    m_addParam->setEnabled(!m_running);
    m_openSpec->setEnabled(!m_running);
    const int pruning = m_pruning->currentIndex();
    m_minEpochs->setEnabled(pruning > 0);
    m_minTrials->setEnabled(pruning == 1);
    m_reduction->setEnabled(pruning == 2);
    m_seed->setEnabled(m_strategy->currentIndex() == 0);
}

void SweepDialog::start() {
    if (m_running) return;
    if (m_projectPath.isEmpty()) {
        m_status->setText(tr("Save the project first: the trials' runs are kept next to it."));
        emit finished(false, m_status->text());
        return;
    }
    QString error;
    auto s = spec(&error);
    if (!s) {
        m_status->setText(error);
        emit finished(false, error);
        return;
    }
    m_runningSpec = *s;
    rememberSpec();
    m_trials.clear();
    m_best = -1;
    m_model->removeRows(0, m_model->rowCount());
    rebuildResultColumns();
    replotChart();
    m_running = true;
    updateButtons();
    m_status->setText(tr("Starting the sweep…"));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const engine::io::Project project = m_project;
    const std::string path = m_projectPath.toStdString();
    const engine::api::SweepSpec spec = *s;
    auto cancel = m_cancel;
    QPointer<SweepDialog> self(this);
    auto* watcher = new QFutureWatcher<std::shared_ptr<Outcome>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_running = false;
        const auto outcome = watcher->result();
        if (!outcome->ok) {
            updateButtons();
            m_status->setText(tr("The sweep failed: %1").arg(outcome->error));
            emit finished(false, outcome->error);
            return;
        }
        // The table shows exactly the outcome's trials (streamed events may lag behind).
        m_trials.clear();
        m_model->removeRows(0, m_model->rowCount());
        for (const auto& t : outcome->result.trials) showTrial(t);
        m_best = outcome->result.best;
        m_results->resizeColumnsToContents();
        updateButtons();
        replotChart();
        QString text;
        if (m_best >= 0) {
            const auto& b = m_trials[size_t(m_best)];
            text = tr("Best: trial %1, %2 = %3.").arg(b.number).arg(QString::fromStdString(m_runningSpec.objective)).arg(*b.objective, 0, 'f', 4);
        } else {
            text = tr("No trial has a value of %1.").arg(QString::fromStdString(m_runningSpec.objective));
        }
        if (outcome->result.cancelled) text = tr("Cancelled.") + QLatin1Char(' ') + text;
        text += QLatin1Char(' ') + tr("%n trial(s) in %1 s.", nullptr, int(m_trials.size())).arg(outcome->result.seconds, 0, 'f', 1);
        m_status->setText(text);
        emit finished(true, text);
    });
    watcher->setFuture(QtConcurrent::run([project, path, spec, cancel, self]() {
        auto out = std::make_shared<Outcome>();
        try {
            auto onEvent = [self](const engine::api::SweepEvent& e) {
                QMetaObject::invokeMethod(
                    qApp, [self, e] { if (self) self->onEvent(e); }, Qt::QueuedConnection);
            };
            engine::api::SweepOptions options;
            auto r = engine::api::runSweep(project, path, spec, options, onEvent, cancel.get());
            if (!r.ok()) {
                out->error = app::ErrorText::describe(engine::io::locate(r.error(), project));
                return out;
            }
            out->result = std::move(r.value());
            out->ok = true;
        } catch (const std::exception& ex) {
            out->error = QString::fromUtf8(ex.what());
        }
        return out;
    }));
}

void SweepDialog::cancel() {
    if (!m_running) return;
    m_cancel->store(true);
    m_status->setText(tr("Cancelling after the current step…"));
}

void SweepDialog::onEvent(const engine::api::SweepEvent& e) {
    if (!m_running) return;
    const QString objective = QString::fromStdString(m_runningSpec.objective);
    switch (e.kind) {
    case engine::api::SweepEvent::Kind::TrialStarted:
        showTrial(e.trial, true);
        m_status->setText(tr("Trial %1 of %2 is training…").arg(e.trial.number).arg(e.trials));
        break;
    case engine::api::SweepEvent::Kind::Epoch:
        m_status->setText(tr("Trial %1, epoch %2 of %3: %4 = %5")
                              .arg(e.trial.number)
                              .arg(e.epoch)
                              .arg(e.epochs)
                              .arg(objective)
                              .arg(e.value, 0, 'f', 4));
        break;
    case engine::api::SweepEvent::Kind::TrialFinished:
        showTrial(e.trial);
        m_best = engine::api::bestTrial(m_trials, m_runningSpec.mode);
        if (!m_replot->isActive()) m_replot->start();
        break;
    }
}

void SweepDialog::rebuildResultColumns() {
    m_model->setColumnCount(ColFirstParam + int(m_runningSpec.parameters.size()));
    m_model->setHeaderData(ColTrial, Qt::Horizontal, tr("Trial"));
    m_model->setHeaderData(ColStatus, Qt::Horizontal, tr("Status"));
    m_model->setHeaderData(ColObjective, Qt::Horizontal,
                           m_runningSpec.objective.empty() ? tr("Objective") : QString::fromStdString(m_runningSpec.objective));
    m_model->setHeaderData(ColEpochs, Qt::Horizontal, tr("Epochs"));
    m_model->setHeaderData(ColSeconds, Qt::Horizontal, tr("Seconds"));
    for (size_t k = 0; k < m_runningSpec.parameters.size(); ++k)
        m_model->setHeaderData(ColFirstParam + int(k), Qt::Horizontal, QString::fromStdString(m_runningSpec.parameters[k].path));
}

void SweepDialog::showTrial(const engine::api::TrialResult& t, bool training) {
    // One row per trial number; a later rung's run updates its row.
    auto it = std::find_if(m_trials.begin(), m_trials.end(), [&](const auto& x) { return x.number == t.number; });
    int row = -1;
    if (it == m_trials.end()) {
        m_trials.push_back(t);
        row = m_model->rowCount();
        m_model->insertRow(row);
        for (int c = 0; c < m_model->columnCount(); ++c) m_model->setItem(row, c, new QStandardItem);
    } else {
        *it = t;
        for (int r = 0; r < m_model->rowCount(); ++r)
            if (m_model->item(r, ColTrial)->data(Qt::UserRole).toInt() == t.number) row = r;
    }
    if (row < 0) return;
    auto set = [&](int column, const QString& text, const QVariant& sortKey) {
        QStandardItem* item = m_model->item(row, column);
        item->setText(text);
        item->setData(sortKey, Qt::UserRole);
    };
    QString status;
    switch (t.status) {
    case TrialStatus::Completed: status = training ? tr("training") : tr("completed"); break;
    case TrialStatus::Pruned: status = tr("pruned"); break;
    case TrialStatus::Failed: status = tr("failed"); break;
    case TrialStatus::Cancelled: status = tr("cancelled"); break;
    }
    set(ColTrial, QString::number(t.number), t.number);
    set(ColStatus, status, status);
    // Trials without a value sort after every value.
    const bool max = m_runningSpec.mode == engine::api::ObjectiveMode::Max;
    set(ColObjective, t.objective ? QString::number(*t.objective, 'f', 4) : QStringLiteral("–"),
        t.objective ? *t.objective : (max ? -1e300 : 1e300));
    set(ColEpochs, QString::number(t.epochs), t.epochs);
    set(ColSeconds, QString::number(t.seconds, 'f', t.seconds < 10 ? 2 : 1), t.seconds);
    for (size_t k = 0; k < m_runningSpec.parameters.size(); ++k) {
        const auto& path = m_runningSpec.parameters[k].path;
        const json v = t.params.contains(path) ? t.params[path] : json();
        set(ColFirstParam + int(k), valueText(v), v.is_number() ? QVariant(v.get<double>()) : QVariant(valueText(v)));
    }
    if (t.status == TrialStatus::Failed) {
        const QString why = app::ErrorText::describe(t.failure);
        for (int c = 0; c < m_model->columnCount(); ++c) m_model->item(row, c)->setToolTip(why);
    }
}

void SweepDialog::replotChart() {
    m_chart->clearPlottables();
    m_chart->clearItems();
    const auto& params = m_runningSpec.parameters;
    const int axes = int(params.size()) + 1;
    // Each axis spans the values seen (ranges: the spec's bounds).
    std::vector<double> lo(size_t(axes), 0), hi(size_t(axes), 1);
    for (size_t k = 0; k < params.size(); ++k) {
        lo[k] = params[k].min;
        hi[k] = params[k].max;
    }
    double objLo = INFINITY, objHi = -INFINITY;
    for (const auto& t : m_trials) {
        if (!t.objective) continue;
        objLo = std::min(objLo, *t.objective);
        objHi = std::max(objHi, *t.objective);
    }
    const bool haveObjective = std::isfinite(objLo);
    if (haveObjective && objHi == objLo) {
        objLo -= 0.5 * std::max(1e-6, std::abs(objLo) * 0.01);
        objHi += 0.5 * std::max(1e-6, std::abs(objHi) * 0.01);
    }
    // Dark purple (worse) through teal to yellow (better), readable on white.
    QCPColorGradient gradient;
    gradient.setColorStopAt(0.0, QColor(68, 1, 84));
    gradient.setColorStopAt(0.5, QColor(33, 145, 140));
    gradient.setColorStopAt(1.0, QColor(240, 200, 20));
    const bool max = m_runningSpec.mode == engine::api::ObjectiveMode::Max;
    for (const auto& t : m_trials) {
        if (!t.objective) continue;
        auto* curve = new QCPCurve(m_chart->xAxis, m_chart->yAxis);
        QVector<double> xs, ys;
        for (size_t k = 0; k < params.size(); ++k) {
            xs << double(k);
            ys << axisPosition(params[k], t.params.contains(params[k].path) ? t.params[params[k].path] : json(), lo[k], hi[k]);
        }
        const double y = (*t.objective - objLo) / (objHi - objLo);
        xs << double(axes - 1);
        ys << y;
        curve->setData(xs, ys);
        // Bright (yellow) is the better end of the objective, for min and max alike.
        const QColor colour = gradient.color(max ? y : 1.0 - y, QCPRange(0, 1));
        const bool best = m_best >= 0 && size_t(m_best) < m_trials.size() && m_trials[size_t(m_best)].number == t.number;
        curve->setPen(QPen(colour, best ? 3.5 : 1.8));
        curve->setName(tr("Trial %1").arg(t.number));
    }
    // The axes, with their bounds written at both ends.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    auto boundText = [](double v) { return QString::number(v, 'g', 3); };
    for (int k = 0; k < axes; ++k) {
        const bool objectiveAxis = k == axes - 1;
        ticker->addTick(k, objectiveAxis ? QString::fromStdString(m_runningSpec.objective) : QString::fromStdString(params[size_t(k)].path));
        auto* line = new QCPItemLine(m_chart);
        line->start->setCoords(k, 0);
        line->end->setCoords(k, 1);
        line->setPen(QPen(QColor(120, 120, 120), 1));
        QString top, bottom;
        if (objectiveAxis) {
            if (haveObjective) {
                top = boundText(objHi);
                bottom = boundText(objLo);
            }
        } else if (params[size_t(k)].kind == SweepParamKind::Choice) {
            top = valueText(params[size_t(k)].values.back());
            bottom = valueText(params[size_t(k)].values.front());
        } else {
            top = boundText(params[size_t(k)].max);
            bottom = boundText(params[size_t(k)].min);
        }
        for (auto [text, yPos] : {std::pair{top, 1.07}, std::pair{bottom, -0.07}}) {
            if (text.isEmpty()) continue;
            auto* label = new QCPItemText(m_chart);
            label->position->setCoords(k, yPos);
            label->setText(text);
        }
    }
    m_chart->xAxis->setTicker(ticker);
    m_chart->xAxis->setRange(-0.4, double(axes - 1) + 0.4);
    m_chart->replot(QCustomPlot::rpQueuedReplot);
}

void SweepDialog::applyBest() {
    if (m_running || m_best < 0 || size_t(m_best) >= m_trials.size()) return;
    const auto& best = m_trials[size_t(m_best)];
    auto applied = engine::api::applySweepParameters(m_project, best.params);
    if (!applied.ok()) {
        m_status->setText(app::ErrorText::describe(applied.error()));
        return;
    }
    emit applyBestRequested(*applied, best.params);
    m_status->setText(tr("Applied the parameters of trial %1 to the project.").arg(best.number));
}

void SweepDialog::done(int result) {
    rememberSpec();
    QDialog::done(result);
}

void SweepDialog::closeEvent(QCloseEvent* event) {
    // Closing stops the running trial within a step; its record says it was stopped.
    m_cancel->store(true);
    QDialog::closeEvent(event);
}

void SweepDialog::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QDialog::changeEvent(event);
}

void SweepDialog::retranslate() {
    setWindowTitle(tr("Hyper-parameter sweep"));
    m_paramsLabel->setText(tr("Parameters (training settings such as learning_rate, node attributes as nodes.<node>.<attribute>, "
                              "callback settings as callbacks.<type>.<setting>):"));
    m_params->setHorizontalHeaderLabels({tr("Path"), tr("Kind"), tr("Values or range")});
    for (int row = 0; row < m_params->rowCount(); ++row) {
        if (auto* kindBox = qobject_cast<QComboBox*>(m_params->cellWidget(row, ParamKind))) {
            const QStringList kinds = {tr("choice"), tr("uniform"), tr("log-uniform"), tr("integer uniform")};
            for (int k = 0; k < kinds.size(); ++k) kindBox->setItemText(k, kinds[k]);
        }
    }
    m_addParam->setText(tr("Add parameter"));
    m_removeParam->setText(tr("Remove parameter"));
    m_strategyLabel->setText(tr("Strategy:"));
    m_strategy->setItemText(0, tr("Random (seeded)"));
    m_strategy->setItemText(1, tr("Grid"));
    m_trialsLabel->setText(tr("Trials:"));
    m_trialsBox->setToolTip(tr("Random: trials drawn. Grid: at most this many points of the grid, in order. "
                               "Successive halving: the configurations of the first rung."));
    m_seedLabel->setText(tr("Seed:"));
    m_epochsLabel->setText(tr("Epochs per trial:"));
    m_epochs->setSpecialValueText(tr("project's"));
    m_objectiveLabel->setText(tr("Objective:"));
    m_mode->setItemText(0, tr("minimise"));
    m_mode->setItemText(1, tr("maximise"));
    m_pruningLabel->setText(tr("Early stopping:"));
    m_pruning->setItemText(0, tr("None"));
    m_pruning->setItemText(1, tr("Median stopping rule"));
    m_pruning->setItemText(2, tr("Successive halving"));
    m_minEpochsLabel->setText(tr("Minimum epochs:"));
    m_minEpochs->setToolTip(tr("Median rule: epochs before a trial may stop. Successive halving: the epochs of the first rung."));
    m_minTrialsLabel->setText(tr("Finished trials to compare:"));
    m_reductionLabel->setText(tr("Keep 1 in:"));
    m_run->setText(tr("Run"));
    m_trialsBox->setSpecialValueText(tr("all"));
    m_openSpec->setText(tr("Open Spec…"));
    m_openSpec->setToolTip(tr("Fill in the sweep from a spec file (JSON, as kiln-train --sweep reads it)."));
    m_saveSpec->setText(tr("Save Spec…"));
    m_saveSpec->setToolTip(tr("Save the sweep as a spec file for kiln-train --sweep or a later session."));
    m_cancelButton->setText(tr("Cancel"));
    m_apply->setText(tr("Apply best"));
    m_apply->setToolTip(tr("Set the best trial's parameters in the project (Edit > Undo takes them back)."));
    m_chart->yAxis->setLabel(QString());
    if (m_runningSpec.parameters.empty()) rebuildResultColumns();
    if (m_status->text().isEmpty())
        m_status->setText(tr("Each trial is a training run of the project with its parameters, recorded in the run history."));
}

}  // namespace kiln::ui::training
