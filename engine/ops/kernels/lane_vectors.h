// SPDX-License-Identifier: Apache-2.0
// Channel blocks for the memory-bound kernels (pooling, normalisation), as GCC vector types with
// partial loads and stores done by masked instructions (never a byte-wise copy): `native` is one
// register of the instruction set compiled for (16 lanes AVX-512, 8 lanes AVX2). Kernels that
// want wider blocks use arrays of native vectors: GCC keeps a vector wider than the machine's
// registers on the stack and goes through memory for every operation on it.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

// GCC notes that passing 64-byte vectors by value depends on the ISA; these helpers are inline.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace kiln::engine::kernels {

#if !defined(__AVX512F__)
// Lanes [0, n) of 8, as a maskload/maskstore mask (sign bit set = lane used).
inline __m256i laneMask8(int64_t n) {
    const int k = static_cast<int>(n < 0 ? 0 : n > 8 ? 8 : n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

namespace native {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
#else
constexpr int64_t kLanes = 8;
#endif
typedef float Vf __attribute__((vector_size(kLanes * 4)));
typedef int32_t Vi __attribute__((vector_size(kLanes * 4)));

// Loads n <= kLanes floats, zero-filling the rest.
inline Vf loadN(const float* p, int64_t n) {
#if defined(__AVX512F__)
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p);
#else
    return _mm256_maskload_ps(p, laneMask8(n));
#endif
}
inline void storeN(float* p, Vf v, int64_t n) {
#if defined(__AVX512F__)
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
#else
    _mm256_maskstore_ps(p, laneMask8(n), v);
#endif
}
inline void storeN(int32_t* p, Vi v, int64_t n) {
#if defined(__AVX512F__)
    _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << n) - 1u), reinterpret_cast<__m512i>(v));
#else
    _mm256_maskstore_epi32(p, laneMask8(n), reinterpret_cast<__m256i>(v));
#endif
}

}  // namespace native

}  // namespace kiln::engine::kernels
