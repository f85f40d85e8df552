// SPDX-License-Identifier: Apache-2.0
// Kiln's SVG icons in the colours of the current theme: the slate ink of the light theme turns
// light grey in the dark theme (accent colours stay), and an icon already shown follows a
// theme change the next time it is painted.
#pragma once

#include <QIcon>
#include <QString>

namespace kiln::ui {

// The icon ":/icons/<name>.svg" (for example "save"), drawn in the current theme's ink.
QIcon themedIcon(const QString& name);

}  // namespace kiln::ui
