// SPDX-License-Identifier: Apache-2.0
// View > Theme: System, Light and Dark as exclusive choices. Choosing one stores it in the
// settings and applies it at once; the checks follow changes made elsewhere (Settings dialog).
#pragma once

#include <QMenu>

class QAction;

namespace kiln::ui {

enum class ThemeChoice;

class ThemeMenu : public QMenu {
    Q_OBJECT

public:
    explicit ThemeMenu(QWidget* parent = nullptr);

    QAction* action(ThemeChoice choice) const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    void syncChecks();
    QAction* m_system;
    QAction* m_light;
    QAction* m_dark;
};

}  // namespace kiln::ui
