// SPDX-License-Identifier: Apache-2.0
// Import pages and their previews, read on a worker thread with the engine's readers.
#include "ui/dataset_browser/import_dataset_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <map>

#include "engine/api/datasets.h"
#include "ui/dataset_browser/augmentation_preview.h"
#include "ui/dataset_browser/thumbnail_cache.h"

namespace kiln::ui {

namespace {

constexpr int kPreviewRows = 12;
constexpr int kPreviewPictures = 12;
const QSize kPictureBox(72, 72);

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString errorText(const engine::Error& e) {
    return qs(e.toString());
}

// A few numbers of a list, "1.5, 2, 3 … (784 values)".
template <typename T>
QString listText(const std::vector<T>& v) {
    QStringList parts;
    for (size_t i = 0; i < v.size() && i < 6; ++i)
        parts << QString::number(static_cast<double>(v[i]), 'g', 5);
    QString text = parts.join(QStringLiteral(", "));
    if (v.size() > 6)
        text += QCoreApplication::translate("kiln::ui::ImportDatasetDialog", " … (%n value(s))", nullptr,
                                            int(v.size()));
    return text;
}

QString valueText(const engine::api::SampleValue& v) {
    using K = engine::api::SampleValue::Kind;
    if (v.kind == K::Encoded)
        return QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "picture, %n byte(s)", nullptr,
                                           int(v.encoded.size()));
    if (v.kind == K::Image)
        return QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "picture %1×%2×%3")
            .arg(v.shape[0])
            .arg(v.shape[1])
            .arg(v.shape[2]);
    return listText(v.values);
}

// The picture of a value; a decoded one hands its pixels over to the QImage.
QImage originalPictureOf(engine::api::SampleValue& v) {
    using K = engine::api::SampleValue::Kind;
    QImage img;
    if (v.kind == K::Encoded)
        img = QImage::fromData(reinterpret_cast<const uchar*>(v.encoded.data()), int(v.encoded.size()));
    else if (v.kind == K::Image)
        img = imageFromPicture(std::move(v.picture));
    return img;
}

QImage scaledForDisplay(const QImage& img) {
    if (img.isNull()) return img;
    if (img.width() < kPictureBox.width() && img.height() < kPictureBox.height())
        return img.scaled(kPictureBox, Qt::KeepAspectRatio, Qt::FastTransformation);
    return img.scaled(kPictureBox, Qt::KeepAspectRatio, Qt::SmoothTransformation);
}

// Rows, pictures and class counts of any random-access source.
void previewSource(const engine::api::SampleSource& source, ImportPreview& out) {
    const auto specs = source.columnSpecs();
    out.headers << QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "#");
    for (const auto& s : specs) out.headers << qs(s.name);
    QStringList names;
    for (const auto& s : specs)
        if (!s.classNames.empty() && names.isEmpty())
            for (const auto& n : s.classNames) names << qs(n);
    for (int64_t i = 0; i < source.size() && i < kPreviewRows; ++i) {
        engine::api::Sample sample;
        QStringList row{QString::number(i)};
        auto st = source.load(i, sample);
        if (!st.ok()) {
            row << errorText(st.error());
        } else {
            for (auto& v : sample.values) {
                row << valueText(v);
                if (out.images.size() < kPreviewPictures) {
                    const QImage img = originalPictureOf(v);
                    if (!img.isNull()) {
                        out.images << scaledForDisplay(img);
                        out.originals << img;
                        out.originalRecords << i;
                    }
                }
            }
        }
        out.rows << row;
    }
    const auto counts = source.classCounts();
    for (size_t k = 0; k < counts.size(); ++k) {
        out.classNames << (static_cast<int>(k) < names.size() ? names[int(k)] : QString::number(k));
        out.classCounts << counts[k];
    }
    QStringList cols;
    for (const auto& s : specs) cols << qs(s.name);
    out.summary = QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "%n sample(s); columns: %1",
                                              nullptr, int(source.size()))
                      .arg(cols.join(QStringLiteral(", ")));
}

ImportPreview previewFolder(const QString& root) {
    ImportPreview out;
    auto summary = engine::api::summarizeImageFolder(root.toStdString(), engine::api::FolderLayout::Auto,
                                                     kPreviewRows);
    if (!summary.ok()) {
        out.error = errorText(summary.error());
        return out;
    }
    out.headers << QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "File")
                << QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "Class")
                << QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "Size")
                << QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "Status");
    for (const auto& rel : summary->firstFiles) {
        const QString abs = QDir(root).filePath(qs(rel));
        const auto info = engine::api::inspectImageHeader(abs.toStdString());
        const QString cls = qs(rel).section(
            QLatin1Char('/'), summary->layout == engine::api::FolderLayout::SplitFolders ? 1 : 0,
            summary->layout == engine::api::FolderLayout::SplitFolders ? 1 : 0);
        out.rows << QStringList{
            qs(rel), cls,
            info.width > 0 ? QStringLiteral("%1×%2").arg(info.width).arg(info.height) : QString(),
            info.ok ? QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "OK") : qs(info.reason)};
        if (out.images.size() < kPreviewPictures && info.ok) {
            const QImage img = ThumbnailCache::decode(abs, kPictureBox, nullptr);
            if (!img.isNull()) out.images << img;
        }
    }
    for (size_t k = 0; k < summary->classNames.size(); ++k) {
        out.classNames << qs(summary->classNames[k]);
        out.classCounts << summary->fileCounts[k];
    }
    out.summary =
        (summary->layout == engine::api::FolderLayout::SplitFolders
             ? QCoreApplication::translate("kiln::ui::ImportDatasetDialog",
                                           "%n picture(s) in train/validation/test folders, %1 classes",
                                           nullptr, int(summary->totalFiles))
             : QCoreApplication::translate("kiln::ui::ImportDatasetDialog", "%n picture(s), %1 classes",
                                           nullptr, int(summary->totalFiles)))
            .arg(summary->classNames.size());
    return out;
}

ImportPreview previewTfRecord(const nlohmann::json& s) {
    ImportPreview out;
    const std::string path = s.value("path", "");
    const std::string comp = s.value("compression", "none");
    auto reader = engine::api::TfRecordFile::open(path, comp == "none" ? "" : comp);
    if (!reader.ok()) {
        out.error = errorText(reader.error());
        return out;
    }
    std::string imageKey, labelKey;
    const nlohmann::json features = s.value("features", nlohmann::json::object());
    for (const auto& [key, spec] : features.items()) {
        const std::string type = spec.is_object() ? spec.value("type", "") : "";
        if (type == "image" && imageKey.empty()) imageKey = key;
        if (type == "int64" && spec.value("column", "") == "label") labelKey = key;
    }
    std::map<std::string, std::string> kinds;
    std::map<int64_t, int64_t> labelCounts;
    engine::api::Example example;
    int64_t records = 0;
    // Class counts from up to 20,000 records; rows and pictures from the first ones.
    while (records < 20000) {
        auto more = reader->next(example);
        if (!more.ok()) {
            out.error = errorText(more.error());
            break;
        }
        if (!*more) break;
        if (records < kPreviewRows) {
            if (out.headers.isEmpty())
                for (const auto& [key, f] : example.features) out.headers << qs(key);
            QStringList row;
            for (const auto& [key, f] : example.features) {
                kinds[key] = engine::api::featureKindName(f.kind);
                if (f.kind == engine::api::Feature::Kind::Bytes) {
                    QImage img;
                    if (!f.bytes.empty())
                        img = QImage::fromData(reinterpret_cast<const uchar*>(f.bytes[0].data()),
                                               int(f.bytes[0].size()));
                    if (!img.isNull() && (imageKey.empty() || imageKey == key) &&
                        out.images.size() < kPreviewPictures) {
                        out.originals << img;
                        out.originalRecords << records;
                        out.images << img.scaled(kPictureBox, Qt::KeepAspectRatio,
                                                 img.width() < kPictureBox.width()
                                                     ? Qt::FastTransformation
                                                     : Qt::SmoothTransformation);
                    }
                    row << (img.isNull() ? QCoreApplication::translate("kiln::ui::ImportDatasetDialog",
                                                                       "%n byte string(s)", nullptr,
                                                                       int(f.bytes.size()))
                                         : QStringLiteral("%1 %2×%3")
                                               .arg(QCoreApplication::translate(
                                                   "kiln::ui::ImportDatasetDialog", "picture"))
                                               .arg(img.width())
                                               .arg(img.height()));
                } else if (f.kind == engine::api::Feature::Kind::Float) {
                    row << listText(f.floats);
                } else {
                    row << listText(f.ints);
                }
            }
            out.rows << row;
        }
        if (!labelKey.empty()) {
            const auto* f = example.find(labelKey);
            if (f != nullptr && f->kind == engine::api::Feature::Kind::Int64 && !f->ints.empty())
                ++labelCounts[f->ints[0]];
        }
        ++records;
    }
    for (const auto& [label, n] : labelCounts) {
        out.classNames << QString::number(label);
        out.classCounts << n;
    }
    QStringList feats;
    for (const auto& [key, kind] : kinds) feats << QStringLiteral("%1 (%2)").arg(qs(key), qs(kind));
    out.summary = QCoreApplication::translate("kiln::ui::ImportDatasetDialog",
                                              "%n record(s) read; features: %1", nullptr, int(records))
                      .arg(feats.join(QStringLiteral(", ")));
    return out;
}

ImportPreview previewTable(const nlohmann::json& s) {
    ImportPreview out;
    engine::api::CsvTableOptions options;
    options.skipRows = s.value("skip_rows", 0);
    options.hasHeader = s.value("header", false);
    options.categoricalLabel = s.value("categorical_label", false);  // preview only
    const auto& lc = s["label_column"];
    if (lc.is_string())
        options.labelColumnName = lc.get<std::string>();
    else if (lc.is_number_integer())
        options.labelColumn = lc.get<int64_t>();
    auto source = engine::api::SampleSource::openCsvTable(s.value("path", ""), options);
    if (!source.ok()) {
        out.error = errorText(source.error());
        return out;
    }
    previewSource(*source, out);
    return out;
}

}  // namespace

ImportDatasetDialog::ImportDatasetDialog(QWidget* parent)
    : QDialog(parent),
      m_kind(new QComboBox(this)),
      m_pages(new QStackedWidget(this)),
      m_folder(new QLineEdit(this)),
      m_csvIndex(new QLineEdit(this)),
      m_splitColumn(new QLineEdit(this)),
      m_tfrecord(new QLineEdit(this)),
      m_compression(new QComboBox(this)),
      m_imageFeature(new QLineEdit(this)),
      m_labelFeature(new QLineEdit(this)),
      m_table(new QLineEdit(this)),
      m_skipRows(new QSpinBox(this)),
      m_header(new QCheckBox(tr("First row names the columns"), this)),
      m_labelColumn(new QLineEdit(this)),
      m_categorical(new QCheckBox(tr("Labels are names (preview)"), this)),
      m_idxImages(new QLineEdit(this)),
      m_idxLabels(new QLineEdit(this)),
      m_summary(new QLabel(this)),
      m_rows(new QTableWidget(this)),
      m_classes(new QTableWidget(this)),
      m_pictures(new QListWidget(this)) {
    setWindowTitle(tr("Import Data"));
    resize(900, 640);
    m_kind->addItem(tr("Image folder (one subfolder per class)"));
    m_kind->addItem(tr("CSV index (x:image, y:label)"));
    m_kind->addItem(tr("TFRecord files (tf.train.Example)"));
    m_kind->addItem(tr("Numeric CSV table"));
    m_kind->addItem(tr("IDX files (MNIST format)"));

    auto page = [this](QFormLayout*& form) {
        auto* w = new QWidget(m_pages);
        form = new QFormLayout(w);
        m_pages->addWidget(w);
        return w;
    };
    QFormLayout* f;
    page(f);
    f->addRow(tr("Folder:"), makePathRow(m_folder, true, {}));
    f->addRow(
        new QLabel(tr("Classes are the subfolders, sorted by name. Folders named train, val and test are "
                      "used as the split."),
                   this));
    page(f);
    f->addRow(tr("Index file:"), makePathRow(m_csvIndex, false, tr("CSV files (*.csv);;All files (*)")));
    m_splitColumn->setPlaceholderText(tr("optional, e.g. split"));
    f->addRow(tr("Split column:"), m_splitColumn);
    page(f);
    f->addRow(
        tr("Record file:"),
        makePathRow(m_tfrecord, false, tr("TFRecord files (*.tfrecord *.tfrecords *.tfrec);;All files (*)")));
    m_compression->addItem(tr("None"), QString());
    m_compression->addItem(QStringLiteral("ZLIB"), QStringLiteral("ZLIB"));
    m_compression->addItem(QStringLiteral("GZIP"), QStringLiteral("GZIP"));
    f->addRow(tr("Compression:"), m_compression);
    m_imageFeature->setText(QStringLiteral("image/encoded"));
    m_labelFeature->setText(QStringLiteral("image/class/label"));
    f->addRow(tr("Image feature (bytes):"), m_imageFeature);
    f->addRow(tr("Label feature (int64):"), m_labelFeature);
    page(f);
    f->addRow(tr("Table:"), makePathRow(m_table, false, tr("CSV files (*.csv *.csv.gz);;All files (*)")));
    m_skipRows->setRange(0, 1000);
    f->addRow(tr("Skip rows:"), m_skipRows);
    f->addRow(m_header);
    m_labelColumn->setText(QStringLiteral("-1"));
    m_labelColumn->setToolTip(
        tr("Position (0 is the first, -1 the last) or header name of the label column."));
    f->addRow(tr("Label column:"), m_labelColumn);
    f->addRow(m_categorical);
    page(f);
    f->addRow(tr("Images file:"),
              makePathRow(m_idxImages, false, tr("IDX files (*-idx3-ubyte *-idx3-ubyte.gz);;All files (*)")));
    m_idxLabels->setPlaceholderText(tr("found next to the images file when empty"));
    f->addRow(tr("Labels file:"),
              makePathRow(m_idxLabels, false, tr("IDX files (*-idx1-ubyte *-idx1-ubyte.gz);;All files (*)")));

    m_summary->setWordWrap(true);
    m_rows->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_rows->verticalHeader()->setVisible(false);
    m_classes->setColumnCount(2);
    m_classes->setHorizontalHeaderLabels({tr("Class"), tr("Samples")});
    m_classes->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_classes->verticalHeader()->setVisible(false);
    m_classes->horizontalHeader()->setStretchLastSection(true);
    m_pictures->setViewMode(QListView::IconMode);
    m_pictures->setIconSize(kPictureBox);
    m_pictures->setFixedHeight(kPictureBox.height() * 2 + 24);
    m_pictures->setMovement(QListView::Static);

    auto* previewBox = new QSplitter(Qt::Horizontal, this);
    previewBox->addWidget(m_rows);
    previewBox->addWidget(m_classes);
    previewBox->setStretchFactor(0, 3);
    previewBox->setStretchFactor(1, 1);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Import"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    auto* kindRow = new QFormLayout;
    kindRow->addRow(tr("Source:"), m_kind);
    layout->addLayout(kindRow);
    layout->addWidget(m_pages);
    layout->addWidget(new QLabel(tr("Preview:"), this));
    layout->addWidget(m_summary);
    layout->addWidget(m_pictures);
    layout->addWidget(previewBox, 1);
    layout->addWidget(buttons);

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(300);
    connect(&m_debounce, &QTimer::timeout, this, &ImportDatasetDialog::refreshPreview);
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_pages->setCurrentIndex(i);
        m_debounce.start();
    });
    for (QLineEdit* e : {m_folder, m_csvIndex, m_splitColumn, m_tfrecord, m_imageFeature, m_labelFeature,
                         m_table, m_labelColumn, m_idxImages, m_idxLabels})
        connect(e, &QLineEdit::textChanged, &m_debounce, qOverload<>(&QTimer::start));
    connect(m_skipRows, &QSpinBox::valueChanged, &m_debounce, qOverload<>(&QTimer::start));
    connect(m_header, &QCheckBox::toggled, &m_debounce, qOverload<>(&QTimer::start));
    connect(m_categorical, &QCheckBox::toggled, &m_debounce, qOverload<>(&QTimer::start));
    connect(m_compression, &QComboBox::currentIndexChanged, &m_debounce, qOverload<>(&QTimer::start));
    connect(&m_watcher, &QFutureWatcher<ImportPreview>::finished, this, [this] {
        m_preview = m_watcher.result();
        showPreview();
        emit previewReady();
        if (m_again) {
            m_again = false;
            refreshPreview();
        }
    });
}

ImportDatasetDialog::~ImportDatasetDialog() {
    m_watcher.waitForFinished();
}

QWidget* ImportDatasetDialog::makePathRow(QLineEdit* edit, bool folder, const QString& filter) {
    auto* row = new QWidget(this);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(edit, 1);
    auto* browse = new QPushButton(tr("Browse…"), row);
    h->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this, edit, folder, filter] {
        const QString chosen =
            folder ? QFileDialog::getExistingDirectory(this, tr("Choose a Folder"), edit->text())
                   : QFileDialog::getOpenFileName(this, tr("Choose a File"), edit->text(), filter);
        if (!chosen.isEmpty()) edit->setText(chosen);
    });
    return row;
}

void ImportDatasetDialog::setKind(Kind kind) {
    m_kind->setCurrentIndex(static_cast<int>(kind));
}

ImportDatasetDialog::Kind ImportDatasetDialog::kind() const {
    return static_cast<Kind>(m_kind->currentIndex());
}

static QLineEdit* mainPathEdit(ImportDatasetDialog::Kind kind, QLineEdit* folder, QLineEdit* csvIndex,
                               QLineEdit* tfrecord, QLineEdit* table, QLineEdit* idx) {
    switch (kind) {
    case ImportDatasetDialog::Kind::ImageFolder:
        return folder;
    case ImportDatasetDialog::Kind::CsvIndex:
        return csvIndex;
    case ImportDatasetDialog::Kind::TfRecord:
        return tfrecord;
    case ImportDatasetDialog::Kind::CsvTable:
        return table;
    case ImportDatasetDialog::Kind::Idx:
        break;
    }
    return idx;
}

void ImportDatasetDialog::setPath(const QString& path) {
    mainPathEdit(kind(), m_folder, m_csvIndex, m_tfrecord, m_table, m_idxImages)->setText(path);
}

QString ImportDatasetDialog::path() const {
    return mainPathEdit(kind(), m_folder, m_csvIndex, m_tfrecord, m_table, m_idxImages)->text();
}

nlohmann::json ImportDatasetDialog::dataSection() const {
    nlohmann::json j;
    switch (kind()) {
    case Kind::ImageFolder:
        j["format"] = "folder";
        j["path"] = m_folder->text().toStdString();
        break;
    case Kind::CsvIndex:
        j["format"] = "csv_index";
        j["path"] = m_csvIndex->text().toStdString();
        if (!m_splitColumn->text().isEmpty()) j["split_column"] = m_splitColumn->text().toStdString();
        break;
    case Kind::TfRecord:
        j["format"] = "tfrecord";
        j["path"] = m_tfrecord->text().toStdString();
        j["compression"] = m_compression->currentData().toString().isEmpty()
                               ? std::string("none")
                               : m_compression->currentData().toString().toLower().toStdString();
        j["features"] = nlohmann::json::object();
        if (!m_imageFeature->text().isEmpty())
            j["features"][m_imageFeature->text().toStdString()] = {{"type", "image"}, {"column", "image"}};
        if (!m_labelFeature->text().isEmpty())
            j["features"][m_labelFeature->text().toStdString()] = {
                {"type", "int64"}, {"shape", nlohmann::json::array()}, {"column", "label"}};
        break;
    case Kind::CsvTable: {
        j["format"] = "csv";
        j["path"] = m_table->text().toStdString();
        j["skip_rows"] = m_skipRows->value();
        j["header"] = m_header->isChecked();
        bool number = false;
        const int column = m_labelColumn->text().toInt(&number);
        if (number)
            j["label_column"] = column;
        else
            j["label_column"] = m_labelColumn->text().toStdString();
        break;
    }
    case Kind::Idx: {
        std::string images = m_idxImages->text().toStdString();
        std::string labels = m_idxLabels->text().toStdString();
        if (labels.empty()) {  // the labels file next to the images file
            auto pair = engine::api::findIdxPair(images);
            if (pair.ok()) labels = pair->second;
        }
        j["format"] = "idx";
        j["train"] = {{"images", images}, {"labels", labels}};
        break;
    }
    }
    return j;
}

ImportPreview ImportDatasetDialog::readPreview(Kind kind, const nlohmann::json& s) {
    ImportPreview out;
    const std::string path = s.value("path", "");
    switch (kind) {
    case Kind::ImageFolder:
        return previewFolder(QString::fromStdString(path));
    case Kind::CsvIndex: {
        auto source = engine::api::SampleSource::openCsvIndex(path, s.value("split_column", ""));
        if (!source.ok())
            out.error = errorText(source.error());
        else
            previewSource(*source, out);
        return out;
    }
    case Kind::TfRecord:
        return previewTfRecord(s);
    case Kind::CsvTable:
        return previewTable(s);
    case Kind::Idx: {
        std::string images = s["train"].value("images", "");
        std::string labels = s["train"].value("labels", "");
        if (labels.empty()) {
            auto pair = engine::api::findIdxPair(images);
            if (!pair.ok()) {
                out.error = errorText(pair.error());
                return out;
            }
            images = pair->first;
            labels = pair->second;
        }
        auto source = engine::api::SampleSource::openIdx(images, labels);
        if (!source.ok())
            out.error = errorText(source.error());
        else
            previewSource(*source, out);
        return out;
    }
    }
    return out;
}

void ImportDatasetDialog::refreshPreview() {
    m_debounce.stop();
    if (m_watcher.isRunning()) {
        m_again = true;  // the newest settings win once the running preview ends
        return;
    }
    if (path().isEmpty()) {
        m_preview = ImportPreview{};
        m_preview.error = tr("Choose a source to see a preview.");
        showPreview();
        emit previewReady();
        return;
    }
    m_summary->setText(tr("Reading…"));
    nlohmann::json section = dataSection();
    // Named labels are read for the preview only; the project's csv format takes numeric labels.
    if (kind() == Kind::CsvTable && m_categorical->isChecked()) section["categorical_label"] = true;
    m_watcher.setFuture(QtConcurrent::run(&ImportDatasetDialog::readPreview, kind(), section));
}

void ImportDatasetDialog::showPreview() {
    const ImportPreview& p = m_preview;
    m_summary->setText(p.error.isEmpty() ? p.summary : p.error);
    m_rows->clear();
    m_rows->setColumnCount(int(p.headers.size()));
    m_rows->setHorizontalHeaderLabels(p.headers);
    m_rows->setRowCount(int(p.rows.size()));
    for (int r = 0; r < p.rows.size(); ++r)
        for (int c = 0; c < p.rows[r].size() && c < p.headers.size(); ++c)
            m_rows->setItem(r, c, new QTableWidgetItem(p.rows[r][c]));
    m_rows->resizeColumnsToContents();
    m_classes->setRowCount(int(p.classNames.size()));
    for (int k = 0; k < p.classNames.size(); ++k) {
        m_classes->setItem(k, 0, new QTableWidgetItem(p.classNames[k]));
        auto* n = new QTableWidgetItem(QLocale().toString(p.classCounts.value(k)));
        n->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_classes->setItem(k, 1, n);
    }
    m_pictures->clear();
    for (const QImage& img : p.images)
        m_pictures->addItem(new QListWidgetItem(QIcon(QPixmap::fromImage(img)), QString()));
}

}  // namespace kiln::ui
