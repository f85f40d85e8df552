// SPDX-License-Identifier: Apache-2.0
// TFRecord files: framed records (length, masked CRC32C of the length, payload, masked CRC32C of
// the payload), optionally wrapped as a whole in a ZLIB or GZIP stream. Streaming, bounded memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace kiln::engine::data {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), extending `crc` (0 to start).
// Uses the SSE4.2 crc32 instruction when compiled for it, else slicing-by-8 tables.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);
inline uint32_t crc32c(std::string_view s) { return crc32c(s.data(), s.size()); }
// The table (slicing-by-8) implementation, whatever the CPU; crc32c() gives the same values.
uint32_t crc32cSoftware(const void* data, size_t size, uint32_t crc = 0);

// The stored form of a CRC in TFRecord files: rotated right by 15 bits plus a constant, so that a
// CRC over data holding CRCs stays meaningful.
constexpr uint32_t kTfRecordMaskDelta = 0xA282EAD8u;
constexpr uint32_t maskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kTfRecordMaskDelta; }
constexpr uint32_t unmaskCrc32c(uint32_t masked) {
    uint32_t rot = masked - kTfRecordMaskDelta;
    return (rot >> 17) | (rot << 15);
}

// The compression of the whole byte stream; not recorded in the file, the reader must be told.
enum class TfRecordCompression { None, Zlib, Gzip };

// "" / "NONE" → None, "ZLIB", "GZIP" (case-insensitive, as tf.data's compression_type);
// InvalidArgument naming the value otherwise.
Result<TfRecordCompression> parseTfRecordCompression(std::string_view name);
const char* tfRecordCompressionName(TfRecordCompression c);  // "", "ZLIB", "GZIP"

// Bytes of framing around each payload: 8 (length) + 4 (length CRC) + 4 (payload CRC).
constexpr int64_t kTfRecordOverhead = 16;

class TfRecordWriter {
public:
    // Creates (truncates) `path`. FileWrite naming the file when it cannot be created.
    // `level` is the zlib level (-1 = zlib's default) for ZLIB/GZIP.
    static Result<std::unique_ptr<TfRecordWriter>> create(const std::string& path,
                                                          TfRecordCompression compression = TfRecordCompression::None,
                                                          int level = -1);
    ~TfRecordWriter();  // closes (errors are lost: call close() to see them)
    TfRecordWriter(const TfRecordWriter&) = delete;
    TfRecordWriter& operator=(const TfRecordWriter&) = delete;

    Status write(std::string_view payload);
    // Pushes buffered bytes to the operating system (a compressed stream gets a sync flush, so a
    // reader sees every record written so far). Not needed before close().
    Status flush();
    // Finishes the compressed stream and closes the file; further writes fail.
    Status close();

    const std::string& path() const { return m_path; }
    int64_t records() const { return m_records; }
    // Uncompressed bytes written so far (the position of the next record).
    int64_t position() const { return m_position; }

private:
    TfRecordWriter() = default;
    Status writeRaw(const void* data, size_t size);
    Status deflateSome(int flushMode);

    std::string m_path;
    std::FILE* m_file = nullptr;
    TfRecordCompression m_compression = TfRecordCompression::None;
    void* m_zstream = nullptr;  // z_stream, for ZLIB/GZIP
    std::string m_out;          // compressed output buffer
    int64_t m_records = 0;
    int64_t m_position = 0;
};

class TfRecordReader {
public:
    // FileNotFound naming the file when it does not exist; FileRead when it cannot be opened.
    static Result<std::unique_ptr<TfRecordReader>> open(const std::string& path,
                                                        TfRecordCompression compression = TfRecordCompression::None);
    ~TfRecordReader();
    TfRecordReader(const TfRecordReader&) = delete;
    TfRecordReader& operator=(const TfRecordReader&) = delete;

    // Reads the next record into `payload`: true when one was read, false at the clean end of the
    // file. DataError naming the file and the byte offset of the record (params "file", "offset",
    // "reason") on a CRC mismatch, a truncated record or corrupt compressed data.
    Result<bool> next(std::string& payload);

    // Byte offset (in the uncompressed stream) of the next record; pass it to seek() to come back.
    int64_t position() const { return m_position; }
    // Number of records read since the start of the file (kept by seek() when it can tell).
    int64_t recordIndex() const { return m_index; }
    // Continues reading at a position earlier returned by position(). Compressed files are
    // re-read from the start up to that point. `recordIndex` restores recordIndex().
    Status seek(int64_t position, int64_t recordIndex = -1);

    // Payload CRC checking is on by default; the length CRC is always checked.
    void setVerifyPayload(bool on) { m_verifyPayload = on; }
    const std::string& path() const { return m_path; }

private:
    TfRecordReader() = default;
    // Reads up to n bytes of the (decompressed) stream; fewer only at its end.
    Result<size_t> readBytes(char* dst, size_t n);
    Status rewind();
    Error dataError(int64_t offset, const std::string& reason) const;

    std::string m_path;
    std::FILE* m_file = nullptr;
    TfRecordCompression m_compression = TfRecordCompression::None;
    void* m_zstream = nullptr;
    std::string m_in;       // input buffer (compressed bytes, or plain bytes)
    size_t m_inPos = 0;     // plain: next unread byte of m_in
    size_t m_inEnd = 0;
    bool m_streamEnded = false;
    bool m_fileEof = false;
    int64_t m_position = 0;  // uncompressed offset of the next record
    int64_t m_streamPos = 0; // uncompressed bytes consumed so far
    int64_t m_index = 0;
    bool m_verifyPayload = true;
};

}  // namespace kiln::engine::data
