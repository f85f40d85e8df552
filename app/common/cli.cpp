// SPDX-License-Identifier: Apache-2.0
#include "app/common/cli.h"

#include <QCoreApplication>
#include <QLocale>

#include <cstdio>

#include "app/common/error_text.h"
#include "engine/io/project.h"

namespace kiln::app {

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

std::unique_ptr<QTranslator> installTranslations() {
    auto translator = std::make_unique<QTranslator>();
    if (!translator->load(QLocale(), QStringLiteral("kiln"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        return nullptr;
    QCoreApplication::installTranslator(translator.get());
    return translator;
}

}  // namespace kiln::app
