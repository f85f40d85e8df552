/* SPDX-License-Identifier: Apache-2.0 */
/* example.GroupNorm: group normalization (Wu & He, 2018) as a Kiln plugin. The channels (last
 * dimension) are split into `groups` groups; each sample's values in a group, over every spatial
 * position, are normalised to zero mean and unit variance, then scaled by gamma and shifted by
 * beta per channel:  y = (x - mean) / sqrt(var + epsilon) * gamma[c] + beta[c].
 * Layout: [N, d1, ..., C], channels last; any rank from 2. */
#include <kiln/plugin.h>

#include <math.h>
#include <stdio.h>

enum { ATTR_GROUPS, ATTR_EPSILON };
enum { PARAM_GAMMA, PARAM_BETA };

/* The sizes of one call: samples, positions per sample, channels, groups. */
typedef struct Dims {
    int64_t n, positions, channels, groups, per_group;
    double epsilon;
} Dims;

static Dims dims_of(const KilnOpContext* ctx, const KilnShape* in) {
    Dims d;
    int i;
    d.n = in->dims[0];
    d.channels = in->dims[in->rank - 1];
    d.positions = 1;
    for (i = 1; i < in->rank - 1; ++i) d.positions *= in->dims[i];
    d.groups = ctx->attrs[ATTR_GROUPS].i;
    d.per_group = d.channels / d.groups;
    d.epsilon = ctx->attrs[ATTR_EPSILON].f;
    return d;
}

static int gn_shape(const KilnOpContext* ctx, KilnShape* out, char* error, size_t error_size) {
    const KilnShape* in = &ctx->inputs[0];
    int64_t groups = ctx->attrs[ATTR_GROUPS].i, channels;
    if (in->rank < 2) {
        snprintf(error, error_size, "needs an input of rank 2 or more (batch, ..., channels), got rank %d", (int)in->rank);
        return 1;
    }
    channels = in->dims[in->rank - 1];
    if (channels % groups != 0) {
        snprintf(error, error_size, "groups (%lld) must divide the %lld channels", (long long)groups, (long long)channels);
        return 1;
    }
    *out = *in;
    return 0;
}

static int gn_param_shape(const KilnOpContext* ctx, const KilnShape* output, int32_t index, KilnShape* shape,
                          char* error, size_t error_size) {
    (void)ctx;
    (void)index;
    (void)error;
    (void)error_size;
    shape->rank = 1;
    shape->dims[0] = output->dims[output->rank - 1];
    return 0;
}

/* Mean and 1/sqrt(var + eps) of sample s, group g, accumulated in double. */
static void group_stats(const float* x, const Dims* d, int64_t s, int64_t g, double* mean, double* inv_std) {
    const int64_t count = d->positions * d->per_group;
    double sum = 0.0, sq = 0.0, m, var;
    int64_t p, c;
    for (p = 0; p < d->positions; ++p) {
        const float* row = x + (s * d->positions + p) * d->channels + g * d->per_group;
        for (c = 0; c < d->per_group; ++c) sum += row[c];
    }
    m = sum / (double)count;
    for (p = 0; p < d->positions; ++p) {
        const float* row = x + (s * d->positions + p) * d->channels + g * d->per_group;
        for (c = 0; c < d->per_group; ++c) sq += (row[c] - m) * (row[c] - m);
    }
    var = sq / (double)count;
    *mean = m;
    *inv_std = 1.0 / sqrt(var + d->epsilon);
}

typedef struct Job {
    const KilnKernelArgs* a;
    Dims d;
} Job;

/* Forward over (sample, group) pairs [begin, end). */
static void forward_range(void* user, int64_t begin, int64_t end) {
    const Job* job = (const Job*)user;
    const Dims* d = &job->d;
    const float* x = job->a->inputs[0].data;
    const float* gamma = job->a->params[PARAM_GAMMA].data;
    const float* beta = job->a->params[PARAM_BETA].data;
    float* y = job->a->output.data;
    int64_t k, p, c;
    for (k = begin; k < end; ++k) {
        const int64_t s = k / d->groups, g = k % d->groups;
        double mean, inv_std;
        group_stats(x, d, s, g, &mean, &inv_std);
        for (p = 0; p < d->positions; ++p) {
            const int64_t base = (s * d->positions + p) * d->channels + g * d->per_group;
            for (c = 0; c < d->per_group; ++c) {
                const int64_t ch = g * d->per_group + c;
                y[base + c] = (float)((x[base + c] - mean) * inv_std * gamma[ch] + beta[ch]);
            }
        }
    }
}

static int gn_forward(const KilnKernelArgs* a) {
    Job job;
    job.a = a;
    job.d = dims_of(a->ctx, &a->inputs[0].shape);
    if (a->parallel_for)
        a->parallel_for(a->pool, job.d.n * job.d.groups, forward_range, &job);
    else
        forward_range(&job, 0, job.d.n * job.d.groups);
    return 0;
}

/* Backward over groups [begin, end): a group owns its channels' gamma and beta gradients, so the
 * sums over samples stay in one task and in a fixed order. With xh = (x - mean) * inv_std and
 * dxh = dy * gamma, over the M values of a (sample, group):
 *   dx = inv_std * (dxh - mean(dxh) - xh * mean(dxh * xh)),  dgamma += dy * xh,  dbeta += dy. */
static void backward_range(void* user, int64_t begin, int64_t end) {
    const Job* job = (const Job*)user;
    const KilnKernelArgs* a = job->a;
    const Dims* d = &job->d;
    const float* x = a->inputs[0].data;
    const float* dy = a->d_output;
    const float* gamma = a->params[PARAM_GAMMA].data;
    float* dx = a->d_inputs[0];
    float* dgamma = a->d_params[PARAM_GAMMA];
    float* dbeta = a->d_params[PARAM_BETA];
    const double count = (double)(d->positions * d->per_group);
    int64_t g, s, p, c;
    for (g = begin; g < end; ++g) {
        for (s = 0; s < d->n; ++s) {
            double mean, inv_std, sum_dxh = 0.0, sum_dxh_xh = 0.0;
            group_stats(x, d, s, g, &mean, &inv_std);
            for (p = 0; p < d->positions; ++p) {
                const int64_t base = (s * d->positions + p) * d->channels + g * d->per_group;
                for (c = 0; c < d->per_group; ++c) {
                    const int64_t ch = g * d->per_group + c;
                    const double xh = (x[base + c] - mean) * inv_std;
                    const double dxh = (double)dy[base + c] * gamma[ch];
                    sum_dxh += dxh;
                    sum_dxh_xh += dxh * xh;
                    if (dgamma) dgamma[ch] += (float)(dy[base + c] * xh);
                    if (dbeta) dbeta[ch] += dy[base + c];
                }
            }
            if (!dx) continue;
            for (p = 0; p < d->positions; ++p) {
                const int64_t base = (s * d->positions + p) * d->channels + g * d->per_group;
                for (c = 0; c < d->per_group; ++c) {
                    const int64_t ch = g * d->per_group + c;
                    const double xh = (x[base + c] - mean) * inv_std;
                    const double dxh = (double)dy[base + c] * gamma[ch];
                    dx[base + c] += (float)(inv_std * (dxh - sum_dxh / count - xh * sum_dxh_xh / count));
                }
            }
        }
    }
}

static int gn_backward(const KilnKernelArgs* a) {
    Job job;
    job.a = a;
    job.d = dims_of(a->ctx, &a->inputs[0].shape);
    if (a->parallel_for)
        a->parallel_for(a->pool, job.d.groups, backward_range, &job);
    else
        backward_range(&job, 0, job.d.groups);
    return 0;
}

/* The reference: the definition, one value at a time, two passes per value, in double. */
static int gn_reference(const KilnKernelArgs* a) {
    const Dims d = dims_of(a->ctx, &a->inputs[0].shape);
    const float* x = a->inputs[0].data;
    int64_t s, p, ch;
    for (s = 0; s < d.n; ++s)
        for (p = 0; p < d.positions; ++p)
            for (ch = 0; ch < d.channels; ++ch) {
                const int64_t g = ch / d.per_group;
                double sum = 0.0, sq = 0.0, mean;
                int64_t q, c;
                for (q = 0; q < d.positions; ++q)
                    for (c = g * d.per_group; c < (g + 1) * d.per_group; ++c) sum += x[(s * d.positions + q) * d.channels + c];
                mean = sum / (double)(d.positions * d.per_group);
                for (q = 0; q < d.positions; ++q)
                    for (c = g * d.per_group; c < (g + 1) * d.per_group; ++c) {
                        const double v = x[(s * d.positions + q) * d.channels + c] - mean;
                        sq += v * v;
                    }
                {
                    const int64_t i = (s * d.positions + p) * d.channels + ch;
                    const double var = sq / (double)(d.positions * d.per_group);
                    a->output.data[i] = (float)((x[i] - mean) / sqrt(var + d.epsilon) * a->params[PARAM_GAMMA].data[ch] +
                                                a->params[PARAM_BETA].data[ch]);
                }
            }
    return 0;
}

static const KilnAttrSpec kAttrs[] = {
    {"groups", KILN_ATTR_INT, 0, 2, 0.0, NULL, NULL, 0, 1, 0, 1.0, 0.0, NULL, 0, 0,
     "number of channel groups; it must divide the channels"},
    {"epsilon", KILN_ATTR_FLOAT, 0, 0, 1e-3, NULL, NULL, 0, 1, 1, 1e-12, 1.0, NULL, 0, 0,
     "added to the variance before its square root"},
};

static const KilnParamSpec kParams[] = {
    {"gamma", KILN_INIT_ONES, 1},
    {"beta", KILN_INIT_ZEROS, 1},
};

static const KilnShape kImage[] = {{4, {2, 4, 4, 6}}};
static const KilnShape kSequence[] = {{3, {2, 5, 8}}};
static const KilnShape kFlat[] = {{2, {3, 4}}};

static const KilnCheckCase kChecks[] = {
    {"image, 3 groups", "{\"groups\": 3}", kImage, 1},
    {"sequence, 2 groups", "{\"groups\": 2, \"epsilon\": 0.01}", kSequence, 1},
    {"flat, one channel per group", "{\"groups\": 4}", kFlat, 1},
};

static const KilnOpDesc kOps[] = {{
    "example.GroupNorm",
    "Group normalization: normalises groups of channels per sample, then scales and shifts per channel",
    1, 1,
    kAttrs, 2,
    kParams, 2,
    gn_param_shape,
    gn_shape,
    NULL,
    gn_forward,
    gn_backward,
    NULL,
    NULL,
    gn_reference,
    kChecks, 3,
}};

static const KilnPluginDesc kPlugin = {KILN_PLUGIN_ABI_VERSION, "example", "1.0", kOps, 1};

KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void) {
    return &kPlugin;
}
