// SPDX-License-Identifier: Apache-2.0
// Sequential reading of data files that may be gzip-compressed: ".gz" files are decompressed on
// the fly, plain files are read as they are (zlib's gz* functions handle both).
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/error.h"

namespace kiln::engine::data {

class ByteReader {
public:
    // FileNotFound when `path` does not exist, FileRead when it cannot be opened.
    static Result<ByteReader> open(const std::string& path);

    ByteReader(ByteReader&& other) noexcept;
    ByteReader& operator=(ByteReader&& other) noexcept;
    ByteReader(const ByteReader&) = delete;
    ByteReader& operator=(const ByteReader&) = delete;
    ~ByteReader();

    // Reads up to `n` bytes; fewer only at the end of the data. Fails (FileRead) on corrupt
    // compressed data. A gzip stream that ends early is not an error here: the read comes back
    // short and truncated() turns true.
    Result<int64_t> read(void* dst, int64_t n);
    // Uncompressed bytes delivered so far.
    int64_t offset() const { return m_offset; }
    // True once a read reached the end of the file in the middle of a gzip stream.
    bool truncated() const { return m_truncated; }
    const std::string& path() const { return m_path; }
    // True when the file is gzip data (reliable after the first read).
    bool compressed() const;

private:
    ByteReader() = default;

    void* m_file = nullptr;  // gzFile
    std::string m_path;
    int64_t m_offset = 0;
    bool m_truncated = false;
};

// The whole (decompressed) content of a file. A gzip stream that ends early is an error.
Result<std::string> readWholeFile(const std::string& path);

}  // namespace kiln::engine::data
