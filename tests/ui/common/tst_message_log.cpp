// SPDX-License-Identifier: Apache-2.0
// The message log and its panel: messages from other threads arrive on the GUI thread, the model
// passes QAbstractItemModelTester, and filter, copy, clear and the size bound work.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_common
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QListView>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QToolButton>

#include "ui/common/log_panel.h"
#include "ui/common/message_log.h"
#include "ui/common/resources.h"

using namespace kiln::ui;

class TestMessageLog : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        initCommonResources();
        MessageLog::installMessageHandler();
    }

    void warningFromAnotherThreadReachesThePanel() {
        MessageLog log;
        LogPanel panel(&log);
        QAbstractItemModelTester tester(panel.findChild<QListView*>(QStringLiteral("logView"))->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QSignalSpy added(&log, &MessageLog::entryAdded);

        QThread* worker = QThread::create([] { qWarning("disk nearly full on worker %d", 7); });
        worker->start();
        QVERIFY(worker->wait(5000));
        delete worker;
        // The entry is queued to the GUI thread: it appears only once the event loop runs.
        QTRY_VERIFY(!log.entries().isEmpty() && log.entries().last().text.contains(QLatin1String("disk nearly full on worker 7")));
        const LogEntry& e = log.entries().last();
        QCOMPARE(e.severity, Severity::Warning);
        QVERIFY(added.count() >= 1);
        QVERIFY(panel.visibleText().contains(QLatin1String("disk nearly full on worker 7")));
        QVERIFY(panel.revealEntry(QStringLiteral("worker 7")));
    }

    void entriesStayOnTheOwnerThread() {
        MessageLog log;
        QThread* owner = nullptr;
        connect(&log, &MessageLog::entryAdded, this, [&owner] { owner = QThread::currentThread(); });
        QThread* worker = QThread::create([&log] { log.append(Severity::Error, QStringLiteral("from worker")); });
        worker->start();
        QVERIFY(worker->wait(5000));
        delete worker;
        QTRY_COMPARE(log.entries().size(), 1);
        QCOMPARE(owner, QThread::currentThread());
    }

    void filterCopyAndClear() {
        MessageLog log;
        LogPanel panel(&log);
        QAbstractItemModelTester tester(panel.findChild<QListView*>(QStringLiteral("logView"))->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        log.append(Severity::Debug, QStringLiteral("debug line"));
        log.append(Severity::Info, QStringLiteral("info line"));
        log.append(Severity::Warning, QStringLiteral("warning line"));
        log.append(Severity::Error, QStringLiteral("error line"));
        QCOMPARE(panel.minimumSeverity(), Severity::Info);  // the default hides debug output
        QCOMPARE(panel.visibleRowCount(), 3);
        auto* box = panel.findChild<QComboBox*>(QStringLiteral("logSeverity"));
        box->setCurrentIndex(static_cast<int>(Severity::Warning));
        QCOMPARE(panel.visibleRowCount(), 2);
        QVERIFY(!panel.visibleText().contains(QLatin1String("info line")));
        box->setCurrentIndex(static_cast<int>(Severity::Debug));
        QCOMPARE(panel.visibleRowCount(), 4);

        panel.setMinimumSeverity(Severity::Error);
        panel.findChild<QToolButton*>(QStringLiteral("logCopy"))->click();
        const QString copied = QApplication::clipboard()->text();
        QVERIFY2(copied.contains(QLatin1String("error line")) && !copied.contains(QLatin1String("warning line")), qPrintable(copied));

        panel.findChild<QToolButton*>(QStringLiteral("logClear"))->click();
        QCOMPARE(log.entries().size(), 0);
        QCOMPARE(panel.visibleRowCount(), 0);
    }

    void logIsBounded() {
        MessageLog log;
        LogPanel panel(&log);
        panel.setMinimumSeverity(Severity::Debug);
        for (int i = 0; i < MessageLog::kMaxEntries + 25; ++i) log.append(Severity::Info, QStringLiteral("line %1").arg(i));
        QCOMPARE(log.entries().size(), MessageLog::kMaxEntries);
        QCOMPARE(log.entries().first().text, QStringLiteral("line 25"));
        QCOMPARE(panel.visibleRowCount(), MessageLog::kMaxEntries);
    }

    void noticeCategoryIsTagged() {
        MessageLog log;
        qCWarning(lcNotice) << "background worker stopped";
        QTRY_VERIFY(!log.entries().isEmpty());
        QCOMPARE(log.entries().last().category, QStringLiteral("kiln.notice"));
    }
};

QTEST_MAIN(TestMessageLog)
#include "tst_message_log.moc"
