// SPDX-License-Identifier: Apache-2.0
// ByteReader on top of zlib's gz* file functions.
#include "engine/data/byte_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace kiln::engine::data {

namespace {

gzFile asGz(void* f) {
    return static_cast<gzFile>(f);
}

}  // namespace

Result<ByteReader> ByteReader::open(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status))
        return Error(ErrorCode::FileNotFound, "The file does not exist.").withFile(path).with("path", path);
    if (std::filesystem::is_directory(status))
        return Error(ErrorCode::FileRead, "This is a folder, not a file.")
            .withFile(path)
            .with("path", path)
            .with("reason", "is a folder");
    errno = 0;
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) {
        const std::string reason = errno != 0 ? std::strerror(errno) : "cannot open";
        return Error(ErrorCode::FileRead, "The file cannot be opened: " + reason + ".")
            .withFile(path)
            .with("path", path)
            .with("reason", reason);
    }
    gzbuffer(f, 1u << 18);
    ByteReader r;
    r.m_file = f;
    r.m_path = path;
    return r;
}

ByteReader::ByteReader(ByteReader&& other) noexcept
    : m_file(std::exchange(other.m_file, nullptr)),
      m_path(std::move(other.m_path)),
      m_offset(other.m_offset),
      m_truncated(other.m_truncated) {}

ByteReader& ByteReader::operator=(ByteReader&& other) noexcept {
    if (this != &other) {
        if (m_file != nullptr) gzclose(asGz(m_file));
        m_file = std::exchange(other.m_file, nullptr);
        m_path = std::move(other.m_path);
        m_offset = other.m_offset;
        m_truncated = other.m_truncated;
    }
    return *this;
}

ByteReader::~ByteReader() {
    if (m_file != nullptr) gzclose(asGz(m_file));
}

Result<int64_t> ByteReader::read(void* dst, int64_t n) {
    auto* out = static_cast<unsigned char*>(dst);
    int64_t total = 0;
    while (total < n) {
        const auto chunk = static_cast<unsigned>(std::min<int64_t>(n - total, int64_t{1} << 30));
        const int got = gzread(asGz(m_file), out + total, chunk);
        if (got < 0) {
            int errnum = 0;
            const char* msg = gzerror(asGz(m_file), &errnum);
            std::string reason =
                errnum == Z_ERRNO ? std::strerror(errno) : (msg != nullptr ? msg : "read error");
            return Error(ErrorCode::FileRead, "The file cannot be read at byte " +
                                                  std::to_string(m_offset + total) + ": " + reason + ".")
                .withFile(m_path)
                .with("path", m_path)
                .with("reason", reason);
        }
        total += got;
        if (static_cast<unsigned>(got) < chunk) {
            int errnum = 0;
            gzerror(asGz(m_file), &errnum);
            if (errnum == Z_BUF_ERROR) m_truncated = true;
            break;
        }
    }
    m_offset += total;
    return total;
}

bool ByteReader::compressed() const {
    return m_file != nullptr && gzdirect(asGz(m_file)) == 0;
}

Result<std::string> readWholeFile(const std::string& path) {
    KILN_ASSIGN(ByteReader reader, ByteReader::open(path));
    std::string text;
    std::error_code ec;
    const auto fileSize = std::filesystem::file_size(path, ec);
    text.resize(ec ? (size_t{1} << 16) : std::max<size_t>(static_cast<size_t>(fileSize) + 1, 4096));
    size_t used = 0;
    for (;;) {
        if (used == text.size()) text.resize(text.size() * 2);
        KILN_ASSIGN(int64_t got, reader.read(text.data() + used, static_cast<int64_t>(text.size() - used)));
        used += static_cast<size_t>(got);
        if (used < text.size()) break;
    }
    if (reader.truncated())
        return Error(ErrorCode::DataError, "The compressed data ends early, after " + std::to_string(used) +
                                               " bytes; the file is incomplete.")
            .withFile(path)
            .with("reason", "truncated");
    text.resize(used);
    return text;
}

}  // namespace kiln::engine::data
