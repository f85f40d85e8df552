// SPDX-License-Identifier: Apache-2.0
// The direct (implicit-GEMM) convolution kernels for ungrouped Conv2D, compiled once per
// instruction set (conv2d_direct_isa.cpp); conv2d.cpp picks the variant for this CPU at run time.
#pragma once

#include <cstddef>

#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/conv2d.h"

namespace kiln::engine::kernels {

// Most taps (kh*kw) of the direct path; larger kernels take the im2col path.
constexpr int kDirectMaxTaps = 256;

// Same contracts as conv2dWorkspaceFloats / conv2dForward / conv2dBackward in conv2d.h, for
// ungrouped geometries with at most kDirectMaxTaps taps. The workspace size depends on the
// variant's vector width.
#define KILN_CONV2D_DIRECT_DECLARE(isa)                                                                   \
    namespace isa {                                                                                       \
    size_t directWorkspaceFloats(const Conv2DGeom& g);                                                    \
    void directConvForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y, \
                           float* workspace, ThreadPool& pool, bool relu);                                \
    void directConvBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx, \
                            float* dw, float* db, float* workspace, ThreadPool& pool);                    \
    }
KILN_CONV2D_DIRECT_DECLARE(avx2)
KILN_CONV2D_DIRECT_DECLARE(avx512)
#undef KILN_CONV2D_DIRECT_DECLARE

}  // namespace kiln::engine::kernels
