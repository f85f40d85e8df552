// SPDX-License-Identifier: Apache-2.0
// Recovery files: atomic write, envelope round trip, keys per project, orphans after a "crash"
// (a file no live document of this process owns), files of other running processes left alone.
// kiln-test-labels: ui
// kiln-test-libs: kiln_ui_common
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "ui/common/recovery_store.h"

using namespace kiln::ui;

namespace {
QByteArray doc(const QString& name) {
    return QJsonDocument(QJsonObject{{QStringLiteral("format"), QStringLiteral("kiln-project")}, {QStringLiteral("name"), name}}).toJson();
}

QString nameIn(const QByteArray& json) { return QJsonDocument::fromJson(json).object().value(QStringLiteral("name")).toString(); }

// Writes an envelope as another process would (pid given), bypassing this process's ownership.
void writeForeign(const QString& file, qint64 pid, const QString& program, const QString& projectPath) {
    QJsonObject o{{QStringLiteral("format"), QStringLiteral("kiln-recovery")},
                  {QStringLiteral("version"), 1},
                  {QStringLiteral("projectPath"), projectPath},
                  {QStringLiteral("name"), QStringLiteral("foreign")},
                  {QStringLiteral("savedAt"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                  {QStringLiteral("pid"), pid},
                  {QStringLiteral("program"), program},
                  {QStringLiteral("document"), QJsonDocument::fromJson(doc(QStringLiteral("foreign"))).object()}};
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(o).toJson());
}
}  // namespace

class TestRecoveryStore : public QObject {
    Q_OBJECT

private slots:
    void writeReadRemove() {
        QTemporaryDir dir;
        RecoveryStore store(dir.path() + QStringLiteral("/recovery"));
        const QString project = dir.path() + QStringLiteral("/a.kiln");
        QString error;
        QVERIFY2(store.write(project, QStringLiteral("s1"), QStringLiteral("alpha"), doc(QStringLiteral("alpha")), &error), qPrintable(error));
        const QString file = store.fileFor(project, QStringLiteral("s1"));
        QVERIFY(QFile::exists(file));
        // The same project maps to the same file whatever the session; untitled ones differ per session.
        QCOMPARE(store.fileFor(project, QStringLiteral("other")), file);
        QVERIFY(store.fileFor({}, QStringLiteral("s1")) != store.fileFor({}, QStringLiteral("s2")));
        // No temporary file is left next to it.
        QCOMPARE(QDir(store.directory()).entryList(QDir::Files).size(), 1);

        RecoveryEntry e;
        QByteArray json;
        QVERIFY(RecoveryStore::read(file, &e, &json, &error));
        QCOMPARE(e.projectPath, project);
        QCOMPARE(e.name, QStringLiteral("alpha"));
        QCOMPARE(e.pid, QCoreApplication::applicationPid());
        QVERIFY(qAbs(e.savedAt.secsTo(QDateTime::currentDateTimeUtc())) < 60);
        QCOMPARE(nameIn(json), QStringLiteral("alpha"));

        // Owned by a live document of this process: not an orphan.
        QVERIFY(store.orphans().isEmpty());
        QCOMPARE(store.entries().size(), 1);
        store.remove(project, QStringLiteral("s1"));
        QVERIFY(!QFile::exists(file));
    }

    void leftoverFileIsAnOrphan() {
        QTemporaryDir dir;
        RecoveryStore store(dir.path());
        const QString project = dir.path() + QStringLiteral("/b.kiln");
        QVERIFY(store.write(project, QStringLiteral("s"), QStringLiteral("beta"), doc(QStringLiteral("beta"))));
        const QString file = store.fileFor(project, QStringLiteral("s"));
        // A crashed session: the file stays, but nothing in this process owns it any more. Copy it
        // away, let the owner clean up, and put it back.
        QVERIFY(QFile::copy(file, file + QStringLiteral(".bak")));
        store.remove(project, QStringLiteral("s"));
        QVERIFY(QFile::rename(file + QStringLiteral(".bak"), file));
        const QList<RecoveryEntry> orphans = store.orphans();
        QCOMPARE(orphans.size(), 1);
        QCOMPARE(orphans.first().file, file);
        QCOMPARE(orphans.first().projectPath, project);
        QVERIFY(RecoveryStore::discard(file));
        QVERIFY(store.orphans().isEmpty());
    }

    void filesOfRunningProcessesAreNotOffered() {
        QTemporaryDir dir;
        RecoveryStore store(dir.path());
        QProcess sleeper;
        sleeper.start(QStringLiteral("sleep"), {QStringLiteral("30")});
        QVERIFY(sleeper.waitForStarted());
        writeForeign(dir.filePath(QStringLiteral("live.kiln-recovery")), sleeper.processId(), QStringLiteral("sleep"), {});
        // A pid that cannot be running (beyond pid_max): the writer crashed.
        writeForeign(dir.filePath(QStringLiteral("dead.kiln-recovery")), 0x7fffffff, QStringLiteral("kiln"), QStringLiteral("/x/dead.kiln"));
        // A running pid that now belongs to another program: the writer is gone too.
        writeForeign(dir.filePath(QStringLiteral("reused.kiln-recovery")), sleeper.processId(), QStringLiteral("kiln"),
                     QStringLiteral("/x/reused.kiln"));
        const QList<RecoveryEntry> orphans = store.orphans();
        sleeper.kill();
        sleeper.waitForFinished();
        QStringList offered;
        for (const RecoveryEntry& e : orphans) offered << e.projectPath;
        offered.sort();
        QCOMPARE(offered, (QStringList{QStringLiteral("/x/dead.kiln"), QStringLiteral("/x/reused.kiln")}));
        QCOMPARE(store.entries().size(), 3);
    }

    void badFilesAreSkippedNotFatal() {
        QTemporaryDir dir;
        RecoveryStore store(dir.path());
        QFile f(dir.filePath(QStringLiteral("broken.kiln-recovery")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ not json");
        f.close();
        QVERIFY(store.orphans().isEmpty());
        QString error;
        QVERIFY(!RecoveryStore::read(f.fileName(), nullptr, nullptr, &error));
        QVERIFY(!error.isEmpty());
        // A document that is not a JSON object is refused with a reason.
        QVERIFY(!store.write({}, QStringLiteral("s"), QStringLiteral("x"), "[1, 2]", &error));
        QVERIFY(error.contains(QLatin1String("JSON")));
    }

    void unwritableFolderReportsError() {
        QTemporaryDir dir;
        QFile blocker(dir.filePath(QStringLiteral("file")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        RecoveryStore store(dir.filePath(QStringLiteral("file/sub")));  // a folder below a plain file
        QString error;
        QVERIFY(!store.write({}, QStringLiteral("s"), QStringLiteral("x"), doc(QStringLiteral("x")), &error));
        QVERIFY(error.contains(QLatin1String("file/sub")));
    }
};

QTEST_GUILESS_MAIN(TestRecoveryStore)
#include "tst_recovery_store.moc"
