// SPDX-License-Identifier: Apache-2.0
// Spatial resizing of NHWC float32 images: zero padding and integer-factor upsampling (nearest or
// bilinear, Keras/TensorFlow half-pixel geometry), forward and accumulating backward.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"

namespace kiln::engine::kernels {

// x [n, h, w, c] -> y [n, top + h + bottom, left + w + right, c]; the border is zero.
struct Pad2DGeom {
    int64_t n = 0, h = 0, w = 0, c = 0;
    int64_t top = 0, bottom = 0, left = 0, right = 0;
    int64_t oh() const { return h + top + bottom; }
    int64_t ow() const { return w + left + right; }
};
void zeroPad2DForward(const Pad2DGeom& g, const float* x, float* y, ThreadPool& pool);
// dx += the interior of dy.
void zeroPad2DBackward(const Pad2DGeom& g, const float* dy, float* dx, ThreadPool& pool);

// x [n, h, w, c] -> y [n, h·sh, w·sw, c].
//   nearest:  y[oy, ox] = x[oy / sh, ox / sw]
//   bilinear: source coordinate (o + 0.5) / s - 0.5 per axis, clamped to [0, in - 1], linear
//             between its two neighbours (tf.image.resize "bilinear", PyTorch align_corners=False).
struct Upsample2DGeom {
    int64_t n = 0, h = 0, w = 0, c = 0;
    int64_t sh = 1, sw = 1;
    bool bilinear = false;
    int64_t oh() const { return h * sh; }
    int64_t ow() const { return w * sw; }
};
void upsample2DForward(const Upsample2DGeom& g, const float* x, float* y, ThreadPool& pool);
// dx += the adjoint of upsample2DForward applied to dy (deterministic: each task owns whole
// images or input rows).
void upsample2DBackward(const Upsample2DGeom& g, const float* dy, float* dx, ThreadPool& pool);

}  // namespace kiln::engine::kernels
