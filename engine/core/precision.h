// SPDX-License-Identifier: Apache-2.0
// The precision a run computes in. Values, gradients and optimizer state stay float32 at every
// precision; fp16/bf16 only stage the matrix inputs of Dense/Conv2D in 16 bits on a GPU.
#pragma once

#include <string>

#include "engine/core/error.h"

namespace kiln::engine {

enum class Precision { Fp32, Fp16, Bf16 };
const char* precisionName(Precision p);
Result<Precision> parsePrecision(const std::string& text);  // "fp32", "fp16", "bf16" (also "float32", ...)

}  // namespace kiln::engine
