// SPDX-License-Identifier: Apache-2.0
// 2-D convolution on NHWC float32 tensors with Keras HWIO weights: forward and accumulating
// backward. Ungrouped convolutions use direct register-tile kernels (AVX2 or AVX-512, chosen at
// run time), and Winograd F(2x2, 3x3) or F(4x4, 3x3) for the forward, backward-data and
// filter-gradient passes of 3x3 unit-stride layers; grouped ones pointwise (GEMM), depthwise
// (direct) and im2col+GEMM paths.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// Keras/TensorFlow window geometry along one spatial axis.
//   'same':  out = ceil(in / stride); total padding = max((out-1)*stride + (k-1)*dilation + 1 - in, 0);
//            padBefore = total / 2 (the odd element goes after, i.e. bottom/right).
//   'valid': out = floor((in - (k-1)*dilation - 1) / stride) + 1 (0 when the window does not fit),
//            padBefore = 0.
struct WindowAxis {
    int64_t out = 0;
    int64_t padBefore = 0;
};
WindowAxis kerasWindowAxis(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool samePadding);

// Shapes (all row-major, float32):
//   x  [n, h, w, c]                     NHWC input
//   w  [kh, kw, c / groups, oc]         HWIO weights (Keras layout); output channels
//                                       [g*oc/groups, (g+1)*oc/groups) belong to group g and read
//                                       input channels [g*c/groups, (g+1)*c/groups)
//   b  [oc]                             optional bias
//   y  [n, oh, ow, oc]                  NHWC output
// Input pixel of output (oy, ox) and tap (ky, kx): (oy*strideH - padTop + ky*dilationH,
// ox*strideW - padLeft + kx*dilationW); pixels outside the image read as zero.
struct Conv2DGeom {
    int64_t n = 0, h = 0, w = 0, c = 0;
    int64_t kh = 1, kw = 1, oc = 0;
    int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, padTop = 0, padLeft = 0;
    int64_t oh = 0, ow = 0;
    int64_t groups = 1;
};

Conv2DGeom makeConv2DGeom(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw, int64_t oc,
                          int64_t strideH, int64_t strideW, int64_t dilationH, int64_t dilationW,
                          bool samePadding, int64_t groups = 1);

// True when every size is positive, groups divides c and oc, and the output is non-empty.
// The kernels below assume a valid geometry; ops validate shapes before calling them.
bool conv2dGeomIsValid(const Conv2DGeom& g);

// True when conv2dForward and the dx part of conv2dBackward use Winograd kernels for this
// geometry (ungrouped 3x3, unit stride and dilation): F(4x4, 3x3) for 16 to 64 channels on both
// sides and outputs of at least 8x8 with either instruction set, otherwise F(2x2, 3x3) with
// enough channels on both sides for the instruction set in use (16 with AVX2, 32 with AVX-512).
// Their results differ from the direct kernels' by rounding only (F(4x4) by up to about 1e-5
// of the largest output, F(2x2) about 1e-6).
bool conv2dUsesWinograd(const Conv2DGeom& g);

// The output tile of the Winograd kernels conv2dForward and the dx part of conv2dBackward use for
// this geometry: 2 for F(2x2, 3x3), 4 for F(4x4, 3x3), 0 where they use the direct kernels.
int conv2dWinogradTile(const Conv2DGeom& g);

// True when the dw part of conv2dBackward uses the Winograd kernels (F(2x2, 3x3) or F(4x4, 3x3),
// see conv2dWinogradFilterGradTile): the same layers, from 16 channels on both sides with either
// instruction set, as long as c x oc (oc rounded up to 16) is at most 65536. Its results differ
// from the direct kernels' by rounding only and do not depend on the thread count.
bool conv2dUsesWinogradFilterGrad(const Conv2DGeom& g);

// The output tile of the Winograd filter gradient for this geometry: 4 (F(4x4, 3x3)) where
// conv2dWinogradTile is 4 and both channel counts are at most 32, else 2 where
// conv2dUsesWinogradFilterGrad holds, else 0.
int conv2dWinogradFilterGradTile(const Conv2DGeom& g);

// Scratch floats needed by conv2dForward and conv2dBackward (the same buffer serves both; its
// contents need not survive between calls). Depends only on the geometry, never on the thread
// count, so a plan can size it once. May be 0.
size_t conv2dWorkspaceFloats(const Conv2DGeom& g);

// y = conv(x, w) + bias, then max(y, 0) when fuseRelu (NaN stays NaN, as in the ReLU
// activation). Overwrites y. bias may be nullptr. Never allocates.
void conv2dForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                   float* workspace, ThreadPool& pool, bool fuseRelu = false);

// Gradients of conv2dForward given dy [n, oh, ow, oc]. ACCUMULATES: dx += dL/dx, dw += dL/dw,
// db += dL/db (the caller zeroes them once, so fan-out and shared weights sum for free). Any of
// dx, dw, db may be nullptr to skip it; x is only read for dw and w only for dx, so either may
// be nullptr when that gradient is skipped. Never allocates; deterministic (every reduction has
// a fixed order that does not depend on timing). The bias and depthwise-filter reductions use
// fixed-chunk partial sums kept in the workspace, so they do not even depend on the pool size;
// neither does anything else for ungrouped convolutions (the direct kernels).
// With overwriteDx, dx = dL/dx instead (the first write of dx; dw and db still accumulate).
void conv2dBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx,
                    float* dw, float* db, float* workspace, ThreadPool& pool, bool overwriteDx = false);

// db[o] += sum over rows of dy[row, o] for dy [rows, oc], with a thread-count-independent
// summation order. Needs biasGradWorkspaceFloats(rows, oc) scratch floats. Shared with Dense.
size_t biasGradWorkspaceFloats(int64_t rows, int64_t oc);
void biasGradAccumulate(int64_t rows, int64_t oc, const float* dy, float* db, float* workspace,
                        ThreadPool& pool);

}  // namespace kiln::engine::kernels
