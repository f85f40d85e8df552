// kiln-test-labels: ui slow
// kiln-test-libs: kiln_ui_dataset_browser
// SPDX-License-Identifier: Apache-2.0
// The dataset browser end to end on real data: 2,000 Fashion-MNIST pictures written as PNGs into
// a class folder tree, scanned, split, shown and augmented. With KILN_SCREENSHOT=<file.png> set
// (under an X server) it also grabs the whole screen with ImageMagick's `import`.
#include <QtTest>

#include <QImage>
#include <QListView>
#include <QListWidget>
#include <QProcess>
#include <QStandardPaths>
#include <QTabWidget>

#include <nlohmann/json.hpp>

#include "engine/data/idx_reader.h"
#include "ui/dataset_browser/augmentation_preview.h"
#include "ui/dataset_browser/class_distribution_chart.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/dataset_browser/pipeline_panel.h"
#include "ui/dataset_browser/sample_list_model.h"
#include "ui/dataset_browser/thumbnail_cache.h"
#include "ui/dataset_browser/transform_list_editor.h"

using namespace kiln;
using namespace kiln::ui;
using engine::api::SampleSplit;

namespace {

const char* const kClassNames[10] = {"t-shirt_top", "trouser", "pullover", "dress", "coat",
                                     "sandal",      "shirt",   "sneaker",  "bag",   "ankle_boot"};
constexpr int kPictures = 2000;

QString fashionFile(const QString& name) {
    QStringList dirs;
    const QString data = qEnvironmentVariable("KILN_DATA");
    if (!data.isEmpty()) dirs << data + QStringLiteral("/fashion-mnist");
    dirs << QDir::homePath() + QStringLiteral("/.cache/kiln/data/fashion-mnist")
         << QStringLiteral("/usr/share/datasets/fashion-mnist");
    for (const QString& d : dirs)
        if (QFile::exists(d + QLatin1Char('/') + name)) return d + QLatin1Char('/') + name;
    return {};
}

}  // namespace

class TestDatasetBrowserFashion : public QObject {
    Q_OBJECT

private slots:
    void browseFashionMnist() {
        const QString images = fashionFile(QStringLiteral("train-images-idx3-ubyte.gz"));
        const QString labels = fashionFile(QStringLiteral("train-labels-idx1-ubyte.gz"));
        if (images.isEmpty() || labels.isEmpty())
            QSKIP(
                "Fashion-MNIST is not installed (tools/fetch_data.sh or the dataset-fashion-mnist package)");

        // The folder tree lives in the cache and is written once.
        const QString cache = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) +
                              QStringLiteral("/kiln/fashion-mnist-folder");
        const QString marker = cache + QStringLiteral("/.complete");
        if (!QFile::exists(marker)) {
            auto data = engine::data::readIdx(images.toStdString(), labels.toStdString(), {false, kPictures});
            QVERIFY2(data.ok(), data.ok() ? "" : data.error().toString().c_str());
            const auto* pixels = data->column("image");
            const auto* label = data->column("label");
            for (int i = 0; i < kPictures; ++i) {
                QImage img(28, 28, QImage::Format_Grayscale8);
                const auto px = pixels->sample(i);
                for (int y = 0; y < 28; ++y)
                    for (int x = 0; x < 28; ++x)
                        img.scanLine(y)[x] = static_cast<uchar>(px[static_cast<size_t>(y) * 28 + static_cast<size_t>(x)]);
                const QString dir =
                    cache + QLatin1Char('/') + QLatin1String(kClassNames[int(label->sample(i)[0])]);
                QDir().mkpath(dir);
                QVERIFY(img.save(QStringLiteral("%1/%2.png").arg(dir).arg(i, 5, 10, QLatin1Char('0'))));
            }
            QFile done(marker);
            QVERIFY(done.open(QIODevice::WriteOnly));
        }

        QTemporaryDir tmp;
        DatasetBrowserWidget w;
        w.setWindowTitle(QStringLiteral("Kiln — Dataset Browser"));
        w.resize(1400, 900);
        w.move(0, 0);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy done(&w, &DatasetBrowserWidget::scanFinished);
        QVERIFY(w.openImageFolder(cache, tmp.filePath(QStringLiteral("fashion.kindex"))));
        QVERIFY(done.wait(120000));
        QVERIFY2(done.first().at(0).toBool(), qPrintable(done.first().at(1).toString()));

        auto counts = w.model()->datasetIndex()->counts();
        QVERIFY(counts.ok());
        QCOMPARE(counts->total(), int64_t{kPictures});
        QCOMPARE(counts->classNames.size(), size_t{10});
        QCOMPARE(counts->classNames.front(), std::string("ankle_boot"));  // sorted by name
        int64_t sum = 0;
        for (int k = 0; k < 10; ++k) {
            double bars = 0;
            for (SampleSplit s :
                 {SampleSplit::Train, SampleSplit::Validation, SampleSplit::Test, SampleSplit::Unassigned})
                bars += w.chart()->barValues(s)[k];
            QCOMPARE(bars, double(counts->classTotal(k)));
            QVERIFY(counts->classTotal(k) > 150);  // about 200 of each class in the first 2,000
            sum += counts->classTotal(k);
        }
        QCOMPARE(sum, int64_t{kPictures});
        QCOMPARE(counts->total(SampleSplit::Train), int64_t{1600});
        QCOMPARE(w.model()->data(w.model()->index(0), SampleListModel::WidthRole).toInt(), 28);

        // Select a picture; its augmentations and details appear.
        QTabWidget* tabs = w.findChild<QTabWidget*>();
        QVERIFY(tabs != nullptr);
        tabs->setCurrentIndex(2);
        QSignalSpy augmented(w.augmentationPreview(), &AugmentationPreview::previewUpdated);
        w.view()->setCurrentIndex(w.model()->index(13));
        QVERIFY(augmented.wait(20000));
        QCOMPARE(w.augmentationPreview()->images().size(), AugmentationPreview::kVariants);
        QCOMPARE(w.augmentationPreview()->images().first().size(), QSize(28, 28));

        // Every visible thumbnail arrives.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.thumbnails()->queued() == 0 &&
                w.thumbnails()->contains(
                    w.model()->data(w.model()->index(30), SampleListModel::IdRole).toLongLong()),
            20000);

        // The input pipeline's rate on this folder with the default transforms.
        QSignalSpy measured(w.pipelinePanel(), &PipelinePanel::measured);
        w.pipelinePanel()->measure(1.0);
        QVERIFY(measured.wait(60000));
        const PipelineMeasurement& m = w.pipelinePanel()->lastMeasurement();
        QVERIFY2(m.ok, qPrintable(m.error));
        QCOMPARE(m.outputShape, QStringLiteral("28×28×1"));
        QVERIFY(m.samples >= 32);
        qInfo("pipeline on 28x28 PNGs (decode, flip, rotate, brightness/contrast): %.0f samples/s",
              m.samplesPerSecond);

        const QString shot = qEnvironmentVariable("KILN_SCREENSHOT");
        if (!shot.isEmpty()) {
            QTest::qWait(1500);
            QProcess import;
            import.start(QStringLiteral("import"), {QStringLiteral("-window"), QStringLiteral("root"), shot});
            QVERIFY(import.waitForFinished(60000));
            QCOMPARE(import.exitCode(), 0);
            QVERIFY(QImage(shot).width() >= 1400);
        }
        // KILN_SCREENSHOT_AUGMENTATION=<file.png>: the Augmentation tab with the transforms form.
        const QString augmentShot = qEnvironmentVariable("KILN_SCREENSHOT_AUGMENTATION");
        if (!augmentShot.isEmpty()) {
            tabs->setCurrentIndex(2);
            auto* list = w.augmentationPreview()->form()->list();
            QVERIFY(list->count() > 0);
            list->setCurrentRow(0);
            QTest::qWait(1500);
            QProcess import;
            import.start(QStringLiteral("import"), {QStringLiteral("-window"), QStringLiteral("root"), augmentShot});
            QVERIFY(import.waitForFinished(60000));
            QCOMPARE(import.exitCode(), 0);
        }
    }

    // A project that reads IDX files (the Fashion-MNIST examples) gets an overview instead of the
    // folder grid: counts, classes, pictures; a picture goes to the Augmentation tab; transforms
    // edited in the form are kept in the IDX data section.
    void idxProjectShowsAnOverview() {
        if (fashionFile(QStringLiteral("train-images-idx3-ubyte.gz")).isEmpty())
            QSKIP("Fashion-MNIST is not installed (tools/fetch_data.sh or the dataset-fashion-mnist package)");
        QFile file(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_mlp.kiln"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json project = nlohmann::json::parse(file.readAll().toStdString());
        const nlohmann::json& data = project["data"];
        DatasetBrowserWidget w;
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.setProjectPath(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_mlp.kiln"));
        QSignalSpy ready(&w, &DatasetBrowserWidget::sourceOverviewReady);
        QSignalSpy augmented(w.augmentationPreview(), &AugmentationPreview::previewUpdated);
        w.setDataSection(data);
        QVERIFY(w.overviewShown());
        QVERIFY(ready.wait(60000));
        const ImportPreview* overview = w.sourceOverview();
        QVERIFY(overview);
        QVERIFY2(overview->error.isEmpty(), qPrintable(overview->error));
        QCOMPARE(overview->classCounts.size(), 10);
        qint64 total = 0;
        for (qint64 c : overview->classCounts) {
            QCOMPARE(c, qint64(6000));  // Fashion-MNIST's training part is balanced
            total += c;
        }
        QCOMPARE(total, qint64(60000));
        QVERIFY(w.overviewPictures()->count() > 0);
        QCOMPARE(overview->originals.front().size(), QSize(28, 28));
        // The first picture went to the Augmentation tab and came back augmented.
        QTRY_VERIFY_WITH_TIMEOUT(!w.augmentationPreview()->images().isEmpty(), 20000);
        QCOMPARE(w.augmentationPreview()->images().size(), AugmentationPreview::kVariants);

        // Edit the transforms in the form: the IDX section keeps its files and gets the transforms.
        QCOMPARE(w.dataSection(), data);  // nothing edited yet: the project's own section
        QSignalSpy changed(&w, &DatasetBrowserWidget::dataSectionChanged);
        w.augmentationPreview()->form()->addTransform(QStringLiteral("random_crop"));
        QCOMPARE(changed.count(), 1);
        const nlohmann::json edited = w.dataSection();
        QCOMPARE(edited["format"], "idx");
        QCOMPARE(edited["train"], data["train"]);
        QVERIFY(edited["transforms"].is_array());
        QCOMPARE(edited["transforms"].back()["type"], "random_crop");
    }
};

QTEST_MAIN(TestDatasetBrowserFashion)
#include "tst_dataset_browser_fashion.moc"
