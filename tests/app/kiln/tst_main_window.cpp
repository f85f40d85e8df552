// SPDX-License-Identifier: Apache-2.0
// The studio window as a new user first sees it: fashion_cnn.kiln opened in a 1600x1000 window
// shows readable cards from the model's input down, the canvas gets most of the width, the
// overview moves the view when clicked, and Fit still shows the whole diagram.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>

#include "app/kiln/main_window.h"
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
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
