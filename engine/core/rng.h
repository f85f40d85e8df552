// SPDX-License-Identifier: Apache-2.0
// Counter-based random numbers (Philox-4x32-10). A number depends only on (seed, stream, index),
// so the CPU and CUDA produce the same values for the same seed, in any order, on any thread.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__
#else
#define KILN_HD
#endif

namespace kiln::engine::rng {

struct U32x4 {
    uint32_t v[4];
};

KILN_HD inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
    uint64_t p = static_cast<uint64_t>(a) * b;
    *hi = static_cast<uint32_t>(p >> 32);
    return static_cast<uint32_t>(p);
}

// Philox-4x32 with 10 rounds over counter (c0..c3) and key (k0,k1).
KILN_HD inline U32x4 philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
    for (int r = 0; r < 10; ++r) {
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(kM0, c0, &hi0);
        uint32_t lo1 = mulhilo(kM1, c2, &hi1);
        uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += kW0;
        k1 += kW1;
    }
    return {{c0, c1, c2, c3}};
}

// The 32-bit random word number `index` of `stream` under `seed`.
KILN_HD inline uint32_t bits(uint64_t seed, uint64_t stream, uint64_t index) {
    U32x4 r = philox(static_cast<uint32_t>(index >> 2), static_cast<uint32_t>(index >> 34),
                     static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                     static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
    return r.v[index & 3u];
}

// Uniform in [0, 1) with 24 random bits.
KILN_HD inline float uniform(uint64_t seed, uint64_t stream, uint64_t index) {
    return static_cast<float>(bits(seed, stream, index) >> 8) * (1.0f / 16777216.0f);
}

// Standard normal by Box–Muller from words 2*index and 2*index+1.
KILN_HD inline float normal(uint64_t seed, uint64_t stream, uint64_t index) {
    float u1 = (static_cast<float>(bits(seed, stream, 2 * index) >> 8) + 1.0f) * (1.0f / 16777217.0f);
    float u2 = uniform(seed, stream, 2 * index + 1);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

// Mix two 64-bit values into a new seed (to derive per-node or per-epoch streams).
KILN_HD inline uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace kiln::engine::rng
