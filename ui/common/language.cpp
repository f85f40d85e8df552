// SPDX-License-Identifier: Apache-2.0
// Run-time language switching through one owned QTranslator.
#include "ui/common/language.h"

#include <QCoreApplication>
#include <QEvent>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

#include <memory>

namespace kiln::ui {

namespace {
std::unique_ptr<QTranslator> g_translator;
// Qt's own strings (standard dialog buttons, the file dialog, context menus of line edits) come
// from Qt's catalogue, which Debian ships in qt6-translations-l10n.
std::unique_ptr<QTranslator> g_qtTranslator;
QString g_current;
}  // namespace

QStringList Language::available() { return {QStringLiteral("en"), QStringLiteral("zh_CN")}; }

QString Language::nativeName(const QString& code) {
    if (code == QLatin1String("zh_CN")) return QStringLiteral("简体中文");
    return QStringLiteral("English");
}

QString Language::resolve(const QString& setting) {
    if (available().contains(setting)) return setting;
    for (const QString& ui : QLocale::system().uiLanguages()) {
        if (ui.startsWith(QLatin1String("zh"))) return QStringLiteral("zh_CN");
        if (ui.startsWith(QLatin1String("en"))) return QStringLiteral("en");
    }
    return QStringLiteral("en");
}

bool Language::apply(const QString& code) {
    if (!available().contains(code)) return false;
    auto next = std::make_unique<QTranslator>();
    // The source texts are English, so English works even without its .qm.
    const bool loaded = next->load(QStringLiteral(":/i18n/kiln_%1.qm").arg(code));
    if (!loaded && code != QLatin1String("en")) return false;
    if (g_translator) QCoreApplication::removeTranslator(g_translator.get());
    g_translator.reset();
    if (loaded) {
        g_translator = std::move(next);
        QCoreApplication::installTranslator(g_translator.get());
    } else {
        // No translator change event came from install: tell the widgets ourselves.
        QEvent change(QEvent::LanguageChange);
        QCoreApplication::sendEvent(QCoreApplication::instance(), &change);
    }
    if (g_qtTranslator) QCoreApplication::removeTranslator(g_qtTranslator.get());
    g_qtTranslator.reset();
    if (code != QLatin1String("en")) {
        auto qt = std::make_unique<QTranslator>();
        if (qt->load(QStringLiteral("qtbase_%1").arg(code), QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
            g_qtTranslator = std::move(qt);
            QCoreApplication::installTranslator(g_qtTranslator.get());
        }
    }
    QLocale::setDefault(QLocale(code));
    g_current = code;
    return true;
}

bool Language::qtCatalogueLoaded() { return g_qtTranslator != nullptr; }

QString Language::current() { return g_current; }

}  // namespace kiln::ui
