// SPDX-License-Identifier: Apache-2.0
// The Evaluate view: runs trained weights of a project over one of its splits off the GUI thread
// (engine/api/evaluation.h, the same code as kiln-eval) and shows the confusion matrix as a heat
// map with counts, the per-class figures, the ROC curves and the per-sample records, most
// confidently wrong first. A newer evaluation replaces one still running (latest wins).
#pragma once

#include <QPointer>
#include <QWidget>

#include <memory>

#include "engine/api/evaluation.h"
#include "engine/io/project.h"

class QComboBox;
class QDialog;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
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
    bool busy() const { return m_running > 0; }

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
    // The explanation dialog opened last (null when none is open).
    ExplanationDialog* explanationDialog() const;

public slots:
    void evaluate();
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

signals:
    // After an evaluation ends (not for one replaced by a newer one); `message` is the error.
    void finished(bool ok, const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Outcome;
    void retranslate();
    void showOutcome(const Outcome& outcome);
    void explainRecord(const engine::eval::SampleRecord& record);
    void fillClassFilters();

    engine::io::Project m_project;
    QString m_projectPath;
    QLineEdit* m_weights = nullptr;
    QComboBox* m_split = nullptr;
    QPushButton* m_run = nullptr;
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
    engine::api::EvaluationOptions m_shownOptions;  // of the results on show
    std::vector<std::string> m_shownClasses;        // empty: no classification on show
    quint64 m_generation = 0;
    int m_running = 0;
    QString m_lastSummary;
};

}  // namespace kiln::ui::evaluate
