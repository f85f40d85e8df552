// SPDX-License-Identifier: Apache-2.0
// The Evaluate view's misclassified gallery, driven with real clicks: a linear classifier of
// Fashion-MNIST is trained in process for one epoch and evaluated on the test split. Checks that
// the gallery holds exactly the wrong samples, most confidently wrong first, that its thumbnails
// are the test pictures themselves, that a click on a confusion matrix cell limits the gallery and
// the samples table to that cell, that the table as shown exports to CSV (and a bad path is
// named), that a double click opens the explanation dialog, and that a
// table of numbers (iris) gets no gallery but the same cell filter in the samples table.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_training
// kiln-test-timeout: 600
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QListView>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "engine/api/training_job.h"
#include "engine/data/idx_reader.h"
#include "engine/io/project.h"
#include "tests/test_data.h"
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
using kiln::test::dataDir;
using nlohmann::json;

namespace {

QString fashion(const char* file) { return dataDir() + QStringLiteral("/fashion-mnist/") + QLatin1String(file); }

// Fashion-MNIST through one Dense layer: about 80 % right after an epoch, so some 2,000 of the
// 10,000 test pictures are wrong.
engine::io::Project fashionLinear() {
    const json j = {
        {"format", "kiln-project"},
        {"version", 2},
        {"name", "fashion_linear"},
        {"graph",
         {{"nodes", json::array({{{"name", "image"}, {"op", "Input"}, {"attrs", {{"shape", {28, 28, 1}}}}},
                                 {{"name", "flat"}, {"op", "Flatten"}, {"inputs", {"image"}}},
                                 {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"flat"}}, {"attrs", {{"units", 10}}}}})}}},
        {"data",
         {{"format", "idx"},
          {"train", {{"images", fashion("train-images-idx3-ubyte.gz").toStdString()}, {"labels", fashion("train-labels-idx1-ubyte.gz").toStdString()}}},
          {"test", {{"images", fashion("t10k-images-idx3-ubyte.gz").toStdString()}, {"labels", fashion("t10k-labels-idx1-ubyte.gz").toStdString()}}},
          {"inputs", {{"image", "image"}}},
          {"class_names", {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}}}},
        {"training",
         {{"epochs", 1},
          {"batch_size", 256},
          {"seed", 5},
          {"optimizer", {{"type", "adam"}, {"learning_rate", 0.003}}},
          {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
          {"metrics", {"accuracy"}}}}};
    auto p = engine::io::parseProject(j.dump(), "fashion_linear.kiln");
    return p.ok() ? p.value() : engine::io::Project{};
}

}  // namespace

class TestMisclassifiedGallery : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void galleryOfFashionMnist() {
        if (!QFile::exists(fashion("train-images-idx3-ubyte.gz")))
            QSKIP("Fashion-MNIST is not in the data cache (tools/fetch_data.sh)");
        const engine::io::Project project = fashionLinear();
        QVERIFY(!project.graph.nodes.empty());
        const QString projectPath = m_dir.filePath(QStringLiteral("fashion_linear.kiln"));
        QVERIFY(engine::io::saveProject(project, projectPath.toStdString()).ok());
        const QString runDir = kiln::test::trainRun(project, projectPath, m_dir.filePath(QStringLiteral("runs/fashion")), "first");
        QVERIFY(!runDir.isEmpty());

        EvaluateView view;
        view.resize(1300, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        MisclassifiedGallery* gallery = view.gallery();
        GalleryModel* model = gallery->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(view.sampleProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setProject(project, projectPath);
        view.setWeights(runDir);
        QVERIFY(evaluateWithClick(view));
        QVERIFY(gallery->isVisible());

        // Exactly the wrong samples: as the per-sample records and the confusion matrix count them.
        SampleTableModel* samples = view.sampleModel();
        QCOMPARE(samples->rowCount(), 10000);
        int wrong = 0;
        for (int r = 0; r < samples->rowCount(); ++r) wrong += samples->record(r).correct() ? 0 : 1;
        ConfusionMatrixModel* confusion = view.confusionModel();
        qlonglong offDiagonal = 0;
        int worstT = -1, worstP = -1;
        qlonglong worst = 0;
        for (int t = 0; t < 10; ++t)
            for (int p = 0; p < 10; ++p) {
                const qlonglong n = confusion->data(confusion->index(t, p)).toLongLong();
                if (t == p) continue;
                offDiagonal += n;
                if (n > worst) worst = n, worstT = t, worstP = p;
            }
        QVERIFY2(wrong > 500 && wrong < 5000, qPrintable(QString::number(wrong)));
        QCOMPARE(model->rowCount(), wrong);
        QCOMPARE(qlonglong(model->rowCount()), offDiagonal);
        QCOMPARE(model->wrongCount(), wrong);
        QVERIFY(gallery->findChild<QLabel*>(QStringLiteral("galleryCount"))->text().contains(QString::number(wrong)));

        // Most confidently wrong first.
        for (int r = 0; r < model->rowCount(); ++r) {
            QVERIFY(!model->record(r).correct());
            if (r > 0) QVERIFY(model->record(r - 1).confidence >= model->record(r).confidence);
        }
        QVERIFY(model->record(0).confidence > 0.9);

        // The first thumbnail is drawn off the GUI thread and decoded by the thumbnail cache: the
        // test picture itself (IDX, read into memory: drawn from the model's input, scaled by
        // its own range), enlarged three times.
        const qint64 first = model->record(0).index;
        QTRY_VERIFY_WITH_TIMEOUT(gallery->thumbnails()->contains(first), 120000);
        const QPixmap thumb = model->data(model->index(0), Qt::DecorationRole).value<QPixmap>();
        QCOMPARE(thumb.size(), QSize(84, 84));
        const QImage drawn(model->picturePath(first));
        QCOMPARE(drawn.size(), QSize(28, 28));
        auto images = engine::data::readIdxArray(fashion("t10k-images-idx3-ubyte.gz").toStdString());
        QVERIFY(images.ok());
        const float* raw = images->values.data() + first * 28 * 28;
        const auto [lo, hi] = std::minmax_element(raw, raw + 28 * 28);
        for (int y = 0; y < 28; ++y)
            for (int x = 0; x < 28; ++x) {
                const double expected = (raw[y * 28 + x] - *lo) / (*hi - *lo) * 255.0;
                QVERIFY2(std::abs(qGray(drawn.pixel(x, y)) - expected) <= 1.0,
                         qPrintable(QStringLiteral("sample %1 pixel %2,%3").arg(first).arg(x).arg(y)));
            }
        QVERIFY2(gallery->drawError().isEmpty(), qPrintable(gallery->drawError()));

        // A click on the most frequent mistake's cell: that cell's samples only, in the gallery
        // and in the samples table; the filter boxes show it.
        QTabWidget* tabs = view.findChild<QTabWidget*>();
        tabs->setCurrentWidget(view.confusionView());
        clickCell(view.confusionView(), worstT, worstP);
        QCOMPARE(qlonglong(model->rowCount()), worst);
        QCOMPARE(qlonglong(view.sampleProxy()->rowCount()), worst);
        for (int r = 0; r < model->rowCount(); ++r) {
            QCOMPARE(model->record(r).trueClass, worstT);
            QCOMPARE(model->record(r).predicted, worstP);
            if (r > 0) QVERIFY(model->record(r - 1).confidence >= model->record(r).confidence);
        }
        auto* trueBox = view.findChild<QComboBox*>(QStringLiteral("trueClassFilter"));
        auto* predictedBox = view.findChild<QComboBox*>(QStringLiteral("predictedClassFilter"));
        QCOMPARE(trueBox->currentData().toLongLong(), qlonglong(worstT));
        QCOMPARE(predictedBox->currentData().toLongLong(), qlonglong(worstP));

        // The table as shown goes to CSV in kiln-eval's columns: that cell's samples, in the
        // table's order. A folder that does not exist is named in the error.
        const QString csvPath = m_dir.filePath(QStringLiteral("cell.csv"));
        QString error;
        QVERIFY2(view.exportSamples(csvPath, &error), qPrintable(error));
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), int(worst) + 1);
        QCOMPARE(lines.first(), QStringLiteral("index,source,true,predicted,confidence,loss,correct"));
        for (int r = 0; r < view.sampleProxy()->rowCount(); ++r) {
            const QString index = view.sampleProxy()->index(r, SampleTableModel::Index).data().toString();
            QVERIFY2(lines[r + 1].startsWith(index + QLatin1Char(',')), qPrintable(lines[r + 1]));
            QVERIFY(lines[r + 1].endsWith(QStringLiteral(",0")));
        }
        const QString badPath = m_dir.filePath(QStringLiteral("no/such/folder/cell.csv"));
        QVERIFY(!view.exportSamples(badPath, &error));
        QVERIFY2(error.contains(QStringLiteral("no/such/folder")), qPrintable(error));

        // A diagonal cell: that class's right answers, least confident first.
        clickCell(view.confusionView(), worstT, worstT);
        const qlonglong right = confusion->data(confusion->index(worstT, worstT)).toLongLong();
        QCOMPARE(qlonglong(model->rowCount()), right);
        QCOMPARE(qlonglong(view.sampleProxy()->rowCount()), right);
        for (int r = 0; r < model->rowCount(); ++r) {
            QVERIFY(model->record(r).correct());
            if (r > 0) QVERIFY(model->record(r - 1).confidence <= model->record(r).confidence);
        }

        // Only the predicted class, chosen with the keyboard in its box: every wrong answer
        // predicted as that class.
        QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("showAllSamples")), Qt::LeftButton);
        QCOMPARE(model->rowCount(), wrong);
        QCOMPARE(view.sampleProxy()->rowCount(), 10000);
        predictedBox->setFocus();
        for (int k = 0; k <= worstP; ++k) QTest::keyClick(predictedBox, Qt::Key_Down);
        QCOMPARE(predictedBox->currentData().toLongLong(), qlonglong(worstP));
        qlonglong predictedWrong = 0;
        for (int t = 0; t < 10; ++t)
            if (t != worstP) predictedWrong += confusion->data(confusion->index(t, worstP)).toLongLong();
        QCOMPARE(qlonglong(model->rowCount()), predictedWrong);
        QCOMPARE(qlonglong(view.sampleProxy()->rowCount()), confusion->data(confusion->index(worstP, worstP)).toLongLong() + predictedWrong);

        // A double click on a picture opens it in the explanation dialog.
        QListView* list = gallery->view();
        const QModelIndex second = model->index(1);
        list->scrollTo(second);
        const QString source = QString::fromStdString(model->record(1).source);
        // A click selects the picture (the view remembers the pressed item), the double click opens it.
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(second).center());
        QTest::mouseDClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(second).center());
        QTRY_VERIFY(view.explanationDialog() != nullptr);
        QVERIFY2(view.explanationDialog()->windowTitle().endsWith(source), qPrintable(view.explanationDialog()->windowTitle()));
        view.explanationDialog()->close();
    }

    void tableOfNumbersHasNoGallery() {
        if (!QFile::exists(dataDir() + QStringLiteral("/sklearn/iris.csv"))) QSKIP("iris is not in the data cache (tools/fetch_data.sh)");
        const engine::io::Project project = kiln::test::irisProject("iris_gallery", 20, 8, 0.05);
        QVERIFY(!project.graph.nodes.empty());
        const QString projectPath = m_dir.filePath(QStringLiteral("iris_gallery.kiln"));
        QVERIFY(engine::io::saveProject(project, projectPath.toStdString()).ok());
        const QString runDir = kiln::test::trainRun(project, projectPath, m_dir.filePath(QStringLiteral("runs/iris")), "first");
        QVERIFY(!runDir.isEmpty());

        EvaluateView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setProject(project, projectPath);
        view.setWeights(runDir);
        view.findChild<QComboBox*>(QStringLiteral("evalSplit"))->setCurrentIndex(1);  // validation
        QVERIFY(evaluateWithClick(view));
        QVERIFY(!view.gallery()->isVisible());
        QCOMPARE(view.gallery()->model()->rowCount(), 0);

        // The cell click limits the samples table and shows it.
        ConfusionMatrixModel* confusion = view.confusionModel();
        const qlonglong cell = confusion->data(confusion->index(1, 1)).toLongLong();
        QVERIFY(cell > 0);
        clickCell(view.confusionView(), 1, 1);
        QTabWidget* tabs = view.findChild<QTabWidget*>();
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(view.sampleView()));
        QCOMPARE(qlonglong(view.sampleProxy()->rowCount()), cell);
        for (int r = 0; r < view.sampleProxy()->rowCount(); ++r) {
            const QModelIndex at = view.sampleProxy()->index(r, SampleTableModel::True);
            QCOMPARE(at.data().toString(), confusion->headerData(1, Qt::Vertical).toString());
        }
    }
};

QTEST_MAIN(TestMisclassifiedGallery)
#include "tst_misclassified_gallery.moc"
