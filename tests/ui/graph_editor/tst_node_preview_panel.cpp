// SPDX-License-Identifier: Apache-2.0
// The editor's Preview in the studio: clicking a node's card shows its output on a Fashion-MNIST
// sample (feature maps for a convolution, a histogram for the logits) with the statistics the
// engine computes for the same node and sample; an attribute edit, other weights and a project
// without data update it, and the grid of feature maps scales every channel to its own range.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
// kiln-test-timeout: 300
#include <QtTest>

#include <QDockWidget>
#include <QElapsedTimer>
#include <QSettings>
#include <QStandardPaths>

#include "app/kiln/main_window.h"
#include "engine/api/node_preview.h"
#include "engine/io/project.h"
#include "engine/train/weights.h"
#include "ui/graph_editor/editor_document.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"
#include "ui/graph_editor/node_preview_panel.h"
#include "tests/test_data.h"

using kiln::app::MainWindow;
using namespace kiln;
using namespace kiln::ui;

using kiln::test::dataDir;

namespace {

// Clicks the card of node `name` in the canvas (scrolled into view first).
void clickNode(MainWindow& w, const char* name)
{
    GraphScene* scene = w.editor()->scene();
    NodeItem* item = scene->nodeItem(w.document()->idOf(name));
    QVERIFY(item);
    GraphView* view = w.editor()->view();
    const QPointF centre = item->mapToScene(QPointF(nodeWidth() / 2, nodeHeight() / 2));
    view->centerOn(centre);
    QCoreApplication::processEvents();
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(centre));
}

// The engine's own answer for a node of a project on its preview sample.
engine::api::NodeOutput engineOutput(const engine::io::Project& project, const std::string& path, const std::string& node,
                                     const std::string& weights = {})
{
    auto sample = engine::api::loadPreviewSample(project, path);
    if (!sample.ok()) qFatal("loadPreviewSample: %s", sample.error().toString().c_str());
    engine::ThreadPool pool(2);
    auto p = engine::api::NodePreviewer::create(project, weights, pool);
    if (!p.ok()) qFatal("NodePreviewer: %s", p.error().toString().c_str());
    auto out = (*p)->run(node, *sample);
    if (!out.ok()) qFatal("run: %s", out.error().toString().c_str());
    return std::move(out).value();
}

void compareStats(const engine::api::ValueStats& a, const engine::api::ValueStats& b)
{
    QCOMPARE(a.count, b.count);
    QCOMPARE(a.mean, b.mean);
    QCOMPARE(a.std, b.std);
    QCOMPARE(a.min, b.min);
    QCOMPARE(a.max, b.max);
}

}  // namespace

class TestNodePreviewPanel : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_node_preview_panel"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void featureMapGridScalesEachChannel()
    {
        // [1, 2, 2, 3] NHWC: channel 0 rises 0..3, channel 1 falls, channel 2 is constant.
        const std::vector<float> v = {0, 3, 5, 1, 2, 5, 2, 1, 5, 3, 0, 5};
        int shown = 0;
        const QImage img = featureMapGrid(v, 2, 2, 3, &shown);
        QCOMPARE(shown, 3);
        // 2x2 maps enlarged 12 times to 24 px tiles, two tiles a row, 2 px gaps.
        QCOMPARE(img.size(), QSize(2 * 24 + 2, 2 * 24 + 2));
        auto grey = [&](int x, int y) { return qGray(img.pixel(x, y)); };
        QCOMPARE(grey(0, 0), 0);      // channel 0, pixel (0, 0): its minimum
        QCOMPARE(grey(23, 23), 255);  // channel 0, pixel (1, 1): its maximum
        QCOMPARE(grey(12, 0), 85);    // channel 0, pixel (0, 1) = 1 of 0..3
        QCOMPARE(grey(26, 0), 255);   // channel 1, pixel (0, 0) = 3: its maximum
        QCOMPARE(grey(5, 30), 128);   // channel 2: constant, mid-grey
        int many = 0;
        const std::vector<float> wide(static_cast<size_t>(4 * 100), 1.0f);
        QVERIFY(!featureMapGrid(wide, 2, 2, 100, &many).isNull());
        QCOMPARE(many, kMaxTiles);
    }

    void selectEditAndSwitchWeightsInTheStudio()
    {
        if (!QFile::exists(dataDir() + QStringLiteral("/fashion-mnist/train-images-idx3-ubyte.gz"))) {
            QSKIP("Fashion-MNIST is not in the data cache (tools/fetch_data.sh)");
        }
        const QString path = m_dir.filePath(QStringLiteral("fashion_cnn.kiln"));
        QVERIFY(QFile::copy(QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln"), path));
        QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        MainWindow w(m_dir.filePath(QStringLiteral("recovery")));
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(path));
        QDockWidget* dock = w.panel(QStringLiteral("preview"));
        QVERIFY(dock);
        dock->show();
        dock->raise();
        auto* panel = w.findChild<NodePreviewPanel*>(QStringLiteral("nodePreview"));
        QVERIFY(panel);
        QTRY_VERIFY(panel->isVisible());
        QVERIFY(!panel->messageText().isEmpty());  // "Select a node..."

        // conv1: 16 feature maps of 28 x 28, from the first validation sample.
        QSignalSpy shown(panel, &NodePreviewPanel::previewShown);
        clickNode(w, "conv1");
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0 && panel->shown() && panel->shown()->node == QStringLiteral("conv1"), 60000);
        QVERIFY2(panel->shown()->ok, qPrintable(panel->shown()->error));
        const auto& conv = panel->shown()->output;
        QCOMPARE(conv.shape, (engine::Shape{1, 28, 28, 16}));
        QCOMPARE(panel->shown()->split, QStringLiteral("validation"));
        QVERIFY(!panel->featureMapImage().isNull());
        QVERIFY(!panel->histogramShown());
        const engine::io::Project project = w.document()->project();
        const auto expected = engineOutput(project, path.toStdString(), "conv1");
        compareStats(conv.stats, expected.stats);
        QCOMPARE(conv.values, expected.values);
        QVERIFY(panel->statsText().contains(QString::number(expected.stats.mean, 'g', 4)));
        // tools/preview_screenshot.sh runs this under Xvfb with KILN_SCREENSHOT set.
        if (const QByteArray shot = qgetenv("KILN_SCREENSHOT"); !shot.isEmpty()) {
            QTest::qWait(300);
            QVERIFY(w.grab().save(QString::fromLocal8Bit(shot)));
        }

        // logits: ten values, a histogram; the sample and the compiled model are reused, so the
        // answer comes quickly.
        shown.clear();
        QElapsedTimer clock;
        clock.start();
        clickNode(w, "logits");
        QTRY_VERIFY_WITH_TIMEOUT(panel->shown() && panel->shown()->node == QStringLiteral("logits"), 10000);
        const qint64 ms = clock.elapsed();
        qInfo("logits preview shown %lld ms after the click (worker: %.1f ms from the request)", ms,
              panel->shown()->milliseconds);
        QVERIFY2(ms < 1500, qPrintable(QString::number(ms)));
        QCOMPARE(panel->shown()->output.shape, (engine::Shape{1, 10}));
        QVERIFY(panel->histogramShown());
        QVERIFY(panel->featureMapImage().isNull());
        compareStats(panel->shown()->output.stats, engineOutput(project, path.toStdString(), "logits").stats);

        // An edit of the selected node's attribute: conv1 with 8 filters.
        clickNode(w, "conv1");
        QTRY_VERIFY_WITH_TIMEOUT(panel->shown() && panel->shown()->node == QStringLiteral("conv1"), 10000);
        QVERIFY(w.document()->setAttribute(w.document()->idOf("conv1"), "filters", engine::AttrValue(int64_t{8})).ok());
        QTRY_VERIFY_WITH_TIMEOUT(panel->shown() && panel->shown()->output.shape == (engine::Shape{1, 28, 28, 8}), 10000);
        const engine::io::Project edited = w.document()->project();
        compareStats(panel->shown()->output.stats, engineOutput(edited, path.toStdString(), "conv1").stats);

        // Other weights: every parameter 0.01 (as a trained run's weights file would give them).
        auto model = engine::ops::analyzeModel(edited.graph);
        QVERIFY(model.ok());
        auto params = engine::exec::ParamStore::create(*model, 1);
        for (auto& p : params.params())
            for (int64_t i = 0; i < p.value.numel(); ++i) p.value.data<float>()[i] = 0.01f;
        const QString weights = m_dir.filePath(QStringLiteral("flat.safetensors"));
        QVERIFY(engine::train::saveWeights(params, weights.toStdString()).ok());
        const std::vector<float> before = panel->shown()->output.values;
        panel->setWeights(weights, QStringLiteral("flat"));
        QTRY_VERIFY_WITH_TIMEOUT(panel->shown() && panel->shown()->weights.file == weights.toStdString(), 10000);
        QVERIFY(panel->shown()->output.values != before);
        compareStats(panel->shown()->output.stats,
                     engineOutput(edited, path.toStdString(), "conv1", weights.toStdString()).stats);
        panel->setWeights(QString());

        // No data: the reason as text, no crash.
        w.document()->setSections(nlohmann::json::object(), edited.training);
        QTRY_VERIFY_WITH_TIMEOUT(panel->shown() && !panel->shown()->ok, 10000);
        QVERIFY2(panel->messageText().contains(QStringLiteral("data")), qPrintable(panel->messageText()));
        QVERIFY(panel->featureMapImage().isNull());
    }
};

QTEST_MAIN(TestNodePreviewPanel)
#include "tst_node_preview_panel.moc"
