/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin whose loss and metric misbehave, for the tests: bad.NaNLoss gives NaN for the second
 * sample of every batch, bad.FailingLoss and bad.FailingMetric report an error. Kiln must stop
 * with an error naming the plugin, never abort. */
#include <math.h>
#include <stdio.h>

#include <kiln/plugin.h>

static int nanLoss(const KilnLossArgs* a) {
    for (int64_t i = 0; i < a->batch; ++i) a->values[i] = i == 1 ? NAN : 0.0f;
    if (a->d_predictions)
        for (int64_t k = 0; k < a->batch * a->width; ++k) a->d_predictions[k] = 0.0f;
    return 0;
}

static int failingLoss(const KilnLossArgs* a) {
    snprintf(a->error, a->error_size, "the failing loss refuses batches of %lld", (long long)a->batch);
    return 1;
}

static int failingUpdate(const KilnMetricArgs* a) {
    snprintf(a->error, a->error_size, "the failing metric refuses every batch");
    return 1;
}

static int zeroResult(const KilnOpContext* ctx, const double* state, double* value, char* error, size_t error_size) {
    (void)ctx;
    (void)error;
    (void)error_size;
    *value = state[0];
    return 0;
}

static const KilnLossDesc kLosses[] = {
    {"bad.NaNLoss", "gives NaN for the second sample", NULL, 0, NULL, nanLoss},
    {"bad.FailingLoss", "always fails", NULL, 0, NULL, failingLoss},
};

static const KilnMetricDesc kMetrics[] = {
    {"bad.FailingMetric", "always fails", NULL, 0, 1, NULL, NULL, failingUpdate, zeroResult},
};

static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "bad", "0", NULL, 0, kLosses, 2, kMetrics, 1};

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
