// SPDX-License-Identifier: Apache-2.0
// Zero padding and upsampling kernels. Work is split over whole output (or input) rows, so every
// task writes only its own memory and results do not depend on the pool size.
#include "engine/ops/kernels/image.h"

#include <algorithm>
#include <cstring>

namespace kiln::engine::kernels {

namespace {

// Rows (of w·c floats) per parallel chunk: about 16k floats.
int64_t rowGrain(int64_t rowFloats) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(rowFloats, 1)); }

// The two source indices and the weight of the second along one bilinear axis.
struct Tap {
    int64_t i0, i1;
    float t;
};
Tap bilinearTap(int64_t o, int64_t scale, int64_t in) {
    float src = (static_cast<float>(o) + 0.5f) / static_cast<float>(scale) - 0.5f;
    src = std::max(src, 0.0f);
    const auto i0 = std::min(static_cast<int64_t>(src), in - 1);
    const int64_t i1 = std::min(i0 + 1, in - 1);
    return {i0, i1, src - static_cast<float>(i0)};
}

}  // namespace

void zeroPad2DForward(const Pad2DGeom& g, const float* x, float* y, ThreadPool& pool) {
    const int64_t oh = g.oh(), ow = g.ow(), rowF = ow * g.c;
    pool.parallelFor(g.n * oh, rowGrain(rowF), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t b = r / oh, oy = r % oh, iy = oy - g.top;
            float* out = y + r * rowF;
            if (iy < 0 || iy >= g.h) {
                std::memset(out, 0, sizeof(float) * static_cast<size_t>(rowF));
                continue;
            }
            std::memset(out, 0, sizeof(float) * static_cast<size_t>(g.left * g.c));
            std::memcpy(out + g.left * g.c, x + (b * g.h + iy) * g.w * g.c, sizeof(float) * static_cast<size_t>(g.w * g.c));
            std::memset(out + (g.left + g.w) * g.c, 0, sizeof(float) * static_cast<size_t>(g.right * g.c));
        }
    });
}

void zeroPad2DBackward(const Pad2DGeom& g, const float* dy, float* dx, ThreadPool& pool) {
    const int64_t oh = g.oh(), ow = g.ow(), rowF = g.w * g.c;
    pool.parallelFor(g.n * g.h, rowGrain(rowF), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t b = r / g.h, iy = r % g.h;
            const float* src = dy + ((b * oh + iy + g.top) * ow + g.left) * g.c;
            float* dst = dx + r * rowF;
            for (int64_t k = 0; k < rowF; ++k) dst[k] += src[k];
        }
    });
}

void upsample2DForward(const Upsample2DGeom& g, const float* x, float* y, ThreadPool& pool) {
    const int64_t oh = g.oh(), ow = g.ow(), c = g.c, rowF = ow * c;
    pool.parallelFor(g.n * oh, rowGrain(rowF), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t b = r / oh, oy = r % oh;
            const float* img = x + b * g.h * g.w * c;
            float* out = y + r * rowF;
            if (!g.bilinear) {
                const float* row = img + (oy / g.sh) * g.w * c;
                for (int64_t ox = 0; ox < ow; ++ox)
                    std::memcpy(out + ox * c, row + (ox / g.sw) * c, sizeof(float) * static_cast<size_t>(c));
                continue;
            }
            const Tap ty = bilinearTap(oy, g.sh, g.h);
            const float* row0 = img + ty.i0 * g.w * c;
            const float* row1 = img + ty.i1 * g.w * c;
            for (int64_t ox = 0; ox < ow; ++ox) {
                const Tap tx = bilinearTap(ox, g.sw, g.w);
                const float* a = row0 + tx.i0 * c;
                const float* bb = row0 + tx.i1 * c;
                const float* cc = row1 + tx.i0 * c;
                const float* d = row1 + tx.i1 * c;
                float* o = out + ox * c;
                for (int64_t ch = 0; ch < c; ++ch) {
                    const float top = a[ch] + tx.t * (bb[ch] - a[ch]);
                    const float bottom = cc[ch] + tx.t * (d[ch] - cc[ch]);
                    o[ch] = top + ty.t * (bottom - top);
                }
            }
        }
    });
}

void upsample2DBackward(const Upsample2DGeom& g, const float* dy, float* dx, ThreadPool& pool) {
    const int64_t oh = g.oh(), ow = g.ow(), c = g.c;
    if (!g.bilinear) {
        // Each input row gathers its sh × sw block of output gradients.
        const int64_t rowF = g.w * c;
        pool.parallelFor(g.n * g.h, rowGrain(rowF * g.sh * g.sw), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t b = r / g.h, iy = r % g.h;
                float* dst = dx + r * rowF;
                for (int64_t ky = 0; ky < g.sh; ++ky) {
                    const float* src = dy + (b * oh + iy * g.sh + ky) * ow * c;
                    for (int64_t ox = 0; ox < ow; ++ox) {
                        float* d = dst + (ox / g.sw) * c;
                        const float* s = src + ox * c;
                        for (int64_t ch = 0; ch < c; ++ch) d[ch] += s[ch];
                    }
                }
            }
        });
        return;
    }
    // Bilinear: scatter from each output pixel to its four taps; one task per (image, channel
    // block) owns those dx entries, so there are no races and the order is fixed.
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (c + kBlock - 1) / kBlock;
    pool.parallelFor(g.n * blocks, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = t / blocks, c0 = (t % blocks) * kBlock, c1 = std::min(c, c0 + kBlock);
            float* img = dx + b * g.h * g.w * c;
            for (int64_t oy = 0; oy < oh; ++oy) {
                const Tap ty = bilinearTap(oy, g.sh, g.h);
                for (int64_t ox = 0; ox < ow; ++ox) {
                    const Tap tx = bilinearTap(ox, g.sw, g.w);
                    const float* s = dy + ((b * oh + oy) * ow + ox) * c;
                    const float w00 = (1 - ty.t) * (1 - tx.t), w01 = (1 - ty.t) * tx.t;
                    const float w10 = ty.t * (1 - tx.t), w11 = ty.t * tx.t;
                    float* p00 = img + (ty.i0 * g.w + tx.i0) * c;
                    float* p01 = img + (ty.i0 * g.w + tx.i1) * c;
                    float* p10 = img + (ty.i1 * g.w + tx.i0) * c;
                    float* p11 = img + (ty.i1 * g.w + tx.i1) * c;
                    for (int64_t ch = c0; ch < c1; ++ch) {
                        const float v = s[ch];
                        p00[ch] += w00 * v;
                        p01[ch] += w01 * v;
                        p10[ch] += w10 * v;
                        p11[ch] += w11 * v;
                    }
                }
            }
        }
    });
}

}  // namespace kiln::engine::kernels
