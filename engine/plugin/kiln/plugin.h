/* SPDX-License-Identifier: Apache-2.0 */
/* The Kiln plugin ABI: plain C structs and function pointers through which a shared library adds
 * operations, losses and metrics to Kiln without rebuilding it. A plugin exports one function,
 * kiln_plugin_describe(), returning a descriptor whose first field is the ABI version it was
 * built against. Kiln loads plugins of its own major version and of any minor version up to its
 * own (a minor version only appends fields, which Kiln reads only from plugins that have them);
 * it refuses any other version before reading further.
 *
 * Conventions:
 * - Tensors are float32, dense, row-major with the batch first and channels last (NHWC for
 *   images). Shapes handed to a plugin always carry the concrete batch in dims[0]; in shape and
 *   parameter functions called while the editor analyses a graph the batch is -1.
 * - Functions return 0 on success. On failure they write an English sentence into `error`
 *   (at most error_size bytes, NUL-terminated) and return non-zero; Kiln shows it naming the node.
 * - Backward kernels ACCUMULATE (+=) into d_inputs and d_params; a null entry needs no gradient.
 * - Everything the descriptor points to must stay valid while the library is loaded; Kiln never
 *   unloads a plugin while the process runs. */
#ifndef KILN_PLUGIN_H
#define KILN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version is (major << 16) | minor. The major version is raised whenever a struct below
 * changes layout or meaning; the minor version when fields are appended to KilnPluginDesc.
 * Plugins built before minor versions existed declare the plain number 1, read as 1.0.
 *   1.0: operations
 *   1.1: losses and metrics (KilnPluginDesc.losses, .metrics)
 *   1.2: check cases for losses (KilnPluginDesc.loss_check_cases) */
#define KILN_PLUGIN_ABI_MAJOR 1u
#define KILN_PLUGIN_ABI_MINOR 2u
#define KILN_PLUGIN_ABI_VERSION ((KILN_PLUGIN_ABI_MAJOR << 16) | KILN_PLUGIN_ABI_MINOR)
#define KILN_PLUGIN_MAX_RANK 8
#define KILN_PLUGIN_ENTRY_POINT "kiln_plugin_describe"

#if defined(_WIN32)
#define KILN_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KILN_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef enum KilnAttrType {
    KILN_ATTR_BOOL = 0,
    KILN_ATTR_INT = 1,
    KILN_ATTR_FLOAT = 2,
    KILN_ATTR_STRING = 3,
    KILN_ATTR_INT_LIST = 4
} KilnAttrType;

/* One attribute of an operation; the studio's inspector is generated from these. */
typedef struct KilnAttrSpec {
    const char* name;               /* snake_case, unique within the op; not "plugin_op" */
    int32_t type;                   /* KilnAttrType */
    int32_t required;               /* 1: no default, the user must set it */
    int64_t default_int;            /* BOOL (0/1) and INT */
    double default_float;           /* FLOAT */
    const char* default_string;     /* STRING (may be NULL for "") */
    const int64_t* default_ints;    /* INT_LIST */
    int32_t default_int_count;
    int32_t has_min, has_max;       /* inclusive bounds for INT, FLOAT and every INT_LIST element */
    double min, max;
    const char* const* choices;     /* STRING: the allowed values (NULL: any) */
    int32_t choice_count;
    int32_t list_length;            /* INT_LIST: required length (0: any) */
    const char* doc;                /* one line */
} KilnAttrSpec;

/* A validated attribute value, in the op's schema order. */
typedef struct KilnAttrValue {
    int64_t i;            /* BOOL (0/1) and INT */
    double f;             /* FLOAT */
    const char* s;        /* STRING */
    const int64_t* ints;  /* INT_LIST */
    int32_t count;        /* INT_LIST length */
} KilnAttrValue;

typedef struct KilnShape {
    int32_t rank;
    int64_t dims[KILN_PLUGIN_MAX_RANK];
} KilnShape;

/* What shape and parameter functions see: attributes (defaults filled in) and input shapes. */
typedef struct KilnOpContext {
    const char* node_name;
    const KilnAttrValue* attrs;
    int32_t attr_count;
    const KilnShape* inputs;
    int32_t input_count;
} KilnOpContext;

typedef enum KilnInit {
    KILN_INIT_ZEROS = 0,
    KILN_INIT_ONES = 1,
    KILN_INIT_GLOROT_UNIFORM = 2,
    KILN_INIT_HE_UNIFORM = 3
} KilnInit;

typedef struct KilnParamSpec {
    const char* name;    /* saved as "<node>/<name>" in weight files */
    int32_t init;        /* KilnInit */
    int32_t trainable;   /* 0: state the forward pass may update; the optimizer leaves it alone */
} KilnParamSpec;

typedef struct KilnTensor {
    float* data;         /* host memory for CPU kernels, device memory for CUDA kernels */
    KilnShape shape;
    int64_t strides[KILN_PLUGIN_MAX_RANK]; /* in elements; dense row-major today */
} KilnTensor;

/* Runs fn(user, begin, end) over chunks of [0, n) on Kiln's thread pool and returns when all
 * are done; chunk boundaries depend only on n and the thread count. */
typedef void (*KilnRangeFn)(void* user, int64_t begin, int64_t end);
typedef void (*KilnParallelForFn)(void* pool, int64_t n, KilnRangeFn fn, void* user);

typedef struct KilnKernelArgs {
    const KilnOpContext* ctx;     /* attributes and concrete input shapes */
    const KilnTensor* inputs;     /* read-only */
    int32_t input_count;
    KilnTensor output;
    const KilnTensor* params;     /* non-trainable ones may be updated by a training forward */
    int32_t param_count;
    /* Backward only (NULL in forward). */
    const float* d_output;
    float* const* d_inputs;       /* per input; NULL: not needed */
    float* const* d_params;       /* per parameter; NULL: frozen */
    float* workspace;             /* workspace_floats() floats of scratch, contents undefined */
    int64_t workspace_floats;
    int32_t training;             /* 1 in a training step */
    KilnParallelForFn parallel_for; /* CPU kernels; NULL in CUDA kernels */
    void* pool;
    char* error;
    size_t error_size;
} KilnKernelArgs;

typedef int (*KilnShapeFn)(const KilnOpContext* ctx, KilnShape* output, char* error, size_t error_size);
typedef int (*KilnParamShapeFn)(const KilnOpContext* ctx, const KilnShape* output, int32_t param_index,
                                KilnShape* shape, char* error, size_t error_size);
typedef int64_t (*KilnWorkspaceFn)(const KilnOpContext* ctx, const KilnShape* output);
typedef int (*KilnCpuKernelFn)(const KilnKernelArgs* args);
/* stream is the cudaStream_t the kernel must run on; buffers are device memory. */
typedef int (*KilnCudaKernelFn)(const KilnKernelArgs* args, void* stream);

/* An example the "Check plugin" command and the tests run: attribute values as a JSON object
 * (e.g. "{\"groups\": 2}") and concrete input shapes, batch first. */
typedef struct KilnCheckCase {
    const char* name;
    const char* attrs_json;
    const KilnShape* inputs;
    int32_t input_count;
} KilnCheckCase;

typedef struct KilnOpDesc {
    const char* name;             /* namespaced: "acme.GroupNorm" */
    const char* doc;              /* one line */
    int32_t min_inputs;
    int32_t max_inputs;           /* -1: any number */
    const KilnAttrSpec* attrs;
    int32_t attr_count;
    const KilnParamSpec* params;
    int32_t param_count;
    KilnParamShapeFn param_shape; /* required when param_count > 0 */
    KilnShapeFn shape;            /* required */
    KilnWorkspaceFn workspace_floats; /* optional: 0 scratch floats */
    KilnCpuKernelFn cpu_forward;  /* required */
    KilnCpuKernelFn cpu_backward; /* required for training */
    KilnCudaKernelFn cuda_forward;  /* optional: without it the op is refused on CUDA */
    KilnCudaKernelFn cuda_backward; /* optional */
    KilnCpuKernelFn reference_forward; /* optional: a plain implementation checked against cpu_forward */
    const KilnCheckCase* check_cases;
    int32_t check_case_count;
} KilnOpDesc;

/* ---- Losses (ABI 1.1) ----------------------------------------------------------------------
 * A plugin loss gives one value per sample and its gradient; Kiln does the reduction (the mean
 * over the batch), applies the term's weight and feeds the gradient into the model's backward
 * pass, exactly as for its built-in losses. A project names it in training.loss as
 * {"type": "plugin:acme.Huber", <attributes>...}. */

/* What a loss (or metric) function sees. ctx->inputs[0] is the predictions' shape and
 * ctx->inputs[1] the targets' shape, both with the concrete batch in dims[0]. */
typedef struct KilnLossArgs {
    const KilnOpContext* ctx;
    const float* predictions;     /* [batch, width], read-only */
    const float* targets;         /* [batch, target_width], read-only */
    int64_t batch;
    int64_t width;                /* prediction values per sample */
    int64_t target_width;         /* target values per sample */
    float* values;                /* write: [batch] the loss of each sample */
    float* d_predictions;         /* NULL, or write (=, not +=): [batch, width] d values[i] / d predictions[i, :] */
    KilnParallelForFn parallel_for;
    void* pool;
    char* error;
    size_t error_size;
} KilnLossArgs;

/* Checks the prediction and target shapes of ctx (batch -1) when a model with the loss or metric is compiled. */
typedef int (*KilnLossShapeFn)(const KilnOpContext* ctx, char* error, size_t error_size);
typedef int (*KilnLossFn)(const KilnLossArgs* args);

typedef struct KilnLossDesc {
    const char* name;             /* namespaced: "acme.Huber" */
    const char* doc;              /* one line */
    const KilnAttrSpec* attrs;
    int32_t attr_count;
    KilnLossShapeFn check_shapes; /* optional: without it, predictions and targets must hold the
                                     same number of values per sample */
    KilnLossFn compute;           /* required: values, and d_predictions when it is not NULL */
} KilnLossDesc;

/* ---- Metrics (ABI 1.1) ----------------------------------------------------------------------
 * A streaming metric keeps its accumulators in `state`: state_count doubles that Kiln owns. The
 * state must add up across shards of the data (data-parallel training sums the replicas' states
 * element by element before result()), so a reset state is normally all zeros. A project names
 * it in training.metrics as "plugin:acme.FBeta" or {"type": "plugin:acme.FBeta", <attributes>}. */
typedef struct KilnMetricArgs {
    const KilnOpContext* ctx;     /* inputs[0] predictions, inputs[1] targets; dims[0] is -1 (see batch) */
    const float* predictions;     /* [batch, width] */
    const float* targets;         /* [batch, target_width] */
    int64_t batch;
    int64_t width;
    int64_t target_width;
    double* state;                /* state_count doubles */
    char* error;
    size_t error_size;
} KilnMetricArgs;

typedef int (*KilnMetricResetFn)(const KilnOpContext* ctx, double* state, char* error, size_t error_size);
typedef int (*KilnMetricUpdateFn)(const KilnMetricArgs* args);
typedef int (*KilnMetricResultFn)(const KilnOpContext* ctx, const double* state, double* value, char* error,
                                  size_t error_size);

typedef struct KilnMetricDesc {
    const char* name;             /* namespaced: "acme.FBeta" */
    const char* doc;              /* one line */
    const KilnAttrSpec* attrs;
    int32_t attr_count;
    int32_t state_count;          /* 1 to 4096 */
    KilnLossShapeFn check_shapes; /* optional, as for losses */
    KilnMetricResetFn reset;      /* optional: without it Kiln zeroes the state */
    KilnMetricUpdateFn update;    /* required: adds one batch to the state */
    KilnMetricResultFn result;    /* required: the value over everything since the reset */
} KilnMetricDesc;

/* An example the loss check runs (ABI 1.2), for a loss whose defaults cannot make one (a required
 * attribute) or whose shapes the automatic cases do not cover: attribute values as a JSON object
 * (e.g. "{\"quantile\": 0.9}") and the prediction and target shapes, batch first. A loss with
 * cases is checked on them instead of on the automatic ones. */
typedef struct KilnLossCheckCase {
    const char* loss;             /* the loss it checks, one of this plugin's: "acme.Quantile" */
    const char* name;
    const char* attrs_json;
    KilnShape predictions;        /* concrete batch in dims[0] */
    KilnShape targets;
} KilnLossCheckCase;

typedef struct KilnPluginDesc {
    uint32_t abi_version;         /* KILN_PLUGIN_ABI_VERSION: always the first field */
    const char* name;             /* e.g. "acme" */
    const char* version;          /* the plugin's own version, free text */
    const KilnOpDesc* ops;
    int32_t op_count;
    /* Since 1.1; Kiln reads them only when abi_version says 1.1 or later. */
    const KilnLossDesc* losses;
    int32_t loss_count;
    const KilnMetricDesc* metrics;
    int32_t metric_count;
    /* Since 1.2. */
    const KilnLossCheckCase* loss_check_cases;
    int32_t loss_check_case_count;
} KilnPluginDesc;

typedef const KilnPluginDesc* (*KilnPluginDescribeFn)(void);

/* The one entry point a plugin exports:
 *   KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void); */

#ifdef __cplusplus
}
#endif

#endif /* KILN_PLUGIN_H */
