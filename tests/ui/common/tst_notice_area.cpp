// SPDX-License-Identifier: Apache-2.0
// Notices are non-modal: posting one leaves the window usable; actions, Details and dismissal work.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_common
#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/notice_area.h"
#include "ui/common/resources.h"

using namespace kiln::ui;

class TestNoticeArea : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { initCommonResources(); }

    void noticesDoNotBlockInput() {
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* notices = new NoticeArea;
        auto* edit = new QLineEdit;
        layout->addWidget(notices);
        layout->addWidget(edit);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!notices->isVisible());

        const int id = notices->post(Severity::Warning, QStringLiteral("The data worker stopped."));
        QVERIFY(notices->isVisible());
        QCOMPARE(notices->count(), 1);
        QCOMPARE(notices->text(id), QStringLiteral("The data worker stopped."));
        // No modal window exists and typing still reaches the editor.
        QCOMPARE(QApplication::activeModalWidget(), nullptr);
        QCOMPARE(QGuiApplication::modalWindow(), nullptr);
        edit->setFocus();
        QTest::keyClicks(edit, QStringLiteral("still typing"));
        QCOMPARE(edit->text(), QStringLiteral("still typing"));

        QSignalSpy details(notices, &NoticeArea::detailsRequested);
        auto* link = notices->noticeWidget(id)->findChild<QLabel*>(QStringLiteral("noticeDetails"));
        QVERIFY(link);
        emit link->linkActivated(QStringLiteral("details"));
        QCOMPARE(details.count(), 1);
        QCOMPARE(details.first().at(1).toString(), QStringLiteral("The data worker stopped."));

        notices->noticeWidget(id)->findChild<QToolButton*>(QStringLiteral("noticeClose"))->click();
        QCOMPARE(notices->count(), 0);
        QVERIFY(!notices->isVisible());
    }

    void actionsRunAndClose() {
        NoticeArea notices;
        notices.show();
        int restored = 0;
        const int id = notices.post(Severity::Info, QStringLiteral("Recovered work found."),
                                    {{QStringLiteral("Restore"), [&restored] { ++restored; }, QStringLiteral("restoreButton")}}, false);
        QVERIFY(!notices.noticeWidget(id)->findChild<QLabel*>(QStringLiteral("noticeDetails")));
        notices.noticeWidget(id)->findChild<QPushButton*>(QStringLiteral("restoreButton"))->click();
        QCOMPARE(restored, 1);
        QCOMPARE(notices.count(), 0);
    }

    void oldNoticesGiveWay() {
        NoticeArea notices;
        QList<int> ids;
        for (int i = 0; i < NoticeArea::kMaxNotices + 2; ++i) ids << notices.post(Severity::Error, QStringLiteral("problem %1").arg(i));
        QCOMPARE(notices.count(), NoticeArea::kMaxNotices);
        QCOMPARE(notices.ids().first(), ids[2]);
        QCOMPARE(notices.text(ids[0]), QString());
        notices.dismissAll();
        QCOMPARE(notices.count(), 0);
    }
};

QTEST_MAIN(TestNoticeArea)
#include "tst_notice_area.moc"
