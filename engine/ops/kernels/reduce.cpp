// SPDX-License-Identifier: Apache-2.0
// Deterministic reductions: fixed blocks (independent of the thread count), per-block partials in
// a stack array, combined in block order.
#include "engine/ops/kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::engine::kernels {

namespace {

// Items per reduction block, at least: about one parallelFor grain of simple float work.
constexpr int64_t kReduceBlock = 16384;

// The number of blocks blockedSum-style reductions use for n items.
int64_t blockCount(int64_t n, int64_t minBlock) {
    minBlock = std::max<int64_t>(minBlock, 1);
    return std::clamp<int64_t>((n + minBlock - 1) / minBlock, 1, kMaxReduceBlocks);
}

// Eight independent double lanes make the loop vectorisable while keeping a fixed association
// order (lane j holds items begin+j, begin+j+8, ...), so the value depends only on [begin, end).
template <typename Transform>
double laneSum(const float* x, int64_t begin, int64_t end, Transform f) {
    constexpr int kLanes = 8;
    double acc[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes)
        for (int j = 0; j < kLanes; ++j) acc[j] += f(static_cast<double>(x[i + j]));
    double tail = 0.0;
    for (; i < end; ++i) tail += f(static_cast<double>(x[i]));
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

}  // namespace

double blockedSum(int64_t n, int64_t minBlock, FunctionRef<double(int64_t, int64_t)> partial,
                  ThreadPool& pool) {
    if (n <= 0) return 0.0;
    const int64_t blocks = blockCount(n, minBlock);
    double partials[kMaxReduceBlocks];
    pool.parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) partials[b] = partial(n * b / blocks, n * (b + 1) / blocks);
    });
    double total = 0.0;
    for (int64_t b = 0; b < blocks; ++b) total += partials[b];
    return total;
}

double reduceSum(const float* x, int64_t n, ThreadPool& pool) {
    return blockedSum(n, kReduceBlock, [&](int64_t begin, int64_t end) {
        return laneSum(x, begin, end, [](double v) { return v; });
    }, pool);
}

double reduceSumSquares(const float* x, int64_t n, ThreadPool& pool) {
    return blockedSum(n, kReduceBlock, [&](int64_t begin, int64_t end) {
        return laneSum(x, begin, end, [](double v) { return v * v; });
    }, pool);
}

float reduceMaxAbs(const float* x, int64_t n, ThreadPool& pool) {
    if (n <= 0) return 0.0f;
    // max is exact, so any combination order gives the same value; blocks only bound the work.
    const int64_t blocks = blockCount(n, kReduceBlock);
    float partials[kMaxReduceBlocks];
    bool sawNan[kMaxReduceBlocks];
    pool.parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t begin = n * b / blocks, end = n * (b + 1) / blocks;
            float m = 0.0f;
            int nan = 0;  // an int flag keeps the loop branch-free and vectorisable
            for (int64_t i = begin; i < end; ++i) {
                const float a = std::fabs(x[i]);
                m = a > m ? a : m;
                nan |= static_cast<int>(a != a);
            }
            partials[b] = m;
            sawNan[b] = nan != 0;
        }
    });
    float m = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        if (sawNan[b]) return std::numeric_limits<float>::quiet_NaN();
        m = std::max(m, partials[b]);
    }
    return m;
}

IndexError findInvalidIndex(const float* indices, int64_t n, int64_t limit, ThreadPool& pool) {
    IndexError result;
    result.limit = limit;
    if (n <= 0) return result;
    const int64_t blocks = blockCount(n, kReduceBlock);
    int64_t firstBad[kMaxReduceBlocks];
    const double upper = static_cast<double>(limit);
    pool.parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t begin = n * b / blocks, end = n * (b + 1) / blocks;
            firstBad[b] = -1;
            for (int64_t i = begin; i < end; ++i) {
                const double v = indices[i];
                // Written so that NaN fails every comparison and is reported.
                const bool valid = v >= 0.0 && v < upper && v == std::floor(v);
                if (!valid) {
                    firstBad[b] = i;
                    break;
                }
            }
        }
    });
    for (int64_t b = 0; b < blocks; ++b) {
        if (firstBad[b] >= 0) {
            result.position = firstBad[b];
            result.value = indices[firstBad[b]];
            break;
        }
    }
    return result;
}

}  // namespace kiln::engine::kernels
