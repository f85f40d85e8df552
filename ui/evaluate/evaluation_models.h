// SPDX-License-Identifier: Apache-2.0
// Table models of an evaluation report for the Evaluate view: the confusion matrix (counts, with
// a heat-map background by share of the true class), the per-class figures and the per-sample
// records. They hold copies of the report's values; set() replaces them at once.
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QPointer>
#include <QSortFilterProxyModel>

#include <functional>
#include <memory>
#include <vector>

#include "engine/api/evaluation.h"

namespace kiln::ui {
class ThumbnailCache;
}

namespace kiln::ui::evaluate {

// Rows: true class, columns: predicted class. DisplayRole: the count; BackgroundRole: a colour
// whose strength is the count's share of its row; ToolTipRole: count and share.
class ConfusionMatrixModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void set(const engine::api::ClassificationReport* report);  // null clears
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int64_t m_classes = 0;
    std::vector<int64_t> m_counts;
    std::vector<std::string> m_names;
};

// One row per class, then the macro and weighted averages.
class ClassFiguresModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Class, Precision, Recall, F1, Support, Auc, AveragePrecision, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;
    void set(const engine::api::ClassificationReport* report);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString name;
        double precision = 0, recall = 0, f1 = 0, auc = 0, ap = 0;
        qint64 support = 0;
        bool average = false;
    };
    std::vector<Row> m_rows;
};

// Per-sample records in the report's order (most confidently wrong first). SortRole gives the
// raw value of a column for a QSortFilterProxyModel; DisplayRole the text. For picture data the
// Picture column's DecorationRole is the sample's thumbnail from a ThumbnailCache (the gallery's):
// asked for only when a row is painted, decoded on the cache's threads, a placeholder until then.
// For table data the columns after Loss show each sample's feature values (as its file holds
// them): one column per feature when there are at most kMaxFeatureColumns, else one Features
// column with the first kCompactFeatures "name=value" pairs whose tooltip lists them all. Texts
// are made when a row is painted; the values were read off the GUI thread.
class SampleTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Picture, Index, Source, True, Predicted, Confidence, Loss, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 1, CorrectRole };
    static constexpr size_t kMaxFeatureColumns = 8;
    static constexpr size_t kCompactFeatures = 4;
    using QAbstractTableModel::QAbstractTableModel;
    // Where a sample's picture file is ("" while it is being drawn; pictureReady() follows).
    using PictureLookup = std::function<QString(const engine::api::EvaluationRecord&)>;
    // `features`, for table data, holds the values of every sample a record's index names.
    void set(std::vector<engine::api::EvaluationRecord> records, std::vector<std::string> classNames,
             std::shared_ptr<const engine::api::SampleFeatures> features = {});
    // Thumbnails for the Picture column, or none (null cache) for data that are not pictures.
    void setPictures(ThumbnailCache* thumbnails, PictureLookup lookup);
    bool hasPictures() const;
    // The picture of sample `index` can now be read (or its thumbnail decoded): its row repaints.
    void pictureReady(qint64 sampleIndex);
    // The feature values shown (null for data that are not tables), how many columns they take
    // (after Loss) and whether that is the one compact Features column.
    const engine::api::SampleFeatures* features() const { return m_features.get(); }
    int featureColumns() const;
    bool compactFeatures() const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    const engine::api::EvaluationRecord& record(int row) const { return m_records[size_t(row)]; }

private:
    QString className(int64_t c) const;
    QVariant featureData(const engine::api::EvaluationRecord& record, int column, int role) const;
    QString featureText(int64_t sample, size_t feature) const;
    QVariant featureSortValue(int64_t sample, size_t feature) const;
    std::vector<engine::api::EvaluationRecord> m_records;
    std::vector<std::string> m_names;
    std::shared_ptr<const engine::api::SampleFeatures> m_features;
    QHash<qint64, int> m_rowOfSample;  // sample index -> row
    QPointer<ThumbnailCache> m_thumbnails;
    QMetaObject::Connection m_ready, m_failed;
    PictureLookup m_lookup;
};

// The per-sample table as shown: sortable (SortRole) and limited to one cell of the confusion
// matrix, a true class or a predicted class (-1: any).
class SampleFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setClassFilter(int64_t trueClass, int64_t predicted);
    int64_t trueFilter() const { return m_true; }
    int64_t predictedFilter() const { return m_predicted; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    int64_t m_true = -1;
    int64_t m_predicted = -1;
};

}  // namespace kiln::ui::evaluate
