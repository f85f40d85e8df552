// SPDX-License-Identifier: Apache-2.0
// Real Keras models for the Keras import tests: runs keras_models.py with the project's Python
// environment (tools/py_env.sh) to build and save them, with inputs and Keras's predictions.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

#include "tests/python_env.h"

namespace kiln::test {

enum class KerasFixtures { Made, NoPython, NoKeras, Failed };

// Writes the models `names` (all when empty) into `dir`; `log` gets the script's errors. `script`
// is keras_models.py (Keras 3) or keras2_models.py (Keras 2 from tf_keras) under tests/engine/io.
inline KerasFixtures makeKerasModels(const QString& dir, const QStringList& names, QString* log,
                                     const QString& script = QStringLiteral("keras_models.py")) {
    const QString python = kiln::test::pythonEnvInterpreter();
    if (python.isEmpty()) return KerasFixtures::NoPython;
    QProcess py;
    py.start(python, QStringList{QStringLiteral(KILN_SOURCE_DIR "/tests/engine/io/") + script, dir} + names);
    if (!py.waitForStarted(60000)) return KerasFixtures::NoPython;
    if (!py.waitForFinished(900000)) {
        py.kill();
        return KerasFixtures::Failed;
    }
    const QString err = QString::fromUtf8(py.readAllStandardError());
    if (log) *log = err.right(3000);
    if (py.exitStatus() == QProcess::NormalExit && py.exitCode() == 0) return KerasFixtures::Made;
    return err.contains(QLatin1String("No module named")) ? KerasFixtures::NoKeras : KerasFixtures::Failed;
}

}  // namespace kiln::test
