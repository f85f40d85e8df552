// SPDX-License-Identifier: Apache-2.0
// 2-D max/average pooling and global average/max pooling on NHWC float32 tensors, forward and
// accumulating backward, with Keras/TensorFlow window geometry.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// x [n, h, w, c] -> y [n, oh, ow, c]. Window (oy, ox) covers input rows
// [oy*strideH - padTop, oy*strideH - padTop + poolH) and likewise for columns; positions outside
// the image are ignored (never counted as zeros), as in TensorFlow.
struct Pool2DGeom {
    int64_t n = 0, h = 0, w = 0, c = 0;
    int64_t poolH = 1, poolW = 1;
    int64_t strideH = 1, strideW = 1;
    int64_t padTop = 0, padLeft = 0;
    int64_t oh = 0, ow = 0;
};

// Same padding rules as Conv2D ('same': out = ceil(in/stride), extra padding bottom/right;
// 'valid': out = floor((in - pool)/stride) + 1). Keras's default strides equal the pool size.
Pool2DGeom makePool2DGeom(int64_t n, int64_t h, int64_t w, int64_t c, int64_t poolH, int64_t poolW,
                          int64_t strideH, int64_t strideW, bool samePadding);
bool pool2dGeomIsValid(const Pool2DGeom& g);

// Max pooling records, per output element, the spatial index iy*w + ix (within its image and
// channel) of the input element it selected: an int32 buffer of this many entries, laid out
// like y. The first maximum in row-major window order wins; a NaN in the window wins (and
// propagates) like in PyTorch.
size_t maxPool2DIndexCount(const Pool2DGeom& g);

// Overwrites y. argmax may be nullptr (inference); backward needs it.
void maxPool2DForward(const Pool2DGeom& g, const float* x, float* y, int32_t* argmax, ThreadPool& pool);
// dx += gradient of max pooling: each dy goes to the input element its window selected.
void maxPool2DBackward(const Pool2DGeom& g, const float* dy, const int32_t* argmax, float* dx,
                       ThreadPool& pool);

// Average over the valid (in-image) elements of each window: with 'same' padding, edge windows
// divide by fewer than poolH*poolW, as TensorFlow does. Overwrites y.
void avgPool2DForward(const Pool2DGeom& g, const float* x, float* y, ThreadPool& pool);
// dx += gradient of avgPool2DForward.
void avgPool2DBackward(const Pool2DGeom& g, const float* dy, float* dx, ThreadPool& pool);

// y[b, ci] = mean over the h*w pixels of x[b, :, :, ci]; x [n, h, w, c], y [n, c].
void globalAvgPool2DForward(int64_t n, int64_t h, int64_t w, int64_t c, const float* x, float* y,
                            ThreadPool& pool);
// dx[b, p, ci] += dy[b, ci] / (h*w) (= with overwrite).
void globalAvgPool2DBackward(int64_t n, int64_t h, int64_t w, int64_t c, const float* dy, float* dx,
                             ThreadPool& pool, bool overwrite = false);

// y[b, ci] = max over the h*w pixels of x[b, :, :, ci]; argmax[b, ci] (nullable: inference) gets
// the winning pixel's index p = iy*w + ix. The first maximum wins; a NaN wins and propagates.
void globalMaxPool2DForward(int64_t n, int64_t h, int64_t w, int64_t c, const float* x, float* y,
                            int32_t* argmax, ThreadPool& pool);
// dx[b, argmax[b, ci], ci] += dy[b, ci].
void globalMaxPool2DBackward(int64_t n, int64_t h, int64_t w, int64_t c, const float* dy, const int32_t* argmax,
                             float* dx, ThreadPool& pool);

}  // namespace kiln::engine::kernels
