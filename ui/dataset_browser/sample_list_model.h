// SPDX-License-Identifier: Apache-2.0
// A list model over a dataset index: rows come from the SQLite index a page at a time (so a
// million samples cost only what is on screen), filtered by label, split and status in SQL.
#pragma once

#include <memory>
#include <optional>

#include <QAbstractListModel>
#include <QHash>
#include <QList>
#include <QTimer>
#include <QVector>

#include "engine/api/datasets.h"

namespace kiln::ui {

class ThumbnailCache;

class SampleListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role {
        IdRole = Qt::UserRole + 1,  // qint64 row id in the index
        PathRole,                   // absolute file path
        RelativePathRole,           // path inside the data set
        LabelRole,                  // int class index
        ClassNameRole,              // QString
        SplitRole,                  // int (engine::api::SampleSplit)
        StatusRole,                 // int (engine::api::SampleStatus)
        ReasonRole,                 // QString, why a sample is bad
        ByteSizeRole,               // qint64
        WidthRole,
        HeightRole,
        HashRole,  // QString, 16 hex digits
    };
    static constexpr int kPageSize = 256;
    static constexpr int kMaxPages = 64;
    // Index rows walked per idle slice while the page anchors of the current filter are recorded
    // (about 2-3 ms on a slow machine): a jump deep into the grid then reads one page, not every
    // row before it.
    static constexpr int kAnchorSliceRows = 8192;

    // `thumbnails` may be null (no decoration then).
    explicit SampleListModel(ThumbnailCache* thumbnails = nullptr, QObject* parent = nullptr);
    ~SampleListModel() override;

    // Reads from `indexPath` through a connection of its own. Returns false (and stays empty)
    // when the index cannot be opened; lastError() says why. An empty path closes the index.
    bool setIndexPath(const QString& indexPath);
    // The same with an index opened already (on another thread: opening is file work the GUI
    // thread need not wait for); null shows nothing. The model uses it on its own thread only.
    bool setIndex(std::unique_ptr<engine::api::DatasetIndex> index);
    QString indexPath() const;
    QString lastError() const { return m_lastError; }

    void setFilter(const engine::api::SampleFilter& filter);
    const engine::api::SampleFilter& filter() const { return m_filter; }
    // Re-reads the row count and drops cached pages (after a scan or a split).
    void refresh();
    // The record of a row (reads its page when needed); nullopt when out of range.
    std::optional<engine::api::SampleRecord> record(int row) const;
    // True once the page anchors of the current filter cover every row (see kAnchorSliceRows).
    bool anchorsReady() const { return m_index && !m_anchorWarmup.isActive(); }
    // The row of a sample id among the pages read so far; -1 when not known.
    int rowOfId(qint64 id) const { return m_rowOfId.value(id, -1); }
    engine::api::DatasetIndex* datasetIndex() const { return m_index.get(); }

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    const QVector<engine::api::SampleRecord>* page(int pageNo) const;
    void thumbnailChanged(qint64 id);
    void warmAnchors();

    ThumbnailCache* m_thumbnails;
    std::unique_ptr<engine::api::DatasetIndex> m_index;
    engine::api::SampleFilter m_filter;
    int m_rows = 0;
    QString m_lastError;
    mutable QHash<int, QVector<engine::api::SampleRecord>> m_pages;
    mutable QList<int> m_pageOrder;  // least recently used first
    mutable QHash<qint64, int> m_rowOfId;
    QTimer m_anchorWarmup;  // records page anchors in idle slices after a reset
};

// Display names (translated) of splits and statuses.
QString splitDisplayName(engine::api::SampleSplit split);
QString statusDisplayName(engine::api::SampleStatus status);
// A translated sentence for a reason the index stores in English.
QString reasonDisplayText(const QString& reason);

}  // namespace kiln::ui
