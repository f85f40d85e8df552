// SPDX-License-Identifier: Apache-2.0
// The Evaluate view: the job runs on a worker thread and hands back a value; the GUI thread only
// fills models and the plot.
#include "ui/evaluate/evaluate_view.h"

#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QProgressDialog>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>

#include <qcustomplot.h>

#include "app/common/error_text.h"
#include "engine/api/evaluation.h"
#include "engine/api/evaluation_cache.h"
#include "engine/api/overlay_export.h"
#include "engine/ops/model.h"
#include "ui/charts/chart_theme.h"
#include "ui/evaluate/evaluation_models.h"
#include "ui/evaluate/explanation_dialog.h"
#include "ui/evaluate/overlay_export_dialog.h"
#include "ui/evaluate/misclassified_gallery.h"

namespace kiln::ui::evaluate {

namespace {

// The split in the summary's sentence, in the user's language ("test" is "测试集", not "test").
QString splitInSentence(const std::string& split) {
    if (split == "test") return EvaluateView::tr("test", "split, in a sentence");
    if (split == "val" || split == "validation") return EvaluateView::tr("validation", "split, in a sentence");
    if (split == "train" || split == "training") return EvaluateView::tr("training", "split, in a sentence");
    return QString::fromStdString(split);
}

}  // namespace

struct EvaluateView::Outcome {
    bool ok = false;
    engine::api::EvaluationOptions options;
    QString error;
    engine::api::Predictions predictions;
    engine::api::Evaluation evaluation;
    bool pictures = false;  // the model has one picture input ([height, width, channels])
    bool ranModel = false;  // the model ran (the results were not read from a stored evaluation)
    int64_t cachedAtMs = 0; // read from a stored evaluation computed then (ms since the epoch)
    QString storeError;     // why the results could not be stored ("" when they were)
    // Table data: the samples' feature values (null otherwise), or why they could not be read.
    std::shared_ptr<const engine::api::SampleFeatures> features;
    QString featuresError;
};

namespace {

// Feature values read from their first character: a long value list is cut at its end, unlike the
// table's sources, which keep their file names.
class FeatureDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideRight;
    }
};

}  // namespace

EvaluateView::EvaluateView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    m_weightsLabel = new QLabel(this);
    m_weights = new QLineEdit(this);
    m_weights->setObjectName(QStringLiteral("evalWeights"));
    m_splitLabel = new QLabel(this);
    m_split = new QComboBox(this);
    m_split->setObjectName(QStringLiteral("evalSplit"));
    m_split->addItem(QString(), QStringLiteral("test"));
    m_split->addItem(QString(), QStringLiteral("val"));
    m_split->addItem(QString(), QStringLiteral("train"));
    m_split->addItem(QString(), QString());  // other data: the path in m_dataPath
    m_dataPath = new QLineEdit(this);
    m_dataPath->setObjectName(QStringLiteral("evalDataPath"));
    m_dataPath->setClearButtonEnabled(true);
    m_browseData = new QPushButton(this);
    m_browseData->setObjectName(QStringLiteral("evalBrowseData"));
    auto* browseMenu = new QMenu(m_browseData);
    browseMenu->setObjectName(QStringLiteral("evalBrowseMenu"));
    QAction* folder = browseMenu->addAction(QString());
    folder->setObjectName(QStringLiteral("browseFolder"));
    QAction* file = browseMenu->addAction(QString());
    file->setObjectName(QStringLiteral("browseFile"));
    m_browseData->setMenu(browseMenu);
    connect(folder, &QAction::triggered, this, [this] { browseData(true); });
    connect(file, &QAction::triggered, this, [this] { browseData(false); });
    m_run = new QPushButton(this);
    m_run->setObjectName(QStringLiteral("evalRun"));
    m_rerun = new QPushButton(this);
    m_rerun->setObjectName(QStringLiteral("evalRerun"));
    m_rerun->hide();
    controls->addWidget(m_weightsLabel);
    controls->addWidget(m_weights, 1);
    controls->addWidget(m_splitLabel);
    controls->addWidget(m_split);
    controls->addWidget(m_dataPath, 1);
    controls->addWidget(m_browseData);
    controls->addWidget(m_run);
    controls->addWidget(m_rerun);
    m_export = new QPushButton(this);
    m_export->setObjectName(QStringLiteral("exportSamplesCsv"));
    m_export->setEnabled(false);
    controls->addWidget(m_export);
    layout->addLayout(controls);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("evalStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    m_confusion = new ConfusionMatrixModel(this);
    m_classes = new ClassFiguresModel(this);
    m_samples = new SampleTableModel(this);
    m_sampleProxy = new SampleFilterProxy(this);
    m_sampleProxy->setSourceModel(m_samples);
    m_sampleProxy->setSortRole(SampleTableModel::SortRole);

    // Which samples the table and the gallery show: a true and a predicted class.
    m_filterRow = new QWidget(this);
    auto* filters = new QHBoxLayout(m_filterRow);
    filters->setContentsMargins(0, 0, 0, 0);
    m_trueFilterLabel = new QLabel(m_filterRow);
    m_trueFilter = new QComboBox(m_filterRow);
    m_trueFilter->setObjectName(QStringLiteral("trueClassFilter"));
    m_predictedFilterLabel = new QLabel(m_filterRow);
    m_predictedFilter = new QComboBox(m_filterRow);
    m_predictedFilter->setObjectName(QStringLiteral("predictedClassFilter"));
    m_showAll = new QPushButton(m_filterRow);
    m_showAll->setObjectName(QStringLiteral("showAllSamples"));
    filters->addWidget(m_trueFilterLabel);
    filters->addWidget(m_trueFilter);
    filters->addWidget(m_predictedFilterLabel);
    filters->addWidget(m_predictedFilter);
    filters->addWidget(m_showAll);
    filters->addStretch(1);
    layout->addWidget(m_filterRow);
    m_filterRow->hide();

    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_tabs = new QTabWidget(m_splitter);
    m_confusionView = new QTableView(m_tabs);
    m_confusionView->setObjectName(QStringLiteral("confusionView"));
    m_confusionView->setModel(m_confusion);
    m_confusionView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_classView = new QTableView(m_tabs);
    m_classView->setObjectName(QStringLiteral("classView"));
    m_classView->setModel(m_classes);
    m_classView->verticalHeader()->hide();
    m_roc = new QCustomPlot(m_tabs);
    m_roc->setObjectName(QStringLiteral("rocPlot"));
    m_roc->legend->setVisible(true);
    m_roc->xAxis->setRange(0, 1);
    m_roc->yAxis->setRange(0, 1.02);
    charts::followTheme(m_roc);
    auto unitPlot = [this](const char* name, bool legend) {
        auto* plot = new QCustomPlot(m_tabs);
        plot->setObjectName(QString::fromLatin1(name));
        plot->legend->setVisible(legend);
        plot->xAxis->setRange(0, 1);
        plot->yAxis->setRange(0, 1.02);
        charts::followTheme(plot);
        return plot;
    };
    m_pr = unitPlot("prPlot", true);
    m_pr->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignLeft);
    m_calibration = unitPlot("calibrationPlot", true);
    m_calibration->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    m_regression = unitPlot("regressionPlot", false);
    m_residuals = unitPlot("residualPlot", false);
    m_sampleView = new QTableView(m_tabs);
    m_sampleView->setObjectName(QStringLiteral("samplesView"));
    m_sampleView->setModel(m_sampleProxy);
    m_sampleView->setSortingEnabled(true);
    m_sampleView->sortByColumn(-1, Qt::AscendingOrder);  // the report's order: most confidently wrong first
    m_sampleView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_sampleView->verticalHeader()->hide();
    m_sampleView->horizontalHeader()->setStretchLastSection(true);
    m_sampleView->setIconSize(QSize(32, 32));
    m_sampleView->setWordWrap(false);
    m_sampleView->setTextElideMode(Qt::ElideLeft);  // a long source keeps its file name
    m_sampleView->setColumnHidden(SampleTableModel::Picture, true);
    m_featureDelegate = new FeatureDelegate(m_sampleView);
    m_defaultRowHeight = m_sampleView->verticalHeader()->defaultSectionSize();
    m_tabs->addTab(m_confusionView, QString());
    m_tabs->addTab(m_classView, QString());
    m_tabs->addTab(m_roc, QString());
    m_tabs->addTab(m_pr, QString());
    m_tabs->addTab(m_calibration, QString());
    m_tabs->addTab(m_regression, QString());
    m_tabs->addTab(m_residuals, QString());
    m_tabs->addTab(m_sampleView, QString());
    showClassificationTabs(true);
    m_gallery = new MisclassifiedGallery(m_splitter);
    m_gallery->setObjectName(QStringLiteral("misclassifiedGallery"));
    m_splitter->addWidget(m_tabs);
    m_splitter->addWidget(m_gallery);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    m_gallery->hide();
    layout->addWidget(m_splitter, 1);

    // A click on a confusion matrix cell shows that cell's samples: in the gallery beside the
    // tabs for pictures, else in the samples table.
    connect(m_confusionView, &QTableView::clicked, this, [this](const QModelIndex& index) {
        if (!index.isValid()) return;
        setClassFilter(index.row(), index.column());
        if (m_gallery->isHidden()) m_tabs->setCurrentWidget(m_sampleView);
    });
    auto filterEdited = [this] {
        setClassFilter(m_trueFilter->currentData().toLongLong(), m_predictedFilter->currentData().toLongLong());
    };
    connect(m_trueFilter, &QComboBox::activated, this, filterEdited);
    connect(m_predictedFilter, &QComboBox::activated, this, filterEdited);
    connect(m_showAll, &QPushButton::clicked, this, [this] { setClassFilter(-1, -1); });
    connect(m_gallery, &MisclassifiedGallery::explainRequested, this, &EvaluateView::explainGalleryRow);
    connect(m_gallery, &MisclassifiedGallery::pictureReady, m_samples, &SampleTableModel::pictureReady);
    connect(m_gallery, &MisclassifiedGallery::exportRequested, this, [this] {
        QList<qint64> samples;
        for (int row = 0; row < m_gallery->model()->rowCount(); ++row) samples << m_gallery->model()->record(row).index;
        exportOverlays(samples);
    });

    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { emit tabChanged(currentTab()); });
    connect(m_run, &QPushButton::clicked, this, &EvaluateView::evaluate);
    connect(m_rerun, &QPushButton::clicked, this, &EvaluateView::reevaluate);
    connect(m_dataPath, &QLineEdit::returnPressed, this, &EvaluateView::evaluate);
    connect(m_split, &QComboBox::currentIndexChanged, this, &EvaluateView::splitChosen);
    splitChosen();
    connect(m_export, &QPushButton::clicked, this, [this] {
        const QString suggested = QFileInfo(m_projectPath).absoluteDir().filePath(
            QStringLiteral("%1_samples.csv").arg(QString::fromStdString(m_shownOptions.split).section(QLatin1Char('/'), -1)));
        const QString path = QFileDialog::getSaveFileName(this, tr("Export samples as CSV"), suggested, tr("CSV files (*.csv)"));
        if (path.isEmpty()) return;
        QString error;
        if (!exportSamples(path, &error)) QMessageBox::warning(this, tr("Export samples as CSV"), error);
    });
    // A sample's explanation: double click, or the context menu.
    m_sampleView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_sampleView, &QTableView::doubleClicked, this, [this](const QModelIndex& index) { explainRow(index.row()); });
    connect(m_sampleView, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const QModelIndex index = m_sampleView->indexAt(at);
        if (!index.isValid() || m_shownClasses.empty()) return;
        auto* menu = new QMenu(m_sampleView);
        menu->setObjectName(QStringLiteral("sampleMenu"));
        menu->setAttribute(Qt::WA_DeleteOnClose);
        QAction* explain = menu->addAction(tr("Explain with Grad-CAM…"));
        const int row = index.row();
        connect(explain, &QAction::triggered, this, [this, row] { explainRow(row); });
        if (m_gallery->model()->totalCount() > 0) {
            // Picture classifiers: the overlays of the selected rows as PNG files.
            QList<qint64> samples;
            for (const QModelIndex& selected : m_sampleView->selectionModel()->selectedRows())
                samples << m_samples->record(m_sampleProxy->mapToSource(selected).row()).index;
            if (samples.isEmpty()) samples << m_samples->record(m_sampleProxy->mapToSource(index).row()).index;
            QAction* exportSelected = menu->addAction(tr("Export overlays of %n selected sample(s)…", "", int(samples.size())));
            exportSelected->setObjectName(QStringLiteral("exportSelectedOverlays"));
            connect(exportSelected, &QAction::triggered, this, [this, samples] { exportOverlays(samples); });
        }
        menu->popup(m_sampleView->viewport()->mapToGlobal(at));
    });
    retranslate();
}

EvaluateView::~EvaluateView() {
    if (m_exportCancel) m_exportCancel->store(true);
}

void EvaluateView::setProject(const engine::io::Project& project, const QString& path) {
    m_project = project;
    m_projectPath = path;
}

void EvaluateView::setWeights(const QString& weights) { m_weights->setText(weights); }

QString EvaluateView::weights() const { return m_weights->text(); }

void EvaluateView::setSplit(const QString& split) {
    const int named = m_split->findData(split == QLatin1String("validation") ? QStringLiteral("val") : split);
    if (named >= 0 && !split.isEmpty()) {
        m_split->setCurrentIndex(named);
        return;
    }
    m_dataPath->setText(split);
    m_split->setCurrentIndex(m_split->count() - 1);
}

QString EvaluateView::split() const {
    const QString named = m_split->currentData().toString();
    return named.isEmpty() ? m_dataPath->text().trimmed() : named;
}

void EvaluateView::splitChosen() {
    const bool other = m_split->currentIndex() == m_split->count() - 1;
    m_dataPath->setVisible(other);
    m_browseData->setVisible(other);
    if (other && isVisible()) m_dataPath->setFocus();
}

void EvaluateView::browseData(bool folder) {
    const QString start = m_dataPath->text().trimmed().isEmpty() ? QFileInfo(m_projectPath).absolutePath() : m_dataPath->text().trimmed();
    const QString path = folder ? QFileDialog::getExistingDirectory(this, tr("Evaluate an image folder"), start)
                                : QFileDialog::getOpenFileName(this, tr("Evaluate a CSV index or TFRecord file"), start,
                                                               tr("CSV index or TFRecord (*.csv *.tfrecord *.tfrecords);;All files (*)"));
    if (path.isEmpty()) return;
    m_dataPath->setText(QDir::toNativeSeparators(path));
    evaluate();
}

void EvaluateView::evaluate() { start(true); }

void EvaluateView::reevaluate() { start(false); }

void EvaluateView::start(bool useCache) {
    const quint64 generation = ++m_generation;
    engine::api::EvaluationOptions options;
    options.weights = m_weights->text().trimmed().toStdString();
    options.split = split().toStdString();
    if (options.split.empty()) {
        m_status->setText(tr("Choose the data to evaluate: an image folder, a CSV index or a TFRecord file."));
        return;
    }
    ++m_running;
    m_status->setText(tr("Evaluating…"));
    const engine::io::Project project = m_project;
    const std::string path = m_projectPath.toStdString();
    auto* watcher = new QFutureWatcher<std::shared_ptr<Outcome>>(this);
    QPointer<EvaluateView> self(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, self, watcher, generation] {
        watcher->deleteLater();
        if (!self) return;
        --m_running;
        const std::shared_ptr<Outcome> outcome = watcher->result();
        if (outcome->ranModel) ++m_modelPasses;
        if (generation != m_generation) return;  // a newer evaluation replaced this one
        showOutcome(*outcome);
        emit finished(outcome->ok, outcome->error);
    });
    watcher->setFuture(QtConcurrent::run([project, path, options, useCache]() {
        auto out = std::make_shared<Outcome>();
        out->options = options;
        try {
            if (auto model = engine::ops::analyzeModel(project.graph); model.ok() && model->inputs.size() == 1)
                out->pictures = model->nodes[size_t(model->inputs[0])].output.rank() == 4;
            // The stored evaluation of these weights and data, when there is one; else the model
            // runs and its outputs are stored for next time. A key that cannot be made (missing
            // weights) leaves the error to predict(), which names it as kiln-eval does.
            auto key = engine::api::evaluationCacheKey(project, path, options);
            engine::Result<engine::api::Predictions> p = engine::Error(engine::ErrorCode::Internal, "not evaluated");
            if (key.ok() && useCache) {
                if (auto cached = engine::api::loadCachedPredictions(*key)) {
                    out->cachedAtMs = cached->createdMs;
                    p = std::move(cached->predictions);
                }
            }
            if (out->cachedAtMs == 0) {
                out->ranModel = true;
                p = engine::api::predict(project, path, options);
                if (p.ok() && key.ok()) {
                    const engine::Status stored = engine::api::storeCachedPredictions(*key, *p);
                    if (!stored.ok()) out->storeError = app::ErrorText::describe(stored.error());
                }
            }
            if (!p.ok()) {
                out->error = app::ErrorText::describe(engine::io::locate(p.error(), project));
                return out;
            }
            auto e = engine::api::evaluate(*p);
            if (!e.ok()) {
                out->error = app::ErrorText::describe(e.error());
                return out;
            }
            // Table data: each sample's values as its file holds them, read here too, off the GUI
            // thread (the stored results keep the model's outputs only).
            if (auto features = engine::api::tableFeatures(project, path, options); !features.ok())
                out->featuresError = app::ErrorText::describe(engine::io::locate(features.error(), project));
            else if (features->has_value() && (*features)->samples == p->samples)
                out->features = std::make_shared<const engine::api::SampleFeatures>(std::move(**features));
            out->predictions = std::move(p.value());
            out->evaluation = std::move(e.value());
            out->ok = true;
        } catch (const std::exception& ex) {
            out->error = QString::fromUtf8(ex.what());
        }
        return out;
    }));
}

ExplanationDialog* EvaluateView::explanationDialog() const {
    return static_cast<ExplanationDialog*>(m_explanation.data());
}

QSortFilterProxyModel* EvaluateView::sampleProxy() const { return m_sampleProxy; }

QString EvaluateView::currentTab() const { return m_tabs->currentWidget() ? m_tabs->currentWidget()->objectName() : QString(); }

void EvaluateView::showTab(const QString& name) {
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->widget(i)->objectName() == name && m_tabs->isTabVisible(i)) m_tabs->setCurrentIndex(i);
}

QProgressDialog* EvaluateView::overlayProgress() const { return m_exportProgress.data(); }

void EvaluateView::explainRow(int row) {
    if (row < 0 || row >= m_sampleProxy->rowCount() || m_shownClasses.empty()) return;
    explainRecord(m_samples->record(m_sampleProxy->mapToSource(m_sampleProxy->index(row, 0)).row()));
}

void EvaluateView::explainGalleryRow(int row) {
    if (row < 0 || row >= m_gallery->model()->rowCount() || m_shownClasses.empty()) return;
    explainRecord(m_gallery->model()->record(row));
}

void EvaluateView::setClassFilter(qint64 trueClass, qint64 predicted) {
    const qint64 n = qint64(m_shownClasses.size());
    if (trueClass >= n) trueClass = -1;
    if (predicted >= n) predicted = -1;
    m_trueFilter->setCurrentIndex(std::max(0, m_trueFilter->findData(trueClass)));
    m_predictedFilter->setCurrentIndex(std::max(0, m_predictedFilter->findData(predicted)));
    m_showAll->setEnabled(trueClass >= 0 || predicted >= 0);
    m_sampleProxy->setClassFilter(trueClass, predicted);
    m_gallery->setFilter(trueClass, predicted);
}

bool EvaluateView::exportSamples(const QString& path, QString* error) {
    std::vector<engine::api::EvaluationRecord> shown;
    shown.reserve(size_t(m_sampleProxy->rowCount()));
    for (int row = 0; row < m_sampleProxy->rowCount(); ++row)
        shown.push_back(m_samples->record(m_sampleProxy->mapToSource(m_sampleProxy->index(row, 0)).row()));
    const engine::Status st = engine::io::writeFileAtomic(path.toStdString(), engine::api::recordsCsv(shown, m_shownClasses, m_samples->features()));
    if (!st.ok()) {
        if (error != nullptr) *error = app::ErrorText::describe(st.error());
        return false;
    }
    m_status->setText(tr("%1 — %n sample(s) written to %2", "", int(shown.size())).arg(m_lastSummary, QDir::toNativeSeparators(path)));
    return true;
}

void EvaluateView::exportOverlays(const QList<qint64>& samples) {
    if (m_exporting || samples.isEmpty() || m_shownClasses.empty()) return;
    if (m_exportDialog) m_exportDialog->close();
    const QString proposed = QDir(QFileInfo(m_projectPath).absolutePath()).filePath(QStringLiteral("overlays"));
    auto* dialog = new OverlayExportDialog(m_project, m_shownClasses, int(samples.size()), proposed, this);
    m_exportDialog = dialog;
    // Deleted once its result is read (not on close, which would come before the result).
    connect(dialog, &QDialog::finished, this, [this, dialog, samples](int result) {
        if (result == QDialog::Accepted) exportOverlays(samples, dialog->settings());
        dialog->deleteLater();
    });
    dialog->open();
}

void EvaluateView::exportOverlays(const QList<qint64>& samples, const engine::api::OverlayExportOptions& settings) {
    if (m_exporting || samples.isEmpty() || m_shownClasses.empty()) return;
    const QString folder = QString::fromStdString(settings.folder);
    m_exporting = true;
    m_exportCancel = std::make_shared<std::atomic_bool>(false);
    auto* progress = new QProgressDialog(tr("Writing overlays…"), tr("Cancel"), 0, int(samples.size()), this);
    progress->setObjectName(QStringLiteral("overlayProgress"));
    progress->setWindowTitle(tr("Export overlays"));
    progress->setAttribute(Qt::WA_DeleteOnClose);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    progress->setMinimumDuration(0);
    progress->setValue(0);
    m_exportProgress = progress;
    const auto cancel = m_exportCancel;
    connect(progress, &QProgressDialog::canceled, this, [cancel] { cancel->store(true); });

    engine::api::OverlayExportOptions what = settings;
    what.samples.clear();
    for (qint64 s : samples) what.samples.push_back(s);
    const engine::io::Project project = m_project;
    const std::string projectPath = m_projectPath.toStdString();
    const engine::api::EvaluationOptions options = m_shownOptions;
    QPointer<EvaluateView> self(this);
    struct Done {
        bool ok = false;
        int written = 0;
        bool cancelled = false;
        QString message;
    };
    auto* watcher = new QFutureWatcher<Done>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, folder] {
        watcher->deleteLater();
        const Done done = watcher->result();
        m_exporting = false;
        if (m_exportProgress) m_exportProgress->close();
        if (done.ok)
            m_status->setText(done.cancelled ? tr("%1 — overlay export cancelled: %n overlay(s) written to %2", "", done.written)
                                                   .arg(m_lastSummary, QDir::toNativeSeparators(folder))
                                             : tr("%1 — %n overlay(s) written to %2", "", done.written)
                                                   .arg(m_lastSummary, QDir::toNativeSeparators(folder)));
        else
            m_status->setText(tr("%1 — overlays could not be exported: %2").arg(m_lastSummary, done.message));
        emit overlaysExported(done.ok, done.written, done.cancelled, done.message);
    });
    watcher->setFuture(QtConcurrent::run([self, project, projectPath, options, what, cancel]() {
        Done done;
        try {
            auto r = engine::api::exportOverlays(project, projectPath, options, what, [&](int64_t written, int64_t) {
                if (QObject* context = self.data())
                    QMetaObject::invokeMethod(
                        context, [self, written] {
                            if (self && self->m_exportProgress) self->m_exportProgress->setValue(int(written));
                        },
                        Qt::QueuedConnection);
                return !cancel->load();
            });
            if (r.ok()) {
                done.ok = true;
                done.written = int(r->written);
                done.cancelled = r->cancelled;
            } else {
                done.message = app::ErrorText::describe(engine::io::locate(r.error(), project));
            }
        } catch (const std::exception& ex) {
            done.message = QString::fromUtf8(ex.what());
        }
        return done;
    }));
}

void EvaluateView::fillClassFilters() {
    for (QComboBox* box : {m_trueFilter, m_predictedFilter}) {
        const QSignalBlocker block(box);
        box->clear();
        box->addItem(tr("Any class"), qlonglong(-1));
        for (size_t c = 0; c < m_shownClasses.size(); ++c) box->addItem(QString::fromStdString(m_shownClasses[c]), qlonglong(c));
    }
}

void EvaluateView::explainRecord(const engine::api::EvaluationRecord& record) {
    if (m_explanation) m_explanation->close();
    auto* dialog = new ExplanationDialog(m_project, m_projectPath, m_shownOptions, record.index,
                                         QString::fromStdString(record.source.empty() ? std::to_string(record.index) : record.source),
                                         m_shownClasses, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    m_explanation = dialog;
    dialog->show();
}

void EvaluateView::showClassificationTabs(bool classification) {
    for (QWidget* w : {static_cast<QWidget*>(m_confusionView), static_cast<QWidget*>(m_classView),
                       static_cast<QWidget*>(m_roc), static_cast<QWidget*>(m_pr), static_cast<QWidget*>(m_calibration)})
        m_tabs->setTabVisible(m_tabs->indexOf(w), classification);
    for (QWidget* w : {m_regression, m_residuals}) m_tabs->setTabVisible(m_tabs->indexOf(w), !classification);
}

void EvaluateView::showOutcome(const Outcome& outcome) {
    for (QCustomPlot* plot : {m_roc, m_pr, m_calibration, m_regression, m_residuals}) {
        plot->clearGraphs();
        plot->clearPlottables();
    }
    m_shownOptions = outcome.options;
    m_shownFromCache = outcome.ok && outcome.cachedAtMs > 0;
    m_shownCachedAt = m_shownFromCache ? QDateTime::fromMSecsSinceEpoch(outcome.cachedAtMs) : QDateTime();
    m_rerun->setVisible(m_shownFromCache);
    m_shownClasses.clear();
    setClassFilter(-1, -1);
    m_export->setEnabled(outcome.ok);
    m_samples->setPictures(nullptr, {});
    m_gallery->clear();
    m_gallery->hide();
    m_filterRow->hide();
    m_sampleView->setColumnHidden(SampleTableModel::Picture, true);
    m_sampleView->verticalHeader()->setDefaultSectionSize(m_defaultRowHeight);
    if (!outcome.ok) {
        m_confusion->set(nullptr);
        m_classes->set(nullptr);
        m_samples->set({}, {});
        m_lastSummary.clear();
        m_status->setText(tr("Evaluation failed: %1").arg(outcome.error));
        for (QCustomPlot* plot : {m_roc, m_pr, m_calibration, m_regression, m_residuals}) plot->replot();
        return;
    }
    const auto& e = outcome.evaluation;
    if (e.classification) {
        const auto& r = *e.classification;
        m_confusion->set(&r);
        m_classes->set(&r);
        m_samples->set(r.records, r.classNames, outcome.features);
        m_shownClasses = r.classNames;
        fillClassFilters();
        setClassFilter(-1, -1);
        m_filterRow->show();
        if (outcome.pictures) {
            m_gallery->setResults(r.records, r.classNames, m_project, m_projectPath, outcome.options);
            m_gallery->show();
            // The samples table shows the same thumbnails, from the gallery's cache.
            QPointer<MisclassifiedGallery> gallery = m_gallery;
            m_samples->setPictures(m_gallery->thumbnails(), [gallery](const engine::api::EvaluationRecord& record) {
                return gallery ? gallery->pictureFor(record) : QString();
            });
            m_sampleView->setColumnHidden(SampleTableModel::Picture, false);
            m_sampleView->verticalHeader()->setDefaultSectionSize(std::max(m_defaultRowHeight, 36));
            m_sampleView->setColumnWidth(SampleTableModel::Picture, 44);
        }
        m_lastSummary = tr("%1 samples of %2: accuracy %3, log loss %4, macro AUC %5, calibration error %6")
                            .arg(r.samples)
                            .arg(splitInSentence(outcome.predictions.split))
                            .arg(r.accuracy, 0, 'f', 4)
                            .arg(r.logLoss, 0, 'f', 4)
                            .arg(std::isfinite(r.macroAuc) ? QString::number(r.macroAuc, 'f', 4) : QStringLiteral("—"))
                            .arg(r.expectedCalibrationError, 0, 'f', 4);
        static const QColor kColors[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44), QColor(214, 39, 40),
                                         QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127),
                                         QColor(188, 189, 34), QColor(23, 190, 207)};
        for (size_t c = 0; c < r.roc.size(); ++c) {
            const auto& curve = r.roc[c];
            if (!curve.defined) continue;
            QCPGraph* g = m_roc->addGraph();
            g->setData(QVector<double>(curve.fpr.begin(), curve.fpr.end()), QVector<double>(curve.tpr.begin(), curve.tpr.end()), true);
            g->setPen(QPen(kColors[c % std::size(kColors)], 1.5));
            g->setName(tr("%1 (AUC %2)").arg(QString::fromStdString(r.classNames[c])).arg(curve.auc, 0, 'f', 3));
        }
        QCPGraph* chance = m_roc->addGraph();
        chance->setData(QVector<double>{0, 1}, QVector<double>{0, 1});
        chance->setPen(QPen(Qt::gray, 1, Qt::DashLine));
        chance->removeFromLegend();
        // Precision against recall, one curve per class (points in recall order).
        for (size_t c = 0; c < r.pr.size(); ++c) {
            const auto& curve = r.pr[c];
            if (!curve.defined) continue;
            QCPCurve* g = new QCPCurve(m_pr->xAxis, m_pr->yAxis);
            g->setData(QVector<double>(curve.recall.begin(), curve.recall.end()),
                       QVector<double>(curve.precision.begin(), curve.precision.end()));
            g->setPen(QPen(kColors[c % std::size(kColors)], 1.5));
            g->setName(tr("%1 (AP %2)").arg(QString::fromStdString(r.classNames[c])).arg(curve.averagePrecision, 0, 'f', 3));
        }
        // Reliability: accuracy per confidence bin as bars, their mean confidence as points, and
        // the diagonal a calibrated model follows.
        QVector<double> centres, accuracy, confidence, confidenceAt;
        for (const auto& bin : r.calibration) {
            if (bin.count == 0) continue;
            centres << (bin.lower + bin.upper) / 2;
            accuracy << bin.accuracy;
            confidenceAt << (bin.lower + bin.upper) / 2;
            confidence << bin.meanConfidence;
        }
        auto* bars = new QCPBars(m_calibration->xAxis, m_calibration->yAxis);
        bars->setData(centres, accuracy, true);
        bars->setWidth(r.calibration.empty() ? 0.1 : r.calibration.front().upper - r.calibration.front().lower);
        bars->setBrush(QColor(31, 119, 180, 140));
        bars->setPen(QPen(QColor(31, 119, 180)));
        bars->setName(tr("accuracy"));
        QCPGraph* conf = m_calibration->addGraph();
        conf->setData(confidenceAt, confidence, true);
        conf->setLineStyle(QCPGraph::lsNone);
        conf->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(214, 39, 40), 6));
        conf->setName(tr("mean confidence"));
        QCPGraph* ideal = m_calibration->addGraph();
        ideal->setData(QVector<double>{0, 1}, QVector<double>{0, 1});
        ideal->setPen(QPen(Qt::gray, 1, Qt::DashLine));
        ideal->removeFromLegend();
        showClassificationTabs(true);
    } else {
        const auto& r = *e.regression;
        m_confusion->set(nullptr);
        m_classes->set(nullptr);
        m_samples->set(r.records, {}, outcome.features);
        m_lastSummary = tr("%1 samples of %2: MAE %3, MSE %4, RMSE %5, R² %6")
                            .arg(r.samples)
                            .arg(splitInSentence(outcome.predictions.split))
                            .arg(r.mae, 0, 'g', 6)
                            .arg(r.mse, 0, 'g', 6)
                            .arg(r.rmse, 0, 'g', 6)
                            .arg(r.r2, 0, 'f', 4);
        // Predicted against true for the first output, and its residuals (true - predicted).
        const auto& p = outcome.predictions;
        QVector<double> truth, predicted, residual;
        for (int64_t i = 0; i < p.samples; ++i) {
            if (p.width <= 0 || p.targetWidth <= 0) break;
            truth << p.targets[size_t(i * p.targetWidth)];
            predicted << p.outputs[size_t(i * p.width)];
            residual << truth.back() - predicted.back();
        }
        auto scatter = [](QCustomPlot* plot, const QVector<double>& x, const QVector<double>& y) {
            QCPGraph* g = plot->addGraph();
            g->setData(x, y);
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180, 150), 4));
            plot->rescaleAxes();
            return g;
        };
        scatter(m_regression, truth, predicted);
        if (!truth.isEmpty()) {
            const auto [lo, hi] = std::minmax_element(truth.begin(), truth.end());
            QCPGraph* ideal = m_regression->addGraph();
            ideal->setData(QVector<double>{*lo, *hi}, QVector<double>{*lo, *hi});
            ideal->setPen(QPen(Qt::gray, 1, Qt::DashLine));
        }
        scatter(m_residuals, predicted, residual);
        QCPGraph* zero = m_residuals->addGraph();
        zero->setData(QVector<double>{m_residuals->xAxis->range().lower, m_residuals->xAxis->range().upper}, QVector<double>{0, 0});
        zero->setPen(QPen(Qt::gray, 1, Qt::DashLine));
        showClassificationTabs(false);
    }
    showFeatureColumns();
    m_sampleView->sortByColumn(-1, Qt::AscendingOrder);
    m_sampleProxy->sort(-1);
    if (m_shownFromCache)
        m_lastSummary = tr("%1 — cached from %2").arg(m_lastSummary, QLocale().toString(m_shownCachedAt.toLocalTime(), QLocale::ShortFormat));
    else if (!outcome.storeError.isEmpty())
        m_lastSummary = tr("%1 (not stored for next time: %2)").arg(m_lastSummary, outcome.storeError);
    if (!outcome.featuresError.isEmpty())
        m_lastSummary = tr("%1 (feature values not shown: %2)").arg(m_lastSummary, outcome.featuresError);
    m_status->setText(m_lastSummary);
    for (QCustomPlot* plot : {m_roc, m_pr, m_calibration, m_regression, m_residuals}) plot->replot();
}

void EvaluateView::showFeatureColumns() {
    // Each feature column as wide as its name (numbers are short); the one compact column takes
    // the rest of the row.
    const int columns = m_samples->featureColumns();
    for (int k = 0; k < columns; ++k) {
        const int column = SampleTableModel::ColumnCount + k;
        m_sampleView->setItemDelegateForColumn(column, m_featureDelegate);
        if (!m_samples->compactFeatures()) {
            const QString name = m_samples->headerData(column, Qt::Horizontal).toString();
            m_sampleView->setColumnWidth(column, std::clamp(m_sampleView->fontMetrics().horizontalAdvance(name) + 28, 64, 160));
        }
    }
}

void EvaluateView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

void EvaluateView::retranslate() {
    m_weightsLabel->setText(tr("Weights:"));
    m_weights->setPlaceholderText(tr("A weights file (safetensors) or a run folder"));
    m_splitLabel->setText(tr("Split:"));
    m_split->setItemText(0, tr("Test"));
    m_split->setItemText(1, tr("Validation"));
    m_split->setItemText(2, tr("Training"));
    m_split->setItemText(3, tr("Other data…"));
    m_split->setToolTip(tr("The project's test, validation or training split, or other data in the project's format"));
    m_dataPath->setPlaceholderText(tr("An image folder, a CSV index or a TFRecord file"));
    m_browseData->setText(tr("Browse"));
    m_browseData->menu()->actions().at(0)->setText(tr("Image folder…"));
    m_browseData->menu()->actions().at(1)->setText(tr("CSV index or TFRecord file…"));
    m_run->setText(tr("Evaluate"));
    m_rerun->setText(tr("Re-evaluate"));
    m_rerun->setToolTip(tr("Run the model again instead of showing the stored results"));
    m_export->setText(tr("Export samples…"));
    m_export->setToolTip(tr("Write the samples table as shown (filtered and sorted) to a CSV file"));
    m_trueFilterLabel->setText(tr("Samples of true class:"));
    m_predictedFilterLabel->setText(tr("predicted as:"));
    m_showAll->setText(tr("Show all"));
    for (QComboBox* box : {m_trueFilter, m_predictedFilter})
        if (box->count() > 0) box->setItemText(0, tr("Any class"));
    m_tabs->setTabText(m_tabs->indexOf(m_confusionView), tr("Confusion matrix"));
    m_tabs->setTabText(m_tabs->indexOf(m_classView), tr("Per class"));
    m_tabs->setTabText(m_tabs->indexOf(m_roc), tr("ROC curves"));
    m_tabs->setTabText(m_tabs->indexOf(m_pr), tr("Precision-recall"));
    m_tabs->setTabText(m_tabs->indexOf(m_calibration), tr("Calibration"));
    m_tabs->setTabText(m_tabs->indexOf(m_regression), tr("Predicted vs true"));
    m_tabs->setTabText(m_tabs->indexOf(m_residuals), tr("Residuals"));
    m_tabs->setTabText(m_tabs->indexOf(m_sampleView), tr("Samples"));
    m_roc->xAxis->setLabel(tr("False positive rate"));
    m_roc->yAxis->setLabel(tr("True positive rate"));
    m_pr->xAxis->setLabel(tr("Recall"));
    m_pr->yAxis->setLabel(tr("Precision"));
    m_calibration->xAxis->setLabel(tr("Confidence of the predicted class"));
    m_calibration->yAxis->setLabel(tr("Share predicted right"));
    m_regression->xAxis->setLabel(tr("True value (first output)"));
    m_regression->yAxis->setLabel(tr("Predicted value"));
    m_residuals->xAxis->setLabel(tr("Predicted value"));
    m_residuals->yAxis->setLabel(tr("Residual (true − predicted)"));
}

}  // namespace kiln::ui::evaluate
