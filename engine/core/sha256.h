// SPDX-License-Identifier: Apache-2.0
// SHA-256 of byte strings and files, as lowercase hex: the file digests in a model version's
// manifest. The digest itself is OpenSSL's (libcrypto).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace kiln::engine {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* data, size_t size);
    // The digest as 64 lowercase hex digits; the object must not be updated afterwards.
    std::string hexDigest();

private:
    struct Context;
    std::unique_ptr<Context> m_ctx;
};

std::string sha256Hex(std::string_view bytes);
// Reads the file in chunks; errors name the path.
Result<std::string> sha256File(const std::string& path);

}  // namespace kiln::engine
