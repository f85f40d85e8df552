// SPDX-License-Identifier: Apache-2.0
// File > New from Pretrained in the studio, driven like a user: the welcome page's button and the
// File menu open the catalogue; a backbone missing from the data folder shows the fetch command and
// cannot be used, a template asks for a model file; with the backbone cached (a small stand-in
// network written as its cache), picking it, typing the classes and pressing Create Project makes
// the project and opens it: the new head, the frozen backbone, the two stages, the backbone's
// preprocessing, and the training view set to start from the backbone's weights by name. Changing
// the data normalisation afterwards raises a notice naming the backbone's. A template's model file
// is read by a kiln-import child process: a .keras file written by tf_keras becomes a project; the
// damaged .h5 files of tests/app/data/damaged_hdf5 (one crashes the HDF5 library, one never
// finishes) end in an error naming the file, within the time limit; Cancel ends the child.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <algorithm>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QHeaderView>
#include <QPixmap>
#include <QProgressDialog>
#include <QPushButton>
#include <QScrollBar>
#include <QScreen>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "app/kiln/main_window.h"
#include "app/kiln/welcome_page.h"
#include "engine/api/pretrained.h"
#include "engine/io/model_zoo.h"
#include "engine/io/project.h"
#include "engine/io/safetensors.h"
#include "engine/ops/model.h"
#include "ui/common/language.h"
#include "ui/common/notice_area.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/import/pretrained_dialog.h"
#include "ui/training/training_panel.h"
#include "tests/app/app_test_util.h"
#include "tests/engine/io/backbone_fixture.h"
#include "tests/engine/io/keras_fixtures.h"

using kiln::app::MainWindow;
using namespace kiln::ui;
using namespace kiln::engine;

namespace {

int rowOf(QTableWidget* table, const QString& id) {
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->item(r, 0)->data(Qt::UserRole).toString() == id) return r;
    return -1;
}

void clickRow(QTableWidget* table, int row) {
    const QRect rect = table->visualItemRect(table->item(row, 0));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
}

// Every header label and cell text of the table that its section or cell does not show whole, as
// "row 1, column Licence: <text>": a text must fit its cell's width and height as the item delegate
// lays it out (word-wrapped, inside the delegate's margins).
QStringList cutOff(QTableWidget* table) {
    QStringList problems;
    auto* header = table->horizontalHeader();
    const QFontMetrics fm(table->font());
    const int margin = table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1;
    for (int c = 0; c < table->columnCount(); ++c) {
        const QString column = table->horizontalHeaderItem(c)->text();
        if (header->sectionSizeHint(c) > header->sectionSize(c))
            problems << QStringLiteral("header of column %1: %2 < %3 px").arg(column).arg(header->sectionSize(c)).arg(header->sectionSizeHint(c));
        for (int r = 0; r < table->rowCount(); ++r) {
            const QString text = table->item(r, c)->text();
            const QRect cell = table->visualRect(table->model()->index(r, c)).adjusted(margin, 0, -margin, 0);
            const QRect need = fm.boundingRect(QRect(0, 0, cell.width(), 1 << 20), Qt::TextWordWrap, text);
            if (need.width() > cell.width() || need.height() > cell.height())
                problems << QStringLiteral("row %1, column %2: %3x%4 px in %5x%6: %7")
                                .arg(r)
                                .arg(column)
                                .arg(need.width())
                                .arg(need.height())
                                .arg(cell.width())
                                .arg(cell.height())
                                .arg(text);
            if (table->item(r, c)->toolTip() != text) problems << QStringLiteral("row %1, column %2: no tooltip").arg(r).arg(column);
        }
    }
    return problems;
}

}  // namespace

class TestNewFromPretrained : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_new_from_pretrained"));
        QVERIFY(m_dir.isValid());
        QSettings().clear();
    }

    void missingBackboneShowsHowToGetIt() {
        qputenv("KILN_DATA", m_dir.filePath("empty-data").toUtf8());
        MainWindow w(m_dir.filePath("recovery1"));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // The welcome page's button opens the dialog.
        auto* button = w.welcomePage()->findChild<QPushButton*>(QStringLiteral("welcomePretrained"));
        QVERIFY(button && !button->text().isEmpty());
        QTest::mouseClick(button, Qt::LeftButton);
        auto* dialog = w.findChild<PretrainedDialog*>(QStringLiteral("pretrainedDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        auto* table = dialog->table();
        QAbstractItemModelTester tester(table->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(table->rowCount(), int(api::backboneCatalogue().size()));

        const int eff = rowOf(table, QStringLiteral("efficientnet-lite0"));
        clickRow(table, eff);
        QCOMPARE(dialog->selectedBackbone(), QStringLiteral("efficientnet-lite0"));
        auto* missing = dialog->findChild<QLabel*>(QStringLiteral("backboneMissing"));
        QVERIFY(missing->isVisible());
        QVERIFY2(missing->text().contains(QStringLiteral("tools/fetch_pretrained.sh")), qPrintable(missing->text()));
        QVERIFY(!dialog->createButton()->isEnabled());

        // A template: usable once a model file is named.
        clickRow(table, rowOf(table, QStringLiteral("mobilenet-v2")));
        QVERIFY(!missing->isVisible());
        QVERIFY(!dialog->createButton()->isEnabled());
        auto* model = dialog->findChild<QLineEdit*>(QStringLiteral("backboneModelFile"));
        QVERIFY(model->isEnabled());
        QTest::keyClicks(model, QStringLiteral("/nowhere/mobilenet_v2.keras"));
        QVERIFY(dialog->createButton()->isEnabled());
        // A file that is not there: the error (from the child that reads it) names it and nothing opens.
        auto* project = dialog->findChild<QLineEdit*>(QStringLiteral("pretrainedProject"));
        project->setText(m_dir.filePath("t.kiln"));
        QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isCreating(), 60000);
        QTRY_VERIFY(dialog->statusText().contains(QStringLiteral("mobilenet_v2.keras")));
        QVERIFY(dialog->isVisible());
        QVERIFY(!QFile::exists(m_dir.filePath("t.kiln")));
        dialog->reject();
    }

    // In a 1600x1000 window the dialog opens wide enough for every column, in English and in
    // Chinese: no header or cell is cut off and nothing needs scrolling. Made narrower, the table
    // scrolls sideways to its last column and still cuts nothing off.
    void columnsFitAtANormalWindow_data() {
        QTest::addColumn<QString>("language");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }

    void columnsFitAtANormalWindow() {
        QFETCH(QString, language);
        QVERIFY(Language::apply(language));
        qputenv("KILN_DATA", m_dir.filePath("empty-data").toUtf8());
        MainWindow w(m_dir.filePath("recovery-columns-" + language));
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.findChild<QAction*>(QStringLiteral("actionNewFromPretrained"))->trigger();
        auto* dialog = w.findChild<PretrainedDialog*>(QStringLiteral("pretrainedDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        auto* table = dialog->table();
        QVERIFY(table->rowCount() >= 3);
        auto* header = table->horizontalHeader();
        QVERIFY2(header->length() <= table->viewport()->width(),
                 qPrintable(QStringLiteral("columns %1 px in a %2 px table of a %3 px dialog")
                                .arg(header->length())
                                .arg(table->viewport()->width())
                                .arg(dialog->width())));
        QVERIFY(!table->horizontalScrollBar()->isVisible());
        const QStringList wide = cutOff(table);
        QVERIFY2(wide.isEmpty(), qPrintable(wide.join(QLatin1Char('\n'))));
        // Long texts wrap rather than make the licence column as wide as its longest text.
        int tallest = 0;
        for (int r = 0; r < table->rowCount(); ++r) tallest = std::max(tallest, table->rowHeight(r));
        QVERIFY(tallest > table->fontMetrics().height() * 2);

        dialog->resize(520, dialog->height());
        QTRY_VERIFY(table->horizontalScrollBar()->isVisible());
        QTRY_COMPARE(table->horizontalScrollBar()->maximum(), header->length() - table->viewport()->width());
        const QStringList narrow = cutOff(table);
        QVERIFY2(narrow.isEmpty(), qPrintable(narrow.join(QLatin1Char('\n'))));
        dialog->reject();
        QVERIFY(Language::apply(QStringLiteral("en")));
    }

    void createFromTheFileMenu() {
        const QString dataDir = m_dir.filePath("data");
        const auto& backbone = *io::findBackbone("efficientnet-lite0");
        kiln::test::writeBackboneCache(backbone, dataDir.toStdString());
        qputenv("KILN_DATA", dataDir.toUtf8());

        MainWindow w(m_dir.filePath("recovery2"));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* action = w.findChild<QAction*>(QStringLiteral("actionNewFromPretrained"));
        QVERIFY(action && !action->text().isEmpty());
        QVERIFY(w.fileMenu()->actions().contains(action));
        action->trigger();
        auto* dialog = w.findChild<PretrainedDialog*>(QStringLiteral("pretrainedDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        auto* table = dialog->table();
        const int eff = rowOf(table, QStringLiteral("efficientnet-lite0"));
        // The stand-in's parameters, counted from its graph: 3·3·3·8 + 8 + 8·16 + 16 + 16·1000 + 1000.
        QCOMPARE(table->item(eff, 3)->text(), QStringLiteral("%1 M").arg(QLocale().toString(17360 / 1e6, 'f', 2)));
        QVERIFY(table->item(eff, 2)->text().contains(QStringLiteral("127")));
        clickRow(table, eff);
        QVERIFY(!dialog->findChild<QLabel*>(QStringLiteral("backboneMissing"))->isVisible());

        auto* classes = dialog->findChild<QSpinBox*>(QStringLiteral("pretrainedClasses"));
        classes->findChild<QLineEdit*>()->selectAll();
        QTest::keyClicks(classes->findChild<QLineEdit*>(), QStringLiteral("5"));
        auto* data = dialog->findChild<QLineEdit*>(QStringLiteral("pretrainedData"));
        QTest::keyClicks(data, m_dir.filePath("flowers"));
        auto* project = dialog->findChild<QLineEdit*>(QStringLiteral("pretrainedProject"));
        project->selectAll();
        QTest::keyClicks(project, m_dir.filePath("flowers.kiln"));
        QVERIFY(dialog->createButton()->isEnabled());
        QTest::mouseClick(dialog->createButton(), Qt::LeftButton);

        // The project opens in the editor.
        QTRY_COMPARE_WITH_TIMEOUT(w.document()->filePath(), m_dir.filePath("flowers.kiln"), 20000);
        auto* doc = w.document();
        QCOMPARE(doc->project().graph.outputs, std::vector<std::string>{"head_predictions"});
        for (const char* frozen : {"image", "stem", "conv2d_32"}) QVERIFY2(!doc->nodeByName(frozen)->node.trainable, frozen);
        for (const char* head : {"head_pooling", "head_dropout", "head_predictions"}) QVERIFY2(doc->nodeByName(head)->node.trainable, head);
        QVERIFY(!doc->nodeByName("dense"));
        QCOMPARE(doc->nodeByName("head_predictions")->node.attrs.getInt("units"), int64_t{5});
        const auto p = doc->project();
        const auto& stages = p.training.at("stages");
        QCOMPARE(stages.size(), size_t{2});
        QCOMPARE(stages[0].at("name").get<std::string>(), std::string("head only"));
        QCOMPARE(stages[1].at("name").get<std::string>(), std::string("all"));
        QCOMPARE(p.data.at("path").get<std::string>(), m_dir.filePath("flowers").toStdString());
        QCOMPARE(p.data.at("transforms").back().at("preset").get<std::string>(), std::string("centered"));

        // Training starts from the backbone's weights, loaded by name.
        auto* weights = w.trainingPanel()->findChild<QLineEdit*>(QStringLiteral("startWeights"));
        QCOMPARE(weights->text(), m_dir.filePath("flowers.safetensors"));
        QVERIFY(w.trainingPanel()->findChild<QCheckBox*>(QStringLiteral("startWeightsPartial"))->isChecked());

        // Another normalisation in the data section: a notice names the backbone's.
        auto* notices = w.findChild<NoticeArea*>();
        QVERIFY(notices);
        auto noticeSays = [&](const QString& what) {
            for (int id : notices->ids())
                if (notices->text(id).contains(what)) return true;
            return false;
        };
        QVERIFY(!noticeSays(QStringLiteral("(x - 127) / 128")));
        nlohmann::json data2 = p.data;
        data2["transforms"].back() = {{"type", "normalize"}, {"preset", "imagenet"}};
        data2["eval_transforms"].back() = {{"type", "normalize"}, {"preset", "imagenet"}};
        doc->setSections(data2, p.training);
        QTRY_VERIFY(noticeSays(QStringLiteral("(x - 127) / 128")));
    }

    // A template (MobileNetV2) from a .keras file that tf_keras wrote: the file is typed in, read
    // by the child behind a busy dialog, and the project made from it opens, its backbone frozen
    // with the file's weights.
    void templateFromATfKerasFile() {
        QString log;
        const QString dir = m_dir.filePath("tf_keras");
        switch (kiln::test::makeKerasModels(dir, {}, &log, QStringLiteral("keras2_models.py"))) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("tf_keras (Keras 2) is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        const QString model = QDir(dir).filePath("tf_cnn.tf_keras.keras");
        qputenv("KILN_DATA", m_dir.filePath("empty-data").toUtf8());
        MainWindow w(m_dir.filePath("recovery-template"));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.findChild<QAction*>(QStringLiteral("actionNewFromPretrained"))->trigger();
        auto* dialog = w.findChild<PretrainedDialog*>(QStringLiteral("pretrainedDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        clickRow(dialog->table(), rowOf(dialog->table(), QStringLiteral("mobilenet-v2")));
        QTest::keyClicks(dialog->findChild<QLineEdit*>(QStringLiteral("backboneModelFile")), model);
        auto* classes = dialog->findChild<QSpinBox*>(QStringLiteral("pretrainedClasses"));
        classes->findChild<QLineEdit*>()->selectAll();
        QTest::keyClicks(classes->findChild<QLineEdit*>(), QStringLiteral("3"));
        auto* project = dialog->findChild<QLineEdit*>(QStringLiteral("pretrainedProject"));
        project->selectAll();
        QTest::keyClicks(project, m_dir.filePath("tf_cnn_classifier.kiln"));
        QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
        QVERIFY(dialog->isReading());
        QVERIFY(dialog->progressDialog());
        QVERIFY(!dialog->createButton()->isEnabled());

        QTRY_COMPARE_WITH_TIMEOUT(w.document()->filePath(), m_dir.filePath("tf_cnn_classifier.kiln"), 60000);
        const auto p = w.document()->project();
        QCOMPARE(p.graph.outputs, std::vector<std::string>{"head_predictions"});
        QCOMPARE(w.document()->nodeByName("head_predictions")->node.attrs.getInt("units"), int64_t{3});
        for (const char* frozen : {"image", "stem", "stem_bn", "block/dw", "block/pw", "top_conv"})
            QVERIFY2(w.document()->nodeByName(frozen) && !w.document()->nodeByName(frozen)->node.trainable, frozen);
        QCOMPARE(p.extra.at("pretrained").at("model_file").get<std::string>(), std::string("tf_cnn.tf_keras.keras"));
        auto weights = io::loadSafetensors(m_dir.filePath("tf_cnn_classifier.safetensors").toStdString());
        QVERIFY2(weights.ok(), weights.ok() ? "" : weights.error().toString().c_str());
        std::map<std::string, std::vector<int64_t>> shapes;
        for (const auto& t : weights->tensors) shapes[t.name] = t.tensor.shape().dims();
        QCOMPARE(shapes["stem/kernel"], (std::vector<int64_t>{3, 3, 3, 8}));
        QCOMPARE(shapes["block/pw/kernel"], (std::vector<int64_t>{1, 1, 8, 12}));
        QCOMPARE(shapes["top_conv/kernel"], (std::vector<int64_t>{3, 3, 12, 16}));
        QVERIFY(!shapes.count("probs/kernel"));  // the old classifier was cut off
    }

    // A damaged file: the child crashes or runs into the time limit typed into the dialog; the
    // error names the file, nothing is written, and the dialog is ready for another file.
    void templateFromADamagedFile_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("limit");
        QTest::addColumn<QString>("says");
        QTest::newRow("crashes the library") << QStringLiteral("heap_object_size.h5") << 300 << QStringLiteral("crashed");
        QTest::newRow("never finishes") << QStringLiteral("string_length.h5") << 3 << QStringLiteral("did not finish within 3 s");
    }
    void templateFromADamagedFile() {
        QFETCH(QString, file);
        QFETCH(int, limit);
        QFETCH(QString, says);
        const QString model = QStringLiteral(KILN_SOURCE_DIR "/tests/app/data/damaged_hdf5/") + file;
        QVERIFY(QFile::exists(model));
        qputenv("KILN_DATA", m_dir.filePath("empty-data").toUtf8());
        MainWindow w(m_dir.filePath("recovery-damaged-" + file));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        PretrainedDialog* dialog = w.openPretrainedDialog();
        QTRY_VERIFY(dialog->isVisible());
        clickRow(dialog->table(), rowOf(dialog->table(), QStringLiteral("resnet50")));
        QTest::keyClicks(dialog->findChild<QLineEdit*>(QStringLiteral("backboneModelFile")), model);
        const QString target = m_dir.filePath("damaged-" + QFileInfo(file).completeBaseName() + ".kiln");
        dialog->setProjectPath(target);
        auto* limitBox = dialog->findChild<QSpinBox*>(QStringLiteral("pretrainedTimeLimit"));
        QVERIFY(limitBox && limitBox->isEnabled());
        QCOMPARE(limitBox->value(), 300);
        limitBox->setFocus();
        limitBox->selectAll();
        QTest::keyClicks(limitBox, QString::number(limit));
        QCOMPARE(dialog->timeLimit(), limit);
        // The child started now takes this environment (see expectedCrashOptions).
        QTemporaryDir reports;
        QElapsedTimer clock;
        clock.start();
        {
            const kiln::test::ExpectedCrashScope crashScope(reports.path());
            QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
        }
        QVERIFY(dialog->isReading());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isCreating(), 120000);
        const QStringList strays = kiln::test::reportsWithout(reports.path(), QStringLiteral("libhdf5"));
        QVERIFY2(strays.isEmpty(), qPrintable(strays.join(' ')));
        const double seconds = double(clock.elapsed()) / 1000.0;
        const QString status = dialog->statusText();
        qInfo("%s: error after %.1f s: %s", qPrintable(file), seconds, qPrintable(status));
        QVERIFY2(status.contains(file) && status.contains(says), qPrintable(status));
        QVERIFY2(seconds < limit + 60.0, qPrintable(QString::number(seconds)));
        QVERIFY(dialog->isVisible());
        QTRY_VERIFY(!dialog->progressDialog());
        QVERIFY(!QFile::exists(target));
        QVERIFY(w.document()->filePath().isEmpty());
        QVERIFY(dialog->createButton()->isEnabled());
        dialog->reject();
    }

    // Cancel on the busy dialog ends the child at once; nothing is written.
    void cancelWhileReading() {
        const QString model = QStringLiteral(KILN_SOURCE_DIR "/tests/app/data/damaged_hdf5/string_length.h5");
        qputenv("KILN_DATA", m_dir.filePath("empty-data").toUtf8());
        MainWindow w(m_dir.filePath("recovery-cancel"));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        PretrainedDialog* dialog = w.openPretrainedDialog();
        QTRY_VERIFY(dialog->isVisible());
        clickRow(dialog->table(), rowOf(dialog->table(), QStringLiteral("mobilenet-v2")));
        QTest::keyClicks(dialog->findChild<QLineEdit*>(QStringLiteral("backboneModelFile")), model);
        const QString target = m_dir.filePath("cancelled.kiln");
        dialog->setProjectPath(target);
        QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
        QProgressDialog* progress = dialog->progressDialog();
        QVERIFY(progress);
        QTRY_VERIFY(progress->isVisible());
        QVERIFY2(progress->labelText().contains("string_length.h5"), qPrintable(progress->labelText()));
        QTest::qWait(1500);  // the child is reading (and will not stop by itself)
        QVERIFY(dialog->isReading());
        auto* cancel = progress->findChild<QPushButton*>();
        QVERIFY(cancel);
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isCreating(), 30000);
        qInfo("cancelled after %.2f s", double(clock.elapsed()) / 1000.0);
        QVERIFY(clock.elapsed() < 10000);
        QVERIFY2(dialog->statusText().contains("cancelled") && dialog->statusText().contains("string_length.h5"),
                 qPrintable(dialog->statusText()));
        QTRY_VERIFY(!dialog->progressDialog());
        QVERIFY(!QFile::exists(target));
        QVERIFY(dialog->isVisible());
        QVERIFY(dialog->createButton()->isEnabled());
        dialog->reject();
    }

    // The texture example opened in place from File > Examples (no folder of its own) starts from
    // EfficientNet-Lite0's weights in the data folder, as a project made by New from Pretrained does;
    // when the data folder lacks them, the field still names the file and a notice says how to get it.
    void textureExampleFromTheExamplesMenu() {
        const QString dataDir = m_dir.filePath("example-data");
        const auto& backbone = *io::findBackbone("efficientnet-lite0");
        kiln::test::writeBackboneCache(backbone, dataDir.toStdString());
        qputenv("KILN_EXAMPLES", QByteArray(KILN_SOURCE_DIR "/resources/examples"));
        const QString cached = QDir(dataDir).filePath(QStringLiteral("pretrained/efficientnet-lite0/efficientnet-lite0.safetensors"));
        QVERIFY(QFileInfo::exists(cached));
        for (const bool present : {true, false}) {
            qputenv("KILN_DATA", (present ? dataDir : m_dir.filePath("no-data")).toUtf8());
            MainWindow w(m_dir.filePath(present ? "recovery3" : "recovery4"));
            w.resize(1200, 800);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            auto* menu = w.findChild<QMenu*>(QStringLiteral("menuExamples"));
            QVERIFY(menu);
            emit menu->aboutToShow();
            QAction* texture = nullptr;
            for (QAction* act : menu->actions())
                if (act->data().toString().endsWith(QLatin1String("texture_transfer.kiln"))) texture = act;
            QVERIFY(texture);
            texture->trigger();
            QCOMPARE(w.projectName(), QStringLiteral("texture_transfer"));
            auto* weights = w.trainingPanel()->findChild<QLineEdit*>(QStringLiteral("startWeights"));
            QVERIFY(weights);
            auto* notices = w.findChild<NoticeArea*>();
            QVERIFY(notices);
            bool saysHow = false;
            for (int id : notices->ids()) saysHow = saysHow || notices->text(id).contains(QStringLiteral("fetch_pretrained.sh"));
            if (present) {
                QCOMPARE(weights->text(), QDir::toNativeSeparators(cached));
                QVERIFY(!saysHow);
            } else {
                QCOMPARE(weights->text(),
                         QDir::toNativeSeparators(m_dir.filePath("no-data/pretrained/efficientnet-lite0/efficientnet-lite0.safetensors")));
                QVERIFY(saysHow);
            }
            QVERIFY(w.trainingPanel()->findChild<QCheckBox*>(QStringLiteral("startWeightsPartial"))->isChecked());
        }
    }

    // tools/pretrained_screenshot.sh runs this under Xvfb with KILN_SCREENSHOT_DIR set: the dialog
    // as a user sees it over the data folder's real EfficientNet-Lite0 (KILN_REAL_DATA), in English
    // and in Chinese, captured from the X server: new_from_pretrained_{en,zh_CN}.png.
    // The catalogue's texts are composed by the studio: in English exactly the engine's words, in
    // Chinese translated (names, formulas and licence identifiers stay as they are).
    void catalogueTextsFollowTheLanguage() {
        QVERIFY(Language::apply(QStringLiteral("en")));
        for (const auto& b : kiln::engine::api::backboneCatalogue()) {
            const auto t = kiln::ui::PretrainedDialog::backboneTexts(b);
            QCOMPARE(t.dataset, QString::fromStdString(b.dataset));
            QCOMPARE(t.formula, QString::fromStdString(b.preprocessing.formula));
            QCOMPARE(t.licence, QString::fromStdString(b.licence));
            QCOMPARE(t.origin, QString::fromStdString(b.weightsOrigin));
            QCOMPARE(t.note, QString::fromStdString(b.note));
        }
        QVERIFY(Language::apply(QStringLiteral("zh_CN")));
        for (const auto& b : kiln::engine::api::backboneCatalogue()) {
            const auto t = kiln::ui::PretrainedDialog::backboneTexts(b);
            const auto differs = [](const QString& zh, const std::string& en) {
                return en.empty() ? zh.isEmpty() : zh != QString::fromStdString(en);
            };
            QVERIFY2(differs(t.origin, b.weightsOrigin), qPrintable(t.origin));
            QVERIFY2(differs(t.note, b.note), qPrintable(t.note));
            if (b.source == kiln::engine::api::BackboneSource::UserFile) {
                QVERIFY2(differs(t.dataset, b.dataset), qPrintable(t.dataset));
                QVERIFY2(differs(t.licence, b.licence), qPrintable(t.licence));
            }
        }
        QVERIFY(Language::apply(QStringLiteral("en")));
    }

    void screenshot() {
        const QString dir = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("takes the documentation's screenshots when KILN_SCREENSHOT_DIR names the folder");
        const QString data = qEnvironmentVariable("KILN_REAL_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!api::backboneAvailability(*api::findBackbone("efficientnet-lite0"), data.toStdString()).available)
            QSKIP("EfficientNet-Lite0 is not cached (tools/fetch_pretrained.sh)");
        qputenv("KILN_DATA", data.toUtf8());
        for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            QVERIFY(Language::apply(lang));
            MainWindow w(m_dir.filePath("recovery-shot-" + lang));
            w.resize(1600, 1000);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.findChild<QAction*>(QStringLiteral("actionNewFromPretrained"))->trigger();
            auto* dialog = w.findChild<PretrainedDialog*>(QStringLiteral("pretrainedDialog"));
            QVERIFY(dialog);
            QTRY_VERIFY(dialog->isVisible());
            QVERIFY(QTest::qWaitForWindowExposed(dialog));
            clickRow(dialog->table(), rowOf(dialog->table(), QStringLiteral("efficientnet-lite0")));
            auto* classes = dialog->findChild<QSpinBox*>(QStringLiteral("pretrainedClasses"));
            classes->findChild<QLineEdit*>()->selectAll();
            QTest::keyClicks(classes->findChild<QLineEdit*>(), QStringLiteral("5"));
            auto* folder = dialog->findChild<QLineEdit*>(QStringLiteral("pretrainedData"));
            QTest::keyClicks(folder, data + QStringLiteral("/textures/texture-defects/train"));
            auto* project = dialog->findChild<QLineEdit*>(QStringLiteral("pretrainedProject"));
            project->selectAll();
            QTest::keyClicks(project, QDir::homePath() + QStringLiteral("/textures/textures.kiln"));
            QTest::qWait(500);
            const QPixmap shot = dialog->screen()->grabWindow(dialog->winId());
            QVERIFY(!shot.isNull());
            QVERIFY(shot.save(QDir(dir).filePath(QStringLiteral("new_from_pretrained_%1.png").arg(lang))));
            dialog->close();
        }
        QVERIFY(Language::apply(QStringLiteral("en")));
    }
};

QTEST_MAIN(TestNewFromPretrained)
#include "tst_new_from_pretrained.moc"
