// SPDX-License-Identifier: Apache-2.0
// Where a tensor lives and where a plan runs: "cpu" or "cuda:N".
#pragma once

#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace kiln::engine {

struct Device {
    enum class Kind { Cpu, Cuda };
    Kind kind = Kind::Cpu;
    int index = 0;

    static Device cpu() { return {}; }
    static Device cuda(int i) { return {Kind::Cuda, i}; }
    static Result<Device> parse(std::string_view text);  // "cpu", "cuda", "cuda:1"
    bool isCpu() const { return kind == Kind::Cpu; }
    std::string toString() const;
    bool operator==(const Device&) const = default;
};

}  // namespace kiln::engine
