/* SPDX-License-Identifier: Apache-2.0 */
/* An example Kiln plugin with losses and a metric (plugin ABI 1.2; it also builds against the 1.1
 * header, without its loss check cases):
 *  - example.Huber: per sample, the mean over its values of the Huber loss of d = prediction -
 *    target: d^2 / 2 where |d| <= delta, else delta (|d| - delta / 2). Kiln averages the samples.
 *  - example.Quantile: per sample, the mean pinball loss of d = target - prediction at the
 *    required `quantile` q: q d where d >= 0, else (q - 1) d. Having no default for q, it comes
 *    with check cases (ABI 1.2) so that Kiln's plugin check can run it.
 *  - example.FBeta: the F-beta score of binary predictions over all values seen, counting a
 *    prediction positive when it is above `threshold` and a target positive above 0.5:
 *    (1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp), 0 when nothing was positive. */
#include <math.h>
#include <stdio.h>

#include <kiln/plugin.h>

/* ---- example.Huber -------------------------------------------------------------------------- */

enum { kHuberDelta };

static const KilnAttrSpec kHuberAttrs[] = {
    {"delta", KILN_ATTR_FLOAT, 0, 0, 1.0, NULL, NULL, 0, 1, 0, 1e-6, 0, NULL, 0, 0,
     "where the loss turns from quadratic to linear (|prediction - target|)"},
};

typedef struct HuberJob {
    const KilnLossArgs* a;
    double delta;
} HuberJob;

static void huberRange(void* user, int64_t begin, int64_t end) {
    const HuberJob* job = (const HuberJob*)user;
    const KilnLossArgs* a = job->a;
    const double delta = job->delta;
    const int64_t w = a->width;
    for (int64_t i = begin; i < end; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < w; ++j) {
            const double d = (double)a->predictions[i * w + j] - (double)a->targets[i * w + j];
            const double ad = fabs(d);
            sum += ad <= delta ? 0.5 * d * d : delta * (ad - 0.5 * delta);
            if (a->d_predictions) {
                const double g = ad <= delta ? d : (d > 0 ? delta : -delta);
                a->d_predictions[i * w + j] = (float)(g / (double)w);
            }
        }
        a->values[i] = (float)(sum / (double)w);
    }
}

static int huberCompute(const KilnLossArgs* a) {
    HuberJob job = {a, a->ctx->attrs[kHuberDelta].f};
    if (a->target_width != a->width) {
        snprintf(a->error, a->error_size, "needs one target per prediction, got %lld targets for %lld predictions",
                 (long long)a->target_width, (long long)a->width);
        return 1;
    }
    if (a->parallel_for)
        a->parallel_for(a->pool, a->batch, huberRange, &job);
    else
        huberRange(&job, 0, a->batch);
    return 0;
}

/* ---- example.Quantile ----------------------------------------------------------------------- */

enum { kQuantileQ };

static const KilnAttrSpec kQuantileAttrs[] = {
    {"quantile", KILN_ATTR_FLOAT, 1, 0, 0.0, NULL, NULL, 0, 1, 1, 0.0, 1.0, NULL, 0, 0,
     "the quantile the predictions estimate, between 0 and 1 (0.5: the median)"},
};

static int quantileCompute(const KilnLossArgs* a) {
    const double q = a->ctx->attrs[kQuantileQ].f;
    const int64_t w = a->width;
    if (a->target_width != w) {
        snprintf(a->error, a->error_size, "needs one target per prediction, got %lld targets for %lld predictions",
                 (long long)a->target_width, (long long)w);
        return 1;
    }
    for (int64_t i = 0; i < a->batch; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < w; ++j) {
            const double d = (double)a->targets[i * w + j] - (double)a->predictions[i * w + j];
            sum += d >= 0 ? q * d : (q - 1.0) * d;
            if (a->d_predictions) a->d_predictions[i * w + j] = (float)((d >= 0 ? -q : 1.0 - q) / (double)w);
        }
        a->values[i] = (float)(sum / (double)w);
    }
    return 0;
}

/* ---- example.FBeta -------------------------------------------------------------------------- */

enum { kFBetaBeta, kFBetaThreshold };
enum { kTruePositives, kFalsePositives, kFalseNegatives, kFBetaStates };

static const KilnAttrSpec kFBetaAttrs[] = {
    {"beta", KILN_ATTR_FLOAT, 0, 0, 1.0, NULL, NULL, 0, 1, 0, 0.0, 0, NULL, 0, 0,
     "weight of recall against precision (1: F1, 2: recall counts more)"},
    {"threshold", KILN_ATTR_FLOAT, 0, 0, 0.5, NULL, NULL, 0, 1, 1, 0.0, 1.0, NULL, 0, 0,
     "a prediction above this value counts as positive"},
};

static int fbetaShapes(const KilnOpContext* ctx, char* error, size_t error_size) {
    int64_t p = 1, t = 1;
    for (int32_t i = 1; i < ctx->inputs[0].rank; ++i) p *= ctx->inputs[0].dims[i];
    for (int32_t i = 1; i < ctx->inputs[1].rank; ++i) t *= ctx->inputs[1].dims[i];
    if (p != t) {
        snprintf(error, error_size, "compares predictions and 0/1 targets value by value, but a sample has %lld "
                 "predictions and %lld targets", (long long)p, (long long)t);
        return 1;
    }
    return 0;
}

static int fbetaUpdate(const KilnMetricArgs* a) {
    const double threshold = a->ctx->attrs[kFBetaThreshold].f;
    const int64_t n = a->batch * a->width;
    double tp = 0, fp = 0, fn = 0;
    for (int64_t k = 0; k < n; ++k) {
        const int predicted = a->predictions[k] > threshold;
        const int actual = a->targets[k] > 0.5f;
        tp += predicted && actual;
        fp += predicted && !actual;
        fn += !predicted && actual;
    }
    a->state[kTruePositives] += tp;
    a->state[kFalsePositives] += fp;
    a->state[kFalseNegatives] += fn;
    return 0;
}

static int fbetaResult(const KilnOpContext* ctx, const double* state, double* value, char* error, size_t error_size) {
    (void)error;
    (void)error_size;
    const double b2 = ctx->attrs[kFBetaBeta].f * ctx->attrs[kFBetaBeta].f;
    const double tp = state[kTruePositives], fp = state[kFalsePositives], fn = state[kFalseNegatives];
    const double denominator = (1.0 + b2) * tp + b2 * fn + fp;
    *value = denominator > 0 ? (1.0 + b2) * tp / denominator : 0.0;
    return 0;
}

/* ---- The descriptor ------------------------------------------------------------------------- */

static const KilnLossDesc kLosses[] = {
    {"example.Huber", "Huber loss: quadratic near the target, linear beyond delta", kHuberAttrs, 1, NULL, huberCompute},
    {"example.Quantile", "Pinball loss of a quantile estimate", kQuantileAttrs, 1, NULL, quantileCompute},
};

static const KilnMetricDesc kMetrics[] = {
    {"example.FBeta", "F-beta score of binary predictions", kFBetaAttrs, 2, kFBetaStates, fbetaShapes, NULL, fbetaUpdate,
     fbetaResult},
};

#if KILN_PLUGIN_ABI_MINOR >= 2
/* Shapes [batch, width]: a 90% quantile of three values, and the median of one. */
static const KilnLossCheckCase kLossChecks[] = {
    {"example.Quantile", "q=0.9", "{\"quantile\": 0.9}", {2, {4, 3}}, {2, {4, 3}}},
    {"example.Quantile", "median", "{\"quantile\": 0.5}", {2, {5, 1}}, {2, {5, 1}}},
};
static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "example_losses", "1.0", NULL, 0, kLosses, 2, kMetrics, 1,
                                       kLossChecks, 2};
#else
static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "example_losses", "1.0", NULL, 0, kLosses, 2, kMetrics, 1};
#endif

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
