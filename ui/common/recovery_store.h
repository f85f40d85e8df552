// SPDX-License-Identifier: Apache-2.0
// Crash recovery files: while a document has unsaved changes, its content is written atomically
// every few seconds to <AppDataLocation>/recovery/<key>.kiln-recovery (key: a hash of the project
// path, or "untitled-<session>" for a new document). A clean save or close removes the file, so
// any file found at start-up belongs to a session that ended without cleaning up (a crash), unless
// the process that wrote it still runs (another Kiln window).
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

namespace kiln::ui {

struct RecoveryEntry {
    QString file;         // the recovery file itself
    QString projectPath;  // the project it stands for; empty for an untitled document
    QString name;         // the project's name when it was written
    QDateTime savedAt;
    qint64 pid = 0;       // the process that wrote it
    QString program;      // its program name (to tell a reused pid apart)
};

class RecoveryStore {
public:
    static QString defaultDirectory();  // <AppDataLocation>/recovery

    explicit RecoveryStore(QString directory = defaultDirectory());
    const QString& directory() const { return m_directory; }

    // The file used for a project path, or for an untitled document of this session key.
    QString fileFor(const QString& projectPath, const QString& sessionKey) const;

    // Writes the document (a JSON object's text) with an envelope naming the project, atomically.
    // Registers the file as owned by this process's live documents until remove()/release().
    bool write(const QString& projectPath, const QString& sessionKey, const QString& name, const QByteArray& documentJson,
               QString* error = nullptr);
    // Deletes the recovery file of a document (after a clean save or close).
    void remove(const QString& projectPath, const QString& sessionKey);

    // Recovery files left behind: not owned by a live document of this process and not written by
    // another process that is still running. Newest first. Unreadable files are skipped.
    QList<RecoveryEntry> orphans() const;
    QList<RecoveryEntry> entries() const;  // every readable file, owned or not

    // The document text stored in a recovery file.
    static bool read(const QString& file, RecoveryEntry* entry, QByteArray* documentJson, QString* error = nullptr);
    static bool discard(const QString& file);

private:
    QString m_directory;
};

}  // namespace kiln::ui
