// SPDX-License-Identifier: Apache-2.0
// The misclassified gallery: the list model, the drawing pass for samples without a picture file
// and the widget around the list view.
#include "ui/evaluate/misclassified_gallery.h"

#include <QContextMenuEvent>
#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QPainter>
#include <QTemporaryDir>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "app/common/error_text.h"
#include "engine/api/explanation.h"
#include "ui/common/theme.h"
#include "ui/dataset_browser/thumbnail_cache.h"

namespace kiln::ui::evaluate {

namespace {

const QSize kThumb(96, 96);
constexpr int kBatch = 32;  // pictures handed back to the GUI thread at a time

}  // namespace

GalleryModel::GalleryModel(ThumbnailCache* thumbnails, QObject* parent) : QAbstractListModel(parent), m_thumbnails(thumbnails) {
    if (m_thumbnails != nullptr) {
        connect(m_thumbnails, &ThumbnailCache::thumbnailReady, this, &GalleryModel::refresh);
        connect(m_thumbnails, &ThumbnailCache::thumbnailFailed, this, [this](qint64 id, const QString&) { refresh(id); });
    }
}

void GalleryModel::set(std::vector<engine::api::EvaluationRecord> records, std::vector<std::string> classNames) {
    beginResetModel();
    m_records = std::move(records);
    m_names = std::move(classNames);
    m_paths.clear();
    m_wrong = int(std::count_if(m_records.begin(), m_records.end(),
                                [](const engine::api::EvaluationRecord& r) { return r.trueClass >= 0 && !r.correct(); }));
    rebuild();
    endResetModel();
}

void GalleryModel::setFilter(int64_t trueClass, int64_t predicted) {
    if (trueClass == m_true && predicted == m_predicted) return;
    beginResetModel();
    m_true = trueClass;
    m_predicted = predicted;
    rebuild();
    endResetModel();
}

void GalleryModel::rebuild() {
    m_rows.clear();
    m_rowOfSample.clear();
    const bool diagonal = m_true >= 0 && m_true == m_predicted;
    for (size_t i = 0; i < m_records.size(); ++i) {
        const auto& r = m_records[i];
        if (r.trueClass < 0) continue;  // unlabeled
        if (m_true >= 0 && r.trueClass != m_true) continue;
        if (m_predicted >= 0 && r.predicted != m_predicted) continue;
        if (r.correct() && !diagonal) continue;
        m_rows.push_back(int(i));
    }
    // Wrong answers: the most confident first. Right ones (a diagonal cell): the least confident
    // first, the nearest to being wrong.
    std::stable_sort(m_rows.begin(), m_rows.end(), [this, diagonal](int a, int b) {
        const auto& ra = m_records[size_t(a)];
        const auto& rb = m_records[size_t(b)];
        if (ra.confidence != rb.confidence) return diagonal ? ra.confidence < rb.confidence : ra.confidence > rb.confidence;
        return ra.index < rb.index;
    });
    for (size_t row = 0; row < m_rows.size(); ++row) m_rowOfSample.insert(m_records[size_t(m_rows[row])].index, int(row));
}

void GalleryModel::setPicturePath(int64_t index, const QString& path) {
    m_paths.insert(index, path);
    refresh(index);
}

QSet<qint64> GalleryModel::missingPictures() const {
    QSet<qint64> out;
    for (int row : m_rows) {
        const int64_t index = m_records[size_t(row)].index;
        if (!m_paths.contains(index)) out.insert(index);
    }
    return out;
}

void GalleryModel::refresh(qint64 sampleIndex) {
    const auto it = m_rowOfSample.constFind(sampleIndex);
    if (it == m_rowOfSample.constEnd()) return;
    const QModelIndex at = index(*it, 0);
    emit dataChanged(at, at, {Qt::DecorationRole});
}

QString GalleryModel::className(int64_t c) const {
    if (c < 0) return {};
    return size_t(c) < m_names.size() ? QString::fromStdString(m_names[size_t(c)]) : QString::number(c);
}

int GalleryModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QVariant GalleryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto& r = record(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return tr("%1\n→ %2\n%3 %").arg(className(r.trueClass), className(r.predicted)).arg(r.confidence * 100, 0, 'f', 1);
    case Qt::ToolTipRole:
        return tr("Sample %1: %2\nTrue class: %3\nPredicted: %4\nConfidence: %5 %\nLoss: %6")
            .arg(r.index)
            .arg(QString::fromStdString(r.source), className(r.trueClass), className(r.predicted))
            .arg(r.confidence * 100, 0, 'f', 2)
            .arg(r.loss, 0, 'f', 4);
    case Qt::DecorationRole: {
        const QString path = m_paths.value(r.index);
        QPixmap pixmap;
        if (!path.isEmpty() && m_thumbnails != nullptr) pixmap = m_thumbnails->thumbnail(r.index, path);
        if (!pixmap.isNull()) return pixmap;
        // A placeholder of the thumbnails' size while the picture is drawn or decoded, so that the
        // grid does not jump.
        static QPixmap placeholder;
        if (placeholder.isNull()) {
            placeholder = QPixmap(kThumb);
            placeholder.fill(QColor(128, 128, 128, 50));
        }
        return placeholder;
    }
    case Qt::ForegroundRole:
        return r.correct() ? QVariant() : QVariant(Theme::instance().colors().errorText);
    case SampleIndexRole: return QVariant::fromValue<qlonglong>(r.index);
    case TrueClassRole: return QVariant::fromValue<qlonglong>(r.trueClass);
    case PredictedRole: return QVariant::fromValue<qlonglong>(r.predicted);
    case ConfidenceRole: return r.confidence;
    case CorrectRole: return r.correct();
    default: return {};
    }
}

MisclassifiedGallery::MisclassifiedGallery(QWidget* parent)
    : QWidget(parent), m_thumbnails(new ThumbnailCache(kThumb, 3000, this)), m_model(new GalleryModel(m_thumbnails, this)) {
    m_jobs.setMaxThreadCount(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* header = new QHBoxLayout;
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_count = new QLabel(this);
    m_count->setObjectName(QStringLiteral("galleryCount"));
    header->addWidget(m_title);
    header->addStretch(1);
    header->addWidget(m_count);
    layout->addLayout(header);

    m_view = new QListView(this);
    m_view->setObjectName(QStringLiteral("galleryView"));
    m_view->setModel(m_model);
    m_view->setViewMode(QListView::IconMode);
    m_view->setMovement(QListView::Static);
    m_view->setDragEnabled(false);  // icon mode turns dragging on; the pictures stay in place
    m_view->setResizeMode(QListView::Adjust);
    m_view->setUniformItemSizes(true);
    m_view->setWordWrap(true);
    m_view->setIconSize(kThumb);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setTextElideMode(Qt::ElideMiddle);
    const int line = m_view->fontMetrics().height();
    // Three lines under the picture: true class, predicted class, confidence.
    m_view->setGridSize(QSize(kThumb.width() + 60, kThumb.height() + 3 * line + 12));
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    layout->addWidget(m_view, 1);

    connect(m_view, &QListView::doubleClicked, this, [this](const QModelIndex& index) { emit explainRequested(index.row()); });
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const QModelIndex index = m_view->indexAt(at);
        if (!index.isValid()) return;
        auto* menu = new QMenu(m_view);
        menu->setObjectName(QStringLiteral("galleryMenu"));
        menu->setAttribute(Qt::WA_DeleteOnClose);
        const int row = index.row();
        connect(menu->addAction(tr("Explain with Grad-CAM…")), &QAction::triggered, this, [this, row] { emit explainRequested(row); });
        QAction* exportAll = menu->addAction(tr("Export overlays of the gallery…"));
        exportAll->setObjectName(QStringLiteral("exportGalleryOverlays"));
        connect(exportAll, &QAction::triggered, this, &MisclassifiedGallery::exportRequested);
        menu->popup(m_view->viewport()->mapToGlobal(at));
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        updateCount();
        drawMissing();
    });
    retranslate();
}

MisclassifiedGallery::~MisclassifiedGallery() {
    if (m_cancel) m_cancel->store(true);
    m_jobs.clear();
    m_jobs.waitForDone();
}

void MisclassifiedGallery::clear() {
    setResults({}, {}, engine::io::Project{}, QString(), engine::api::EvaluationOptions{});
}

void MisclassifiedGallery::setResults(std::vector<engine::api::EvaluationRecord> records, std::vector<std::string> classNames,
                                      const engine::io::Project& project, const QString& projectPath,
                                      const engine::api::EvaluationOptions& options) {
    // Passes over earlier results stop at their next sample; their pictures are dropped.
    if (m_cancel) m_cancel->store(true);
    m_cancel = std::make_shared<std::atomic_bool>(false);
    m_jobs.clear();
    ++m_generation;
    m_drawing = 0;
    m_drawError.clear();
    m_requested.clear();
    m_isFile.clear();
    m_wantedElsewhere.clear();
    m_thumbnails->clear();
    if (!m_drawDir.isEmpty()) QDir(m_drawDir).removeRecursively();
    m_drawDir.clear();
    m_project = project;
    m_projectPath = projectPath;
    m_options = options;
    if (!records.empty()) {
        if (!m_dir) m_dir = std::make_unique<QTemporaryDir>();
        if (m_dir->isValid()) {
            m_drawDir = m_dir->filePath(QString::number(m_generation));
            QDir().mkpath(m_drawDir);
        }
    }
    m_model->set(std::move(records), std::move(classNames));  // draws what the filter shows
}

void MisclassifiedGallery::setFilter(int64_t trueClass, int64_t predicted) { m_model->setFilter(trueClass, predicted); }

QString MisclassifiedGallery::pictureFor(const engine::api::EvaluationRecord& record) {
    const QString known = m_model->picturePath(record.index);
    if (!known.isEmpty() || m_drawDir.isEmpty()) return known;
    // An image folder's sample is its file: known at once (a file's status, no decoding).
    const QString source = QString::fromStdString(record.source);
    auto isFile = m_isFile.constFind(record.index);
    if (isFile == m_isFile.constEnd()) {
        const QDir projectDir = QFileInfo(m_projectPath).absoluteDir();
        const QString file = source.isEmpty() ? QString() : QFileInfo(source).isAbsolute() ? source : projectDir.filePath(source);
        const bool found = !file.isEmpty() && QFileInfo(file).isFile();
        isFile = m_isFile.insert(record.index, found);
        if (found) {
            m_model->setPicturePath(record.index, file);
            return file;
        }
    } else if (*isFile) {
        return m_model->picturePath(record.index);
    }
    // Otherwise drawn by the next pass; requests from one repaint are gathered into one pass.
    if (!m_requested.contains(record.index) && !m_wantedElsewhere.contains(record.index)) {
        m_wantedElsewhere.insert(record.index);
        if (!m_drawQueued) {
            m_drawQueued = true;
            QMetaObject::invokeMethod(this, [this] {
                m_drawQueued = false;
                drawMissing();
            }, Qt::QueuedConnection);
        }
    }
    return {};
}

void MisclassifiedGallery::drawMissing() {
    QSet<qint64> missing = m_model->missingPictures() - m_requested;
    // Samples asked for by pictureFor (not shown in the gallery itself).
    for (qint64 index : std::as_const(m_wantedElsewhere))
        if (!m_requested.contains(index)) missing.insert(index);
    m_wantedElsewhere.clear();
    if (missing.isEmpty()) return;
    // Image folders: the picture file itself (absolute, or relative to the project).
    const QDir projectDir = QFileInfo(m_projectPath).absoluteDir();
    QSet<qint64> wanted;
    for (int row = 0; row < m_model->rowCount(); ++row) {
        const auto& r = m_model->record(row);
        if (!missing.contains(r.index)) continue;
        const QString source = QString::fromStdString(r.source);
        const QString file = source.isEmpty() ? QString() : QFileInfo(source).isAbsolute() ? source : projectDir.filePath(source);
        if (!file.isEmpty() && QFileInfo(file).isFile()) m_model->setPicturePath(r.index, file);
        else wanted.insert(r.index);
    }
    // Those not in the gallery's rows were looked up by pictureFor: not files.
    for (qint64 index : std::as_const(missing))
        if (m_model->picturePath(index).isEmpty() && m_isFile.value(index, false) == false) wanted.insert(index);
    m_requested += missing;
    if (wanted.isEmpty() || m_drawDir.isEmpty()) return;

    // The rest is drawn from the model's input (as the explanation dialog shows it) in a pass over
    // the split, which stops after the last sample wanted.
    ++m_drawing;
    const quint64 generation = m_generation;
    const auto cancel = m_cancel;
    const engine::io::Project project = m_project;
    const std::string projectPath = m_projectPath.toStdString();
    const engine::api::EvaluationOptions options = m_options;
    const QString dir = m_drawDir;
    const QSize box = m_thumbnails->thumbnailSize();
    m_jobs.start([this, generation, cancel, project, projectPath, options, dir, box, wanted] {
        lowerCurrentThreadPriority();
        const qint64 last = *std::max_element(wanted.begin(), wanted.end());
        QVector<QPair<qint64, QString>> batch;
        auto handBack = [&](bool done, const QString& error) {
            QMetaObject::invokeMethod(
                this, [this, generation, batch, done, error] { picturesDrawn(generation, batch, done, error); }, Qt::QueuedConnection);
            batch.clear();
        };
        QString error;
        try {
            const engine::Status st = engine::api::forEachSample(
                project, projectPath, options, [&](const engine::api::SampleInput& s) -> engine::Result<bool> {
                    if (cancel->load()) return false;
                    if (wanted.contains(s.index) && s.shape.rank() == 4) {
                        const int h = int(s.shape[1]), w = int(s.shape[2]);
                        const std::vector<uint8_t> rgb = engine::api::pictureRgb(s.data.data(), h, w, s.shape[3]);
                        QImage picture(rgb.data(), w, h, w * 3, QImage::Format_RGB888);
                        // Larger pictures are stored at the thumbnails' size (the cache scales
                        // them no further); small ones as they are, enlarged sharply by the cache.
                        picture = w > box.width() || h > box.height()
                                      ? picture.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation)
                                      : picture.copy();
                        const QString file = QDir(dir).filePath(QStringLiteral("%1.png").arg(s.index));
                        if (picture.save(file, "PNG")) batch.append({s.index, file});
                        if (batch.size() >= kBatch) handBack(false, {});
                    }
                    return s.index < last;
                });
            if (!st.ok()) error = app::ErrorText::describe(engine::io::locate(st.error(), project));
        } catch (const std::exception& ex) {
            error = QString::fromUtf8(ex.what());
        }
        handBack(true, error);
    });
}

void MisclassifiedGallery::picturesDrawn(quint64 generation, const QVector<QPair<qint64, QString>>& pictures, bool done,
                                         const QString& error) {
    if (generation != m_generation) return;
    for (const auto& [index, file] : pictures) {
        m_model->setPicturePath(index, file);
        emit pictureReady(index);
    }
    if (done) {
        m_drawing = std::max(0, m_drawing - 1);
        if (!error.isEmpty()) m_drawError = error;
        updateCount();
    }
}

void MisclassifiedGallery::updateCount() {
    const int64_t shown = m_model->trueFilter();
    if (shown >= 0 && shown == m_model->predictedFilter())
        m_title->setText(tr("Predicted right: %1").arg(m_model->className(shown)));
    else
        m_title->setText(tr("Misclassified pictures"));
    QString text = tr("%1 shown, %2 of %3 samples wrong").arg(m_model->rowCount()).arg(m_model->wrongCount()).arg(m_model->totalCount());
    if (!m_drawError.isEmpty()) text += QLatin1Char('\n') + tr("Pictures could not be drawn: %1").arg(m_drawError);
    m_count->setText(text);
}

void MisclassifiedGallery::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

void MisclassifiedGallery::retranslate() { updateCount(); }

}  // namespace kiln::ui::evaluate
