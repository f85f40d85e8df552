// SPDX-License-Identifier: Apache-2.0
// Paged reads from the dataset index with a small LRU of pages; thumbnails as decoration. Page
// anchors are recorded in idle slices so that any page costs the same to read.
#include "ui/dataset_browser/sample_list_model.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QLocale>
#include <QPixmap>
#include <QThreadPool>

#include <iterator>

#include "ui/dataset_browser/thumbnail_cache.h"

namespace kiln::ui {

using engine::api::SampleRecord;
using engine::api::SampleSplit;
using engine::api::SampleStatus;

QString splitDisplayName(SampleSplit split) {
    switch (split) {
    case SampleSplit::Train:
        return QCoreApplication::translate("kiln::ui::DatasetBrowser", "Train");
    case SampleSplit::Validation:
        return QCoreApplication::translate("kiln::ui::DatasetBrowser", "Validation");
    case SampleSplit::Test:
        return QCoreApplication::translate("kiln::ui::DatasetBrowser", "Test");
    case SampleSplit::Unassigned:
        break;
    }
    return QCoreApplication::translate("kiln::ui::DatasetBrowser", "Unassigned");
}

QString statusDisplayName(SampleStatus status) {
    return status == SampleStatus::Ok ? QCoreApplication::translate("kiln::ui::DatasetBrowser", "OK")
                                      : QCoreApplication::translate("kiln::ui::DatasetBrowser", "Bad");
}

QString reasonDisplayText(const QString& reason) {
    const char* ctx = "kiln::ui::DatasetBrowser";
    if (reason.isEmpty()) return {};
    if (reason == QLatin1String("empty file")) return QCoreApplication::translate(ctx, "The file is empty.");
    if (reason.startsWith(QLatin1String("not an image")))
        return QCoreApplication::translate(ctx, "Not an image: the content is not PNG, JPEG, BMP or TIFF.");
    if (reason.startsWith(QLatin1String("truncated JPEG")))
        return QCoreApplication::translate(ctx, "Truncated JPEG: the end of the picture is missing.");
    if (reason.startsWith(QLatin1String("truncated PNG")))
        return QCoreApplication::translate(ctx, "Truncated PNG: the end of the picture is missing.");
    if (reason.startsWith(QLatin1String("truncated BMP")) ||
        reason.startsWith(QLatin1String("truncated TIFF")))
        return QCoreApplication::translate(ctx,
                                           "Truncated picture: the file is shorter than its header says.");
    if (reason.startsWith(QLatin1String("decode failed")))
        return QCoreApplication::translate(ctx, "The picture could not be decoded (%1).")
            .arg(reason.section(QLatin1Char(':'), 1).trimmed());
    return QCoreApplication::translate(ctx, "Unreadable: %1").arg(reason);
}

SampleListModel::SampleListModel(ThumbnailCache* thumbnails, QObject* parent)
    : QAbstractListModel(parent), m_thumbnails(thumbnails) {
    m_anchorWarmup.setInterval(0);
    connect(&m_anchorWarmup, &QTimer::timeout, this, &SampleListModel::warmAnchors);
    if (m_thumbnails != nullptr) {
        connect(m_thumbnails, &ThumbnailCache::thumbnailReady, this, &SampleListModel::thumbnailChanged);
        connect(m_thumbnails, &ThumbnailCache::thumbnailFailed, this,
                [this](qint64 id, const QString&) { thumbnailChanged(id); });
    }
}

SampleListModel::~SampleListModel() = default;

bool SampleListModel::setIndexPath(const QString& indexPath) {
    if (indexPath.isEmpty()) return setIndex(nullptr);
    auto opened = engine::api::DatasetIndex::open(indexPath.toStdString());
    if (!opened.ok()) {
        setIndex(nullptr);
        m_lastError = QString::fromStdString(opened.error().toString());
        return false;
    }
    return setIndex(std::make_unique<engine::api::DatasetIndex>(std::move(opened).value()));
}

bool SampleListModel::setIndex(std::unique_ptr<engine::api::DatasetIndex> index) {
    beginResetModel();
    m_pages.clear();
    m_pageOrder.clear();
    m_rowOfId.clear();
    m_rows = 0;
    if (m_index) {
        // Closing the file's last connection checkpoints its write-ahead log into the file, which
        // took 140-190 ms after a scan of 20,000 pictures: a pool thread closes it instead.
        QThreadPool::globalInstance()->start([old = m_index.release()] { delete old; });
    }
    m_anchorWarmup.stop();
    m_lastError.clear();
    m_index = std::move(index);
    if (m_index) {
        auto n = m_index->count(m_filter);
        m_rows = n.ok() ? static_cast<int>(*n) : 0;
        m_anchorWarmup.start();
    }
    endResetModel();
    return m_index != nullptr;
}

QString SampleListModel::indexPath() const {
    return m_index ? QString::fromStdString(m_index->indexPath()) : QString();
}

void SampleListModel::setFilter(const engine::api::SampleFilter& filter) {
    m_filter = filter;
    refresh();
}

void SampleListModel::refresh() {
    beginResetModel();
    m_pages.clear();
    m_pageOrder.clear();
    m_rowOfId.clear();
    m_rows = 0;
    if (m_index) {
        auto n = m_index->count(m_filter);
        if (n.ok())
            m_rows = static_cast<int>(*n);
        else
            m_lastError = QString::fromStdString(n.error().toString());
        m_anchorWarmup.start();
    }
    endResetModel();
}

void SampleListModel::warmAnchors() {
    // A failure here is no failure of the model: page() records what it needs itself.
    if (!m_index) {
        m_anchorWarmup.stop();
        return;
    }
    auto done = m_index->prepareAnchors(m_filter, kAnchorSliceRows);
    if (!done.ok() || *done) m_anchorWarmup.stop();
}

const QVector<SampleRecord>* SampleListModel::page(int pageNo) const {
    auto it = m_pages.find(pageNo);
    if (it != m_pages.end()) {
        m_pageOrder.removeOne(pageNo);
        m_pageOrder.append(pageNo);
        return &it.value();
    }
    if (!m_index) return nullptr;
    auto rows = m_index->page(m_filter, int64_t{pageNo} * kPageSize, kPageSize);
    if (!rows.ok()) return nullptr;
    while (m_pageOrder.size() >= kMaxPages) {
        const int old = m_pageOrder.takeFirst();
        for (const SampleRecord& r : m_pages.value(old)) m_rowOfId.remove(r.id);
        m_pages.remove(old);
    }
    QVector<SampleRecord> records(std::make_move_iterator(rows->begin()), std::make_move_iterator(rows->end()));
    for (int i = 0; i < records.size(); ++i) m_rowOfId.insert(records[i].id, pageNo * kPageSize + i);
    m_pageOrder.append(pageNo);
    return &m_pages.emplace(pageNo, std::move(records)).value();
}

std::optional<SampleRecord> SampleListModel::record(int row) const {
    if (row < 0 || row >= m_rows) return std::nullopt;
    const auto* p = page(row / kPageSize);
    const int at = row % kPageSize;
    if (p == nullptr || at >= p->size()) return std::nullopt;
    return (*p)[at];
}

int SampleListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : m_rows;
}

QVariant SampleListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const auto* p = page(index.row() / kPageSize);
    const int at = index.row() % kPageSize;
    if (p == nullptr || at >= p->size()) return {};
    const SampleRecord& r = (*p)[at];
    switch (role) {
    case Qt::DisplayRole:
        return QFileInfo(QString::fromStdString(r.path)).fileName();
    case Qt::ToolTipRole: {
        QString tip = tr("%1\nClass: %2\nSplit: %3")
                          .arg(QString::fromStdString(r.path), QString::fromStdString(r.className),
                               splitDisplayName(r.split));
        if (r.status == SampleStatus::Bad)
            tip += QLatin1Char('\n') + reasonDisplayText(QString::fromStdString(r.reason));
        return tip;
    }
    case Qt::DecorationRole:
        if (m_thumbnails == nullptr || r.status == SampleStatus::Bad) return {};
        {
            const QPixmap pm =
                m_thumbnails->thumbnail(r.id, QString::fromStdString(m_index->absolutePath(r)));
            if (pm.isNull()) return {};
            return pm;
        }
    case IdRole:
        return QVariant::fromValue<qint64>(r.id);
    case PathRole:
        return QString::fromStdString(m_index->absolutePath(r));
    case RelativePathRole:
        return QString::fromStdString(r.path);
    case LabelRole:
        return r.label;
    case ClassNameRole:
        return QString::fromStdString(r.className);
    case SplitRole:
        return static_cast<int>(r.split);
    case StatusRole:
        return static_cast<int>(r.status);
    case ReasonRole:
        return QString::fromStdString(r.reason);
    case ByteSizeRole:
        return QVariant::fromValue<qint64>(r.byteSize);
    case WidthRole:
        return r.width;
    case HeightRole:
        return r.height;
    case HashRole:
        return QString::fromStdString(engine::api::hashHex(r.hash));
    default:
        return {};
    }
}

QHash<int, QByteArray> SampleListModel::roleNames() const {
    auto names = QAbstractListModel::roleNames();
    names.insert(IdRole, "id");
    names.insert(PathRole, "path");
    names.insert(RelativePathRole, "relativePath");
    names.insert(LabelRole, "label");
    names.insert(ClassNameRole, "className");
    names.insert(SplitRole, "split");
    names.insert(StatusRole, "status");
    names.insert(ReasonRole, "reason");
    names.insert(ByteSizeRole, "byteSize");
    names.insert(WidthRole, "width");
    names.insert(HeightRole, "height");
    names.insert(HashRole, "hash");
    return names;
}

void SampleListModel::thumbnailChanged(qint64 id) {
    const int row = m_rowOfId.value(id, -1);
    if (row < 0 || row >= m_rows) return;
    const QModelIndex i = index(row);
    emit dataChanged(i, i, {Qt::DecorationRole});
}

}  // namespace kiln::ui
