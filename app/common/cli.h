// SPDX-License-Identifier: Apache-2.0
// What every command-line program shares: console lines, error reports with the program's name
// and exit status, and the user's language.
#pragma once

#include <QCommandLineOption>
#include <QString>
#include <QStringList>
#include <QTranslator>

#include <memory>

#include "engine/core/error.h"

namespace kiln::engine::io {
struct Project;
}

namespace kiln::app {

// One line on stderr / stdout, in the locale's encoding.
void printErr(const QString& s);
void printOut(const QString& s);

// Prints "<program>: <words for e>" on stderr, with e located in `project` (file and line) when
// given, and returns the exit status for it (ErrorText::exitCode).
int reportError(const QString& program, const engine::Error& e, const engine::io::Project* project = nullptr);

// --plugin PATH (repeatable): a plugin library, or a folder of them, for the programs that run models.
QCommandLineOption pluginOption();
// Loads the user's plugin folder, the KILN_PLUGIN_PATH entries and `paths` (the --plugin values).
// Returns 0, or prints "<program>: <words>" and returns the exit status (2: a bad plugin or path).
int loadPlugins(const QString& program, const QStringList& paths);
// --check-plugins: runs the plugin checker on every loaded plugin's operations and losses (as
// Help > Plugins > Check plugin does) and prints one line per check, then a summary. Returns 0
// when none failed, 1 when one did, 2 when no plugin is loaded.
int checkPlugins(const QString& program);

// Loads and installs the translations of the user's language (:/i18n/kiln_<lang>.qm); the
// returned translator stays installed while it lives (null when there are none for the language).
std::unique_ptr<QTranslator> installTranslations();

}  // namespace kiln::app
