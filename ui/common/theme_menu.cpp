// SPDX-License-Identifier: Apache-2.0
// The Theme submenu of the View menu.
#include "ui/common/theme_menu.h"

#include <QActionGroup>
#include <QEvent>

#include "ui/common/app_settings.h"
#include "ui/common/theme.h"

namespace kiln::ui {

ThemeMenu::ThemeMenu(QWidget* parent) : QMenu(parent) {
    setObjectName(QStringLiteral("menuTheme"));
    auto* group = new QActionGroup(this);
    group->setExclusive(true);
    auto make = [&](ThemeChoice choice) {
        QAction* a = addAction(QString());
        a->setObjectName(QStringLiteral("actionTheme_") + Theme::id(choice));
        a->setCheckable(true);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [choice] {
            AppSettings::setTheme(Theme::id(choice));
            if (choice != Theme::instance().choice()) Theme::instance().apply(choice);
        });
        return a;
    };
    m_system = make(ThemeChoice::System);
    m_light = make(ThemeChoice::Light);
    m_dark = make(ThemeChoice::Dark);
    connect(&Theme::instance(), &Theme::changed, this, &ThemeMenu::syncChecks);
    retranslateUi();
    syncChecks();
}

QAction* ThemeMenu::action(ThemeChoice choice) const {
    switch (choice) {
    case ThemeChoice::System: return m_system;
    case ThemeChoice::Light: return m_light;
    case ThemeChoice::Dark: return m_dark;
    }
    return m_system;
}

void ThemeMenu::retranslateUi() {
    setTitle(tr("&Theme"));
    m_system->setText(tr("&System"));
    m_system->setToolTip(tr("Follow the desktop's light or dark colour scheme"));
    m_light->setText(tr("&Light"));
    m_dark->setText(tr("&Dark"));
}

void ThemeMenu::syncChecks() { action(Theme::instance().choice())->setChecked(true); }

void ThemeMenu::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QMenu::changeEvent(event);
}

}  // namespace kiln::ui
