/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin whose check cases cannot all be made, for the tests of the plugin checker: an
 * operation (badcase.Double, y = 2x, correct) and a loss (badcase.Square, half the sum of squared
 * differences per sample, correct) each with one good case and cases whose shapes are wrong: a
 * dimension of 0, no input shapes, more values than a check allows (one case whose element count
 * overflows 64 bits), predictions of rank 1, batches that differ, shapes the loss refuses, and
 * attributes that are not a JSON object. Kiln must report each as a failed check naming the case,
 * never abort or allocate for it. */
#include <stdio.h>

#include <kiln/plugin.h>

static int doubleShape(const KilnOpContext* ctx, KilnShape* out, char* error, size_t error_size) {
    (void)error;
    (void)error_size;
    *out = ctx->inputs[0];
    return 0;
}

static int doubleForward(const KilnKernelArgs* a) {
    int64_t n = 1;
    for (int32_t k = 0; k < a->output.shape.rank; ++k) n *= a->output.shape.dims[k];
    for (int64_t i = 0; i < n; ++i) a->output.data[i] = 2.0f * a->inputs[0].data[i];
    return 0;
}

static int doubleBackward(const KilnKernelArgs* a) {
    if (!a->d_inputs[0]) return 0;
    int64_t n = 1;
    for (int32_t k = 0; k < a->output.shape.rank; ++k) n *= a->output.shape.dims[k];
    for (int64_t i = 0; i < n; ++i) a->d_inputs[0][i] += 2.0f * a->d_output[i];
    return 0;
}

static const KilnShape kGood[] = {{2, {2, 3}}};
static const KilnShape kZeroWidth[] = {{2, {2, 0}}};
static const KilnShape kHuge[] = {{2, {1, (int64_t)1 << 40}}};
static const KilnShape kOverflow[] = {{3, {4, (int64_t)1 << 62, 8}}};

static const KilnCheckCase kOpCases[] = {
    {"good", "{}", kGood, 1},
    {"zero width", "{}", kZeroWidth, 1},
    {"no shapes", "{}", NULL, 1},
    {"huge", "{}", kHuge, 1},
    {"overflow", "{}", kOverflow, 1},
    {"attributes not an object", "[1, 2]", kGood, 1},
};

static const KilnOpDesc kOps[] = {{
    "badcase.Double",
    "twice its input",
    1,
    1,
    NULL,
    0,
    NULL,
    0,
    NULL,
    doubleShape,
    NULL,
    doubleForward,
    doubleBackward,
    NULL,
    NULL,
    doubleForward,
    kOpCases,
    (int32_t)(sizeof kOpCases / sizeof kOpCases[0]),
}};

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
    {"badcase.Square", "half the sum of squared differences", NULL, 0, NULL, squareLoss},
};

static const KilnLossCheckCase kLossCases[] = {
    {"badcase.Square", "good", "{}", {2, {4, 3}}, {2, {4, 3}}},
    {"badcase.Square", "rank 1", "{}", {1, {4}}, {1, {4}}},
    {"badcase.Square", "batches differ", "{}", {2, {4, 3}}, {2, {5, 3}}},
    {"badcase.Square", "zero width", "{}", {2, {4, 0}}, {2, {4, 0}}},
    {"badcase.Square", "huge", "{}", {2, {4, (int64_t)1 << 40}}, {2, {4, (int64_t)1 << 40}}},
    {"badcase.Square", "overflow", "{}", {3, {4, (int64_t)1 << 62, 8}}, {3, {4, (int64_t)1 << 62, 8}}},
    {"badcase.Square", "widths differ", "{}", {2, {4, 3}}, {2, {4, 2}}},
    {"badcase.Square", "attributes not an object", "\"x\"", {2, {4, 3}}, {2, {4, 3}}},
};

static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "badcase", "0", kOps, 1, kLosses, 1, NULL, 0,
                                       kLossCases, (int32_t)(sizeof kLossCases / sizeof kLossCases[0])};

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
