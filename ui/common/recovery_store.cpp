// SPDX-License-Identifier: Apache-2.0
// Recovery files: envelope {"format": "kiln-recovery", "version": 1, "projectPath", "name",
// "savedAt", "pid", "document": {...}} written with QSaveFile (temp file + rename).
#include "ui/common/recovery_store.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QSaveFile>
#include <QSet>
#include <QStandardPaths>

#include <algorithm>

#include <cerrno>
#include <signal.h>

namespace kiln::ui {

namespace {
const QString kSuffix = QStringLiteral(".kiln-recovery");

// Recovery files of documents open in this process: never offered as orphans.
QMutex g_ownedMutex;
QSet<QString>& owned() {
    static QSet<QString> s;
    return s;
}

// The process name as the kernel shows it (/proc/<pid>/comm: at most 15 characters).
QString programName() { return QFileInfo(QCoreApplication::applicationFilePath()).fileName().left(15); }

// True when `pid` runs and, where /proc tells, is the program that wrote the file (a pid reused
// by another program after a crash or a reboot does not hide the file).
bool writerAlive(qint64 pid, const QString& program) {
    if (pid <= 0) return false;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
    QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
    if (program.isEmpty() || !comm.open(QIODevice::ReadOnly)) return true;
    return QString::fromUtf8(comm.readAll()).trimmed() == program;
}
}  // namespace

QString RecoveryStore::defaultDirectory() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/recovery");
}

RecoveryStore::RecoveryStore(QString directory) : m_directory(std::move(directory)) {}

QString RecoveryStore::fileFor(const QString& projectPath, const QString& sessionKey) const {
    QString key;
    if (projectPath.isEmpty()) {
        key = QStringLiteral("untitled-") + sessionKey;
    } else {
        const QString abs = QDir::cleanPath(QFileInfo(projectPath).absoluteFilePath());
        key = QString::fromLatin1(QCryptographicHash::hash(abs.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
    }
    return m_directory + QLatin1Char('/') + key + kSuffix;
}

bool RecoveryStore::write(const QString& projectPath, const QString& sessionKey, const QString& name,
                          const QByteArray& documentJson, QString* error) {
    QJsonParseError parseError;
    QJsonDocument doc = QJsonDocument::fromJson(documentJson, &parseError);
    if (!doc.isObject()) {
        if (error) *error = QCoreApplication::translate("RecoveryStore", "the document is not a JSON object: %1").arg(parseError.errorString());
        return false;
    }
    if (!QDir().mkpath(m_directory)) {
        if (error) *error = QCoreApplication::translate("RecoveryStore", "cannot create the folder %1").arg(m_directory);
        return false;
    }
    QJsonObject envelope{{QStringLiteral("format"), QStringLiteral("kiln-recovery")},
                         {QStringLiteral("version"), 1},
                         {QStringLiteral("projectPath"), projectPath.isEmpty() ? QString() : QFileInfo(projectPath).absoluteFilePath()},
                         {QStringLiteral("name"), name},
                         {QStringLiteral("savedAt"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                         {QStringLiteral("pid"), QCoreApplication::applicationPid()},
                         {QStringLiteral("program"), programName()},
                         {QStringLiteral("document"), doc.object()}};
    const QString path = fileFor(projectPath, sessionKey);
    {
        QMutexLocker lock(&g_ownedMutex);
        owned().insert(path);
    }
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(QJsonDocument(envelope).toJson(QJsonDocument::Compact)) < 0 || !out.commit()) {
        if (error) *error = QCoreApplication::translate("RecoveryStore", "cannot write %1: %2").arg(path, out.errorString());
        return false;
    }
    return true;
}

void RecoveryStore::remove(const QString& projectPath, const QString& sessionKey) {
    const QString path = fileFor(projectPath, sessionKey);
    QFile::remove(path);
    QMutexLocker lock(&g_ownedMutex);
    owned().remove(path);
}

bool RecoveryStore::read(const QString& file, RecoveryEntry* entry, QByteArray* documentJson, QString* error) {
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly)) {
        if (error) *error = in.errorString();
        return false;
    }
    QJsonParseError parseError;
    QJsonDocument doc = QJsonDocument::fromJson(in.readAll(), &parseError);
    QJsonObject o = doc.object();
    if (!doc.isObject() || o.value(QStringLiteral("format")).toString() != QLatin1String("kiln-recovery") ||
        !o.value(QStringLiteral("document")).isObject()) {
        if (error)
            *error = parseError.error != QJsonParseError::NoError ? parseError.errorString()
                                                                   : QCoreApplication::translate("RecoveryStore", "not a Kiln recovery file");
        return false;
    }
    if (entry) {
        entry->file = file;
        entry->projectPath = o.value(QStringLiteral("projectPath")).toString();
        entry->name = o.value(QStringLiteral("name")).toString();
        entry->savedAt = QDateTime::fromString(o.value(QStringLiteral("savedAt")).toString(), Qt::ISODateWithMs);
        entry->pid = o.value(QStringLiteral("pid")).toInteger();
        entry->program = o.value(QStringLiteral("program")).toString();
    }
    if (documentJson) *documentJson = QJsonDocument(o.value(QStringLiteral("document")).toObject()).toJson(QJsonDocument::Indented);
    return true;
}

bool RecoveryStore::discard(const QString& file) {
    {
        QMutexLocker lock(&g_ownedMutex);
        owned().remove(file);
    }
    return QFile::remove(file) || !QFileInfo::exists(file);
}

QList<RecoveryEntry> RecoveryStore::entries() const {
    QList<RecoveryEntry> out;
    const QDir dir(m_directory);
    for (const QFileInfo& fi : dir.entryInfoList({QStringLiteral("*") + kSuffix}, QDir::Files)) {
        RecoveryEntry e;
        if (read(fi.absoluteFilePath(), &e, nullptr)) out << e;
    }
    std::sort(out.begin(), out.end(), [](const RecoveryEntry& a, const RecoveryEntry& b) { return a.savedAt > b.savedAt; });
    return out;
}

QList<RecoveryEntry> RecoveryStore::orphans() const {
    QList<RecoveryEntry> out;
    const qint64 self = QCoreApplication::applicationPid();
    QMutexLocker lock(&g_ownedMutex);
    for (const RecoveryEntry& e : entries()) {
        if (owned().contains(e.file)) continue;
        if (e.pid != self && writerAlive(e.pid, e.program)) continue;  // another Kiln still running owns it
        out << e;
    }
    return out;
}

}  // namespace kiln::ui
