// SPDX-License-Identifier: Apache-2.0
// Dataset browser wiring: index connections (one for the GUI, one per background job), the
// thumbnail grid and its delegate, filters, splits and the side panels.
#include "ui/dataset_browser/dataset_browser_widget.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QHeaderView>
#include <QListView>
#include <QListWidget>
#include <QMenu>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QLocale>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>

#include "engine/io/project.h"
#include "ui/common/theme.h"
#include "ui/dataset_browser/augmentation_preview.h"
#include "ui/dataset_browser/class_distribution_chart.h"
#include "ui/dataset_browser/import_dataset_dialog.h"
#include "ui/dataset_browser/pipeline_panel.h"
#include "ui/dataset_browser/sample_list_model.h"
#include "ui/dataset_browser/thumbnail_cache.h"

namespace kiln::ui {

using engine::api::DatasetIndex;
using engine::api::SampleSplit;
using engine::api::SampleStatus;

namespace {

const QSize kThumb(96, 96);
const QSize kCell(112, 128);
constexpr int kDetailBox = 240;

// Paints a cell: the thumbnail (or a placeholder while it decodes), the file name, a strip in the
// split's colour and a red mark on bad samples. Cheap: no decoding, no lookups beyond data().
// Holds a one-line label whose text changes many times while a folder opens and scans (the
// status, the count of samples shown). A label in a layout asks for a relayout of the whole
// window on every new text; here it fills a holder that has no layout and a size hint of its own,
// so a new text only repaints the label.
class LineHolder : public QWidget {
public:
    LineHolder(QLabel* label, QWidget* parent) : QWidget(parent), m_label(label) {
        m_label->setParent(this);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        setFixedHeight(m_label->fontMetrics().height() + 4);
        m_label->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    }
    QSize sizeHint() const override { return {m_label->fontMetrics().averageCharWidth() * 30, height()}; }
    QSize minimumSizeHint() const override { return {m_label->fontMetrics().averageCharWidth() * 8, height()}; }

protected:
    void resizeEvent(QResizeEvent* event) override {
        m_label->setGeometry(rect());
        QWidget::resizeEvent(event);
    }

private:
    QLabel* m_label;
};

class SampleDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QSize sizeHint(const QStyleOptionViewItem&, const QModelIndex&) const override { return kCell; }

    void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        p->save();
        const QRect r = option.rect.adjusted(2, 2, -2, -2);
        const bool selected = option.state & QStyle::State_Selected;
        p->fillRect(r, selected ? option.palette.highlight() : option.palette.base());
        const QRect pic(r.left() + (r.width() - kThumb.width()) / 2, r.top() + 4, kThumb.width(),
                        kThumb.height());
        const bool bad =
            index.data(SampleListModel::StatusRole).toInt() == static_cast<int>(SampleStatus::Bad);
        const QVariant deco = index.data(Qt::DecorationRole);
        if (deco.canConvert<QPixmap>() && !deco.value<QPixmap>().isNull()) {
            const QPixmap pm = deco.value<QPixmap>();
            const QSize s = pm.size()
                                .scaled(kThumb, Qt::KeepAspectRatio)
                                .boundedTo(pm.size().expandedTo(QSize(1, 1)) * 16);
            const QRect target(pic.center().x() - s.width() / 2 + 1, pic.center().y() - s.height() / 2 + 1,
                               s.width(), s.height());
            p->drawPixmap(target, pm);
        } else {
            p->fillRect(pic, option.palette.alternateBase());
            p->setPen(option.palette.mid().color());
            p->drawRect(pic.adjusted(0, 0, -1, -1));
        }
        if (bad) {
            p->setPen(QPen(Theme::instance().colors().error, 3));
            p->drawLine(pic.topLeft() + QPoint(16, 16), pic.bottomRight() - QPoint(16, 16));
            p->drawLine(pic.topRight() + QPoint(-16, 16), pic.bottomLeft() + QPoint(16, -16));
        }
        const auto split = static_cast<SampleSplit>(index.data(SampleListModel::SplitRole).toInt());
        p->fillRect(QRect(r.left() + 4, pic.bottom() + 3, r.width() - 8, 3), splitColour(split));
        p->setPen(selected ? option.palette.highlightedText().color() : option.palette.text().color());
        const QRect text(r.left() + 2, pic.bottom() + 7, r.width() - 4, r.bottom() - pic.bottom() - 7);
        const QString name = option.fontMetrics.elidedText(index.data(Qt::DisplayRole).toString(),
                                                           Qt::ElideMiddle, text.width());
        p->drawText(text, Qt::AlignHCenter | Qt::AlignTop, name);
        p->restore();
    }
};

QString byteText(qint64 bytes) {
    return QLocale().formattedDataSize(bytes);
}

}  // namespace

DatasetBrowserWidget::DatasetBrowserWidget(QWidget* parent)
    : QWidget(parent),
      m_thumbnails(new ThumbnailCache(kThumb, 3000, this)),
      m_model(new SampleListModel(m_thumbnails, this)) {
    m_jobs.setMaxThreadCount(2);
    buildUi();
    connect(&m_scanWatcher, &QFutureWatcher<ScanOutcome>::finished, this, &DatasetBrowserWidget::scanDone);
    connect(&m_splitWatcher, &QFutureWatcher<QString>::finished, this, [this] {
        const QString error = m_splitWatcher.result();
        m_applySplit->setEnabled(true);
        if (!error.isEmpty()) {
            m_status->setText(error);
            return;
        }
        m_model->refresh();
        refreshCounts();
        updateSplitControls();
        emit splitsChanged();
        emit dataSectionChanged();
    });
    connect(&m_detailWatcher, &QFutureWatcher<QImage>::finished, this, [this] {
        m_detailsImage = m_detailWatcher.result();
        if (!m_detailsImage.isNull()) {
            const bool small = m_detailsImage.width() < kDetailBox / 2;
            m_detailPicture->setPixmap(QPixmap::fromImage(
                m_detailsImage.scaled(kDetailBox, kDetailBox, Qt::KeepAspectRatio,
                                      small ? Qt::FastTransformation : Qt::SmoothTransformation)));
        }
        emit detailsPreviewReady();
    });
    connect(m_thumbnails, &ThumbnailCache::thumbnailFailed, this, &DatasetBrowserWidget::recordDecodeFailure);
}

DatasetBrowserWidget::~DatasetBrowserWidget() {
    if (m_cancelFlag) m_cancelFlag->store(true);
    m_scanWatcher.waitForFinished();
    m_splitWatcher.waitForFinished();
    m_detailWatcher.waitForFinished();
    m_overviewWatcher.waitForFinished();
    m_jobs.waitForDone();
}

void DatasetBrowserWidget::buildUi() {
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(4, 4, 4, 4);

    auto* toolbar = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open Folder…"), this);
    auto* import = new QPushButton(tr("Import…"), this);
    m_rescan = new QPushButton(tr("Rescan"), this);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setEnabled(false);
    // The bar sits in a fixed-size holder of its own: showing or hiding it then lays out the
    // holder alone, not the whole browser (which took several ms of the GUI thread per scan).
    auto* progressHolder = new QWidget(this);
    progressHolder->setFixedWidth(220);
    auto* progressLayout = new QHBoxLayout(progressHolder);
    progressLayout->setContentsMargins(0, 0, 0, 0);
    m_progress = new QProgressBar(progressHolder);
    progressHolder->setFixedHeight(m_progress->sizeHint().height());
    progressLayout->addWidget(m_progress);
    m_progress->setVisible(false);
    m_status = new QLabel(tr("No data set open."), this);
    // Copied with a context-menu action rather than made selectable: a selectable label keeps a
    // text document that is rebuilt on every size query, and the status changes many times a scan.
    auto* copyStatus = new QAction(tr("Copy Status"), m_status);
    connect(copyStatus, &QAction::triggered, this, [this] { QGuiApplication::clipboard()->setText(m_status->text()); });
    m_status->addAction(copyStatus);
    m_status->setContextMenuPolicy(Qt::ActionsContextMenu);
    toolbar->addWidget(open);
    toolbar->addWidget(import);
    toolbar->addWidget(m_rescan);
    toolbar->addWidget(m_cancel);
    toolbar->addWidget(progressHolder);
    toolbar->addWidget(new LineHolder(m_status, this), 1);
    root->addLayout(toolbar);
    connect(open, &QPushButton::clicked, this, &DatasetBrowserWidget::chooseFolder);
    connect(import, &QPushButton::clicked, this, &DatasetBrowserWidget::showImportDialog);
    connect(m_rescan, &QPushButton::clicked, this, &DatasetBrowserWidget::rescan);
    connect(m_cancel, &QPushButton::clicked, this, &DatasetBrowserWidget::cancelScan);

    auto* filters = new QHBoxLayout;
    m_classFilter = new QComboBox(this);
    m_classFilter->setMinimumContentsLength(12);
    m_splitFilter = new QComboBox(this);
    m_splitFilter->addItem(tr("All splits"), -2);
    for (SampleSplit s :
         {SampleSplit::Train, SampleSplit::Validation, SampleSplit::Test, SampleSplit::Unassigned})
        m_splitFilter->addItem(splitDisplayName(s), static_cast<int>(s));
    m_statusFilter = new QComboBox(this);
    m_statusFilter->addItem(tr("Any status"), -2);
    m_statusFilter->addItem(statusDisplayName(SampleStatus::Ok), static_cast<int>(SampleStatus::Ok));
    m_statusFilter->addItem(statusDisplayName(SampleStatus::Bad), static_cast<int>(SampleStatus::Bad));
    m_shown = new QLabel(this);
    filters->addWidget(new QLabel(tr("Class:"), this));
    filters->addWidget(m_classFilter);
    filters->addWidget(new QLabel(tr("Split:"), this));
    filters->addWidget(m_splitFilter);
    filters->addWidget(new QLabel(tr("Status:"), this));
    filters->addWidget(m_statusFilter);
    filters->addWidget(new LineHolder(m_shown, this), 1);
    root->addLayout(filters);
    refreshClassFilter();
    for (QComboBox* c : {m_classFilter, m_splitFilter, m_statusFilter})
        connect(c, &QComboBox::activated, this, &DatasetBrowserWidget::applyFilterFromControls);

    m_view = new QListView(this);
    m_view->setViewMode(QListView::IconMode);
    m_view->setMovement(QListView::Static);
    m_view->setResizeMode(QListView::Adjust);
    m_view->setUniformItemSizes(true);
    m_view->setLayoutMode(QListView::Batched);
    m_view->setBatchSize(250);  // short layout steps keep the event loop responsive
    m_view->setGridSize(kCell);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_view->setItemDelegate(new SampleDelegate(m_view));
    m_view->setModel(m_model);
    m_view->setAccessibleName(tr("Samples"));
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { showDetails(current); });
    // A picture's explanation by a trained run: the window that owns the runs opens it.
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const QModelIndex index = m_view->indexAt(at);
        if (!index.isValid()) return;
        const QString path = index.data(SampleListModel::PathRole).toString();
        auto* menu = new QMenu(m_view);
        menu->setObjectName(QStringLiteral("sampleContextMenu"));
        menu->setAttribute(Qt::WA_DeleteOnClose);
        QAction* explain = menu->addAction(tr("Explain with run…"));
        explain->setObjectName(QStringLiteral("explainWithRun"));
        connect(explain, &QAction::triggered, this, [this, path] { emit explainRequested(path); });
        menu->popup(m_view->viewport()->mapToGlobal(at));
    });

    m_chart = new ClassDistributionChart(this);
    // One short line per split: no word wrap, whose size query lays the text out many times
    // and ran on every count refresh of a scan.
    m_splitSizes = new QLabel(this);

    // Details.
    auto* details = new QWidget(this);
    auto* dform = new QFormLayout(details);
    m_detailPicture = new QLabel(details);
    m_detailPicture->setFixedSize(kDetailBox, kDetailBox);
    m_detailPicture->setAlignment(Qt::AlignCenter);
    m_detailPicture->setFrameShape(QFrame::StyledPanel);
    dform->addRow(m_detailPicture);
    for (QLabel** l : {&m_detailPath, &m_detailClass, &m_detailSplit, &m_detailSize, &m_detailDims,
                       &m_detailHash, &m_detailStatus}) {
        *l = new QLabel(details);
        (*l)->setTextInteractionFlags(Qt::TextSelectableByMouse);
        (*l)->setWordWrap(true);
    }
    dform->addRow(tr("File:"), m_detailPath);
    dform->addRow(tr("Class:"), m_detailClass);
    dform->addRow(tr("Split:"), m_detailSplit);
    dform->addRow(tr("Size:"), m_detailSize);
    dform->addRow(tr("Dimensions:"), m_detailDims);
    dform->addRow(tr("Hash:"), m_detailHash);
    dform->addRow(tr("Status:"), m_detailStatus);

    // Split controls.
    auto* splits = new QWidget(this);
    auto* sform = new QFormLayout(splits);
    m_byRatio = new QRadioButton(tr("By ratio"), splits);
    m_byFolder = new QRadioButton(tr("By folder (train/val/test)"), splits);
    m_byRatio->setChecked(true);
    auto* group = new QButtonGroup(splits);
    group->addButton(m_byRatio);
    group->addButton(m_byFolder);
    auto pct = [splits](double v) {
        auto* s = new QDoubleSpinBox(splits);
        s->setRange(0, 100);
        s->setDecimals(1);
        s->setSuffix(QStringLiteral(" %"));
        s->setValue(v);
        return s;
    };
    m_trainPct = pct(80);
    m_valPct = pct(10);
    m_testPct = pct(10);
    m_seed = new QSpinBox(splits);
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setValue(1);
    m_stratify = new QCheckBox(tr("Stratified by class"), splits);
    m_stratify->setChecked(true);
    m_applySplit = new QPushButton(tr("Apply Split"), splits);
    sform->addRow(m_byRatio);
    sform->addRow(tr("Train:"), m_trainPct);
    sform->addRow(tr("Validation:"), m_valPct);
    sform->addRow(tr("Test:"), m_testPct);
    sform->addRow(tr("Seed:"), m_seed);
    sform->addRow(m_stratify);
    sform->addRow(m_byFolder);
    sform->addRow(m_applySplit);
    sform->addRow(m_splitSizes);
    connect(m_applySplit, &QPushButton::clicked, this, [this] {
        if (m_byFolder->isChecked())
            splitByFolder();
        else
            splitByRatio(m_valPct->value() / 100.0, m_testPct->value() / 100.0,
                         static_cast<quint64>(m_seed->value()), m_stratify->isChecked());
    });
    // Training takes what validation and test leave.
    m_trainPct->setReadOnly(true);
    m_trainPct->setButtonSymbols(QAbstractSpinBox::NoButtons);
    m_valPct->setMaximum(99);
    m_testPct->setMaximum(99);
    auto syncTrain = [this] {
        m_trainPct->setValue(std::max(0.0, 100.0 - m_valPct->value() - m_testPct->value()));
    };
    connect(m_valPct, &QDoubleSpinBox::valueChanged, this, syncTrain);
    connect(m_testPct, &QDoubleSpinBox::valueChanged, this, syncTrain);
    for (QWidget* w : std::initializer_list<QWidget*>{m_trainPct, m_valPct, m_testPct, m_seed, m_stratify})
        connect(m_byRatio, &QRadioButton::toggled, w, &QWidget::setEnabled);

    m_augment = new AugmentationPreview(this);
    m_pipeline = new PipelinePanel(this);
    m_pipelineBaseline = m_pipeline->settings();
    connect(m_augment, &AugmentationPreview::transformsChanged, this, [this] {
        m_pipeline->setTransforms(m_augment->transforms());
        if (m_applyingSection) return;
        m_transformsEdited = true;
        emit dataSectionChanged();
    });
    connect(m_pipeline, &PipelinePanel::settingsChanged, this, [this] {
        if (m_applyingSection) return;
        m_pipelineEdited = true;
        emit dataSectionChanged();
    });
    m_pipeline->setTransforms(m_augment->transforms());

    auto scrolled = [this](QWidget* w) {
        auto* area = new QScrollArea(this);
        area->setWidget(w);
        area->setWidgetResizable(true);
        area->setFrameShape(QFrame::NoFrame);
        return area;
    };
    m_tabs = new QTabWidget(this);
    m_tabs->addTab(scrolled(details), tr("Details"));
    m_tabs->addTab(scrolled(splits), tr("Split"));
    m_tabs->addTab(scrolled(m_augment), tr("Augmentation"));
    m_tabs->addTab(scrolled(m_pipeline), tr("Pipeline"));

    auto* side = new QSplitter(Qt::Vertical, this);
    side->addWidget(m_chart);
    side->addWidget(m_tabs);
    side->setStretchFactor(0, 2);
    side->setStretchFactor(1, 3);
    // The overview of a source that is not an image folder (IDX, CSV index, TFRecord).
    m_overview = new QWidget(this);
    m_overview->setObjectName(QStringLiteral("sourceOverview"));
    auto* ov = new QVBoxLayout(m_overview);
    ov->setContentsMargins(0, 0, 0, 0);
    m_overviewSummary = new QLabel(m_overview);
    m_overviewSummary->setWordWrap(true);
    m_overviewSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    ov->addWidget(m_overviewSummary);
    m_overviewPictures = new QListWidget(m_overview);
    m_overviewPictures->setObjectName(QStringLiteral("overviewPictures"));
    m_overviewPictures->setViewMode(QListView::IconMode);
    m_overviewPictures->setMovement(QListView::Static);
    m_overviewPictures->setResizeMode(QListView::Adjust);
    m_overviewPictures->setIconSize(QSize(kCell.width() - 16, kCell.width() - 16));
    m_overviewPictures->setGridSize(kCell);
    ov->addWidget(m_overviewPictures, 3);
    m_overviewClasses = new QTableWidget(m_overview);
    m_overviewClasses->setObjectName(QStringLiteral("overviewClasses"));
    m_overviewClasses->setColumnCount(2);
    m_overviewClasses->verticalHeader()->hide();
    m_overviewClasses->horizontalHeader()->setStretchLastSection(true);
    m_overviewClasses->setEditTriggers(QAbstractItemView::NoEditTriggers);
    ov->addWidget(m_overviewClasses, 2);
    // "Explain with run…" on an overview picture: a CSV index's or TFRecord file's sample is read
    // as other data in the project's format; IDX data is read whole into memory, so its samples
    // are explained from the Evaluate workspace instead (the action says why).
    m_overviewPictures->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_overviewPictures, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const int row = m_overviewPictures->row(m_overviewPictures->itemAt(at));
        if (row < 0 || row >= m_overviewData.originalRecords.size()) return;
        auto* menu = new QMenu(m_overviewPictures);
        menu->setObjectName(QStringLiteral("sampleContextMenu"));
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->setToolTipsVisible(true);
        QAction* explain = menu->addAction(tr("Explain with run…"));
        explain->setObjectName(QStringLiteral("explainWithRun"));
        if (m_overviewFormat == "tfrecord" || m_overviewFormat == "csv_index") {
            const qint64 sample = m_overviewData.originalRecords[row];
            const QString path = m_overviewPath;
            explain->setToolTip(tr("Explain sample %1 of %2 with the selected run, else the newest one")
                                    .arg(sample)
                                    .arg(QDir::toNativeSeparators(path)));
            connect(explain, &QAction::triggered, this, [this, path, sample] { emit explainSampleRequested(path, sample); });
        } else {
            explain->setEnabled(false);
            explain->setToolTip(tr("IDX data is read into memory as a whole, not one sample at a time: explain its pictures "
                                   "in the Evaluate workspace, where a double click on a sample opens its explanation."));
        }
        menu->popup(m_overviewPictures->viewport()->mapToGlobal(at));
    });
    connect(m_overviewPictures, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && row < m_overviewData.originals.size()) augmentPicture(m_overviewData.originals[row]);
    });
    connect(&m_overviewWatcher, &QFutureWatcher<ImportPreview>::finished, this, [this] {
        m_overviewData = m_overviewWatcher.result();
        m_overviewReady = true;
        m_overviewPictures->clear();
        m_overviewClasses->setRowCount(0);
        if (!m_overviewData.error.isEmpty()) {
            m_overviewSummary->setText(m_overviewData.error);
            m_status->setText(tr("The project's data cannot be read."));
            emit sourceOverviewReady();
            return;
        }
        m_overviewSummary->setText(m_overviewData.summary);
        // Class names: the project's own ("class_names"), else what the source says.
        QStringList names = m_overviewData.classNames;
        if (m_imported.contains("class_names") && m_imported["class_names"].is_array())
            for (size_t k = 0; k < m_imported["class_names"].size() && int(k) < names.size(); ++k)
                if (m_imported["class_names"][k].is_string())
                    names[int(k)] = QString::fromStdString(m_imported["class_names"][k].get<std::string>());
        const int labelColumn = int(m_overviewData.headers.indexOf(QStringLiteral("label")));
        for (int i = 0; i < m_overviewData.originals.size(); ++i) {
            const QImage& img = m_overviewData.originals[i];
            const int side = kCell.width() - 16;
            QString text = tr("sample %1").arg(i);
            if (labelColumn >= 0 && i < m_overviewData.rows.size() && labelColumn < m_overviewData.rows[i].size()) {
                bool ok = false;
                const int label = m_overviewData.rows[i][labelColumn].toInt(&ok);
                if (ok && label >= 0 && label < names.size()) text = QStringLiteral("%1 · %2").arg(i).arg(names[label]);
            }
            auto* item = new QListWidgetItem(
                QIcon(QPixmap::fromImage(img.scaled(side, side, Qt::KeepAspectRatio,
                                                    img.width() < side / 2 ? Qt::FastTransformation : Qt::SmoothTransformation))),
                text, m_overviewPictures);
            item->setToolTip(tr("Click to see this picture in the Augmentation tab"));
        }
        m_overviewClasses->setHorizontalHeaderLabels({tr("Class"), tr("Samples")});
        m_overviewClasses->setRowCount(int(names.size()));
        engine::api::ClassSplitCounts counts;
        for (int k = 0; k < names.size(); ++k) {
            const qint64 n = k < m_overviewData.classCounts.size() ? m_overviewData.classCounts[k] : 0;
            counts.classNames.push_back(names[k].toStdString());
            counts.counts.push_back({n, 0, 0, 0});  // the training part
            m_overviewClasses->setItem(k, 0, new QTableWidgetItem(names[k]));
            auto* count = new QTableWidgetItem(QLocale().toString(k < m_overviewData.classCounts.size() ? m_overviewData.classCounts[k] : 0));
            count->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_overviewClasses->setItem(k, 1, count);
        }
        m_overviewClasses->resizeColumnsToContents();
        m_chart->setCounts(counts);
        if (!m_overviewData.originals.isEmpty()) m_overviewPictures->setCurrentRow(0);
        emit sourceOverviewReady();
    });
    m_left = new QStackedWidget(this);
    m_left->addWidget(m_view);
    m_left->addWidget(m_overview);

    auto* main = new QSplitter(Qt::Horizontal, this);
    main->addWidget(m_left);
    main->addWidget(side);
    main->setStretchFactor(0, 3);
    main->setStretchFactor(1, 2);
    root->addWidget(main, 1);
    updateSplitControls();
}

QString DatasetBrowserWidget::defaultIndexPath(const QString& folder) {
    const QString canonical = QFileInfo(folder).absoluteFilePath();
    const QByteArray key =
        QCryptographicHash::hash(canonical.toUtf8(), QCryptographicHash::Sha1).toHex().left(16);
    QString base = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation);
    if (base.isEmpty()) base = QDir::tempPath();
    const QString dir = base + QStringLiteral("/kiln/dataset-index");
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + QFileInfo(canonical).fileName() + QLatin1Char('-') +
           QString::fromLatin1(key) + QStringLiteral(".kindex");
}

bool DatasetBrowserWidget::openImageFolder(const QString& folder, const QString& indexPath) {
    return openFolder(folder, indexPath, nlohmann::json());
}

void DatasetBrowserWidget::writePipelineEdits(nlohmann::json& section) const {
    if (!m_pipelineEdited) return;
    const nlohmann::json now = m_pipeline->settings();
    for (const char* key : {"batch_size", "shuffle_buffer", "workers", "prefetch", "cache"}) {
        const bool has = now.contains(key), had = m_pipelineBaseline.contains(key);
        if (has && (!had || now[key] != m_pipelineBaseline[key])) section[key] = now[key];
        else if (!has && had) section.erase(key);
    }
}

engine::api::SplitSpec DatasetBrowserWidget::proposedSplit() const {
    engine::api::SplitSpec spec;
    spec.mode = engine::api::SplitSpec::Mode::Ratio;
    if (m_projectSection.is_null()) return spec;  // 80/10/10, seed 1, stratified
    // As training reads the section: no data.split means every sample trains.
    spec.validation = spec.test = 0;
    const nlohmann::json& d = m_projectSection;
    if (d.contains("split") && d["split"].is_object()) {
        const nlohmann::json& s = d["split"];
        if (s.contains("validation") && s["validation"].is_number()) spec.validation = s["validation"].get<double>();
        if (s.contains("test") && s["test"].is_number()) spec.test = s["test"].get<double>();
    }
    if (spec.validation < 0 || spec.test < 0 || spec.validation + spec.test >= 1) spec.validation = spec.test = 0;
    spec.train = 1.0 - spec.validation - spec.test;
    if (d.contains("seed") && d["seed"].is_number_unsigned()) spec.seed = d["seed"].get<uint64_t>();
    if (d.contains("stratify") && d["stratify"].is_boolean()) spec.stratify = d["stratify"].get<bool>();
    return spec;
}

bool DatasetBrowserWidget::openFolder(const QString& folder, const QString& indexPath, const nlohmann::json& projectSection) {
    m_projectSection = projectSection;
    m_splitEdited = false;
    cancelScan();
    m_scanWatcher.waitForFinished();
    m_splitWatcher.waitForFinished();
    m_thumbnails->clear();
    m_imported = nlohmann::json();
    m_left->setCurrentWidget(m_view);
    for (QComboBox* c : {m_classFilter, m_splitFilter, m_statusFilter}) c->setEnabled(true);
    m_folder = QFileInfo(folder).absoluteFilePath();
    m_indexPath = indexPath.isEmpty() ? defaultIndexPath(m_folder) : indexPath;
    m_lastError.clear();
    if (!QFileInfo(m_folder).isDir()) {
        m_lastError = tr("The folder %1 does not exist.").arg(QDir::toNativeSeparators(m_folder));
        m_status->setText(m_lastError);
        return false;
    }
    if (!QFileInfo(m_indexPath).absoluteDir().exists()) {
        m_lastError = tr("The folder for the dataset index, %1, does not exist.")
                          .arg(QDir::toNativeSeparators(QFileInfo(m_indexPath).absolutePath()));
        m_status->setText(m_lastError);
        return false;
    }
    // An existing index is shown at once (opening it writes nothing); a new one is created by
    // the scan job, off the GUI thread, and attached when it exists.
    m_pendingSplitProposal = true;
    const bool existing = QFileInfo::exists(m_indexPath);
    if (existing && !attachModel()) return false;
    m_status->setText(tr("Scanning %1…").arg(QDir::toNativeSeparators(m_folder)));
    // The rest happens on later turns of the event loop, each short: the window first lays out
    // and paints what changed above, then the grid is emptied, then the scan starts. Opening a
    // folder so never holds the GUI thread for long at a stretch.
    const quint64 generation = ++m_openGeneration;
    m_scanPending = true;
    QTimer::singleShot(1, this, [this, generation, existing] {
        if (generation != m_openGeneration) return;
        if (!existing) {
            m_model->setIndexPath({});
            refreshCounts();
        }
        QTimer::singleShot(1, this, [this, generation] {
            if (generation != m_openGeneration) return;
            m_scanPending = false;
            m_pipeline->setImageFolder(m_folder);
            startScan();
        });
    });
    emit dataSectionChanged();
    return true;
}

bool DatasetBrowserWidget::attachModel(std::unique_ptr<engine::api::DatasetIndex> opened) {
    if (!(opened ? m_model->setIndex(std::move(opened)) : m_model->setIndexPath(m_indexPath))) {
        m_lastError = tr("Cannot open the dataset index: %1").arg(m_model->lastError());
        m_status->setText(m_lastError);
        return false;
    }
    m_model->setFilter({});
    m_classFilter->setCurrentIndex(0);
    m_splitFilter->setCurrentIndex(0);
    m_statusFilter->setCurrentIndex(0);
    auto layout = m_model->datasetIndex()->layout();
    if (layout.ok()) m_layout = *layout;
    refreshCounts();
    refreshClassFilter();
    auto spec = m_model->datasetIndex()->splitSpec();
    m_pendingSplitProposal = !spec.ok() || spec->mode == engine::api::SplitSpec::Mode::None;
    // An index kept from an earlier look at the folder may hold another split than the project's:
    // the scan then shows the project's, the one training will use.
    if (!m_pendingSplitProposal && !m_projectSection.is_null() && m_layout != engine::api::FolderLayout::SplitFolders) {
        const engine::api::SplitSpec want = proposedSplit();
        m_pendingSplitProposal = spec->mode != engine::api::SplitSpec::Mode::Ratio ||
                                 std::abs(spec->validation - want.validation) > 1e-9 || std::abs(spec->test - want.test) > 1e-9 ||
                                 spec->seed != want.seed || spec->stratify != want.stratify;
    }
    updateSplitControls();
    return true;
}

bool DatasetBrowserWidget::isScanning() const {
    return m_scanPending || m_scanWatcher.isRunning();
}

bool DatasetBrowserWidget::isSplitting() const {
    return m_splitWatcher.isRunning();
}

void DatasetBrowserWidget::rescan() {
    if (m_folder.isEmpty() || isScanning()) return;
    startScan();
}

void DatasetBrowserWidget::cancelScan() {
    ++m_openGeneration;  // a scan that has not started yet does not start
    m_scanPending = false;
    if (m_cancelFlag) m_cancelFlag->store(true);
}

void DatasetBrowserWidget::startScan() {
    m_cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_progress->setVisible(true);
    m_progress->setRange(0, 0);
    m_cancel->setEnabled(true);
    m_rescan->setEnabled(false);
    m_status->setText(tr("Scanning %1…").arg(QDir::toNativeSeparators(m_folder)));
    const std::string folder = m_folder.toStdString();
    const std::string indexPath = m_indexPath.toStdString();
    const bool propose = m_pendingSplitProposal;
    const engine::api::SplitSpec proposal = proposedSplit();
    const bool attach = m_model->datasetIndex() == nullptr;
    auto cancel = m_cancelFlag;
    m_scanWatcher.setFuture(
        QtConcurrent::run(&m_jobs, [this, folder, indexPath, propose, proposal, attach, cancel]() -> ScanOutcome {
            lowerCurrentThreadPriority();
            ScanOutcome out;
            auto index = DatasetIndex::open(indexPath);
            if (!index.ok()) {
                out.message = QString::fromStdString(index.error().toString());
                return out;
            }
            // The index exists now: let the grid read it while the scan fills it, through a
            // connection of its own opened here rather than on the GUI thread.
            if (attach) {
                auto reader = DatasetIndex::open(indexPath);
                auto held = std::make_shared<std::unique_ptr<DatasetIndex>>(
                    reader.ok() ? std::make_unique<DatasetIndex>(std::move(reader).value()) : nullptr);
                QMetaObject::invokeMethod(
                    this,
                    [this, held] {
                        if (!m_model->datasetIndex()) attachModel(std::move(*held));
                    },
                    Qt::QueuedConnection);
            }
            engine::api::ScanOptions options;
            options.cancel = cancel.get();
            // Progress is posted to the GUI thread; the widget waits for this job before it dies.
            options.progress = [this](const engine::api::ScanProgress& p) {
                QMetaObject::invokeMethod(
                    this,
                    [this, p] {
                        emit scanProgress(p.processed, p.total);
                        const qint64 now = QDateTime::currentMSecsSinceEpoch();
                        // QProgressBar::setValue repaints the window at once, outside the usual
                        // coalesced update: five times a second is enough for the eye.
                        if (now - m_lastProgressShownMs >= 200 || p.processed >= p.total) {
                            m_lastProgressShownMs = now;
                            m_progress->setRange(0, static_cast<int>(std::min<int64_t>(p.total, INT_MAX)));
                            m_progress->setValue(static_cast<int>(std::min<int64_t>(p.processed, INT_MAX)));
                        }
                        // Counts are cheap (one grouped query): keep the chart moving during a scan.
                        if (now - m_lastCountsRefreshMs > 1000) {
                            m_lastCountsRefreshMs = now;
                            refreshCounts();
                            if (m_model->rowCount() == 0) m_model->refresh();
                        }
                    },
                    Qt::QueuedConnection);
            };
            auto stats = index->scanImageFolder(folder, options);
            if (!stats.ok()) {
                out.cancelled = stats.error().code == engine::ErrorCode::Cancelled;
                out.message = out.cancelled ? tr("Scan cancelled; what was read so far is kept.")
                                            : QString::fromStdString(stats.error().toString());
                return out;
            }
            if (propose) {
                const auto st = stats->layout == engine::api::FolderLayout::SplitFolders
                                    ? index->assignSplitsByFolder()
                                    : index->assignSplitsByRatio(proposal.train, proposal.validation, proposal.test,
                                                                 proposal.seed, proposal.stratify);
                if (!st.ok()) {
                    out.message = QString::fromStdString(st.error().toString());
                    return out;
                }
            }
            out.ok = true;
            const QLocale loc;
            out.message = tr("%1 pictures, %2 classes: %3 new, %4 changed, %5 unchanged, %6 removed, %7 bad.")
                              .arg(loc.toString(stats->files))
                              .arg(index->classNames().ok() ? index->classNames()->size() : 0)
                              .arg(loc.toString(stats->added), loc.toString(stats->changed),
                                   loc.toString(stats->unchanged), loc.toString(stats->removed),
                                   loc.toString(stats->bad));
            return out;
        }));
}

void DatasetBrowserWidget::scanDone() {
    const ScanOutcome out = m_scanWatcher.result();
    m_progress->setVisible(false);
    m_cancel->setEnabled(false);
    m_rescan->setEnabled(true);
    m_status->setText(out.message);
    if (out.ok) m_pendingSplitProposal = false;
    if (m_model->datasetIndex()) {
        auto l = m_model->datasetIndex()->layout();
        if (l.ok()) m_layout = *l;
    }
    m_model->refresh();
    refreshCounts();
    refreshClassFilter();
    updateSplitControls();
    if (out.ok) {
        emit splitsChanged();
        emit dataSectionChanged();
    }
    emit scanFinished(out.ok, out.message);
}

void DatasetBrowserWidget::refreshCounts() {
    if (!m_model->datasetIndex()) {
        m_chart->setCounts({});
        m_splitSizes->clear();
        m_shown->clear();
        return;
    }
    auto counts = m_model->datasetIndex()->counts();
    if (!counts.ok()) return;
    m_chart->setCounts(*counts);
    const QLocale loc;
    const int64_t total = counts->total();
    auto part = [&](SampleSplit s) {
        const int64_t n = counts->total(s);
        return tr("%1: %2 (%3 %)")
            .arg(splitDisplayName(s), loc.toString(n),
                 loc.toString(total > 0 ? 100.0 * double(n) / double(total) : 0.0, 'f', 1));
    };
    auto bad = m_model->datasetIndex()->count({std::nullopt, std::nullopt, SampleStatus::Bad});
    m_splitSizes->setText(QStringList{part(SampleSplit::Train), part(SampleSplit::Validation),
                                      part(SampleSplit::Test), part(SampleSplit::Unassigned),
                                      tr("Bad samples: %1").arg(loc.toString(bad.ok() ? *bad : 0))}
                              .join(QLatin1Char('\n')));
    m_shown->setText(
        tr("%1 of %2 samples shown").arg(loc.toString(m_model->rowCount()), loc.toString(total)));
}

void DatasetBrowserWidget::refreshClassFilter() {
    const QVariant current = m_classFilter->currentData();
    m_classFilter->clear();
    m_classFilter->addItem(tr("All classes"), -2);
    if (m_model->datasetIndex()) {
        auto names = m_model->datasetIndex()->classNames();
        if (names.ok())
            for (size_t k = 0; k < names->size(); ++k)
                m_classFilter->addItem(QString::fromStdString((*names)[k]), int(k));
    }
    const int at = m_classFilter->findData(current);
    m_classFilter->setCurrentIndex(at >= 0 ? at : 0);
}

void DatasetBrowserWidget::updateSplitControls() {
    m_byFolder->setEnabled(m_layout == engine::api::FolderLayout::SplitFolders);
    if (!m_model->datasetIndex()) return;
    auto spec = m_model->datasetIndex()->splitSpec();
    if (!spec.ok()) return;
    if (spec->mode == engine::api::SplitSpec::Mode::Folder) {
        m_byFolder->setChecked(true);
    } else if (spec->mode == engine::api::SplitSpec::Mode::Ratio) {
        m_byRatio->setChecked(true);
        m_trainPct->setValue(spec->train * 100);
        m_valPct->setValue(spec->validation * 100);
        m_testPct->setValue(spec->test * 100);
        m_seed->setValue(static_cast<int>(std::min<uint64_t>(spec->seed, INT_MAX)));
        m_stratify->setChecked(spec->stratify);
    }
}

void DatasetBrowserWidget::runSplitJob(std::function<engine::Status(DatasetIndex&)> job) {
    if (m_indexPath.isEmpty() || isSplitting()) return;
    if (isScanning()) {
        m_status->setText(tr("Wait for the scan to finish before splitting."));
        return;
    }
    m_applySplit->setEnabled(false);
    const std::string path = m_indexPath.toStdString();
    m_splitWatcher.setFuture(QtConcurrent::run(&m_jobs, [path, job]() -> QString {
        lowerCurrentThreadPriority();
        auto index = DatasetIndex::open(path);
        if (!index.ok()) return QString::fromStdString(index.error().toString());
        const auto st = job(*index);
        return st.ok() ? QString() : QString::fromStdString(st.error().toString());
    }));
}

void DatasetBrowserWidget::splitByRatio(double validation, double test, quint64 seed, bool stratify) {
    if (validation < 0 || test < 0 || validation + test >= 1) {
        m_status->setText(tr("Validation and test must leave some samples for training."));
        return;
    }
    m_splitEdited = true;
    const double train = 1.0 - validation - test;
    runSplitJob([=](DatasetIndex& index) {
        return index.assignSplitsByRatio(train, validation, test, seed, stratify);
    });
}

void DatasetBrowserWidget::splitByFolder() {
    m_splitEdited = true;
    runSplitJob([](DatasetIndex& index) { return index.assignSplitsByFolder(); });
}

void DatasetBrowserWidget::setFilter(std::optional<int> label, std::optional<SampleSplit> split,
                                     std::optional<SampleStatus> status) {
    m_classFilter->setCurrentIndex(std::max(0, m_classFilter->findData(label ? *label : -2)));
    m_splitFilter->setCurrentIndex(
        std::max(0, m_splitFilter->findData(split ? static_cast<int>(*split) : -2)));
    m_statusFilter->setCurrentIndex(
        std::max(0, m_statusFilter->findData(status ? static_cast<int>(*status) : -2)));
    applyFilterFromControls();
}

void DatasetBrowserWidget::applyFilterFromControls() {
    engine::api::SampleFilter f;
    const int label = m_classFilter->currentData().toInt();
    const int split = m_splitFilter->currentData().toInt();
    const int status = m_statusFilter->currentData().toInt();
    if (label != -2) f.label = label;
    if (split != -2) f.split = static_cast<SampleSplit>(split);
    if (status != -2) f.status = static_cast<SampleStatus>(status);
    m_model->setFilter(f);
    refreshCounts();
}

void DatasetBrowserWidget::showDetails(const QModelIndex& index) {
    const auto rec = index.isValid() ? m_model->record(index.row()) : std::nullopt;
    m_detailPicture->clear();
    m_detailsImage = QImage();
    if (!rec) {
        m_currentId = -1;
        for (QLabel* l : {m_detailPath, m_detailClass, m_detailSplit, m_detailSize, m_detailDims,
                          m_detailHash, m_detailStatus})
            l->clear();
        m_augment->setSamplePath({});
        return;
    }
    m_currentId = rec->id;
    const QString path = index.data(SampleListModel::PathRole).toString();
    m_detailPath->setText(QDir::toNativeSeparators(path));
    m_detailClass->setText(tr("%1 (label %2)").arg(QString::fromStdString(rec->className)).arg(rec->label));
    m_detailSplit->setText(splitDisplayName(rec->split));
    m_detailSize->setText(byteText(rec->byteSize));
    m_detailDims->setText(rec->width > 0 ? tr("%1 × %2 pixels").arg(rec->width).arg(rec->height)
                                         : tr("unknown"));
    m_detailHash->setText(QString::fromStdString(engine::api::hashHex(rec->hash)));
    QString status = statusDisplayName(rec->status);
    const QString thumbFailure = m_thumbnails->failure(rec->id);
    if (rec->status == SampleStatus::Bad)
        status += QStringLiteral(": ") + reasonDisplayText(QString::fromStdString(rec->reason));
    else if (!thumbFailure.isEmpty())
        status = statusDisplayName(SampleStatus::Bad) + QStringLiteral(": ") + thumbFailure;
    m_detailStatus->setText(status);
    if (rec->status == SampleStatus::Ok) {
        m_detailWatcher.setFuture(QtConcurrent::run(&m_jobs, [path] {
            lowerCurrentThreadPriority();
            return ThumbnailCache::decode(path, QSize(kDetailBox, kDetailBox), nullptr);
        }));
        m_augment->setSamplePath(path);
    } else {
        m_augment->setSamplePath({});
    }
    emit sampleSelected(rec->id);
}

void DatasetBrowserWidget::recordDecodeFailure(qint64 id, const QString& reason) {
    // The header looked fine at scan time but the full decode failed: remember it in the index
    // (a background connection, so a running scan never blocks the GUI).
    if (m_indexPath.isEmpty()) return;
    const std::string path = m_indexPath.toStdString();
    const std::string why = "decode failed: " + reason.toStdString();
    (void)QtConcurrent::run(&m_jobs, [path, id, why] {
        lowerCurrentThreadPriority();
        auto index = DatasetIndex::open(path);
        if (index.ok()) (void)index->setStatus(id, SampleStatus::Bad, why);
    });
}

void DatasetBrowserWidget::chooseFolder() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Image Folder"), m_folder);
    if (!dir.isEmpty()) openImageFolder(dir);
}

void DatasetBrowserWidget::showImportDialog() {
    ImportDatasetDialog dialog(this);
    if (!m_folder.isEmpty()) dialog.setPath(m_folder);
    if (dialog.exec() != QDialog::Accepted) return;
    if (dialog.kind() == ImportDatasetDialog::Kind::ImageFolder) {
        openImageFolder(dialog.path());
        return;
    }
    m_imported = dialog.dataSection();
    m_projectSection = nlohmann::json();
    m_transformsEdited = false;
    m_pipelineEdited = false;
    showSourceOverview(m_imported);
    m_status->setText(tr("Imported %1 as the project's data.").arg(QDir::toNativeSeparators(dialog.path())));
    emit dataSectionChanged();
}

nlohmann::json DatasetBrowserWidget::dataSection() const {
    if (!m_imported.is_null()) {
        // Another kind of source: its own settings, with what was edited here since.
        nlohmann::json j = m_imported;
        if (m_transformsEdited) j["transforms"] = m_augment->transforms();
        if (m_pipelineEdited)
            for (const auto& [key, value] : m_pipeline->settings().items()) j[key] = value;
        return j;
    }
    if (!m_projectSection.is_null()) {
        // The project's section as it was, with only what the user changed here.
        nlohmann::json j = m_projectSection;
        if (m_transformsEdited) j["transforms"] = m_augment->transforms();
        writePipelineEdits(j);
        if (m_splitEdited && m_model->datasetIndex()) {
            auto spec = m_model->datasetIndex()->splitSpec();
            if (spec.ok() && spec->mode == engine::api::SplitSpec::Mode::Ratio) {
                j["split"] = {{"validation", spec->validation}, {"test", spec->test}};
                j["stratify"] = spec->stratify;
                j["seed"] = spec->seed;
            } else if (spec.ok() && spec->mode == engine::api::SplitSpec::Mode::Folder) {
                j.erase("split");
            }
        }
        return j;
    }
    // A folder opened here: the whole section, but the pipeline's settings only where the user
    // changed them (a data.batch_size would override the training section's batch size).
    nlohmann::json j = nlohmann::json::object();
    writePipelineEdits(j);
    j["format"] = "folder";
    j["path"] = m_folder.toStdString();
    j["index"] = m_indexPath.toStdString();
    j["transforms"] = m_augment->transforms();
    if (m_model->datasetIndex()) {
        auto names = m_model->datasetIndex()->classNames();
        if (names.ok()) j["class_names"] = *names;
        auto spec = m_model->datasetIndex()->splitSpec();
        // A folder split needs no setting: training uses train/val/test folders when present.
        if (spec.ok() && spec->mode == engine::api::SplitSpec::Mode::Ratio) {
            j["split"] = {{"validation", spec->validation}, {"test", spec->test}};
            j["stratify"] = spec->stratify;
            j["seed"] = spec->seed;
        }
    }
    return j;
}

void DatasetBrowserWidget::setDataSection(const nlohmann::json& data) {
    if (!data.is_object()) return;
    const std::string format = data.contains("format") && data["format"].is_string() ? data["format"].get<std::string>() : "";
    m_applyingSection = true;
    if (data.contains("transforms"))
        m_augment->setTransforms(data["transforms"]);
    else if (format != "folder")
        m_augment->setTransforms(nlohmann::json::array());  // what training does: no transforms
    m_pipeline->setSettings(data);
    m_pipelineBaseline = m_pipeline->settings();
    m_applyingSection = false;
    m_transformsEdited = false;
    m_pipelineEdited = false;
    if (format == "folder" && data.contains("path") && data["path"].is_string()) {
        // The paths as training reads them: ${KILN_DATA}, ~ and paths relative to the project.
        const std::string project = m_projectPath.toStdString();
        std::string index = data.contains("index") && data["index"].is_string() ? data["index"].get<std::string>() : "";
        if (!index.empty()) index = engine::io::resolveDataPath(index, project);
        m_left->setCurrentWidget(m_view);
        openFolder(QString::fromStdString(engine::io::resolveDataPath(data["path"].get<std::string>(), project)),
                   QString::fromStdString(index), data);
    } else if (!format.empty()) {
        m_imported = data;
        showSourceOverview(data);
    }
}

bool DatasetBrowserWidget::overviewShown() const { return m_left->currentWidget() == m_overview; }

void DatasetBrowserWidget::showSourceOverview(const nlohmann::json& data) {
    using Kind = ImportDatasetDialog::Kind;
    const std::string format = data["format"].get<std::string>();
    Kind kind;
    if (format == "idx") kind = Kind::Idx;
    else if (format == "csv_index") kind = Kind::CsvIndex;
    else if (format == "tfrecord") kind = Kind::TfRecord;
    else if (format == "csv") kind = Kind::CsvTable;
    else {
        m_left->setCurrentWidget(m_overview);
        m_overviewSummary->setText(tr("Kiln cannot show data of the kind \"%1\".").arg(QString::fromStdString(format)));
        return;
    }
    // The paths as training reads them: ${KILN_DATA}, ~ and paths relative to the project.
    const std::string project = m_projectPath.toStdString();
    nlohmann::json section = data;
    auto resolveIn = [&project](nlohmann::json& j) {
        for (const char* key : {"path", "images", "labels"})
            if (j.contains(key) && j[key].is_string())
                j[key] = engine::io::resolveDataPath(j[key].get<std::string>(), project);
    };
    resolveIn(section);
    for (const char* part : {"train", "validation", "test"})
        if (section.contains(part)) {
            if (section[part].is_object()) resolveIn(section[part]);
            else if (section[part].is_string()) section[part] = engine::io::resolveDataPath(section[part].get<std::string>(), project);
        }
    if (kind == Kind::Idx && !(section.contains("train") && section["train"].is_object())) {
        m_left->setCurrentWidget(m_overview);
        m_overviewSummary->setText(tr("data.train needs the IDX images and labels files."));
        return;
    }
    if (kind != Kind::Idx && !(section.contains("path") && section["path"].is_string()) && section.contains("train") &&
        section["train"].is_string())
        section["path"] = section["train"];
    m_left->setCurrentWidget(m_overview);
    m_overviewReady = false;
    m_overviewFormat = format;
    m_overviewPath = kind == Kind::Idx ? QString() : QString::fromStdString(section.value("path", std::string()));
    m_overviewSummary->setText(tr("Reading…"));
    // The folder's filters and details do not apply; the pictures go to the Augmentation tab.
    for (QComboBox* c : {m_classFilter, m_splitFilter, m_statusFilter}) c->setEnabled(false);
    m_tabs->setCurrentIndex(2);
    m_status->setText(tr("The project reads %1 data (not an image folder): an overview of its training part.")
                          .arg(QString::fromStdString(format).toUpper()));
    m_overviewWatcher.setFuture(QtConcurrent::run(&m_jobs, [kind, section] { return ImportDatasetDialog::readPreview(kind, section); }));
}

void DatasetBrowserWidget::augmentPicture(const QImage& picture) {
    if (!m_augmentDir) m_augmentDir = std::make_unique<QTemporaryDir>();
    if (!m_augmentDir->isValid()) return;
    const QString file = m_augmentDir->filePath(QStringLiteral("sample.png"));
    if (picture.save(file, "PNG")) m_augment->setSamplePath(file);
}

}  // namespace kiln::ui
