/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin ABI 1.0 header as Kiln shipped it, kept to build a plugin for an older Kiln in the tests. */
/* The Kiln plugin ABI: plain C structs and function pointers through which a shared library adds
 * operations to Kiln without rebuilding it. A plugin exports one function,
 * kiln_plugin_describe(), returning a descriptor whose first field is the ABI version it was
 * built against; Kiln refuses any other version before reading further.
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

/* Raised whenever a struct below changes layout or meaning. */
#define KILN_PLUGIN_ABI_VERSION 1u
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

typedef struct KilnPluginDesc {
    uint32_t abi_version;         /* KILN_PLUGIN_ABI_VERSION: always the first field */
    const char* name;             /* e.g. "acme" */
    const char* version;          /* the plugin's own version, free text */
    const KilnOpDesc* ops;
    int32_t op_count;
} KilnPluginDesc;

typedef const KilnPluginDesc* (*KilnPluginDescribeFn)(void);

/* The one entry point a plugin exports:
 *   KILN_PLUGIN_EXPORT const KilnPluginDesc* kiln_plugin_describe(void); */

#ifdef __cplusplus
}
#endif

#endif /* KILN_PLUGIN_H */
