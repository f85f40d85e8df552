// SPDX-License-Identifier: Apache-2.0
// Resources compiled into the static kiln_ui_common library must be registered explicitly.
#pragma once

namespace kiln::ui {

// Registers :/icons/*.svg (idempotent). Call once before the first QIcon from :/icons is made.
void initCommonResources();

}  // namespace kiln::ui
