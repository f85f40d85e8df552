// SPDX-License-Identifier: Apache-2.0
// SHA-256 through OpenSSL's EVP digest interface.
#include "engine/core/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <new>
#include <vector>

namespace kiln::engine {

struct Sha256::Context {
    EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : m_ctx(std::make_unique<Context>()) {
    m_ctx->md = EVP_MD_CTX_new();
    if (!m_ctx->md || EVP_DigestInit_ex(m_ctx->md, EVP_sha256(), nullptr) != 1) throw std::bad_alloc();
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(m_ctx->md);
}

void Sha256::update(const void* data, size_t size) {
    if (size > 0) EVP_DigestUpdate(m_ctx->md, data, size);
}

std::string Sha256::hexDigest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(m_ctx->md, digest, &length);
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(kHex[digest[i] >> 4]);
        out.push_back(kHex[digest[i] & 15]);
    }
    return out;
}

std::string sha256Hex(std::string_view bytes) {
    Sha256 h;
    h.update(bytes.data(), bytes.size());
    return h.hexDigest();
}

Result<std::string> sha256File(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error(ErrorCode::FileRead, "cannot read " + path).withFile(path).with("path", path).with("reason", "cannot open");
    Sha256 h;
    std::vector<char> chunk(1 << 20);
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        h.update(chunk.data(), static_cast<size_t>(in.gcount()));
    }
    if (in.bad()) return Error(ErrorCode::FileRead, "cannot read " + path).withFile(path).with("path", path).with("reason", "read error");
    return h.hexDigest();
}

}  // namespace kiln::engine
