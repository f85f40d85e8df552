/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin whose loss and metric misbehave, for the tests: bad.NaNLoss gives NaN for the second
 * sample of every batch, bad.FailingLoss and bad.FailingMetric report an error. Kiln must stop
 * with an error naming the plugin, never abort. Two more that the loss checker must catch:
 * bad.HalfGradient (sum of squares / 2 per sample, with a gradient half what it should be) and
 * bad.BatchCoupled (each sample's value also counts sample 0's predictions). */
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

static int halfGradient(const KilnLossArgs* a) {
    for (int64_t i = 0; i < a->batch; ++i) {
        double s = 0;
        for (int64_t k = 0; k < a->width; ++k) {
            const double p = a->predictions[i * a->width + k];
            s += 0.5 * p * p;
            if (a->d_predictions) a->d_predictions[i * a->width + k] = (float)(0.5 * p); /* should be p */
        }
        a->values[i] = (float)s;
    }
    return 0;
}

static int batchCoupled(const KilnLossArgs* a) {
    for (int64_t i = 0; i < a->batch; ++i) {
        double s = 0;
        for (int64_t k = 0; k < a->width; ++k) s += a->predictions[i * a->width + k] + a->predictions[k];
        a->values[i] = (float)s;
        if (a->d_predictions)
            for (int64_t k = 0; k < a->width; ++k) a->d_predictions[i * a->width + k] = 1.0f;
    }
    return 0;
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
    {"bad.HalfGradient", "half the gradient it should have", NULL, 0, NULL, halfGradient},
    {"bad.BatchCoupled", "each sample's value depends on sample 0", NULL, 0, NULL, batchCoupled},
};

static const KilnMetricDesc kMetrics[] = {
    {"bad.FailingMetric", "always fails", NULL, 0, 1, NULL, NULL, failingUpdate, zeroResult},
};

static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "bad", "0", NULL, 0, kLosses, 4, kMetrics, 1};

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
