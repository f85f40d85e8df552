// SPDX-License-Identifier: Apache-2.0
// Thumbnail decoding on a private thread pool; results come back as queued calls.
#include "ui/dataset_browser/thumbnail_cache.h"

#include <QImageReader>
#include <QRunnable>

#if defined(__linux__)
#include <sys/resource.h>
#endif

namespace kiln::ui {

namespace {

constexpr int kMaxQueued = 400;

}  // namespace

void lowerCurrentThreadPriority() {
#if defined(__linux__)
    // On Linux the nice value belongs to the thread (who = 0 is the calling thread).
    if (getpriority(PRIO_PROCESS, 0) < 10) (void)setpriority(PRIO_PROCESS, 0, 10);
#endif
}

ThumbnailCache::ThumbnailCache(QSize size, int capacity, QObject* parent)
    : QObject(parent), m_size(size), m_capacity(capacity), m_cache(std::make_unique<QCache<qint64, QPixmap>>(capacity)) {
    // Leave a core to the GUI thread on small machines.
    m_pool.setMaxThreadCount(std::max(1, QThread::idealThreadCount() - 1));
}

ThumbnailCache::~ThumbnailCache() {
    m_pool.clear();
    m_pool.waitForDone();
}

QImage ThumbnailCache::decode(const QString& path, QSize box, QString* error) {
    QImageReader reader(path);
    reader.setAutoTransform(true);
    const QSize full = reader.size();
    if (full.isValid() && (full.width() > box.width() || full.height() > box.height()))
        reader.setScaledSize(full.scaled(box, Qt::KeepAspectRatio));
    QImage image = reader.read();
    if (image.isNull()) {
        if (error != nullptr) *error = reader.errorString();
        return {};
    }
    if (image.width() < box.width() && image.height() < box.height()) {
        // Enlarge small pictures by a whole factor, keeping their pixels sharp.
        const int factor = std::max(1, std::min(box.width() / image.width(), box.height() / image.height()));
        image = image.scaled(image.size() * factor, Qt::KeepAspectRatio, Qt::FastTransformation);
    }
    return image;
}

QPixmap ThumbnailCache::thumbnail(qint64 id, const QString& path) {
    if (QPixmap* p = m_cache->object(id)) return *p;
    if (m_failed.contains(id) || m_inFlight.contains(id)) return {};
    if (m_queuedIds.contains(id)) {
        // Asked again: it is on screen now, so move it to the front.
        for (int i = 0; i < m_queue.size(); ++i)
            if (m_queue[i].first == id) {
                m_queue.append(m_queue.takeAt(i));
                break;
            }
    } else {
        m_queue.append({id, path});
        m_queuedIds.insert(id);
        while (m_queue.size() > kMaxQueued) m_queuedIds.remove(m_queue.takeFirst().first);
    }
    pump();
    return {};
}

void ThumbnailCache::pump() {
    while (!m_queue.isEmpty() && m_inFlight.size() < m_pool.maxThreadCount() * 2) {
        const auto [id, path] = m_queue.takeLast();
        m_queuedIds.remove(id);
        m_inFlight.insert(id);
        const QSize box = m_size;
        const quint64 generation = m_generation;
        m_pool.start([this, id, path, box, generation] {
            lowerCurrentThreadPriority();
            QString error;
            const QImage image = decode(path, box, &error);
            // Queued onto the GUI thread; dropped with this object (the pool is drained first).
            QMetaObject::invokeMethod(
                this, [this, id, generation, image, error] { finished(id, generation, image, error); },
                Qt::QueuedConnection);
        });
    }
}

void ThumbnailCache::finished(qint64 id, quint64 generation, const QImage& image, const QString& error) {
    if (generation != m_generation) return;
    m_inFlight.remove(id);
    if (image.isNull()) {
        m_failed.insert(id, error);
        emit thumbnailFailed(id, error);
    } else {
        m_cache->insert(id, new QPixmap(QPixmap::fromImage(image)));
        emit thumbnailReady(id);
    }
    pump();
}

void ThumbnailCache::clear() {
    ++m_generation;
    m_pool.clear();
    m_queue.clear();
    m_queuedIds.clear();
    m_inFlight.clear();
    if (m_cache->isEmpty() && m_failed.isEmpty()) return;
    // The old pictures and reasons go to a pool thread, which frees them. The pixmaps are raster
    // images in Qt 6 (no server-side pixmaps on xcb or offscreen), so freeing them there touches
    // nothing of the GUI thread's.
    std::shared_ptr<QCache<qint64, QPixmap>> old(m_cache.release());
    m_cache = std::make_unique<QCache<qint64, QPixmap>>(m_capacity);
    auto failed = std::make_shared<QHash<qint64, QString>>(std::move(m_failed));
    m_failed = {};
    // Moved in, so that the task holds the only references whenever it runs.
    QThreadPool::globalInstance()->start([old = std::move(old), failed = std::move(failed)]() mutable {
        old.reset();
        failed.reset();
    });
}

}  // namespace kiln::ui
