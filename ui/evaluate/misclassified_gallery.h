// SPDX-License-Identifier: Apache-2.0
// The Evaluate view's gallery of wrongly predicted pictures: a virtualised QListView over a list
// model of the report's records, most confidently wrong first, with the true and predicted class
// and the confidence under each thumbnail, filtered by true and predicted class (the Evaluate
// view's filter, which a confusion matrix cell sets). Thumbnails are decoded by the dataset browser's ThumbnailCache: from
// the picture file itself for image folders, otherwise (data read into memory, TFRecord files)
// from PNG files drawn from the model's input by a second pass over the split on a worker thread.
#pragma once

#include <QAbstractListModel>
#include <QHash>
#include <QPointer>
#include <QSet>
#include <QThreadPool>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

#include "engine/api/evaluation.h"
#include "engine/io/project.h"

class QLabel;
class QListView;
class QTemporaryDir;

namespace kiln::ui {
class ThumbnailCache;
}

namespace kiln::ui::evaluate {

// The gallery's rows: the records that pass the filter, wrong ones by decreasing confidence. With
// both filters on the same class (a diagonal cell of the confusion matrix) the rows are that
// class's right answers instead, least confident first. DecorationRole: the thumbnail (a
// placeholder while it is drawn or decoded).
class GalleryModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role { SampleIndexRole = Qt::UserRole + 1, TrueClassRole, PredictedRole, ConfidenceRole, CorrectRole };
    explicit GalleryModel(ThumbnailCache* thumbnails, QObject* parent = nullptr);

    void set(std::vector<engine::api::EvaluationRecord> records, std::vector<std::string> classNames);
    // -1: any class.
    void setFilter(int64_t trueClass, int64_t predicted);
    int64_t trueFilter() const { return m_true; }
    int64_t predictedFilter() const { return m_predicted; }
    // Where the picture of sample `index` is read from; rows showing it are refreshed.
    void setPicturePath(int64_t index, const QString& path);
    QString picturePath(int64_t index) const { return m_paths.value(index); }
    // Samples shown now whose picture is not known yet.
    QSet<qint64> missingPictures() const;

    const engine::api::EvaluationRecord& record(int row) const { return m_records[size_t(m_rows[size_t(row)])]; }
    int wrongCount() const { return m_wrong; }
    int totalCount() const { return int(m_records.size()); }
    QString className(int64_t c) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    void refresh(qint64 sampleIndex);

    ThumbnailCache* m_thumbnails;
    std::vector<engine::api::EvaluationRecord> m_records;
    std::vector<std::string> m_names;
    std::vector<int> m_rows;              // indices into m_records, as shown
    QHash<qint64, int> m_rowOfSample;     // sample index -> shown row
    QHash<qint64, QString> m_paths;       // sample index -> picture file
    int64_t m_true = -1, m_predicted = -1;
    int m_wrong = 0;
};

class MisclassifiedGallery : public QWidget {
    Q_OBJECT
public:
    explicit MisclassifiedGallery(QWidget* parent = nullptr);
    ~MisclassifiedGallery() override;

    // The records of a classification report and how they were evaluated (for the second pass
    // that draws pictures of samples without a picture file). Clears with empty records.
    void setResults(std::vector<engine::api::EvaluationRecord> records, std::vector<std::string> classNames,
                    const engine::io::Project& project, const QString& projectPath,
                    const engine::api::EvaluationOptions& options);
    void clear();
    // -1: any class.
    void setFilter(int64_t trueClass, int64_t predicted);

    GalleryModel* model() const { return m_model; }
    QListView* view() const { return m_view; }
    ThumbnailCache* thumbnails() const { return m_thumbnails; }
    // The picture file of a sample of the results shown, for other views of them (the samples
    // table): the file itself for image folders, else a picture drawn from the model's input.
    // "" while it is being drawn; pictureReady(index) follows. Never decodes or reads data here.
    QString pictureFor(const engine::api::EvaluationRecord& record);
    // Picture-drawing passes queued or running.
    bool drawing() const { return m_drawing > 0; }
    QString drawError() const { return m_drawError; }

signals:
    // A row of the gallery asked to be explained (double click or context menu).
    void explainRequested(int row);
    // The overlays of every picture shown asked to be exported (context menu).
    void exportRequested();
    // The picture of sample `index` has a file now (see pictureFor).
    void pictureReady(qint64 index);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void updateCount();
    void drawMissing();
    void picturesDrawn(quint64 generation, const QVector<QPair<qint64, QString>>& pictures, bool done, const QString& error);

    ThumbnailCache* m_thumbnails = nullptr;
    GalleryModel* m_model = nullptr;
    QListView* m_view = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_count = nullptr;

    engine::io::Project m_project;
    QString m_projectPath;
    engine::api::EvaluationOptions m_options;
    std::unique_ptr<QTemporaryDir> m_dir;  // drawn pictures, one subfolder per result set
    QString m_drawDir;
    QSet<qint64> m_requested;             // samples a pass has been asked to draw
    QHash<qint64, bool> m_isFile;         // sample index -> its source is a picture file
    QSet<qint64> m_wantedElsewhere;       // asked for by pictureFor, not drawn yet
    bool m_drawQueued = false;            // a drawMissing() is queued for m_wantedElsewhere
    QThreadPool m_jobs;                   // one pass at a time, in order
    std::shared_ptr<std::atomic_bool> m_cancel;
    quint64 m_generation = 0;
    int m_drawing = 0;
    QString m_drawError;
};

}  // namespace kiln::ui::evaluate
