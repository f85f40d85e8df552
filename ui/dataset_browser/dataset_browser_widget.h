// SPDX-License-Identifier: Apache-2.0
// The dataset browser: a virtualised thumbnail grid over a dataset index with filters, the class
// distribution per split, split controls, per-sample details, an augmentation preview and the
// input pipeline settings. Scans and decodes run off the GUI thread.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include <QFuture>
#include <QFutureWatcher>
#include <QImage>
#include <QThreadPool>
#include <QWidget>

#include "engine/api/datasets.h"
#include "ui/dataset_browser/import_dataset_dialog.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QListView;
class QListWidget;
class QStackedWidget;
class QTableWidget;
class QTemporaryDir;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTabWidget;

namespace kiln::ui {

class AugmentationPreview;
class ClassDistributionChart;
class PipelinePanel;
class SampleListModel;
class ThumbnailCache;

class DatasetBrowserWidget : public QWidget {
    Q_OBJECT
public:
    explicit DatasetBrowserWidget(QWidget* parent = nullptr);
    ~DatasetBrowserWidget() override;

    // Where the index of `folder` is kept by default: the user's cache folder, one file per
    // data set folder.
    static QString defaultIndexPath(const QString& folder);

    // Opens an image folder: shows what the index already holds at once, then rescans in the
    // background (only new or changed files are read). When the index has no split yet, a
    // stratified 80/10/10 split (or the train/val/test folders) is proposed. Returns false when
    // the index cannot be opened (the reason is shown and returned by lastError()).
    bool openImageFolder(const QString& folder, const QString& indexPath = {});
    QString folder() const { return m_folder; }
    QString indexPath() const { return m_indexPath; }
    QString lastError() const { return m_lastError; }
    bool isScanning() const;
    void rescan();
    void cancelScan();

    // Splits (run off the GUI thread; splitsChanged() follows). By ratio, training gets what
    // validation and test leave, exactly as training splits the folder with the same seed.
    void splitByRatio(double validation, double test, quint64 seed, bool stratify = true);
    void splitByFolder();
    bool isSplitting() const;

    // Which samples the grid shows; an empty optional shows all.
    void setFilter(std::optional<int> label, std::optional<engine::api::SampleSplit> split,
                   std::optional<engine::api::SampleStatus> status = std::nullopt);

    // The project's "data" section for what is shown ("format": "folder", path, split, stratify,
    // seed, class names, transforms, pipeline settings), in the form training reads. After importing another
    // kind of source, that source's section.
    nlohmann::json dataSection() const;
    // Applies a project's data section: opens an image folder ("format": "folder"), takes
    // its transforms and pipeline settings. Other sources (IDX, CSV index, TFRecord) are shown as
    // an overview read off the GUI thread: how many samples, the classes and their counts, the
    // first pictures (a picture clicked there goes to the Augmentation tab).
    void setDataSection(const nlohmann::json& data);
    // Relative data paths of a project are taken from its folder ("": the current folder).
    void setProjectPath(const QString& path) { m_projectPath = path; }
    // The overview of a non-folder source (null until one was read) and whether it is shown.
    const ImportPreview* sourceOverview() const { return m_overviewReady ? &m_overviewData : nullptr; }
    bool overviewShown() const;
    QListWidget* overviewPictures() const { return m_overviewPictures; }

    SampleListModel* model() const { return m_model; }
    QListView* view() const { return m_view; }
    ClassDistributionChart* chart() const { return m_chart; }
    AugmentationPreview* augmentationPreview() const { return m_augment; }
    PipelinePanel* pipelinePanel() const { return m_pipeline; }
    ThumbnailCache* thumbnails() const { return m_thumbnails; }
    // The sample shown in the details panel (-1 for none).
    qint64 currentSampleId() const { return m_currentId; }
    QImage detailsPreview() const { return m_detailsImage; }

public slots:
    // Asks for a folder and opens it.
    void chooseFolder();
    // Opens the import dialog; an image folder is opened here, other sources become the data
    // section (dataSectionChanged()).
    void showImportDialog();

signals:
    void scanProgress(qint64 processed, qint64 total);
    void scanFinished(bool ok, const QString& message);
    void splitsChanged();
    void dataSectionChanged();
    void sampleSelected(qint64 id);
    void sourceOverviewReady();
    void detailsPreviewReady();
    // "Explain with run…" from a picture's context menu: the picture file to explain.
    void explainRequested(const QString& picturePath);
    // "Explain with run…" from a picture of the overview of a CSV index or TFRecord file: sample
    // `sample` of `dataPath` (the file the overview reads, as training resolves it), read as
    // other data in the project's format.
    void explainSampleRequested(const QString& dataPath, qint64 sample);

private:
    struct ScanOutcome {
        bool ok = false;
        bool cancelled = false;
        QString message;
    };
    void buildUi();
    // Shows the index at m_indexPath in the grid: `opened` when given (opened by the scan job),
    // else opened here.
    bool attachModel(std::unique_ptr<engine::api::DatasetIndex> opened = nullptr);
    bool openFolder(const QString& folder, const QString& indexPath, const nlohmann::json& projectSection);
    // The split a scan proposes: the project's (its data.split, seed and stratify) when the folder
    // came from the project, else 80/10/10.
    engine::api::SplitSpec proposedSplit() const;
    // The pipeline settings the user changed since the section was applied, into `section`.
    void writePipelineEdits(nlohmann::json& section) const;
    void startScan();
    void scanDone();
    void refreshCounts();
    void refreshClassFilter();
    void updateSplitControls();
    void runSplitJob(std::function<engine::Status(engine::api::DatasetIndex&)> job);
    void applyFilterFromControls();
    void showDetails(const QModelIndex& index);
    void recordDecodeFailure(qint64 id, const QString& reason);

    void showSourceOverview(const nlohmann::json& data);
    void augmentPicture(const QImage& picture);

    QString m_projectPath;
    QStackedWidget* m_left = nullptr;  // the thumbnail grid, or the overview of another source
    QWidget* m_overview = nullptr;
    QLabel* m_overviewSummary = nullptr;
    QListWidget* m_overviewPictures = nullptr;
    QTableWidget* m_overviewClasses = nullptr;
    QFutureWatcher<ImportPreview> m_overviewWatcher;
    ImportPreview m_overviewData;
    bool m_overviewReady = false;
    std::string m_overviewFormat;  // the project's data format while the overview is shown
    QString m_overviewPath;        // the file the overview reads (resolved)
    std::unique_ptr<QTemporaryDir> m_augmentDir;  // the picture the Augmentation tab works on
    bool m_applyingSection = false;
    bool m_transformsEdited = false;  // by the user, since the section was applied
    bool m_pipelineEdited = false;
    bool m_splitEdited = false;       // a split applied by the user since the section was applied
    // The project's folder data section as applied by setDataSection (null when the folder was
    // opened here). dataSection() gives it back unchanged but for what the user edited, so that
    // opening a project never rewrites its split, batch size, seed or path.
    nlohmann::json m_projectSection;
    nlohmann::json m_pipelineBaseline;  // the pipeline panel's settings right after the section was applied
    QString m_folder;
    QString m_indexPath;
    QString m_lastError;
    nlohmann::json m_imported;  // the data section of a non-folder import
    engine::api::FolderLayout m_layout = engine::api::FolderLayout::ClassFolders;

    ThumbnailCache* m_thumbnails;
    SampleListModel* m_model;
    QListView* m_view = nullptr;
    ClassDistributionChart* m_chart = nullptr;
    AugmentationPreview* m_augment = nullptr;
    PipelinePanel* m_pipeline = nullptr;
    QTabWidget* m_tabs = nullptr;

    QPushButton* m_rescan = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QComboBox* m_classFilter = nullptr;
    QComboBox* m_splitFilter = nullptr;
    QComboBox* m_statusFilter = nullptr;
    QLabel* m_shown = nullptr;
    QLabel* m_splitSizes = nullptr;
    QRadioButton* m_byRatio = nullptr;
    QRadioButton* m_byFolder = nullptr;
    QDoubleSpinBox* m_trainPct = nullptr;
    QDoubleSpinBox* m_valPct = nullptr;
    QDoubleSpinBox* m_testPct = nullptr;
    QSpinBox* m_seed = nullptr;
    QCheckBox* m_stratify = nullptr;
    QPushButton* m_applySplit = nullptr;

    QLabel* m_detailPicture = nullptr;
    QLabel* m_detailPath = nullptr;
    QLabel* m_detailClass = nullptr;
    QLabel* m_detailSplit = nullptr;
    QLabel* m_detailSize = nullptr;
    QLabel* m_detailDims = nullptr;
    QLabel* m_detailHash = nullptr;
    QLabel* m_detailStatus = nullptr;
    qint64 m_currentId = -1;
    QImage m_detailsImage;
    QFutureWatcher<QImage> m_detailWatcher;

    // Background jobs (scans, splits, previews) run here at a lower priority than the GUI.
    QThreadPool m_jobs;
    std::shared_ptr<std::atomic<bool>> m_cancelFlag;
    QFutureWatcher<ScanOutcome> m_scanWatcher;
    QFutureWatcher<QString> m_splitWatcher;
    bool m_pendingSplitProposal = false;
    qint64 m_lastCountsRefreshMs = 0;
    qint64 m_lastProgressShownMs = 0;
    quint64 m_openGeneration = 0;
    bool m_scanPending = false;  // opened, and the scan starts on the next turn of the loop  // bumped by each open and cancel; a pending scan start checks it
};

}  // namespace kiln::ui
