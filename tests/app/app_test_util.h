// SPDX-License-Identifier: Apache-2.0
// Shared by the tests that run Kiln's programs: running one and collecting its output (also in an
// environment without the user's plugins), writing input files, and small test pictures.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QtTest>

#include <algorithm>

namespace kiln::test {

struct Run {
    int exitCode = -1;  // -2: crashed; -1: did not finish in time
    QString out;
    QString err;
};

// The program `name` (e.g. "kiln-train") of this build.
inline QString program(const char* name) {
    return QStringLiteral(KILN_BINARY_DIR "/app/%1").arg(QLatin1String(name));
}

// Runs a program of this build to the end (at most `timeoutMs`) and returns its status and output;
// in `environment` when one is given, else in this process's.
inline Run runProgram(const char* name, const QStringList& args, int timeoutMs = 300000,
                      const QProcessEnvironment& environment = QProcessEnvironment()) {
    QProcess p;
    if (!environment.isEmpty()) p.setProcessEnvironment(environment);
    p.start(program(name), args);
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
    r.err = QString::fromLocal8Bit(p.readAllStandardError());
    return r;
}

// An environment in which a program finds no plugin of the user's: the plugin folder is inside
// `home` (an empty or missing folder) and KILN_PLUGIN_PATH is unset.
inline QProcessEnvironment isolatedPluginEnvironment(const QString& home) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_DATA_HOME"), home);
    env.remove(QStringLiteral("KILN_PLUGIN_PATH"));
    return env;
}

// The sanitizer lane fails on any report its programs write. A damaged file that makes the
// (uninstrumented) HDF5 library read past its buffer is reported by AddressSanitizer in the child
// that reads it, on purpose: such a child must end and its parent must say so. This environment
// sends the reports of the programs started in it to `dir` instead and makes a report end its
// program by a signal; reportsWithout() then checks that each report comes from the library
// meant. Without sanitizers the options are not read and nothing is written there.
inline QString expectedCrashOptions(const QString& dir) {
    QString options = qEnvironmentVariable("ASAN_OPTIONS");
    options.remove(QRegularExpression(QStringLiteral("(^|:)log_path=[^:]*")));
    if (!options.isEmpty() && !options.startsWith(':')) options.prepend(':');
    // abort_on_error: the child ends by a signal, as it does without the sanitizer.
    return QStringLiteral("log_path=") + dir + QStringLiteral("/report") + options + QStringLiteral(":abort_on_error=1");
}
inline QProcessEnvironment expectedCrashEnvironment(const QString& dir) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("ASAN_OPTIONS"), expectedCrashOptions(dir));
    return env;
}
// For a child the studio starts itself (no environment to hand it): while this lives, this
// process's own environment is expectedCrashOptions(dir); the old value comes back after.
class ExpectedCrashScope {
public:
    explicit ExpectedCrashScope(const QString& dir) : m_old(qgetenv("ASAN_OPTIONS")) {
        qputenv("ASAN_OPTIONS", expectedCrashOptions(dir).toUtf8());
    }
    ~ExpectedCrashScope() {
        if (m_old.isNull()) qunsetenv("ASAN_OPTIONS");
        else qputenv("ASAN_OPTIONS", m_old);
    }
    ExpectedCrashScope(const ExpectedCrashScope&) = delete;
    ExpectedCrashScope& operator=(const ExpectedCrashScope&) = delete;

private:
    QByteArray m_old;
};
// The report files in `dir` that do not name `library` in their stack (empty: all expected).
inline QStringList reportsWithout(const QString& dir, const QString& library) {
    QStringList strays;
    for (const QFileInfo& f : QDir(dir).entryInfoList(QDir::Files)) {
        QFile file(f.filePath());
        if (!file.open(QIODevice::ReadOnly) || !file.readAll().contains(library.toUtf8())) strays << f.fileName();
    }
    return strays;
}

// runProgram() in that environment: the program sees only the plugins its arguments name.
inline Run runIsolated(const char* name, const QStringList& args, const QString& home, int timeoutMs = 300000) {
    return runProgram(name, args, timeoutMs, isolatedPluginEnvironment(home));
}

// Writes `bytes` to `path`, making its folder first; the test fails when the file cannot be
// written.
inline void writeFile(const QString& path, const QByteArray& bytes) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(path));
    QVERIFY2(f.write(bytes) == bytes.size(), qPrintable(path));
}

// An 8x8 24-bit BMP of grey `level`, with a texture of +-`spread` that depends on `seed`.
inline QByteArray greyBmp8(int level, int seed, int spread) {
    QByteArray b(54 + 8 * 8 * 3, '\0');
    auto put32 = [&](int at, quint32 v) {
        for (int k = 0; k < 4; ++k) b[at + k] = char((v >> (8 * k)) & 0xff);
    };
    b[0] = 'B';
    b[1] = 'M';
    put32(2, quint32(b.size()));
    put32(10, 54);
    put32(14, 40);
    put32(18, 8);
    put32(22, 8);
    b[26] = 1;
    b[28] = 24;
    for (int i = 0; i < 8 * 8 * 3; ++i)
        b[54 + i] = char(std::clamp(level + (i * 37 + seed * 11) % (2 * spread + 1) - spread, 0, 255));
    return b;
}

}  // namespace kiln::test
