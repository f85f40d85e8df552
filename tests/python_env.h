// SPDX-License-Identifier: Apache-2.0
// The Python interpreter of the environment that tools/py_env.sh makes for the interop tests
// (created on first use, then cached).
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace kiln::test {

// The interpreter's path, or an empty string when the environment cannot be made (no network on
// first use, no python3): the tests that need it skip then. The script prints the path last.
inline QString pythonEnvInterpreter() {
    QProcess env;
    env.start(QStringLiteral("bash"), {QStringLiteral(KILN_SOURCE_DIR "/tools/py_env.sh")});
    if (!env.waitForFinished(1800000) || env.exitCode() != 0) return {};
    return QString::fromUtf8(env.readAllStandardOutput()).trimmed().split(QLatin1Char('\n')).last();
}

}  // namespace kiln::test
