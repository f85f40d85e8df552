// SPDX-License-Identifier: Apache-2.0
// Inverted dropout. One Philox call yields four 32-bit words, i.e. the uniforms of four consecutive
// elements (rng::bits uses counter index/4 and word index%4), so the mask is generated four
// elements per call in tiles, then applied by a branch-free select loop.
#include "engine/ops/kernels/dropout.h"

#include <algorithm>
#include <cstring>

#include "engine/core/rng.h"
#include "engine/ops/kernels/elementwise.h"

namespace kiln::engine::kernels {

namespace {

// Elements per parallel chunk, at least (Philox is ~10 multiply rounds per 4 elements).
constexpr int64_t kGrain = 8192;
// Random words are generated for this many elements at a time into a stack tile.
constexpr int64_t kTile = 256;

// words[k] = rng::bits(seed, stream, first + k) for k < count; first is a multiple of 4 (chunks
// from parallelElements start at multiples of 64 and tiles advance by kTile).
void randomWords(uint64_t seed, uint64_t stream, uint64_t first, int64_t count, uint32_t* words) {
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    const uint32_t s0 = static_cast<uint32_t>(stream), s1 = static_cast<uint32_t>(stream >> 32);
    for (int64_t k = 0; k < count; k += 4) {
        const uint64_t index = first + static_cast<uint64_t>(k);
        const rng::U32x4 r = rng::philox(static_cast<uint32_t>(index >> 2), static_cast<uint32_t>(index >> 34),
                                         s0, s1, k0, k1);
        for (int j = 0; j < 4; ++j) words[k + j] = r.v[j];  // the tile has room for a whole group
    }
}

}  // namespace

float dropoutScale(float rate) {
    if (rate <= 0.0f) return 1.0f;
    if (rate >= 1.0f) return 0.0f;
    return 1.0f / (1.0f - rate);
}

void dropoutForward(const float* x, float* y, uint8_t* mask, int64_t n, float rate, uint64_t seed,
                    uint64_t stream, bool training, ThreadPool& pool) {
    if (n <= 0) return;
    if (!training || rate <= 0.0f) {
        copy(x, y, n, pool);
        if (mask) std::memset(mask, 1, static_cast<size_t>(n));
        return;
    }
    if (rate >= 1.0f) {
        zero(y, n, pool);
        if (mask) std::memset(mask, 0, static_cast<size_t>(n));
        return;
    }
    const float scale = dropoutScale(rate);
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        uint32_t words[kTile];
        for (int64_t t0 = b; t0 < e; t0 += kTile) {
            const int64_t len = std::min(kTile, e - t0);
            randomWords(seed, stream, static_cast<uint64_t>(t0), len, words);
            for (int64_t k = 0; k < len; ++k) {
                // Exactly rng::uniform's value, so any implementation comparing it to `rate` agrees.
                const float u = static_cast<float>(words[k] >> 8) * (1.0f / 16777216.0f);
                const bool keep = u >= rate;
                y[t0 + k] = keep ? x[t0 + k] * scale : 0.0f;
                if (mask) mask[t0 + k] = static_cast<uint8_t>(keep);
            }
        }
    });
}

std::vector<int64_t> dropoutNoiseDims(std::span<const int64_t> noiseShape, std::span<const int64_t> dims) {
    if (noiseShape.size() != dims.size()) return {};
    std::vector<int64_t> noise(dims.begin(), dims.end());
    bool shared = false;
    for (size_t k = 0; k < dims.size(); ++k)
        if (noiseShape[k] == 1 && dims[k] > 1) {
            noise[k] = 1;
            shared = true;
        }
    if (!shared) return {};
    return noise;
}

void dropoutBroadcastForward(const float* x, float* y, uint8_t* mask, uint8_t* noiseKeep,
                             std::span<const int64_t> dims, std::span<const int64_t> noise, float rate,
                             uint64_t seed, uint64_t stream, bool training, ThreadPool& pool) {
    int64_t n = 1, m = 1;
    for (size_t k = 0; k < dims.size(); ++k) {
        n *= dims[k];
        m *= noise[k];
    }
    if (n <= 0) return;
    if (!training || rate <= 0.0f || rate >= 1.0f) {
        dropoutForward(x, y, mask, n, rate, seed, stream, training, pool);
        return;
    }
    // One decision per noise position, in the order plain dropout would draw them.
    parallelElements(pool, m, kGrain, [&](int64_t b, int64_t e) {
        uint32_t words[kTile];
        for (int64_t t0 = b; t0 < e; t0 += kTile) {
            const int64_t len = std::min(kTile, e - t0);
            randomWords(seed, stream, static_cast<uint64_t>(t0), len, words);
            for (int64_t k = 0; k < len; ++k)
                noiseKeep[t0 + k] = static_cast<uint8_t>(static_cast<float>(words[k] >> 8) * (1.0f / 16777216.0f) >= rate);
        }
    });
    // Element strides of the noise tensor, 0 along the shared axes.
    constexpr size_t kMaxRank = 8;
    const size_t rank = std::min(dims.size(), kMaxRank);
    int64_t stride[kMaxRank] = {};
    for (int64_t k = static_cast<int64_t>(rank) - 1, s = 1; k >= 0; --k) {
        stride[k] = noise[static_cast<size_t>(k)] == 1 ? 0 : s;
        s *= noise[static_cast<size_t>(k)];
    }
    const float scale = dropoutScale(rate);
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            int64_t rest = i, j = 0;
            for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
                const int64_t d = dims[static_cast<size_t>(k)];
                j += (rest % d) * stride[k];
                rest /= d;
            }
            const bool keep = noiseKeep[j] != 0;
            y[i] = keep ? x[i] * scale : 0.0f;
            if (mask) mask[i] = static_cast<uint8_t>(keep);
        }
    });
}

void dropoutBackward(const float* dy, const uint8_t* mask, float* dx, int64_t n, float rate, bool training,
                     ThreadPool& pool) {
    if (n <= 0) return;
    if (!training || rate <= 0.0f) {
        accumulate(dy, dx, n, pool);
        return;
    }
    if (rate >= 1.0f) return;  // nothing was kept: the gradient is zero
    const float scale = dropoutScale(rate);
    parallelElements(pool, n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dx[i] += mask[i] ? dy[i] * scale : 0.0f;
    });
}

}  // namespace kiln::engine::kernels
