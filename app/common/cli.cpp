// SPDX-License-Identifier: Apache-2.0
#include "app/common/cli.h"

#include <QCoreApplication>
#include <QLocale>

#include <cstdio>

#include "app/common/error_text.h"
#include "engine/io/project.h"
#include "engine/ops/plugin_registry.h"

namespace kiln::app {
namespace {
class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};
}  // namespace

void printErr(const QString& s) {
    std::fprintf(stderr, "%s\n", s.toLocal8Bit().constData());
}

void printOut(const QString& s) {
    std::fprintf(stdout, "%s\n", s.toLocal8Bit().constData());
}

int reportError(const QString& program, const engine::Error& e, const engine::io::Project* project) {
    const engine::Error located = project ? engine::io::locate(e, *project) : e;
    printErr(program + QStringLiteral(": ") + ErrorText::describe(located));
    return ErrorText::exitCode(located);
}

QCommandLineOption pluginOption() {
    return QCommandLineOption(QStringLiteral("plugin"),
                              Cli::tr("Load a plugin library, or every plugin in a folder (repeatable), besides the "
                                      "user's plugin folder and KILN_PLUGIN_PATH."),
                              QStringLiteral("PATH"));
}

int loadPlugins(const QString& program, const QStringList& paths) {
    std::vector<std::string> extra;
    for (const auto& p : paths) extra.push_back(p.toStdString());
    const engine::Status st = engine::ops::loadPlugins(extra);
    return st.ok() ? 0 : reportError(program, st.error());
}

std::unique_ptr<QTranslator> installTranslations() {
    auto translator = std::make_unique<QTranslator>();
    if (!translator->load(QLocale(), QStringLiteral("kiln"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        return nullptr;
    QCoreApplication::installTranslator(translator.get());
    return translator;
}

}  // namespace kiln::app
