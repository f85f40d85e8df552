/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin that declares an ABI version Kiln does not speak: loading it must be refused with the
 * expected and found versions, before anything else in the descriptor is read. */
#include <kiln/plugin.h>

static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION + 41u, "wrong", "0", 0, 0};

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
