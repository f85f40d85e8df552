// SPDX-License-Identifier: Apache-2.0
// Element types of tensors and their sizes and names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::engine {

enum class DType : uint8_t { F32, F16, BF16, I32, I64, U8, Bool };

constexpr size_t dtypeSize(DType t) {
    switch (t) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::U8: return 1;
    case DType::Bool: return 1;
    }
    return 0;
}

// Names as in safetensors ("F32", "F16", "BF16", "I32", "I64", "U8", "BOOL").
std::string_view dtypeName(DType t);
std::optional<DType> dtypeFromName(std::string_view name);

// IEEE half and bfloat16 conversions (round to nearest even).
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBf16(float f);
float bf16ToFloat(uint16_t b);

}  // namespace kiln::engine
