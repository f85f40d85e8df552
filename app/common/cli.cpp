// SPDX-License-Identifier: Apache-2.0
#include "app/common/cli.h"

#include <QCoreApplication>
#include <QLocale>

#include <cstdio>

#include "app/common/error_text.h"
#include "app/common/plugin_check_text.h"
#include "engine/api/plugins.h"
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

int checkPlugins(const QString& program) {
    namespace api = engine::api;
    const auto plugins = api::loadedPlugins();
    if (plugins.empty()) {
        printErr(Cli::tr("%1: no plugin is loaded: give --plugin PATH, or put plugins in %2 or KILN_PLUGIN_PATH")
                     .arg(program, QString::fromStdString(api::userPluginFolder())));
        return 2;
    }
    int passed = 0, failed = 0, skipped = 0;
    auto print = [&](const api::PluginCheckRun& run) {
        using K = api::PluginCheckKind;
        using O = api::PluginCheckOutcome;
        const QString name = QString::fromStdString(run.op);
        if (run.checks.empty()) {
            printOut(Cli::tr("%1: no check cases").arg(name));
            ++skipped;
        }
        for (const auto& c : run.checks) {
            (c.outcome == O::Passed ? passed : c.outcome == O::Failed ? failed : skipped)++;
            const QString kind = c.kind == K::Shape      ? Cli::tr("shape")
                                 : c.kind == K::Forward  ? Cli::tr("forward vs reference")
                                 : c.kind == K::Gradient ? Cli::tr("gradient vs finite differences")
                                                         : Cli::tr("loss values");
            const QString outcome = c.outcome == O::Passed   ? Cli::tr("passed")
                                    : c.outcome == O::Failed ? Cli::tr("FAILED")
                                                             : Cli::tr("skipped");
            // The same words as Help > Plugins, composed from the check's finding.
            printOut(QStringLiteral("%1  %2  %3: %4 (%5)")
                         .arg(name, PluginCheckText::caseText(c), kind, outcome, PluginCheckText::detail(c)));
        }
    };
    for (const auto& plugin : plugins) {
        printOut(Cli::tr("Plugin %1 %2 (%3)")
                     .arg(QString::fromStdString(plugin.name), QString::fromStdString(plugin.version),
                          QString::fromStdString(plugin.path)));
        for (const auto& run : api::checkPlugin(plugin.path, 0)) print(run);  // every core
    }
    printOut(Cli::tr("%1 passed, %2 failed, %3 skipped").arg(passed).arg(failed).arg(skipped));
    return failed > 0 ? 1 : 0;
}

std::unique_ptr<QTranslator> installTranslations() {
    auto translator = std::make_unique<QTranslator>();
    if (!translator->load(QLocale(), QStringLiteral("kiln"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        return nullptr;
    QCoreApplication::installTranslator(translator.get());
    return translator;
}

}  // namespace kiln::app
