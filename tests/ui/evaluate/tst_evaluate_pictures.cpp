// SPDX-License-Identifier: Apache-2.0
// The Evaluate view on picture data written by the test: an image folder project (dark, grey and
// light 8x8 pictures through a small convolutional network) and the same pictures as TFRecord
// files. Checks the misclassified gallery and the samples table's thumbnail column for both
// (the folder's files themselves; pictures drawn from the model's input for TFRecord), other data
// chosen in the view with real clicks (a folder in the project's layout, a folder with an unknown
// class, a CSV index and TFRecord files with a label that is no class of the model), the batch export of overlays through its dialog (Grad-CAM and saliency, each file
// equal to the engine's overlay of its sample; index CSV, cancel), and "Explain with
// run…" from the dataset browser's context menu with an explanation of a single picture.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QHeaderView>
#include <QIcon>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>

#include <random>

#include "engine/api/explanation.h"
#include "engine/api/overlay_export.h"
#include "engine/core/thread_pool.h"
#include "engine/api/training_job.h"
#include "engine/data/convert.h"
#include "engine/data/example.h"
#include "engine/data/sources.h"
#include "engine/data/tfrecord.h"
#include "engine/io/project.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/dataset_browser/sample_list_model.h"
#include "ui/dataset_browser/thumbnail_cache.h"
#include "ui/evaluate/evaluate_view.h"
#include "tests/ui/evaluate/evaluate_test_util.h"
#include "ui/evaluate/evaluation_models.h"
#include "ui/evaluate/explanation_dialog.h"
#include "ui/evaluate/misclassified_gallery.h"

using namespace kiln;
using namespace kiln::ui::evaluate;
using kiln::test::clickCell;
using kiln::test::evaluateWithClick;

namespace {
// Chooses "Other data…" (the split box's last entry) with the keyboard and types `file` into the
// path field; returns that field, or nullptr when the view lacks either control.
QLineEdit* chooseOtherData(QWidget& view, const QString& file) {
    auto* split = view.findChild<QComboBox*>(QStringLiteral("evalSplit"));
    auto* path = view.findChild<QLineEdit*>(QStringLiteral("evalDataPath"));
    if (!split || !path) return nullptr;
    split->setFocus();
    QTest::keyClick(split, Qt::Key_End);
    QTest::keyClicks(path, file);
    return path;
}

const char* const kClasses[3] = {"dark", "grey", "light"};
const int kLevels[3] = {50, 128, 205};

// An 8x8 (or size x size) RGB picture around `level` with noise, so that some are mistaken.
void writePicture(const QString& path, int level, int seed, int size = 8) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QImage image(size, size, QImage::Format_RGB888);
    std::mt19937 gen{static_cast<uint32_t>(seed)};
    std::uniform_int_distribution<int> noise(-70, 70);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
            const int v = std::clamp(level + noise(gen), 0, 255);
            image.setPixelColor(x, y, QColor(v, v, std::clamp(v + (x - 4) * 4, 0, 255)));
        }
    QVERIFY(image.save(path, "PNG"));
}

engine::io::Project pictureProject(const std::string& data) {
    const std::string text = R"({"format": "kiln-project", "version": 2, "name": "pictures",
      "graph": {"nodes": [
        {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 3]}},
        {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 4, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}},
        {"name": "flat", "op": "Flatten", "inputs": ["conv"]},
        {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}]},
      "data": )" + data + R"(,
      "training": {"epochs": 3, "batch_size": 8, "seed": 5, "optimizer": {"type": "adam", "learning_rate": 0.02},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]}})";
    auto p = engine::io::parseProject(text, "pictures.kiln");
    if (!p.ok()) qFatal("parseProject: %s", p.error().toString().c_str());
    return std::move(p).value();
}

// The size of the picture behind a samples table cell's icon (the placeholder is smaller).
QSize thumbnailSize(const QModelIndex& cell) {
    const QIcon icon = cell.data(Qt::DecorationRole).value<QIcon>();
    return icon.availableSizes().isEmpty() ? QSize() : icon.availableSizes().first();
}

// The diagonal cell with the most samples: its gallery shows those right answers.
int busiestDiagonal(EvaluateView& view) {
    int best = 0;
    for (int c = 1; c < 3; ++c)
        if (view.confusionModel()->index(c, c).data().toLongLong() > view.confusionModel()->index(best, best).data().toLongLong()) best = c;
    return best;
}

}  // namespace

class TestEvaluatePictures : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    engine::io::Project m_folder, m_records;
    QString m_folderPath, m_recordsPath, m_folderRun, m_recordsRun;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const QString root = m_dir.filePath(QStringLiteral("pics"));
        for (const char* split : {"train", "val", "test"})
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < (QLatin1String(split) == QLatin1String("train") ? 16 : 5); ++i)
                    writePicture(QStringLiteral("%1/%2/%3/%4.png").arg(root, QLatin1String(split), QLatin1String(kClasses[c])).arg(i),
                                 kLevels[c], i * 31 + c + (split[1] == 'e' ? 500 : 0));
        m_folder = pictureProject(R"({"format": "folder", "path": "pics", "transforms": [{"type": "normalize", "preset": "symmetric"}]})");
        m_folderPath = m_dir.filePath(QStringLiteral("pictures.kiln"));
        QVERIFY(engine::io::saveProject(m_folder, m_folderPath.toStdString()).ok());
        m_folderRun = kiln::test::trainRun(m_folder, m_folderPath, m_dir.filePath(QStringLiteral("runs/folder")), "pictures");
        QVERIFY(!m_folderRun.isEmpty());

        // The same pictures as TFRecord files (as kiln-data convert writes them).
        for (const char* split : {"train", "test"}) {
            auto source = engine::data::ImageFolderSource::open((root + QLatin1Char('/') + QLatin1String(split)).toStdString());
            QVERIFY2(source.ok(), source.ok() ? "" : source.error().toString().c_str());
            auto written = engine::data::convertToTfRecord(**source, m_dir.filePath(QStringLiteral("%1.tfrecord").arg(QLatin1String(split))).toStdString(), {});
            QVERIFY2(written.ok(), written.ok() ? "" : written.error().toString().c_str());
        }
        m_records = pictureProject(R"({"format": "tfrecord", "train": "train.tfrecord", "test": "test.tfrecord",
            "class_names": ["dark", "grey", "light"], "transforms": [{"type": "normalize", "preset": "symmetric"}]})");
        m_recordsPath = m_dir.filePath(QStringLiteral("records.kiln"));
        QVERIFY(engine::io::saveProject(m_records, m_recordsPath.toStdString()).ok());
        m_recordsRun = kiln::test::trainRun(m_records, m_recordsPath, m_dir.filePath(QStringLiteral("runs/records")), "pictures");
        QVERIFY(!m_recordsRun.isEmpty());
    }

    // An image folder: the gallery and the samples table show the picture files themselves.
    void folderGalleryAndThumbnails() {
        EvaluateView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QAbstractItemModelTester tester(view.sampleModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setProject(m_folder, m_folderPath);
        view.setWeights(m_folderRun);
        QString error;
        QVERIFY2(evaluateWithClick(view, &error), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 15);
        QVERIFY(view.gallery()->isVisible());

        // A diagonal cell: the gallery shows those right answers, with their own files.
        const int c = busiestDiagonal(view);
        clickCell(view.confusionView(), c, c);
        GalleryModel* gallery = view.gallery()->model();
        QVERIFY(gallery->rowCount() > 0);
        const auto& first = gallery->record(0);
        QCOMPARE(first.trueClass, qint64(c));
        QTRY_VERIFY(!gallery->picturePath(first.index).isEmpty());
        QVERIFY(gallery->picturePath(first.index).endsWith(QStringLiteral(".png")));
        QVERIFY(gallery->picturePath(first.index).contains(QStringLiteral("pics/test/") + QLatin1String(kClasses[c])));
        QTRY_VERIFY(view.gallery()->thumbnails()->contains(first.index));

        // The samples table: a Picture column whose thumbnails come from the gallery's cache, for
        // the rows on screen.
        QTableView* table = view.sampleView();
        QVERIFY(!table->isColumnHidden(SampleTableModel::Picture));
        QCOMPARE(view.sampleModel()->headerData(SampleTableModel::Picture, Qt::Horizontal).toString(), QStringLiteral("Picture"));
        QVERIFY(view.sampleModel()->hasPictures());
        view.findChild<QTabWidget*>()->setCurrentWidget(table);
        QSortFilterProxyModel* proxy = view.sampleProxy();
        const qint64 sample = proxy->index(0, SampleTableModel::Index).data().toLongLong();
        QTRY_VERIFY(view.gallery()->thumbnails()->contains(sample));
        QTRY_COMPARE(thumbnailSize(proxy->index(0, SampleTableModel::Picture)), view.gallery()->thumbnails()->thumbnailSize());
        QVERIFY(table->rowHeight(0) >= 32);
    }

    // TFRecord: the pictures are drawn from the model's input, in the gallery and in the table.
    void tfrecordGalleryAndThumbnails() {
        EvaluateView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(m_records, m_recordsPath);
        view.setWeights(m_recordsRun);
        QString error;
        QVERIFY2(evaluateWithClick(view, &error), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 15);
        QVERIFY(view.gallery()->isVisible());
        const int c = busiestDiagonal(view);
        clickCell(view.confusionView(), c, c);
        GalleryModel* gallery = view.gallery()->model();
        QVERIFY(gallery->rowCount() > 0);
        const auto& first = gallery->record(0);
        QVERIFY(QString::fromStdString(first.source).contains(QStringLiteral("test.tfrecord@")));
        QTRY_VERIFY_WITH_TIMEOUT(!gallery->picturePath(first.index).isEmpty(), 60000);
        QVERIFY2(view.gallery()->drawError().isEmpty(), qPrintable(view.gallery()->drawError()));
        QImage drawn(gallery->picturePath(first.index));
        QCOMPARE(drawn.size(), QSize(8, 8));  // the model's input, as small as it is
        QTRY_VERIFY(view.gallery()->thumbnails()->contains(first.index));

        // A right answer of another class is in neither gallery shown so far (the wrong ones, cell
        // c): it is drawn when the samples table shows its row.
        view.setClassFilter(-1, -1);
        QSortFilterProxyModel* proxy = view.sampleProxy();
        int row = -1;
        for (int r = 0; r < proxy->rowCount() && row < 0; ++r) {
            const auto& record = view.sampleModel()->record(proxy->mapToSource(proxy->index(r, 0)).row());
            if (record.correct() && record.trueClass != c) row = r;
        }
        QVERIFY2(row >= 0, "the model predicts more than one class right");
        const qint64 index = proxy->index(row, SampleTableModel::Index).data().toLongLong();
        QVERIFY(gallery->picturePath(index).isEmpty());
        view.findChild<QTabWidget*>()->setCurrentWidget(view.sampleView());
        view.sampleView()->scrollTo(proxy->index(row, SampleTableModel::Picture));
        QTRY_VERIFY_WITH_TIMEOUT(!gallery->picturePath(index).isEmpty(), 60000);
        QTRY_COMPARE(thumbnailSize(proxy->index(row, SampleTableModel::Picture)), view.gallery()->thumbnails()->thumbnailSize());
    }

    // Other data from the view: "Other data…" in the split box, a typed path, Evaluate.
    void otherDataWithClicks() {
        const QString more = m_dir.filePath(QStringLiteral("more"));
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 2; ++i)
                writePicture(QStringLiteral("%1/%2/%3.png").arg(more, QLatin1String(kClasses[c])).arg(i), kLevels[c], 900 + i * 7 + c);
        EvaluateView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(m_folder, m_folderPath);
        view.setWeights(m_folderRun);
        auto* split = view.findChild<QComboBox*>(QStringLiteral("evalSplit"));
        auto* path = view.findChild<QLineEdit*>(QStringLiteral("evalDataPath"));
        QVERIFY(split && path);
        QVERIFY(!path->isVisible());
        split->setFocus();
        QTest::keyClick(split, Qt::Key_End);  // the last entry: other data
        QCOMPARE(split->currentIndex(), split->count() - 1);
        QCOMPARE(split->currentText(), QStringLiteral("Other data…"));
        QVERIFY(path->isVisible());
        QVERIFY(view.findChild<QPushButton*>(QStringLiteral("evalBrowseData"))->isVisible());
        QTest::keyClicks(path, more);
        QString error;
        QVERIFY2(evaluateWithClick(view, &error), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 6);
        for (int r = 0; r < 6; ++r) QVERIFY(QString::fromStdString(view.sampleModel()->record(r).source).contains(QStringLiteral("/more/")));
        QCOMPARE(view.split(), more);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(more));
        QVERIFY(view.gallery()->isVisible());
        // Stored apart from the test split's results: a second evaluation reads them.
        QVERIFY(evaluateWithClick(view, &error));
        QVERIFY(view.shownFromCache());

        // A folder with a class the model does not know: an error naming it, nothing shown.
        const QString odd = m_dir.filePath(QStringLiteral("odd"));
        writePicture(odd + QStringLiteral("/dark/0.png"), kLevels[0], 1);
        writePicture(odd + QStringLiteral("/purple/0.png"), 90, 2);
        path->clear();
        QTest::keyClicks(path, odd);
        QVERIFY(!evaluateWithClick(view, &error));
        QVERIFY2(error.contains(QStringLiteral("purple")), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 0);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("purple")));

        // Pictures of another size than the model's input: an error naming a file.
        const QString big = m_dir.filePath(QStringLiteral("big"));
        writePicture(big + QStringLiteral("/grey/0.png"), kLevels[1], 3, 12);
        path->clear();
        QTest::keyClicks(path, big);
        QVERIFY(!evaluateWithClick(view, &error));
        QVERIFY2(error.contains(big + QStringLiteral("/grey/0.png")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("[8,8,3]")), qPrintable(error));

        // Nothing typed: a hint, no evaluation.
        path->clear();
        QSignalSpy finished(&view, &EvaluateView::finished);
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
        QVERIFY(!view.busy());
        QCOMPARE(finished.count(), 0);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("Choose the data")));
    }

    // Other data of a CSV index project: its labels are class indices, and one that is not a class
    // of the model is refused with the file, line and label, before anything is shown.
    void otherCsvIndexLabelsAreChecked() {
        QString index = QStringLiteral("image,label\n");
        for (const char* split : {"train", "val"})
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < 5; ++i)
                    index += QStringLiteral("pics/%1/%2/%3.png,%4\n").arg(QLatin1String(split), QLatin1String(kClasses[c])).arg(i).arg(c);
        auto write = [&](const QString& name, const QString& text) {
            QFile f(m_dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text.toUtf8());
        };
        write(QStringLiteral("index.csv"), index);
        engine::io::Project project = pictureProject(R"({"format": "csv_index", "path": "index.csv", "split": {"validation": 0.2, "test": 0.2},
            "class_names": ["dark", "grey", "light"], "transforms": [{"type": "normalize", "preset": "symmetric"}]})");
        const QString projectPath = m_dir.filePath(QStringLiteral("indexed.kiln"));
        QVERIFY(engine::io::saveProject(project, projectPath.toStdString()).ok());
        const QString run = kiln::test::trainRun(project, projectPath, m_dir.filePath(QStringLiteral("runs/indexed")), "indexed");
        QVERIFY(!run.isEmpty());
        // Other data: the test pictures, one of them labelled 7 (line 4), one 3 (line 6).
        QString other = QStringLiteral("image,label\n");
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 2; ++i)
                other += QStringLiteral("pics/test/%1/%2.png,%3\n").arg(QLatin1String(kClasses[c])).arg(i).arg(c);
        write(QStringLiteral("other.csv"), other);
        QStringList lines = other.split(QLatin1Char('\n'));
        lines[3] = lines[3].left(lines[3].lastIndexOf(QLatin1Char(','))) + QStringLiteral(",7");
        lines[5] = lines[5].left(lines[5].lastIndexOf(QLatin1Char(','))) + QStringLiteral(",3");
        write(QStringLiteral("odd.csv"), lines.join(QLatin1Char('\n')));

        EvaluateView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(project, projectPath);
        view.setWeights(run);
        QLineEdit* path = chooseOtherData(view, m_dir.filePath(QStringLiteral("other.csv")));
        QVERIFY(path);
        QString error;
        QVERIFY2(evaluateWithClick(view, &error), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 6);
        qint64 total = 0;
        for (int t = 0; t < 3; ++t) {
            qint64 row = 0;
            for (int p = 0; p < 3; ++p) row += view.confusionModel()->index(t, p).data().toLongLong();
            QCOMPARE(row, qint64(2));  // two samples of each class, as labelled
            total += row;
        }
        QCOMPARE(total, qint64(6));
        // Stored, and read back; a picture the index lists, rewritten, makes it evaluate again.
        QVERIFY(evaluateWithClick(view, &error));
        QVERIFY(view.shownFromCache());
        writePicture(m_dir.filePath(QStringLiteral("pics/test/grey/1.png")), kLevels[1], 4242);
        QVERIFY(evaluateWithClick(view, &error));
        QVERIFY(!view.shownFromCache());

        const QString odd = m_dir.filePath(QStringLiteral("odd.csv"));
        path->clear();
        QTest::keyClicks(path, odd);
        QVERIFY(!evaluateWithClick(view, &error));
        QVERIFY2(error.contains(odd + QStringLiteral(":4")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("\"7\"")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("0 dark, 1 grey, 2 light")), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 0);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(odd + QStringLiteral(":4")));
        // The same refusal from kiln-eval's code path, with the error's parts.
        engine::api::EvaluationOptions options;
        options.weights = run.toStdString();
        options.split = odd.toStdString();
        auto p = engine::api::predict(project, projectPath.toStdString(), options);
        QVERIFY(!p.ok());
        QCOMPARE(p.error().code, engine::ErrorCode::DataError);
        QCOMPARE(p.error().file, odd.toStdString());
        QCOMPARE(p.error().line, 4);
        QCOMPARE(p.error().param("label"), std::string("7"));

        // A project whose index names each row's split: its own index (split column included) can
        // be evaluated as other data, every row of it; an index without that column too.
        QString splitIndex = QStringLiteral("image,label,split\n");
        const QStringList rows = other.trimmed().split(QLatin1Char('\n')).mid(1);
        for (int r = 0; r < rows.size(); ++r) splitIndex += rows[r] + (r % 2 ? QStringLiteral(",train\n") : QStringLiteral(",test\n"));
        write(QStringLiteral("split.csv"), splitIndex);
        engine::io::Project withSplit = project;
        withSplit.data["path"] = "split.csv";
        withSplit.data["split_column"] = "split";
        withSplit.data.erase("split");
        options.split = m_dir.filePath(QStringLiteral("split.csv")).toStdString();
        auto all = engine::api::predict(withSplit, projectPath.toStdString(), options);
        QVERIFY2(all.ok(), all.ok() ? "" : all.error().toString().c_str());
        QCOMPARE(all->samples, int64_t(6));
        options.split = m_dir.filePath(QStringLiteral("other.csv")).toStdString();
        auto plain = engine::api::predict(withSplit, projectPath.toStdString(), options);
        QVERIFY2(plain.ok(), plain.ok() ? "" : plain.error().toString().c_str());
        QCOMPARE(plain->samples, int64_t(6));
        QVERIFY(plain->outputs == all->outputs);  // the same pictures in the same order
    }

    // Other data of a TFRecord project: the same check as for a CSV index, record by record. A copy
    // of the test records evaluates; one whose third record is labelled 7 is refused with the file,
    // the record and the label, in the view (typed path, Evaluate clicked) and from kiln-eval's code
    // path, before anything is shown.
    void otherTfRecordLabelsAreChecked() {
        const QString good = m_dir.filePath(QStringLiteral("other_good.tfrecord"));
        const QString odd = m_dir.filePath(QStringLiteral("other_odd.tfrecord"));
        {
            auto reader = engine::data::TfRecordReader::open(m_dir.filePath(QStringLiteral("test.tfrecord")).toStdString());
            QVERIFY(reader.ok());
            auto goodWriter = engine::data::TfRecordWriter::create(good.toStdString());
            auto oddWriter = engine::data::TfRecordWriter::create(odd.toStdString());
            QVERIFY(goodWriter.ok() && oddWriter.ok());
            std::string payload;
            for (int record = 1;; ++record) {
                auto got = (*reader)->next(payload);
                QVERIFY(got.ok());
                if (!*got) break;
                QVERIFY((*goodWriter)->write(payload).ok());
                auto example = engine::data::decodeExample(payload);
                QVERIFY(example.ok());
                QVERIFY(example->find("label") != nullptr);
                if (record == 3) example->features["label"] = engine::data::Feature::ofInt64s({7});
                QVERIFY((*oddWriter)->write(engine::data::encodeExample(*example)).ok());
            }
            QVERIFY((*goodWriter)->close().ok() && (*oddWriter)->close().ok());
        }
        EvaluateView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(m_records, m_recordsPath);
        view.setWeights(m_recordsRun);
        QLineEdit* path = chooseOtherData(view, good);
        QVERIFY(path);
        QString error;
        QVERIFY2(evaluateWithClick(view, &error), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 15);

        path->clear();
        QTest::keyClicks(path, odd);
        QVERIFY(!evaluateWithClick(view, &error));
        QVERIFY2(error.startsWith(odd + QStringLiteral(": ")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("Record 3 (byte offset ")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("the label 7 (feature \"label\")")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("0 dark, 1 grey, 2 light")), qPrintable(error));
        QCOMPARE(view.sampleModel()->rowCount(), 0);

        engine::api::EvaluationOptions options;
        options.weights = m_recordsRun.toStdString();
        options.split = odd.toStdString();
        auto p = engine::api::predict(m_records, m_recordsPath.toStdString(), options);
        QVERIFY(!p.ok());
        QCOMPARE(p.error().code, engine::ErrorCode::DataError);
        QCOMPARE(p.error().file, odd.toStdString());
        QCOMPARE(p.error().param("record"), std::string("3"));
        QCOMPARE(p.error().param("label"), std::string("7"));
        QVERIFY(!p.error().param("offset").empty() && p.error().param("offset") != "0");
        options.split = good.toStdString();
        auto all = engine::api::predict(m_records, m_recordsPath.toStdString(), options);
        QVERIFY2(all.ok(), all.ok() ? "" : all.error().toString().c_str());
        QCOMPARE(all->samples, int64_t(15));
    }

    // Overlays of selected samples into a folder, with the index CSV.
    void exportsOverlays() {
        EvaluateView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(m_folder, m_folderPath);
        view.setWeights(m_folderRun);
        QVERIFY(evaluateWithClick(view));
        QTableView* table = view.sampleView();
        view.findChild<QTabWidget*>()->setCurrentWidget(table);
        // Three rows selected with clicks, then the context menu offers their export.
        QSortFilterProxyModel* proxy = view.sampleProxy();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(proxy->index(0, SampleTableModel::Source)).center());
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::ShiftModifier,
                          table->visualRect(proxy->index(2, SampleTableModel::Source)).center());
        QCOMPARE(table->selectionModel()->selectedRows().size(), 3);
        // The context menu of the selection (a new one each time; a closed one is deleted).
        auto exportAction = [&]() -> QAction* {
            for (int i = 0; i < 100 && table->findChild<QMenu*>(QStringLiteral("sampleMenu")); ++i) {
                QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
                QTest::qWait(20);
            }
            if (table->findChild<QMenu*>(QStringLiteral("sampleMenu"))) return nullptr;
            const QPoint at = table->visualRect(proxy->index(1, SampleTableModel::Source)).center();
            QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, at, table->viewport()->mapToGlobal(at));
            QApplication::sendEvent(table->viewport(), &menuEvent);
            auto* menu = table->findChild<QMenu*>(QStringLiteral("sampleMenu"));
            return menu ? menu->findChild<QAction*>(QStringLiteral("exportSelectedOverlays")) : nullptr;
        };
        QAction* first = exportAction();
        QVERIFY(first);
        QVERIFY(first->text().contains(QStringLiteral("3")));
        static_cast<QMenu*>(first->parent())->close();
        QList<qint64> samples;
        for (int r = 0; r < 3; ++r) samples << proxy->index(r, SampleTableModel::Index).data().toLongLong();
        std::sort(samples.begin(), samples.end());

        // The action opens the export dialog: Grad-CAM at the default layer, the predicted class,
        // opacity 0.5 and a folder beside the project proposed. Export writes them.
        QSignalSpy exported(&view, &EvaluateView::overlaysExported);
        auto exportWithDialog = [&](const QString& folder, bool saliency) {
            QVERIFY(!view.overlayExportDialog());
            QAction* action = exportAction();
            QVERIFY(action);
            action->trigger();
            static_cast<QMenu*>(action->parent())->close();
            QDialog* dialog = view.overlayExportDialog();
            QVERIFY(dialog);
            QTRY_VERIFY(dialog->isVisible());
            auto* method = dialog->findChild<QComboBox*>(QStringLiteral("exportMethod"));
            auto* layer = dialog->findChild<QComboBox*>(QStringLiteral("exportLayer"));
            auto* cls = dialog->findChild<QComboBox*>(QStringLiteral("exportClass"));
            auto* path = dialog->findChild<QLineEdit*>(QStringLiteral("exportFolder"));
            auto* start = dialog->findChild<QPushButton*>(QStringLiteral("exportStart"));
            QVERIFY(method && layer && cls && path && start);
            QCOMPARE(method->currentText(), QStringLiteral("Grad-CAM"));
            QCOMPARE(layer->count(), 1);  // the one node with a 4-D output
            QCOMPARE(layer->currentText(), QStringLiteral("conv"));
            QVERIFY(layer->isEnabled());
            QCOMPARE(cls->count(), 4);  // the predicted class, then the three classes
            QCOMPARE(cls->currentIndex(), 0);
            QVERIFY(path->text().endsWith(QStringLiteral("overlays")));
            if (saliency) {
                method->setFocus();
                QTest::keyClick(method, Qt::Key_Down);
                QCOMPARE(method->currentText(), QStringLiteral("Saliency (input gradient)"));
                QVERIFY(!layer->isEnabled());
            }
            path->selectAll();
            QTest::keyClick(path, Qt::Key_Delete);
            QVERIFY(!start->isEnabled());  // no folder, no export
            QTest::keyClicks(path, folder);
            QVERIFY(start->isEnabled());
            const int before = exported.count();
            QTest::mouseClick(start, Qt::LeftButton);
            QVERIFY(view.exportingOverlays());
            QVERIFY(view.overlayProgress() != nullptr);
            QTRY_COMPARE_WITH_TIMEOUT(exported.count(), before + 1, 120000);
            QVERIFY2(exported.last().at(0).toBool(), qPrintable(exported.last().at(3).toString()));
            QCOMPARE(exported.last().at(1).toInt(), 3);
            QVERIFY(!exported.last().at(2).toBool());
            QTRY_VERIFY(!view.overlayExportDialog());
        };
        const QString folder = m_dir.filePath(QStringLiteral("overlays"));
        const QString salient = m_dir.filePath(QStringLiteral("overlays-saliency"));
        exportWithDialog(folder, false);
        exportWithDialog(salient, true);

        // The pictures written are the overlays of the chosen method, as the engine computes them
        // for those samples: Grad-CAM in one folder, saliency in the other, and the two differ.
        engine::api::EvaluationOptions options;
        options.weights = m_folderRun.toStdString();
        engine::ThreadPool pool(1);
        auto explainer = engine::api::Explainer::create(m_folder, options.weights, pool);
        QVERIFY(explainer.ok());
        std::map<int64_t, std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> expected;  // Grad-CAM, saliency
        const auto status = engine::api::forEachSample(m_folder, m_folderPath.toStdString(), options,
                                                       [&](const engine::api::SampleInput& s) -> engine::Result<bool> {
                                                           if (samples.contains(s.index)) {
                                                               const auto picture = engine::api::pictureRgb(s.data.data(), 8, 8, 3);
                                                               KILN_ASSIGN(auto g, (*explainer)->explain(s.data.data(), engine::api::ExplainMethod::GradCam, "conv"));
                                                               KILN_ASSIGN(auto v, (*explainer)->explain(s.data.data(), engine::api::ExplainMethod::Saliency));
                                                               expected[s.index] = {engine::api::overlayRgb(picture, g, 0.5f), engine::api::overlayRgb(picture, v, 0.5f)};
                                                           }
                                                           return s.index < samples.last();
                                                       });
        QVERIFY2(status.ok(), status.ok() ? "" : status.error().toString().c_str());
        QCOMPARE(expected.size(), size_t(3));
        auto rgb = [](const QString& file) {
            QImage image = QImage(file).convertToFormat(QImage::Format_RGB888);
            std::vector<uint8_t> out;
            for (int y = 0; y < image.height(); ++y)
                out.insert(out.end(), image.constScanLine(y), image.constScanLine(y) + qsizetype{image.width()} * 3);
            return out;
        };
        int differing = 0;
        for (const QString& dir : {folder, salient}) {
            QFile csv(dir + QStringLiteral("/overlays.csv"));
            QVERIFY(csv.open(QIODevice::ReadOnly));
            const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
            QCOMPARE(lines.size(), 4);
            QCOMPARE(lines[0], QStringLiteral("index,source,true_class,predicted_class,explained_class,score,file"));
            for (int i = 0; i < 3; ++i) {
                const QStringList fields = lines[i + 1].split(QLatin1Char(','));
                QCOMPARE(fields[0].toLongLong(), samples[i]);
                QVERIFY(fields[1].contains(QStringLiteral("pics/test/")));
                QCOMPARE(fields[3], fields[4]);  // the predicted class is explained
                const QString file = dir + QLatin1Char('/') + fields[6];
                QCOMPARE(QImage(file).size(), QSize(8, 8));
                const auto& [gradCam, saliency] = expected[samples[i]];
                QVERIFY(rgb(file) == (dir == folder ? gradCam : saliency));
                if (dir == folder) differing += gradCam != saliency ? 1 : 0;
            }
        }
        QVERIFY(differing > 0);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("evalStatus"))->text().contains(QStringLiteral("3 overlay")));

        // A folder that cannot be made: the error names it.
        QFile blocker(m_dir.filePath(QStringLiteral("blocker")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        engine::api::OverlayExportOptions blocked;
        blocked.folder = m_dir.filePath(QStringLiteral("blocker/overlays")).toStdString();
        view.exportOverlays(samples, blocked);
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 3, 60000);
        QVERIFY(!exported.last().at(0).toBool());
        QVERIFY2(exported.last().at(3).toString().contains(QStringLiteral("blocker")), qPrintable(exported.last().at(3).toString()));
    }

    // Cancelling stops after the picture in progress; the index lists what was written.
    void exportCancels() {
        engine::api::EvaluationOptions options;
        options.weights = m_folderRun.toStdString();
        engine::api::OverlayExportOptions what;
        what.folder = m_dir.filePath(QStringLiteral("cancelled")).toStdString();
        auto r = engine::api::exportOverlays(m_folder, m_folderPath.toStdString(), options, what,
                                             [](int64_t done, int64_t total) {
                                                 return total == -1 && done < 2;
                                             });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY(r->cancelled);
        QCOMPARE(r->written, int64_t(2));
        QFile csv(QString::fromStdString(r->indexFile));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n')).size(), 3);
        QCOMPARE(QDir(QString::fromStdString(what.folder)).entryList({QStringLiteral("*.png")}).size(), 2);
    }

    // The dataset browser's "Explain with run…" names the picture; the explanation of that one
    // picture reads the class names with it.
    void explainFromDatasetBrowser() {
        ui::DatasetBrowserWidget browser;
        browser.resize(1000, 700);
        browser.show();
        QVERIFY(QTest::qWaitForWindowExposed(&browser));
        QSignalSpy scanned(&browser, &ui::DatasetBrowserWidget::scanFinished);
        QVERIFY(browser.openImageFolder(m_dir.filePath(QStringLiteral("pics")), m_dir.filePath(QStringLiteral("pics.kindex"))));
        QTRY_VERIFY_WITH_TIMEOUT(scanned.count() >= 1, 60000);
        QListView* grid = browser.view();
        QTRY_VERIFY(grid->model()->rowCount() > 0);
        const QModelIndex first = grid->model()->index(0, 0);
        const QString file = first.data(ui::SampleListModel::PathRole).toString();
        QVERIFY(QFileInfo(file).isFile());
        QSignalSpy asked(&browser, &ui::DatasetBrowserWidget::explainRequested);
        const QPoint at = grid->visualRect(first).center();
        QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, at, grid->viewport()->mapToGlobal(at));
        QApplication::sendEvent(grid->viewport(), &menuEvent);
        auto* menu = grid->findChild<QMenu*>(QStringLiteral("sampleContextMenu"));
        QVERIFY(menu);
        auto* explain = menu->findChild<QAction*>(QStringLiteral("explainWithRun"));
        QVERIFY(explain);
        QCOMPARE(explain->text(), QStringLiteral("Explain with run…"));
        explain->trigger();
        QCOMPARE(asked.count(), 1);
        QCOMPARE(asked.first().at(0).toString(), file);
        menu->close();

        // What the studio opens for it: the picture with the run's weights, class names read.
        engine::api::EvaluationOptions options;
        options.weights = m_folderRun.toStdString();
        options.imageFiles = {file.toStdString()};
        ExplanationDialog dialog(m_folder, m_folderPath, options, 0, file, {});
        QSignalSpy explained(&dialog, &ExplanationDialog::explained);
        dialog.show();
        QTRY_VERIFY_WITH_TIMEOUT(explained.count() >= 1, 60000);
        QVERIFY2(explained.first().at(0).toBool(), qPrintable(dialog.errorText()));
        QCOMPARE(dialog.heatmap().height, int64_t(8));
        auto* classes = dialog.findChild<QComboBox*>(QStringLiteral("explainClass"));
        QCOMPARE(classes->count(), 4);  // the predicted class, then the three classes by name
        QVERIFY(classes->itemText(1).startsWith(QStringLiteral("dark")));
        QVERIFY(!dialog.overlay().isNull());
    }
};

QTEST_MAIN(TestEvaluatePictures)
#include "tst_evaluate_pictures.moc"
