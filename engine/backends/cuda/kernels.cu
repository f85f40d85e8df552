// SPDX-License-Identifier: Apache-2.0
// Kiln's CUDA kernels. Elementwise work uses grid-stride loops over 64-bit indices; per-channel
// and per-row reductions use one block (or warp) per output with shuffle reductions; losses
// reduce in double. Semantics follow the CPU kernels in engine/ops/kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

#include "engine/backends/cuda/kernels.h"
#include "engine/core/rng.h"

namespace kiln::engine::cuda::k {
namespace {

constexpr int kThreads = 256;

unsigned blocksFor(int64_t n) {
    // Enough blocks to fill an H200 (132 SMs) many times over; grid-stride loops cover the rest.
    const int64_t b = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(b, 132 * 32)));
}

#define KILN_GRID_LOOP(i, n)                                                               \
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
         i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <typename T>
__device__ T warpSum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ float warpMax(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}
// Block-wide sum; every thread gets the result. blockDim.x a multiple of 32, at most 1024.
template <typename T>
__device__ T blockSum(T v) {
    __shared__ T part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warpSum(v);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    T t = (threadIdx.x < (blockDim.x >> 5)) ? part[threadIdx.x] : T(0);
    if (warp == 0) t = warpSum(t);
    if (threadIdx.x == 0) part[0] = t;
    __syncthreads();
    return part[0];
}
__device__ float blockMax(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warpMax(v);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    float t = (threadIdx.x < (blockDim.x >> 5)) ? part[threadIdx.x] : -INFINITY;
    if (warp == 0) t = warpMax(t);
    if (threadIdx.x == 0) part[0] = t;
    __syncthreads();
    return part[0];
}

__device__ __forceinline__ float actF(Act a, float x, float alpha) {
    switch (a) {
    case Act::Linear:
        return x;
    case Act::ReLU:
        return x > 0.f ? x : (x != x ? x : 0.f);
    case Act::ReLU6:
        return fminf(fmaxf(x, 0.f), 6.f);
    case Act::LeakyReLU:
        return x > 0.f ? x : alpha * x;
    case Act::Sigmoid:
        return 1.f / (1.f + expf(-x));
    case Act::Tanh:
        return tanhf(x);
    case Act::GeluExact:
        return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case Act::GeluTanh: {
        const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.f + tanhf(u));
    }
    case Act::SiLU:
        return x / (1.f + expf(-x));
    case Act::HardSigmoid:
        return fminf(fmaxf(x + 3.f, 0.f), 6.f) * (1.f / 6.f);
    case Act::HardSwish:
        return x * fminf(fmaxf(x + 3.f, 0.f), 6.f) * (1.f / 6.f);
    }
    return x;
}
// act'(x) given x (and y where cheaper).
__device__ __forceinline__ float actD(Act a, float x, float y, float alpha) {
    switch (a) {
    case Act::Linear:
        return 1.f;
    case Act::ReLU:
        return x > 0.f ? 1.f : 0.f;
    case Act::ReLU6:
        return (x > 0.f && x < 6.f) ? 1.f : 0.f;
    case Act::LeakyReLU:
        return x > 0.f ? 1.f : alpha;
    case Act::Sigmoid:
        return y * (1.f - y);
    case Act::Tanh:
        return 1.f - y * y;
    case Act::GeluExact: {
        const float cdf = 0.5f * (1.f + erff(x * 0.70710678118654752f));
        const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
        return cdf + x * pdf;
    }
    case Act::GeluTanh: {
        const float k0 = 0.79788456080286536f, k1 = 0.044715f;
        const float u = k0 * (x + k1 * x * x * x);
        const float t = tanhf(u);
        return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * k0 * (1.f + 3.f * k1 * x * x);
    }
    case Act::SiLU: {
        const float sg = 1.f / (1.f + expf(-x));
        return sg * (1.f + x * (1.f - sg));
    }
    case Act::HardSigmoid:
        return (x > -3.f && x < 3.f) ? (1.f / 6.f) : 0.f;
    case Act::HardSwish:
        return x <= -3.f ? 0.f : (x >= 3.f ? 1.f : (2.f * x + 3.f) * (1.f / 6.f));
    }
    return 1.f;
}

__global__ void fillK(float* p, float v, int64_t n) {
    KILN_GRID_LOOP(i, n) p[i] = v;
}
__global__ void accumulateK(const float* x, float* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] += x[i];
}
__global__ void addK(const float* a, const float* b, float* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = a[i] + b[i];
}
__global__ void mulK(const float* a, const float* b, float* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = a[i] * b[i];
}
__global__ void mulBwdK(const float* a, const float* b, const float* dy, float* da, float* db, int64_t n) {
    KILN_GRID_LOOP(i, n) {
        if (da) da[i] += dy[i] * b[i];
        if (db) db[i] += dy[i] * a[i];
    }
}
__global__ void scaleK(float* p, float f, int64_t n) {
    KILN_GRID_LOOP(i, n) p[i] *= f;
}
__global__ void subK(const float* a, const float* b, float* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = a[i] - b[i];
}
__global__ void subBwdK(const float* dy, float* da, float* db, int64_t n) {
    KILN_GRID_LOOP(i, n) {
        if (da) da[i] += dy[i];
        if (db) db[i] -= dy[i];
    }
}
__global__ void mulChK(const float* x, const float* v, float* y, int64_t total, int64_t positions, int64_t c) {
    KILN_GRID_LOOP(i, total) y[i] = x[i] * v[(i / (positions * c)) * c + i % c];
}
__global__ void mulChBwdXK(const float* v, const float* dy, float* dx, int64_t total, int64_t positions, int64_t c) {
    KILN_GRID_LOOP(i, total) dx[i] += dy[i] * v[(i / (positions * c)) * c + i % c];
}
// One thread per (sample, channel): neighbouring threads read neighbouring channels.
__global__ void mulChBwdVK(const float* x, const float* dy, float* dv, int64_t n, int64_t positions, int64_t c) {
    KILN_GRID_LOOP(j, n * c) {
        const int64_t b = j / c, ch = j % c;
        float acc = 0.f;
        for (int64_t p = 0; p < positions; ++p) {
            const int64_t i = (b * positions + p) * c + ch;
            acc += dy[i] * x[i];
        }
        dv[j] += acc;
    }
}
__global__ void gmpK(const float* x, float* y, int32_t* argmax, int64_t n, int64_t hw, int64_t c) {
    KILN_GRID_LOOP(j, n * c) {
        const int64_t b = j / c, ch = j % c;
        const float* xb = x + b * hw * c + ch;
        float best = xb[0];
        int32_t at = 0;
        for (int64_t p = 1; p < hw; ++p) {
            const float v = xb[p * c];
            if (v > best || (v != v && best == best)) {
                best = v;
                at = static_cast<int32_t>(p);
            }
        }
        y[j] = best;
        argmax[j] = at;
    }
}
__global__ void gmpBwdK(const float* dy, const int32_t* argmax, float* dx, int64_t n, int64_t hw, int64_t c) {
    KILN_GRID_LOOP(j, n * c) {
        const int64_t b = j / c, ch = j % c;
        dx[(b * hw + argmax[j]) * c + ch] += dy[j];
    }
}
__device__ __forceinline__ void bilinearTap(int64_t o, int64_t scale, int64_t in, int64_t& i0, int64_t& i1,
                                            float& t) {
    float src = (static_cast<float>(o) + 0.5f) / static_cast<float>(scale) - 0.5f;
    src = fmaxf(src, 0.f);
    i0 = min(static_cast<int64_t>(src), in - 1);
    i1 = min(i0 + 1, in - 1);
    t = src - static_cast<float>(i0);
}
__global__ void upK(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh, int64_t sw,
                    bool bilinear) {
    const int64_t oh = h * sh, ow = w * sw;
    KILN_GRID_LOOP(i, n * oh * ow * c) {
        const int64_t ch = i % c, ox = (i / c) % ow, oy = (i / (c * ow)) % oh, b = i / (c * ow * oh);
        const float* img = x + b * h * w * c + ch;
        if (!bilinear) {
            y[i] = img[((oy / sh) * w + ox / sw) * c];
            continue;
        }
        int64_t y0, y1, x0, x1;
        float ty, tx;
        bilinearTap(oy, sh, h, y0, y1, ty);
        bilinearTap(ox, sw, w, x0, x1, tx);
        const float top = img[(y0 * w + x0) * c] + tx * (img[(y0 * w + x1) * c] - img[(y0 * w + x0) * c]);
        const float bottom = img[(y1 * w + x0) * c] + tx * (img[(y1 * w + x1) * c] - img[(y1 * w + x0) * c]);
        y[i] = top + ty * (bottom - top);
    }
}
// Nearest: each input element gathers its sh x sw block.
__global__ void upNearestBwdK(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh,
                              int64_t sw) {
    const int64_t ow = w * sw;
    KILN_GRID_LOOP(i, n * h * w * c) {
        const int64_t ch = i % c, ix = (i / c) % w, iy = (i / (c * w)) % h, b = i / (c * w * h);
        float acc = 0.f;
        for (int64_t ky = 0; ky < sh; ++ky)
            for (int64_t kx = 0; kx < sw; ++kx)
                acc += dy[((b * h * sh + iy * sh + ky) * ow + ix * sw + kx) * c + ch];
        dx[i] += acc;
    }
}
__global__ void upBilinearBwdK(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh,
                               int64_t sw) {
    const int64_t oh = h * sh, ow = w * sw;
    KILN_GRID_LOOP(i, n * oh * ow * c) {
        const int64_t ch = i % c, ox = (i / c) % ow, oy = (i / (c * ow)) % oh, b = i / (c * ow * oh);
        int64_t y0, y1, x0, x1;
        float ty, tx;
        bilinearTap(oy, sh, h, y0, y1, ty);
        bilinearTap(ox, sw, w, x0, x1, tx);
        float* img = dx + b * h * w * c + ch;
        const float g = dy[i];
        atomicAdd(img + (y0 * w + x0) * c, (1.f - ty) * (1.f - tx) * g);
        atomicAdd(img + (y0 * w + x1) * c, (1.f - ty) * tx * g);
        atomicAdd(img + (y1 * w + x0) * c, ty * (1.f - tx) * g);
        atomicAdd(img + (y1 * w + x1) * c, ty * tx * g);
    }
}
__global__ void affineK(const float* x, float* y, int64_t n, float scale, float offset) {
    KILN_GRID_LOOP(i, n) y[i] = x[i] * scale + offset;
}
__global__ void scaledAccK(const float* dy, float* dx, int64_t n, float scale) {
    KILN_GRID_LOOP(i, n) dx[i] += dy[i] * scale;
}
__global__ void clipK(const float* x, float* y, int64_t n, float lo, float hi) {
    KILN_GRID_LOOP(i, n) {
        const float v = x[i] < lo ? lo : x[i];  // compare-and-select keeps NaN
        y[i] = v > hi ? hi : v;
    }
}
__global__ void clipBwdK(const float* x, const float* dy, float* dx, int64_t n, float lo, float hi) {
    KILN_GRID_LOOP(i, n) dx[i] += (x[i] > lo && x[i] < hi) ? dy[i] : 0.f;
}

__global__ void actFwdK(Act a, const float* x, float* y, int64_t n, float alpha) {
    KILN_GRID_LOOP(i, n) y[i] = actF(a, x[i], alpha);
}
__global__ void actBwdK(Act a, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                        float alpha) {
    KILN_GRID_LOOP(i, n) {
        const float xi = x ? x[i] : (y ? y[i] : 0.f);  // ReLU from y: same sign test
        const float yi = y ? y[i] : actF(a, xi, alpha);
        dx[i] += dy[i] * actD(a, xi, yi, alpha);
    }
}
__global__ void biasActK(float* y, const float* bias, int64_t rows, int64_t cols, Act a, float alpha) {
    KILN_GRID_LOOP(i, rows * cols) {
        const float v = y[i] + (bias ? bias[i % cols] : 0.f);
        y[i] = actF(a, v, alpha);
    }
}
// One block of 32x8 threads per 32 columns: x indexes columns (coalesced), y strides rows.
__global__ void columnSumsK(const float* dy, int64_t rows, int64_t cols, float* db) {
    __shared__ float part[8][33];
    const int64_t c = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.f;
    if (c < cols)
        for (int64_t r = threadIdx.y; r < rows; r += 8) acc += dy[r * cols + c];
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        float t = 0.f;
        for (int k = 0; k < 8; ++k) t += part[k][threadIdx.x];
        db[c] += t;
    }
}
__global__ void softmaxRowsK(const float* x, float* y, int64_t cols) {
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = blockMax(m);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(xr[j] - m);
    s = blockSum(s);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = expf(xr[j] - m) / s;
}
// One block per row (blocks stride over the rows); the causal mask keeps the first
// (row % tq) + 1 scores. Every thread of a block runs the same rows, so the block reductions meet.
__global__ void attnSoftmaxK(float* p, int64_t rows, int64_t tq, int64_t tv, bool causal) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float* row = p + r * tv;
        const int64_t valid = causal ? r % tq + 1 : tv;
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < valid; j += blockDim.x) m = fmaxf(m, row[j]);
        m = blockMax(m);
        float s = 0.f;
        for (int64_t j = threadIdx.x; j < valid; j += blockDim.x) s += expf(row[j] - m);
        s = blockSum(s);  // every thread has read its entries before any is overwritten
        const float inv = 1.f / s;
        for (int64_t j = threadIdx.x; j < tv; j += blockDim.x) row[j] = j < valid ? expf(row[j] - m) * inv : 0.f;
        __syncthreads();  // the reductions' shared slots are free for the next row
    }
}
__global__ void attnSoftmaxBwdK(const float* p, const float* dp, float* ds, int64_t rows, int64_t tv, float scale) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t off = r * tv;
        float dot = 0.f;
        for (int64_t j = threadIdx.x; j < tv; j += blockDim.x) dot += p[off + j] * dp[off + j];
        dot = blockSum(dot);
        for (int64_t j = threadIdx.x; j < tv; j += blockDim.x)
            ds[off + j] = scale * p[off + j] * (dp[off + j] - dot);
        __syncthreads();
    }
}

__global__ void gapK(const float* x, float* y, int64_t n, int64_t hw, int64_t c) {
    KILN_GRID_LOOP(i, n * c) {
        const int64_t b = i / c, ch = i % c;
        const float* p = x + b * hw * c + ch;
        float s = 0.f;
        for (int64_t k = 0; k < hw; ++k) s += p[k * c];
        y[i] = s / static_cast<float>(hw);
    }
}
__global__ void gapBwdK(const float* dy, float* dx, int64_t n, int64_t hw, int64_t c) {
    KILN_GRID_LOOP(i, n * hw * c) {
        const int64_t ch = i % c, b = i / (hw * c);
        dx[i] += dy[b * c + ch] / static_cast<float>(hw);
    }
}
__global__ void concatK(const float* x, float* y, int64_t rows, int64_t width, int64_t total,
                        int64_t offset) {
    KILN_GRID_LOOP(i, rows * width) y[(i / width) * total + offset + i % width] = x[i];
}
__global__ void concatBwdK(const float* dy, float* dx, int64_t rows, int64_t width, int64_t total,
                           int64_t offset) {
    KILN_GRID_LOOP(i, rows * width) dx[i] += dy[(i / width) * total + offset + i % width];
}
__global__ void padK(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
                     int64_t left, int64_t ph, int64_t pw) {
    KILN_GRID_LOOP(i, n * ph * pw * c) {
        const int64_t ch = i % c, px = (i / c) % pw, py = (i / (c * pw)) % ph, b = i / (c * pw * ph);
        const int64_t sy = py - top, sx = px - left;
        y[i] = (sy >= 0 && sy < h && sx >= 0 && sx < w) ? x[((b * h + sy) * w + sx) * c + ch] : 0.f;
    }
}
__global__ void unpadK(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
                       int64_t left, int64_t ph, int64_t pw) {
    KILN_GRID_LOOP(i, n * h * w * c) {
        const int64_t ch = i % c, sx = (i / c) % w, sy = (i / (c * w)) % h, b = i / (c * w * h);
        dx[i] += dy[((b * ph + sy + top) * pw + sx + left) * c + ch];
    }
}

// Four elements per thread: one Philox call gives the words of indices 4k..4k+3, exactly as
// rng::bits(seed, stream, i) = philox(i/4 ...).v[i%4].
__global__ void dropoutK(const float* x, float* y, uint8_t* mask, int64_t n, float rate, float scale,
                         uint64_t seed, uint64_t stream) {
    KILN_GRID_LOOP(q, (n + 3) / 4) {
        const uint64_t first = static_cast<uint64_t>(q) * 4;
        const rng::U32x4 r =
            rng::philox(static_cast<uint32_t>(first >> 2), static_cast<uint32_t>(first >> 34),
                        static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                        static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
        for (int j = 0; j < 4; ++j) {
            const int64_t i = q * 4 + j;
            if (i >= n) break;
            const float u = static_cast<float>(r.v[j] >> 8) * (1.0f / 16777216.0f);
            const bool keep = u >= rate;
            y[i] = keep ? x[i] * scale : 0.f;
            if (mask) mask[i] = keep ? 1 : 0;
        }
    }
}
__global__ void dropoutNoiseK(const float* x, float* y, uint8_t* mask, int64_t n, DropoutNoise g, float rate,
                              float scale, uint64_t seed, uint64_t stream) {
    KILN_GRID_LOOP(i, n) {
        int64_t rest = i, j = 0;
        for (int k = g.rank - 1; k >= 0; --k) {
            j += (rest % g.dims[k]) * g.stride[k];
            rest /= g.dims[k];
        }
        const bool keep = rng::uniform(seed, stream, static_cast<uint64_t>(j)) >= rate;
        y[i] = keep ? x[i] * scale : 0.f;
        mask[i] = keep ? 1 : 0;
    }
}
__global__ void dropoutBwdK(const float* dy, const uint8_t* mask, float* dx, int64_t n, float scale) {
    KILN_GRID_LOOP(i, n) dx[i] += mask[i] ? dy[i] * scale : 0.f;
}

// Per-channel sums: block (32 channels x 8 row lanes), double accumulation.
__global__ void bnStatsK(const float* x, int64_t rows, int64_t c, double* sums) {
    __shared__ double ps[8][33], pq[8][33];
    const int64_t ch = blockIdx.x * 32 + threadIdx.x;
    double s = 0, q = 0;
    if (ch < c)
        for (int64_t r = blockIdx.y * 8 + threadIdx.y; r < rows; r += 8 * gridDim.y) {
            const double v = x[r * c + ch];
            s += v;
            q += v * v;
        }
    ps[threadIdx.y][threadIdx.x] = s;
    pq[threadIdx.y][threadIdx.x] = q;
    __syncthreads();
    if (threadIdx.y == 0 && ch < c) {
        double ts = 0, tq = 0;
        for (int k = 0; k < 8; ++k) {
            ts += ps[k][threadIdx.x];
            tq += pq[k][threadIdx.x];
        }
        atomicAdd(&sums[ch], ts);
        atomicAdd(&sums[c + ch], tq);
    }
}
__global__ void bnFinishK(const double* sums, double count, int64_t c, float eps, float momentum, float* mean,
                          float* invStd, float* mm, float* mv) {
    KILN_GRID_LOOP(j, c) {
        const double m = sums[j] / count;
        const double var = fmax(0.0, sums[c + j] / count - m * m);
        mean[j] = static_cast<float>(m);
        invStd[j] = static_cast<float>(1.0 / sqrt(var + eps));
        if (mm) mm[j] = static_cast<float>(mm[j] * momentum + m * (1.0 - momentum));
        if (mv) mv[j] = static_cast<float>(mv[j] * momentum + var * (1.0 - momentum));
    }
}
__global__ void bnApplyK(const float* x, const float* mean, const float* invStd, const float* g,
                         const float* b, float* y, int64_t rows, int64_t c) {
    KILN_GRID_LOOP(i, rows * c) {
        const int64_t j = i % c;
        y[i] = (x[i] - mean[j]) * invStd[j] * (g ? g[j] : 1.f) + (b ? b[j] : 0.f);
    }
}
__global__ void bnInferK(const float* x, const float* mm, const float* mv, const float* g, const float* b,
                         float eps, float* y, int64_t rows, int64_t c) {
    KILN_GRID_LOOP(i, rows * c) {
        const int64_t j = i % c;
        y[i] = (x[i] - mm[j]) * rsqrtf(mv[j] + eps) * (g ? g[j] : 1.f) + (b ? b[j] : 0.f);
    }
}
// Keras's Normalization layer: fixed statistics, 1 / max(sqrt(variance), 1e-7) per channel.
__global__ void fixedNormK(const float* x, const float* mean, const float* var, float* y, int64_t rows, int64_t c) {
    KILN_GRID_LOOP(i, rows * c) {
        const int64_t j = i % c;
        y[i] = (x[i] - mean[j]) / fmaxf(sqrtf(var[j]), 1e-7f);
    }
}
__global__ void fixedNormBwdK(const float* dy, const float* var, float* dx, int64_t rows, int64_t c) {
    KILN_GRID_LOOP(i, rows * c) dx[i] += dy[i] / fmaxf(sqrtf(var[i % c]), 1e-7f);
}
__global__ void bnBwdSumsK(const float* x, const float* dy, const float* mean, const float* invStd,
                           int64_t rows, int64_t c, double* sums) {
    __shared__ double ps[8][33], pq[8][33];
    const int64_t ch = blockIdx.x * 32 + threadIdx.x;
    double s = 0, q = 0;
    if (ch < c) {
        const float m = mean[ch], is = invStd[ch];
        for (int64_t r = blockIdx.y * 8 + threadIdx.y; r < rows; r += 8 * gridDim.y) {
            const double g = dy[r * c + ch];
            s += g;
            q += g * ((x[r * c + ch] - m) * is);
        }
    }
    ps[threadIdx.y][threadIdx.x] = s;
    pq[threadIdx.y][threadIdx.x] = q;
    __syncthreads();
    if (threadIdx.y == 0 && ch < c) {
        double ts = 0, tq = 0;
        for (int k = 0; k < 8; ++k) {
            ts += ps[k][threadIdx.x];
            tq += pq[k][threadIdx.x];
        }
        atomicAdd(&sums[ch], ts);
        atomicAdd(&sums[c + ch], tq);
    }
}
__global__ void bnBwdParamsK(const double* sums, int64_t c, float* dg, float* db) {
    KILN_GRID_LOOP(j, c) {
        if (db) db[j] += static_cast<float>(sums[j]);
        if (dg) dg[j] += static_cast<float>(sums[c + j]);
    }
}
__global__ void bnBwdDataK(const float* x, const float* dy, const float* mean, const float* invStd,
                           const float* g, const double* sums, double count, float* dx, int64_t rows,
                           int64_t c) {
    KILN_GRID_LOOP(i, rows * c) {
        const int64_t j = i % c;
        const float xhat = (x[i] - mean[j]) * invStd[j];
        const float mdy = static_cast<float>(sums[j] / count), mdx = static_cast<float>(sums[c + j] / count);
        dx[i] += (g ? g[j] : 1.f) * invStd[j] * (dy[i] - mdy - xhat * mdx);
    }
}

// Layer norm: one block per row.
__global__ void lnFwdK(const float* x, const float* g, const float* b, float eps, float* y, float* sm,
                       float* sr, int64_t c) {
    const float* xr = x + blockIdx.x * c;
    float* yr = y + blockIdx.x * c;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) s += xr[j];
    const float mean = blockSum(s) / static_cast<float>(c);
    float q = 0.f;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) q += (xr[j] - mean) * (xr[j] - mean);
    const float rstd = rsqrtf(blockSum(q) / static_cast<float>(c) + eps);
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x)
        yr[j] = (xr[j] - mean) * rstd * (g ? g[j] : 1.f) + (b ? b[j] : 0.f);
    if (threadIdx.x == 0) {
        sm[blockIdx.x] = mean;
        sr[blockIdx.x] = rstd;
    }
}
__global__ void lnBwdK(const float* x, const float* g, const float* sm, const float* sr, const float* dy,
                       float* dx, int64_t c) {
    const int64_t r = blockIdx.x;
    const float mean = sm[r], rstd = sr[r];
    float a = 0.f, bsum = 0.f;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
        const float gj = dy[r * c + j] * (g ? g[j] : 1.f);
        const float xh = (x[r * c + j] - mean) * rstd;
        a += gj;
        bsum += gj * xh;
    }
    const float ma = blockSum(a) / static_cast<float>(c), mb = blockSum(bsum) / static_cast<float>(c);
    if (dx)
        for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
            const float gj = dy[r * c + j] * (g ? g[j] : 1.f);
            const float xh = (x[r * c + j] - mean) * rstd;
            dx[r * c + j] += rstd * (gj - ma - xh * mb);
        }
}
// dgamma/dbeta of layer norm: column reductions of dy*xhat and dy.
__global__ void lnParamsK(const float* x, const float* sm, const float* sr, const float* dy, float* dg,
                          float* db, int64_t rows, int64_t c) {
    KILN_GRID_LOOP(j, c) {
        float sg = 0.f, sb = 0.f;
        for (int64_t r = 0; r < rows; ++r) {
            const float d = dy[r * c + j];
            sb += d;
            sg += d * (x[r * c + j] - sm[r]) * sr[r];
        }
        if (dg) dg[j] += sg;
        if (db) db[j] += sb;
    }
}

// Loss kernels: one block per sample row; per-row losses summed in double by atomics into a
// double accumulator, then the mean written by a one-thread finisher.
__global__ void sparseCeK(const float* logits, const float* labels, int64_t classes, double* acc, float* grad,
                          float gscale, int* bad) {
    const int64_t r = blockIdx.x;
    const float* x = logits + r * classes;
    const float lf = labels[r];
    const int64_t label = static_cast<int64_t>(lf);
    const bool valid = lf == floorf(lf) && label >= 0 && label < classes;
    if (!valid) {
        if (threadIdx.x == 0 && bad) atomicCAS(bad, 0, static_cast<int>(r + 1));
        return;
    }
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) m = fmaxf(m, x[j]);
    m = blockMax(m);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) s += expf(x[j] - m);
    s = blockSum(s);
    if (threadIdx.x == 0) atomicAdd(acc, static_cast<double>(logf(s) + m - x[label]));
    if (grad)
        for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
            grad[r * classes + j] += gscale * (expf(x[j] - m) / s - (j == label ? 1.f : 0.f));
}
__global__ void catCeK(const float* logits, const float* t, int64_t classes, double* acc, float* grad,
                       float gscale) {
    const int64_t r = blockIdx.x;
    const float* x = logits + r * classes;
    const float* tr = t + r * classes;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) m = fmaxf(m, x[j]);
    m = blockMax(m);
    float s = 0.f, ts = 0.f, tx = 0.f;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
        s += expf(x[j] - m);
        ts += tr[j];
        tx += tr[j] * x[j];
    }
    s = blockSum(s);
    ts = blockSum(ts);
    tx = blockSum(tx);
    if (threadIdx.x == 0) atomicAdd(acc, static_cast<double>((logf(s) + m) * ts - tx));
    if (grad)
        for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
            grad[r * classes + j] += gscale * (expf(x[j] - m) / s * ts - tr[j]);
}
// Elementwise losses: kind 0 BCE from logits, 1 MSE, 2 MAE.
__global__ void elemLossK(int kind, const float* p, const float* t, int64_t n, double* acc, float* grad,
                          float gscale) {
    double local = 0;
    KILN_GRID_LOOP(i, n) {
        const float x = p[i], z = t[i];
        float l, d;
        if (kind == 0) {
            l = fmaxf(x, 0.f) - x * z + log1pf(expf(-fabsf(x)));
            d = 1.f / (1.f + expf(-x)) - z;
        } else if (kind == 1) {
            l = (x - z) * (x - z);
            d = 2.f * (x - z);
        } else {
            l = fabsf(x - z);
            d = x > z ? 1.f : (x < z ? -1.f : 0.f);
        }
        local += l;
        if (grad) grad[i] += gscale * d;
    }
    local = blockSum(local);
    if (threadIdx.x == 0) atomicAdd(acc, local);
}

// Focal losses (the CPU kernels' formulas, engine/ops/loss_ops.cpp), in double.
__device__ double focalPowGrad(double b, double gamma) {
    if (gamma == 0.0) return 0.0;
    if (b > 0.0) return gamma * pow(b, gamma - 1.0);
    return gamma == 1.0 ? 1.0 : 0.0;
}
__global__ void binaryFocalK(const float* p, const float* t, int64_t n, FocalParams f, double* acc, float* grad,
                             double gscale) {
    const double eps = 1e-7;
    double local = 0;
    KILN_GRID_LOOP(i, n) {
        const double x = p[i];
        const double tt = f.labelSmoothing > 0 ? t[i] * (1.0 - f.labelSmoothing) + 0.5 * f.labelSmoothing : t[i];
        const double q = f.fromLogits ? 1.0 / (1.0 + exp(-x)) : x;
        const double o = fmin(fmax(q, eps), 1.0 - eps);
        const double bce = -(tt * log(o + eps) + (1.0 - tt) * log(1.0 - o + eps));
        const double base = 1.0 - (tt * q + (1.0 - tt) * (1.0 - q));
        const double focal = pow(base, static_cast<double>(f.gamma));
        const double w = f.classBalancing ? tt * f.alpha + (1.0 - tt) * (1.0 - f.alpha) : 1.0;
        local += w * focal * bce;
        if (grad) {
            const double dBce = q == o ? -(tt / (o + eps) - (1.0 - tt) / (1.0 - o + eps)) : 0.0;
            double d = w * (-(2.0 * tt - 1.0) * focalPowGrad(base, f.gamma) * bce + focal * dBce);
            if (f.fromLogits) d *= q * (1.0 - q);
            grad[i] += static_cast<float>(gscale * d);
        }
    }
    local = blockSum(local);
    if (threadIdx.x == 0) atomicAdd(acc, local);
}
// One thread per row; labels non-null: sparse targets.
__global__ void categoricalFocalK(const float* p, const float* t, const float* labels, int64_t batch,
                                  int64_t classes, FocalParams f, double* acc, float* grad, double gscale,
                                  int* bad) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= batch) return;
    const double eps = 1e-7, g = f.gamma, ls = labels ? 0.0 : f.labelSmoothing;
    const float* x = p + r * classes;
    int64_t label = -1;
    if (labels) {
        const float lf = labels[r];
        label = static_cast<int64_t>(lf);
        if (!(lf == floorf(lf) && label >= 0 && label < classes)) {
            if (bad) atomicCAS(bad, 0, static_cast<int>(r + 1));
            return;
        }
    }
    auto target = [&](int64_t j) -> double {
        const double v = labels ? (j == label ? 1.0 : 0.0) : t[r * classes + j];
        return ls > 0 ? v * (1.0 - ls) + ls / static_cast<double>(classes) : v;
    };
    double mx = x[0], sumExp = 0;
    if (f.fromLogits) {
        for (int64_t j = 1; j < classes; ++j) mx = fmax(mx, static_cast<double>(x[j]));
        for (int64_t j = 0; j < classes; ++j) sumExp += exp(x[j] - mx);
    }
    auto q = [&](int64_t j) -> double { return f.fromLogits ? exp(x[j] - mx) / sumExp : x[j]; };
    double s = 0, loss = 0;
    for (int64_t j = 0; j < classes; ++j) s += q(j);
    for (int64_t j = 0; j < classes; ++j) {
        const double tj = target(j);
        if (tj == 0.0) continue;
        const double o = fmin(fmax(q(j) / s, eps), 1.0 - eps);
        loss -= f.alpha * pow(1.0 - o, g) * tj * log(o);
    }
    atomicAdd(acc, loss);
    if (!grad) return;
    auto dO = [&](int64_t j) -> double {
        const double tj = target(j);
        if (tj == 0.0) return 0.0;
        const double raw = q(j) / s, o = fmin(fmax(raw, eps), 1.0 - eps);
        if (o != raw) return 0.0;
        return f.alpha * tj * (focalPowGrad(1.0 - o, g) * log(o) - pow(1.0 - o, g) / o);
    };
    double dotO = 0, dotQ = 0;
    for (int64_t j = 0; j < classes; ++j) dotO += dO(j) * q(j) / s;
    if (f.fromLogits)
        for (int64_t j = 0; j < classes; ++j) dotQ += (dO(j) - dotO) / s * q(j);
    for (int64_t j = 0; j < classes; ++j) {
        const double dq = (dO(j) - dotO) / s;
        grad[r * classes + j] += static_cast<float>(gscale * (f.fromLogits ? q(j) * (dq - dotQ) : dq));
    }
}
__global__ void finishMeanK(const double* acc, double count, float* out) {
    *out = static_cast<float>(*acc / count);
}

__global__ void embFwdK(const float* ids, const float* table, float* y, int64_t count, int64_t dim,
                        int64_t vocab) {
    KILN_GRID_LOOP(i, count * dim) {
        const int64_t id = static_cast<int64_t>(ids[i / dim]);
        y[i] = (id >= 0 && id < vocab) ? table[id * dim + i % dim] : 0.f;
    }
}
__global__ void embBwdK(const float* ids, const float* dy, float* dt, int64_t count, int64_t dim,
                        int64_t vocab) {
    KILN_GRID_LOOP(i, count * dim) {
        const int64_t id = static_cast<int64_t>(ids[i / dim]);
        if (id >= 0 && id < vocab) atomicAdd(&dt[id * dim + i % dim], dy[i]);
    }
}

// The row a gather index picks, or -1 when it is not an integer in [-axis, axis).
__device__ int64_t gatherRow(float v, int64_t axis) {
    const double x = v;
    if (!(x >= -static_cast<double>(axis) && x < static_cast<double>(axis)) || x != floor(x)) return -1;
    const int64_t i = static_cast<int64_t>(x);
    return i < 0 ? i + axis : i;
}
__global__ void gatherCheckK(const float* idx, int64_t n, int64_t axis, int* firstBad) {
    KILN_GRID_LOOP(i, n) {
        if (gatherRow(idx[i], axis) < 0) atomicMin(firstBad, static_cast<int>(i < INT_MAX - 1 ? i : int64_t{INT_MAX - 1}));
    }
}
__global__ void gatherFwdK(const float* x, const float* idx, float* y, GatherShape g) {
    KILN_GRID_LOOP(e, g.batch * g.outer * g.count * g.inner) {
        const int64_t q = e % g.inner, j = (e / g.inner) % g.count, slice = e / (g.inner * g.count);
        const float* ids = idx + (g.perSample ? (slice / g.outer) * g.count : 0);
        const int64_t row = gatherRow(ids[j], g.axis);
        y[e] = row >= 0 ? x[(slice * g.axis + row) * g.inner + q] : 0.f;
    }
}
__global__ void gatherBwdK(const float* idx, const float* dy, float* dx, GatherShape g) {
    KILN_GRID_LOOP(e, g.batch * g.outer * g.axis * g.inner) {
        const int64_t q = e % g.inner, row = (e / g.inner) % g.axis, slice = e / (g.inner * g.axis);
        const float* ids = idx + (g.perSample ? (slice / g.outer) * g.count : 0);
        float sum = 0.f;
        bool hit = false;
        for (int64_t j = 0; j < g.count; ++j)
            if (gatherRow(ids[j], g.axis) == row) {
                sum += dy[(slice * g.count + j) * g.inner + q];
                hit = true;
            }
        if (hit) dx[e] += sum;
    }
}

__global__ void sgdK(float* w, const float* g, float* mb, int64_t n, float lr, float mom, bool nesterov,
                     float wdLr, float gs) {
    KILN_GRID_LOOP(i, n) {
        const float gi = g[i] * gs;
        const float wi = w[i] - w[i] * wdLr;
        if (!mb) {
            w[i] = wi - lr * gi;
            continue;
        }
        const float step = -gi * lr;
        const float m = step + mb[i] * mom;
        mb[i] = m;
        w[i] = nesterov ? wi + (step + m * mom) : wi + m;
    }
}
__global__ void adamK(float* w, const float* g, float* m, float* v, int64_t n, float alpha, float b1,
                      float b2, float eps, float wdLr, float gs) {
    KILN_GRID_LOOP(i, n) {
        const float gi = g[i] * gs;
        float mi = m[i], vi = v[i];
        mi = mi + (gi - mi) * (1.f - b1);
        vi = vi + (gi * gi - vi) * (1.f - b2);
        m[i] = mi;
        v[i] = vi;
        const float wi = w[i] - w[i] * wdLr;
        w[i] = wi - (mi * alpha) / (sqrtf(vi) + eps);
    }
}

__global__ void toHalfK(const float* x, __half* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = __float2half_rn(x[i]);
}
__global__ void toBf16K(const float* x, __nv_bfloat16* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = __float2bfloat16_rn(x[i]);
}
__global__ void fromHalfK(const __half* x, float* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = __half2float(x[i]);
}
__global__ void fromBf16K(const __nv_bfloat16* x, float* y, int64_t n) {
    KILN_GRID_LOOP(i, n) y[i] = __bfloat162float(x[i]);
}
__global__ void finiteK(const float* x, int64_t n, int* flag) {
    bool bad = false;
    KILN_GRID_LOOP(i, n) bad = bad || !isfinite(x[i]);
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) atomicExch(flag, 1);
}
__global__ void uniformK(float* out, int64_t n, uint64_t seed, uint64_t stream) {
    KILN_GRID_LOOP(i, n) out[i] = rng::uniform(seed, stream, static_cast<uint64_t>(i));
}

__global__ void hwioToOhwiK(const float* w, float* o, int64_t kh, int64_t kw, int64_t ci, int64_t co) {
    KILN_GRID_LOOP(i, kh * kw * ci * co) {  // i indexes HWIO
        const int64_t oc = i % co, ic = (i / co) % ci, x = (i / (co * ci)) % kw, y = i / (co * ci * kw);
        o[((oc * kh + y) * kw + x) * ci + ic] = w[i];
    }
}
__global__ void ohwiToHwioK(const float* o, float* w, int64_t kh, int64_t kw, int64_t ci, int64_t co) {
    KILN_GRID_LOOP(i, kh * kw * ci * co) {
        const int64_t oc = i % co, ic = (i / co) % ci, x = (i / (co * ci)) % kw, y = i / (co * ci * kw);
        w[i] += o[((oc * kh + y) * kw + x) * ci + ic];
    }
}
// One thread per output element; windows clipped to the image.
__global__ void maxPoolK(PoolGeom g, const float* x, float* y) {
    KILN_GRID_LOOP(i, g.n * g.oh * g.ow * g.c) {
        const int64_t c = i % g.c, ox = (i / g.c) % g.ow, oy = (i / (g.c * g.ow)) % g.oh,
                      b = i / (g.c * g.ow * g.oh);
        const int64_t y0 = oy * g.sh - g.padTop, x0 = ox * g.sw - g.padLeft;
        float m = -INFINITY;
        for (int64_t yy = max(y0, int64_t(0)); yy < min(y0 + g.ph, g.h); ++yy)
            for (int64_t xx = max(x0, int64_t(0)); xx < min(x0 + g.pw, g.w); ++xx) {
                const float v = x[((b * g.h + yy) * g.w + xx) * g.c + c];
                if (v > m || v != v) m = v;
            }
        y[i] = m;
    }
}
__global__ void maxPoolBwdK(PoolGeom g, const float* x, const float* dy, float* dx) {
    KILN_GRID_LOOP(i, g.n * g.oh * g.ow * g.c) {
        const int64_t c = i % g.c, ox = (i / g.c) % g.ow, oy = (i / (g.c * g.ow)) % g.oh,
                      b = i / (g.c * g.ow * g.oh);
        const int64_t y0 = oy * g.sh - g.padTop, x0 = ox * g.sw - g.padLeft;
        float m = -INFINITY;
        int64_t at = -1;
        for (int64_t yy = max(y0, int64_t(0)); yy < min(y0 + g.ph, g.h); ++yy)
            for (int64_t xx = max(x0, int64_t(0)); xx < min(x0 + g.pw, g.w); ++xx) {
                const int64_t k = ((b * g.h + yy) * g.w + xx) * g.c + c;
                if (at < 0 || x[k] > m) {
                    m = x[k];
                    at = k;
                }
            }
        if (at >= 0) atomicAdd(&dx[at], dy[i]);
    }
}
__global__ void avgPoolK(PoolGeom g, const float* x, float* y) {
    KILN_GRID_LOOP(i, g.n * g.oh * g.ow * g.c) {
        const int64_t c = i % g.c, ox = (i / g.c) % g.ow, oy = (i / (g.c * g.ow)) % g.oh,
                      b = i / (g.c * g.ow * g.oh);
        const int64_t y0 = oy * g.sh - g.padTop, x0 = ox * g.sw - g.padLeft;
        float s = 0.f;
        int count = 0;
        for (int64_t yy = max(y0, int64_t(0)); yy < min(y0 + g.ph, g.h); ++yy)
            for (int64_t xx = max(x0, int64_t(0)); xx < min(x0 + g.pw, g.w); ++xx) {
                s += x[((b * g.h + yy) * g.w + xx) * g.c + c];
                ++count;
            }
        y[i] = count ? s / static_cast<float>(count) : 0.f;
    }
}
__global__ void avgPoolBwdK(PoolGeom g, const float* dy, float* dx) {
    KILN_GRID_LOOP(i, g.n * g.oh * g.ow * g.c) {
        const int64_t c = i % g.c, ox = (i / g.c) % g.ow, oy = (i / (g.c * g.ow)) % g.oh,
                      b = i / (g.c * g.ow * g.oh);
        const int64_t y0 = oy * g.sh - g.padTop, x0 = ox * g.sw - g.padLeft;
        const int64_t ya = max(y0, int64_t(0)), yb = min(y0 + g.ph, g.h), xa = max(x0, int64_t(0)),
                      xb = min(x0 + g.pw, g.w);
        const int64_t count = (yb - ya) * (xb - xa);
        if (count <= 0) continue;
        const float share = dy[i] / static_cast<float>(count);
        for (int64_t yy = ya; yy < yb; ++yy)
            for (int64_t xx = xa; xx < xb; ++xx) atomicAdd(&dx[((b * g.h + yy) * g.w + xx) * g.c + c], share);
    }
}

}  // namespace

void hwioToOhwi(const float* w, float* o, int64_t kh, int64_t kw, int64_t ci, int64_t co, StreamHandle s) {
    hwioToOhwiK<<<blocksFor(kh * kw * ci * co), kThreads, 0, s>>>(w, o, kh, kw, ci, co);
}
void ohwiToHwioAccumulate(const float* o, float* w, int64_t kh, int64_t kw, int64_t ci, int64_t co,
                          StreamHandle s) {
    ohwiToHwioK<<<blocksFor(kh * kw * ci * co), kThreads, 0, s>>>(o, w, kh, kw, ci, co);
}
void maxPoolForward(const PoolGeom& g, const float* x, float* y, StreamHandle s) {
    maxPoolK<<<blocksFor(g.n * g.oh * g.ow * g.c), kThreads, 0, s>>>(g, x, y);
}
void maxPoolBackward(const PoolGeom& g, const float* x, const float* dy, float* dx, StreamHandle s) {
    maxPoolBwdK<<<blocksFor(g.n * g.oh * g.ow * g.c), kThreads, 0, s>>>(g, x, dy, dx);
}
void avgPoolForward(const PoolGeom& g, const float* x, float* y, StreamHandle s) {
    avgPoolK<<<blocksFor(g.n * g.oh * g.ow * g.c), kThreads, 0, s>>>(g, x, y);
}
void avgPoolBackward(const PoolGeom& g, const float* dy, float* dx, StreamHandle s) {
    avgPoolBwdK<<<blocksFor(g.n * g.oh * g.ow * g.c), kThreads, 0, s>>>(g, dy, dx);
}

void fill(float* p, float v, int64_t n, StreamHandle s) {
    if (n > 0) fillK<<<blocksFor(n), kThreads, 0, s>>>(p, v, n);
}
void accumulate(const float* x, float* y, int64_t n, StreamHandle s) {
    if (n > 0) accumulateK<<<blocksFor(n), kThreads, 0, s>>>(x, y, n);
}
void add(const float* a, const float* b, float* y, int64_t n, StreamHandle s) {
    if (n > 0) addK<<<blocksFor(n), kThreads, 0, s>>>(a, b, y, n);
}
void multiply(const float* a, const float* b, float* y, int64_t n, StreamHandle s) {
    if (n > 0) mulK<<<blocksFor(n), kThreads, 0, s>>>(a, b, y, n);
}
void multiplyBackward(const float* a, const float* b, const float* dy, float* da, float* db, int64_t n,
                      StreamHandle s) {
    if (n > 0) mulBwdK<<<blocksFor(n), kThreads, 0, s>>>(a, b, dy, da, db, n);
}
void scale(float* p, float f, int64_t n, StreamHandle s) {
    if (n > 0) scaleK<<<blocksFor(n), kThreads, 0, s>>>(p, f, n);
}
void subtract(const float* a, const float* b, float* y, int64_t n, StreamHandle s) {
    if (n > 0) subK<<<blocksFor(n), kThreads, 0, s>>>(a, b, y, n);
}
void subtractBackward(const float* dy, float* da, float* db, int64_t n, StreamHandle s) {
    if (n > 0 && (da || db)) subBwdK<<<blocksFor(n), kThreads, 0, s>>>(dy, da, db, n);
}
void multiplyChannels(const float* x, const float* v, float* y, int64_t n, int64_t positions, int64_t c,
                      StreamHandle s) {
    const int64_t total = n * positions * c;
    if (total > 0) mulChK<<<blocksFor(total), kThreads, 0, s>>>(x, v, y, total, positions, c);
}
void multiplyChannelsBackward(const float* x, const float* v, const float* dy, float* dx, float* dv, int64_t n,
                              int64_t positions, int64_t c, StreamHandle s) {
    const int64_t total = n * positions * c;
    if (total <= 0) return;
    if (dx) mulChBwdXK<<<blocksFor(total), kThreads, 0, s>>>(v, dy, dx, total, positions, c);
    if (dv) mulChBwdVK<<<blocksFor(n * c), kThreads, 0, s>>>(x, dy, dv, n, positions, c);
}
void globalMaxPool(const float* x, float* y, int32_t* argmax, int64_t n, int64_t hw, int64_t c, StreamHandle s) {
    if (n * c > 0) gmpK<<<blocksFor(n * c), kThreads, 0, s>>>(x, y, argmax, n, hw, c);
}
void globalMaxPoolBackward(const float* dy, const int32_t* argmax, float* dx, int64_t n, int64_t hw, int64_t c,
                           StreamHandle s) {
    if (n * c > 0) gmpBwdK<<<blocksFor(n * c), kThreads, 0, s>>>(dy, argmax, dx, n, hw, c);
}
void upsample(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh, int64_t sw,
              bool bilinear, StreamHandle s) {
    const int64_t total = n * h * sh * w * sw * c;
    if (total > 0) upK<<<blocksFor(total), kThreads, 0, s>>>(x, y, n, h, w, c, sh, sw, bilinear);
}
void upsampleBackward(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh,
                      int64_t sw, bool bilinear, StreamHandle s) {
    if (bilinear) {
        const int64_t total = n * h * sh * w * sw * c;
        if (total > 0) upBilinearBwdK<<<blocksFor(total), kThreads, 0, s>>>(dy, dx, n, h, w, c, sh, sw);
    } else {
        const int64_t total = n * h * w * c;
        if (total > 0) upNearestBwdK<<<blocksFor(total), kThreads, 0, s>>>(dy, dx, n, h, w, c, sh, sw);
    }
}
void affine(const float* x, float* y, int64_t n, float scale, float offset, StreamHandle s) {
    if (n > 0) affineK<<<blocksFor(n), kThreads, 0, s>>>(x, y, n, scale, offset);
}
void scaledAccumulate(const float* dy, float* dx, int64_t n, float scale, StreamHandle s) {
    if (n > 0) scaledAccK<<<blocksFor(n), kThreads, 0, s>>>(dy, dx, n, scale);
}
void clip(const float* x, float* y, int64_t n, float lo, float hi, StreamHandle s) {
    if (n > 0) clipK<<<blocksFor(n), kThreads, 0, s>>>(x, y, n, lo, hi);
}
void clipBackward(const float* x, const float* dy, float* dx, int64_t n, float lo, float hi, StreamHandle s) {
    if (n > 0) clipBwdK<<<blocksFor(n), kThreads, 0, s>>>(x, dy, dx, n, lo, hi);
}
void activationForward(Act a, const float* x, float* y, int64_t n, float alpha, StreamHandle s) {
    if (n > 0) actFwdK<<<blocksFor(n), kThreads, 0, s>>>(a, x, y, n, alpha);
}
void activationBackward(Act a, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                        float alpha, StreamHandle s) {
    if (n > 0) actBwdK<<<blocksFor(n), kThreads, 0, s>>>(a, x, y, dy, dx, n, alpha);
}
void biasActivation(float* y, const float* bias, int64_t rows, int64_t cols, Act a, float alpha,
                    StreamHandle s) {
    if (rows * cols > 0) biasActK<<<blocksFor(rows * cols), kThreads, 0, s>>>(y, bias, rows, cols, a, alpha);
}
void columnSums(const float* dy, int64_t rows, int64_t cols, float* db, StreamHandle s) {
    if (rows > 0 && cols > 0)
        columnSumsK<<<static_cast<unsigned>((cols + 31) / 32), dim3(32, 8), 0, s>>>(dy, rows, cols, db);
}
void softmaxRows(const float* x, float* y, int64_t rows, int64_t cols, StreamHandle s) {
    if (rows > 0) softmaxRowsK<<<static_cast<unsigned>(rows), cols >= 512 ? 512 : 128, 0, s>>>(x, y, cols);
}
namespace {
// Threads per row of a row-wise reduction: a warp for short rows, more for long ones.
unsigned rowThreads(int64_t cols) {
    return cols <= 32 ? 32u : cols <= 128 ? 128u
                                          : 256u;
}
unsigned rowBlocks(int64_t rows) {
    return static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
}
}  // namespace
void attentionSoftmax(float* p, int64_t rows, int64_t tq, int64_t tv, bool causal, StreamHandle s) {
    if (rows > 0 && tv > 0)
        attnSoftmaxK<<<rowBlocks(rows), rowThreads(tv), 0, s>>>(p, rows, tq, tv, causal);
}
void attentionSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t rows, int64_t tv, float scale,
                              StreamHandle s) {
    if (rows > 0 && tv > 0)
        attnSoftmaxBwdK<<<rowBlocks(rows), rowThreads(tv), 0, s>>>(p, dp, ds, rows, tv, scale);
}
void globalAvgPool(const float* x, float* y, int64_t n, int64_t hw, int64_t c, StreamHandle s) {
    gapK<<<blocksFor(n * c), kThreads, 0, s>>>(x, y, n, hw, c);
}
void globalAvgPoolBackward(const float* dy, float* dx, int64_t n, int64_t hw, int64_t c, StreamHandle s) {
    gapBwdK<<<blocksFor(n * hw * c), kThreads, 0, s>>>(dy, dx, n, hw, c);
}
void concatLast(const float* x, float* y, int64_t rows, int64_t width, int64_t total, int64_t offset,
                StreamHandle s) {
    concatK<<<blocksFor(rows * width), kThreads, 0, s>>>(x, y, rows, width, total, offset);
}
void concatLastBackward(const float* dy, float* dx, int64_t rows, int64_t width, int64_t total,
                        int64_t offset, StreamHandle s) {
    concatBwdK<<<blocksFor(rows * width), kThreads, 0, s>>>(dy, dx, rows, width, total, offset);
}
void padNhwc(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top, int64_t left,
             int64_t ph, int64_t pw, StreamHandle s) {
    padK<<<blocksFor(n * ph * pw * c), kThreads, 0, s>>>(x, y, n, h, w, c, top, left, ph, pw);
}
void unpadNhwcAccumulate(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
                         int64_t left, int64_t ph, int64_t pw, StreamHandle s) {
    unpadK<<<blocksFor(n * h * w * c), kThreads, 0, s>>>(dy, dx, n, h, w, c, top, left, ph, pw);
}
void dropoutForward(const float* x, float* y, uint8_t* mask, int64_t n, float rate, uint64_t seed,
                    uint64_t stream, StreamHandle s) {
    if (n <= 0) return;
    const float sc = rate <= 0.f ? 1.f : (rate >= 1.f ? 0.f : 1.f / (1.f - rate));
    dropoutK<<<blocksFor((n + 3) / 4), kThreads, 0, s>>>(x, y, mask, n, rate, sc, seed, stream);
}
void dropoutBroadcastForward(const float* x, float* y, uint8_t* mask, int64_t n, const DropoutNoise& noise,
                             float rate, uint64_t seed, uint64_t stream, StreamHandle s) {
    if (n <= 0) return;
    dropoutNoiseK<<<blocksFor(n), kThreads, 0, s>>>(x, y, mask, n, noise, rate, 1.f / (1.f - rate), seed, stream);
}
void dropoutBackward(const float* dy, const uint8_t* mask, float* dx, int64_t n, float rate, StreamHandle s) {
    if (n <= 0 || rate >= 1.f) return;
    dropoutBwdK<<<blocksFor(n), kThreads, 0, s>>>(dy, mask, dx, n, rate <= 0.f ? 1.f : 1.f / (1.f - rate));
}

namespace {
dim3 bnGrid(int64_t rows, int64_t c) {
    const unsigned gx = static_cast<unsigned>((c + 31) / 32);
    // Enough row slices to occupy the machine; each block atomically adds its partial sums.
    const int64_t slices =
        std::max<int64_t>(1, std::min<int64_t>((rows + 255) / 256, std::max<int64_t>(1, 1024 / gx)));
    return dim3(gx, static_cast<unsigned>(slices));
}
}  // namespace

void batchNormStats(const float* x, int64_t rows, int64_t c, double* sums, StreamHandle s) {
    cudaMemsetAsync(sums, 0, sizeof(double) * 2 * static_cast<size_t>(c), s);
    bnStatsK<<<bnGrid(rows, c), dim3(32, 8), 0, s>>>(x, rows, c, sums);
}
void batchNormFinish(const double* sums, double count, int64_t c, float eps, float momentum, float* mean,
                     float* invStd, float* mm, float* mv, StreamHandle s) {
    bnFinishK<<<blocksFor(c), kThreads, 0, s>>>(sums, count, c, eps, momentum, mean, invStd, mm, mv);
}
void batchNormApply(const float* x, const float* mean, const float* invStd, const float* g, const float* b,
                    float* y, int64_t rows, int64_t c, StreamHandle s) {
    bnApplyK<<<blocksFor(rows * c), kThreads, 0, s>>>(x, mean, invStd, g, b, y, rows, c);
}
void batchNormInference(const float* x, const float* mm, const float* mv, const float* g, const float* b,
                        float eps, float* y, int64_t rows, int64_t c, StreamHandle s) {
    bnInferK<<<blocksFor(rows * c), kThreads, 0, s>>>(x, mm, mv, g, b, eps, y, rows, c);
}
void fixedNormForward(const float* x, const float* mean, const float* variance, float* y, int64_t rows, int64_t c,
                      StreamHandle s) {
    if (rows * c > 0) fixedNormK<<<blocksFor(rows * c), kThreads, 0, s>>>(x, mean, variance, y, rows, c);
}
void fixedNormBackward(const float* dy, const float* variance, float* dx, int64_t rows, int64_t c, StreamHandle s) {
    if (rows * c > 0) fixedNormBwdK<<<blocksFor(rows * c), kThreads, 0, s>>>(dy, variance, dx, rows, c);
}
void batchNormBackwardSums(const float* x, const float* dy, const float* mean, const float* invStd,
                           int64_t rows, int64_t c, double* sums, StreamHandle s) {
    cudaMemsetAsync(sums, 0, sizeof(double) * 2 * static_cast<size_t>(c), s);
    bnBwdSumsK<<<bnGrid(rows, c), dim3(32, 8), 0, s>>>(x, dy, mean, invStd, rows, c, sums);
}
void batchNormBackwardParams(const double* sums, int64_t c, float* dg, float* db, StreamHandle s) {
    bnBwdParamsK<<<blocksFor(c), kThreads, 0, s>>>(sums, c, dg, db);
}
void batchNormBackwardData(const float* x, const float* dy, const float* mean, const float* invStd,
                           const float* g, const double* sums, double count, float* dx, int64_t rows,
                           int64_t c, StreamHandle s) {
    bnBwdDataK<<<blocksFor(rows * c), kThreads, 0, s>>>(x, dy, mean, invStd, g, sums, count, dx, rows, c);
}
void layerNormForward(const float* x, const float* g, const float* b, float eps, float* y, float* sm,
                      float* sr, int64_t rows, int64_t c, StreamHandle s) {
    if (rows > 0) lnFwdK<<<static_cast<unsigned>(rows), 256, 0, s>>>(x, g, b, eps, y, sm, sr, c);
}
void layerNormBackward(const float* x, const float* g, const float* sm, const float* sr, const float* dy,
                       float* dx, float* dg, float* db, int64_t rows, int64_t c, StreamHandle s) {
    if (rows <= 0) return;
    lnBwdK<<<static_cast<unsigned>(rows), 256, 0, s>>>(x, g, sm, sr, dy, dx, c);
    if (dg || db) lnParamsK<<<blocksFor(c), kThreads, 0, s>>>(x, sm, sr, dy, dg, db, rows, c);
}

void sparseCrossEntropy(const float* logits, const float* labels, int64_t batch, int64_t classes,
                        float* lossOut, float* grad, float gradScale, int* bad, double* acc, StreamHandle s) {
    cudaMemsetAsync(acc, 0, sizeof(double), s);
    sparseCeK<<<static_cast<unsigned>(batch), 128, 0, s>>>(logits, labels, classes, acc, grad,
                                                           gradScale / static_cast<float>(batch), bad);
    finishMeanK<<<1, 1, 0, s>>>(acc, static_cast<double>(batch), lossOut);
}
void categoricalCrossEntropy(const float* logits, const float* t, int64_t batch, int64_t classes,
                             float* lossOut, float* grad, float gradScale, double* acc, StreamHandle s) {
    cudaMemsetAsync(acc, 0, sizeof(double), s);
    catCeK<<<static_cast<unsigned>(batch), 128, 0, s>>>(logits, t, classes, acc, grad,
                                                        gradScale / static_cast<float>(batch));
    finishMeanK<<<1, 1, 0, s>>>(acc, static_cast<double>(batch), lossOut);
}
namespace {
void elemLoss(int kind, const float* p, const float* t, int64_t n, float* lossOut, float* grad,
              float gradScale, double* acc, StreamHandle s) {
    cudaMemsetAsync(acc, 0, sizeof(double), s);
    elemLossK<<<blocksFor(n), kThreads, 0, s>>>(kind, p, t, n, acc, grad, gradScale / static_cast<float>(n));
    finishMeanK<<<1, 1, 0, s>>>(acc, static_cast<double>(n), lossOut);
}
}  // namespace
void binaryCrossEntropy(const float* p, const float* t, int64_t n, float* o, float* g, float gs, double* acc,
                        StreamHandle s) {
    elemLoss(0, p, t, n, o, g, gs, acc, s);
}
void meanSquaredError(const float* p, const float* t, int64_t n, float* o, float* g, float gs, double* acc,
                      StreamHandle s) {
    elemLoss(1, p, t, n, o, g, gs, acc, s);
}
void meanAbsoluteError(const float* p, const float* t, int64_t n, float* o, float* g, float gs, double* acc,
                       StreamHandle s) {
    elemLoss(2, p, t, n, o, g, gs, acc, s);
}

void binaryFocalCrossEntropy(const float* p, const float* t, int64_t n, const FocalParams& f, float* lossOut,
                             float* grad, float gradScale, double* acc, StreamHandle s) {
    cudaMemsetAsync(acc, 0, sizeof(double), s);
    if (n > 0)
        binaryFocalK<<<blocksFor(n), kThreads, 0, s>>>(p, t, n, f, acc, grad,
                                                       static_cast<double>(gradScale) / static_cast<double>(n));
    finishMeanK<<<1, 1, 0, s>>>(acc, static_cast<double>(n), lossOut);
}
void categoricalFocalCrossEntropy(const float* p, const float* targets, const float* labels, int64_t batch,
                                  int64_t classes, const FocalParams& f, float* lossOut, float* grad,
                                  float gradScale, int* badLabel, double* acc, StreamHandle s) {
    cudaMemsetAsync(acc, 0, sizeof(double), s);
    if (batch > 0)
        categoricalFocalK<<<static_cast<unsigned>((batch + 127) / 128), 128, 0, s>>>(
            p, targets, labels, batch, classes, f, acc, grad,
            static_cast<double>(gradScale) / static_cast<double>(batch), badLabel);
    finishMeanK<<<1, 1, 0, s>>>(acc, static_cast<double>(batch), lossOut);
}

void embeddingForward(const float* ids, const float* table, float* y, int64_t count, int64_t dim,
                      int64_t vocab, StreamHandle s) {
    embFwdK<<<blocksFor(count * dim), kThreads, 0, s>>>(ids, table, y, count, dim, vocab);
}
void embeddingBackward(const float* ids, const float* dy, float* dt, int64_t count, int64_t dim,
                       int64_t vocab, StreamHandle s) {
    embBwdK<<<blocksFor(count * dim), kThreads, 0, s>>>(ids, dy, dt, count, dim, vocab);
}
void gatherIndexCheck(const float* indices, int64_t n, int64_t axis, int* firstBad, StreamHandle s) {
    if (n > 0) gatherCheckK<<<blocksFor(n), kThreads, 0, s>>>(indices, n, axis, firstBad);
}
void gatherForward(const float* x, const float* indices, float* y, const GatherShape& g, StreamHandle s) {
    const int64_t n = g.batch * g.outer * g.count * g.inner;
    if (n > 0) gatherFwdK<<<blocksFor(n), kThreads, 0, s>>>(x, indices, y, g);
}
void gatherBackward(const float* indices, const float* dy, float* dx, const GatherShape& g, StreamHandle s) {
    const int64_t n = g.batch * g.outer * g.axis * g.inner;
    if (n > 0) gatherBwdK<<<blocksFor(n), kThreads, 0, s>>>(indices, dy, dx, g);
}
void sgdUpdate(float* w, const float* g, float* mb, int64_t n, float lr, float mom, bool nesterov, float wdLr,
               float gs, StreamHandle s) {
    if (n > 0) sgdK<<<blocksFor(n), kThreads, 0, s>>>(w, g, mb, n, lr, mom, nesterov, wdLr, gs);
}
void adamUpdate(float* w, const float* g, float* m, float* v, int64_t n, float alpha, float b1, float b2,
                float eps, float wdLr, float gs, StreamHandle s) {
    if (n > 0) adamK<<<blocksFor(n), kThreads, 0, s>>>(w, g, m, v, n, alpha, b1, b2, eps, wdLr, gs);
}
void castToHalf(const float* x, uint16_t* y, int64_t n, StreamHandle s) {
    if (n > 0) toHalfK<<<blocksFor(n), kThreads, 0, s>>>(x, reinterpret_cast<__half*>(y), n);
}
void castToBf16(const float* x, uint16_t* y, int64_t n, StreamHandle s) {
    if (n > 0) toBf16K<<<blocksFor(n), kThreads, 0, s>>>(x, reinterpret_cast<__nv_bfloat16*>(y), n);
}
void castFromHalf(const uint16_t* x, float* y, int64_t n, StreamHandle s) {
    if (n > 0) fromHalfK<<<blocksFor(n), kThreads, 0, s>>>(reinterpret_cast<const __half*>(x), y, n);
}
void castFromBf16(const uint16_t* x, float* y, int64_t n, StreamHandle s) {
    if (n > 0) fromBf16K<<<blocksFor(n), kThreads, 0, s>>>(reinterpret_cast<const __nv_bfloat16*>(x), y, n);
}
void checkFinite(const float* x, int64_t n, int* flag, StreamHandle s) {
    if (n > 0) finiteK<<<blocksFor(n), kThreads, 0, s>>>(x, n, flag);
}
void uniform(float* out, int64_t n, uint64_t seed, uint64_t stream, StreamHandle s) {
    if (n > 0) uniformK<<<blocksFor(n), kThreads, 0, s>>>(out, n, seed, stream);
}

}  // namespace kiln::engine::cuda::k
