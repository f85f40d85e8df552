// SPDX-License-Identifier: Apache-2.0
// The studio's main window end to end: new/open/save/save-as, recent projects, the dirty mark,
// the close prompt, recovery after a simulated crash, bad files, docks, language and notices.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QTranslator>
#include <QUndoStack>

#include "app/kiln/main_window.h"
#include "engine/io/project.h"
#include "ui/common/app_settings.h"
#include "ui/common/log_panel.h"
#include "ui/common/notice_area.h"
#include "ui/graph_editor/editor_document.h"

using kiln::app::MainWindow;
using namespace kiln::ui;

namespace {
const QString kExample = QStringLiteral(KILN_SOURCE_DIR "/resources/examples/fashion_cnn.kiln");

// Answers the next modal message box with this object name by clicking `button` (polling, as the
// box runs its own event loop). Keeps the box's text.
class BoxAnswerer : public QObject {
public:
    BoxAnswerer(const QString& name, QMessageBox::StandardButton button) : m_name(name), m_button(button) {
        connect(&m_timer, &QTimer::timeout, this, [this] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box || box->objectName() != m_name) return;
            text = box->text() + QLatin1Char('\n') + box->informativeText();
            answered = true;
            m_timer.stop();
            box->button(m_button)->click();
        });
        m_timer.start(20);
    }
    QString text;
    bool answered = false;

private:
    QTimer m_timer;
    QString m_name;
    QMessageBox::StandardButton m_button;
};

class MarkingTranslator : public QTranslator {
public:
    QString translate(const char* context, const char* source, const char*, int) const override {
        if (QByteArray(context) != "kiln::app::MainWindow") return {};
        return QLatin1Char('<') + QString::fromUtf8(source) + QLatin1Char('>');
    }
    bool isEmpty() const override { return false; }
};

int nodeCount(const QString& path) {
    auto r = kiln::engine::io::loadProject(path.toStdString());
    return r.ok() ? static_cast<int>(r.value().graph.nodes.size()) : -1;
}
}  // namespace

class TestKilnApp : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString recoveryDir() const { return m_dir.filePath(QStringLiteral("recovery")); }
    QString copyExample(const QString& name) {
        const QString path = m_dir.filePath(name);
        QFile::remove(path);
        if (!QFile::copy(kExample, path)) return {};
        QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        return path;
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_kiln_app"));
        QVERIFY(m_dir.isValid());
    }
    void init() {
        QSettings().clear();
        QDir(recoveryDir()).removeRecursively();
    }

    void newOpenSaveSaveAsRoundTrip() {
        MainWindow w(recoveryDir());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.document()->filePath().isEmpty());
        QVERIFY(w.windowTitle().contains(QLatin1String("Untitled")));

        const QString path = copyExample(QStringLiteral("round.kiln"));
        const int nodes = nodeCount(path);
        QVERIFY(nodes > 3);
        QVERIFY(w.openProject(path));
        QCOMPARE(w.document()->filePath(), path);
        QCOMPARE(w.projectName(), QStringLiteral("fashion_cnn"));
        QVERIFY(w.windowTitle().contains(QLatin1String("fashion_cnn")));
        QVERIFY(!w.isWindowModified());

        // An edit marks the window dirty; Save writes it and clears the mark.
        w.document()->addNode("Dense", QPointF(50, 50));
        QVERIFY(w.isWindowModified());
        QVERIFY(w.save());
        QVERIFY(!w.isWindowModified());
        QCOMPARE(nodeCount(path), nodes + 1);

        const QString other = m_dir.filePath(QStringLiteral("round_copy.kiln"));
        w.document()->addNode("Dropout", QPointF(80, 80));
        QVERIFY(w.saveAs(other));
        QCOMPARE(w.document()->filePath(), other);
        QCOMPARE(nodeCount(other), nodes + 2);
        QCOMPARE(nodeCount(path), nodes + 1);
        QCOMPARE(AppSettings::recentProjects().value(0), other);
        QCOMPARE(AppSettings::recentProjects().value(1), path);

        QVERIFY(w.newProject());
        QVERIFY(w.document()->filePath().isEmpty());
        QVERIFY(!w.isWindowModified());
        QCOMPARE(static_cast<int>(w.document()->nodes().size()), 1);
    }

    void dirtyMarkFollowsUndo() {
        MainWindow w(recoveryDir());
        QVERIFY(w.openProject(copyExample(QStringLiteral("dirty.kiln"))));
        QVERIFY(w.windowTitle().contains(QLatin1String("[*]")));  // where Qt draws the mark
        w.document()->addNode("Dense", QPointF(10, 10));
        QVERIFY(w.isWindowModified());
        w.document()->undoStack()->undo();
        QVERIFY(!w.isWindowModified());
    }

    void trainingSettingsEditsAreUndoable() {
        MainWindow w(recoveryDir());
        QVERIFY(w.openProject(copyExample(QStringLiteral("settings.kiln"))));
        const int before = w.document()->project().training.value("epochs", 0);
        auto* epochs = w.findChild<QSpinBox*>(QStringLiteral("epochs"));
        QVERIFY(epochs);
        QCOMPARE(epochs->value(), before);
        const int graphNodes = int(w.document()->nodes().size());
        epochs->setValue(before + 7);
        QCOMPARE(w.document()->project().training["epochs"].get<int>(), before + 7);
        QVERIFY(w.isWindowModified());
        QCOMPARE(int(w.document()->nodes().size()), graphNodes);  // the graph stays as it was
        w.document()->undoStack()->undo();
        QCOMPARE(w.document()->project().training["epochs"].get<int>(), before);
        QCOMPARE(epochs->value(), before);  // the form shows the document again
        QVERIFY(!w.isWindowModified());
        w.document()->undoStack()->redo();
        QCOMPARE(epochs->value(), before + 7);
    }

    void recentProjectsMenu() {
        const QString a = copyExample(QStringLiteral("recent_a.kiln"));
        const QString b = copyExample(QStringLiteral("recent_b.kiln"));
        MainWindow w(recoveryDir());
        QVERIFY(w.openProject(a));
        QVERIFY(w.openProject(b));
        auto* menu = w.findChild<QMenu*>(QStringLiteral("menuRecent"));
        QVERIFY(menu);
        emit menu->aboutToShow();
        QStringList paths;
        for (QAction* act : menu->actions())
            if (!act->data().toString().isEmpty()) paths << act->data().toString();
        QCOMPARE(paths, (QStringList{b, a}));
        // A file deleted since is pruned from the menu.
        QVERIFY(QFile::remove(a));
        emit menu->aboutToShow();
        paths.clear();
        for (QAction* act : menu->actions())
            if (!act->data().toString().isEmpty()) paths << act->data().toString();
        QCOMPARE(paths, QStringList{b});
        // Opening it anyway gives an error dialog, not a crash.
        BoxAnswerer answer(QStringLiteral("openErrorBox"), QMessageBox::Ok);
        QVERIFY(!w.openProject(a));
        QVERIFY(answer.answered);
        QVERIFY(answer.text.contains(QLatin1String("recent_a.kiln")));
    }

    void examplesMenuListsShippedProjects() {
        MainWindow w(recoveryDir());
        auto* menu = w.findChild<QMenu*>(QStringLiteral("menuExamples"));
        emit menu->aboutToShow();
        QAction* cnn = nullptr;
        for (QAction* act : menu->actions())
            if (act->data().toString().endsWith(QLatin1String("fashion_cnn.kiln"))) cnn = act;
        QVERIFY(cnn);
        QVERIFY(MainWindow::exampleProjects().size() >= 4);
        cnn->trigger();
        QCOMPARE(w.projectName(), QStringLiteral("fashion_cnn"));
        QVERIFY(w.document()->nodes().size() > 3);
    }

    // "Explain with run…" from the dataset browser on a project that has no trained run yet: a
    // message says to train first, and no explanation opens.
    void explainPictureWithoutRunSaysSo() {
        const QString path = copyExample(QStringLiteral("explain.kiln"));
        MainWindow w(recoveryDir());
        w.show();
        QVERIFY(w.openProject(path));
        BoxAnswerer ok(QStringLiteral("noRunToExplainBox"), QMessageBox::Ok);
        w.explainPicture(m_dir.filePath(QStringLiteral("picture.png")));
        QVERIFY(ok.answered);
        QVERIFY(ok.text.contains(QStringLiteral("No trained run yet")));
        QVERIFY(w.pictureExplanation() == nullptr);
    }

    void closeAsksAboutUnsavedChanges() {
        const QString path = copyExample(QStringLiteral("close.kiln"));
        const int nodes = nodeCount(path);
        {
            MainWindow w(recoveryDir());
            w.show();
            QVERIFY(w.openProject(path));
            w.document()->addNode("Dense", QPointF(0, 0));
            BoxAnswerer cancel(QStringLiteral("unsavedChangesBox"), QMessageBox::Cancel);
            QVERIFY(!w.close());
            QVERIFY(cancel.answered);
            QVERIFY(cancel.text.contains(QLatin1String("fashion_cnn")));
            QVERIFY(w.isVisible());
            BoxAnswerer discard(QStringLiteral("unsavedChangesBox"), QMessageBox::Discard);
            QVERIFY(w.close());
            QVERIFY(discard.answered);
            QCOMPARE(nodeCount(path), nodes);
        }
        {
            MainWindow w(recoveryDir());
            w.show();
            QVERIFY(w.openProject(path));
            w.document()->addNode("Dense", QPointF(0, 0));
            BoxAnswerer save(QStringLiteral("unsavedChangesBox"), QMessageBox::Save);
            QVERIFY(w.close());
            QVERIFY(save.answered);
            QCOMPARE(nodeCount(path), nodes + 1);
        }
        {
            MainWindow w(recoveryDir());  // nothing changed: no question at all
            w.show();
            QVERIFY(w.openProject(path));
            QVERIFY(w.close());
        }
    }

    void recoveryAfterSimulatedCrash() {
        const QString path = copyExample(QStringLiteral("crash.kiln"));
        const int nodes = nodeCount(path);
        QByteArray leftover;
        QString recoveryFile;
        {
            MainWindow a(recoveryDir());
            QVERIFY(a.openProject(path));
            QVERIFY(!a.autosaveNow());  // nothing unsaved, nothing written
            a.document()->addNode("Dense", QPointF(0, 0));
            a.document()->addNode("Dropout", QPointF(0, 60));
            QVERIFY(a.autosaveNow());
            recoveryFile = a.recoveryFile();
            QVERIFY(recoveryFile.startsWith(recoveryDir()));
            QFile f(recoveryFile);
            QVERIFY(f.open(QIODevice::ReadOnly));
            leftover = f.readAll();
            // A second window of the same process sees no orphan while `a` is alive.
            MainWindow peer(m_dir.filePath(QStringLiteral("recovery")));
            QCOMPARE(peer.notices()->count(), 0);
            BoxAnswerer discard(QStringLiteral("unsavedChangesBox"), QMessageBox::Discard);
            QVERIFY(a.close());
            QVERIFY(!QFile::exists(recoveryFile));  // a clean close leaves nothing behind
        }
        // The crash: the recovery file stays behind.
        {
            QFile f(recoveryFile);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(leftover);
        }
        MainWindow b(recoveryDir());
        b.show();
        QCOMPARE(b.notices()->count(), 1);
        QCOMPARE(QApplication::activeModalWidget(), nullptr);  // offered, not imposed
        QWidget* notice = b.notices()->noticeWidget(b.notices()->ids().first());
        QVERIFY(b.notices()->text(b.notices()->ids().first()).contains(QLatin1String("crash.kiln")));
        notice->findChild<QPushButton*>(QStringLiteral("restoreButton"))->click();
        QCOMPARE(b.document()->filePath(), path);
        QCOMPARE(static_cast<int>(b.document()->nodes().size()), nodes + 2);
        QVERIFY(b.isWindowModified());
        QCOMPARE(nodeCount(path), nodes);  // the project file itself is untouched until saved
        QVERIFY(QFile::exists(b.recoveryFile()));  // and the restored work stays protected
        QVERIFY(b.save());
        QVERIFY(!QFile::exists(b.recoveryFile()));
        QCOMPARE(nodeCount(path), nodes + 2);
        QVERIFY(b.close());

        // Discard removes a leftover file without touching the document.
        {
            QFile f(recoveryFile);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(leftover);
        }
        MainWindow c(recoveryDir());
        QCOMPARE(c.notices()->count(), 1);
        c.notices()->noticeWidget(c.notices()->ids().first())->findChild<QPushButton*>(QStringLiteral("discardButton"))->click();
        QVERIFY(!QFile::exists(recoveryFile));
        QVERIFY(c.document()->filePath().isEmpty());
    }

    void untitledWorkIsRecoveredToo() {
        QString file;
        QByteArray leftover;
        {
            MainWindow a(recoveryDir());
            a.document()->addNode("Dense", QPointF(0, 0));
            QVERIFY(a.autosaveNow());
            file = a.recoveryFile();
            QFile f(file);
            QVERIFY(f.open(QIODevice::ReadOnly));
            leftover = f.readAll();
            BoxAnswerer discard(QStringLiteral("unsavedChangesBox"), QMessageBox::Discard);
            QVERIFY(a.close());
        }
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(leftover);
        f.close();
        MainWindow b(recoveryDir());
        QCOMPARE(b.notices()->count(), 1);
        QVERIFY(b.restoreRecovery(file));
        QCOMPARE(static_cast<int>(b.document()->nodes().size()), 2);
        QVERIFY(b.document()->filePath().isEmpty());
        QVERIFY(!QFile::exists(file));  // taken over by b's own recovery file
        QVERIFY(QFile::exists(b.recoveryFile()));
        BoxAnswerer discard(QStringLiteral("unsavedChangesBox"), QMessageBox::Discard);
        QVERIFY(b.close());
        QVERIFY(!QFile::exists(b.recoveryFile()));
    }

    void autosaveFollowsSettings() {
        AppSettings::setAutosaveSeconds(7);
        MainWindow w(recoveryDir());
        QCOMPARE(w.autosaveIntervalMs(), 7000);
        AppSettings::setAutosaveSeconds(0);
        w.applySettings();
        QCOMPARE(w.autosaveIntervalMs(), 0);
    }

    void corruptFileNamesFileAndLine() {
        const QString bad = m_dir.filePath(QStringLiteral("corrupt.kiln"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\n  \"format\": \"kiln-project\",\n  \"version\": 2,,\n  \"name\": \"x\"\n}\n");
        f.close();
        MainWindow w(recoveryDir());
        w.show();
        const QString good = copyExample(QStringLiteral("good.kiln"));
        QVERIFY(w.openProject(good));
        const size_t before = w.document()->nodes().size();
        BoxAnswerer answer(QStringLiteral("openErrorBox"), QMessageBox::Ok);
        QVERIFY(!w.openProject(bad));
        QVERIFY(answer.answered);
        QVERIFY2(answer.text.contains(QLatin1String("corrupt.kiln:3")), qPrintable(answer.text));
        // The open document is untouched and the problem is in the log.
        QCOMPARE(w.document()->filePath(), good);
        QCOMPARE(w.document()->nodes().size(), before);
        bool logged = false;
        for (const LogEntry& e : w.messageLog()->entries())
            logged = logged || (e.severity == Severity::Error && e.text.contains(QLatin1String("corrupt.kiln:3")));
        QVERIFY(logged);
    }

    void docksSaveAndRestore() {
        {
            MainWindow w(recoveryDir());
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            for (const QString& id : {QStringLiteral("palette"), QStringLiteral("inspector"), QStringLiteral("summary"),
                                      QStringLiteral("datasets"), QStringLiteral("training"), QStringLiteral("log")}) {
                QVERIFY2(w.panel(id), qPrintable(id));
                QVERIFY2(w.findChild<QAction*>(QStringLiteral("view_") + id), qPrintable(id));
                QVERIFY(w.viewMenu()->actions().contains(w.panel(id)->toggleViewAction()));
            }
            w.panel(QStringLiteral("inspector"))->toggleViewAction()->trigger();
            QVERIFY(w.panel(QStringLiteral("inspector"))->isHidden());
            w.removeDockWidget(w.panel(QStringLiteral("palette")));
            w.addDockWidget(Qt::RightDockWidgetArea, w.panel(QStringLiteral("palette")));
            w.panel(QStringLiteral("palette"))->show();
            QVERIFY(w.close());
        }
        MainWindow again(recoveryDir());
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(again.panel(QStringLiteral("inspector"))->isHidden());
        QCOMPARE(again.dockWidgetArea(again.panel(QStringLiteral("palette"))), Qt::RightDockWidgetArea);
        again.resetLayout();
        QVERIFY(!again.panel(QStringLiteral("inspector"))->isHidden());
        QCOMPARE(again.dockWidgetArea(again.panel(QStringLiteral("palette"))), Qt::LeftDockWidgetArea);

        // A panel added later gets a View entry and a dock of its own.
        auto* extra = new QLabel(QStringLiteral("extra"));
        QDockWidget* dock = again.addPanel(QStringLiteral("extra"), QStringLiteral("Extra"), extra, Qt::RightDockWidgetArea);
        QVERIFY(dock);
        QCOMPARE(dock->objectName(), QStringLiteral("dock_extra"));
        QVERIFY(again.viewMenu()->actions().contains(dock->toggleViewAction()));
        QVERIFY(!again.addPanel(QStringLiteral("extra"), QStringLiteral("Again"), new QLabel, Qt::RightDockWidgetArea));
    }

    void languageSwitchRetranslatesTheWindow() {
        MainWindow w(recoveryDir());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.fileMenu()->title(), QStringLiteral("&File"));
        MarkingTranslator marker;
        QCoreApplication::installTranslator(&marker);
        QTRY_COMPARE(w.fileMenu()->title(), QStringLiteral("<&File>"));
        QCOMPARE(w.panel(QStringLiteral("summary"))->windowTitle(), QStringLiteral("<Summary>"));
        QVERIFY(w.windowTitle().startsWith(QLatin1Char('<')));
        QCoreApplication::removeTranslator(&marker);
        QTRY_COMPARE(w.fileMenu()->title(), QStringLiteral("&File"));
    }

    void backgroundProblemsAreNonModalNotices() {
        MainWindow w(recoveryDir());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // A warning in the notice category, from a worker thread.
        QThread* worker = QThread::create([] { qCWarning(lcNotice) << "data worker 3 stopped"; });
        worker->start();
        QVERIFY(worker->wait(5000));
        delete worker;
        QTRY_COMPARE(w.notices()->count(), 1);
        QCOMPARE(QApplication::activeModalWidget(), nullptr);
        QVERIFY(w.logPanel()->visibleText().contains(QLatin1String("data worker 3 stopped")));
        // An ordinary warning only reaches the log.
        QThread* other = QThread::create([] { qWarning("plain warning from a thread"); });
        other->start();
        QVERIFY(other->wait(5000));
        delete other;
        QTRY_VERIFY(w.logPanel()->visibleText().contains(QLatin1String("plain warning from a thread")));
        QCOMPARE(w.notices()->count(), 1);

        // Details opens the log.
        w.panel(QStringLiteral("log"))->hide();
        const int id = w.reportProblem(Severity::Error, QStringLiteral("Export stopped"), QStringLiteral("disk full at /tmp/x"));
        QCOMPARE(w.notices()->count(), 2);
        auto* link = w.notices()->noticeWidget(id)->findChild<QLabel*>(QStringLiteral("noticeDetails"));
        emit link->linkActivated(QStringLiteral("details"));
        QVERIFY(w.panel(QStringLiteral("log"))->isVisible());
        QVERIFY(w.logPanel()->visibleText().contains(QLatin1String("disk full at /tmp/x")));
    }
};

QTEST_MAIN(TestKilnApp)
#include "tst_kiln_app.moc"
