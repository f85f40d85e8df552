// SPDX-License-Identifier: Apache-2.0
// Opening a project changes nothing in it: every bundled example, opened as a copy (File > Open)
// and as an example (File > Examples), is shown in every workspace — the data browser scans or
// reads its data, the training form, the Evaluate view and the export form fill in — and
// afterwards the document is unmodified, has no undo step, and saving it writes the same
// sections the file had.
// kiln-test-labels: ui
// kiln-test-libs: kiln_shell kiln_ui_all kiln_app_common
// kiln-test-timeout: 600
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QUndoStack>

#include <nlohmann/json.hpp>

#include "app/kiln/main_window.h"
#include "engine/io/project.h"
#include "ui/dataset_browser/dataset_browser_widget.h"
#include "ui/graph_editor/editor_document.h"

using kiln::app::MainWindow;
using Workspace = kiln::app::MainWindow::Workspace;

namespace {

void settle(int rounds = 5) {
    for (int i = 0; i < rounds; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(10);
    }
}

// Every workspace once, each given time to fill in what it shows.
void visitWorkspaces(MainWindow& w) {
    for (Workspace which : {Workspace::Data, Workspace::Train, Workspace::Evaluate, Workspace::Deploy, Workspace::Design}) {
        w.workspaceAction(which)->trigger();
        settle();
        QTRY_VERIFY_WITH_TIMEOUT(!w.datasetBrowser()->isScanning(), 60000);
        QTest::qWait(300);
        settle();
    }
}

nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
}

}  // namespace

class TestOpenUnmodified : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_open_unmodified"));
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        QVERIFY(!MainWindow::exampleProjects().isEmpty());
    }

    void examples_data() {
        QTest::addColumn<QString>("example");
        QTest::addColumn<bool>("asExample");
        for (const QString& path : MainWindow::exampleProjects()) {
            const QByteArray name = QFileInfo(path).completeBaseName().toUtf8();
            QTest::newRow(name + " copy") << path << false;
            QTest::newRow(name + " example") << path << true;
        }
    }

    void examples() {
        QFETCH(QString, example);
        QFETCH(bool, asExample);
        const QString name = QFileInfo(example).fileName();
        const QString folder = m_dir.filePath(QFileInfo(example).completeBaseName() + (asExample ? QStringLiteral("-ex") : QStringLiteral("-copy")));
        QVERIFY(QDir().mkpath(folder));
        QString opened = example;
        if (!asExample) {
            opened = folder + QLatin1Char('/') + name;
            QVERIFY(QFile::copy(example, opened));
            QFile::setPermissions(opened, QFile::ReadOwner | QFile::WriteOwner);
        }
        MainWindow w(folder + QStringLiteral("/recovery"));
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(asExample ? w.openExample(opened) : w.openProject(opened));
        settle();
        visitWorkspaces(w);
        const QUndoStack* undo = w.document()->undoStack();
        QVERIFY2(undo->count() == 0, qPrintable(QStringLiteral("opening it made the edit \"%1\"").arg(undo->undoText())));
        QVERIFY(!w.document()->isModified());
        QVERIFY(!w.isWindowModified());

        // What the studio would save is what the file holds.
        const nlohmann::json file = readJson(opened);
        QVERIFY(file.is_object());
        const kiln::engine::io::Project project = w.document()->project();
        for (const char* section : {"data", "training"}) {
            const nlohmann::json inFile = file.value(section, nlohmann::json());
            const nlohmann::json shown = section == std::string("data") ? project.data : project.training;
            if (inFile.is_null()) {
                QVERIFY2(shown.is_null() || shown.empty(), section);
            } else {
                QVERIFY2(shown == inFile, qPrintable(QStringLiteral("%1 differs: %2 against %3")
                                                         .arg(QLatin1String(section), QString::fromStdString(shown.dump()),
                                                              QString::fromStdString(inFile.dump()))));
            }
        }
    }
};

QTEST_MAIN(TestOpenUnmodified)
#include "tst_open_unmodified.moc"
