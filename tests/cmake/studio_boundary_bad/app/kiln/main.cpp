// SPDX-License-Identifier: Apache-2.0
// A fixture for the boundary check: line 4 reaches into the plugin registry, which the studio
// program may not do (engine/api/plugins.h offers what it needs).
#include "engine/ops/plugin_registry.h"
