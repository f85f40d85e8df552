// SPDX-License-Identifier: Apache-2.0
// Winograd F(2x2, 3x3) convolution for ungrouped 3x3 layers with unit stride and dilation:
// the forward pass and backward-data (which, for such a layer, is itself a 3x3 unit-stride
// convolution of dy with the filter rotated by 180 degrees and its channel axes swapped).
// Compiled once per instruction set like tile_kernels_isa.cpp (a wrapper defines KILN_ISA_NS).
//
// Each 2x2 block of output pixels (a tile) reads a 4x4 patch of input pixels. Per tile and
// input channel the patch is transformed (B^T d B, additions only) into 16 values, one per
// transformed position xi; the filter is transformed once per call (G g G^T) into 16 matrices
// U[xi] [cin][cout]; the 16 products M[xi] = V[xi] U[xi] (one small GEMM per xi over a block
// of tiles) replace the 9 taps' products, and A^T M A (additions only) gives the 2x2 outputs.
// That is 16 multiplications per tile and channel pair instead of 36 (2.25x fewer). Tiles are
// processed in blocks whose transformed inputs and products live in a stack buffer, so the
// transforms run while the block is in cache and nothing is allocated.
//
// Every output sums its terms in an order fixed by the geometry (the GEMM over input channels
// in order, the transforms in a fixed expression), so results do not depend on the thread count;
// they differ from the direct kernels' in rounding only.
#ifndef KILN_ISA_NS
#error "winograd_isa.cpp is compiled through a per-ISA wrapper that defines KILN_ISA_NS"
#endif
#if defined(KILN_ISA_AVX512) && !defined(__AVX512F__)
#error "the avx512 variant needs -march=x86-64-v4"
#endif
#if !defined(__AVX2__) || !defined(__FMA__)
#error "the Winograd kernels need at least AVX2 and FMA"
#endif

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "engine/ops/kernels/tile_kernels.h"
#include "engine/ops/kernels/tile_vectors_isa.h"

// GCC notes that passing vector types by value depends on the ISA; these helpers are file-local.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace kiln::engine::kernels::KILN_ISA_NS {
namespace {

#if defined(KILN_ISA_AVX512)
// GEMM register tiles: R tiles x V vectors of output channels (R*V accumulators, V filter
// vectors; the broadcast folds into the FMA), within 32 registers.
constexpr int kMaxV = 4;
constexpr int kMaxR = 14;
constexpr int kRows[kMaxV + 1] = {0, 14, 12, 7, 6};
#else
// R*V accumulators, V filter vectors and one broadcast within 16 registers.
constexpr int kMaxV = 2;
constexpr int kMaxR = 12;
constexpr int kRows[kMaxV + 1] = {0, 12, 6};
#endif

int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
int64_t roundUpLanes(int64_t n) {
    return ceilDiv(n, kLanes) * kLanes;
}

// Transformed positions per tile.
constexpr int kXi = 16;
// Floats of one task's stack buffer: the block's transformed inputs [16][tiles][cinPad] and
// products [16][tiles][coutPad]. At least one tile must fit: conv2d.cpp limits the channels.
constexpr int64_t kBlockFloats = 32768;
// Most tiles per block: more only lengthens the GEMM's rows past what one filter matrix's reuse
// needs, and spreads a block's transformed inputs over more of L2.
constexpr int64_t kMaxBlockTiles = 32;

// Floats added to the stride between transformed positions (one cache line).
constexpr int64_t kXiSkew = 16;

int64_t blockTiles(int64_t cinPad, int64_t coutPad) {
    return std::clamp<int64_t>((kBlockFloats - 2 * kXi * kXiSkew) / (kXi * (cinPad + coutPad)), 1, kMaxBlockTiles);
}

// m[j, :] = sum over k < K, in order, of v[j*vStride + k] * u[k*uStride + :], for R rows and V
// vectors of output channels (u is padded to whole vectors with zeros).
template <int R, int V>
void gemmTile(const float* v, int64_t vStride, const float* u, int64_t uStride, int64_t K, float* m,
              int64_t mStride) {
    Vec acc[R][V];
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int q = 0; q < V; ++q) acc[j][q] = Vec{};
    for (int64_t k = 0; k < K; ++k, u += uStride) {
        Vec w[V];
#pragma GCC unroll 32
        for (int q = 0; q < V; ++q) w[q] = loadVec(u + q * kLanes);
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) {
            const Vec a = splat(v[j * vStride + k]);
#pragma GCC unroll 32
            for (int q = 0; q < V; ++q) acc[j][q] += a * w[q];
        }
    }
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int q = 0; q < V; ++q) storeVec(m + j * mStride + q * kLanes, acc[j][q]);
}

using GemmFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);
template <int V, int Limit, int... R>
constexpr std::array<GemmFn, sizeof...(R)> gemmFns(std::integer_sequence<int, R...>) {
    return {(R < Limit ? &gemmTile<(R < Limit ? R + 1 : 1), V> : nullptr)...};
}
template <int... V>
constexpr std::array<std::array<GemmFn, kMaxR>, kMaxV> gemmTable(std::integer_sequence<int, V...>) {
    return {gemmFns<V + 1, kRows[V + 1]>(std::make_integer_sequence<int, kMaxR>{})...};
}
constexpr auto kGemmFns = gemmTable(std::make_integer_sequence<int, kMaxV>{});

// U = G g G^T for one 3x3 filter g (vectors of channels), G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
inline void filterTransform(const Vec g[3][3], Vec u[4][4]) {
    const Vec half = splat(0.5f);
    Vec t[4][3];
#pragma GCC unroll 4
    for (int c = 0; c < 3; ++c) {
        t[0][c] = g[0][c];
        t[1][c] = (g[0][c] + g[1][c] + g[2][c]) * half;
        t[2][c] = (g[0][c] - g[1][c] + g[2][c]) * half;
        t[3][c] = g[2][c];
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
        u[r][0] = t[r][0];
        u[r][1] = (t[r][0] + t[r][1] + t[r][2]) * half;
        u[r][2] = (t[r][0] - t[r][1] + t[r][2]) * half;
        u[r][3] = t[r][2];
    }
}

// The filter of the convolution computed, transformed: u [16][cin][coutPad], zero past cout.
// Forward: cin = c, cout = oc, filter (ky, kx, ci, o) = w[ky, kx, ci, o]. Backward-data:
// cin = oc, cout = c, filter (ky, kx, o, ci) = w[2 - ky, 2 - kx, ci, o].
void transformFilter(const Conv2DGeom& g, const float* w, bool backward, float* u, ThreadPool& pool) {
    const int64_t cin = backward ? g.oc : g.c, cout = backward ? g.c : g.oc, coutPad = roundUpLanes(cout);
    const int64_t xiStride = cin * coutPad;
    if (!backward) {
        // Vectors along o, which is contiguous in w.
        pool.parallelFor(cin, 4, [&](int64_t c0, int64_t c1) {
            for (int64_t ci = c0; ci < c1; ++ci)
                for (int64_t o = 0; o < coutPad; o += kLanes) {
                    const Mask m = laneMask(cout - o);
                    Vec gv[3][3], uv[4][4];
                    for (int k = 0; k < 9; ++k) gv[k / 3][k % 3] = loadMasked(w + (k * g.c + ci) * g.oc + o, m);
                    filterTransform(gv, uv);
                    float* d = u + ci * coutPad + o;
                    for (int xi = 0; xi < kXi; ++xi) storeVec(d + xi * xiStride, uv[xi / 4][xi % 4]);
                }
        });
        return;
    }
    // Vectors along w's contiguous o (the transform's input channel), transposed on the way out:
    // u[xi][o][ci]. Rows of u are padded from c to coutPad with zeros.
    pool.parallelFor(g.c, 4, [&](int64_t c0, int64_t c1) {
        alignas(64) float lanes[kXi][kLanes];
        for (int64_t ci = c0; ci < c1; ++ci)
            for (int64_t o = 0; o < g.oc; o += kLanes) {
                const Mask m = laneMask(g.oc - o);
                Vec gv[3][3], uv[4][4];
                for (int k = 0; k < 9; ++k) gv[k / 3][k % 3] = loadMasked(w + ((8 - k) * g.c + ci) * g.oc + o, m);
                filterTransform(gv, uv);
                for (int xi = 0; xi < kXi; ++xi) storeVec(lanes[xi], uv[xi / 4][xi % 4]);
                const int64_t n = std::min<int64_t>(kLanes, g.oc - o);
                for (int xi = 0; xi < kXi; ++xi)
                    for (int64_t l = 0; l < n; ++l) u[xi * xiStride + (o + l) * coutPad + ci] = lanes[xi][l];
            }
    });
    if (coutPad > cout)
        pool.parallelFor(kXi * cin, 64, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r)
                std::memset(u + r * coutPad + cout, 0, sizeof(float) * static_cast<size_t>(coutPad - cout));
        });
}

// One Winograd convolution: dst [n, oh, ow, cout] = (or +=) the 3x3 convolution of src
// [n, ih, iw, cin] (output pixel (oy, ox) reads input rows oy - padT .. oy - padT + 2 and columns
// likewise; pixels outside src read as zero) with the transformed filter u.
struct Problem {
    const float* src = nullptr;
    int64_t n = 0, ih = 0, iw = 0, cin = 0, padT = 0, padL = 0;
    float* dst = nullptr;
    int64_t oh = 0, ow = 0, cout = 0;
    const float* u = nullptr;
    const float* bias = nullptr;  // added (overwrite only), or nullptr
    bool accumulate = false;
    bool relu = false;
};

// B^T d B of one 4x4 patch (vectors of channels), B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1];
// position xi = 4*row + col is stored at out + xi*xiStride.
inline void inputTransform(const Vec d[4][4], float* out, int64_t xiStride) {
    Vec t[4][4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
        t[0][c] = d[0][c] - d[2][c];
        t[1][c] = d[1][c] + d[2][c];
        t[2][c] = d[2][c] - d[1][c];
        t[3][c] = d[1][c] - d[3][c];
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
        storeVec(out + (4 * r + 0) * xiStride, t[r][0] - t[r][2]);
        storeVec(out + (4 * r + 1) * xiStride, t[r][1] + t[r][2]);
        storeVec(out + (4 * r + 2) * xiStride, t[r][2] - t[r][1]);
        storeVec(out + (4 * r + 3) * xiStride, t[r][1] - t[r][3]);
    }
}

void runProblem(const Problem& P, ThreadPool& pool) {
    const int64_t th = ceilDiv(P.oh, 2), tw = ceilDiv(P.ow, 2), perImage = th * tw, tiles = P.n * perImage;
    const int64_t cinPad = roundUpLanes(P.cin), coutPad = roundUpLanes(P.cout);
    const int64_t tb = blockTiles(cinPad, coutPad);
    // Floats between positions xi: one cache line more than the block's rows, so that the 16
    // positions of a tile do not fall into the same few L1 sets (a power-of-two stride did).
    const int64_t vXi = tb * cinPad + kXiSkew, mXi = tb * coutPad + kXiSkew;
    const int64_t rowIn = P.iw * P.cin, rowOut = P.ow * P.cout;
    pool.parallelFor(tiles, tb, [&](int64_t t0, int64_t t1) {
        alignas(64) float buf[kBlockFloats];
        float* V = buf;
        float* M = buf + kXi * vXi;
        int64_t tileB[kMaxBlockTiles], tileY[kMaxBlockTiles], tileX[kMaxBlockTiles];
        // Image, tile row and tile column of tile t0, then advanced as counters.
        int64_t cb = t0 / perImage, cy = t0 % perImage / tw, cx = t0 % tw;
        for (int64_t s0 = t0; s0 < t1; s0 += tb) {
            const int64_t nb = std::min(tb, t1 - s0);
            for (int64_t j = 0; j < nb; ++j) {
                tileB[j] = cb;
                tileY[j] = cy;
                tileX[j] = cx;
                if (++cx == tw) {
                    cx = 0;
                    if (++cy == th) {
                        cy = 0;
                        ++cb;
                    }
                }
            }
            // Transformed inputs of the block's tiles.
            for (int64_t j = 0; j < nb; ++j) {
                const int64_t iy0 = 2 * tileY[j] - P.padT, ix0 = 2 * tileX[j] - P.padL;
                const float* img = P.src + tileB[j] * P.ih * rowIn;
                float* vj = V + j * cinPad;
                if (iy0 >= 0 && iy0 + 4 <= P.ih && ix0 >= 0 && ix0 + 4 <= P.iw) {
                    const float* p = img + iy0 * rowIn + ix0 * P.cin;
                    int64_t c = 0;
                    for (; c + kLanes <= P.cin; c += kLanes) {
                        Vec d[4][4];
#pragma GCC unroll 4
                        for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
                            for (int q = 0; q < 4; ++q) d[r][q] = loadVec(p + r * rowIn + q * P.cin + c);
                        inputTransform(d, vj + c, vXi);
                    }
                    if (c < P.cin) {
                        const Mask m = laneMask(P.cin - c);
                        Vec d[4][4];
                        for (int r = 0; r < 4; ++r)
                            for (int q = 0; q < 4; ++q) d[r][q] = loadMasked(p + r * rowIn + q * P.cin + c, m);
                        inputTransform(d, vj + c, vXi);
                    }
                    continue;
                }
                // A tile on the border: pixels outside the input read as zero.
                const float* rowP[4];
                bool colOk[4];
                for (int r = 0; r < 4; ++r)
                    rowP[r] = iy0 + r >= 0 && iy0 + r < P.ih ? img + (iy0 + r) * rowIn : nullptr;
                for (int q = 0; q < 4; ++q) colOk[q] = ix0 + q >= 0 && ix0 + q < P.iw;
                for (int64_t c = 0; c < cinPad; c += kLanes) {
                    const Mask m = laneMask(P.cin - c);
                    const bool full = c + kLanes <= P.cin;
                    Vec d[4][4];
                    for (int r = 0; r < 4; ++r)
                        for (int q = 0; q < 4; ++q) {
                            d[r][q] = Vec{};
                            if (!rowP[r] || !colOk[q]) continue;
                            const float* e = rowP[r] + (ix0 + q) * P.cin + c;
                            d[r][q] = full ? loadVec(e) : loadMasked(e, m);
                        }
                    inputTransform(d, vj + c, vXi);
                }
            }
            // M[xi] = V[xi] U[xi] on register tiles, rows split as evenly as possible.
            for (int xi = 0; xi < kXi; ++xi) {
                const float* v = V + xi * vXi;
                const float* u = P.u + xi * P.cin * coutPad;
                float* mm = M + xi * mXi;
                for (int64_t o = 0; o < coutPad; o += kMaxV * kLanes) {
                    const int Vb = static_cast<int>(std::min<int64_t>(kMaxV, (coutPad - o) / kLanes));
                    const int64_t parts = ceilDiv(nb, kRows[Vb]);
                    for (int64_t i = 0, j = 0; i < parts; ++i) {
                        const int64_t r = nb / parts + (i < nb % parts ? 1 : 0);
                        kGemmFns[Vb - 1][r - 1](v + j * cinPad, cinPad, u + o, coutPad, P.cin, mm + j * coutPad + o,
                                                coutPad);
                        j += r;
                    }
                }
            }
            // A^T M A, A^T = [1 1 1 0; 0 1 -1 -1], then bias or accumulate, ReLU, store.
            for (int64_t j = 0; j < nb; ++j) {
                const int64_t b = tileB[j], oy = 2 * tileY[j], ox = 2 * tileX[j];
                const bool two[2] = {true, ox + 1 < P.ow};
                const bool rows[2] = {true, oy + 1 < P.oh};
                float* out = P.dst + (b * P.oh + oy) * rowOut + ox * P.cout;
                for (int64_t c = 0; c < coutPad; c += kLanes) {
                    const Mask mk = laneMask(P.cout - c);
                    const bool full = c + kLanes <= P.cout;
                    const float* mp = M + j * coutPad + c;
                    Vec m[4][4];
#pragma GCC unroll 16
                    for (int xi = 0; xi < kXi; ++xi) m[xi / 4][xi % 4] = loadVec(mp + xi * mXi);
                    Vec s[2][4];
#pragma GCC unroll 4
                    for (int q = 0; q < 4; ++q) {
                        s[0][q] = m[0][q] + m[1][q] + m[2][q];
                        s[1][q] = m[1][q] - m[2][q] - m[3][q];
                    }
                    Vec y[2][2];
#pragma GCC unroll 2
                    for (int r = 0; r < 2; ++r) {
                        y[r][0] = s[r][0] + s[r][1] + s[r][2];
                        y[r][1] = s[r][1] - s[r][2] - s[r][3];
                    }
                    const Vec base = !P.accumulate && P.bias ? loadMasked(P.bias + c, mk) : Vec{};
                    for (int r = 0; r < 2; ++r) {
                        if (!rows[r]) continue;
                        for (int q = 0; q < 2; ++q) {
                            if (!two[q]) continue;
                            float* yp = out + r * rowOut + q * P.cout + c;
                            Vec v = (P.accumulate ? (full ? loadVec(yp) : loadMasked(yp, mk)) : base) + y[r][q];
                            if (P.relu) v = v < 0.0f ? Vec{} : v;  // keeps NaN, like the ReLU kernel
                            if (full)
                                storeVec(yp, v);
                            else
                                storeMasked(yp, v, mk);
                        }
                    }
                }
            }
        }
    });
}

}  // namespace

size_t winogradWorkspaceFloats(const Conv2DGeom& g) {
    return static_cast<size_t>(kXi * std::max(g.c * roundUpLanes(g.oc), g.oc * roundUpLanes(g.c)));
}

void winogradConvForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                         float* workspace, ThreadPool& pool, bool relu) {
    transformFilter(g, w, false, workspace, pool);
    Problem P;
    P.src = x;
    P.n = g.n;
    P.ih = g.h;
    P.iw = g.w;
    P.cin = g.c;
    P.padT = g.padTop;
    P.padL = g.padLeft;
    P.dst = y;
    P.oh = g.oh;
    P.ow = g.ow;
    P.cout = g.oc;
    P.u = workspace;
    P.bias = bias;
    P.relu = relu;
    runProblem(P, pool);
}

void winogradConvBackwardData(const Conv2DGeom& g, const float* w, const float* dy, float* dx, float* workspace,
                              ThreadPool& pool, bool overwriteDx) {
    // dx[iy, ix] = sum over (ky, kx) of dy[iy + padTop - ky, ix + padLeft - kx] w[ky, kx]^T: with
    // ky' = 2 - ky, a convolution of dy padded by 2 - padTop (2 - padLeft) with the rotated filter.
    transformFilter(g, w, true, workspace, pool);
    Problem P;
    P.src = dy;
    P.n = g.n;
    P.ih = g.oh;
    P.iw = g.ow;
    P.cin = g.oc;
    P.padT = 2 - g.padTop;
    P.padL = 2 - g.padLeft;
    P.dst = dx;
    P.oh = g.h;
    P.ow = g.w;
    P.cout = g.c;
    P.u = workspace;
    P.accumulate = !overwriteDx;
    runProblem(P, pool);
}

}  // namespace kiln::engine::kernels::KILN_ISA_NS
