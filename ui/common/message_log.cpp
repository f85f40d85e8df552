// SPDX-License-Identifier: Apache-2.0
// Message log: the Qt message handler and the thread hop to the GUI thread.
#include "ui/common/message_log.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QThread>

#include <atomic>
#include <mutex>

namespace kiln::ui {

Q_LOGGING_CATEGORY(lcNotice, "kiln.notice")

namespace {
std::atomic<MessageLog*> g_instance{nullptr};
QtMessageHandler g_previous = nullptr;
std::once_flag g_installOnce;
thread_local bool t_inHandler = false;  // a message raised while forwarding one is not forwarded

Severity severityOf(QtMsgType type) {
    switch (type) {
    case QtDebugMsg: return Severity::Debug;
    case QtInfoMsg: return Severity::Info;
    case QtWarningMsg: return Severity::Warning;
    case QtCriticalMsg:
    case QtFatalMsg: return Severity::Error;
    }
    return Severity::Info;
}

void handler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (g_previous) g_previous(type, context, message);
    if (t_inHandler || type == QtFatalMsg) return;
    t_inHandler = true;
    if (MessageLog* log = g_instance.load())
        log->append(severityOf(type), message, QString::fromUtf8(context.category ? context.category : "default"));
    t_inHandler = false;
}
}  // namespace

QString severityName(Severity s) {
    switch (s) {
    case Severity::Debug: return MessageLog::tr("Debug");
    case Severity::Info: return MessageLog::tr("Info");
    case Severity::Warning: return MessageLog::tr("Warning");
    case Severity::Error: return MessageLog::tr("Error");
    }
    return {};
}

MessageLog::MessageLog(QObject* parent) : QObject(parent) {
    qRegisterMetaType<kiln::ui::LogEntry>();
    g_instance.store(this);
}

MessageLog::~MessageLog() {
    MessageLog* self = this;
    g_instance.compare_exchange_strong(self, nullptr);
}

MessageLog* MessageLog::instance() { return g_instance.load(); }

void MessageLog::installMessageHandler() {
    std::call_once(g_installOnce, [] { g_previous = qInstallMessageHandler(handler); });
}

void MessageLog::append(Severity severity, const QString& text, const QString& category) {
    LogEntry entry{QDateTime::currentDateTime(), severity, category, text};
    if (QThread::currentThread() == thread()) {
        appendHere(entry);
        return;
    }
    // Another thread: hand a copy to the owner thread (the event is dropped if the log is gone).
    QMetaObject::invokeMethod(this, [this, entry] { appendHere(entry); }, Qt::QueuedConnection);
}

void MessageLog::appendHere(const LogEntry& entry) {
    int dropped = 0;
    if (m_entries.size() >= kMaxEntries) {
        dropped = m_entries.size() - kMaxEntries + 1;
        m_entries.remove(0, dropped);
    }
    m_entries.push_back(entry);
    emit entryAdded(entry, dropped);
}

void MessageLog::clear() {
    m_entries.clear();
    emit cleared();
}

}  // namespace kiln::ui
