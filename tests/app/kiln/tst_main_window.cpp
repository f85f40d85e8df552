// SPDX-License-Identifier: Apache-2.0
// The studio window as a new user first sees it: fashion_cnn.kiln opened in a 1600x1000 window
// shows readable cards from the model's input down, the canvas gets most of the width, the
// overview moves the view when clicked, and Fit still shows the whole diagram. "Explain with run…"
// on a picture of a TFRecord project's data overview explains that very record with the newest
// run; on IDX data the action is off and says why.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QListWidget>
#include <QMenu>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>

#include "app/kiln/main_window.h"
#include "engine/api/evaluation.h"
#include "engine/api/explanation.h"
#include "engine/api/training_job.h"
#include "engine/core/thread_pool.h"
#include "engine/data/convert.h"
#include "engine/data/sources.h"
#include "engine/io/project.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/evaluate/explanation_dialog.h"
#include "ui/training/training_panel.h"
#include "ui/graph_editor/canvas_minimap.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"

using kiln::app::MainWindow;
using namespace kiln::ui;

namespace {
const QString kExample = QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln");

// Lets queued view updates (the overview measures after the scene has rebuilt) run.
void settle() {
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(10);
    }
}

QList<NodeItem*> inputNodes(GraphScene* scene) {
    QList<NodeItem*> out;
    for (QGraphicsItem* item : scene->items())
        if (item->type() == NodeItemType && static_cast<NodeItem*>(item)->isInput())
            out << static_cast<NodeItem*>(item);
    return out;
}
}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString recoveryDir() const { return m_dir.filePath(QStringLiteral("recovery")); }

    // Sends a context menu event to picture `row` of the data overview; the menu's explain action.
    static QAction* explainActionOf(QListWidget* pictures, int row) {
        const QPoint at = pictures->visualItemRect(pictures->item(row)).center();
        QContextMenuEvent event(QContextMenuEvent::Mouse, at, pictures->viewport()->mapToGlobal(at));
        QApplication::sendEvent(pictures->viewport(), &event);
        const auto menus = pictures->findChildren<QMenu*>(QStringLiteral("sampleContextMenu"));
        return menus.isEmpty() ? nullptr : menus.last()->findChild<QAction*>(QStringLiteral("explainWithRun"));
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
        QVERIFY(m_dir.isValid());
        QSettings().clear();
    }

    void openingViewIsReadableAndStartsAtTheInput() {
        const QString path = m_dir.filePath(QStringLiteral("fashion_cnn.kiln"));
        QVERIFY(QFile::copy(kExample, path));
        QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        MainWindow w(recoveryDir());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        settle();

        GraphEditorWidget* editor = w.editor();
        GraphView* view = editor->view();
        // The canvas has the room: at least 60 % of the window's width.
        QVERIFY2(editor->width() >= 0.6 * w.width(),
                 qPrintable(QStringLiteral("canvas %1 of %2 px").arg(editor->width()).arg(w.width())));

        // The example is a tall chain: fitted whole, its cards would be unreadable.
        const QRectF diagram = view->graphScene()->diagramRect();
        const QSizeF vp = view->viewport()->size();
        const qreal fitZoom = std::min(vp.width() / diagram.width(), vp.height() / diagram.height());
        QVERIFY2(fitZoom < GraphView::readableZoom(), qPrintable(QString::number(fitZoom)));
        // So it opens at the smallest zoom that keeps the card text readable (not below, not above 100 %).
        QCOMPARE(view->zoom(), GraphView::readableZoom());
        QVERIFY(view->zoom() <= 1.0);
        QCOMPARE(view->transform().m22(), view->zoom());

        // The text of a card as it reaches the screen: its font's pixel size times the zoom.
        const QList<NodeItem*> inputs = inputNodes(view->graphScene());
        QCOMPARE(inputs.size(), 1);
        NodeItem* input = inputs.front();
        QVERIFY(input->textFont().pixelSize() > 0);
        QVERIFY2(input->textFont().pixelSize() * view->transform().m11() >= kMinCardTextPx,
                 qPrintable(QStringLiteral("%1 px at %2").arg(input->textFont().pixelSize()).arg(view->zoom())));
        QVERIFY(NodeCardStyle::get().titleFont.pixelSize() > input->textFont().pixelSize());

        // Centred on the input, which sits at the top of the view.
        const QRectF visible = view->visibleSceneRect();
        const QRectF card = input->mapRectToScene(QRectF(0, 0, nodeWidth(), nodeHeight()));
        QVERIFY(visible.contains(card));
        QVERIFY2(std::abs(card.center().x() - visible.center().x()) < 2.0,
                 qPrintable(QStringLiteral("%1 vs %2").arg(card.center().x()).arg(visible.center().x())));
        QVERIFY2(card.top() - visible.top() < 60, qPrintable(QString::number(card.top() - visible.top())));
        QVERIFY(visible.bottom() < diagram.bottom());  // the rest is below, reached by the overview

        // The overview shows in the canvas's corner; a click near its bottom moves the view there.
        CanvasMinimap* map = view->minimap();
        QVERIFY(map->isVisible());
        QVERIFY(view->viewport()->rect().contains(map->geometry()));
        const QPoint target = map->toWidget(QPointF(diagram.center().x(), diagram.bottom() - 100)).toPoint();
        QTest::mouseClick(map, Qt::LeftButton, {}, target);
        const QPointF wanted = map->toScene(target);
        const QPointF centre = view->visibleSceneRect().center();
        QVERIFY2(std::abs(centre.y() - wanted.y()) < 2.0,
                 qPrintable(QStringLiteral("%1 vs %2").arg(centre.y()).arg(wanted.y())));
        QVERIFY(view->visibleSceneRect().bottom() > diagram.bottom() - 100);
        QCOMPARE(view->zoom(), GraphView::readableZoom());  // the overview moves, it does not zoom

        // Fit (the toolbar's button) still shows everything; the overview then has nothing to add
        // and hides.
        QWidget* fitButton =
            editor->toolBar()->widgetForAction(editor->action(GraphEditorWidget::StandardAction::FitView));
        QVERIFY(fitButton);
        QTest::mouseClick(fitButton, Qt::LeftButton);
        settle();
        QVERIFY(view->visibleSceneRect().contains(diagram.adjusted(1, 1, -1, -1)));
        QVERIFY(view->zoom() < GraphView::readableZoom());
        QVERIFY(!map->isVisible());
    }

    void openingViewFollowsTheWindowUntilMoved() {
        MainWindow w(recoveryDir());
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openExample(kExample));
        settle();
        GraphView* view = w.editor()->view();
        w.resize(1600, 1000);
        settle();
        NodeItem* input = inputNodes(view->graphScene()).value(0);
        QVERIFY(input);
        QRectF visible = view->visibleSceneRect();
        QVERIFY(std::abs(input->sceneBoundingRect().center().x() - visible.center().x()) < 2.0);
        QVERIFY(input->sceneBoundingRect().top() - visible.top() < 60);
        // Once the user zooms, a resize leaves the view alone.
        w.editor()->action(GraphEditorWidget::StandardAction::ZoomIn)->trigger();
        const qreal zoomed = view->zoom();
        w.resize(1400, 900);
        settle();
        QCOMPARE(view->zoom(), zoomed);
    }

    // A TFRecord project: the Data workspace shows an overview of the training file; "Explain with
    // run…" on its third picture opens the explanation of record 2 of that file with the newest
    // run, the same map the engine computes for that record.
    void explainsAPictureOfTfRecordData() {
        const QString root = m_dir.filePath(QStringLiteral("records"));
        const char* const classes[3] = {"dark", "grey", "light"};
        const int levels[3] = {50, 128, 205};
        for (const char* split : {"train", "test"})
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < 6; ++i) {
                    const QString file = QStringLiteral("%1/pics/%2/%3/%4.png").arg(root, QLatin1String(split), QLatin1String(classes[c])).arg(i);
                    QDir().mkpath(QFileInfo(file).absolutePath());
                    QImage image(8, 8, QImage::Format_RGB888);
                    for (int y = 0; y < 8; ++y)
                        for (int x = 0; x < 8; ++x) {
                            const int v = std::clamp(levels[c] + ((x * 7 + y * 13 + i * 29) % 61) - 30, 0, 255);
                            image.setPixelColor(x, y, QColor(v, v, std::clamp(v + x * 6 - 20, 0, 255)));
                        }
                    QVERIFY(image.save(file, "PNG"));
                }
        for (const char* split : {"train", "test"}) {
            auto source = kiln::engine::data::ImageFolderSource::open(QStringLiteral("%1/pics/%2").arg(root, QLatin1String(split)).toStdString());
            QVERIFY(source.ok());
            auto written = kiln::engine::data::convertToTfRecord(**source, QStringLiteral("%1/%2.tfrecord").arg(root, QLatin1String(split)).toStdString(), {});
            QVERIFY2(written.ok(), written.ok() ? "" : written.error().toString().c_str());
        }
        const std::string text = R"({"format": "kiln-project", "version": 2, "name": "records",
          "graph": {"nodes": [
            {"name": "image", "op": "Input", "attrs": {"shape": [8, 8, 3]}},
            {"name": "conv", "op": "Conv2D", "inputs": ["image"], "attrs": {"filters": 4, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}},
            {"name": "flat", "op": "Flatten", "inputs": ["conv"]},
            {"name": "logits", "op": "Dense", "inputs": ["flat"], "attrs": {"units": 3}}]},
          "data": {"format": "tfrecord", "train": "train.tfrecord", "test": "test.tfrecord", "class_names": ["dark", "grey", "light"],
                   "transforms": [{"type": "normalize", "preset": "symmetric"}]},
          "training": {"epochs": 3, "batch_size": 6, "seed": 5, "optimizer": {"type": "adam", "learning_rate": 0.02},
            "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": true}, "metrics": ["accuracy"]}})";
        const QString path = root + QStringLiteral("/records.kiln");
        auto project = kiln::engine::io::parseProject(text, path.toStdString());
        QVERIFY(project.ok());
        QVERIFY(kiln::engine::io::saveProject(*project, path.toStdString()).ok());
        // One completed run, recorded in the project's run history as the studio records it.
        kiln::engine::api::TrainingOptions training;
        training.runDir = (root + QStringLiteral("/runs/first")).toStdString();
        training.runName = "first";
        auto job = kiln::engine::api::TrainingJob::prepare(*project, path.toStdString(), training);
        QVERIFY2(job.ok(), job.ok() ? "" : job.error().toString().c_str());
        auto outcome = (*job)->run({});
        QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().toString().c_str());

        MainWindow w(recoveryDir());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        w.setWorkspace(MainWindow::Workspace::Data);
        settle();
        DatasetBrowserWidget* browser = w.datasetBrowser();
        QVERIFY(browser);
        QTRY_VERIFY_WITH_TIMEOUT(browser->sourceOverview() != nullptr, 60000);
        QVERIFY(browser->overviewShown());
        QListWidget* pictures = browser->overviewPictures();
        QTRY_VERIFY(pictures->count() >= 3);
        QVERIFY(pictures->isVisible());
        // The run history has loaded the run (else a message would say to train first).
        QTRY_VERIFY_WITH_TIMEOUT(!w.trainingPanel()->runForEvaluation().isEmpty(), 30000);
        QAction* explain = explainActionOf(pictures, 2);
        QVERIFY(explain);
        QCOMPARE(explain->text(), QStringLiteral("Explain with run…"));
        QVERIFY(explain->isEnabled());
        QVERIFY2(explain->toolTip().contains(QStringLiteral("train.tfrecord")), qPrintable(explain->toolTip()));
        explain->trigger();
        static_cast<QMenu*>(explain->parent())->close();
        QTRY_VERIFY(w.pictureExplanation() != nullptr);
        auto* dialog = qobject_cast<kiln::ui::evaluate::ExplanationDialog*>(w.pictureExplanation());
        QVERIFY(dialog);
        QVERIFY2(dialog->windowTitle().contains(QStringLiteral("sample 2 of")), qPrintable(dialog->windowTitle()));
        QVERIFY(dialog->windowTitle().contains(QStringLiteral("train.tfrecord")));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->busy() && !dialog->heatmap().values.empty(), 60000);
        QVERIFY2(dialog->errorText().isEmpty(), qPrintable(dialog->errorText()));
        QCOMPARE(dialog->heatmap().height, int64_t(8));
        QVERIFY(!dialog->overlay().isNull());
        auto* names = dialog->findChild<QComboBox*>(QStringLiteral("explainClass"));
        QVERIFY(names);
        QCOMPARE(names->count(), 4);  // the predicted class, then the project's three classes
        QVERIFY(names->itemText(1).startsWith(QStringLiteral("dark")));

        // The same map as the engine's for record 2 of the training file, with the run's weights.
        kiln::engine::api::EvaluationOptions options;
        options.weights = outcome->runDir;
        options.split = (root + QStringLiteral("/train.tfrecord")).toStdString();
        kiln::engine::ThreadPool pool(1);
        auto explainer = kiln::engine::api::Explainer::create(*project, options.weights, pool);
        QVERIFY(explainer.ok());
        kiln::engine::api::Heatmap expected;
        const auto st = kiln::engine::api::forEachSample(*project, path.toStdString(), options,
                                                         [&](const kiln::engine::api::SampleInput& s) -> kiln::engine::Result<bool> {
            if (s.index < 2) return true;
            KILN_ASSIGN(expected, (*explainer)->explain(s.data.data(), kiln::engine::api::ExplainMethod::GradCam));
            return false;
        });
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());
        QCOMPARE(dialog->heatmap().predictedClass, expected.predictedClass);
        QCOMPARE(dialog->heatmap().scores.size(), expected.scores.size());
        for (size_t k = 0; k < expected.scores.size(); ++k) QVERIFY(std::abs(dialog->heatmap().scores[k] - expected.scores[k]) < 1e-4f);
        QCOMPARE(dialog->heatmap().values.size(), expected.values.size());
        for (size_t k = 0; k < expected.values.size(); ++k) QVERIFY(std::abs(dialog->heatmap().values[k] - expected.values[k]) < 1e-4f);
        dialog->close();
    }

    // IDX data (the Fashion-MNIST example) is read whole into memory: the action is there but off,
    // and its tooltip says where these pictures are explained instead.
    void idxOverviewSaysWhyItCannotExplain() {
        const QString data = qEnvironmentVariable("KILN_DATA", QDir::homePath() + QStringLiteral("/.cache/kiln/data"));
        if (!QFileInfo::exists(data + QStringLiteral("/fashion-mnist/train-images-idx3-ubyte.gz")))
            QSKIP("Fashion-MNIST is not fetched (tools/fetch_data.sh)");
        MainWindow w(recoveryDir());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openExample(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_mlp.kiln")));
        w.setWorkspace(MainWindow::Workspace::Data);
        settle();
        DatasetBrowserWidget* browser = w.datasetBrowser();
        QTRY_VERIFY_WITH_TIMEOUT(browser->sourceOverview() != nullptr, 120000);
        QListWidget* pictures = browser->overviewPictures();
        QTRY_VERIFY(pictures->count() >= 1);
        QAction* explain = explainActionOf(pictures, 0);
        QVERIFY(explain);
        QVERIFY(!explain->isEnabled());
        QVERIFY2(explain->toolTip().contains(QStringLiteral("Evaluate workspace")), qPrintable(explain->toolTip()));
        static_cast<QMenu*>(explain->parent())->close();
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
