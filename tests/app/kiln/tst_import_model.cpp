// SPDX-License-Identifier: Apache-2.0
// File > Import Model in the studio, driven like a user: the menu entry opens the import dialog;
// a broken file shows the error naming it and offers nothing to open; a real model (the
// Fashion-MNIST CNN example, exported to ONNX) shows the report's summary, and Open Project
// loads the imported project into the editor, laid out. A Keras model (made by Keras when the
// Python environment has it) goes the same way, its unknown layer shown as a placeholder card.
// The import runs in a kiln-import child process: a legacy .h5 imports and opens; the damaged
// .h5 files of tests/app/data/damaged_hdf5 (one crashes the HDF5 library, one never finishes)
// end with an error box naming the file, within the time limit; Cancel ends the child.
// tools/import_screenshot.sh runs `screenshot` under Xvfb with KILN_SCREENSHOT_DIR set: the canvas
// around an imported placeholder, in English and in Chinese (import_placeholder_{en,zh_CN}.png).
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QScreen>
#include <QSpinBox>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <fstream>

#include "app/kiln/main_window.h"
#include "engine/io/onnx_export.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"
#include "tests/app/app_test_util.h"
#include "ui/common/language.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/import/import_dialog.h"
#include "tests/engine/io/keras_fixtures.h"

using kiln::app::MainWindow;
using namespace kiln::ui;
using namespace kiln::engine;

class TestImportModel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    // Closes an import's error box with its OK button, as the user does.
    static void closeErrorBox(ImportDialog* dialog) {
        QMessageBox* box = dialog->errorBox();
        QVERIFY(box);
        QAbstractButton* ok = box->button(QMessageBox::Ok);
        QVERIFY(ok);
        QTest::mouseClick(ok, Qt::LeftButton);
        QTRY_VERIFY(!dialog->errorBox());
    }

    // x (3×32×32, NCHW) → Conv 8 3×3 → Erf → Add(conv, erf) → pooled: an op Kiln cannot compute between
    // two it can, with the shapes declared so that they flow past the placeholder.
    static onnx::ModelProto convErfAdd() {
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        auto* g = m.mutable_graph();
        const auto tensorInfo = [](onnx::ValueInfoProto* v, const char* name, int channels) {
            v->set_name(name);
            auto* t = v->mutable_type()->mutable_tensor_type();
            t->set_elem_type(onnx::TensorProto::FLOAT);
            t->mutable_shape()->add_dim()->set_dim_param("batch");
            for (int d : {channels, 32, 32}) t->mutable_shape()->add_dim()->set_dim_value(d);
        };
        tensorInfo(g->add_input(), "image", 3);
        auto* w = g->add_initializer();
        w->set_name("conv2d/kernel");
        w->set_data_type(onnx::TensorProto::FLOAT);
        for (int d : {8, 3, 3, 3}) w->add_dims(d);
        for (int k = 0; k < 8 * 3 * 3 * 3; ++k) w->add_float_data(0.01f * float(k % 7 - 3));
        auto* conv = g->add_node();
        conv->set_op_type("Conv");
        conv->set_name("conv2d");
        conv->add_input("image");
        conv->add_input("conv2d/kernel");
        conv->add_output("c");
        auto* pads = conv->add_attribute();
        pads->set_name("pads");
        pads->set_type(onnx::AttributeProto::INTS);
        for (int k = 0; k < 4; ++k) pads->add_ints(1);
        auto* erf = g->add_node();
        erf->set_op_type("Erf");
        erf->set_name("erf");
        erf->add_input("c");
        erf->add_output("e");
        auto* add = g->add_node();
        add->set_op_type("Add");
        add->set_name("add");
        add->add_input("c");
        add->add_input("e");
        add->add_output("a");
        auto* pool = g->add_node();
        pool->set_op_type("GlobalAveragePool");
        pool->set_name("pool");
        pool->add_input("a");
        pool->add_output("p");
        auto* flat = g->add_node();
        flat->set_op_type("Flatten");
        flat->set_name("flatten");
        flat->add_input("p");
        flat->add_output("y");
        tensorInfo(g->add_value_info(), "e", 8);
        auto* out = g->add_output();
        out->set_name("y");
        auto* outType = out->mutable_type()->mutable_tensor_type();
        outType->set_elem_type(onnx::TensorProto::FLOAT);
        outType->mutable_shape()->add_dim()->set_dim_param("batch");
        outType->mutable_shape()->add_dim()->set_dim_value(8);
        return m;
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_import_model"));
        QVERIFY(m_dir.isValid());
        QSettings().clear();
    }

    void importFromTheFileMenu() {
        // A real model as another tool would hand it over: the CNN example exported to ONNX.
        auto example = io::loadProject(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln");
        QVERIFY(example.ok());
        auto model = ops::analyzeModel(example->graph);
        QVERIFY(model.ok());
        auto params = exec::ParamStore::create(*model, 1);
        auto bytes = io::exportOnnx(*model, params, {"fashion_cnn", {}, "{}", "test"});
        QVERIFY(bytes.ok());
        const QString good = m_dir.filePath("fashion.onnx"), broken = m_dir.filePath("broken.onnx");
        std::ofstream(good.toStdString(), std::ios::binary) << *bytes;
        std::ofstream(broken.toStdString(), std::ios::binary) << bytes->substr(0, bytes->size() / 3);

        MainWindow w(m_dir.filePath("recovery"));
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* action = w.findChild<QAction*>(QStringLiteral("actionImportModel"));
        QVERIFY(action);
        QVERIFY(w.fileMenu()->actions().contains(action));
        QVERIFY(!action->text().isEmpty());
        action->trigger();
        auto* dialog = w.findChild<ImportDialog*>(QStringLiteral("importDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        auto* modelEdit = dialog->findChild<QLineEdit*>(QStringLiteral("modelPath"));
        auto* projectEdit = dialog->findChild<QLineEdit*>(QStringLiteral("projectPath"));
        QVERIFY(modelEdit && projectEdit);
        QVERIFY(!dialog->importButton()->isEnabled());

        // A truncated file: the error names it; nothing to open.
        QTest::keyClicks(modelEdit, broken);
        QCOMPARE(projectEdit->text(), m_dir.filePath("broken.kiln"));
        QVERIFY(dialog->importButton()->isEnabled());
        QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isImporting() && !dialog->summaryText().isEmpty(), 60000);
        QVERIFY2(dialog->summaryText().contains("broken.onnx"), qPrintable(dialog->summaryText()));
        QVERIFY(!dialog->succeeded());
        QVERIFY(!dialog->openButton()->isEnabled());
        QVERIFY(!QFile::exists(m_dir.filePath("broken.kiln")));
        // The error box names the file too; the user closes it.
        QTRY_VERIFY(dialog->errorBox() && dialog->errorBox()->isVisible());
        QVERIFY2(dialog->errorBox()->text().contains("broken.onnx"), qPrintable(dialog->errorBox()->text()));
        closeErrorBox(dialog);

        // The real model, saved where the user says.
        modelEdit->clear();
        QTest::keyClicks(modelEdit, good);
        QCOMPARE(projectEdit->text(), m_dir.filePath("fashion.kiln"));
        const QString target = m_dir.filePath("imported_cnn.kiln");
        projectEdit->selectAll();
        QTest::keyClicks(projectEdit, target);
        QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->succeeded(), 60000);
        const QString summary = dialog->summaryText();
        QVERIFY2(summary.contains("Kiln nodes") && summary.contains("Every operation was mapped"), qPrintable(summary));
        QVERIFY(QFile::exists(target));
        QVERIFY(QFile::exists(m_dir.filePath("imported_cnn.safetensors")));
        std::ifstream reportFile(m_dir.filePath("imported_cnn.import.json").toStdString());
        const auto report = nlohmann::json::parse(reportFile);
        const auto kilnNodes = report["summary"]["kiln_nodes"].get<size_t>();
        QVERIFY2(summary.contains(QStringLiteral("became %1 Kiln nodes").arg(kilnNodes)), qPrintable(summary));
        QVERIFY(dialog->openButton()->isEnabled());

        QTest::mouseClick(dialog->openButton(), Qt::LeftButton);
        QTRY_COMPARE(w.document()->filePath(), QFileInfo(target).absoluteFilePath());
        const io::Project opened = w.document()->project();
        QCOMPARE(opened.graph.nodes.size(), kilnNodes);
        // Positions came with the file: the editor did not have to lay it out again.
        for (const auto& n : opened.graph.nodes) QVERIFY2(opened.layout["nodes"].contains(n.name), n.name.c_str());
        QVERIFY(w.windowTitle().contains("imported_cnn"));
    }

    // An operation Kiln cannot compute shows as a placeholder card naming the ONNX op.
    void placeholderCard() {
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        auto* g = m.mutable_graph();
        auto* in = g->add_input();
        in->set_name("x");
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        tt->mutable_shape()->add_dim()->set_dim_param("batch");
        tt->mutable_shape()->add_dim()->set_dim_value(8);
        auto* w = g->add_initializer();
        w->set_name("W");
        w->set_data_type(onnx::TensorProto::FLOAT);
        w->add_dims(8);
        w->add_dims(4);
        for (int k = 0; k < 32; ++k) w->add_float_data(0.1f * float(k % 5));
        auto* mm = g->add_node();
        mm->set_op_type("MatMul");
        mm->add_input("x");
        mm->add_input("W");
        mm->add_output("h");
        auto* erf = g->add_node();
        erf->set_op_type("Erf");
        erf->set_name("odd_one");
        erf->add_input("h");
        erf->add_output("y");
        g->add_output()->set_name("y");
        const QString onnxPath = m_dir.filePath("erf.onnx"), project = m_dir.filePath("erf.kiln");
        std::ofstream(onnxPath.toStdString(), std::ios::binary) << m.SerializeAsString();

        MainWindow win(m_dir.filePath("recovery2"));
        win.resize(1200, 800);
        win.show();
        QVERIFY(QTest::qWaitForWindowExposed(&win));
        ImportDialog* dialog = win.openImportDialog();
        dialog->setModelPath(onnxPath);
        QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->succeeded(), 60000);
        QVERIFY2(dialog->summaryText().contains("erf (ONNX Erf)"), qPrintable(dialog->summaryText()));
        QTest::mouseClick(dialog->openButton(), Qt::LeftButton);
        QTRY_COMPARE(win.document()->filePath(), QFileInfo(project).absoluteFilePath());
        for (int i = 0; i < 5; ++i) {
            QCoreApplication::processEvents();
            QTest::qWait(10);
        }
        NodeItem* card = nullptr;
        for (QGraphicsItem* item : win.editor()->view()->graphScene()->items())
            if (item->type() == NodeItemType && static_cast<NodeItem*>(item)->isPlaceholder()) card = static_cast<NodeItem*>(item);
        QVERIFY(card);
        QVERIFY2(card->opLabel().contains("Erf"), qPrintable(card->opLabel()));
    }

    // A Keras file through the same dialog: the summary speaks of Keras layers, and the layer Kiln
    // cannot compute is a placeholder card naming its Keras class.
    void importKerasModel() {
        QString log;
        switch (kiln::test::makeKerasModels(m_dir.filePath("keras"), {"unknown"}, &log)) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("Keras is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        MainWindow win(m_dir.filePath("recovery3"));
        win.resize(1200, 800);
        win.show();
        QVERIFY(QTest::qWaitForWindowExposed(&win));
        ImportDialog* dialog = win.openImportDialog();
        dialog->setModelPath(m_dir.filePath("keras/unknown.keras"));
        QCOMPARE(dialog->projectPath(), m_dir.filePath("keras/unknown.kiln"));
        QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->succeeded(), 60000);
        const QString summary = dialog->summaryText();
        QVERIFY2(summary.contains("4 Keras layers became 4 Kiln nodes") && summary.contains("conv1d (Keras Conv1D)"), qPrintable(summary));
        // The placeholder's weights are kept in the weights file, and the summary says which.
        QVERIFY2(summary.contains("its weights from the file are kept: conv1d/"), qPrintable(summary));
        QTest::mouseClick(dialog->openButton(), Qt::LeftButton);
        QTRY_COMPARE(win.document()->filePath(), QFileInfo(m_dir.filePath("keras/unknown.kiln")).absoluteFilePath());
        for (int i = 0; i < 5; ++i) {
            QCoreApplication::processEvents();
            QTest::qWait(10);
        }
        NodeItem* card = nullptr;
        for (QGraphicsItem* item : win.editor()->view()->graphScene()->items())
            if (item->type() == NodeItemType && static_cast<NodeItem*>(item)->isPlaceholder()) card = static_cast<NodeItem*>(item);
        QVERIFY(card);
        QVERIFY2(card->opLabel().contains("Conv1D"), qPrintable(card->opLabel()));

        // A damaged Keras file: the error names it and the JSON path.
        ImportDialog* again = win.openImportDialog();
        again->setModelPath(m_dir.filePath("keras/bad_field.keras"));
        QTest::mouseClick(again->importButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!again->isImporting() && !again->summaryText().isEmpty(), 60000);
        QVERIFY(!again->succeeded());
        QVERIFY2(again->summaryText().contains("bad_field.keras") && again->summaryText().contains("config.layers[1].config.filters"),
                 qPrintable(again->summaryText()));
        QTRY_VERIFY(again->errorBox() && again->errorBox()->isVisible());
        QVERIFY2(again->errorBox()->informativeText().contains("config.layers[1].config.filters"),
                 qPrintable(again->errorBox()->informativeText()));
        closeErrorBox(again);
    }

    // A legacy .h5 (Keras's "separable" model, as tst_kiln_import uses) through the child process:
    // typed in, imported with a click, opened in the editor.
    void legacyH5ImportsAndOpens() {
        QString log;
        switch (kiln::test::makeKerasModels(m_dir.filePath("h5"), {"separable"}, &log)) {
        case kiln::test::KerasFixtures::NoPython: QSKIP("the Python environment is not available");
        case kiln::test::KerasFixtures::NoKeras: QSKIP("Keras is not installed in the Python environment");
        case kiln::test::KerasFixtures::Failed: QFAIL(qPrintable(log));
        case kiln::test::KerasFixtures::Made: break;
        }
        MainWindow win(m_dir.filePath("recovery-h5"));
        win.resize(1200, 800);
        win.show();
        QVERIFY(QTest::qWaitForWindowExposed(&win));
        ImportDialog* dialog = win.openImportDialog();
        auto* modelEdit = dialog->findChild<QLineEdit*>(QStringLiteral("modelPath"));
        QVERIFY(modelEdit);
        QTest::keyClicks(modelEdit, m_dir.filePath("h5/separable.h5"));
        QCOMPARE(dialog->projectPath(), m_dir.filePath("h5/separable.kiln"));
        QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isImporting() && !dialog->summaryText().isEmpty(), 120000);
        QVERIFY2(dialog->succeeded(), qPrintable(dialog->summaryText()));
        QVERIFY2(dialog->summaryText().contains("9 Keras layers became") && dialog->summaryText().contains("Every operation was mapped"),
                 qPrintable(dialog->summaryText()));
        QVERIFY(!dialog->errorBox());
        QTRY_VERIFY(!dialog->progressDialog());
        QVERIFY(QFile::exists(m_dir.filePath("h5/separable.safetensors")));
        QVERIFY(QFile::exists(m_dir.filePath("h5/separable.import.json")));
        QTest::mouseClick(dialog->openButton(), Qt::LeftButton);
        QTRY_COMPARE(win.document()->filePath(), QFileInfo(m_dir.filePath("h5/separable.kiln")).absoluteFilePath());
        QVERIFY(win.editor()->findNode(QStringLiteral("sep_depthwise")));
    }

    // The damaged .h5 files: the error box names the file, nothing is written, the studio goes on.
    // The one the HDF5 library never finishes ends at the time limit typed into the dialog.
    void damagedHdf5ShowsError_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("limit");
        QTest::newRow("crashes the library") << QStringLiteral("heap_object_size.h5") << 300;
        QTest::newRow("never finishes") << QStringLiteral("string_length.h5") << 3;
    }
    void damagedHdf5ShowsError() {
        QFETCH(QString, file);
        QFETCH(int, limit);
        const QString model = QStringLiteral(KILN_SOURCE_DIR "/tests/app/data/damaged_hdf5/") + file;
        QVERIFY(QFile::exists(model));
        MainWindow win(m_dir.filePath("recovery-damaged-" + file));
        win.resize(1200, 800);
        win.show();
        QVERIFY(QTest::qWaitForWindowExposed(&win));
        ImportDialog* dialog = win.openImportDialog();
        const QString project = m_dir.filePath("damaged/" + QFileInfo(file).completeBaseName() + ".kiln");
        QVERIFY(QDir().mkpath(m_dir.filePath("damaged")));
        dialog->setModelPath(model);
        dialog->setProjectPath(project);
        auto* limitBox = dialog->findChild<QSpinBox*>(QStringLiteral("timeLimit"));
        QVERIFY(limitBox);
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
            QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        }
        QVERIFY(dialog->isImporting());
        QVERIFY(dialog->progressDialog());
        QTRY_VERIFY_WITH_TIMEOUT(dialog->errorBox() && dialog->errorBox()->isVisible(), 120000);
        const QStringList strays = kiln::test::reportsWithout(reports.path(), QStringLiteral("libhdf5"));
        QVERIFY2(strays.isEmpty(), qPrintable(strays.join(' ')));
        const double seconds = double(clock.elapsed()) / 1000.0;
        const QString text = dialog->errorBox()->text() + "\n" + dialog->errorBox()->informativeText();
        qInfo("%s: error after %.1f s: %s", qPrintable(file), seconds, qPrintable(text));
        QVERIFY2(text.contains(file), qPrintable(text));
        if (limit < 300) QVERIFY2(text.contains(QStringLiteral("did not finish within %1 s").arg(limit)), qPrintable(text));
        QVERIFY2(seconds < limit + 60.0, qPrintable(QString::number(seconds)));
        QVERIFY(!dialog->succeeded());
        QVERIFY(!dialog->openButton()->isEnabled());
        QVERIFY(!QFile::exists(project));
        QVERIFY(!QFile::exists(m_dir.filePath("damaged/" + QFileInfo(file).completeBaseName() + ".safetensors")));
        closeErrorBox(dialog);
        QVERIFY(dialog->importButton()->isEnabled());  // ready for another file
    }

    // Cancel on the busy dialog ends the child at once; the studio says so and writes nothing.
    void cancelEndsTheImport() {
        const QString model = QStringLiteral(KILN_SOURCE_DIR "/tests/app/data/damaged_hdf5/string_length.h5");
        MainWindow win(m_dir.filePath("recovery-cancel"));
        win.resize(1200, 800);
        win.show();
        QVERIFY(QTest::qWaitForWindowExposed(&win));
        ImportDialog* dialog = win.openImportDialog();
        QVERIFY(QDir().mkpath(m_dir.filePath("cancel")));
        dialog->setModelPath(model);
        dialog->setProjectPath(m_dir.filePath("cancel/never.kiln"));
        QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
        QProgressDialog* progress = dialog->progressDialog();
        QVERIFY(progress);
        QTRY_VERIFY(progress->isVisible());
        QVERIFY2(progress->labelText().contains("string_length.h5"), qPrintable(progress->labelText()));
        QTest::qWait(1500);  // the child is reading (and will not stop by itself)
        QVERIFY(dialog->isImporting());
        auto* cancel = progress->findChild<QPushButton*>();
        QVERIFY(cancel);
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(cancel, Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isImporting() && !dialog->summaryText().isEmpty(), 30000);
        qInfo("cancelled after %.2f s", double(clock.elapsed()) / 1000.0);
        QVERIFY(clock.elapsed() < 10000);
        QVERIFY2(dialog->summaryText().contains("cancelled"), qPrintable(dialog->summaryText()));
        QVERIFY(!dialog->errorBox());
        QTRY_VERIFY(!dialog->progressDialog());
        QVERIFY(!dialog->succeeded());
        QVERIFY(!QFile::exists(m_dir.filePath("cancel/never.kiln")));
        QVERIFY(dialog->importButton()->isEnabled());
    }

    // The documentation's pictures of a placeholder card, from a real window (see the top).
    void screenshot() {
        const QString dir = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("takes the documentation's screenshots when KILN_SCREENSHOT_DIR names the folder");
        const QString onnxPath = m_dir.filePath("conv_erf_add.onnx");
        std::ofstream(onnxPath.toStdString(), std::ios::binary) << convErfAdd().SerializeAsString();
        for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            QVERIFY(Language::apply(lang));
            const QString project = m_dir.filePath(QStringLiteral("shot_%1/conv_erf_add.kiln").arg(lang));
            QVERIFY(QDir().mkpath(QFileInfo(project).absolutePath()));
            MainWindow win(m_dir.filePath("recovery-shot-" + lang));
            win.resize(1200, 800);
            win.show();
            QVERIFY(QTest::qWaitForWindowExposed(&win));
            ImportDialog* dialog = win.openImportDialog();
            dialog->setModelPath(onnxPath);
            dialog->setProjectPath(project);
            QTest::mouseClick(dialog->importButton(), Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(!dialog->isImporting() && !dialog->summaryText().isEmpty(), 60000);
            QVERIFY2(dialog->succeeded(), qPrintable(dialog->summaryText()));
            QTest::mouseClick(dialog->openButton(), Qt::LeftButton);
            QTRY_COMPARE(win.document()->filePath(), QFileInfo(project).absoluteFilePath());
            QVERIFY(win.editor()->findNode(QStringLiteral("erf")));
            QTest::qWait(500);
            QWidget* view = win.editor()->view();
            const QPoint at = view->mapTo(&win, QPoint(0, 0));
            const QPixmap shot = win.screen()->grabWindow(win.winId(), at.x(), at.y(), view->width(), view->height());
            QVERIFY(!shot.isNull());
            QVERIFY(shot.save(QDir(dir).filePath(QStringLiteral("import_placeholder_%1.png").arg(lang))));
        }
        QVERIFY(Language::apply(QStringLiteral("en")));
    }
};

QTEST_MAIN(TestImportModel)
#include "tst_import_model.moc"
