// SPDX-License-Identifier: Apache-2.0
// Reading members of a zip archive (the .keras format) with minizip, zlib's unzip code. Damaged,
// truncated or oversized archives give an Error naming the file and the member.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::io {

bool hasZipSignature(std::string_view firstBytes);

// The names of the archive's members, in the archive's order.
Result<std::vector<std::string>> zipMembers(const std::string& path);
// One member's bytes (decompressed and checked against its CRC); larger than `maxBytes` is an error.
Result<std::string> readZipMember(const std::string& path, const std::string& member, int64_t maxBytes);

}  // namespace kiln::engine::io
