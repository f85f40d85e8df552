// SPDX-License-Identifier: Apache-2.0
// Conv2D kernels. Ungrouped convolutions (the common case) run on direct register-tile kernels
// that read the NHWC tensors in place (tile_kernels_isa.cpp, one variant per instruction set);
// the forward, backward-data and filter-gradient passes of 3x3 unit-stride ones on Winograd
// F(4x4, 3x3) or F(2x2, 3x3) kernels (winograd_isa.cpp).
// Grouped ones: pointwise convs are one GEMM per group, depthwise convs (one input channel per group) a direct loop vectorised
// over channels, everything else im2col tiles + GEMM.
#include "engine/ops/kernels/conv2d.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "engine/core/cpu_isa.h"
#include "engine/ops/kernels/tile_kernels.h"
#include "engine/ops/kernels/elementwise.h"
#include "engine/ops/kernels/gemm.h"

namespace kiln::engine::kernels {
namespace {

// Reductions over output pixels (bias and depthwise weight gradients) are split into this many
// fixed chunks whose partial sums are then added in chunk order: the result does not depend on
// the thread count or on timing.
constexpr int64_t kReduceChunks = 32;
// An im2col tile holds about this many floats (4 MiB): large enough for an efficient GEMM,
// small enough that the workspace stays modest for big images.
constexpr int64_t kColBudgetFloats = int64_t{1} << 20;
constexpr int64_t kMinTileRows = 64;
// 3x3 unit-stride layers with at least this many input and output channels run forward and
// backward-data on the Winograd kernels: 16 with AVX2, 32 with AVX-512, where ResNet-8's
// 16-channel layers measured no faster than on the direct tiles (bench/RESULTS.md).
constexpr int64_t kWinogradMinChannelsAvx2 = 16;
constexpr int64_t kWinogradMinChannelsAvx512 = 32;
// ... and at most this many: one tile's transformed input and products (16 x (c + oc) floats,
// rounded to whole vectors) must fit the kernels' per-task block buffer (winograd_isa.cpp).
constexpr int64_t kWinogradMaxChannels = 1000;
// Forward and backward-data take F(4x4, 3x3) instead, with either instruction set, for 16 to 64
// channels on both sides and outputs of at least 8x8 pixels: the range measured faster than
// F(2x2, 3x3) and the direct kernels (ResNet-8's 3x3 unit-stride layers, bench/RESULTS.md).
constexpr int64_t kWinograd4MinChannels = 16;
constexpr int64_t kWinograd4MaxChannels = 64;
constexpr int64_t kWinograd4MinSize = 8;
// The filter gradient of such layers runs on the Winograd kernels from 16 channels on both sides
// with either instruction set, as long as c x oc (oc rounded up to 16) is at most this: its
// partial sums (16 x c x oc floats per chunk of tiles) then fit in at least 4 chunks.
constexpr int64_t kWinogradGradMinChannels = 16;
constexpr int64_t kWinogradGradMaxProduct = 65536;
// The filter gradient takes F(4x4, 3x3) where forward does and both channel counts are at most
// this: ResNet-8's 16- and 32-channel layers measured faster on it, its 64-channel 8x8 layer
// slower (bench/RESULTS.md).
constexpr int64_t kWinograd4GradMaxChannels = 32;

enum class Path { Direct, Pointwise, Depthwise, Im2col };

Path pathOf(const Conv2DGeom& g) {
    const int64_t cg = g.c / g.groups;
    if (g.groups == 1 && g.kh * g.kw <= kDirectMaxTaps) return Path::Direct;
    if (cg == 1) return Path::Depthwise;
    if (g.kh == 1 && g.kw == 1 && g.strideH == 1 && g.strideW == 1 && g.padTop == 0 && g.padLeft == 0 &&
        g.oh == g.h && g.ow == g.w)
        return Path::Pointwise;
    return Path::Im2col;
}

int64_t outRows(const Conv2DGeom& g) {
    return g.n * g.oh * g.ow;
}

// Columns of one im2col row: per group, per tap (ky-major), the group's cg input channels.
// So group gi's columns are the contiguous range [gi*kg, (gi+1)*kg) with kg = kh*kw*cg, and
// that range matches the row order of the group's HWIO weight slice.
int64_t colWidth(const Conv2DGeom& g) {
    return g.kh * g.kw * g.c;
}

int64_t tileRows(const Conv2DGeom& g) {
    const int64_t rows = outRows(g);
    int64_t t = std::max(kMinTileRows, kColBudgetFloats / std::max<int64_t>(colWidth(g), 1) / 16 * 16);
    return std::max<int64_t>(1, std::min(t, rows));
}

int64_t reduceChunks(int64_t items) {
    return std::max<int64_t>(1, std::min(kReduceChunks, items));
}

// Writes im2col row `r` (output pixel index over n*oh*ow) into `dst` [colWidth].
void im2colRow(const Conv2DGeom& g, const float* x, int64_t r, float* dst) {
    const int64_t ox = r % g.ow, q = r / g.ow, oy = q % g.oh, b = q / g.oh;
    const int64_t cg = g.c / g.groups, kg = g.kh * g.kw * cg;
    const int64_t iy0 = oy * g.strideH - g.padTop, ix0 = ox * g.strideW - g.padLeft;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = iy0 + ky * g.dilationH;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ix0 + kx * g.dilationW;
            const int64_t tap = ky * g.kw + kx;
            const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
            const float* src = x + ((b * g.h + iy) * g.w + ix) * g.c;
            if (g.groups == 1) {
                float* d = dst + tap * g.c;
                if (inside)
                    std::memcpy(d, src, sizeof(float) * static_cast<size_t>(g.c));
                else
                    std::memset(d, 0, sizeof(float) * static_cast<size_t>(g.c));
            } else {
                for (int64_t gi = 0; gi < g.groups; ++gi) {
                    float* d = dst + gi * kg + tap * cg;
                    if (inside)
                        std::memcpy(d, src + gi * cg, sizeof(float) * static_cast<size_t>(cg));
                    else
                        std::memset(d, 0, sizeof(float) * static_cast<size_t>(cg));
                }
            }
        }
    }
}

void initOutputRows(const Conv2DGeom& g, const float* bias, float* y, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
        float* yr = y + r * g.oc;
        if (bias)
            std::memcpy(yr, bias, sizeof(float) * static_cast<size_t>(g.oc));
        else
            std::memset(yr, 0, sizeof(float) * static_cast<size_t>(g.oc));
    }
}

// dx += col2im(dcol) for the output rows [r0, r1), as a gather: each input pixel sums, in
// fixed tap order, the dcol entries that read it. Threads own disjoint input rows, so there is
// no race and no dependence on the thread count.
void col2imGather(const Conv2DGeom& g, const float* dcol, int64_t r0, int64_t r1, float* dx,
                  ThreadPool& pool) {
    const int64_t kc = colWidth(g), cg = g.c / g.groups, kg = g.kh * g.kw * cg;
    const int64_t qLo = r0 / g.ow, qHi = (r1 - 1) / g.ow;  // output (image, row) pairs touched
    const int64_t bLo = qLo / g.oh, bHi = qHi / g.oh;
    // Input rows each image of the tile can reach.
    auto inputRange = [&](int64_t b, int64_t& iyLo, int64_t& iyHi) {
        const int64_t oyLo = b == bLo ? qLo % g.oh : 0;
        const int64_t oyHi = b == bHi ? qHi % g.oh : g.oh - 1;
        iyLo = std::max<int64_t>(0, oyLo * g.strideH - g.padTop);
        iyHi = std::min<int64_t>(g.h - 1, oyHi * g.strideH - g.padTop + (g.kh - 1) * g.dilationH);
    };
    int64_t items = 0;
    for (int64_t b = bLo; b <= bHi; ++b) {
        int64_t lo, hi;
        inputRange(b, lo, hi);
        items += std::max<int64_t>(0, hi - lo + 1);
    }
    pool.parallelFor(items, 1, [&](int64_t i0, int64_t i1) {
        // Locate item i0 (image b, input row iy), then walk forward.
        int64_t b = bLo, lo = 0, hi = -1, skip = i0;
        for (;; ++b) {
            inputRange(b, lo, hi);
            const int64_t len = std::max<int64_t>(0, hi - lo + 1);
            if (skip < len) break;
            skip -= len;
        }
        int64_t iy = lo + skip;
        for (int64_t item = i0; item < i1; ++item) {
            while (iy > hi) {
                ++b;
                inputRange(b, lo, hi);
                iy = lo;
            }
            for (int64_t ix = 0; ix < g.w; ++ix) {
                float* d = dx + ((b * g.h + iy) * g.w + ix) * g.c;
                for (int64_t ky = 0; ky < g.kh; ++ky) {
                    const int64_t ty = iy + g.padTop - ky * g.dilationH;
                    if (ty < 0 || ty % g.strideH != 0) continue;
                    const int64_t oy = ty / g.strideH;
                    if (oy >= g.oh) continue;
                    for (int64_t kx = 0; kx < g.kw; ++kx) {
                        const int64_t tx = ix + g.padLeft - kx * g.dilationW;
                        if (tx < 0 || tx % g.strideW != 0) continue;
                        const int64_t ox = tx / g.strideW;
                        if (ox >= g.ow) continue;
                        const int64_t r = (b * g.oh + oy) * g.ow + ox;
                        if (r < r0 || r >= r1) continue;
                        const int64_t tap = ky * g.kw + kx;
                        const float* s = dcol + (r - r0) * kc + tap * cg;
                        for (int64_t gi = 0; gi < g.groups; ++gi) {
                            float* dd = d + gi * cg;
                            const float* ss = s + gi * kg;
                            for (int64_t ci = 0; ci < cg; ++ci) dd[ci] += ss[ci];
                        }
                    }
                }
            }
            ++iy;
        }
    });
}

// ---- depthwise (cg == 1, multiplier m = oc / c) ----------------------------------------------

void depthwiseForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                      ThreadPool& pool) {
    const int64_t m = g.oc / g.c;
    pool.parallelFor(g.n * g.oh, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t b = q / g.oh, oy = q % g.oh;
            initOutputRows(g, bias, y, q * g.ow, (q + 1) * g.ow);
            for (int64_t ky = 0; ky < g.kh; ++ky) {
                const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                if (iy < 0 || iy >= g.h) continue;
                for (int64_t kx = 0; kx < g.kw; ++kx) {
                    const float* wt = w + (ky * g.kw + kx) * g.oc;
                    for (int64_t ox = 0; ox < g.ow; ++ox) {
                        const int64_t ix = ox * g.strideW - g.padLeft + kx * g.dilationW;
                        if (ix < 0 || ix >= g.w) continue;
                        const float* xp = x + ((b * g.h + iy) * g.w + ix) * g.c;
                        float* yp = y + (q * g.ow + ox) * g.oc;
                        if (m == 1) {
                            for (int64_t o = 0; o < g.oc; ++o) yp[o] += xp[o] * wt[o];
                        } else {
                            for (int64_t ci = 0; ci < g.c; ++ci) {
                                const float xv = xp[ci];
                                float* yo = yp + ci * m;
                                const float* wo = wt + ci * m;
                                for (int64_t j = 0; j < m; ++j) yo[j] += xv * wo[j];
                            }
                        }
                    }
                }
            }
        }
    });
}

// dx as a gather over input rows: each input pixel sums its taps in fixed order.
void depthwiseBackwardData(const Conv2DGeom& g, const float* w, const float* dy, float* dx,
                           ThreadPool& pool) {
    const int64_t m = g.oc / g.c;
    pool.parallelFor(g.n * g.h, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t b = p / g.h, iy = p % g.h;
            for (int64_t ix = 0; ix < g.w; ++ix) {
                float* d = dx + (p * g.w + ix) * g.c;
                for (int64_t ky = 0; ky < g.kh; ++ky) {
                    const int64_t ty = iy + g.padTop - ky * g.dilationH;
                    if (ty < 0 || ty % g.strideH != 0) continue;
                    const int64_t oy = ty / g.strideH;
                    if (oy >= g.oh) continue;
                    for (int64_t kx = 0; kx < g.kw; ++kx) {
                        const int64_t tx = ix + g.padLeft - kx * g.dilationW;
                        if (tx < 0 || tx % g.strideW != 0) continue;
                        const int64_t ox = tx / g.strideW;
                        if (ox >= g.ow) continue;
                        const float* dyp = dy + ((b * g.oh + oy) * g.ow + ox) * g.oc;
                        const float* wt = w + (ky * g.kw + kx) * g.oc;
                        if (m == 1) {
                            for (int64_t ci = 0; ci < g.c; ++ci) d[ci] += dyp[ci] * wt[ci];
                        } else {
                            for (int64_t ci = 0; ci < g.c; ++ci) {
                                float s = 0.0f;
                                for (int64_t j = 0; j < m; ++j) s += dyp[ci * m + j] * wt[ci * m + j];
                                d[ci] += s;
                            }
                        }
                    }
                }
            }
        }
    });
}

// dw via fixed-chunk partial sums over output rows, held in the workspace
// ([chunks][kh*kw*oc]), then summed in chunk order.
void depthwiseBackwardFilter(const Conv2DGeom& g, const float* x, const float* dy, float* dw, float* partials,
                             ThreadPool& pool) {
    const int64_t m = g.oc / g.c, wsz = g.kh * g.kw * g.oc;
    const int64_t qrows = g.n * g.oh, chunks = reduceChunks(qrows);
    pool.parallelFor(chunks, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
            float* part = partials + k * wsz;
            std::memset(part, 0, sizeof(float) * static_cast<size_t>(wsz));
            for (int64_t q = qrows * k / chunks; q < qrows * (k + 1) / chunks; ++q) {
                const int64_t b = q / g.oh, oy = q % g.oh;
                for (int64_t ky = 0; ky < g.kh; ++ky) {
                    const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                    if (iy < 0 || iy >= g.h) continue;
                    for (int64_t kx = 0; kx < g.kw; ++kx) {
                        float* pw = part + (ky * g.kw + kx) * g.oc;
                        for (int64_t ox = 0; ox < g.ow; ++ox) {
                            const int64_t ix = ox * g.strideW - g.padLeft + kx * g.dilationW;
                            if (ix < 0 || ix >= g.w) continue;
                            const float* xp = x + ((b * g.h + iy) * g.w + ix) * g.c;
                            const float* dyp = dy + (q * g.ow + ox) * g.oc;
                            if (m == 1) {
                                for (int64_t o = 0; o < g.oc; ++o) pw[o] += dyp[o] * xp[o];
                            } else {
                                for (int64_t ci = 0; ci < g.c; ++ci) {
                                    const float xv = xp[ci];
                                    for (int64_t j = 0; j < m; ++j) pw[ci * m + j] += dyp[ci * m + j] * xv;
                                }
                            }
                        }
                    }
                }
            }
        }
    });
    pool.parallelFor(wsz, 64, [&](int64_t e0, int64_t e1) {
        for (int64_t k = 0; k < chunks; ++k) {
            const float* part = partials + k * wsz;
            for (int64_t e = e0; e < e1; ++e) dw[e] += part[e];
        }
    });
}
// The direct kernels of the instruction set chosen for this process.
size_t directWorkspace(const Conv2DGeom& g) {
    return cpuIsa() == CpuIsa::Avx512 ? avx512::directWorkspaceFloats(g) : avx2::directWorkspaceFloats(g);
}
// The Winograd kernels' scratch follows the direct kernels' in the workspace (the direct
// kernels may still run the bias gradient, and backward-data where only the filter gradient
// takes Winograd).
size_t winogradWorkspace(const Conv2DGeom& g) {
    const int tile = std::max(conv2dWinogradTile(g), 2), gradTile = std::max(conv2dWinogradFilterGradTile(g), 2);
    return cpuIsa() == CpuIsa::Avx512 ? avx512::winogradWorkspaceFloats(g, tile, gradTile)
                                      : avx2::winogradWorkspaceFloats(g, tile, gradTile);
}
void directForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                   float* workspace, ThreadPool& pool, bool relu) {
    if (const int tile = conv2dWinogradTile(g)) {
        float* ws = workspace + directWorkspace(g);
        if (cpuIsa() == CpuIsa::Avx512)
            avx512::winogradConvForward(g, tile, x, w, bias, y, ws, pool, relu);
        else
            avx2::winogradConvForward(g, tile, x, w, bias, y, ws, pool, relu);
        return;
    }
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::directConvForward(g, x, w, bias, y, workspace, pool, relu);
    else
        avx2::directConvForward(g, x, w, bias, y, workspace, pool, relu);
}
void directBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx,
                    float* dw, float* db, float* workspace, ThreadPool& pool, bool overwriteDx) {
    // Backward-data first: its transformed filter and the filter gradient's partial sums share
    // the Winograd part of the workspace.
    if (const int tile = dx ? conv2dWinogradTile(g) : 0) {
        float* ws = workspace + directWorkspace(g);
        if (cpuIsa() == CpuIsa::Avx512)
            avx512::winogradConvBackwardData(g, tile, w, dy, dx, ws, pool, overwriteDx);
        else
            avx2::winogradConvBackwardData(g, tile, w, dy, dx, ws, pool, overwriteDx);
        dx = nullptr;
    }
    if (dw && conv2dUsesWinogradFilterGrad(g)) {
        float* ws = workspace + directWorkspace(g);
        const int gradTile = conv2dWinogradFilterGradTile(g);
        if (cpuIsa() == CpuIsa::Avx512)
            avx512::winogradConvBackwardFilter(g, gradTile, x, dy, dw, ws, pool);
        else
            avx2::winogradConvBackwardFilter(g, gradTile, x, dy, dw, ws, pool);
        dw = nullptr;
    }
    if (!dx && !dw && !db) return;  // the rest (the bias gradient at least) on the direct kernels
    if (cpuIsa() == CpuIsa::Avx512)
        avx512::directConvBackward(g, x, w, dy, dx, dw, db, workspace, pool, overwriteDx);
    else
        avx2::directConvBackward(g, x, w, dy, dx, dw, db, workspace, pool, overwriteDx);
}

}  // namespace

WindowAxis kerasWindowAxis(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool samePadding) {
    WindowAxis a;
    const int64_t keff = (k - 1) * dilation + 1;
    if (in <= 0 || k <= 0 || stride <= 0 || dilation <= 0) return a;
    if (samePadding) {
        a.out = (in + stride - 1) / stride;
        const int64_t total = std::max<int64_t>((a.out - 1) * stride + keff - in, 0);
        a.padBefore = total / 2;
    } else {
        a.out = in >= keff ? (in - keff) / stride + 1 : 0;
        a.padBefore = 0;
    }
    return a;
}

Conv2DGeom makeConv2DGeom(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw, int64_t oc,
                          int64_t strideH, int64_t strideW, int64_t dilationH, int64_t dilationW,
                          bool samePadding, int64_t groups) {
    Conv2DGeom g;
    g.n = n;
    g.h = h;
    g.w = w;
    g.c = c;
    g.kh = kh;
    g.kw = kw;
    g.oc = oc;
    g.strideH = strideH;
    g.strideW = strideW;
    g.dilationH = dilationH;
    g.dilationW = dilationW;
    g.groups = groups;
    const WindowAxis ay = kerasWindowAxis(h, kh, strideH, dilationH, samePadding);
    const WindowAxis ax = kerasWindowAxis(w, kw, strideW, dilationW, samePadding);
    g.oh = ay.out;
    g.ow = ax.out;
    g.padTop = ay.padBefore;
    g.padLeft = ax.padBefore;
    return g;
}

int conv2dWinogradTile(const Conv2DGeom& g) {
    const int64_t minChannels = cpuIsa() == CpuIsa::Avx512 ? kWinogradMinChannelsAvx512 : kWinogradMinChannelsAvx2;
    const bool unit = pathOf(g) == Path::Direct && g.kh == 3 && g.kw == 3 && g.strideH == 1 && g.strideW == 1 &&
                      g.dilationH == 1 && g.dilationW == 1;
    if (unit && g.c >= kWinograd4MinChannels && g.oc >= kWinograd4MinChannels && g.c <= kWinograd4MaxChannels &&
        g.oc <= kWinograd4MaxChannels && std::min(g.oh, g.ow) >= kWinograd4MinSize)
        return 4;
    if (!unit || g.c < minChannels || g.oc < minChannels || g.c > kWinogradMaxChannels ||
        g.oc > kWinogradMaxChannels)
        return 0;
    return 2;
}

bool conv2dUsesWinograd(const Conv2DGeom& g) {
    return conv2dWinogradTile(g) != 0;
}

int conv2dWinogradFilterGradTile(const Conv2DGeom& g) {
    const bool winograd = pathOf(g) == Path::Direct && g.kh == 3 && g.kw == 3 && g.strideH == 1 &&
                          g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1 && g.c >= kWinogradGradMinChannels &&
                          g.oc >= kWinogradGradMinChannels && g.c <= kWinogradMaxChannels &&
                          g.oc <= kWinogradMaxChannels && g.c * ((g.oc + 15) / 16 * 16) <= kWinogradGradMaxProduct;
    if (!winograd) return 0;
    return conv2dWinogradTile(g) == 4 && g.c <= kWinograd4GradMaxChannels && g.oc <= kWinograd4GradMaxChannels ? 4 : 2;
}

bool conv2dUsesWinogradFilterGrad(const Conv2DGeom& g) {
    return conv2dWinogradFilterGradTile(g) != 0;
}

bool conv2dGeomIsValid(const Conv2DGeom& g) {
    return g.n > 0 && g.h > 0 && g.w > 0 && g.c > 0 && g.kh > 0 && g.kw > 0 && g.oc > 0 && g.strideH > 0 &&
           g.strideW > 0 && g.dilationH > 0 && g.dilationW > 0 && g.padTop >= 0 && g.padLeft >= 0 &&
           g.oh > 0 && g.ow > 0 && g.groups > 0 && g.c % g.groups == 0 && g.oc % g.groups == 0;
}

size_t biasGradWorkspaceFloats(int64_t rows, int64_t oc) {
    return static_cast<size_t>(reduceChunks(rows) * oc);
}

void biasGradAccumulate(int64_t rows, int64_t oc, const float* dy, float* db, float* workspace,
                        ThreadPool& pool) {
    if (rows <= 0 || oc <= 0) return;
    const int64_t chunks = reduceChunks(rows);
    pool.parallelFor(chunks, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
            float* part = workspace + k * oc;
            std::memset(part, 0, sizeof(float) * static_cast<size_t>(oc));
            for (int64_t r = rows * k / chunks; r < rows * (k + 1) / chunks; ++r) {
                const float* d = dy + r * oc;
                for (int64_t o = 0; o < oc; ++o) part[o] += d[o];
            }
        }
    });
    pool.parallelFor(oc, 64, [&](int64_t o0, int64_t o1) {
        for (int64_t k = 0; k < chunks; ++k) {
            const float* part = workspace + k * oc;
            for (int64_t o = o0; o < o1; ++o) db[o] += part[o];
        }
    });
}

size_t conv2dWorkspaceFloats(const Conv2DGeom& g) {
    const int64_t rows = outRows(g);
    if (rows <= 0) return 0;
    size_t need = biasGradWorkspaceFloats(rows, g.oc);
    switch (pathOf(g)) {
    case Path::Direct:
        return directWorkspace(g) +
               (conv2dUsesWinograd(g) || conv2dUsesWinogradFilterGrad(g) ? winogradWorkspace(g) : 0);
    case Path::Pointwise:
        break;
    case Path::Depthwise:
        need = std::max(need, static_cast<size_t>(reduceChunks(g.n * g.oh) * g.kh * g.kw * g.oc));
        break;
    case Path::Im2col:
        need = std::max(need, static_cast<size_t>(tileRows(g) * colWidth(g)));
        break;
    }
    return need;
}

namespace {

// The non-direct paths (groups > 1).
void conv2dForwardGrouped(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                          float* workspace, ThreadPool& pool) {
    const int64_t rows = outRows(g);
    const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
    const float beta = bias ? 1.0f : 0.0f;  // with a bias, y is pre-filled with it
    switch (pathOf(g)) {
    case Path::Direct:
        return;
    case Path::Depthwise:
        depthwiseForward(g, x, w, bias, y, pool);
        return;
    case Path::Pointwise:
        // y[rows, oc] = x[rows, c] W[c, oc]: the HWIO weight of a 1x1 conv is a [c, oc] matrix.
        if (bias)
            pool.parallelFor(rows, 256, [&](int64_t r0, int64_t r1) { initOutputRows(g, bias, y, r0, r1); });
        for (int64_t gi = 0; gi < g.groups; ++gi)
            gemm(false, false, rows, ocg, cg, 1.0f, x + gi * cg, g.c, w + gi * ocg, g.oc, beta, y + gi * ocg,
                 g.oc, pool);
        return;
    case Path::Im2col: {
        const int64_t kc = colWidth(g), kg = g.kh * g.kw * cg, tile = tileRows(g);
        for (int64_t r0 = 0; r0 < rows; r0 += tile) {
            const int64_t t = std::min(tile, rows - r0);
            pool.parallelFor(t, 8, [&](int64_t a, int64_t b) {
                for (int64_t r = a; r < b; ++r) im2colRow(g, x, r0 + r, workspace + r * kc);
                if (bias) initOutputRows(g, bias, y, r0 + a, r0 + b);
            });
            for (int64_t gi = 0; gi < g.groups; ++gi)
                gemm(false, false, t, ocg, kg, 1.0f, workspace + gi * kg, kc, w + gi * ocg, g.oc, beta,
                     y + r0 * g.oc + gi * ocg, g.oc, pool);
        }
        return;
    }
    }
}

}  // namespace

void conv2dForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                   float* workspace, ThreadPool& pool, bool fuseRelu) {
    const int64_t rows = outRows(g);
    if (rows <= 0) return;
    if (pathOf(g) == Path::Direct) {
        directForward(g, x, w, bias, y, workspace, pool, fuseRelu);
        return;
    }
    conv2dForwardGrouped(g, x, w, bias, y, workspace, pool);
    if (fuseRelu)
        pool.parallelFor(rows, 256, [&](int64_t r0, int64_t r1) {
            for (int64_t i = r0 * g.oc; i < r1 * g.oc; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
        });
}

void conv2dBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx,
                    float* dw, float* db, float* workspace, ThreadPool& pool, bool overwriteDx) {
    const int64_t rows = outRows(g);
    if (rows <= 0) return;
    const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
    if (pathOf(g) == Path::Direct) {
        directBackward(g, x, w, dy, dx, dw, db, workspace, pool, overwriteDx);
        return;
    }
    // The other paths accumulate: an overwrite starts from zero.
    if (dx && overwriteDx) zero(dx, g.n * g.h * g.w * g.c, pool);
    if (db) biasGradAccumulate(rows, g.oc, dy, db, workspace, pool);
    switch (pathOf(g)) {
    case Path::Direct:
        return;
    case Path::Depthwise:
        if (dx) depthwiseBackwardData(g, w, dy, dx, pool);
        if (dw) depthwiseBackwardFilter(g, x, dy, dw, workspace, pool);
        return;
    case Path::Pointwise:
        for (int64_t gi = 0; gi < g.groups; ++gi) {
            // dx_g[rows, cg] += dy_g[rows, ocg] W_g^T; W_g is [cg, ocg] with row stride oc.
            if (dx)
                gemm(false, true, rows, cg, ocg, 1.0f, dy + gi * ocg, g.oc, w + gi * ocg, g.oc, 1.0f,
                     dx + gi * cg, g.c, pool);
            // dW_g[cg, ocg] += x_g^T dy_g.
            if (dw)
                gemm(true, false, cg, ocg, rows, 1.0f, x + gi * cg, g.c, dy + gi * ocg, g.oc, 1.0f,
                     dw + gi * ocg, g.oc, pool);
        }
        return;
    case Path::Im2col: {
        if (!dx && !dw) return;
        const int64_t kc = colWidth(g), kg = g.kh * g.kw * cg, tile = tileRows(g);
        for (int64_t r0 = 0; r0 < rows; r0 += tile) {
            const int64_t t = std::min(tile, rows - r0);
            const float* dyt = dy + r0 * g.oc;
            if (dw) {
                pool.parallelFor(t, 8, [&](int64_t a, int64_t b) {
                    for (int64_t r = a; r < b; ++r) im2colRow(g, x, r0 + r, workspace + r * kc);
                });
                // dW_g[kg, ocg] += col_g^T dy_g.
                for (int64_t gi = 0; gi < g.groups; ++gi)
                    gemm(true, false, kg, ocg, t, 1.0f, workspace + gi * kg, kc, dyt + gi * ocg, g.oc, 1.0f,
                         dw + gi * ocg, g.oc, pool);
            }
            if (dx) {
                // dcol_g[t, kg] = dy_g W_g^T, then scatter back to the input pixels.
                for (int64_t gi = 0; gi < g.groups; ++gi)
                    gemm(false, true, t, kg, ocg, 1.0f, dyt + gi * ocg, g.oc, w + gi * ocg, g.oc, 0.0f,
                         workspace + gi * kg, kc, pool);
                col2imGather(g, workspace, r0, r0 + t, dx, pool);
            }
        }
        return;
    }
    }
}

}  // namespace kiln::engine::kernels
