// SPDX-License-Identifier: Apache-2.0
// DType names and 16-bit float conversions.
#include "engine/core/dtype.h"

#include <bit>
#include <cstring>

namespace kiln::engine {

std::string_view dtypeName(DType t) {
    switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I32: return "I32";
    case DType::I64: return "I64";
    case DType::U8: return "U8";
    case DType::Bool: return "BOOL";
    }
    return "?";
}

std::optional<DType> dtypeFromName(std::string_view n) {
    if (n == "F32") return DType::F32;
    if (n == "F16") return DType::F16;
    if (n == "BF16") return DType::BF16;
    if (n == "I32") return DType::I32;
    if (n == "I64") return DType::I64;
    if (n == "U8") return DType::U8;
    if (n == "BOOL") return DType::Bool;
    return std::nullopt;
}

uint16_t floatToBf16(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t floatToHalf(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
    if (absx < 0x38800000u) {                                               // subnormal or zero
        if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t mid = 1u << (shift - 1);
        uint32_t result = mant >> shift;
        if (rem > mid || (rem == mid && (result & 1u))) ++result;
        return static_cast<uint16_t>(sign | result);
    }
    uint32_t result = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
}

float halfToFloat(uint16_t h) {
    uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0) {
        if (mant == 0) {
            out = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
            out = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        out = sign | 0x7f800000u | (mant << 13);
    } else {
        out = sign | ((exp + 112) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(out);
}

}  // namespace kiln::engine
