// SPDX-License-Identifier: Apache-2.0
// GEMM through cuBLASLt with fused bias and activation epilogues, fp32 (TF32 tensor cores when
// allowed), fp16 or bf16 inputs with fp32 accumulation and output. Column-major, as cuBLAS.
#pragma once

#include <cstdint>

#include "engine/backends/cuda/device_context.h"
#include "engine/backends/cuda/kernels.h"

namespace kiln::engine::cuda {

enum class DataType { F32, F16, BF16 };

struct GemmDesc {
    bool transA = false, transB = false;
    int64_t m = 0, n = 0, k = 0;  // D[m, n] = op(A)[m, k] · op(B)[k, n]
    int64_t lda = 0, ldb = 0, ldd = 0;
    DataType ab = DataType::F32;  // A and B element type; D is always fp32
    float alpha = 1.0f;
    float beta = 0.0f;                 // 1: accumulate into D
    const float* bias = nullptr;       // [m], added per row of D (a column-major row = an output unit)
    k::Act epilogue = k::Act::Linear;  // ReLU and GeluTanh are fused; others applied after
    bool tf32 = true;                  // fp32 on tensor cores with 10-bit mantissas
    // Strided batch: `batch` products, the i-th reading A + i·strideA, B + i·strideB and writing
    // D + i·strideD (strides in elements). No bias with batch > 1.
    int64_t batch = 1;
    int64_t strideA = 0, strideB = 0, strideD = 0;
};

// D = alpha·op(A)·op(B) + beta·D (+ bias, activation). Algorithm choices are cached per shape.
Status gemm(DeviceContext& ctx, const GemmDesc& d, const void* a, const void* b, float* out);

// Row-major C[m, n] = alpha·op(A)[m, k]·op(B)[k, n] + beta·C, with row strides lda, ldb, ldc (as
// the CPU's kernels::gemm), `batch` times with element strides between the matrices; fp32 C.
struct RowGemm {
    bool transA = false, transB = false;
    int64_t m = 0, n = 0, k = 0;
    int64_t lda = 0, ldb = 0, ldc = 0;
    float alpha = 1.0f, beta = 0.0f;
    int64_t batch = 1;
    int64_t strideA = 0, strideB = 0, strideC = 0;
    DataType ab = DataType::F32;
    bool tf32 = true;
};
Status gemmRowMajor(DeviceContext& ctx, const RowGemm& r, const void* a, const void* b, float* c);

// Row-major helpers for Dense, y[rows, out] = x[rows, in] · W[in, out]:
Status denseForward(DeviceContext& ctx, const void* x, const void* w, const float* bias, float* y,
                    int64_t rows, int64_t in, int64_t out, DataType type, k::Act act, bool tf32);
// dx += dy · Wᵀ and dW += xᵀ · dy (either may be null).
Status denseBackward(DeviceContext& ctx, const float* x, const float* w, const float* dy, float* dx,
                     float* dw, int64_t rows, int64_t in, int64_t out, bool tf32);

}  // namespace kiln::engine::cuda
