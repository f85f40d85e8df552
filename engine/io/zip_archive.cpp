// SPDX-License-Identifier: Apache-2.0
// Zip members through minizip's unzip API (64-bit offsets). minizip reads the central directory
// at the end of the file, so a truncated archive fails to open instead of reading garbage.
#include "engine/io/zip_archive.h"

#include <unzip.h>

#include <cstring>
#include <memory>

namespace kiln::engine::io {
namespace {

struct UnzCloser {
    void operator()(void* z) const { unzClose(z); }
};
using Unz = std::unique_ptr<void, UnzCloser>;

Error zipError(const std::string& path, const std::string& member, const std::string& what) {
    Error e(ErrorCode::ParseError, member.empty() ? what : "zip member \"" + member + "\": " + what);
    e.withFile(path).with("reason", what);
    if (!member.empty()) e.with("zip_member", member);
    return e;
}

Result<Unz> openZip(const std::string& path) {
    Unz z(unzOpen64(path.c_str()));
    if (!z) return zipError(path, {}, "not a zip archive, or a damaged or truncated one");
    return z;
}

}  // namespace

bool hasZipSignature(std::string_view b) { return b.size() >= 4 && std::memcmp(b.data(), "PK\x03\x04", 4) == 0; }

Result<std::vector<std::string>> zipMembers(const std::string& path) {
    KILN_ASSIGN(Unz z, openZip(path));
    std::vector<std::string> out;
    for (int rc = unzGoToFirstFile(z.get()); rc == UNZ_OK; rc = unzGoToNextFile(z.get())) {
        char name[1024];
        unz_file_info64 info;
        if (unzGetCurrentFileInfo64(z.get(), &info, name, sizeof name, nullptr, 0, nullptr, 0) != UNZ_OK)
            return zipError(path, {}, "the archive's directory is damaged");
        out.emplace_back(name);
        if (out.size() > 100000) return zipError(path, {}, "the archive has too many members");
    }
    return out;
}

Result<std::string> readZipMember(const std::string& path, const std::string& member, int64_t maxBytes) {
    KILN_ASSIGN(Unz z, openZip(path));
    if (unzLocateFile(z.get(), member.c_str(), 1) != UNZ_OK) return zipError(path, member, "the member is missing");
    unz_file_info64 info;
    if (unzGetCurrentFileInfo64(z.get(), &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK)
        return zipError(path, member, "the archive's directory is damaged");
    if (info.uncompressed_size > static_cast<uint64_t>(maxBytes)) return zipError(path, member, "the member is too large");
    if (unzOpenCurrentFile(z.get()) != UNZ_OK) return zipError(path, member, "the member cannot be opened (damaged, encrypted or an unknown compression)");
    std::string out(static_cast<size_t>(info.uncompressed_size), '\0');
    size_t at = 0;
    while (true) {
        char extra;
        const size_t want = at < out.size() ? out.size() - at : 1;
        // Reading into the spare byte once the expected size is reached detects a member longer
        // than its directory entry says.
        const int n = unzReadCurrentFile(z.get(), at < out.size() ? out.data() + at : &extra,
                                         static_cast<unsigned>(std::min<size_t>(want, 1u << 30)));
        if (n < 0) {
            unzCloseCurrentFile(z.get());
            return zipError(path, member, "the member's data is damaged or truncated");
        }
        if (n == 0) break;
        if (at >= out.size()) {
            unzCloseCurrentFile(z.get());
            return zipError(path, member, "the member is longer than the archive's directory says");
        }
        at += static_cast<size_t>(n);
    }
    const int rc = unzCloseCurrentFile(z.get());
    if (at != out.size()) return zipError(path, member, "the member's data is truncated");
    if (rc == UNZ_CRCERROR) return zipError(path, member, "the member's checksum does not match (damaged data)");
    if (rc != UNZ_OK) return zipError(path, member, "the member's data is damaged");
    return out;
}

}  // namespace kiln::engine::io
