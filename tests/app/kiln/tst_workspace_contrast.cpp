// SPDX-License-Identifier: Apache-2.0
// Every workspace of the studio, rendered in the dark and in the light theme, is read back as
// pixels and its text measured against what it is drawn on: labels, buttons, table cells (the
// confusion matrix's heat map among them), chart tick labels and node cards must reach WCAG AA
// (4.5:1). The project is a real image folder with a run trained in the test, so Data shows
// pictures, Train a run's charts, Evaluate a real evaluation and Deploy the run's export form.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
// kiln-test-timeout: 600
#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QGraphicsView>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <qcustomplot.h>

#include <random>

#include <nlohmann/json.hpp>

#include "app/kiln/main_window.h"
#include "tests/app/kiln/contrast_checker.h"
#include "tests/app/kiln/trained_project.h"
#include "ui/common/theme.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/dataset_browser/sample_list_model.h"
#include "ui/evaluate/evaluate_view.h"
#include "ui/evaluate/evaluation_models.h"
#include "ui/graph_editor/card_detail.h"
#include "ui/graph_editor/graph_editor_widget.h"
#include "ui/graph_editor/graph_items.h"
#include "ui/graph_editor/graph_scene.h"

using kiln::app::MainWindow;
using Workspace = kiln::app::MainWindow::Workspace;
using kiln::test::Checker;
using kiln::ui::Theme;
using kiln::ui::ThemeChoice;
using nlohmann::json;

Q_DECLARE_METATYPE(ThemeChoice)

namespace {

// Three classes of 12x12 grey pictures (bright top, bright left, a bright centre) with noise,
// 24 of each, as PNG files in class folders.
bool writePictures(const QString& root) {
    std::mt19937 gen(3);
    std::uniform_int_distribution<int> noise(0, 60);
    const char* classes[] = {"top", "left", "centre"};
    for (int c = 0; c < 3; ++c) {
        const QString dir = root + QLatin1Char('/') + QLatin1String(classes[c]);
        if (!QDir().mkpath(dir)) return false;
        for (int i = 0; i < 24; ++i) {
            QImage img(12, 12, QImage::Format_Grayscale8);
            for (int y = 0; y < 12; ++y)
                for (int x = 0; x < 12; ++x) {
                    const bool lit = c == 0 ? y < 6 : c == 1 ? x < 6 : (std::abs(x - 6) < 3 && std::abs(y - 6) < 3);
                    const int v = (lit ? 190 : 20) + noise(gen);
                    img.scanLine(y)[x] = uchar(std::min(v, 255));
                }
            if (!img.save(QStringLiteral("%1/%2.png").arg(dir).arg(i, 2, 10, QLatin1Char('0')))) return false;
        }
    }
    return true;
}

json projectJson(const QString& pictures) {
    return {{"format", "kiln-project"},
            {"version", 2},
            {"name", "shapes"},
            {"graph",
             {{"nodes", json::array({{{"name", "image"}, {"op", "Input"}, {"attrs", {{"shape", {12, 12, 1}}}}},
                                     {{"name", "flatten"}, {"op", "Flatten"}, {"inputs", {"image"}}},
                                     {{"name", "hidden"}, {"op", "Dense"}, {"inputs", {"flatten"}},
                                      {"attrs", {{"units", 16}, {"activation", "relu"}}}},
                                     {{"name", "logits"}, {"op", "Dense"}, {"inputs", {"hidden"}}, {"attrs", {{"units", 3}}}}})},
              {"outputs", {"logits"}}}},
            {"data",
             {{"format", "folder"},
              {"path", pictures.toStdString()},
              {"split", {{"validation", 0.25}, {"test", 0.25}}},
              {"transforms", json::array({{{"type", "decode"}, {"channels", 1}}, {{"type", "normalize"}, {"preset", "unit"}}})},
              {"inputs", {{"image", "image"}}}}},
            {"training",
             {{"epochs", 2},
              {"batch_size", 8},
              {"seed", 5},
              {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
              {"loss", {{"type", "SparseCategoricalCrossentropy"}, {"from_logits", true}}},
              {"metrics", {"accuracy"}}}}};
}

void settle(int rounds = 5) {
    for (int i = 0; i < rounds; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(10);
    }
}

void clickWorkspace(MainWindow& w, Workspace which) {
    auto* bar = w.findChild<QToolBar*>(QStringLiteral("workspaceBar"));
    QVERIFY(bar);
    QWidget* button = bar->widgetForAction(w.workspaceAction(which));
    QVERIFY(button);
    QTest::mouseClick(button, Qt::LeftButton);
    settle();
}

}  // namespace

class TestWorkspaceContrast : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_project;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_workspace_contrast"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        const QString pictures = m_dir.filePath(QStringLiteral("pictures"));
        QVERIFY(writePictures(pictures));
        QDir(m_dir.path()).mkpath(QStringLiteral("project"));
        m_project = m_dir.filePath(QStringLiteral("project/shapes.kiln"));
        // A real run in the project's history: Train charts it, Evaluate and Deploy take it.
        const QString trained = kiln::test::saveAndTrain(projectJson(pictures), m_project);
        QVERIFY2(trained.isEmpty(), qPrintable(trained));
    }

    void cleanupTestCase() { Theme::instance().apply(ThemeChoice::Light); }

    void workspacesMeetAA_data() {
        QTest::addColumn<ThemeChoice>("theme");
        QTest::newRow("dark") << ThemeChoice::Dark;
        QTest::newRow("light") << ThemeChoice::Light;
    }

    void workspacesMeetAA() {
        QFETCH(ThemeChoice, theme);
        Theme::instance().apply(theme);
        const QString themeName = Theme::id(theme);
        MainWindow w(m_dir.filePath(QStringLiteral("recovery-") + themeName));
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openProject(m_project));
        settle();

        // Design: the canvas at its opening zoom, the palette, inspector and summary around it.
        clickWorkspace(w, Workspace::Design);
        {
            QTRY_VERIFY(!w.editor()->view()->items(w.editor()->view()->viewport()->rect()).isEmpty());
            settle();
            Checker check(w.grab().toImage(), &w);
            check.cards(w.editor()->view());
            check.labels(&w);
            check.buttons(&w);
            check.verify(themeName + QStringLiteral("_design"), 4);
        }

        // Data: the folder scanned, its class table, the class chart and the browser's labels.
        clickWorkspace(w, Workspace::Data);
        {
            auto* browser = w.datasetBrowser();
            QTRY_VERIFY_WITH_TIMEOUT(!browser->isScanning() && browser->model()->rowCount() == 72, 30000);
            QTest::qWait(1000);  // the counts, the chart and the thumbnails land in later turns of the loop
            settle();
            Checker check(w.grab().toImage(), &w);
            check.labels(&w);
            check.buttons(&w);
            for (const QTableView* t : browser->findChildren<QTableView*>()) check.cells(t);
            for (const QCustomPlot* p : browser->findChildren<QCustomPlot*>()) check.chart(p);
            check.verify(themeName + QStringLiteral("_data"), 6);
        }

        // Train: the run's charts and the form beside them.
        clickWorkspace(w, Workspace::Train);
        {
            QTest::qWait(500);
            settle();
            Checker check(w.grab().toImage(), &w);
            check.labels(&w);
            check.buttons(&w);
            int charts = 0;
            for (const QCustomPlot* p : w.findChildren<QCustomPlot*>())
                if (p->isVisible()) check.chart(p), ++charts;
            QVERIFY(charts >= 1);
            check.verify(themeName + QStringLiteral("_train"), 6);
        }

        // Evaluate: a real evaluation of the run, the confusion matrix's heat map cell by cell.
        QSignalSpy evaluated(w.evaluateView(), &kiln::ui::evaluate::EvaluateView::finished);
        clickWorkspace(w, Workspace::Evaluate);
        {
            QTRY_COMPARE_WITH_TIMEOUT(evaluated.size(), 1, 120000);
            QVERIFY2(evaluated.first().at(0).toBool(), qPrintable(evaluated.first().at(1).toString()));
            // The view reopens at the tab last shown (kept in the settings): bring the matrix's forward.
            auto* matrix = w.evaluateView()->findChild<QTableView*>(QStringLiteral("confusionView"));
            QVERIFY(matrix);
            auto* viewTabs = w.evaluateView()->findChild<QTabWidget*>();
            QVERIFY(viewTabs);
            for (int i = 0; i < viewTabs->count(); ++i)
                if (viewTabs->widget(i)->isAncestorOf(matrix)) viewTabs->setCurrentIndex(i);
            settle();
            Checker check(w.grab().toImage(), &w);
            check.labels(&w);
            check.buttons(&w);
            QVERIFY(matrix->isVisible());
            const int before = check.count();
            check.cells(matrix);
            QCOMPARE(check.count() - before, 9);  // every cell of the 3 x 3 matrix has a count
            check.verify(themeName + QStringLiteral("_evaluate"), 12);
            // The curves: the ROC tab's chart.
            auto* tabs = w.evaluateView()->findChild<QTabWidget*>();
            tabs->setCurrentWidget(w.evaluateView()->rocPlot());
            settle();
            Checker roc(w.grab().toImage(), &w);
            roc.chart(w.evaluateView()->rocPlot());
            roc.verify(themeName + QStringLiteral("_roc"), 2);
        }

        // Deploy: the export form given the run's weights, and the serving box.
        clickWorkspace(w, Workspace::Deploy);
        {
            settle();
            Checker check(w.grab().toImage(), &w);
            check.labels(&w);
            check.buttons(&w);
            check.verify(themeName + QStringLiteral("_deploy"), 6);
        }
    }
};

QTEST_MAIN(TestWorkspaceContrast)
#include "tst_workspace_contrast.moc"
