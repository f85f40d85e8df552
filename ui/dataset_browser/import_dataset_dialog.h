// SPDX-License-Identifier: Apache-2.0
// "Import data": one page per kind of source (image folder, CSV index, TFRecord, numeric CSV
// table, IDX) with a live preview of what will be read: first rows, pictures, classes, counts.
#pragma once

#include <nlohmann/json.hpp>

#include <QDialog>
#include <QFutureWatcher>
#include <QImage>
#include <QStringList>
#include <QTimer>
#include <QVector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QStackedWidget;
class QTableWidget;

namespace kiln::ui {

// What a preview shows.
struct ImportPreview {
    QString error;                // empty when the source could be read
    QString summary;              // one line: how many samples, which columns
    QStringList headers;          // columns of the first-rows table
    QVector<QStringList> rows;    // first rows
    QStringList classNames;       // detected classes ...
    QVector<qint64> classCounts;  // ... and samples per class
    QVector<QImage> images;       // a few pictures, scaled for display
    QVector<QImage> originals;    // the same pictures at their own size (IDX, CSV index, TFRecord)
    QVector<qint64> originalRecords;  // the record (row) of the source each original comes from
};

class ImportDatasetDialog : public QDialog {
    Q_OBJECT
public:
    enum class Kind { ImageFolder = 0, CsvIndex, TfRecord, CsvTable, Idx };

    explicit ImportDatasetDialog(QWidget* parent = nullptr);
    ~ImportDatasetDialog() override;

    void setKind(Kind kind);
    Kind kind() const;
    // The main path of the current kind (folder, index file, record file, table, IDX images).
    void setPath(const QString& path);
    QString path() const;
    // The settings as a project "data" section for the chosen source.
    nlohmann::json dataSection() const;

    // Reads a preview synchronously (what the dialog runs on a worker thread).
    static ImportPreview readPreview(Kind kind, const nlohmann::json& section);
    // Starts a preview now instead of after the typing pause; previewReady() follows.
    void refreshPreview();
    const ImportPreview& preview() const { return m_preview; }

signals:
    void previewReady();

private:
    QWidget* makePathRow(QLineEdit* edit, bool folder, const QString& filter);
    void showPreview();

    QComboBox* m_kind;
    QStackedWidget* m_pages;
    QLineEdit* m_folder;
    QLineEdit* m_csvIndex;
    QLineEdit* m_splitColumn;
    QLineEdit* m_tfrecord;
    QComboBox* m_compression;
    QLineEdit* m_imageFeature;
    QLineEdit* m_labelFeature;
    QLineEdit* m_table;
    QSpinBox* m_skipRows;
    QCheckBox* m_header;
    QLineEdit* m_labelColumn;
    QCheckBox* m_categorical;
    QLineEdit* m_idxImages;
    QLineEdit* m_idxLabels;
    QLabel* m_summary;
    QTableWidget* m_rows;
    QTableWidget* m_classes;
    QListWidget* m_pictures;
    QTimer m_debounce;
    ImportPreview m_preview;
    bool m_again = false;
    QFutureWatcher<ImportPreview> m_watcher;
};

}  // namespace kiln::ui
