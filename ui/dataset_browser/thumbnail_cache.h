// SPDX-License-Identifier: Apache-2.0
// Thumbnails decoded off the GUI thread (QImageReader with a scaled size on a thread pool), kept
// in an LRU cache; the most recently requested pictures are decoded first.
#pragma once

#include <QCache>
#include <QHash>
#include <QImage>
#include <QObject>
#include <QPixmap>
#include <QSet>
#include <QSize>
#include <QString>
#include <QThreadPool>
#include <QVector>

#include <memory>

namespace kiln::ui {

// Makes the calling thread yield to the GUI thread (a higher nice value on Linux). Call it only
// on threads of a pool of one's own: the setting stays with the thread.
void lowerCurrentThreadPriority();

class ThumbnailCache : public QObject {
    Q_OBJECT
public:
    // `size`: the box thumbnails are scaled into (aspect kept; small pictures are enlarged with
    // nearest-neighbour so their pixels stay visible). `capacity`: pictures kept in memory.
    explicit ThumbnailCache(QSize size, int capacity = 2000, QObject* parent = nullptr);
    ~ThumbnailCache() override;

    QSize thumbnailSize() const { return m_size; }
    // The cached thumbnail of `id`, or a null pixmap after queueing a decode of `path`.
    QPixmap thumbnail(qint64 id, const QString& path);
    bool contains(qint64 id) const { return m_cache->contains(id); }
    // Why `id` could not be decoded ("" when it could, or is not done yet).
    QString failure(qint64 id) const { return m_failed.value(id); }
    // Drops everything, including queued work. The thousands of pictures a large folder leaves
    // are freed on a pool thread: freeing them took tens of ms of the GUI thread.
    void clear();
    int queued() const { return static_cast<int>(m_queue.size()); }
    int maxThreads() const { return m_pool.maxThreadCount(); }
    // Decodes one picture scaled into `box` (the work each pooled task does).
    static QImage decode(const QString& path, QSize box, QString* error);

signals:
    void thumbnailReady(qint64 id);
    void thumbnailFailed(qint64 id, const QString& reason);

private:
    void pump();
    void finished(qint64 id, quint64 generation, const QImage& image, const QString& error);

    QSize m_size;
    int m_capacity;
    std::unique_ptr<QCache<qint64, QPixmap>> m_cache;
    QHash<qint64, QString> m_failed;
    // Requests newest last; only the newest kMaxQueued are kept (older ones have scrolled away).
    QVector<QPair<qint64, QString>> m_queue;
    QSet<qint64> m_queuedIds;
    QSet<qint64> m_inFlight;
    QThreadPool m_pool;
    quint64 m_generation = 0;
};

}  // namespace kiln::ui
