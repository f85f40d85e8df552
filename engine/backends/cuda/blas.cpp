// SPDX-License-Identifier: Apache-2.0
// cuBLASLt matmuls: descriptors and heuristics built once per shape and kept in a cache.
#include "engine/backends/cuda/blas.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace kiln::engine::cuda {
namespace {

Error blasError(cublasStatus_t st, const char* what) {
    return Error(ErrorCode::DeviceUnavailable,
                 std::string(what) + " failed (cuBLAS status " + std::to_string(int(st)) + ")")
        .with("device", "cuda");
}

cudaDataType_t cudaType(DataType t) {
    switch (t) {
    case DataType::F32:
        return CUDA_R_32F;
    case DataType::F16:
        return CUDA_R_16F;
    case DataType::BF16:
        return CUDA_R_16BF;
    }
    return CUDA_R_32F;
}

size_t elementBytes(DataType t) {
    return t == DataType::F32 ? 4 : 2;
}

// The largest power of two up to 256 dividing the address of every matrix of a batch: cuBLASLt
// assumes 256-byte aligned matrices unless told otherwise, and a head's columns inside a wider row
// (attention) start anywhere.
uint32_t alignmentOf(const void* p, int64_t batch, int64_t stride, size_t elem) {
    uint64_t bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
    if (batch > 1) bits |= static_cast<uint64_t>(stride) * elem;
    uint32_t a = 256;
    while (a > 1 && (bits & (a - 1)) != 0) a >>= 1;
    return a;
}

struct Alignment {
    uint32_t a = 256, b = 256, d = 256;
};

// Everything that identifies a matmul configuration.
using Key = std::tuple<void*, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, bool,
                       int, bool, bool, int64_t, int64_t, int64_t, int64_t, uint32_t, uint32_t, uint32_t>;

struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool fusedAct = false;
};

std::mutex g_mutex;
std::map<Key, Plan> g_plans;  // lives for the process; a handful of shapes per model

Result<Plan*> planFor(DeviceContext& ctx, const GemmDesc& g, const Alignment& al) {
    const bool fusable =
        g.epilogue == k::Act::ReLU || g.epilogue == k::Act::GeluTanh || g.epilogue == k::Act::Linear;
    const bool batched = g.batch > 1;
    Key key{ctx.cublasLt(),
            g.transA,
            g.transB,
            g.m,
            g.n,
            g.k,
            g.lda,
            g.ldb,
            g.ldd,
            int(g.ab),
            g.bias != nullptr,
            int(g.epilogue),
            g.tf32,
            g.beta != 0.0f,
            g.batch,
            batched ? g.strideA : 0,
            batched ? g.strideB : 0,
            batched ? g.strideD : 0,
            al.a,
            al.b,
            al.d};
    std::lock_guard lock(g_mutex);
    if (auto it = g_plans.find(key); it != g_plans.end()) return &it->second;
    Plan p;
    const cublasComputeType_t compute =
        g.ab == DataType::F32 && g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (auto st = cublasLtMatmulDescCreate(&p.op, compute, CUDA_R_32F); st != CUBLAS_STATUS_SUCCESS)
        return blasError(st, "cublasLtMatmulDescCreate");
    cublasOperation_t ta = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    if (fusable) {
        p.fusedAct = true;
        if (g.epilogue == k::Act::ReLU)
            epi = g.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
        else if (g.epilogue == k::Act::GeluTanh)
            epi = g.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
        else if (g.bias)
            epi = CUBLASLT_EPILOGUE_BIAS;
    } else if (g.bias) {
        epi = CUBLASLT_EPILOGUE_BIAS;
    }
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (g.bias) {
        const cudaDataType_t bt = CUDA_R_32F;
        cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    const auto rowsA = g.transA ? g.k : g.m, colsA = g.transA ? g.m : g.k;
    const auto rowsB = g.transB ? g.n : g.k, colsB = g.transB ? g.k : g.n;
    cublasLtMatrixLayoutCreate(&p.a, cudaType(g.ab), static_cast<uint64_t>(rowsA),
                               static_cast<uint64_t>(colsA), g.lda);
    cublasLtMatrixLayoutCreate(&p.b, cudaType(g.ab), static_cast<uint64_t>(rowsB),
                               static_cast<uint64_t>(colsB), g.ldb);
    cublasLtMatrixLayoutCreate(&p.d, CUDA_R_32F, static_cast<uint64_t>(g.m), static_cast<uint64_t>(g.n),
                               g.ldd);
    if (batched) {
        const auto count = static_cast<int32_t>(g.batch);
        const int64_t strides[3] = {g.strideA, g.strideB, g.strideD};
        cublasLtMatrixLayout_t layouts[3] = {p.a, p.b, p.d};
        for (int i = 0; i < 3; ++i) {
            cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
            cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                             sizeof strides[i]);
        }
    }
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulPreferenceCreate(&pref);
    const size_t ws = ctx.blasWorkspaceBytes();
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al.a, sizeof al.a);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al.b, sizeof al.b);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al.d, sizeof al.d);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al.d, sizeof al.d);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    auto st = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(ctx.cublasLt()), p.op, p.a, p.b,
                                             p.d, p.d, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        cublasLtMatrixLayoutDestroy(p.a);
        cublasLtMatrixLayoutDestroy(p.b);
        cublasLtMatrixLayoutDestroy(p.d);
        cublasLtMatmulDescDestroy(p.op);
        return Error(ErrorCode::Unsupported, "cuBLASLt has no algorithm for a " + std::to_string(g.m) + "x" +
                                                 std::to_string(g.n) + "x" + std::to_string(g.k) + " matmul")
            .with("what", "matmul");
    }
    p.algo = result.algo;
    return &g_plans.emplace(key, p).first->second;
}

}  // namespace

Status gemm(DeviceContext& ctx, const GemmDesc& g, const void* a, const void* b, float* out) {
    if (g.m <= 0 || g.n <= 0 || g.batch <= 0) return {};
    if (g.batch > 1 && g.bias)
        return Error(ErrorCode::Internal, "a batched matmul with a bias epilogue").with("what", "matmul");
    if (g.k <= 0) {  // an empty sum: D = beta·D (+ bias, activation)
        if (g.beta == 0.0f) {
            for (int64_t i = 0; i < g.batch; ++i) {
                float* d = out + i * g.strideD;
                if (g.ldd == g.m) {
                    KILN_TRY(ctx.memsetAsync(d, 0, sizeof(float) * size_t(g.m * g.n)));
                    continue;
                }
                for (int64_t col = 0; col < g.n; ++col)
                    KILN_TRY(ctx.memsetAsync(d + col * g.ldd, 0, sizeof(float) * size_t(g.m)));
            }
        }
        return {};
    }
    const size_t eb = elementBytes(g.ab);
    const Alignment al{alignmentOf(a, g.batch, g.strideA, eb), alignmentOf(b, g.batch, g.strideB, eb),
                       alignmentOf(out, g.batch, g.strideD, 4)};
    KILN_ASSIGN(Plan * p, planFor(ctx, g, al));
    if (g.bias)
        cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias);
    auto st = cublasLtMatmul(static_cast<cublasLtHandle_t>(ctx.cublasLt()), p->op, &g.alpha, a, p->a, b, p->b,
                             &g.beta, out, p->d, out, p->d, &p->algo, ctx.blasWorkspace(),
                             ctx.blasWorkspaceBytes(), ctx.stream());
    if (st != CUBLAS_STATUS_SUCCESS) return blasError(st, "cublasLtMatmul");
    if (!p->fusedAct && g.epilogue != k::Act::Linear)
        k::activationForward(g.epilogue, out, out, g.m * g.n, 0.0f, ctx.stream());
    return {};
}

Status gemmRowMajor(DeviceContext& ctx, const RowGemm& r, const void* a, const void* b, float* c) {
    // Row-major C is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a row-major matrix is the column-major
    // view of its transpose: swap the operands, keep the transpose flags.
    GemmDesc g;
    g.transA = r.transB;
    g.transB = r.transA;
    g.m = r.n;
    g.n = r.m;
    g.k = r.k;
    g.lda = r.ldb;
    g.ldb = r.lda;
    g.ldd = r.ldc;
    g.ab = r.ab;
    g.alpha = r.alpha;
    g.beta = r.beta;
    g.tf32 = r.tf32;
    g.batch = r.batch;
    g.strideA = r.strideB;
    g.strideB = r.strideA;
    g.strideD = r.strideC;
    return gemm(ctx, g, b, a, c);
}

Status denseForward(DeviceContext& ctx, const void* x, const void* w, const float* bias, float* y,
                    int64_t rows, int64_t in, int64_t out, DataType type, k::Act act, bool tf32) {
    // Column-major view: yᵀ[out, rows] = Wᵀ[out, in] · xᵀ[in, rows]; row-major W[in, out] is
    // column-major Wᵀ with ld = out.
    GemmDesc g;
    g.m = out;
    g.n = rows;
    g.k = in;
    g.lda = out;
    g.ldb = in;
    g.ldd = out;
    g.ab = type;
    g.bias = bias;
    g.epilogue = act;
    g.tf32 = tf32;
    return gemm(ctx, g, w, x, y);
}

Status denseBackward(DeviceContext& ctx, const float* x, const float* w, const float* dy, float* dx,
                     float* dw, int64_t rows, int64_t in, int64_t out, bool tf32) {
    if (dx) {  // dxᵀ[in, rows] += W[in, out] · dyᵀ[out, rows]; W is the transpose of the stored Wᵀ
        GemmDesc g;
        g.transA = true;
        g.m = in;
        g.n = rows;
        g.k = out;
        g.lda = out;
        g.ldb = out;
        g.ldd = in;
        g.beta = 1.0f;
        g.tf32 = tf32;
        KILN_TRY(gemm(ctx, g, w, dy, dx));
    }
    if (dw) {  // dWᵀ[out, in] += dyᵀ[out, rows] · x[rows, in]
        GemmDesc g;
        g.transB = true;
        g.m = out;
        g.n = in;
        g.k = rows;
        g.lda = out;
        g.ldb = in;
        g.ldd = out;
        g.beta = 1.0f;
        g.tf32 = tf32;
        KILN_TRY(gemm(ctx, g, dy, x, dw));
    }
    return {};
}

}  // namespace kiln::engine::cuda
