// SPDX-License-Identifier: Apache-2.0
// The register vocabulary of the compute-bound tile kernels (tile_kernels_isa.cpp,
// winograd_isa.cpp): one register of floats of the instruction set a variant is compiled for,
// a lane mask, masked and plain loads and stores, and a broadcast. Included only by those per-ISA
// sources, inside their KILN_ISA_NS namespace, so the variants never share a symbol.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#if !defined(KILN_ISA_NS)
#error "tile_vectors_isa.h belongs to the per-ISA kernel sources that define KILN_ISA_NS"
#endif

// GCC notes that passing vector types by value depends on the ISA; these helpers are inline.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace kiln::engine::kernels::KILN_ISA_NS {
namespace {

#if defined(KILN_ISA_AVX512)
// 32 registers of 16 floats; masked loads and stores are single instructions.
constexpr int kLanes = 16;
typedef float Vec __attribute__((vector_size(64)));
using Mask = __mmask16;
// Lanes [0, n) of a register; none for n <= 0.
inline Mask laneMask(int64_t n) {
    return n >= kLanes ? Mask(0xFFFF) : n <= 0 ? Mask(0)
                                               : Mask((1u << n) - 1u);
}
inline Vec loadMasked(const float* p, Mask m) {
    return _mm512_maskz_loadu_ps(m, p);
}
inline void storeMasked(float* p, Vec v, Mask m) {
    _mm512_mask_storeu_ps(p, m, v);
}
inline Vec splat(float s) {
    return _mm512_set1_ps(s);  // folds into the FMA as an embedded broadcast
}
#else
// 16 registers of 8 floats; a mask is a vector whose valid lanes have the sign bit set.
constexpr int kLanes = 8;
typedef float Vec __attribute__((vector_size(32)));
using Mask = __m256i;
// Lanes [0, n) of a register; none for n <= 0 (the comparison is false in every lane).
inline Mask laneMask(int64_t n) {
    const int64_t k = n >= kLanes ? kLanes : n;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec loadMasked(const float* p, Mask m) {
    return _mm256_maskload_ps(p, m);
}
inline void storeMasked(float* p, Vec v, Mask m) {
    _mm256_maskstore_ps(p, m, v);
}
inline Vec splat(float s) {
    return _mm256_set1_ps(s);
}
#endif
// True when every lane of `m` is set: the vector may then be loaded and stored with plain
// instructions (with AVX2 a masked store costs far more than a plain one).
inline bool maskFull(Mask m) {
#if defined(KILN_ISA_AVX512)
    return m == Mask(0xFFFF);
#else
    return _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF;
#endif
}
inline Vec loadVec(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void storeVec(float* p, Vec v) {
    std::memcpy(p, &v, sizeof v);
}

}  // namespace
}  // namespace kiln::engine::kernels::KILN_ISA_NS
