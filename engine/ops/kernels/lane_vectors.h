// SPDX-License-Identifier: Apache-2.0
// Channel blocks for the memory-bound kernels (pooling, normalisation), as GCC vector types with
// partial loads and stores done by masked instructions (never a byte-wise copy):
//   vec16:  always 16 lanes: one zmm register in AVX-512 code, a pair of ymm registers otherwise;
//   native: one register of the instruction set compiled for (16 lanes AVX-512, 8 lanes AVX2).
// Lane-wise selects and comparisons on vec16 types compile to scalar code without AVX-512, so
// kernels that need them use native.
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

namespace vec16 {

constexpr int64_t kLanes = 16;
typedef float Vf __attribute__((vector_size(64)));
typedef int32_t Vi __attribute__((vector_size(64)));

// Loads n <= 16 floats, zero-filling the rest.
inline Vf loadN(const float* p, int64_t n) {
#if defined(__AVX512F__)
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p);
#else
    const __m256 lo = _mm256_maskload_ps(p, laneMask8(n));
    const __m256 hi = _mm256_maskload_ps(p + 8, laneMask8(n - 8));
    Vf v;
    std::memcpy(&v, &lo, sizeof lo);
    std::memcpy(reinterpret_cast<char*>(&v) + sizeof lo, &hi, sizeof hi);
    return v;
#endif
}

// Stores lanes [0, n) of v, n <= 16.
inline void storeN(float* p, Vf v, int64_t n) {
#if defined(__AVX512F__)
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
#else
    __m256 lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    _mm256_maskstore_ps(p, laneMask8(n), lo);
    _mm256_maskstore_ps(p + 8, laneMask8(n - 8), hi);
#endif
}

inline void storeN(int32_t* p, Vi v, int64_t n) {
#if defined(__AVX512F__)
    _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << n) - 1u), reinterpret_cast<__m512i>(v));
#else
    __m256i lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    _mm256_maskstore_epi32(p, laneMask8(n), lo);
    _mm256_maskstore_epi32(p + 8, laneMask8(n - 8), hi);
#endif
}

// max(v, 0) per lane, as the ReLU kernel computes it (v < 0 ? 0 : v): NaN and -0 pass through,
// because max returns its second operand unless the first is greater.
inline Vf relu(Vf v) {
#if defined(__AVX512F__)
    return _mm512_max_ps(_mm512_setzero_ps(), v);
#else
    __m256 lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    lo = _mm256_max_ps(_mm256_setzero_ps(), lo);
    hi = _mm256_max_ps(_mm256_setzero_ps(), hi);
    std::memcpy(&v, &lo, sizeof lo);
    std::memcpy(reinterpret_cast<char*>(&v) + sizeof lo, &hi, sizeof hi);
    return v;
#endif
}

// v in the lanes where key > 0, 0 elsewhere (the gradient of a ReLU whose output is key).
inline Vf wherePositive(Vf key, Vf v) {
#if defined(__AVX512F__)
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(key, _mm512_setzero_ps(), _CMP_GT_OQ), v);
#else
    __m256 klo, khi, vlo, vhi;
    std::memcpy(&klo, &key, sizeof klo);
    std::memcpy(&khi, reinterpret_cast<const char*>(&key) + sizeof klo, sizeof khi);
    std::memcpy(&vlo, &v, sizeof vlo);
    std::memcpy(&vhi, reinterpret_cast<const char*>(&v) + sizeof vlo, sizeof vhi);
    vlo = _mm256_and_ps(_mm256_cmp_ps(klo, _mm256_setzero_ps(), _CMP_GT_OQ), vlo);
    vhi = _mm256_and_ps(_mm256_cmp_ps(khi, _mm256_setzero_ps(), _CMP_GT_OQ), vhi);
    std::memcpy(&v, &vlo, sizeof vlo);
    std::memcpy(reinterpret_cast<char*>(&v) + sizeof vlo, &vhi, sizeof vhi);
    return v;
#endif
}

}  // namespace vec16

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
