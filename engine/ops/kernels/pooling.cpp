// SPDX-License-Identifier: Apache-2.0
// Pooling kernels. Forward passes run over output rows; backward passes are gathers over input
// rows (each input pixel sums the windows that contain it, in fixed order), so overlapping
// windows never race and results do not depend on the thread count.
#include "engine/ops/kernels/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

// GCC notes that passing 64-byte vector types by value depends on the ISA; the helpers are local.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "engine/ops/kernels/conv2d.h"
#include "engine/ops/kernels/lane_vectors.h"

namespace kiln::engine::kernels {
namespace {

// Output windows along one axis that contain input position i: [lo, hi] (empty when lo > hi).
// Window o covers [o*stride - pad, o*stride - pad + k).
inline void windowsContaining(int64_t i, int64_t k, int64_t stride, int64_t pad, int64_t out, int64_t& lo,
                              int64_t& hi) {
    const int64_t t = i + pad;  // o*stride <= t < o*stride + k
    lo = t - k + 1 <= 0 ? 0 : (t - k + 1 + stride - 1) / stride;
    hi = std::min(out - 1, t / stride);
}

// Valid input range of window o along one axis: [begin, end).
inline void windowSpan(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t in, int64_t& begin,
                       int64_t& end) {
    const int64_t s = o * stride - pad;
    begin = std::max<int64_t>(s, 0);
    end = std::min<int64_t>(s + k, in);
}

// One block of channels: a vector register of the baseline instruction set (lane_vectors.h).
using native::kLanes;
using native::loadN;
using native::storeN;
using native::Vf;
using native::Vi;

// Max pooling of output rows [q0, q1), kLanes channels at a time: per lane, the first maximum in
// row-major window order wins and a NaN wins over everything (the last NaN, like the scalar
// rule `v > best || isnan(v)`).
template <bool kRecord>
void maxForwardRows(const Pool2DGeom& g, const float* x, float* y, int32_t* argmax, int64_t q0, int64_t q1) {
    const Vf negInf = Vf{} - std::numeric_limits<float>::infinity();
    for (int64_t q = q0; q < q1; ++q) {
        const int64_t b = q / g.oh, oy = q % g.oh;
        int64_t y0, y1;
        windowSpan(oy, g.poolH, g.strideH, g.padTop, g.h, y0, y1);
        for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t x0, x1;
            windowSpan(ox, g.poolW, g.strideW, g.padLeft, g.w, x0, x1);
            float* yp = y + (q * g.ow + ox) * g.c;
            int32_t* ip = kRecord ? argmax + (q * g.ow + ox) * g.c : nullptr;
            if (y0 >= y1 || x0 >= x1) {  // cannot happen with Keras geometry; keep y finite
                for (int64_t ci = 0; ci < g.c; ++ci) {
                    yp[ci] = 0.0f;
                    if constexpr (kRecord) ip[ci] = static_cast<int32_t>(y0 * g.w + x0);
                }
                continue;
            }
            for (int64_t c0 = 0; c0 < g.c; c0 += kLanes) {
                const int64_t nb = std::min(kLanes, g.c - c0);
                Vf best = negInf;
                // Start from the first valid element so that an all -inf window still names one.
                Vi idx = Vi{} + static_cast<int32_t>(y0 * g.w + x0);
                for (int64_t iy = y0; iy < y1; ++iy) {
                    for (int64_t ix = x0; ix < x1; ++ix) {
                        const float* xp = x + ((b * g.h + iy) * g.w + ix) * g.c + c0;
                        const Vf v = loadN(xp, nb);
                        const Vi take = (v > best) | (v != v);
                        best = take ? v : best;
                        if constexpr (kRecord) idx = take ? Vi{} + static_cast<int32_t>(iy * g.w + ix) : idx;
                    }
                }
                storeN(yp + c0, best, nb);
                if constexpr (kRecord) storeN(ip + c0, idx, nb);
            }
        }
    }
}

}  // namespace

Pool2DGeom makePool2DGeom(int64_t n, int64_t h, int64_t w, int64_t c, int64_t poolH, int64_t poolW,
                          int64_t strideH, int64_t strideW, bool samePadding) {
    Pool2DGeom g;
    g.n = n;
    g.h = h;
    g.w = w;
    g.c = c;
    g.poolH = poolH;
    g.poolW = poolW;
    g.strideH = strideH;
    g.strideW = strideW;
    const WindowAxis ay = kerasWindowAxis(h, poolH, strideH, 1, samePadding);
    const WindowAxis ax = kerasWindowAxis(w, poolW, strideW, 1, samePadding);
    g.oh = ay.out;
    g.ow = ax.out;
    g.padTop = ay.padBefore;
    g.padLeft = ax.padBefore;
    return g;
}

bool pool2dGeomIsValid(const Pool2DGeom& g) {
    return g.n > 0 && g.h > 0 && g.w > 0 && g.c > 0 && g.poolH > 0 && g.poolW > 0 && g.strideH > 0 &&
           g.strideW > 0 && g.padTop >= 0 && g.padLeft >= 0 && g.oh > 0 && g.ow > 0 && g.padTop < g.poolH &&
           g.padLeft < g.poolW && g.h * g.w <= std::numeric_limits<int32_t>::max();
}

size_t maxPool2DIndexCount(const Pool2DGeom& g) {
    return static_cast<size_t>(g.n * g.oh * g.ow * g.c);
}

void maxPool2DForward(const Pool2DGeom& g, const float* x, float* y, int32_t* argmax, ThreadPool& pool) {
    pool.parallelFor(g.n * g.oh, 1, [&](int64_t q0, int64_t q1) {
        if (argmax)
            maxForwardRows<true>(g, x, y, argmax, q0, q1);
        else
            maxForwardRows<false>(g, x, y, nullptr, q0, q1);
    });
}

void maxPool2DBackward(const Pool2DGeom& g, const float* dy, const int32_t* argmax, float* dx,
                       ThreadPool& pool) {
    if (g.strideH >= g.poolH && g.strideW >= g.poolW) {
        // Windows do not overlap, so every input element receives at most one gradient and the
        // input rows of different output rows are disjoint: scatter each dy to its argmax.
        pool.parallelFor(g.n * g.oh, 1, [&](int64_t q0, int64_t q1) {
            for (int64_t q = q0; q < q1; ++q) {
                float* dimg = dx + (q / g.oh) * g.h * g.w * g.c;
                const int64_t o0 = q * g.ow * g.c;
                for (int64_t ox = 0; ox < g.ow; ++ox) {
                    const float* dyp = dy + o0 + ox * g.c;
                    const int32_t* ip = argmax + o0 + ox * g.c;
                    for (int64_t ci = 0; ci < g.c; ++ci) dimg[int64_t{ip[ci]} * g.c + ci] += dyp[ci];
                }
            }
        });
        return;
    }
    pool.parallelFor(g.n * g.h, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t b = p / g.h, iy = p % g.h;
            int64_t oyLo, oyHi;
            windowsContaining(iy, g.poolH, g.strideH, g.padTop, g.oh, oyLo, oyHi);
            for (int64_t ix = 0; ix < g.w; ++ix) {
                int64_t oxLo, oxHi;
                windowsContaining(ix, g.poolW, g.strideW, g.padLeft, g.ow, oxLo, oxHi);
                const int32_t idx = static_cast<int32_t>(iy * g.w + ix);
                float* d = dx + (p * g.w + ix) * g.c;
                for (int64_t oy = oyLo; oy <= oyHi; ++oy) {
                    for (int64_t ox = oxLo; ox <= oxHi; ++ox) {
                        const int64_t o = ((b * g.oh + oy) * g.ow + ox) * g.c;
                        const float* dyp = dy + o;
                        const int32_t* ip = argmax + o;
                        for (int64_t ci = 0; ci < g.c; ++ci) d[ci] += ip[ci] == idx ? dyp[ci] : 0.0f;
                    }
                }
            }
        }
    });
}

void avgPool2DForward(const Pool2DGeom& g, const float* x, float* y, ThreadPool& pool) {
    pool.parallelFor(g.n * g.oh, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t b = q / g.oh, oy = q % g.oh;
            int64_t y0, y1;
            windowSpan(oy, g.poolH, g.strideH, g.padTop, g.h, y0, y1);
            for (int64_t ox = 0; ox < g.ow; ++ox) {
                int64_t x0, x1;
                windowSpan(ox, g.poolW, g.strideW, g.padLeft, g.w, x0, x1);
                float* yp = y + (q * g.ow + ox) * g.c;
                for (int64_t ci = 0; ci < g.c; ++ci) yp[ci] = 0.0f;
                for (int64_t iy = y0; iy < y1; ++iy)
                    for (int64_t ix = x0; ix < x1; ++ix) {
                        const float* xp = x + ((b * g.h + iy) * g.w + ix) * g.c;
                        for (int64_t ci = 0; ci < g.c; ++ci) yp[ci] += xp[ci];
                    }
                const int64_t count = std::max<int64_t>((y1 - y0) * (x1 - x0), 1);
                const float inv = 1.0f / static_cast<float>(count);
                for (int64_t ci = 0; ci < g.c; ++ci) yp[ci] *= inv;
            }
        }
    });
}

void avgPool2DBackward(const Pool2DGeom& g, const float* dy, float* dx, ThreadPool& pool) {
    pool.parallelFor(g.n * g.h, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t b = p / g.h, iy = p % g.h;
            int64_t oyLo, oyHi;
            windowsContaining(iy, g.poolH, g.strideH, g.padTop, g.oh, oyLo, oyHi);
            for (int64_t ix = 0; ix < g.w; ++ix) {
                int64_t oxLo, oxHi;
                windowsContaining(ix, g.poolW, g.strideW, g.padLeft, g.ow, oxLo, oxHi);
                float* d = dx + (p * g.w + ix) * g.c;
                for (int64_t oy = oyLo; oy <= oyHi; ++oy) {
                    int64_t y0, y1;
                    windowSpan(oy, g.poolH, g.strideH, g.padTop, g.h, y0, y1);
                    for (int64_t ox = oxLo; ox <= oxHi; ++ox) {
                        int64_t x0, x1;
                        windowSpan(ox, g.poolW, g.strideW, g.padLeft, g.w, x0, x1);
                        const float inv =
                            1.0f / static_cast<float>(std::max<int64_t>((y1 - y0) * (x1 - x0), 1));
                        const float* dyp = dy + ((b * g.oh + oy) * g.ow + ox) * g.c;
                        for (int64_t ci = 0; ci < g.c; ++ci) d[ci] += dyp[ci] * inv;
                    }
                }
            }
        }
    });
}

void globalAvgPool2DForward(int64_t n, int64_t h, int64_t w, int64_t c, const float* x, float* y,
                            ThreadPool& pool) {
    // Tasks are (image, block of 64 channels), so a batch of one still uses several threads.
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (c + kBlock - 1) / kBlock, hw = h * w;
    const float inv = 1.0f / static_cast<float>(std::max<int64_t>(hw, 1));
    pool.parallelFor(n * blocks, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = t / blocks, c0 = (t % blocks) * kBlock, c1 = std::min(c, c0 + kBlock);
            float acc[kBlock] = {};
            for (int64_t p = 0; p < hw; ++p) {
                const float* xp = x + (b * hw + p) * c;
                for (int64_t ci = c0; ci < c1; ++ci) acc[ci - c0] += xp[ci];
            }
            for (int64_t ci = c0; ci < c1; ++ci) y[b * c + ci] = acc[ci - c0] * inv;
        }
    });
}

void globalAvgPool2DBackward(int64_t n, int64_t h, int64_t w, int64_t c, const float* dy, float* dx,
                             ThreadPool& pool, bool overwrite) {
    const int64_t hw = h * w;
    const float inv = 1.0f / static_cast<float>(std::max<int64_t>(hw, 1));
    pool.parallelFor(n * hw, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* g = dy + (r / hw) * c;
            float* d = dx + r * c;
            if (overwrite)
                for (int64_t ci = 0; ci < c; ++ci) d[ci] = g[ci] * inv;
            else
                for (int64_t ci = 0; ci < c; ++ci) d[ci] += g[ci] * inv;
        }
    });
}

void globalMaxPool2DForward(int64_t n, int64_t h, int64_t w, int64_t c, const float* x, float* y,
                            int32_t* argmax, ThreadPool& pool) {
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (c + kBlock - 1) / kBlock, hw = h * w;
    pool.parallelFor(n * blocks, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t b = t / blocks, c0 = (t % blocks) * kBlock, c1 = std::min(c, c0 + kBlock);
            float best[kBlock];
            int32_t at[kBlock] = {};
            const float* x0 = x + b * hw * c;
            for (int64_t ci = c0; ci < c1; ++ci) best[ci - c0] = x0[ci];
            for (int64_t p = 1; p < hw; ++p) {
                const float* xp = x0 + p * c;
                for (int64_t ci = c0; ci < c1; ++ci) {
                    const float v = xp[ci];
                    float& m = best[ci - c0];
                    if (v > m || (v != v && m == m)) {
                        m = v;
                        at[ci - c0] = static_cast<int32_t>(p);
                    }
                }
            }
            for (int64_t ci = c0; ci < c1; ++ci) {
                y[b * c + ci] = best[ci - c0];
                if (argmax) argmax[b * c + ci] = at[ci - c0];
            }
        }
    });
}

void globalMaxPool2DBackward(int64_t n, int64_t h, int64_t w, int64_t c, const float* dy, const int32_t* argmax,
                             float* dx, ThreadPool& pool) {
    const int64_t hw = h * w;
    pool.parallelFor(n, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b)
            for (int64_t ci = 0; ci < c; ++ci) dx[(b * hw + argmax[b * c + ci]) * c + ci] += dy[b * c + ci];
    });
}

}  // namespace kiln::engine::kernels
