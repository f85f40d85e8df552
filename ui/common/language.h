// SPDX-License-Identifier: Apache-2.0
// The UI language: resolves "system default" from the locale and installs Kiln's translator
// (:/i18n/kiln_<code>.qm) at run time. Installing sends QEvent::LanguageChange to every widget,
// which retranslates itself in changeEvent().
#pragma once

#include <QString>
#include <QStringList>

namespace kiln::ui {

class Language {
public:
    static QStringList available();  // {"en", "zh_CN"}
    // The language's own name ("English", "简体中文"), for menus; not translated on purpose.
    static QString nativeName(const QString& code);
    // The code for a setting: "" picks by the system locale's UI languages (Chinese → zh_CN,
    // anything else → en); an unknown code falls back to the system choice too.
    static QString resolve(const QString& setting);
    // Replaces the installed Kiln translator with the one for `code`. False when the .qm could not
    // be loaded (the previous language then stays). Call on the GUI thread.
    static bool apply(const QString& code);
    static QString current();  // the code last applied, "" before the first apply()
    // Whether Qt's own catalogue (qtbase_<code>.qm) was found for the language last applied;
    // without it Qt's standard buttons and dialogs stay in English.
    static bool qtCatalogueLoaded();
};

}  // namespace kiln::ui
