// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_dataset_browser
// kiln-test-serial (measures event-loop stalls)
// SPDX-License-Identifier: Apache-2.0
// The dataset browser on real picture folders: model tests, filters, the class chart, the
// augmentation preview, import previews of every source kind, the pipeline rate, and a 20k-image
// folder scanned and scrolled without stalling the event loop.
#include <QtTest>
#include <QLabel>
#include <QPushButton>
#include <QPlainTextEdit>

#include <QAbstractItemModelTester>
#include <QImage>
#include <QListView>
#include <QPainter>
#include <QScrollBar>
#include <QSpinBox>

#include <ctime>
#include <filesystem>

#include "engine/api/data_preview.h"
#include "engine/api/datasets.h"
#include "engine/data/example.h"
#include "engine/data/tfrecord.h"
#include "ui/dataset_browser/augmentation_preview.h"
#include "ui/dataset_browser/class_distribution_chart.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/dataset_browser/import_dataset_dialog.h"
#include "ui/dataset_browser/pipeline_panel.h"
#include "ui/dataset_browser/sample_list_model.h"
#include "ui/dataset_browser/thumbnail_cache.h"
#include "tests/ui/event_loop_watchdog.h"

using namespace kiln;
using namespace kiln::ui;
using engine::api::SampleSplit;
using engine::api::SampleStatus;
namespace fs = std::filesystem;

namespace {

QImage picture(int w, int h, int seed) {
    QImage img(w, h, QImage::Format_RGB32);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            img.setPixel(x, y,
                         qRgb((x * 37 + seed * 11) & 255, (y * 23 + seed * 5) & 255, (seed * 50) & 255));
    // An asymmetric mark, so that flips and rotations change the picture.
    QPainter p(&img);
    p.fillRect(0, 0, w / 3, h / 4, Qt::white);
    return img;
}

// `classes` folders with `perClass` PNGs each: a few distinct pictures, the rest hard links.
void makeFolder(const QString& root, int classes, int perClass, int size = 8) {
    for (int c = 0; c < classes; ++c) {
        const QString dir = QStringLiteral("%1/class_%2").arg(root).arg(c, 2, 10, QLatin1Char('0'));
        QDir().mkpath(dir);
        const int distinct = std::min(perClass, 8);
        for (int i = 0; i < distinct; ++i)
            QVERIFY(picture(size, size, c * 8 + i)
                        .save(QStringLiteral("%1/img_%2.png").arg(dir).arg(i, 5, 10, QLatin1Char('0'))));
        for (int i = distinct; i < perClass; ++i)
            fs::create_hard_link(
                QStringLiteral("%1/img_%2.png")
                    .arg(dir)
                    .arg(i % distinct, 5, 10, QLatin1Char('0'))
                    .toStdString(),
                QStringLiteral("%1/img_%2.png").arg(dir).arg(i, 5, 10, QLatin1Char('0')).toStdString());
    }
}

}  // namespace

class TestDatasetBrowser : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    QString path(const QString& name) const { return m_tmp.filePath(name); }

    // Opens `folder` in `w` and waits for the scan (and the proposed split) to finish.
    bool openAndWait(DatasetBrowserWidget& w, const QString& folder, const QString& index,
                     int timeoutMs = 60000) {
        QSignalSpy done(&w, &DatasetBrowserWidget::scanFinished);
        if (!w.openImageFolder(folder, index)) return false;
        if (!done.wait(timeoutMs)) return false;
        return done.first().at(0).toBool();
    }

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        makeFolder(path(QStringLiteral("small")), 3, 0);
        // Class sizes 12, 30, 18; one bad file.
        const int sizes[3] = {12, 30, 18};
        for (int c = 0; c < 3; ++c) {
            const QString dir = path(QStringLiteral("small/class_%1").arg(c, 2, 10, QLatin1Char('0')));
            for (int i = 0; i < sizes[c]; ++i)
                QVERIFY(picture(16, 12, c * 100 + i).save(QStringLiteral("%1/p%2.png").arg(dir).arg(i)));
        }
        QFile bad(path(QStringLiteral("small/class_01/broken.jpg")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("plain text, not a picture");
    }

    void modelPassesTester() {
        auto index = engine::api::DatasetIndex::open(path(QStringLiteral("model.kindex")).toStdString());
        QVERIFY(index.ok());
        QVERIFY(index->scanImageFolder(path(QStringLiteral("small")).toStdString()).ok());
        QVERIFY(index->assignSplitsByRatio(0.6, 0.2, 0.2, 5).ok());

        ThumbnailCache cache(QSize(32, 32));
        SampleListModel model(&cache);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setIndexPath(path(QStringLiteral("model.kindex"))));
        QCOMPARE(model.rowCount(), 61);
        // Thumbnails arrive asynchronously and update their rows.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        for (int r = 0; r < model.rowCount(); ++r) model.data(model.index(r), Qt::DecorationRole);
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 60, 20000);
        const QVariant deco = model.data(model.index(0), Qt::DecorationRole);
        QVERIFY(deco.canConvert<QPixmap>());
        QCOMPARE(deco.value<QPixmap>().size(), QSize(32, 24));  // 16x12 enlarged by 2, aspect kept
        QCOMPARE(model.data(model.index(0), SampleListModel::ClassNameRole).toString(),
                 QStringLiteral("class_00"));
        QCOMPARE(model.data(model.index(0), SampleListModel::WidthRole).toInt(), 16);

        model.setFilter({1, std::nullopt, std::nullopt});
        QCOMPARE(model.rowCount(), 31);
        model.setFilter({1, std::nullopt, SampleStatus::Bad});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.data(model.index(0), SampleListModel::ReasonRole).toString().left(12),
                 QStringLiteral("not an image"));
        QVERIFY(
            !reasonDisplayText(model.data(model.index(0), SampleListModel::ReasonRole).toString()).isEmpty());
        model.setFilter({std::nullopt, SampleSplit::Validation, std::nullopt});
        QCOMPARE(model.rowCount(), int(*index->count({std::nullopt, SampleSplit::Validation, std::nullopt})));
        model.setFilter({});
        model.refresh();
        QCOMPARE(model.rowCount(), 61);
        // Records come back page by page, in (label, path) order.
        const auto first = model.record(0);
        const auto last = model.record(60);
        QVERIFY(first && last);
        QVERIFY(first->label <= last->label);
        QVERIFY(!model.record(61));
        QVERIFY(!model.setIndexPath(path(QStringLiteral("no/such/dir/x.kindex"))));
        QCOMPARE(model.rowCount(), 0);
    }

    void filtersAndChart() {
        DatasetBrowserWidget w;
        w.resize(1200, 800);
        QVERIFY(openAndWait(w, path(QStringLiteral("small")), path(QStringLiteral("browser.kindex"))));
        QAbstractItemModelTester tester(w.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto counts = w.model()->datasetIndex()->counts();
        QVERIFY(counts.ok());
        QCOMPARE(counts->total(), int64_t{61});
        // The proposed split: stratified 80/10/10 of all 61 files (training skips the bad one).
        QCOMPARE(counts->total(SampleSplit::Unassigned), int64_t{0});
        QVERIFY(std::abs(counts->total(SampleSplit::Train) - 49) <= 1);
        QCOMPARE(w.model()->rowCount(), 61);

        // The chart's bars are the class counts, per split.
        for (SampleSplit s :
             {SampleSplit::Train, SampleSplit::Validation, SampleSplit::Test, SampleSplit::Unassigned}) {
            const QVector<double> bars = w.chart()->barValues(s);
            QCOMPARE(bars.size(), 3);
            for (int k = 0; k < 3; ++k)
                QCOMPARE(bars[k], double(counts->counts[size_t(k)][size_t(engine::api::splitColumn(s))]));
        }
        double classOne = 0;
        for (SampleSplit s :
             {SampleSplit::Train, SampleSplit::Validation, SampleSplit::Test, SampleSplit::Unassigned})
            classOne += w.chart()->barValues(s)[1];
        QCOMPARE(classOne, 31.0);

        w.setFilter(2, std::nullopt);
        QCOMPARE(w.model()->rowCount(), 18);
        w.setFilter(std::nullopt, SampleSplit::Train);
        QCOMPARE(w.model()->rowCount(), int(counts->total(SampleSplit::Train)));
        w.setFilter(1, SampleSplit::Test);
        QCOMPARE(w.model()->rowCount(), int(counts->counts[1][2]));
        w.setFilter(std::nullopt, std::nullopt, SampleStatus::Bad);
        QCOMPARE(w.model()->rowCount(), 1);
        w.setFilter(std::nullopt, std::nullopt);
        QCOMPARE(w.model()->rowCount(), 61);

        // A new split changes the bars and the data section.
        QSignalSpy splits(&w, &DatasetBrowserWidget::splitsChanged);
        w.splitByRatio(0.5, 0.0, 9, true);
        QVERIFY(splits.wait(20000));
        QCOMPARE(w.chart()->barValues(SampleSplit::Test), (QVector<double>{0, 0, 0}));
        const QVector<double> train = w.chart()->barValues(SampleSplit::Train);
        QCOMPARE(train[0], 6.0);
        QVERIFY(train[1] == 15.0 || train[1] == 16.0);
        QCOMPARE(train[2], 9.0);
        const nlohmann::json data = w.dataSection();
        QCOMPARE(data.value("format", ""), std::string("folder"));
        QCOMPARE(data["split"].value("validation", 0.0), 0.5);
        QCOMPARE(data["split"].value("test", 1.0), 0.0);
        QCOMPARE(data.value("seed", 0), 9);
        QCOMPARE(data.value("stratify", false), true);
        QCOMPARE(data["class_names"].size(), size_t{3});
        QVERIFY(data.contains("transforms"));
        // The pipeline's settings are written only once changed: a data.batch_size would override
        // the training section's.
        QVERIFY(!data.contains("batch_size") && !data.contains("workers"));

        // Selecting a sample fills the details and its larger preview.
        QSignalSpy preview(&w, &DatasetBrowserWidget::detailsPreviewReady);
        w.view()->setCurrentIndex(w.model()->index(3));
        QCOMPARE(w.currentSampleId(),
                 w.model()->data(w.model()->index(3), SampleListModel::IdRole).toLongLong());
        QVERIFY(preview.wait(10000));
        QVERIFY(!w.detailsPreview().isNull());
        QVERIFY(w.detailsPreview().width() >= 16);

        // Reopening the same folder reads nothing again.
        QSignalSpy done(&w, &DatasetBrowserWidget::scanFinished);
        QVERIFY(w.openImageFolder(path(QStringLiteral("small")), path(QStringLiteral("browser.kindex"))));
        QVERIFY(done.wait(20000));
        QVERIFY2(done.first().at(1).toString().contains(QStringLiteral("0 new")),
                 qPrintable(done.first().at(1).toString()));
    }

    // A project's folder section comes back unchanged after the browser opened and scanned it: its
    // relative path, its split (not the 80/10/10 a new folder gets), no batch size or seed of the
    // browser's own. The browser shows the project's split; only what the user edits is written.
    void projectSectionKeptAsIs() {
        const QString projectPath = path(QStringLiteral("project.kiln"));
        const nlohmann::json section = {{"format", "folder"},
                                        {"path", "small"},
                                        {"split", {{"validation", 0.25}, {"test", 0.25}}},
                                        {"transforms", nlohmann::json::array({{{"type", "decode"}, {"channels", 1}}})}};
        DatasetBrowserWidget w;
        w.resize(1200, 800);
        w.setProjectPath(projectPath);
        QSignalSpy done(&w, &DatasetBrowserWidget::scanFinished);
        QSignalSpy changed(&w, &DatasetBrowserWidget::dataSectionChanged);
        w.setDataSection(section);
        QVERIFY(done.wait(60000));
        QVERIFY2(done.first().at(0).toBool(), qPrintable(done.first().at(1).toString()));
        QVERIFY(changed.size() >= 1);  // the scan still says it finished
        QCOMPARE(w.dataSection(), section);
        // The grid shows the project's split: a quarter of the 61 files each for validation and test.
        auto counts = w.model()->datasetIndex()->counts();
        QVERIFY(counts.ok());
        QVERIFY(std::abs(counts->total(SampleSplit::Validation) - 15) <= 2);
        QVERIFY(std::abs(counts->total(SampleSplit::Test) - 15) <= 2);

        // Opened again over the index kept from the first look: still the project's split, and a
        // project with no split shows every sample as training data, as training reads it.
        nlohmann::json unsplit = section;
        unsplit.erase("split");
        QSignalSpy again(&w, &DatasetBrowserWidget::scanFinished);
        w.setDataSection(unsplit);
        QVERIFY(again.wait(60000));
        QCOMPARE(w.dataSection(), unsplit);
        counts = w.model()->datasetIndex()->counts();
        QVERIFY(counts.ok());
        QCOMPARE(counts->total(SampleSplit::Validation) + counts->total(SampleSplit::Test), int64_t{0});

        // What the user changes is written, and nothing else: one pipeline setting ...
        auto* workers = w.pipelinePanel()->findChild<QSpinBox*>(QStringLiteral("pipelineWorkers"));
        QVERIFY(workers);
        workers->setValue(workers->value() == 3 ? 4 : 3);
        nlohmann::json withWorkers = unsplit;
        withWorkers["workers"] = workers->value();
        QCOMPARE(w.dataSection(), withWorkers);
        unsplit = withWorkers;
        // ... and a split.
        QSignalSpy splits(&w, &DatasetBrowserWidget::splitsChanged);
        w.splitByRatio(0.2, 0.1, 4, false);
        QVERIFY(splits.wait(20000));
        nlohmann::json expected = unsplit;
        expected["split"] = {{"validation", 0.2}, {"test", 0.1}};
        expected["stratify"] = false;
        expected["seed"] = 4;
        const nlohmann::json after = w.dataSection();
        QCOMPARE(after["split"]["validation"].get<double>(), 0.2);
        QCOMPARE(after["split"]["test"].get<double>(), 0.1);
        QCOMPARE(after.value("seed", 0), 4);
        QCOMPARE(after.value("stratify", true), false);
        nlohmann::json rest = after;
        for (const char* key : {"split", "seed", "stratify"}) rest.erase(key);
        QCOMPARE(rest, unsplit);
    }

    void augmentationPreview() {
        const QString file = path(QStringLiteral("aug.png"));
        QVERIFY(picture(32, 24, 3).save(file));
        AugmentationPreview preview;
        QSignalSpy updated(&preview, &AugmentationPreview::previewUpdated);
        preview.setTransforms(
            nlohmann::json::parse(R"([{"type": "flip", "horizontal": true, "probability": 1.0}])"));
        preview.setSamplePath(file);
        QTRY_VERIFY_WITH_TIMEOUT(
            !preview.images().isEmpty() && updated.count() >= 1 && preview.errorText().isEmpty(), 10000);
        QCOMPARE(preview.images().size(), AugmentationPreview::kVariants);
        const QImage flipped =
            picture(32, 24, 3).mirrored(true, false).convertToFormat(QImage::Format_RGB888);
        QCOMPARE(preview.images()[0].convertToFormat(QImage::Format_RGB888), flipped);

        updated.clear();
        preview.setTransforms(nlohmann::json::parse(R"([{"type": "rotate", "degrees": 30}])"));
        QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1 && !preview.images().isEmpty(), 10000);
        QCOMPARE(preview.images().size(), AugmentationPreview::kVariants);
        // Different passes draw different angles.
        QVERIFY(preview.images()[0] != preview.images()[1] || preview.images()[1] != preview.images()[2]);

        updated.clear();
        preview.setTransforms(nlohmann::json::parse(R"([{"type": "spin", "degrees": 30}])"));
        QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1 && !preview.errorText().isEmpty(), 10000);
        QVERIFY(preview.errorText().contains(QStringLiteral("transforms[0]")));
    }

    // Text edited by hand goes through the checked JSON parser: 100,000 nested brackets are refused
    // with the editor's message (no stack overflow), and the transforms in force stay as they were.
    void editedTransformsAreCheckedJson() {
        AugmentationPreview preview;
        const nlohmann::json before = preview.transforms();
        auto* asText = preview.findChild<QPushButton*>(QStringLiteral("editTransformsAsText"));
        QVERIFY(asText);
        QTest::mouseClick(asText, Qt::LeftButton);
        QVERIFY(preview.textMode());
        auto* editor = preview.findChild<QPlainTextEdit*>();
        QVERIFY(editor);
        editor->setPlainText(QString(100000, QLatin1Char('[')) + QString(100000, QLatin1Char(']')));
        QPushButton* apply = nullptr;
        for (auto* b : preview.findChildren<QPushButton*>())
            if (b->text() == QStringLiteral("Apply transforms")) apply = b;
        QVERIFY(apply);
        QSignalSpy changed(&preview, &AugmentationPreview::transformsChanged);
        QTest::mouseClick(apply, Qt::LeftButton);
        QCOMPARE(changed.count(), 0);
        QCOMPARE(preview.transforms(), before);
        bool shown = false;
        for (auto* l : preview.findChildren<QLabel*>())
            if (l->text().contains(QStringLiteral("must be a JSON array"))) shown = true;
        QVERIFY(shown);
    }

    void importPreviews() {
        using Kind = ImportDatasetDialog::Kind;
        // Image folder.
        auto p = ImportDatasetDialog::readPreview(Kind::ImageFolder,
                                                  {{"path", path(QStringLiteral("small")).toStdString()}});
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.classNames, (QStringList{QStringLiteral("class_00"), QStringLiteral("class_01"),
                                            QStringLiteral("class_02")}));
        QCOMPARE(p.classCounts, (QVector<qint64>{12, 31, 18}));
        QVERIFY(!p.rows.isEmpty() && !p.images.isEmpty());

        // CSV index in Neural Network Console style.
        {
            QFile f(path(QStringLiteral("index.csv")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("x:image,y:label\n");
            for (int i = 0; i < 5; ++i) f.write(QStringLiteral("small/class_00/p%1.png,0\n").arg(i).toUtf8());
            for (int i = 0; i < 3; ++i) f.write(QStringLiteral("small/class_02/p%1.png,2\n").arg(i).toUtf8());
        }
        p = ImportDatasetDialog::readPreview(Kind::CsvIndex,
                                             {{"path", path(QStringLiteral("index.csv")).toStdString()}});
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.rows.size(), 8);
        QCOMPARE(p.classCounts, (QVector<qint64>{5, 0, 3}));
        QCOMPARE(p.images.size(), 8);

        // Numeric CSV table with named labels.
        {
            QFile f(path(QStringLiteral("table.csv")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("a,b,kind\n1,2,cat\n3,4,dog\n5,6,cat\n");
        }
        p = ImportDatasetDialog::readPreview(Kind::CsvTable,
                                             {{"path", path(QStringLiteral("table.csv")).toStdString()},
                                              {"header", true},
                                              {"label_column", -1},
                                              {"categorical_label", true},
                                              {"skip_rows", 0}});
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.classNames, (QStringList{QStringLiteral("cat"), QStringLiteral("dog")}));
        QCOMPARE(p.classCounts, (QVector<qint64>{2, 1}));
        p = ImportDatasetDialog::readPreview(Kind::CsvTable,
                                             {{"path", path(QStringLiteral("table.csv")).toStdString()},
                                              {"header", false},
                                              {"label_column", -1},
                                              {"skip_rows", 0}});
        QVERIFY(!p.error.isEmpty());  // "a" is not a number: the reason names line and column
        QVERIFY2(p.error.contains(QStringLiteral("table.csv:1")), qPrintable(p.error));

        // TFRecord of tf.train.Example with PNG bytes and labels.
        {
            auto writer =
                engine::data::TfRecordWriter::create(path(QStringLiteral("data.tfrecord")).toStdString());
            QVERIFY(writer.ok());
            for (int i = 0; i < 7; ++i) {
                QByteArray png;
                QBuffer buf(&png);
                buf.open(QIODevice::WriteOnly);
                picture(10, 10, i).save(&buf, "PNG");
                engine::data::Example ex;
                ex.features["image/encoded"] = engine::data::Feature::ofBytes({png.toStdString()});
                ex.features["image/class/label"] = engine::data::Feature::ofInt64s({i % 2});
                QVERIFY((*writer)->write(engine::data::encodeExample(ex)).ok());
            }
            QVERIFY((*writer)->close().ok());
        }
        ImportDatasetDialog dialog;
        dialog.setKind(Kind::TfRecord);
        dialog.setPath(path(QStringLiteral("data.tfrecord")));
        p = ImportDatasetDialog::readPreview(Kind::TfRecord, dialog.dataSection());
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.classCounts, (QVector<qint64>{4, 3}));
        QCOMPARE(p.images.size(), 7);
        QCOMPARE(p.headers,
                 (QStringList{QStringLiteral("image/class/label"), QStringLiteral("image/encoded")}));

        // IDX (Fashion-MNIST test files).
        const QString idx = QStringLiteral("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz");
        if (QFile::exists(idx)) {
            p = ImportDatasetDialog::readPreview(
                Kind::Idx, {{"train", {{"images", idx.toStdString()}, {"labels", ""}}}});
            QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
            QCOMPARE(p.classCounts.size(), 10);
            QCOMPARE(std::accumulate(p.classCounts.begin(), p.classCounts.end(), qint64{0}), qint64{10000});
            QVERIFY(!p.images.isEmpty());
            QCOMPARE(p.images.first().width(), 72);  // 28x28 enlarged into the 72-pixel box
        }

        // The dialog's own asynchronous preview.
        dialog.setKind(Kind::ImageFolder);
        dialog.setPath(path(QStringLiteral("small")));
        QSignalSpy ready(&dialog, &ImportDatasetDialog::previewReady);
        dialog.refreshPreview();
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && dialog.preview().classNames.size() == 3, 10000);
        QCOMPARE(dialog.dataSection().value("format", ""), std::string("folder"));
        dialog.setPath(path(QStringLiteral("missing")));
        ready.clear();
        dialog.refreshPreview();
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && !dialog.preview().error.isEmpty(), 10000);
    }

    void idxPicturesReachThePreviewUnchanged() {
        // Two IDX pictures of 3 rows x 2 columns, grey values i * 10 + k, labels 1 and 0.
        QByteArray images("\0\0\x08\x03\0\0\0\x02\0\0\0\x03\0\0\0\x02", 16);
        for (int i = 0; i < 2; ++i)
            for (int k = 0; k < 6; ++k) images.append(char(i * 10 + k));
        const QByteArray labels("\0\0\x08\x01\0\0\0\x02\x01\0", 10);
        QDir().mkpath(path(QStringLiteral("idx")));
        for (const auto& [name, bytes] : {std::pair{QStringLiteral("idx/train-images-idx3-ubyte"), images},
                                          std::pair{QStringLiteral("idx/train-labels-idx1-ubyte"), labels}}) {
            QFile f(path(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(bytes), qint64(bytes.size()));
        }
        const auto p = ImportDatasetDialog::readPreview(
            ImportDatasetDialog::Kind::Idx,
            {{"train", {{"images", path(QStringLiteral("idx/train-images-idx3-ubyte")).toStdString()}, {"labels", ""}}}});
        QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
        QCOMPARE(p.classCounts, (QVector<qint64>{1, 1}));
        QCOMPARE(p.rows.size(), 2);
        QCOMPARE(p.rows[1][1], QStringLiteral("picture 3×2×1"));
        QCOMPARE(p.originals.size(), 2);
        QCOMPARE(p.originalRecords, (QVector<qint64>{0, 1}));
        const QImage second = p.originals[1];
        QCOMPARE(second.size(), QSize(2, 3));
        QCOMPARE(second.format(), QImage::Format_Grayscale8);
        for (int y = 0; y < 3; ++y)
            for (int x = 0; x < 2; ++x) QCOMPARE(qGray(second.pixel(x, y)), 10 + y * 2 + x);
    }

    void picturesMoveIntoImages() {
        engine::api::DisplayPicture picture;
        picture.width = 3;
        picture.height = 2;
        picture.channels = 3;
        for (int i = 0; i < 18; ++i) picture.pixels.push_back(uint8_t(i * 9));
        const QImage copied = imageFromPicture(picture);
        const uint8_t* buffer = picture.pixels.data();
        const QImage moved = imageFromPicture(std::move(picture));
        QCOMPARE(moved, copied);
        QCOMPARE(moved.pixel(2, 1), qRgb(135, 144, 153));
        // The image shows the picture's own buffer: no copy of the pixels was made.
        QCOMPARE(moved.constBits(), buffer);
        QVERIFY(copied.constBits() != buffer);
        // A picture whose pixels do not fill it gives no image.
        engine::api::DisplayPicture shortOfPixels;
        shortOfPixels.width = 4;
        shortOfPixels.height = 4;
        shortOfPixels.channels = 1;
        shortOfPixels.pixels.assign(15, 0);
        QVERIFY(imageFromPicture(std::move(shortOfPixels)).isNull());
    }

    void pipelineRate() {
        PipelinePanel panel;
        panel.setImageFolder(path(QStringLiteral("small")));
        panel.setSettings({{"batch_size", 8}, {"workers", 2}, {"shuffle_buffer", 100}});
        QCOMPARE(panel.settings().value("batch_size", 0), 8);
        QSignalSpy measured(&panel, &PipelinePanel::measured);
        panel.measure(0.5);
        QVERIFY(measured.wait(30000));
        const PipelineMeasurement& m = panel.lastMeasurement();
        QVERIFY2(m.ok, qPrintable(m.error));
        QVERIFY(m.samples > 0);
        QVERIFY(m.samplesPerSecond > 0);
        QCOMPARE(m.outputShape, QStringLiteral("12×16×3"));
        qInfo("pipeline on the small folder: %.0f samples/s, %lld skipped", m.samplesPerSecond,
              static_cast<long long>(m.skipped));
    }

    void twentyThousandImagesStayResponsive() {
        const QString folder = path(QStringLiteral("big"));
        makeFolder(folder, 10, 2000);
        DatasetBrowserWidget w;
        w.resize(1280, 860);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // What is measured is the browser at scale, not the process's first use of fonts, symbols
        // and threads: a small folder is opened first, as a user opens something before.
        QVERIFY(openAndWait(w, path(QStringLiteral("small")), path(QStringLiteral("warm.kindex"))));

        // A shared machine sometimes takes the core away from the GUI thread for tens of
        // milliseconds in the middle of its work, which no code of the browser causes or can
        // prevent. A stall the browser causes shows in every attempt; one that the machine causes
        // does not: the scenario (open, full scan into a new index, scroll through everything) runs
        // up to three times and passes when one attempt stays within the budget. Each attempt
        // starts as the first does, from the small folder: letting go of the 20,000-picture index
        // and its thumbnails is not what is measured.
        // The GUI thread's own work stays under 50 ms at a stretch, a smooth frame; the wall-clock
        // gap, which also holds the time the thread waits for a core, under 100 ms, the delay a
        // user starts to notice. What took longest before, a relayout of the whole window each
        // time the status line or the sample count changed, no longer happens: their labels sit
        // in holders of a fixed size, and the scenario may relayout the window at most once.
        constexpr qint64 kCpuBudgetMs = 50;
        constexpr qint64 kBudgetMs = 100;
        QStringList attempts;
        bool within = false;
        for (int attempt = 1; attempt <= 3 && !within; ++attempt) {
            if (attempt > 1)
                QVERIFY(openAndWait(w, path(QStringLiteral("small")), path(QStringLiteral("warm.kindex"))));
            const Stalls st = openAndScroll(w, folder, path(QStringLiteral("big%1.kindex").arg(attempt)));
            if (QTest::currentTestFailed()) return;
            QVERIFY2(st.relayouts <= 1, qPrintable(QStringLiteral("the window was laid out %1 times").arg(st.relayouts)));
            const bool wallChecked = !st.oversubscribed;
            within = st.worstCpu < kCpuBudgetMs && (!wallChecked || st.worst < kBudgetMs);
            attempts << QStringLiteral("attempt %1: GUI thread busy %2 ms, longest stall %3 ms%4")
                            .arg(attempt)
                            .arg(st.worstCpu)
                            .arg(st.worst)
                            .arg(wallChecked ? QString() : QStringLiteral(" (not checked: oversubscribed)"));
        }
        // The GUI thread never works for its budget at a stretch. The wall-clock gap must stay
        // under its budget too, checked when the machine is not oversubscribed.
        QVERIFY2(within, qPrintable(attempts.join(QStringLiteral("; "))));
        // Thumbnails of the visible rows arrived.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.thumbnails()->contains(
                w.model()->data(w.model()->index(0), SampleListModel::IdRole).toLongLong()),
            10000);
    }

private:
    struct Stalls {
        qint64 worst = 0, worstCpu = 0;
        bool oversubscribed = false;
        int relayouts = 0;  // layout requests the browser's window handled
    };

    // Counts the LayoutRequest events a widget receives: each is a relayout of everything in it.
    class RelayoutCounter : public QObject {
    public:
        explicit RelayoutCounter(QWidget* w) : m_widget(w) { w->installEventFilter(this); }
        ~RelayoutCounter() override { m_widget->removeEventFilter(this); }
        bool eventFilter(QObject* o, QEvent* e) override {
            if (o == m_widget && e->type() == QEvent::LayoutRequest) ++count;
            return false;
        }
        int count = 0;

    private:
        QWidget* m_widget;
    };

    // Opens `folder` into a new index (a full scan of 20,000 pictures), waits for the scan, then
    // scrolls through the whole grid in steps, letting thumbnails arrive as they would.
    Stalls openAndScroll(DatasetBrowserWidget& w, const QString& folder, const QString& index) {
        Stalls st;
        test::EventLoopWatchdog watchdog;
        watchdog.start();
        // The machine's own noise: the same watchdog with an idle window.
        QTest::qWait(1000);
        const qint64 idleWorst = watchdog.longestStallMs();

        QSignalSpy done(&w, &DatasetBrowserWidget::scanFinished);
        if (qEnvironmentVariableIsSet("KILN_STALL_LOG")) {
            connect(&w, &DatasetBrowserWidget::scanFinished, this,
                    [&] { qInfo("scan finished at %lld", watchdog.elapsedMs()); });
            connect(w.model(), &QAbstractItemModel::modelReset, this,
                    [&] { qInfo("model reset at %lld", watchdog.elapsedMs()); });
        }
        RelayoutCounter relayouts(&w);
        // The clock starts at the click: QTest::qWait above ends with a sleep of up to 10 ms that
        // is no stall of the browser.
        watchdog.reset();
        [&] { QVERIFY(w.openImageFolder(folder, index)); }();
        if (QTest::currentTestFailed()) return st;
        if (qEnvironmentVariableIsSet("KILN_STALL_LOG")) qInfo("opened at %lld", watchdog.elapsedMs());
        [&] {
            QVERIFY(done.wait(180000));
            QVERIFY2(done.first().at(0).toBool(), qPrintable(done.first().at(1).toString()));
        }();
        if (QTest::currentTestFailed()) return st;
        const qint64 scanWorst = watchdog.longestStallMs();
        [&] { QCOMPARE(w.model()->rowCount(), 20000); }();
        if (QTest::currentTestFailed()) return st;

        QScrollBar* bar = w.view()->verticalScrollBar();
        [&] { QTRY_VERIFY(bar->maximum() > 0); }();
        if (QTest::currentTestFailed()) return st;
        const int steps = 120;
        for (int i = 0; i <= steps; ++i) {
            QElapsedTimer step;
            step.start();
            bar->setValue(bar->maximum() * i / steps);
            if (step.elapsed() > 20 && qEnvironmentVariableIsSet("KILN_STALL_LOG"))
                qInfo("scroll step %d took %lld ms (max %d)", i, step.elapsed(), bar->maximum());
            QTest::qWait(15);
        }
        bar->setValue(0);
        QTest::qWait(200);
        watchdog.stop();
        st.relayouts = relayouts.count;
        qInfo("relayouts of the window while opening, scanning and scrolling: %d", st.relayouts);
        st.worst = watchdog.longestStallMs();
        st.worstCpu = watchdog.longestBusyMs();
        st.oversubscribed = test::machineOversubscribed();
        qInfo("idle window: longest gap %lld ms", static_cast<long long>(idleWorst));
        qInfo("20k images: longest stall during scan %lld ms, overall %lld ms at %lld ms (%lld ticks)",
              static_cast<long long>(scanWorst), static_cast<long long>(st.worst),
              static_cast<long long>(watchdog.longestStallAtMs()), static_cast<long long>(watchdog.ticks()));
        qInfo("longest stretch of GUI-thread work between ticks: %lld ms; load average %s",
              static_cast<long long>(st.worstCpu), qPrintable(test::loadAverage()));
        return st;
    }
};

QTEST_MAIN(TestDatasetBrowser)
#include "tst_dataset_browser.moc"
