// SPDX-License-Identifier: Apache-2.0
// Register-tile kernels compiled once per instruction set (tile_kernels_isa.cpp,
// winograd_isa.cpp): the direct (implicit-GEMM) and Winograd convolutions for ungrouped Conv2D
// and a GEMM. conv2d.cpp and gemm.cpp pick the variant for this CPU at run time.
#pragma once

#include <cstddef>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/conv2d.h"

namespace kiln::engine::kernels {

// Most taps (kh*kw) of the direct path; larger kernels take the im2col path.
constexpr int kDirectMaxTaps = 256;

// directWorkspaceFloats / directConvForward / directConvBackward: the contracts of
// conv2dWorkspaceFloats / conv2dForward / conv2dBackward in conv2d.h, for ungrouped geometries
// with at most kDirectMaxTaps taps; the workspace size depends on the variant's vector width.
// tileGemm: C = alpha op(A) op(B) + beta C on the calling thread, with the conventions of gemm()
// in gemm.h (row-major; op(A) is M x K, op(B) is K x N; C is not read when beta is 0). Each C
// element sums its products in blocks of k in a fixed order, so any split of C between threads
// gives the same values. Allocates only when a transposed or ragged op(B) needs a larger panel
// than this thread has used before.
#define KILN_CONV2D_DIRECT_DECLARE(isa)                                                                   \
    namespace isa {                                                                                       \
    size_t directWorkspaceFloats(const Conv2DGeom& g);                                                    \
    void directConvForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y, \
                           float* workspace, ThreadPool& pool, bool relu);                                \
    void directConvBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx, \
                            float* dw, float* db, float* workspace, ThreadPool& pool, bool overwriteDx);  \
    }
KILN_CONV2D_DIRECT_DECLARE(avx2)
KILN_CONV2D_DIRECT_DECLARE(avx512)
#undef KILN_CONV2D_DIRECT_DECLARE

// Winograd kernels (winograd_isa.cpp) for ungrouped 3x3 convolutions with unit stride and
// dilation (any padding): winogradConvForward has conv2dForward's contract,
// winogradConvBackwardData conv2dBackward's for dx alone (dx += dL/dx, or = with overwriteDx),
// and winogradConvBackwardFilter its contract for dw alone (dw += dL/dw), all on
// F(tile x tile, 3x3) with tile 2 or 4 (any other value means 2; at most 1000 channels on either
// side with tile 2, 512 with tile 4). Each needs
// winogradWorkspaceFloats(g, tile, gradTile) floats of scratch (the transformed filter for
// forward and backward-data on `tile`, rebuilt on every call, or the partial sums of the filter
// gradient on `gradTile`) and never allocates. Results match the direct kernels up to rounding.
#define KILN_CONV2D_WINOGRAD_DECLARE(isa)                                                                      \
    namespace isa {                                                                                            \
    size_t winogradWorkspaceFloats(const Conv2DGeom& g, int tile, int gradTile);                               \
    void winogradConvForward(const Conv2DGeom& g, int tile, const float* x, const float* w, const float* bias, \
                             float* y, float* workspace, ThreadPool& pool, bool relu);                         \
    void winogradConvBackwardData(const Conv2DGeom& g, int tile, const float* w, const float* dy, float* dx,   \
                                  float* workspace, ThreadPool& pool, bool overwriteDx);                       \
    void winogradConvBackwardFilter(const Conv2DGeom& g, int tile, const float* x, const float* dy, float* dw, \
                                    float* workspace, ThreadPool& pool);                                       \
    }
KILN_CONV2D_WINOGRAD_DECLARE(avx2)
KILN_CONV2D_WINOGRAD_DECLARE(avx512)
#undef KILN_CONV2D_WINOGRAD_DECLARE

#define KILN_TILE_GEMM_DECLARE(isa)                                                                       \
    namespace isa {                                                                                       \
    void tileGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, \
                  int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);           \
    }
KILN_TILE_GEMM_DECLARE(avx2)
KILN_TILE_GEMM_DECLARE(avx512)
#undef KILN_TILE_GEMM_DECLARE

}  // namespace kiln::engine::kernels
