// SPDX-License-Identifier: Apache-2.0
// Register-tile kernels (direct Conv2D, GEMM), compiled once per instruction set: the build
// includes this file from one small wrapper per variant that defines KILN_ISA_NS (avx2 or avx512)
// and the matching -march. Only the names declared in tile_kernels.h leave this file; everything
// else is file-local, so the variants never share a symbol.
#ifndef KILN_ISA_NS
#error "tile_kernels_isa.cpp is compiled through a per-ISA wrapper that defines KILN_ISA_NS"
#endif
#if defined(KILN_ISA_AVX512) && !defined(__AVX512F__)
#error "the avx512 variant needs -march=x86-64-v4"
#endif
#if !defined(__AVX2__) || !defined(__FMA__)
#error "the direct kernels need at least AVX2 and FMA"
#endif

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "engine/core/allocator.h"
#include "engine/ops/kernels/tile_kernels.h"
#include "engine/ops/kernels/tile_vectors_isa.h"

// GCC notes that passing vector types by value depends on the ISA; these helpers are file-local.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace kiln::engine::kernels::KILN_ISA_NS {
namespace {

// ---- direct path (groups == 1): implicit GEMM, no im2col matrix, no GEMM packing -------------
//
// Forward and backward-data are both "broadcast one input value, multiply a vector of weights"
// register tiles over R output pixels x V vectors of 16 output channels. For unit-stride rows
// of 3- or 5-wide kernels (rowKernel) each broadcast value feeds every output pixel whose window
// contains it. 3-wide unit-stride rows with at most one padding column per side read the tensor
// itself: rows above and below are skipped as taps and the row kernels of the end tiles skip the
// padding column. Elsewhere zero padding is materialised a row at a time in small stack buffers
// (a ring of the rows one output row needs), so no padded copy of a whole tensor is written;
// rows too wide for those buffers fall back to a padded copy in the workspace. Backward-data is the transposed
// convolution written as a gather (each input pixel sums the output pixels that read it), so
// threads own disjoint rows of dx; it reads dy in place unless a column on the right or more
// than one on the left would be padding; when x has fewer than 16 channels it is instead dcol = dy W^T
// (all lanes busy) scattered image by image. The filter gradient is a register tile over RK
// filter rows x V output-channel vectors, reduced over output pixels in fixed chunks of output
// rows whose partial sums are added in chunk order. Every reduction order depends only on the
// geometry, never on the thread count.

int64_t roundUpLanes(int64_t n) {
    return (n + kLanes - 1) / kLanes * kLanes;
}

// Padded rows are built per task in stack buffers of at most this many floats (the forward and
// backward-data rings of kMaxRingRows rows at most, and the filter gradient's bands); larger
// rows use one padded copy of the whole tensor in the workspace instead.
constexpr int64_t kRingFloats = 16384;
constexpr int64_t kMaxRingRows = 32;
// Register-tile sizes. A forward/backward-data tile holds R*V accumulators, V weight vectors
// and one broadcast; a filter-gradient tile RK*V accumulators, V dy vectors and one broadcast;
// a row-reuse tile R*V accumulators, KW*V weights and one broadcast. Each stays within the
// register file (32 vectors with AVX-512, 16 with AVX2) so nothing spills in the inner loop.
#if defined(KILN_ISA_AVX512)
// Most vectors of output channels per register tile.
constexpr int kMaxV = 4;
// Most output pixels per forward/backward-data tile, by V.
constexpr int kTileMaxR = 8;
constexpr int kTileRows[kMaxV + 1] = {0, 8, 8, 6, 6};
// Most filter rows per filter-gradient tile, by V.
constexpr int kDwMaxRows = 24;
constexpr int kDwRows[kMaxV + 1] = {0, 24, 12, 8, 6};
// Row-reuse kernels for kernel widths 3 and 5: kRowRows[kw == 5][V] output pixels per tile
// (0: use the plain tile kernel).
constexpr int kRowMaxR = 12;
constexpr int kRowRows[2][kMaxV + 1] = {{0, 12, 10, 5, 4}, {0, 12, 0, 4, 2}};
#else
constexpr int kMaxV = 3;
constexpr int kTileMaxR = 12;
constexpr int kTileRows[kMaxV + 1] = {0, 12, 6, 4};
constexpr int kDwMaxRows = 14;
constexpr int kDwRows[kMaxV + 1] = {0, 14, 6, 4};
constexpr int kRowMaxR = 12;
constexpr int kRowRows[2][kMaxV + 1] = {{0, 12, 4, 0}, {0, 10, 0, 0}};
#endif
// Filter-gradient partial sums: at most this many fixed chunks of output rows.
constexpr int64_t kDwChunks = 16;
// The filter-gradient loop revisits a block of output pixels once per tile, so blocks are kept
// to about this many pixels (L1/L2-resident).
constexpr int64_t kDwBlockPixels = 256;
// Within a block, the tiles pass over at most this many output pixels at a time: one pass reads
// the pixels' dy vectors and a cache line of x per pixel, which then stays in L1 for the next
// filter rows. With 256 (the whole block) 32-channel layers spilled to L2 and ran 12-17 %
// slower with AVX2 (ResNet-8's second stage); the partial sums are stored and reloaded between
// passes, so the sums are unchanged.
constexpr int64_t kDwPassPixels = 128;

struct TileArgs {
    const float* a = nullptr;  // input data of pixel 0 before the tap offset
    int64_t aStep = 0;         // floats between consecutive pixels' input data
    const int64_t* tapOff = nullptr;
    const float* const* tapW = nullptr;  // per tap: weights [kin][wStride]
    int64_t taps = 0, kin = 0, wStride = 0;
    int64_t wCol = 0;    // added to every tapW (the v-block's first column)
    float* y = nullptr;  // output of pixel 0 (v-block offset applied); pixel j at y + j*yStep
    int64_t yStep = 0;
    Mask lastMask{};              // valid lanes of the last vector
    const float* init = nullptr;  // added to the sum (v-block offset applied), or nullptr
    bool accumulate = false;      // add the sum to y (init is ignored) instead of overwriting
    bool relu = false;            // then clamp at zero
    // Edge tiles (tileKernel's H / T): pixel 0 skips k < headK, pixel R-1 skips k >= kin - tailK.
    int64_t headK = 0, tailK = 0;
    const int64_t* tapHeadK = nullptr;  // with H: per tap instead of headK, when set
};

// y[j, :] = init + sum, or y[j, :] += sum, where sum is over taps t and k < kin of
// a[j*aStep + tapOff[t] + k] * tapW[t][k, :]. The sum starts from zero and is added to init / y
// once at the end. With H (T), the first (last) pixel's terms below headK (from kin - tailK on)
// are zero padding outside the row: they are neither read nor added, which leaves every sum
// unchanged, so a row's end tiles can read the unpadded tensor.
template <int R, int V, int H = 0, int T = 0>
void tileKernel(const TileArgs& t) {
    Vec acc[R][V];
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v) acc[j][v] = Vec{};
    const int64_t kTail = T ? t.kin - t.tailK : t.kin;
    for (int64_t tp = 0; tp < t.taps; ++tp) {
        const int64_t kHead = H ? (t.tapHeadK ? t.tapHeadK[tp] : t.headK) : 0;
        const float* a = t.a + t.tapOff[tp];
        const float* w0 = t.tapW[tp] + t.wCol;
        const float* ap[R];
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) ap[j] = a + j * t.aStep;
        // Terms k in [k0, k1) of pixels [J0, J1).
        auto span = [&](auto j0, auto j1, int64_t k0, int64_t k1) __attribute__((always_inline)) {
            constexpr int J0 = decltype(j0)::value, J1 = decltype(j1)::value;
            const float* w = w0 + k0 * t.wStride;
            for (int64_t k = k0; k < k1; ++k, w += t.wStride) {
                Vec wv[V];
#pragma GCC unroll 32
                for (int v = 0; v < V; ++v) wv[v] = loadVec(w + v * kLanes);
#pragma GCC unroll 32
                for (int j = J0; j < J1; ++j) {
                    const Vec av = splat(ap[j][k]);
#pragma GCC unroll 32
                    for (int v = 0; v < V; ++v) acc[j][v] += av * wv[v];
                }
            }
        };
        if constexpr (H) span(std::integral_constant<int, 1>{}, std::integral_constant<int, R>{}, 0, kHead);
        span(std::integral_constant<int, 0>{}, std::integral_constant<int, R>{}, kHead, kTail);
        if constexpr (T) span(std::integral_constant<int, 0>{}, std::integral_constant<int, R - 1>{}, kTail, t.kin);
    }
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) {
        const Mask m = v == V - 1 ? t.lastMask : laneMask(kLanes);
        // Whole vectors take plain loads and stores (the same values; a masked store costs
        // several times a plain one with AVX2, and small tiles store often).
        const bool full = v != V - 1 || maskFull(t.lastMask);
        const Vec base = !t.accumulate && t.init ? loadMasked(t.init + v * kLanes, m) : Vec{};
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) {
            float* yp = t.y + j * t.yStep + v * kLanes;
            Vec r = (t.accumulate ? (full ? loadVec(yp) : loadMasked(yp, m)) : base) + acc[j][v];
            if (t.relu) r = r < 0.0f ? Vec{} : r;  // keeps NaN, like the ReLU kernel
            if (full)
                storeVec(yp, r);
            else
                storeMasked(yp, r, m);
        }
    }
}

struct RowArgs {
    const float* a = nullptr;  // input of pixel 0 (kx = 0) before the tap offset
    int64_t cin = 0;           // input channels; consecutive pixels are cin floats apart
    const int64_t* tapOff = nullptr;
    const float* const* tapW = nullptr;  // per kernel row: weights [KW][cin][wStride]
    int64_t taps = 0, wStride = 0, wCol = 0;
    float* y = nullptr;
    int64_t yStep = 0;
    Mask lastMask{};
    const float* init = nullptr;
    bool accumulate = false;
    bool relu = false;
};

// Unit-stride rows, same conventions as tileKernel with the sum over kernel rows t, kx < KW and
// ci < cin of a[tapOff[t] + (j + kx)*cin + ci] * tapW[t][kx*cin + ci, :]. Each broadcast input
// value feeds up to KW output pixels. The tile reads input pixels i = j + kx in [0, R + KW - 1);
// the first SL and the last SR of them are zero padding outside the row and are neither read nor
// multiplied (skipping a zero term leaves every float sum unchanged), so tiles at the row's ends
// read the unpadded tensor directly.
template <int R, int V, int KW, int SL = 0, int SR = 0>
void rowKernel(const RowArgs& t) {
    Vec acc[R][V];
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v) acc[j][v] = Vec{};
    const int64_t cin = t.cin;
    for (int64_t tp = 0; tp < t.taps; ++tp) {
        const float* a = t.a + t.tapOff[tp];
        const float* w = t.tapW[tp] + t.wCol;
        for (int64_t ci = 0; ci < cin; ++ci, ++a, w += t.wStride) {
            Vec wv[KW][V];
#pragma GCC unroll 32
            for (int kx = 0; kx < KW; ++kx)
#pragma GCC unroll 32
                for (int v = 0; v < V; ++v) wv[kx][v] = loadVec(w + kx * cin * t.wStride + v * kLanes);
#pragma GCC unroll 64
            for (int i = SL; i < R + KW - 1 - SR; ++i) {
                const Vec b = splat(a[i * cin]);
#pragma GCC unroll 32
                for (int kx = 0; kx < KW; ++kx) {
                    const int j = i - kx;
                    if (j < 0 || j >= R) continue;
#pragma GCC unroll 32
                    for (int v = 0; v < V; ++v) acc[j][v] += b * wv[kx][v];
                }
            }
        }
    }
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) {
        const Mask m = v == V - 1 ? t.lastMask : laneMask(kLanes);
        // Whole vectors take plain loads and stores (the same values; a masked store costs
        // several times a plain one with AVX2, and small tiles store often).
        const bool full = v != V - 1 || maskFull(t.lastMask);
        const Vec base = !t.accumulate && t.init ? loadMasked(t.init + v * kLanes, m) : Vec{};
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) {
            float* yp = t.y + j * t.yStep + v * kLanes;
            Vec r = (t.accumulate ? (full ? loadVec(yp) : loadMasked(yp, m)) : base) + acc[j][v];
            if (t.relu) r = r < 0.0f ? Vec{} : r;  // keeps NaN, like the ReLU kernel
            if (full)
                storeVec(yp, r);
            else
                storeMasked(yp, r, m);
        }
    }
}

struct DwArgs {
    const float* x = nullptr;  // padded input + filter-row offset of the tile's first row
    int64_t imgStride = 0, rowStride = 0, pixStride = 0;
    const float* dy = nullptr;  // v-block offset applied
    int64_t oh = 0, ow = 0, oc = 0;
    int64_t q0 = 0, q1 = 0;  // output rows (image*oh + oy)
    float* part = nullptr;   // [rows][partStride] partial sums, v-block offset applied
    int64_t partStride = 0;
    Mask lastMask{};
    bool zeroInit = false;  // start from zero instead of the partial sums in part
};

// part[r, :] += sum over output pixels p in rows [q0, q1) of x[window(p) + r] * dy[p, :].
// Full: every lane of the last vector is a real channel, so dy is read with plain loads (a
// masked load costs an extra arithmetic micro-op per pixel with AVX2); the sums are the same.
template <int RK, int V, bool Full>
void dwKernel(const DwArgs& d) {
    Vec acc[RK][V];
#pragma GCC unroll 32
    for (int r = 0; r < RK; ++r)
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v)
            acc[r][v] = d.zeroInit ? Vec{} : loadVec(d.part + r * d.partStride + v * kLanes);
    // The image and row of output row q advance with q (no 64-bit division per row, which was
    // a sizeable share of a narrow row's time).
    int64_t img = d.q0 / d.oh, oy = d.q0 % d.oh;
    const float* dr = d.dy + d.q0 * d.ow * d.oc;
    for (int64_t q = d.q0; q < d.q1; ++q) {
        const float* xr = d.x + img * d.imgStride + oy * d.rowStride;
        if (++oy == d.oh) {
            oy = 0;
            ++img;
        }
        for (int64_t ox = 0; ox < d.ow; ++ox, xr += d.pixStride, dr += d.oc) {
            Vec dv[V];
#pragma GCC unroll 32
            for (int v = 0; v < V; ++v)
                dv[v] = Full || v != V - 1 ? loadVec(dr + v * kLanes) : loadMasked(dr + v * kLanes, d.lastMask);
#pragma GCC unroll 32
            for (int r = 0; r < RK; ++r) {
                const Vec av = splat(xr[r]);
#pragma GCC unroll 32
                for (int v = 0; v < V; ++v) acc[r][v] += av * dv[v];
            }
        }
    }
#pragma GCC unroll 32
    for (int r = 0; r < RK; ++r)
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v) storeVec(d.part + r * d.partStride + v * kLanes, acc[r][v]);
}

using TileFn = void (*)(const TileArgs&);
using DwFn = void (*)(const DwArgs&);

// Function tables indexed [V-1][R-1]; entries past the per-V limit stay null (never used).
template <int V, int Limit, int H, int T, int... R>
constexpr std::array<TileFn, sizeof...(R)> tileFns(std::integer_sequence<int, R...>) {
    return {(R < Limit ? &tileKernel<(R < Limit ? R + 1 : 1), V, H, T> : nullptr)...};
}
template <int V, int Limit, bool Full, int... R>
constexpr std::array<DwFn, sizeof...(R)> dwFns(std::integer_sequence<int, R...>) {
    return {(R < Limit ? &dwKernel<(R < Limit ? R + 1 : 1), V, Full> : nullptr)...};
}

using TileTable = std::array<std::array<TileFn, kTileMaxR>, kMaxV>;
template <int H, int T, int... V>
constexpr TileTable tileTable(std::integer_sequence<int, V...>) {
    return {tileFns<V + 1, kTileRows[V + 1], H, T>(std::make_integer_sequence<int, kTileMaxR>{})...};
}
using DwTable = std::array<std::array<DwFn, kDwMaxRows>, kMaxV>;
template <bool Full, int... V>
constexpr DwTable dwTable(std::integer_sequence<int, V...>) {
    return {dwFns<V + 1, kDwRows[V + 1], Full>(std::make_integer_sequence<int, kDwMaxRows>{})...};
}
constexpr auto kTileFns = tileTable<0, 0>(std::make_integer_sequence<int, kMaxV>{});
// Tiles at a row's ends that skip padding: [head][tail] ([0][0] is kTileFns).
constexpr std::array<std::array<TileTable, 2>, 2> kTileEdgeFns = {
    {{kTileFns, tileTable<0, 1>(std::make_integer_sequence<int, kMaxV>{})},
     {tileTable<1, 0>(std::make_integer_sequence<int, kMaxV>{}),
      tileTable<1, 1>(std::make_integer_sequence<int, kMaxV>{})}}};
// [last vector full]
constexpr std::array<DwTable, 2> kDwFns = {dwTable<false>(std::make_integer_sequence<int, kMaxV>{}),
                                           dwTable<true>(std::make_integer_sequence<int, kMaxV>{})};

using RowFn = void (*)(const RowArgs&);

template <int KW, int V, int Limit, int SL, int SR, int... R>
constexpr std::array<RowFn, sizeof...(R)> rowFns(std::integer_sequence<int, R...>) {
    return {(R < Limit ? &rowKernel<(R < Limit ? R + 1 : 1), V, KW, SL, SR> : nullptr)...};
}
template <int KW, int W, int SL, int SR, int... V>
constexpr std::array<std::array<RowFn, kRowMaxR>, kMaxV> rowTable(std::integer_sequence<int, V...>) {
    return {rowFns<KW, V + 1, kRowRows[W][V + 1], SL, SR>(std::make_integer_sequence<int, kRowMaxR>{})...};
}
using RowTable = std::array<std::array<RowFn, kRowMaxR>, kMaxV>;
constexpr std::array<RowTable, 2> kRowFns = {rowTable<3, 0, 0, 0>(std::make_integer_sequence<int, kMaxV>{}),
                                             rowTable<5, 1, 0, 0>(std::make_integer_sequence<int, kMaxV>{})};
// 3-wide rows whose tile skips one padding pixel: [left][right] (entry [0][0] is kRowFns[0]).
// These let 3x3 "same" convolutions read unpadded rows (see rowEdges).
constexpr std::array<std::array<RowTable, 2>, 2> kRowEdgeFns = {
    {{rowTable<3, 0, 0, 0>(std::make_integer_sequence<int, kMaxV>{}),
      rowTable<3, 0, 0, 1>(std::make_integer_sequence<int, kMaxV>{})},
     {rowTable<3, 0, 1, 0>(std::make_integer_sequence<int, kMaxV>{}),
      rowTable<3, 0, 1, 1>(std::make_integer_sequence<int, kMaxV>{})}}};

// Index into the reuse tables for a kernel width, or -1 when there is no reuse kernel.
int reuseIndex(int64_t kw) {
    return kw == 3 ? 0 : kw == 5 ? 1 : -1;
}

int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// Scratch floats (on the stack) for one tile of dcol rows in directBackwardDataScatter.
constexpr int64_t kScatterTileFloats = 4096;

// The scatter form of backward-data pays off when x has few channels: the gather above would
// leave most lanes of its c-wide vectors idle.
bool useScatterBackwardData(const Conv2DGeom& g) {
    return g.c < kLanes && roundUpLanes(g.kh * g.kw * g.c) * kTileMaxR <= kScatterTileFloats;
}

// Workspace regions of the direct path, in floats from the workspace start.
struct DirectLayout {
    int64_t K = 0;                // filter rows kh*kw*c
    int64_t ocPad = 0, cPad = 0;  // channel counts rounded up to whole vectors
    bool padX = false;            // forward / filter gradient read a zero-padded copy of x
    bool ring = false;            // the forward pass pads rows on the fly (no padded copy)
    bool fwdDirect = false;       // the forward pass reads x itself, its end tiles skip padding
    int skipL = 0, skipR = 0;     // padding columns its first / last row-kernel tile skips
    int64_t headK = 0, tailK = 0; // floats its first / last plain tile skips (TileArgs)
    bool dyDirect = false;        // backward-data reads dy itself, likewise
    int dySkipL = 0, dySkipR = 0;
    int64_t ringRows = 0;         // rows in its ring: the span of one output row's taps
    bool dyRing = false;          // backward-data pads dy rows on the fly (no padded copy)
    int64_t dyRingRows = 0;       // rows in its ring: the span of dy rows one input row reads
    bool band = false;            // the filter gradient pads bands of rows on the fly
    int64_t bandOutRows = 0;      // output rows per band (all when !band)
    int64_t hp = 0, wp = 0;       // rows and columns of that copy (x's own when !padX)
    int64_t ey = 0, ex = 0;       // rows / columns of zeros before dy in its padded copy
    int64_t hq = 0, wq = 0;       // rows and columns of the padded dy
    int64_t chunks = 0;           // fixed reduction chunks of the filter gradient
    size_t wOff = 0, wtOff = 0, xOff = 0, dyOff = 0, partOff = 0, total = 0;
};

// Calls fn(v0, V, lastMask) for blocks of at most kMaxV vectors covering `channels` lanes.
template <typename Fn>
void forVectorBlocks(int64_t channels, Fn&& fn) {
    const int64_t vectors = ceilDiv(channels, kLanes);
    for (int64_t v0 = 0; v0 < vectors; v0 += kMaxV) {
        const int V = static_cast<int>(std::min<int64_t>(kMaxV, vectors - v0));
        fn(v0, V, laneMask(channels - (v0 + V - 1) * kLanes));
    }
}

// True when every vector block of `channels` outputs runs the 3-wide row kernel, so that rows
// whose ends fall in the padding can be read unpadded by the edge-skipping variants.
bool rowEdgesCover(int64_t channels, int64_t skipL, int64_t skipR) {
    if (skipL < 0 || skipL > 1 || skipR < 0 || skipR > 1) return false;
    bool all = true;
    forVectorBlocks(channels, [&](int64_t, int V, Mask) { all = all && kRowRows[0][V] > 0; });
    return all;
}

DirectLayout directLayout(const Conv2DGeom& g) {
    DirectLayout L;
    L.K = g.kh * g.kw * g.c;
    L.ocPad = roundUpLanes(g.oc);
    L.cPad = roundUpLanes(g.c);
    // The forward pass reads padded rows [0, (oh-1)*strideH + (kh-1)*dilationH] (padded row =
    // input row + padTop), and likewise columns.
    const int64_t needH = (g.oh - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1;
    const int64_t needW = (g.ow - 1) * g.strideW + (g.kw - 1) * g.dilationW + 1;
    L.padX = g.padTop != 0 || g.padLeft != 0 || needH > g.h || needW > g.w;
    L.hp = L.padX ? needH : g.h;
    L.wp = L.padX ? needW : g.w;
    L.ringRows = (g.kh - 1) * g.dilationH + 1;
    L.ring = L.padX && L.ringRows <= kMaxRingRows && L.ringRows * L.wp * g.c <= kRingFloats;
    // The forward pass reads x in place (no ring, no copy; rows above and below are skipped as
    // taps) when every tile at a row's ends can skip its padding columns: 3-wide unit-stride row
    // kernels skip one column on either side, plain tiles skip the first pixel's leading and the
    // last pixel's trailing columns as long as no other pixel reaches into the padding.
    const bool unitRows = g.kw == 3 && g.strideW == 1 && g.dilationW == 1;
    if (L.padX && g.dilationW == 1) {
        const int rowReuse = g.strideW == 1 ? reuseIndex(g.kw) : -1;
        const int64_t excessR = std::max<int64_t>(0, (g.ow - 1) * g.strideW - g.padLeft + g.kw - g.w);
        const bool innerClear =
            g.padLeft <= g.strideW && (g.ow < 2 || (g.ow - 2) * g.strideW - g.padLeft + g.kw <= g.w);
        const bool tileOk = innerClear && g.padLeft < g.kw && excessR < g.kw && (g.ow > 1 || g.padLeft + excessR < g.kw);
        bool ok = true;
        forVectorBlocks(g.oc, [&](int64_t, int V, Mask) {
            if (rowReuse >= 0 && kRowRows[rowReuse][V] > 0)
                ok = ok && rowReuse == 0 && g.padLeft <= 1 && excessR <= 1;
            else
                ok = ok && tileOk;
        });
        L.fwdDirect = ok;
        L.skipL = static_cast<int>(g.padLeft);
        L.skipR = static_cast<int>(excessR);
        L.headK = g.padLeft * g.c;
        L.tailK = excessR * g.c;
    }
    // Output rows whose input band fits in kRingFloats: (rows-1)*strideH + ringRows input rows.
    const int64_t bandInRows = kRingFloats / (L.wp * g.c);
    L.bandOutRows = bandInRows >= L.ringRows ? (bandInRows - L.ringRows) / g.strideH + 1 : 0;
    L.band = L.padX && L.bandOutRows > 0;
    if (!L.band) L.bandOutRows = g.n * g.oh;
    // Backward-data reads dy row (iy + padTop - ky*dilationH) / strideH for every input row iy;
    // shift by ey rows so that the smallest is 0, and keep the largest inside.
    L.ey = ceilDiv(std::max<int64_t>(0, (g.kh - 1) * g.dilationH - g.padTop), g.strideH);
    L.ex = ceilDiv(std::max<int64_t>(0, (g.kw - 1) * g.dilationW - g.padLeft), g.strideW);
    L.hq = L.ey + std::max(g.oh, (g.h - 1 + g.padTop) / g.strideH + 1);
    L.wq = L.ex + std::max(g.ow, (g.w - 1 + g.padLeft) / g.strideW + 1);
    L.dyRingRows = (g.kh - 1) * g.dilationH / g.strideH + 1;
    L.dyRing = L.dyRingRows <= kMaxRingRows && L.dyRingRows * L.wq * g.oc <= kRingFloats;
    if (unitRows) {
        // Input pixel ix reads dy columns ix + padLeft - 2 .. ix + padLeft.
        const int64_t sl = std::max<int64_t>(0, 2 - g.padLeft), sr = std::max<int64_t>(0, (g.w - 1) + g.padLeft - (g.ow - 1));
        L.dyDirect = rowEdgesCover(g.c, sl, sr);
        L.dySkipL = static_cast<int>(sl);
        L.dySkipR = static_cast<int>(sr);
        if (L.dyDirect) L.dyRing = false;
    } else if (L.wq == L.ex + g.ow && (L.ex == 0 || (L.ex == 1 && !(g.strideW == 1 && g.dilationW == 1)))) {
        // No column of dy needs padding on the right, and at most one on the left (1x1 kernels,
        // stride-2 3x3 "same" layers): dy is read in place; rows outside dy are skipped as taps,
        // and a tap that would read the left padding column skips its first pixel there.
        L.dyDirect = true;
        L.dyRing = false;
    }
    L.chunks = std::min(kDwChunks, g.n * g.oh);
    size_t at = 0;
    auto region = [&](int64_t floats) {
        const size_t off = at;
        at += static_cast<size_t>(roundUpLanes(floats));
        return off;
    };
    L.wOff = region(L.K * L.ocPad);
    L.wtOff = region(g.kh * g.kw * g.oc * L.cPad);
    L.xOff = region(L.padX && (!L.band || (!L.ring && !L.fwdDirect)) ? g.n * L.hp * L.wp * g.c : 0);
    L.dyOff = region(L.dyRing || L.dyDirect || useScatterBackwardData(g) ? 0 : g.n * L.hq * L.wq * g.oc);
    L.partOff = region(L.chunks * (L.K + 1) * L.ocPad);
    L.total = at;
    return L;
}

// dst [n, hp, wp, c] = src [n, h, w, c] shifted by (top, left), zeros elsewhere; rows and
// columns of src beyond hp / wp are dropped.
void padImages(const float* src, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top, int64_t left,
               int64_t hp, int64_t wp, float* dst, ThreadPool& pool) {
    const int64_t copyW = std::max<int64_t>(0, std::min(w, wp - left));
    pool.parallelFor(n * hp, 8, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t b = p / hp, iy = p % hp - top;
            float* d = dst + p * wp * c;
            if (iy < 0 || iy >= h) {
                std::memset(d, 0, sizeof(float) * static_cast<size_t>(wp * c));
                continue;
            }
            std::memset(d, 0, sizeof(float) * static_cast<size_t>(left * c));
            std::memcpy(d + left * c, src + (b * h + iy) * w * c,
                        sizeof(float) * static_cast<size_t>(copyW * c));
            std::memset(d + (left + copyW) * c, 0,
                        sizeof(float) * static_cast<size_t>((wp - left - copyW) * c));
        }
    });
}

// Splits `count` pixels into tiles of at most maxR, as even as possible.
int64_t tileSize(int64_t count, int64_t maxR) {
    return ceilDiv(count, ceilDiv(count, maxR));
}

// Tiles of one output row: fn(R-limit table choice) — row reuse for unit-stride 3/5-wide
// kernels, else the plain tile kernel. `a` is the input of output pixel 0 before tap offsets.
// direct: `a` is the unpadded row (L.fwdDirect), whose end tiles skip the padding.
void forwardRow(const Conv2DGeom& g, const DirectLayout& L, int rowReuse, const float* a,
                const int64_t* tapOff, const float* const* tapW, int64_t taps, int64_t kin, const float* bias,
                float* yrow, bool relu, bool direct = false) {
    const int skipL = direct ? L.skipL : 0, skipR = direct ? L.skipR : 0;
    const bool head = direct && L.headK > 0, tail = direct && L.tailK > 0;
    forVectorBlocks(g.oc, [&](int64_t v0, int V, Mask lastMask) {
        if (rowReuse >= 0 && kRowRows[rowReuse][V] > 0) {
            const int64_t R = tileSize(g.ow, kRowRows[rowReuse][V]);
            RowArgs ra;
            ra.cin = g.c;
            ra.tapOff = tapOff;
            ra.tapW = tapW;
            ra.taps = taps;
            ra.wStride = L.ocPad;
            ra.wCol = v0 * kLanes;
            ra.yStep = g.oc;
            ra.lastMask = lastMask;
            ra.init = bias ? bias + v0 * kLanes : nullptr;
            ra.relu = relu;
            for (int64_t ox = 0; ox < g.ow; ox += R) {
                const int64_t r = std::min(R, g.ow - ox);
                ra.a = a + ox * g.c;
                ra.y = yrow + ox * g.oc + v0 * kLanes;
                const RowTable& table =
                    rowReuse == 0 ? kRowEdgeFns[ox == 0 ? skipL : 0][ox + r == g.ow ? skipR : 0] : kRowFns[rowReuse];
                table[V - 1][r - 1](ra);
            }
            return;
        }
        const int64_t R = tileSize(g.ow, kTileRows[V]);
        TileArgs ta;
        ta.aStep = g.strideW * g.c;
        ta.tapOff = tapOff;
        ta.tapW = tapW;
        ta.taps = taps;
        ta.kin = kin;
        ta.wStride = L.ocPad;
        ta.wCol = v0 * kLanes;
        ta.yStep = g.oc;
        ta.lastMask = lastMask;
        ta.init = bias ? bias + v0 * kLanes : nullptr;
        ta.relu = relu;
        ta.headK = L.headK;
        ta.tailK = L.tailK;
        for (int64_t ox = 0; ox < g.ow; ox += R) {
            const int64_t r = std::min(R, g.ow - ox);
            ta.a = a + ox * g.strideW * g.c;
            ta.y = yrow + ox * g.oc + v0 * kLanes;
            kTileEdgeFns[head && ox == 0][tail && ox + r == g.ow][V - 1][r - 1](ta);
        }
    });
}

// One zero-padded input row: dst[wp*c] = x row iy of image b shifted right by padLeft.
void padRow(const Conv2DGeom& g, const DirectLayout& L, const float* x, int64_t b, int64_t iy, float* dst) {
    const int64_t copyW = std::max<int64_t>(0, std::min(g.w, L.wp - g.padLeft));
    std::memset(dst, 0, sizeof(float) * static_cast<size_t>(g.padLeft * g.c));
    std::memcpy(dst + g.padLeft * g.c, x + (b * g.h + iy) * g.w * g.c,
                sizeof(float) * static_cast<size_t>(copyW * g.c));
    std::memset(dst + (g.padLeft + copyW) * g.c, 0,
                sizeof(float) * static_cast<size_t>((L.wp - g.padLeft - copyW) * g.c));
}

void directForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                   float* workspace, ThreadPool& pool, bool relu) {
    const DirectLayout L = directLayout(g);
    float* wpk = workspace + L.wOff;
    for (int64_t k = 0; k < L.K; ++k) {
        std::memcpy(wpk + k * L.ocPad, w + k * g.oc, sizeof(float) * static_cast<size_t>(g.oc));
        std::memset(wpk + k * L.ocPad + g.oc, 0, sizeof(float) * static_cast<size_t>(L.ocPad - g.oc));
    }
    const float* xp = x;
    if (L.padX && !L.ring && !L.fwdDirect) {
        padImages(x, g.n, g.h, g.w, g.c, g.padTop, g.padLeft, L.hp, L.wp, workspace + L.xOff, pool);
        xp = workspace + L.xOff;
    }
    // With unit column dilation the kw taps of a kernel row read kw*c consecutive floats, which
    // are also consecutive filter rows: one long tap per kernel row.
    const bool merge = g.dilationW == 1;
    const int64_t kin = merge ? g.kw * g.c : g.c;
    // Unit stride and dilation along x: consecutive output pixels share input pixels.
    const int rowReuse = merge && g.strideW == 1 ? reuseIndex(g.kw) : -1;
    pool.parallelFor(g.n * g.oh, 1, [&](int64_t q0, int64_t q1) {
        int64_t tapOff[kDirectMaxTaps];
        const float* tapW[kDirectMaxTaps];
        if (L.fwdDirect) {
            // Unpadded rows: taps on rows outside the image are skipped, the row tiles skip the
            // padding columns. Pixel 0 of the row reads from column -padLeft.
            for (int64_t q = q0; q < q1; ++q) {
                const int64_t b = q / g.oh, oy = q % g.oh;
                int64_t nt = 0;
                for (int64_t ky = 0; ky < g.kh; ++ky) {
                    const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                    if (iy < 0 || iy >= g.h) continue;
                    tapOff[nt] = (iy * g.w - g.padLeft) * g.c;
                    tapW[nt] = wpk + ky * kin * L.ocPad;
                    ++nt;
                }
                forwardRow(g, L, rowReuse, x + b * g.h * g.w * g.c, tapOff, tapW, nt, kin, bias,
                           y + q * g.ow * g.oc, relu, true);
            }
            return;
        }
        if (!L.ring) {
            int64_t nt = 0;
            for (int64_t ky = 0; ky < g.kh; ++ky)
                for (int64_t kx = 0; kx < (merge ? 1 : g.kw); ++kx, ++nt) {
                    tapOff[nt] = (ky * g.dilationH * L.wp + kx * g.dilationW) * g.c;
                    tapW[nt] = wpk + nt * kin * L.ocPad;
                }
            for (int64_t q = q0; q < q1; ++q) {
                const int64_t b = q / g.oh, oy = q % g.oh;
                const float* xrow = xp + (b * L.hp + oy * g.strideH) * L.wp * g.c;
                forwardRow(g, L, rowReuse, xrow, tapOff, tapW, nt, kin, bias, y + q * g.ow * g.oc, relu);
            }
            return;
        }
        // Padded input rows are built on the fly in a ring of L.ringRows rows (input row iy in
        // slot iy % ringRows); taps on rows outside the image are skipped.
        alignas(64) float ring[kRingFloats];
        int64_t tag[kMaxRingRows];
        for (int64_t i = 0; i < L.ringRows; ++i) tag[i] = -1;
        const int64_t rowFloats = L.wp * g.c;
        for (int64_t q = q0; q < q1; ++q) {
            const int64_t b = q / g.oh, oy = q % g.oh;
            int64_t nt = 0;
            for (int64_t ky = 0; ky < g.kh; ++ky) {
                const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                if (iy < 0 || iy >= g.h) continue;
                const int64_t slot = iy % L.ringRows, key = b * g.h + iy;
                if (tag[slot] != key) {
                    padRow(g, L, x, b, iy, ring + slot * rowFloats);
                    tag[slot] = key;
                }
                for (int64_t kx = 0; kx < (merge ? 1 : g.kw); ++kx, ++nt) {
                    tapOff[nt] = slot * rowFloats + kx * g.dilationW * g.c;
                    tapW[nt] = wpk + (merge ? ky : ky * g.kw + kx) * kin * L.ocPad;
                }
            }
            forwardRow(g, L, rowReuse, ring, tapOff, tapW, nt, kin, bias, y + q * g.ow * g.oc, relu);
        }
    });
}

// dx += the transposed convolution of dy (dx = with `overwrite`), as a gather: input pixel
// (iy, ix) sums, over the taps (ky, kx) that map it onto an output pixel, dy[that pixel] *
// W[ky, kx]^T. Pixels of one input row with the same column phase (ix mod strideW) share their
// taps and read consecutive dy pixels, so they form register tiles; every dx pixel is written by
// exactly one tile call (or zeroed, with `overwrite`, when no tap reaches it).
void directBackwardData(const Conv2DGeom& g, const DirectLayout& L, const float* w, const float* dy,
                        const float* dyp, float* dx, float* workspace, ThreadPool& pool, bool overwrite) {
    constexpr int64_t kNoRow = INT64_MIN;  // offsets may be negative with L.dyDirect
    // wt [kh, kw (reversed), oc, cPad]: with unit stride and dilation along x the kw taps of a
    // kernel row read consecutive dy pixels in reversed kx order.
    float* wt = workspace + L.wtOff;
    for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kr = 0; kr < g.kw; ++kr)
            for (int64_t o = 0; o < g.oc; ++o) {
                float* d = wt + ((ky * g.kw + kr) * g.oc + o) * L.cPad;
                const float* s = w + (ky * g.kw + (g.kw - 1 - kr)) * g.c * g.oc + o;
                for (int64_t ci = 0; ci < g.c; ++ci) d[ci] = s[ci * g.oc];
                for (int64_t ci = g.c; ci < L.cPad; ++ci) d[ci] = 0.0f;
            }
    const bool merge = g.strideW == 1 && g.dilationW == 1;
    const int64_t kin = merge ? g.kw * g.oc : g.oc;
    const int rowReuse = merge ? reuseIndex(g.kw) : -1;
    pool.parallelFor(g.n * g.h, 1, [&](int64_t p0, int64_t p1) {
        int64_t tapOff[kDirectMaxTaps];
        const float* tapW[kDirectMaxTaps];
        // With L.dyRing, padded dy rows are built on the fly in a ring (dy row oy in slot
        // oy % dyRingRows) and taps on rows outside dy are skipped; otherwise dyp is the padded
        // copy of all of dy.
        alignas(64) float ring[kRingFloats];
        int64_t tag[kMaxRingRows];
        for (int64_t i = 0; i < L.dyRingRows; ++i) tag[i] = -1;
        const int64_t rowFloats = L.wq * g.oc;
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t b = p / g.h, iy = p % g.h;
            const float* dimg = L.dyDirect ? dy + b * g.oh * g.ow * g.oc
                                : L.dyRing ? ring
                                           : dyp + b * L.hq * L.wq * g.oc;
            // Offset of padded dy row qy from dimg, or kNoRow when the row is all zeros. With
            // L.dyDirect the offset is that of the unpadded row shifted left by ex pixels, so that
            // the column arithmetic below is the same for every layout.
            auto rowOffset = [&](int64_t qy) -> int64_t {
                if (L.dyDirect) {
                    const int64_t oy = qy - L.ey;
                    return oy < 0 || oy >= g.oh ? kNoRow : (oy * g.ow - L.ex) * g.oc;
                }
                if (!L.dyRing) return qy * rowFloats;
                const int64_t oy = qy - L.ey;
                if (oy < 0 || oy >= g.oh) return kNoRow;
                const int64_t slot = oy % L.dyRingRows, key = b * g.oh + oy;
                if (tag[slot] != key) {
                    float* d = ring + slot * rowFloats;
                    std::memset(d, 0, sizeof(float) * static_cast<size_t>(L.ex * g.oc));
                    std::memcpy(d + L.ex * g.oc, dy + key * g.ow * g.oc,
                                sizeof(float) * static_cast<size_t>(g.ow * g.oc));
                    std::memset(d + (L.ex + g.ow) * g.oc, 0,
                                sizeof(float) * static_cast<size_t>((L.wq - L.ex - g.ow) * g.oc));
                    tag[slot] = key;
                }
                return slot * rowFloats;
            };
            for (int64_t px = 0; px < std::min(g.strideW, g.w); ++px) {
                const int64_t count = ceilDiv(g.w - px, g.strideW);
                float* drow = dx + (p * g.w + px) * g.c;
                // The taps (at most kh*kw <= kDirectMaxTaps) that map this phase onto dy pixels.
                int64_t nt = 0;
                // With L.dyDirect and a padding column on the left (L.ex == 1), a tap whose dy
                // column for pixel 0 is that column skips pixel 0 (all kin terms are zeros).
                int64_t tapHead[kDirectMaxTaps];
                bool headSkip = false;
                auto run = [&] {
                    if (nt == 0) {  // no output pixel reads these input pixels
                        if (overwrite)
                            for (int64_t j = 0; j < count; ++j)
                                std::memset(drow + j * g.strideW * g.c, 0, sizeof(float) * static_cast<size_t>(g.c));
                        return;
                    }
                    forVectorBlocks(g.c, [&](int64_t v0, int V, Mask lastMask) {
                        if (rowReuse >= 0 && kRowRows[rowReuse][V] > 0) {
                            const int64_t R = tileSize(count, kRowRows[rowReuse][V]);
                            RowArgs ra;
                            ra.cin = g.oc;
                            ra.tapOff = tapOff;
                            ra.tapW = tapW;
                            ra.taps = nt;
                            ra.wStride = L.cPad;
                            ra.wCol = v0 * kLanes;
                            ra.yStep = g.c;
                            ra.lastMask = lastMask;
                            ra.accumulate = !overwrite;
                            const int sl = L.dyDirect ? L.dySkipL : 0, sr = L.dyDirect ? L.dySkipR : 0;
                            for (int64_t j = 0; j < count; j += R) {
                                const int64_t r = std::min(R, count - j);
                                ra.a = dimg + j * g.oc;
                                ra.y = drow + j * g.c + v0 * kLanes;
                                const RowTable& table = rowReuse == 0
                                                            ? kRowEdgeFns[j == 0 ? sl : 0][j + r == count ? sr : 0]
                                                            : kRowFns[rowReuse];
                                table[V - 1][r - 1](ra);
                            }
                            return;
                        }
                        const int64_t R = tileSize(count, kTileRows[V]);
                        TileArgs ta;
                        ta.tapHeadK = tapHead;
                        ta.aStep = g.oc;
                        ta.tapOff = tapOff;
                        ta.tapW = tapW;
                        ta.taps = nt;
                        ta.kin = kin;
                        ta.wStride = L.cPad;
                        ta.wCol = v0 * kLanes;
                        ta.yStep = g.strideW * g.c;
                        ta.lastMask = lastMask;
                        ta.accumulate = !overwrite;
                        for (int64_t j = 0; j < count; j += R) {
                            const int64_t r = std::min(R, count - j);
                            ta.a = dimg + j * g.oc;
                            ta.y = drow + j * g.strideW * g.c + v0 * kLanes;
                            kTileEdgeFns[j == 0 && headSkip][0][V - 1][r - 1](ta);
                        }
                    });
                };
                auto add = [&](int64_t off, const float* wp, int64_t head = 0) {
                    tapOff[nt] = off;
                    tapW[nt] = wp;
                    tapHead[nt] = head;
                    headSkip = headSkip || head > 0;
                    ++nt;
                };
                for (int64_t ky = 0; ky < g.kh; ++ky) {
                    // Non-negative by the choice of ey / ex.
                    const int64_t numY = iy + g.padTop - ky * g.dilationH + L.ey * g.strideH;
                    if (numY % g.strideH != 0) continue;
                    const int64_t rowOff = rowOffset(numY / g.strideH);
                    if (rowOff == kNoRow) continue;
                    if (merge) {
                        add(rowOff + (px + g.padLeft - (g.kw - 1) + L.ex) * g.oc,
                            wt + ky * g.kw * g.oc * L.cPad);
                        continue;
                    }
                    for (int64_t kx = 0; kx < g.kw; ++kx) {
                        const int64_t numX = px + g.padLeft - kx * g.dilationW + L.ex * g.strideW;
                        if (numX % g.strideW != 0) continue;
                        add(rowOff + numX / g.strideW * g.oc, wt + (ky * g.kw + (g.kw - 1 - kx)) * g.oc * L.cPad,
                            L.dyDirect && numX / g.strideW < L.ex ? kin : 0);
                    }
                }
                run();
            }
        }
    });
}

// d[0, n) += s[0, n).
void addRun(float* d, const float* s, int64_t n) {
    for (int64_t i = 0; i < n; i += kLanes) {
        const Mask m = laneMask(n - i);
        storeMasked(d + i, loadMasked(d + i, m) + loadMasked(s + i, m), m);
    }
}

// dx += col2im(dy W^T) for few input channels: a tile of output pixels gets its dcol rows
// (kh*kw*c columns, every lane busy) from the register-tile kernel, then each row is added into
// the input pixels it came from. Tasks own whole images, so the scatter never races and every dx
// element receives its terms in output-pixel order whatever the thread count.
void directBackwardDataScatter(const Conv2DGeom& g, const DirectLayout& L, const float* w, const float* dy,
                               float* dx, float* workspace, ThreadPool& pool) {
    const int64_t K = L.K, kPad = roundUpLanes(K), pixels = g.oh * g.ow;
    float* wT = workspace + L.wtOff;  // [oc][kPad], zero past K
    for (int64_t o = 0; o < g.oc; ++o) {
        for (int64_t k = 0; k < K; ++k) wT[o * kPad + k] = w[k * g.oc + o];
        for (int64_t k = K; k < kPad; ++k) wT[o * kPad + k] = 0.0f;
    }
    const int64_t tilePixels = std::min(pixels, kScatterTileFloats / kPad);
    const bool runs = g.dilationW == 1;  // the kw taps of a kernel row hit consecutive pixels
    pool.parallelFor(g.n, 1, [&](int64_t b0, int64_t b1) {
        alignas(64) float tile[kScatterTileFloats];
        const int64_t zero = 0;
        const float* tapW = wT;
        for (int64_t b = b0; b < b1; ++b) {
            float* dimg = dx + b * g.h * g.w * g.c;
            for (int64_t p0 = 0; p0 < pixels; p0 += tilePixels) {
                const int64_t t = std::min(tilePixels, pixels - p0);
                forVectorBlocks(kPad, [&](int64_t v0, int V, Mask lastMask) {
                    const int64_t R = tileSize(t, kTileRows[V]);
                    TileArgs ta;
                    ta.aStep = g.oc;
                    ta.tapOff = &zero;
                    ta.tapW = &tapW;
                    ta.taps = 1;
                    ta.kin = g.oc;
                    ta.wStride = kPad;
                    ta.wCol = v0 * kLanes;
                    ta.yStep = kPad;
                    ta.lastMask = lastMask;
                    for (int64_t j = 0; j < t; j += R) {
                        const int64_t r = std::min(R, t - j);
                        ta.a = dy + (b * pixels + p0 + j) * g.oc;
                        ta.y = tile + j * kPad + v0 * kLanes;
                        kTileFns[V - 1][r - 1](ta);
                    }
                });
                for (int64_t i = 0; i < t; ++i) {
                    const int64_t oy = (p0 + i) / g.ow, ox = (p0 + i) % g.ow;
                    const float* row = tile + i * kPad;
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
                        if (iy < 0 || iy >= g.h) continue;
                        const int64_t ix0 = ox * g.strideW - g.padLeft;
                        float* drow = dimg + iy * g.w * g.c;
                        const float* srow = row + ky * g.kw * g.c;
                        if (runs) {
                            const int64_t kx0 = std::max<int64_t>(0, -ix0), kx1 = std::min(g.kw, g.w - ix0);
                            if (kx0 < kx1)
                                addRun(drow + (ix0 + kx0) * g.c, srow + kx0 * g.c, (kx1 - kx0) * g.c);
                            continue;
                        }
                        for (int64_t kx = 0; kx < g.kw; ++kx) {
                            const int64_t ix = ix0 + kx * g.dilationW;
                            if (ix >= 0 && ix < g.w) addRun(drow + ix * g.c, srow + kx * g.c, g.c);
                        }
                    }
                }
            }
        }
    });
}

// out[0, oc) (padded to whole vectors) = sum of dy rows [p0, p1), in row order.
void biasChunk(const float* dy, int64_t p0, int64_t p1, int64_t oc, float* out) {
    forVectorBlocks(oc, [&](int64_t v0, int V, Mask lastMask) {
        Vec acc[kMaxV] = {};
        const float* d = dy + p0 * oc + v0 * kLanes;
        for (int64_t p = p0; p < p1; ++p, d += oc) {
            for (int v = 0; v < V - 1; ++v) acc[v] += loadVec(d + v * kLanes);
            acc[V - 1] += loadMasked(d + (V - 1) * kLanes, lastMask);
        }
        for (int v = 0; v < V; ++v) storeVec(out + (v0 + v) * kLanes, acc[v]);
    });
}

// dw += x^T dy and db += sum dy via fixed-chunk partial sums (chunks of output rows, each summed
// in order), then added in chunk order: independent of the thread count.
void directBackwardFilter(const Conv2DGeom& g, const DirectLayout& L, const float* xp, const float* dy,
                          float* dw, float* db, float* workspace, ThreadPool& pool) {
    float* parts = workspace + L.partOff;
    const int64_t rows = g.n * g.oh, partFloats = (L.K + 1) * L.ocPad;
    const bool merge = g.dilationW == 1;
    const int64_t runs = merge ? g.kh : g.kh * g.kw, runLen = merge ? g.kw * g.c : g.c;
    const int64_t blockRows = std::min(std::max<int64_t>(1, kDwBlockPixels / g.ow), L.bandOutRows);
    const int64_t subRows = std::max<int64_t>(1, kDwPassPixels / g.ow);
    pool.parallelFor(L.chunks, 1, [&](int64_t k0, int64_t k1) {
        // With L.band, each block of output rows (within one image) reads a padded band of input
        // rows built here instead of a padded copy of all of x.
        alignas(64) float band[kRingFloats];
        for (int64_t k = k0; k < k1; ++k) {
            const int64_t q0 = rows * k / L.chunks, q1 = rows * (k + 1) / L.chunks;
            float* part = parts + k * partFloats;
            if (db) biasChunk(dy, q0 * g.ow, q1 * g.ow, g.oc, part + L.K * L.ocPad);
            if (!dw) continue;
            for (int64_t qs = q0, qe = 0; qs < q1; qs = qe) {
                qe = std::min(q1, qs + blockRows);
                const float* src = xp;
                int64_t r0 = qs, r1 = qe, oh = g.oh;
                if (L.band) {
                    // Rows of one image only; the band starts at the block's first padded row.
                    const int64_t b = qs / g.oh, oy0 = qs % g.oh;
                    qe = std::min(qe, (b + 1) * g.oh);
                    const int64_t rowsIn = (qe - qs - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1;
                    for (int64_t i = 0; i < rowsIn; ++i) {
                        const int64_t iy = oy0 * g.strideH - g.padTop + i;
                        float* d = band + i * L.wp * g.c;
                        if (iy < 0 || iy >= g.h)
                            std::memset(d, 0, sizeof(float) * static_cast<size_t>(L.wp * g.c));
                        else
                            padRow(g, L, xp, b, iy, d);
                    }
                    src = band;
                    r0 = 0;
                    r1 = qe - qs;
                    oh = r1;  // rows relative to the band: q % oh = q, q / oh = 0
                }
                const float* dyBlock = L.band ? dy + qs * g.ow * g.oc : dy;
                forVectorBlocks(g.oc, [&](int64_t v0, int V, Mask lastMask) {
                    const bool full = (v0 + V) * kLanes <= g.oc;
                    DwArgs da;
                    da.imgStride = L.hp * L.wp * g.c;
                    da.rowStride = g.strideH * L.wp * g.c;
                    da.pixStride = g.strideW * g.c;
                    da.dy = dyBlock + v0 * kLanes;
                    da.oh = oh;
                    da.ow = g.ow;
                    da.oc = g.oc;
                    da.partStride = L.ocPad;
                    da.lastMask = lastMask;
                    const int64_t maxRows = kDwRows[V];
                    // Sweeps of rows as even as possible (9 rows of 28 pixels: 3, 3, 3, not 4, 4, 1).
                    const int64_t sweeps = ceilDiv(r1 - r0, subRows);
                    for (int64_t sw = 0, s0 = r0, s1 = 0; sw < sweeps; ++sw, s0 = s1) {
                        s1 = s0 + (r1 - r0) / sweeps + (sw < (r1 - r0) % sweeps ? 1 : 0);
                        da.q0 = s0;
                        da.q1 = s1;
                        da.zeroInit = qs == q0 && s0 == r0;  // the first pass writes every partial row
                        for (int64_t run = 0; run < runs; ++run) {
                            const int64_t ky = merge ? run : run / g.kw, kx = merge ? 0 : run % g.kw;
                            const int64_t runOff = (ky * g.dilationH * L.wp + kx * g.dilationW) * g.c;
                            for (int64_t e0 = 0; e0 < runLen; e0 += maxRows) {
                                const int64_t rk = std::min(maxRows, runLen - e0);
                                da.x = src + runOff + e0;
                                da.part = part + (run * runLen + e0) * L.ocPad + v0 * kLanes;
                                kDwFns[full][V - 1][rk - 1](da);
                            }
                        }
                    }
                });
            }
        }
    });
    const int64_t outRows = (dw ? L.K : 0) + (db ? 1 : 0);
    pool.parallelFor(outRows, 16, [&](int64_t e0, int64_t e1) {
        for (int64_t e = e0; e < e1; ++e) {
            const int64_t row = dw ? e : L.K;  // row K holds the bias sums
            float* out = row < L.K ? dw + row * g.oc : db;
            // Whole vectors of output channels (the partial rows are padded to ocPad); each
            // lane sums its chunks in chunk order from zero, then adds the total to out.
            const float* src = parts + row * L.ocPad;
            for (int64_t o = 0; o < g.oc; o += kLanes) {
                const Mask m = laneMask(g.oc - o);
                Vec s{};
                for (int64_t k = 0; k < L.chunks; ++k) s += loadVec(src + k * partFloats + o);
                storeMasked(out + o, loadMasked(out + o, m) + s, m);
            }
        }
    });
}

void directBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx,
                    float* dw, float* db, float* workspace, ThreadPool& pool, bool overwriteDx) {
    const DirectLayout L = directLayout(g);
    if (dx && useScatterBackwardData(g)) {
        // The scatter adds each pixel's terms in turn, so an overwrite starts from zero.
        if (overwriteDx)
            pool.parallelFor(g.n, 1, [&](int64_t b0, int64_t b1) {
                std::memset(dx + b0 * g.h * g.w * g.c, 0, sizeof(float) * static_cast<size_t>((b1 - b0) * g.h * g.w * g.c));
            });
        directBackwardDataScatter(g, L, w, dy, dx, workspace, pool);
    } else if (dx) {
        float* dyp = workspace + L.dyOff;
        if (!L.dyRing && !L.dyDirect) padImages(dy, g.n, g.oh, g.ow, g.oc, L.ey, L.ex, L.hq, L.wq, dyp, pool);
        directBackwardData(g, L, w, dy, dyp, dx, workspace, pool, overwriteDx);
    }
    if (dw || db) {
        const float* xp = x;
        if (dw && L.padX && !L.band) {
            padImages(x, g.n, g.h, g.w, g.c, g.padTop, g.padLeft, L.hp, L.wp, workspace + L.xOff, pool);
            xp = workspace + L.xOff;
        }
        directBackwardFilter(g, L, xp, dy, dw, db, workspace, pool);
    }
}

// ---- GEMM (row-major) ------------------------------------------------------------------------
//
// With AVX-512 these tiles run every product gemm.cpp does not give to plain loops. With AVX2,
// Eigen's packed product (gemm.cpp, compiled for the baseline) measured faster on the reference
// models' training shapes, and these tiles only take products with few rows (see gemm.cpp),
// where Eigen repacks all of op(B) for a handful of rows of A.
//
// C[i, j] (+)= sum_k op(A)[i, k] op(B)[k, j] on register tiles of R rows x V vectors: each k
// broadcasts R values of op(A) and loads V vectors of one op(B) row. op(A) is read in place with
// any row and k strides (so A^T needs no copy); op(B) rows must be contiguous and padded to whole
// vectors, so B is copied into a panel when it is transposed or N is not a multiple of the vector
// width. Every C element sums its K products in order in one accumulator: the result does not
// depend on how the caller splits C between threads.

struct GemmTileArgs {
    const float* a = nullptr;  // op(A)[row 0, k 0]
    int64_t aRow = 0, aCol = 0;  // floats between rows / between k of op(A)
    const float* b = nullptr;    // op(B)[k 0, first column of the block]
    int64_t bStride = 0;         // floats between op(B) rows
    int64_t K = 0;
    float* c = nullptr;  // C[row 0, first column of the block]
    int64_t ldc = 0;
    Mask lastMask{};
    float alpha = 1.0f, beta = 0.0f;  // C = alpha * sum + beta * C; C is not read when beta is 0
};

template <int R, int V>
void gemmTile(const GemmTileArgs& t) {
    Vec acc[R][V];
#pragma GCC unroll 32
    for (int j = 0; j < R; ++j)
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v) acc[j][v] = Vec{};
    const float* a = t.a;
    const float* b = t.b;
    for (int64_t k = 0; k < t.K; ++k, a += t.aCol, b += t.bStride) {
        Vec bv[V];
#pragma GCC unroll 32
        for (int v = 0; v < V; ++v) bv[v] = loadVec(b + v * kLanes);
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) {
            const Vec av = splat(a[j * t.aRow]);
#pragma GCC unroll 32
            for (int v = 0; v < V; ++v) acc[j][v] += av * bv[v];
        }
    }
    const Vec alpha = splat(t.alpha), beta = splat(t.beta);
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) {
        const Mask m = v == V - 1 ? t.lastMask : laneMask(kLanes);
#pragma GCC unroll 32
        for (int j = 0; j < R; ++j) {
            float* cp = t.c + j * t.ldc + v * kLanes;
            Vec r = t.alpha == 1.0f ? acc[j][v] : acc[j][v] * alpha;
            if (t.beta == 1.0f)
                r += loadMasked(cp, m);
            else if (t.beta != 0.0f)
                r += loadMasked(cp, m) * beta;
            storeMasked(cp, r, m);
        }
    }
}

using GemmFn = void (*)(const GemmTileArgs&);
template <int V, int Limit, int... R>
constexpr std::array<GemmFn, sizeof...(R)> gemmFns(std::integer_sequence<int, R...>) {
    return {(R < Limit ? &gemmTile<(R < Limit ? R + 1 : 1), V> : nullptr)...};
}
template <int... V>
constexpr std::array<std::array<GemmFn, kTileMaxR>, kMaxV> gemmTable(std::integer_sequence<int, V...>) {
    return {gemmFns<V + 1, kTileRows[V + 1]>(std::make_integer_sequence<int, kTileMaxR>{})...};
}
constexpr auto kGemmFns = gemmTable(std::make_integer_sequence<int, kMaxV>{});

// The op(B) panel of the calling thread. It only grows, so a repeated product allocates nothing.
struct PanelBuffer {
    float* data = nullptr;
    size_t capacity = 0;
    PanelBuffer() = default;
    PanelBuffer(const PanelBuffer&) = delete;
    PanelBuffer& operator=(const PanelBuffer&) = delete;
    ~PanelBuffer() { alignedFree(data); }
    float* reserve(size_t floats) {
        if (floats > capacity) {
            alignedFree(data);
            data = nullptr;
            capacity = 0;
            data = static_cast<float*>(alignedAlloc(floats * sizeof(float)));
            capacity = floats;
        }
        return data;
    }
};
thread_local PanelBuffer t_panel;

// Products per pass over a C tile (op(B) slice of kGemmKc rows) and rows of C per block.
constexpr int64_t kGemmKc = 256;
constexpr int64_t kGemmMc = 192;
// Vectors of C columns per GEMM tile: 6 x 4 tiles with AVX-512 (24 of 32 registers), 4 x 3 with
// AVX2 (12 accumulators, 3 op(B) vectors and the broadcast: all 16 registers).
#if defined(KILN_ISA_AVX512)
constexpr int kGemmV = 4;
#else
constexpr int kGemmV = 3;
#endif
static_assert(kGemmV <= kMaxV);

}  // namespace

size_t directWorkspaceFloats(const Conv2DGeom& g) {
    return directLayout(g).total;
}

void directConvForward(const Conv2DGeom& g, const float* x, const float* w, const float* bias, float* y,
                       float* workspace, ThreadPool& pool, bool relu) {
    directForward(g, x, w, bias, y, workspace, pool, relu);
}

void directConvBackward(const Conv2DGeom& g, const float* x, const float* w, const float* dy, float* dx,
                        float* dw, float* db, float* workspace, ThreadPool& pool, bool overwriteDx) {
    directBackward(g, x, w, dy, dx, dw, db, workspace, pool, overwriteDx);
}

void tileGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    const int64_t nPad = roundUpLanes(N);
    const float* b = B;
    int64_t bStride = ldb;
    if (transB || nPad != N) {
        // panel [K][nPad]: op(B) rows, zero past N so that full-vector loads stay defined.
        float* panel = t_panel.reserve(static_cast<size_t>(std::max<int64_t>(K, 1) * nPad));
        for (int64_t k = 0; k < K; ++k) {
            float* row = panel + k * nPad;
            if (transB)
                for (int64_t j = 0; j < N; ++j) row[j] = B[j * ldb + k];
            else
                std::memcpy(row, B + k * ldb, sizeof(float) * static_cast<size_t>(N));
            for (int64_t j = N; j < nPad; ++j) row[j] = 0.0f;
        }
        b = panel;
        bStride = nPad;
    }
    const int64_t aRow = transA ? 1 : lda, aCol = transA ? lda : 1;
    GemmTileArgs t;
    t.aRow = aRow;
    t.aCol = aCol;
    t.bStride = bStride;
    t.ldc = ldc;
    t.alpha = alpha;
    // Blocks of kGemmKc products per pass over C (the first pass applies beta, later ones add),
    // and of kGemmMc rows, so that one op(B) slice stays in cache across a block's row tiles.
    for (int64_t k0 = 0; k0 < std::max<int64_t>(K, 1); k0 += kGemmKc) {
        t.K = std::min(kGemmKc, K - k0);
        t.beta = k0 == 0 ? beta : 1.0f;
        for (int64_t m0 = 0; m0 < M; m0 += kGemmMc) {
            const int64_t mb = std::min(kGemmMc, M - m0);
            const int64_t vectors = ceilDiv(N, kLanes);
            for (int64_t v0 = 0; v0 < vectors; v0 += kGemmV) {
                const int V = static_cast<int>(std::min<int64_t>(kGemmV, vectors - v0));
                const int64_t R = tileSize(mb, kTileRows[V]);
                t.b = b + k0 * bStride + v0 * kLanes;
                t.lastMask = laneMask(N - (v0 + V - 1) * kLanes);
                for (int64_t i = m0; i < m0 + mb; i += R) {
                    const int64_t r = std::min(R, m0 + mb - i);
                    t.a = A + i * aRow + k0 * aCol;
                    t.c = C + i * ldc + v0 * kLanes;
                    kGemmFns[V - 1][r - 1](t);
                }
            }
        }
    }
}

}  // namespace kiln::engine::kernels::KILN_ISA_NS
