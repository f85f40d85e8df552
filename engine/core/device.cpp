// SPDX-License-Identifier: Apache-2.0
// Device names.
#include "engine/core/device.h"

#include <charconv>

namespace kiln::engine {

Result<Device> Device::parse(std::string_view text) {
    if (text == "cpu") return Device::cpu();
    if (text == "cuda" || text == "gpu") return Device::cuda(0);
    if (text.starts_with("cuda:")) {
        std::string_view num = text.substr(5);
        int idx = -1;
        auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), idx);
        if (ec == std::errc() && p == num.data() + num.size() && idx >= 0) return Device::cuda(idx);
    }
    return Error(ErrorCode::InvalidArgument,
                 "unknown device \"" + std::string(text) + "\": use cpu or cuda:N")
        .with("device", std::string(text));
}

std::string Device::toString() const {
    return kind == Kind::Cpu ? std::string("cpu") : "cuda:" + std::to_string(index);
}

}  // namespace kiln::engine
