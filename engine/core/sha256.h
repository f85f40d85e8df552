// SPDX-License-Identifier: Apache-2.0
// SHA-256 (FIPS 180-4) of byte strings and files, as lowercase hex: the file digests in a
// model version's manifest.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace kiln::engine {

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    // The digest as 64 lowercase hex digits; the object must not be updated afterwards.
    std::string hexDigest();

private:
    void block(const uint8_t* p);
    std::array<uint32_t, 8> m_h;
    std::array<uint8_t, 64> m_buffer{};
    size_t m_buffered = 0;
    uint64_t m_length = 0;  // bytes so far
};

std::string sha256Hex(std::string_view bytes);
// Reads the file in chunks; errors name the path.
Result<std::string> sha256File(const std::string& path);

}  // namespace kiln::engine
