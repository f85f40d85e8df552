// SPDX-License-Identifier: Apache-2.0
// Precision names.
#include "engine/core/precision.h"

#include <cctype>

namespace kiln::engine {

const char* precisionName(Precision p) {
    switch (p) {
    case Precision::Fp32:
        return "fp32";
    case Precision::Fp16:
        return "fp16";
    case Precision::Bf16:
        return "bf16";
    }
    return "fp32";
}

Result<Precision> parsePrecision(const std::string& text) {
    std::string t;
    for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "fp32" || t == "float32") return Precision::Fp32;
    if (t == "fp16" || t == "float16" || t == "mixed_float16") return Precision::Fp16;
    if (t == "bf16" || t == "bfloat16" || t == "mixed_bfloat16") return Precision::Bf16;
    return Error(ErrorCode::ConfigError, "precision must be fp32, fp16 or bf16, not \"" + text + "\"")
        .with("field", "precision")
        .with("reason", "must be fp32, fp16 or bf16");
}

}  // namespace kiln::engine
