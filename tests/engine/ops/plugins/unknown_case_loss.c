/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin with a loss check case that names a loss the plugin does not describe (a misspelt
 * name), for the tests: Kiln refuses to load it, naming the case and the loss, and keeps nothing
 * of it (its correct loss is not registered either). */
#include <kiln/plugin.h>

static int squareLoss(const KilnLossArgs* a) {
    for (int64_t i = 0; i < a->batch; ++i) {
        double s = 0;
        for (int64_t k = 0; k < a->width; ++k) {
            const double d = a->predictions[i * a->width + k] - a->targets[i * a->target_width + k];
            s += 0.5 * d * d;
            if (a->d_predictions) a->d_predictions[i * a->width + k] = (float)d;
        }
        a->values[i] = (float)s;
    }
    return 0;
}

static const KilnLossDesc kLosses[] = {
    {"unknowncase.Square", "half the sum of squared differences", NULL, 0, NULL, squareLoss},
};

static const KilnLossCheckCase kLossCases[] = {
    {"unknowncase.Square", "fine", "{}", {2, {4, 3}}, {2, {4, 3}}},
    {"unknowncase.Sqaure", "misspelt", "{}", {2, {4, 3}}, {2, {4, 3}}},
};

static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "unknowncase", "0", NULL, 0, kLosses, 1, NULL, 0,
                                       kLossCases, 2};

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
