// SPDX-License-Identifier: Apache-2.0
// Winograd F(2x2, 3x3) and F(4x4, 3x3) convolution for ungrouped 3x3 layers with unit stride
// and dilation: the forward pass and backward-data (which, for such a layer, is itself a 3x3
// unit-stride convolution of dy with the filter rotated by 180 degrees and its channel axes
// swapped), and the filter gradient. Compiled once per instruction set like
// tile_kernels_isa.cpp (a wrapper defines KILN_ISA_NS).
//
// Each 2x2 block of output pixels (a tile) reads a 4x4 patch of input pixels. Per tile and
// input channel the patch is transformed (B^T d B, additions only) into 16 values, one per
// transformed position xi; the filter is transformed once per call (G g G^T) into 16 matrices
// U[xi] [cin][cout]; the 16 products M[xi] = V[xi] U[xi] (one small GEMM per xi over a block
// of tiles) replace the 9 taps' products, and A^T M A (additions only) gives the 2x2 outputs.
// That is 16 multiplications per tile and channel pair instead of 36 (2.25x fewer). F(4x4, 3x3)
// is the same with 4x4 output tiles, 6x6 input patches and 36 transformed positions (whose
// transforms need multiplications by small constants): 36 multiplications per 16 outputs
// instead of 144 (4x fewer), at the price of larger rounding errors (the transforms' constants
// range from 1/24 to 8). Tiles are processed in blocks whose transformed inputs and products
// live in a stack buffer, so the transforms run while the block is in cache and nothing is
// allocated.
//
// The filter gradient of such a layer has the same structure: per tile, the input patch's
// transform V = B^T d B and the 2x2 block of dy's transform Z = A dY A^T (4x4, additions only)
// are multiplied position by position, S[xi] += V[xi]^T Z[xi] summed over all tiles (16 small
// GEMMs over a block of tiles, reducing over the tiles), and dw = G^T S G at the end: again 16
// multiplications per tile and channel pair instead of 36. With F(4x4) the 4x4 block of dy is
// transformed to 6x6 and there are 36 positions.
//
// Every output sums its terms in an order fixed by the geometry (the GEMM over input channels
// in order, the filter gradient over fixed chunks of tiles added in chunk order, the transforms
// in a fixed expression), so results do not depend on the thread count; they differ from the
// direct kernels' in rounding only.
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

// Transformed positions per tile of F(2x2, 3x3) (the filter gradient's only tile size).
constexpr int kXi = 16;
// F(M x M, 3x3), M = 2 or 4: the input patch's edge and the transformed positions per tile.
template <int M>
constexpr int kPatch = M + 2;
template <int M>
constexpr int kPositions = (M + 2) * (M + 2);
// Floats of one task's stack buffer: the block's transformed inputs [positions][tiles][cinPad]
// and products [positions][tiles][coutPad]. At least one tile must fit: conv2d.cpp limits the
// channels. F(4x4) has 36 positions and gets twice the buffer (256 KiB).
template <int M>
constexpr int64_t kBlockFloats = M == 2 ? 32768 : 65536;
// Most tiles per block: more only lengthens the GEMM's rows past what one filter matrix's reuse
// needs, and spreads a block's transformed inputs over more of L2.
constexpr int64_t kMaxBlockTiles = 32;

// Floats added to the stride between transformed positions (one cache line).
constexpr int64_t kXiSkew = 16;

// The stride between transformed positions for `floats` floats per position: whole cache lines,
// an odd number of them, so that the 16 positions of a tile fall into 16 different L1 sets (a
// multiple of 4 KiB put them all into one). At most floats + 2 * kXiSkew.
int64_t xiStride(int64_t floats) {
    return (ceilDiv(floats, 16) | 1) * 16;
}

// Tiles ahead whose pixels the transforms prefetch into L1.
constexpr int64_t kPrefetchTiles = 2;

// Prefetches the cache lines of floats [p, p + n) into L1.
inline void prefetchSpan(const float* p, int64_t n) {
    const char* c = reinterpret_cast<const char*>(p);
    for (int64_t b = 0; b < n * int64_t{sizeof(float)}; b += 64) _mm_prefetch(c + b, _MM_HINT_T0);
}

template <int M>
int64_t blockTiles(int64_t cinPad, int64_t coutPad) {
    constexpr int64_t xi = kPositions<M>;
    return std::clamp<int64_t>((kBlockFloats<M> - 4 * xi * kXiSkew) / (xi * (cinPad + coutPad)), 1, kMaxBlockTiles);
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

// G g of one column (g0, g1, g2) of a filter: F(2x2) G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
// F(4x4) G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1].
template <int M>
inline void filterColumn(Vec g0, Vec g1, Vec g2, Vec* o) {
    if constexpr (M == 2) {
        const Vec half = splat(0.5f);
        o[0] = g0;
        o[1] = (g0 + g1 + g2) * half;
        o[2] = (g0 - g1 + g2) * half;
        o[3] = g2;
    } else {
        const Vec a = (g0 + g2) * splat(1.0f / 6.0f), b = g1 * splat(1.0f / 6.0f);
        const Vec c = g0 * splat(1.0f / 24.0f) + g2 * splat(1.0f / 6.0f), d = g1 * splat(1.0f / 12.0f);
        o[0] = g0 * splat(0.25f);
        o[1] = Vec{} - a - b;
        o[2] = b - a;
        o[3] = c + d;
        o[4] = c - d;
        o[5] = g2;
    }
}

// U = G g G^T for one 3x3 filter g (vectors of channels).
template <int M>
inline void filterTransform(const Vec g[3][3], Vec u[kPatch<M>][kPatch<M>]) {
    constexpr int T = kPatch<M>;
    Vec t[T][3];
#pragma GCC unroll 4
    for (int c = 0; c < 3; ++c) {
        Vec o[T];
        filterColumn<M>(g[0][c], g[1][c], g[2][c], o);
#pragma GCC unroll 6
        for (int r = 0; r < T; ++r) t[r][c] = o[r];
    }
#pragma GCC unroll 6
    for (int r = 0; r < T; ++r) filterColumn<M>(t[r][0], t[r][1], t[r][2], u[r]);
}

// The filter of the convolution computed, transformed for F(M x M, 3x3): u [positions][cin][coutPad],
// zero past cout.
// Forward: cin = c, cout = oc, filter (ky, kx, ci, o) = w[ky, kx, ci, o]. Backward-data:
// cin = oc, cout = c, filter (ky, kx, o, ci) = w[2 - ky, 2 - kx, ci, o].
template <int M>
void transformFilter(const Conv2DGeom& g, const float* w, bool backward, float* u, ThreadPool& pool) {
    constexpr int T = kPatch<M>, kPos = kPositions<M>;
    const int64_t cin = backward ? g.oc : g.c, cout = backward ? g.c : g.oc, coutPad = roundUpLanes(cout);
    const int64_t xiStride = cin * coutPad;
    if (!backward) {
        // Vectors along o, which is contiguous in w.
        pool.parallelFor(cin, 4, [&](int64_t c0, int64_t c1) {
            for (int64_t ci = c0; ci < c1; ++ci)
                for (int64_t o = 0; o < coutPad; o += kLanes) {
                    const Mask m = laneMask(cout - o);
                    Vec gv[3][3], uv[T][T];
                    for (int k = 0; k < 9; ++k) gv[k / 3][k % 3] = loadMasked(w + (k * g.c + ci) * g.oc + o, m);
                    filterTransform<M>(gv, uv);
                    float* d = u + ci * coutPad + o;
                    for (int xi = 0; xi < kPos; ++xi) storeVec(d + xi * xiStride, uv[xi / T][xi % T]);
                }
        });
        return;
    }
    // Vectors along w's contiguous o (the transform's input channel), transposed on the way out:
    // u[xi][o][ci]. Rows of u are padded from c to coutPad with zeros.
    pool.parallelFor(g.c, 4, [&](int64_t c0, int64_t c1) {
        alignas(64) float lanes[kPos][kLanes];
        for (int64_t ci = c0; ci < c1; ++ci)
            for (int64_t o = 0; o < g.oc; o += kLanes) {
                const Mask m = laneMask(g.oc - o);
                Vec gv[3][3], uv[T][T];
                for (int k = 0; k < 9; ++k) gv[k / 3][k % 3] = loadMasked(w + ((8 - k) * g.c + ci) * g.oc + o, m);
                filterTransform<M>(gv, uv);
                for (int xi = 0; xi < kPos; ++xi) storeVec(lanes[xi], uv[xi / T][xi % T]);
                const int64_t n = std::min<int64_t>(kLanes, g.oc - o);
                for (int xi = 0; xi < kPos; ++xi)
                    for (int64_t l = 0; l < n; ++l) u[xi * xiStride + (o + l) * coutPad + ci] = lanes[xi][l];
            }
    });
    if (coutPad > cout)
        pool.parallelFor(kPos * cin, 64, [&](int64_t r0, int64_t r1) {
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

// B^T d of one column d[0 .. T) of a patch. F(2x2): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0;
// 0 1 0 -1]. F(4x4): B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
// 0 2 -1 -2 1 0; 0 4 0 -5 0 1].
template <int M>
inline void inputColumn(const Vec* d, Vec* o) {
    if constexpr (M == 2) {
        o[0] = d[0] - d[2];
        o[1] = d[1] + d[2];
        o[2] = d[2] - d[1];
        o[3] = d[1] - d[3];
    } else {
        const Vec four = splat(4.0f), five = splat(5.0f), two = splat(2.0f);
        const Vec a = d[4] - four * d[2], b = d[3] - four * d[1];
        const Vec c = d[4] - d[2], e = (d[3] - d[1]) * two;
        o[0] = four * d[0] - five * d[2] + d[4];
        o[1] = a + b;
        o[2] = a - b;
        o[3] = c + e;
        o[4] = c - e;
        o[5] = four * d[1] - five * d[3] + d[5];
    }
}

// B^T d B of one patch whose pixel (r, q) is load(r, q) (vectors of channels); position
// xi = T*row + col is stored at out + xi*xiStride.
template <int M, typename Load>
inline void inputTransform(Load&& load, float* out, int64_t xiStride) {
    constexpr int T = kPatch<M>;
    Vec t[T][T];
#pragma GCC unroll 6
    for (int c = 0; c < T; ++c) {
        Vec d[T], o[T];
#pragma GCC unroll 6
        for (int r = 0; r < T; ++r) d[r] = load(r, c);
        inputColumn<M>(d, o);
#pragma GCC unroll 6
        for (int r = 0; r < T; ++r) t[r][c] = o[r];
    }
#pragma GCC unroll 6
    for (int r = 0; r < T; ++r) {
        Vec o[T];
        inputColumn<M>(t[r], o);
#pragma GCC unroll 6
        for (int q = 0; q < T; ++q) storeVec(out + (T * r + q) * xiStride, o[q]);
    }
}

// Image, tile row and tile column of consecutive tiles (output blocks, tw per row, th per image),
// advanced as counters (no division per tile).
struct TileCursor {
    int64_t th = 0, tw = 0, b = 0, y = 0, x = 0;
    TileCursor(int64_t tilesH, int64_t tilesW, int64_t t) : th(tilesH), tw(tilesW) {
        b = t / (th * tw);
        y = t % (th * tw) / tw;
        x = t % tw;
    }
    // Writes the next nb tiles' coordinates and advances past them.
    void take(int64_t nb, int64_t* tileB, int64_t* tileY, int64_t* tileX) {
        for (int64_t j = 0; j < nb; ++j) {
            tileB[j] = b;
            tileY[j] = y;
            tileX[j] = x;
            if (++x == tw) {
                x = 0;
                if (++y == th) {
                    y = 0;
                    ++b;
                }
            }
        }
    }
};

// B^T d B of the T x T input patches of nb tiles: the patch of tile j starts at input row
// M*tileY[j] - padT and column M*tileX[j] - padL of image tileB[j] of src [n, ih, iw, cin];
// pixels outside read as zero. Channel c of position xi goes to V[xi*vXi + j*cinPad + c], and
// lanes from cin to cinPad are zero.
template <int M>
void transformInputs(const float* src, int64_t ih, int64_t iw, int64_t cin, int64_t padT, int64_t padL,
                     int64_t nb, const int64_t* tileB, const int64_t* tileY, const int64_t* tileX, float* V,
                     int64_t vXi) {
    constexpr int T = kPatch<M>;
    const int64_t cinPad = roundUpLanes(cin), rowIn = iw * cin;
    for (int64_t j = 0; j < nb; ++j) {
        if (j + kPrefetchTiles < nb) {
            // The M columns the tile ahead reads beyond its left neighbour's (the whole patch at
            // a row's start is mostly in cache from the row above).
            const int64_t a = j + kPrefetchTiles, py = M * tileY[a] - padT, px = M * tileX[a] - padL + 2;
            const int64_t x0 = std::max<int64_t>(px, 0), x1 = std::min<int64_t>(px + M, iw);
            for (int r = 0; r < T && x0 < x1; ++r)
                if (py + r >= 0 && py + r < ih)
                    prefetchSpan(src + ((tileB[a] * ih + py + r) * iw + x0) * cin, (x1 - x0) * cin);
        }
        const int64_t iy0 = M * tileY[j] - padT, ix0 = M * tileX[j] - padL;
        const float* img = src + tileB[j] * ih * rowIn;
        float* vj = V + j * cinPad;
        if (iy0 >= 0 && iy0 + T <= ih && ix0 >= 0 && ix0 + T <= iw) {
            const float* p = img + iy0 * rowIn + ix0 * cin;
            int64_t c = 0;
            for (; c + kLanes <= cin; c += kLanes)
                inputTransform<M>([&](int r, int q) { return loadVec(p + r * rowIn + q * cin + c); }, vj + c, vXi);
            if (c < cin) {
                const Mask m = laneMask(cin - c);
                inputTransform<M>([&](int r, int q) { return loadMasked(p + r * rowIn + q * cin + c, m); }, vj + c,
                                  vXi);
            }
            continue;
        }
        // A tile on the border: pixels outside the input read as zero.
        const float* rowP[T];
        bool colOk[T];
        for (int r = 0; r < T; ++r) rowP[r] = iy0 + r >= 0 && iy0 + r < ih ? img + (iy0 + r) * rowIn : nullptr;
        for (int q = 0; q < T; ++q) colOk[q] = ix0 + q >= 0 && ix0 + q < iw;
        for (int64_t c = 0; c < cinPad; c += kLanes) {
            const Mask m = laneMask(cin - c);
            const bool full = c + kLanes <= cin;
            inputTransform<M>(
                [&](int r, int q) {
                    if (!rowP[r] || !colOk[q]) return Vec{};
                    const float* e = rowP[r] + (ix0 + q) * cin + c;
                    return full ? loadVec(e) : loadMasked(e, m);
                },
                vj + c, vXi);
        }
    }
}

// A^T m of one column m[0 .. T) of a tile's products. F(2x2): A^T = [1 1 1 0; 0 1 -1 -1].
// F(4x4): A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
template <int M>
inline void outputColumn(const Vec* m, Vec* o) {
    if constexpr (M == 2) {
        o[0] = m[0] + m[1] + m[2];
        o[1] = m[1] - m[2] - m[3];
    } else {
        const Vec a = m[1] + m[2], b = m[1] - m[2], c = m[3] + m[4], d = m[3] - m[4];
        o[0] = m[0] + a + c;
        o[1] = b + d * splat(2.0f);
        o[2] = a + c * splat(4.0f);
        o[3] = b + d * splat(8.0f) + m[5];
    }
}

template <int M>
void runProblem(const Problem& P, ThreadPool& pool) {
    constexpr int T = kPatch<M>, kPos = kPositions<M>;
    const int64_t th = ceilDiv(P.oh, M), tw = ceilDiv(P.ow, M), perImage = th * tw, tiles = P.n * perImage;
    const int64_t cinPad = roundUpLanes(P.cin), coutPad = roundUpLanes(P.cout);
    const int64_t tb = blockTiles<M>(cinPad, coutPad);
    const int64_t vXi = xiStride(tb * cinPad), mXi = xiStride(tb * coutPad);
    const int64_t rowOut = P.ow * P.cout;
    pool.parallelFor(tiles, tb, [&](int64_t t0, int64_t t1) {
        alignas(64) float buf[kBlockFloats<M>];
        float* V = buf;
        float* Mp = buf + kPos * vXi;
        int64_t tileB[kMaxBlockTiles], tileY[kMaxBlockTiles], tileX[kMaxBlockTiles];
        TileCursor cursor(th, tw, t0);
        for (int64_t s0 = t0; s0 < t1; s0 += tb) {
            const int64_t nb = std::min(tb, t1 - s0);
            cursor.take(nb, tileB, tileY, tileX);
            transformInputs<M>(P.src, P.ih, P.iw, P.cin, P.padT, P.padL, nb, tileB, tileY, tileX, V, vXi);
            // M[xi] = V[xi] U[xi] on register tiles, rows split as evenly as possible.
            for (int xi = 0; xi < kPos; ++xi) {
                const float* v = V + xi * vXi;
                const float* u = P.u + xi * P.cin * coutPad;
                float* mm = Mp + xi * mXi;
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
            // A^T M A, then bias or accumulate, ReLU, store.
            for (int64_t j = 0; j < nb; ++j) {
                const int64_t b = tileB[j], oy = M * tileY[j], ox = M * tileX[j];
                const int64_t nRows = std::min<int64_t>(M, P.oh - oy), nCols = std::min<int64_t>(M, P.ow - ox);
                float* out = P.dst + (b * P.oh + oy) * rowOut + ox * P.cout;
                for (int64_t c = 0; c < coutPad; c += kLanes) {
                    const Mask mk = laneMask(P.cout - c);
                    const bool full = c + kLanes <= P.cout;
                    const float* mp = Mp + j * coutPad + c;
                    Vec s[M][T];
#pragma GCC unroll 6
                    for (int q = 0; q < T; ++q) {
                        Vec m[T], o[M];
#pragma GCC unroll 6
                        for (int r = 0; r < T; ++r) m[r] = loadVec(mp + (T * r + q) * mXi);
                        outputColumn<M>(m, o);
#pragma GCC unroll 4
                        for (int r = 0; r < M; ++r) s[r][q] = o[r];
                    }
                    Vec y[M][M];
#pragma GCC unroll 4
                    for (int r = 0; r < M; ++r) outputColumn<M>(s[r], y[r]);
                    const Vec base = !P.accumulate && P.bias ? loadMasked(P.bias + c, mk) : Vec{};
                    for (int r = 0; r < nRows; ++r) {
                        for (int q = 0; q < nCols; ++q) {
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

// ---- filter gradient -------------------------------------------------------------------------

#if defined(KILN_ISA_AVX512)
// R input channels x V vectors of output channels per register tile (R*V accumulators and V
// vectors of Z; the broadcast folds into the FMA).
constexpr int kWgMaxV = 4;
constexpr int kWgMaxR = 24;
constexpr int kWgRows[kWgMaxV + 1] = {0, 24, 12, 7, 6};
#else
constexpr int kWgMaxV = 2;
constexpr int kWgMaxR = 12;
constexpr int kWgRows[kWgMaxV + 1] = {0, 12, 6};
#endif
// Fixed chunks of tiles whose partial sums S are added in chunk order: at most this many, at
// least this many tiles each, and all partial sums within kWgPartialFloats (conv2d.cpp takes
// the direct kernels where even 4 chunks would not fit).
constexpr int64_t kWgMaxChunks = 16;
constexpr int64_t kWgMinChunkTiles = 16;
constexpr int64_t kWgPartialFloats = int64_t{1} << 22;
// Floats of one task's stack buffer (the block's transformed inputs and dy, [16][tiles][cPad]
// each), and most tiles per block: the GEMM's reduction length between loads and stores of the
// partial sums, which with 64-channel layers cost as much as the products at 15 tiles per block.
constexpr int64_t kWgBlockFloats = 65536;
constexpr int64_t kWgMaxBlockTiles = 64;
// Floats of the partial sums added across the chunks at a time (a multiple of the vector width).
constexpr int64_t kWgSumBlock = 2048;

template <int M>
int64_t wgChunks(const Conv2DGeom& g) {
    const int64_t tiles = g.n * ceilDiv(g.oh, M) * ceilDiv(g.ow, M);
    const int64_t fit = kWgPartialFloats / std::max<int64_t>(1, kPositions<M> * g.c * roundUpLanes(g.oc));
    return std::clamp<int64_t>(std::min(tiles / kWgMinChunkTiles, fit), 1, kWgMaxChunks);
}

template <int M>
int64_t wgBlockTiles(int64_t cinPad, int64_t coutPad) {
    constexpr int64_t xi = kPositions<M>;
    return std::clamp<int64_t>((kWgBlockFloats - 4 * xi * kXiSkew) / (xi * (cinPad + coutPad)), 1,
                               kWgMaxBlockTiles);
}

// s[j, :] (+)= sum over k < K, in order, of v[k*vStride + j] * z[k*zStride + :] for R input
// channels j and V vectors of output channels; the sum continues from s unless zeroInit.
template <int R, int V, bool ZeroInit>
void wgradTile(const float* v, int64_t vStride, const float* z, int64_t zStride, int64_t K, float* s,
               int64_t sStride) {
    Vec acc[R][V];
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int q = 0; q < V; ++q) acc[j][q] = ZeroInit ? Vec{} : loadVec(s + j * sStride + q * kLanes);
    for (int64_t k = 0; k < K; ++k, v += vStride, z += zStride) {
        Vec zv[V];
#pragma GCC unroll 32
        for (int q = 0; q < V; ++q) zv[q] = loadVec(z + q * kLanes);
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) {
            const Vec a = splat(v[j]);
#pragma GCC unroll 32
            for (int q = 0; q < V; ++q) acc[j][q] += a * zv[q];
        }
    }
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int q = 0; q < V; ++q) storeVec(s + j * sStride + q * kLanes, acc[j][q]);
}

using WgradFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);
template <int V, int Limit, bool ZeroInit, int... R>
constexpr std::array<WgradFn, sizeof...(R)> wgradFns(std::integer_sequence<int, R...>) {
    return {(R < Limit ? &wgradTile<(R < Limit ? R + 1 : 1), V, ZeroInit> : nullptr)...};
}
template <bool ZeroInit, int... V>
constexpr std::array<std::array<WgradFn, kWgMaxR>, kWgMaxV> wgradTable(std::integer_sequence<int, V...>) {
    return {wgradFns<V + 1, kWgRows[V + 1], ZeroInit>(std::make_integer_sequence<int, kWgMaxR>{})...};
}
// [the first block of a chunk: start from zero]
constexpr std::array<std::array<std::array<WgradFn, kWgMaxR>, kWgMaxV>, 2> kWgradFns = {
    wgradTable<false>(std::make_integer_sequence<int, kWgMaxV>{}),
    wgradTable<true>(std::make_integer_sequence<int, kWgMaxV>{})};

// A y of one column y[0 .. M) of a dy block (A = (A^T)^T, A^T as in outputColumn).
template <int M>
inline void gradColumn(const Vec* y, Vec* z) {
    if constexpr (M == 2) {
        z[0] = y[0];
        z[1] = y[0] + y[1];
        z[2] = y[0] - y[1];
        z[3] = -y[1];
    } else {
        const Vec a = y[0] + y[2], b = y[1] + y[3];
        const Vec c = y[0] + y[2] * splat(4.0f), d = y[1] * splat(2.0f) + y[3] * splat(8.0f);
        z[0] = y[0];
        z[1] = a + b;
        z[2] = a - b;
        z[3] = c + d;
        z[4] = c - d;
        z[5] = y[3];
    }
}

// Z = A dY A^T of the M x M blocks of dy [n, oh, ow, oc] of nb tiles (rows and columns past oh /
// ow read as zero): channel o of position xi goes to Z[xi*zXi + j*ocPad + o], zero from oc to
// ocPad.
template <int M>
void transformGrads(const float* dy, int64_t oh, int64_t ow, int64_t oc, int64_t nb, const int64_t* tileB,
                    const int64_t* tileY, const int64_t* tileX, float* Z, int64_t zXi) {
    constexpr int T = kPatch<M>;
    const int64_t ocPad = roundUpLanes(oc), rowOut = ow * oc;
    for (int64_t j = 0; j < nb; ++j) {
        if (j + kPrefetchTiles < nb) {
            const int64_t a = j + kPrefetchTiles, py = M * tileY[a], px = M * tileX[a];
            const int64_t n = (std::min<int64_t>(px + M, ow) - px) * oc;
            for (int64_t r = py; r < std::min<int64_t>(py + M, oh); ++r)
                prefetchSpan(dy + ((tileB[a] * oh + r) * ow + px) * oc, n);
        }
        const int64_t oy = M * tileY[j], ox = M * tileX[j];
        const int64_t nRows = std::min<int64_t>(M, oh - oy), nCols = std::min<int64_t>(M, ow - ox);
        const float* p = dy + ((tileB[j] * oh + oy) * ow + ox) * oc;
        float* zj = Z + j * ocPad;
        for (int64_t c = 0; c < ocPad; c += kLanes) {
            const Mask m = laneMask(oc - c);
            const bool full = c + kLanes <= oc;
            // T = A dY (T x M), then Z = T A^T (T x T).
            Vec t[T][M];
#pragma GCC unroll 4
            for (int q = 0; q < M; ++q) {
                Vec d[M], o[T];
#pragma GCC unroll 4
                for (int r = 0; r < M; ++r) {
                    const float* e = p + r * rowOut + q * oc + c;
                    d[r] = r < nRows && q < nCols ? (full ? loadVec(e) : loadMasked(e, m)) : Vec{};
                }
                gradColumn<M>(d, o);
#pragma GCC unroll 6
                for (int r = 0; r < T; ++r) t[r][q] = o[r];
            }
#pragma GCC unroll 6
            for (int r = 0; r < T; ++r) {
                Vec o[T];
                gradColumn<M>(t[r], o);
#pragma GCC unroll 6
                for (int q = 0; q < T; ++q) storeVec(zj + c + (T * r + q) * zXi, o[q]);
            }
        }
    }
}

// G^T s of one column s[0 .. T) of summed products (G as in filterColumn).
template <int M>
inline void sumColumn(const Vec* s, Vec* p) {
    const Vec half = splat(0.5f);
    if constexpr (M == 2) {
        const Vec a = s[1] + s[2], d = s[1] - s[2];
        p[0] = s[0] + a * half;
        p[1] = d * half;
        p[2] = a * half + s[3];
    } else {
        const Vec a = s[1] + s[2], d = s[1] - s[2], b = s[3] + s[4], e = s[3] - s[4];
        const Vec sixth = splat(1.0f / 6.0f);
        p[0] = s[0] * splat(0.25f) - a * sixth + b * splat(1.0f / 24.0f);
        p[1] = e * splat(1.0f / 12.0f) - d * sixth;
        p[2] = (b - a) * sixth + s[5];
    }
}

// dg = G^T s G for one T x T block of sums (vectors of output channels).
template <int M>
inline void gradTransform(const Vec s[kPatch<M>][kPatch<M>], Vec dg[3][3]) {
    constexpr int T = kPatch<M>;
    Vec p[3][T];
#pragma GCC unroll 6
    for (int c = 0; c < T; ++c) {
        Vec col[T], o[3];
#pragma GCC unroll 6
        for (int r = 0; r < T; ++r) col[r] = s[r][c];
        sumColumn<M>(col, o);
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) p[r][c] = o[r];
    }
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) sumColumn<M>(p[r], dg[r]);
}

}  // namespace

size_t winogradWorkspaceFloats(const Conv2DGeom& g, int tile, int gradTile) {
    // The transformed filter (forward, backward-data) or the filter gradient's partial sums,
    // which are never needed at the same time.
    const int64_t positions = tile == 4 ? kPositions<4> : kPositions<2>;
    const int64_t filter = positions * std::max(g.c * roundUpLanes(g.oc), g.oc * roundUpLanes(g.c));
    const int64_t partials = (gradTile == 4 ? wgChunks<4>(g) * kPositions<4> : wgChunks<2>(g) * kPositions<2>)*g.c * roundUpLanes(g.oc);
    return static_cast<size_t>(std::max(filter, partials));
}

void winogradConvForward(const Conv2DGeom& g, int tile, const float* x, const float* w, const float* bias, float* y,
                         float* workspace, ThreadPool& pool, bool relu) {
    if (tile == 4)
        transformFilter<4>(g, w, false, workspace, pool);
    else
        transformFilter<2>(g, w, false, workspace, pool);
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
    if (tile == 4)
        runProblem<4>(P, pool);
    else
        runProblem<2>(P, pool);
}

void winogradConvBackwardData(const Conv2DGeom& g, int tile, const float* w, const float* dy, float* dx,
                              float* workspace, ThreadPool& pool, bool overwriteDx) {
    // dx[iy, ix] = sum over (ky, kx) of dy[iy + padTop - ky, ix + padLeft - kx] w[ky, kx]^T: with
    // ky' = 2 - ky, a convolution of dy padded by 2 - padTop (2 - padLeft) with the rotated filter.
    if (tile == 4)
        transformFilter<4>(g, w, true, workspace, pool);
    else
        transformFilter<2>(g, w, true, workspace, pool);
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
    if (tile == 4)
        runProblem<4>(P, pool);
    else
        runProblem<2>(P, pool);
}

namespace {

template <int M>
void backwardFilter(const Conv2DGeom& g, const float* x, const float* dy, float* dw, float* workspace, ThreadPool& pool) {
    constexpr int T = kPatch<M>, kPos = kPositions<M>;
    const int64_t th = ceilDiv(g.oh, M), tw = ceilDiv(g.ow, M), tiles = g.n * th * tw;
    const int64_t cinPad = roundUpLanes(g.c), ocPad = roundUpLanes(g.oc);
    const int64_t chunks = wgChunks<M>(g), tb = wgBlockTiles<M>(cinPad, ocPad);
    const int64_t vXi = xiStride(tb * cinPad), zXi = xiStride(tb * ocPad);
    // Partial sums of chunk k: S[xi][ci][ocPad] at workspace + k * partFloats.
    const int64_t sXi = g.c * ocPad, partFloats = kPos * sXi;
    pool.parallelFor(chunks, 1, [&](int64_t k0, int64_t k1) {
        alignas(64) float buf[kWgBlockFloats];
        float* V = buf;
        float* Z = buf + kPos * vXi;
        int64_t tileB[kWgMaxBlockTiles], tileY[kWgMaxBlockTiles], tileX[kWgMaxBlockTiles];
        for (int64_t k = k0; k < k1; ++k) {
            const int64_t c0 = tiles * k / chunks, c1 = tiles * (k + 1) / chunks;
            float* part = workspace + k * partFloats;
            if (c0 == c1) {
                std::memset(part, 0, sizeof(float) * static_cast<size_t>(partFloats));
                continue;
            }
            // Blocks of the chunk as even as possible; each continues the sums of the one before.
            const int64_t blocks = ceilDiv(c1 - c0, tb);
            TileCursor cursor(th, tw, c0);
            for (int64_t bi = 0, s0 = c0; bi < blocks; ++bi) {
                const int64_t nb = (c1 - c0) / blocks + (bi < (c1 - c0) % blocks ? 1 : 0);
                cursor.take(nb, tileB, tileY, tileX);
                transformInputs<M>(x, g.h, g.w, g.c, g.padTop, g.padLeft, nb, tileB, tileY, tileX, V, vXi);
                transformGrads<M>(dy, g.oh, g.ow, g.oc, nb, tileB, tileY, tileX, Z, zXi);
                const bool zeroInit = s0 == c0;
                s0 += nb;
                for (int xi = 0; xi < kPos; ++xi) {
                    const float* v = V + xi * vXi;
                    const float* z = Z + xi * zXi;
                    float* sp = part + xi * sXi;
                    for (int64_t o = 0; o < ocPad; o += kWgMaxV * kLanes) {
                        const int Vb = static_cast<int>(std::min<int64_t>(kWgMaxV, (ocPad - o) / kLanes));
                        const int64_t parts = ceilDiv(g.c, kWgRows[Vb]);
                        for (int64_t i = 0, ci = 0; i < parts; ++i) {
                            const int64_t r = g.c / parts + (i < g.c % parts ? 1 : 0);
                            kWgradFns[zeroInit][Vb - 1][r - 1](v + ci, cinPad, z + o, ocPad, nb, sp + ci * ocPad + o,
                                                               ocPad);
                            ci += r;
                        }
                    }
                }
            }
        }
    });
    // S = the chunks' partial sums added in chunk order from zero, into chunk 0's. Streamed a
    // block at a time, chunk after chunk: summing each element across all chunks in turn read
    // kPos x chunks streams 16 KiB to 256 KiB apart (64-channel layers), which stalled on every
    // load. Each element's order of additions is the same either way.
    pool.parallelFor(ceilDiv(partFloats, kWgSumBlock), 1, [&](int64_t b0, int64_t b1) {
        float* s0 = workspace;
        const int64_t i0 = b0 * kWgSumBlock, i1 = std::min(partFloats, b1 * kWgSumBlock);
        for (int64_t i = i0; i < i1; i += kLanes) storeVec(s0 + i, Vec{} + loadVec(s0 + i));
        for (int64_t k = 1; k < chunks; ++k) {
            const float* sk = workspace + k * partFloats;
            for (int64_t i = i0; i < i1; i += kLanes) storeVec(s0 + i, loadVec(s0 + i) + loadVec(sk + i));
        }
    });
    // dw[ky, kx, ci, :] += (G^T S G)[ky, kx].
    pool.parallelFor(g.c, 1, [&](int64_t ci0, int64_t ci1) {
        for (int64_t ci = ci0; ci < ci1; ++ci)
            for (int64_t o = 0; o < ocPad; o += kLanes) {
                const Mask m = laneMask(g.oc - o);
                Vec sv[T][T];
#pragma GCC unroll 36
                for (int xi = 0; xi < kPos; ++xi) sv[xi / T][xi % T] = loadVec(workspace + xi * sXi + ci * ocPad + o);
                Vec dg[3][3];
                gradTransform<M>(sv, dg);
                for (int t = 0; t < 9; ++t) {
                    float* d = dw + (t * g.c + ci) * g.oc + o;
                    storeMasked(d, loadMasked(d, m) + dg[t / 3][t % 3], m);
                }
            }
    });
}

}  // namespace

void winogradConvBackwardFilter(const Conv2DGeom& g, int tile, const float* x, const float* dy, float* dw,
                                float* workspace, ThreadPool& pool) {
    if (tile == 4)
        backwardFilter<4>(g, x, dy, dw, workspace, pool);
    else
        backwardFilter<2>(g, x, dy, dw, workspace, pool);
}

}  // namespace kiln::engine::kernels::KILN_ISA_NS
