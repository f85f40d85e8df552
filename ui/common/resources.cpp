// SPDX-License-Identifier: Apache-2.0
// Q_INIT_RESOURCE must be called outside any namespace, hence the file-level helper.
#include "ui/common/resources.h"

#include <QtGlobal>

static void initKilnIcons() { Q_INIT_RESOURCE(kiln_icons); }

namespace kiln::ui {

void initCommonResources() {
    static const bool done = (initKilnIcons(), true);
    Q_UNUSED(done);
}

}  // namespace kiln::ui
