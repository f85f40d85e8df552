// SPDX-License-Identifier: Apache-2.0
// Elementwise float32 kernels. Every loop is a plain indexed loop over one aligned chunk so that
// gcc -O3 vectorises it; chunks come from parallelElements.
#include "engine/ops/kernels/elementwise.h"

#include <algorithm>
#include <cstring>

namespace kiln::engine::kernels {

namespace {

// Elements per parallel chunk, at least: below this the dispatch costs more than it saves.
constexpr int64_t kGrain = 16384;
// Chunk boundaries are multiples of this many floats (256 bytes, four 64-byte cache lines).
constexpr int64_t kChunkAlign = 64;
// addN sums this many elements at a time in a stack tile, so y may alias any input.
constexpr int64_t kAddNTile = 256;

}  // namespace

void parallelElements(ThreadPool& pool, int64_t n, int64_t grain,
                      FunctionRef<void(int64_t, int64_t)> fn) {
    if (n <= 0) return;
    const int64_t groups = (n + kChunkAlign - 1) / kChunkAlign;
    const int64_t grainGroups = std::max<int64_t>(1, (grain + kChunkAlign - 1) / kChunkAlign);
    pool.parallelFor(groups, grainGroups, [&](int64_t g0, int64_t g1) {
        fn(g0 * kChunkAlign, std::min(g1 * kChunkAlign, n));
    });
}

void zero(float* y, int64_t n, ThreadPool& pool) { fill(y, n, 0.0f, pool); }

void fill(float* y, int64_t n, float value, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = value;
    });
}

void copy(const float* x, float* y, int64_t n, ThreadPool& pool) {
    if (x == y) return;
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        std::memcpy(y + b, x + b, static_cast<size_t>(e - b) * sizeof(float));
    });
}

void copy2d(const float* src, int64_t srcStride, float* dst, int64_t dstStride, int64_t rows,
            int64_t cols, ThreadPool& pool) {
    if (rows <= 0 || cols <= 0) return;
    const int64_t grainRows = std::max<int64_t>(1, kGrain / cols);
    pool.parallelFor(rows, grainRows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            std::memcpy(dst + r * dstStride, src + r * srcStride, static_cast<size_t>(cols) * sizeof(float));
    });
}

void accumulate(const float* dy, float* dx, int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dx[i] += dy[i];
    });
}

void accumulateScaled(const float* dy, float alpha, float* dx, int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dx[i] += alpha * dy[i];
    });
}

void add(const float* a, const float* b, float* y, int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) y[i] = a[i] + b[i];
    });
}

void addBackward(const float* dy, float* da, float* db, int64_t n, ThreadPool& pool) {
    if (da) accumulate(dy, da, n, pool);
    if (db) accumulate(dy, db, n, pool);
}

void subtract(const float* a, const float* b, float* y, int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) y[i] = a[i] - b[i];
    });
}

void subtractBackward(const float* dy, float* da, float* db, int64_t n, ThreadPool& pool) {
    if (da) accumulate(dy, da, n, pool);
    if (db) {
        parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
            for (int64_t i = s; i < e; ++i) db[i] -= dy[i];
        });
    }
}

void multiply(const float* a, const float* b, float* y, int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) y[i] = a[i] * b[i];
    });
}

void multiplyChannels(const float* x, const float* v, float* y, int64_t n, int64_t positions, int64_t c,
                      ThreadPool& pool) {
    const int64_t rows = n * positions;  // one row = the c channels of one position
    if (rows <= 0 || c <= 0) return;
    pool.parallelFor(rows, std::max<int64_t>(1, kGrain / c), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* s = v + (r / positions) * c;
            const float* in = x + r * c;
            float* out = y + r * c;
            for (int64_t ch = 0; ch < c; ++ch) out[ch] = in[ch] * s[ch];
        }
    });
}

void sumOverPositions(const float* g, float* dv, int64_t n, int64_t positions, int64_t c, ThreadPool& pool) {
    if (n <= 0 || c <= 0) return;
    // Each task owns whole (sample, channel block) outputs and sums positions in order.
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (c + kBlock - 1) / kBlock;
    pool.parallelFor(n * blocks, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, positions * kBlock)),
                     [&](int64_t t0, int64_t t1) {
                         for (int64_t t = t0; t < t1; ++t) {
                             const int64_t b = t / blocks, c0 = (t % blocks) * kBlock;
                             const int64_t w = std::min(kBlock, c - c0);
                             float acc[kBlock] = {};
                             for (int64_t p = 0; p < positions; ++p) {
                                 const float* row = g + (b * positions + p) * c + c0;
                                 for (int64_t j = 0; j < w; ++j) acc[j] += row[j];
                             }
                             for (int64_t j = 0; j < w; ++j) dv[b * c + c0 + j] += acc[j];
                         }
                     });
}

void multiplyBackward(const float* a, const float* b, const float* dy, float* da, float* db,
                      int64_t n, ThreadPool& pool) {
    if (!da && !db) return;
    parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
        // da and db may be the same buffer (x * x): the two updates must then both land, which
        // two separate passes guarantee.
        if (da)
            for (int64_t i = s; i < e; ++i) da[i] += dy[i] * b[i];
        if (db)
            for (int64_t i = s; i < e; ++i) db[i] += dy[i] * a[i];
    });
}

void addN(const float* const* inputs, int count, float* y, int64_t n, ThreadPool& pool, bool relu) {
    if (count <= 0) {
        zero(y, n, pool);
        return;
    }
    if (count == 1 && !relu) {
        copy(inputs[0], y, n, pool);
        return;
    }
    parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
        float tile[kAddNTile];
        for (int64_t t0 = s; t0 < e; t0 += kAddNTile) {
            const int64_t len = std::min(kAddNTile, e - t0);
            const float* in0 = inputs[0] + t0;
            std::memcpy(tile, in0, static_cast<size_t>(len) * sizeof(float));
            for (int k = 1; k < count; ++k) {
                const float* ink = inputs[k] + t0;
                for (int64_t i = 0; i < len; ++i) tile[i] += ink[i];
            }
            if (relu)
                for (int64_t i = 0; i < len; ++i) tile[i] = tile[i] < 0.0f ? 0.0f : tile[i];  // as the ReLU kernel: NaN stays
            std::memcpy(y + t0, tile, static_cast<size_t>(len) * sizeof(float));
        }
    });
}

void addNBackward(const float* dy, const float* reluOut, float* const* dxs, const uint8_t* overwrite, int count,
                  int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t s, int64_t e) {
        float tile[kAddNTile];
        for (int64_t t0 = s; t0 < e; t0 += kAddNTile) {
            const int64_t len = std::min(kAddNTile, e - t0);
            const float* g = dy + t0;
            if (reluOut) {
                const float* y = reluOut + t0;
                for (int64_t i = 0; i < len; ++i) tile[i] = y[i] > 0.0f ? g[i] : 0.0f;
                g = tile;
            }
            for (int k = 0; k < count; ++k) {
                float* d = dxs[k] ? dxs[k] + t0 : nullptr;
                if (!d) continue;
                if (overwrite && overwrite[k])
                    std::memcpy(d, g, static_cast<size_t>(len) * sizeof(float));
                else
                    for (int64_t i = 0; i < len; ++i) d[i] += g[i];
            }
        }
    });
}

void scale(const float* x, float s, float* y, int64_t n, ThreadPool& pool) {
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = s * x[i];
    });
}

void concatForward(const float* const* inputs, const int64_t* inners, int count, int64_t outer,
                   float* y, ThreadPool& pool) {
    int64_t total = 0;
    for (int k = 0; k < count; ++k) total += inners[k];
    if (outer <= 0 || total <= 0) return;
    const int64_t grainRows = std::max<int64_t>(1, kGrain / total);
    pool.parallelFor(outer, grainRows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            float* row = y + r * total;
            for (int k = 0; k < count; ++k) {
                std::memcpy(row, inputs[k] + r * inners[k], static_cast<size_t>(inners[k]) * sizeof(float));
                row += inners[k];
            }
        }
    });
}

void concatBackward(const float* dy, const int64_t* inners, int count, int64_t outer,
                    float* const* dxs, ThreadPool& pool) {
    int64_t total = 0;
    for (int k = 0; k < count; ++k) total += inners[k];
    if (outer <= 0 || total <= 0) return;
    const int64_t grainRows = std::max<int64_t>(1, kGrain / total);
    pool.parallelFor(outer, grainRows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* row = dy + r * total;
            for (int k = 0; k < count; ++k) {
                const int64_t w = inners[k];
                if (float* dx = dxs[k]) {
                    float* out = dx + r * w;
                    for (int64_t j = 0; j < w; ++j) out[j] += row[j];
                }
                row += w;
            }
        }
    });
}

}  // namespace kiln::engine::kernels
