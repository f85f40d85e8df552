// SPDX-License-Identifier: Apache-2.0
// The Evaluate view: runs trained weights of a project over one of its splits off the GUI thread
// (engine/api/evaluation.h, the same code as kiln-eval) and shows the confusion matrix as a heat
// map with counts, the per-class figures, the ROC curves and the per-sample records, most
// confidently wrong first. A newer evaluation replaces one still running (latest wins). The
// model's outputs are stored beside the weights (engine/api/evaluation_cache.h): evaluating the
// same weights on the same data again shows the stored results, with the time they were computed
// and a Re-evaluate button. Besides the project's splits, other data in the project's format (an
// image folder, a CSV index, TFRecord files) can be chosen.
#pragma once

#include <QDateTime>
#include <QPointer>
#include <QWidget>

#include <atomic>
#include <memory>

#include "engine/api/evaluation.h"
#include "engine/api/overlay_export.h"
#include "engine/io/project.h"

class QComboBox;
class QDialog;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressDialog;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QStyledItemDelegate;
class QTabWidget;
class QTableView;

namespace kiln::ui::evaluate {

class ClassFiguresModel;
class ConfusionMatrixModel;
class MisclassifiedGallery;
class SampleFilterProxy;
class SampleTableModel;
class ExplanationDialog;

class EvaluateView : public QWidget {
    Q_OBJECT
public:
    explicit EvaluateView(QWidget* parent = nullptr);
    ~EvaluateView() override;

    void setProject(const engine::io::Project& project, const QString& path);
    // A safetensors file or a run folder.
    void setWeights(const QString& weights);
    QString weights() const;
    // "test", "val", "train", or the path of other data in the project's format.
    void setSplit(const QString& split);
    QString split() const;
    bool busy() const { return m_running > 0; }
    // Whether the results on show were read from the stored evaluation of the run, and when
    // those were computed (invalid otherwise).
    bool shownFromCache() const { return m_shownFromCache; }
    QDateTime shownCachedAt() const { return m_shownCachedAt; }
    // How many evaluations ran the model (not those read from a stored evaluation).
    int modelPasses() const { return m_modelPasses; }

    ConfusionMatrixModel* confusionModel() const { return m_confusion; }
    ClassFiguresModel* classModel() const { return m_classes; }
    SampleTableModel* sampleModel() const { return m_samples; }
    QSortFilterProxyModel* sampleProxy() const;
    QCustomPlot* rocPlot() const { return m_roc; }
    // Precision-recall per class (average precision in the legend), the reliability diagram
    // (accuracy and mean confidence per confidence bin), and for regression heads predicted
    // against true values and the residuals.
    QCustomPlot* prPlot() const { return m_pr; }
    QCustomPlot* calibrationPlot() const { return m_calibration; }
    QCustomPlot* regressionPlot() const { return m_regression; }
    QCustomPlot* residualPlot() const { return m_residuals; }
    QTableView* sampleView() const { return m_sampleView; }
    QTableView* confusionView() const { return m_confusionView; }
    // Beside the tabs for picture classifiers; hidden for other data and for regression.
    MisclassifiedGallery* gallery() const { return m_gallery; }
    // The tab shown, by its widget's object name ("confusionView", "samplesView", ...), so that
    // the studio can reopen the view where the user left it; showTab ignores unknown names.
    QString currentTab() const;
    void showTab(const QString& name);
    // The explanation dialog opened last (null when none is open).
    ExplanationDialog* explanationDialog() const;

public slots:
    // Shows the stored results when they match the weights and data, else runs the model.
    void evaluate();
    // Runs the model again, whether or not a stored evaluation matches.
    void reevaluate();
    // Opens the sample in `row` of the sample table (the view's row, as sorted) with its Grad-CAM
    // overlay; classification results only.
    void explainRow(int row);
    // The same for a row of the misclassified gallery.
    void explainGalleryRow(int row);
    // Limits the samples table and the gallery to a true and a predicted class (-1: any); a click
    // on a confusion matrix cell sets both.
    void setClassFilter(qint64 trueClass, qint64 predicted);
    // Writes the samples table as shown (filtered and sorted) to a CSV file, in kiln-eval's
    // --samples-csv columns; false with the reason in `error` (naming the file) otherwise.
    bool exportSamples(const QString& path, QString* error = nullptr);
    // Opens the overlay export dialog for samples of the results shown (indices in the split):
    // method, Grad-CAM layer, class, opacity and folder; its Export starts the export below. The
    // samples table's selected rows and the gallery's pictures open it from their context menus.
    void exportOverlays(const QList<qint64>& samples);
    // Writes the overlays of `samples` with the method, layer, class and opacity of `settings` into
    // its folder, with overlays.csv, off the GUI thread, with a progress dialog whose Cancel stops
    // it; overlaysExported() follows.
    void exportOverlays(const QList<qint64>& samples, const engine::api::OverlayExportOptions& settings);
    bool exportingOverlays() const { return m_exporting; }
    QProgressDialog* overlayProgress() const;
    // The overlay export dialog while it is open (an OverlayExportDialog), else null.
    QDialog* overlayExportDialog() const { return m_exportDialog.data(); }

signals:
    // After an evaluation ends (not for one replaced by a newer one); `message` is the error.
    void finished(bool ok, const QString& message);
    // Another tab was brought to the front (by the user or by showTab).
    void tabChanged(const QString& name);
    // After an overlay export ends: how many were written, and the error or "" (also when cancelled).
    void overlaysExported(bool ok, int written, bool cancelled, const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Outcome;
    void start(bool useCache);
    void splitChosen();
    void browseData(bool folder);
    void retranslate();
    void showOutcome(const Outcome& outcome);
    void explainRecord(const engine::api::EvaluationRecord& record);
    void fillClassFilters();
    void showFeatureColumns();

    engine::io::Project m_project;
    QString m_projectPath;
    QLineEdit* m_weights = nullptr;
    QComboBox* m_split = nullptr;
    QLineEdit* m_dataPath = nullptr;    // other data (the split box's last entry)
    QPushButton* m_browseData = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_rerun = nullptr;     // shown with results read from a stored evaluation
    QPushButton* m_export = nullptr;
    QLabel* m_weightsLabel = nullptr;
    QLabel* m_splitLabel = nullptr;
    QLabel* m_status = nullptr;
    QWidget* m_filterRow = nullptr;
    QLabel* m_trueFilterLabel = nullptr;
    QLabel* m_predictedFilterLabel = nullptr;
    QComboBox* m_trueFilter = nullptr;
    QComboBox* m_predictedFilter = nullptr;
    QPushButton* m_showAll = nullptr;
    QSplitter* m_splitter = nullptr;
    MisclassifiedGallery* m_gallery = nullptr;
    QTabWidget* m_tabs = nullptr;
    QTableView* m_confusionView = nullptr;
    QTableView* m_classView = nullptr;
    QTableView* m_sampleView = nullptr;
    QStyledItemDelegate* m_featureDelegate = nullptr;  // the feature columns, cut at their end
    QCustomPlot* m_roc = nullptr;
    QCustomPlot* m_pr = nullptr;
    QCustomPlot* m_calibration = nullptr;
    QCustomPlot* m_regression = nullptr;
    QCustomPlot* m_residuals = nullptr;
    void showClassificationTabs(bool classification);
    ConfusionMatrixModel* m_confusion = nullptr;
    ClassFiguresModel* m_classes = nullptr;
    SampleTableModel* m_samples = nullptr;
    SampleFilterProxy* m_sampleProxy = nullptr;
    QPointer<QDialog> m_explanation;  // an ExplanationDialog
    QPointer<QProgressDialog> m_exportProgress;
    QPointer<QDialog> m_exportDialog;
    std::shared_ptr<std::atomic_bool> m_exportCancel;
    bool m_exporting = false;
    engine::api::EvaluationOptions m_shownOptions;  // of the results on show
    std::vector<std::string> m_shownClasses;        // empty: no classification on show
    quint64 m_generation = 0;
    int m_running = 0;
    int m_defaultRowHeight = 0;
    int m_modelPasses = 0;
    bool m_shownFromCache = false;
    QDateTime m_shownCachedAt;
    QString m_lastSummary;
};

}  // namespace kiln::ui::evaluate
