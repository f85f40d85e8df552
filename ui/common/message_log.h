// SPDX-License-Identifier: Apache-2.0
// The application's message log: Qt messages from any thread (qInstallMessageHandler) and app
// reports, kept in a bounded list on the GUI thread and shown by the log panel.
#pragma once

#include <QDateTime>
#include <QLoggingCategory>
#include <QObject>
#include <QString>
#include <QVector>

namespace kiln::ui {

// Messages in this category at warning level or above also appear as a notice above the canvas
// (from any thread): qCWarning(kiln::ui::lcNotice) << "...". Others only reach the log.
Q_DECLARE_LOGGING_CATEGORY(lcNotice)

enum class Severity { Debug = 0, Info = 1, Warning = 2, Error = 3 };

struct LogEntry {
    QDateTime time;
    Severity severity = Severity::Info;
    QString category;  // Qt logging category ("kiln.notice", "default", ...)
    QString text;
};

QString severityName(Severity s);  // translated: "Debug", "Info", "Warning", "Error"

// One instance per application, living on the thread that created it (the GUI thread).
// append() may be called from any thread: entries from other threads are queued to the owner.
class MessageLog : public QObject {
    Q_OBJECT

public:
    static constexpr int kMaxEntries = 5000;

    explicit MessageLog(QObject* parent = nullptr);
    ~MessageLog() override;

    // The log the message handler forwards to (the most recently created one), or nullptr.
    static MessageLog* instance();
    // Routes qDebug/qInfo/qWarning/qCritical of every thread into instance(); the previous handler
    // still runs (so messages still reach the terminal). Idempotent.
    static void installMessageHandler();

    void append(Severity severity, const QString& text, const QString& category = {});
    const QVector<LogEntry>& entries() const { return m_entries; }
    void clear();

signals:
    // Emitted on the owner thread. `dropped` entries were removed from the front first.
    void entryAdded(const kiln::ui::LogEntry& entry, int dropped);
    void cleared();

private:
    void appendHere(const LogEntry& entry);
    QVector<LogEntry> m_entries;
};

}  // namespace kiln::ui

Q_DECLARE_METATYPE(kiln::ui::LogEntry)
