// SPDX-License-Identifier: Apache-2.0
// TFRecord framing, CRC32C and the zlib/gzip stream wrapping (zlib's deflate/inflate with
// 256 KiB buffers, so memory stays bounded whatever the file size).
#include "engine/data/tfrecord.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace kiln::engine::data {
namespace {

constexpr size_t kBufferSize = 256 * 1024;

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
struct Crc32cTables {
    std::array<std::array<uint32_t, 256>, 8> t{};
    constexpr Crc32cTables() {
        for (uint32_t b = 0; b < 256; ++b) {
            uint32_t c = b;
            for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
            t[0][b] = c;
        }
        for (uint32_t b = 0; b < 256; ++b)
            for (size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
    }
};
constexpr Crc32cTables kTables;

void putU64(char* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFFu);
}
void putU32(char* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFFu);
}
uint64_t getU64(const char* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
}
uint32_t getU32(const char* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
}

z_stream* zs(void* p) { return static_cast<z_stream*>(p); }

int windowBits(TfRecordCompression c) { return c == TfRecordCompression::Gzip ? MAX_WBITS + 16 : MAX_WBITS; }

Error writeError(const std::string& path, const std::string& reason) {
    return Error(ErrorCode::FileWrite, "cannot write " + path + ": " + reason)
        .withFile(path)
        .with("path", path)
        .with("reason", reason);
}

}  // namespace

uint32_t crc32cSoftware(const void* data, size_t size, uint32_t crc) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint32_t c = ~crc;
    const auto& t = kTables.t;
    while (size >= 8) {
        uint32_t lo = c ^ (static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                           static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
        c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
            t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        p += 8;
        size -= 8;
    }
    while (size--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
    return ~c;
}

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
#if defined(__SSE4_2__) && defined(__x86_64__)
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t c = ~crc;
    while (size >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        size -= 8;
    }
    auto c32 = static_cast<uint32_t>(c);
    while (size--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
#else
    return crc32cSoftware(data, size, crc);
#endif
}

Result<TfRecordCompression> parseTfRecordCompression(std::string_view name) {
    std::string up(name);
    for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (up.empty() || up == "NONE") return TfRecordCompression::None;
    if (up == "ZLIB") return TfRecordCompression::Zlib;
    if (up == "GZIP") return TfRecordCompression::Gzip;
    return Error(ErrorCode::InvalidArgument,
                 "compression \"" + std::string(name) + "\" is not known (use \"\", \"ZLIB\" or \"GZIP\")")
        .with("field", "compression")
        .with("reason", "unknown compression");
}

const char* tfRecordCompressionName(TfRecordCompression c) {
    switch (c) {
    case TfRecordCompression::None: return "";
    case TfRecordCompression::Zlib: return "ZLIB";
    case TfRecordCompression::Gzip: return "GZIP";
    }
    return "";
}

// ---------------------------------------------------------------------------------------------
// Writer

Result<std::unique_ptr<TfRecordWriter>> TfRecordWriter::create(const std::string& path, TfRecordCompression compression,
                                                               int level) {
    std::unique_ptr<TfRecordWriter> w(new TfRecordWriter());
    w->m_path = path;
    w->m_compression = compression;
    w->m_file = std::fopen(path.c_str(), "wb");
    if (!w->m_file) return writeError(path, std::strerror(errno));
    std::setvbuf(w->m_file, nullptr, _IOFBF, kBufferSize);
    if (compression != TfRecordCompression::None) {
        auto* z = new z_stream{};
        w->m_zstream = z;
        // Same options as TensorFlow's writer: deflate, memLevel 9, default strategy.
        if (deflateInit2(z, level, Z_DEFLATED, windowBits(compression), 9, Z_DEFAULT_STRATEGY) != Z_OK) {
            delete z;
            w->m_zstream = nullptr;
            return writeError(path, "cannot start the compressed stream");
        }
        w->m_out.resize(kBufferSize);
    }
    return w;
}

TfRecordWriter::~TfRecordWriter() { (void)close(); }

Status TfRecordWriter::deflateSome(int flushMode) {
    z_stream* z = zs(m_zstream);
    for (;;) {
        z->next_out = reinterpret_cast<Bytef*>(m_out.data());
        z->avail_out = static_cast<uInt>(m_out.size());
        int rc = deflate(z, flushMode);
        if (rc == Z_STREAM_ERROR) return writeError(m_path, "compression failed");
        size_t produced = m_out.size() - z->avail_out;
        if (produced && std::fwrite(m_out.data(), 1, produced, m_file) != produced)
            return writeError(m_path, std::strerror(errno));
        if (flushMode == Z_NO_FLUSH) {
            if (z->avail_in == 0) return {};
        } else if (flushMode == Z_FINISH) {
            if (rc == Z_STREAM_END) return {};
        } else if (z->avail_out != 0) {
            return {};
        }
    }
}

Status TfRecordWriter::writeRaw(const void* data, size_t size) {
    if (!m_file) return writeError(m_path, "the writer is closed");
    if (size == 0) return {};
    if (!m_zstream) {
        if (std::fwrite(data, 1, size, m_file) != size) return writeError(m_path, std::strerror(errno));
        return {};
    }
    z_stream* z = zs(m_zstream);
    z->next_in = const_cast<Bytef*>(static_cast<const Bytef*>(data));
    z->avail_in = static_cast<uInt>(size);
    return deflateSome(Z_NO_FLUSH);
}

Status TfRecordWriter::write(std::string_view payload) {
    char header[12];
    putU64(header, payload.size());
    putU32(header + 8, maskCrc32c(crc32c(header, 8)));
    char footer[4];
    putU32(footer, maskCrc32c(crc32c(payload.data(), payload.size())));
    KILN_TRY(writeRaw(header, sizeof header));
    KILN_TRY(writeRaw(payload.data(), payload.size()));
    KILN_TRY(writeRaw(footer, sizeof footer));
    ++m_records;
    m_position += kTfRecordOverhead + static_cast<int64_t>(payload.size());
    return {};
}

Status TfRecordWriter::flush() {
    if (!m_file) return writeError(m_path, "the writer is closed");
    if (m_zstream) KILN_TRY(deflateSome(Z_SYNC_FLUSH));
    if (std::fflush(m_file) != 0) return writeError(m_path, std::strerror(errno));
    return {};
}

Status TfRecordWriter::close() {
    if (!m_file) return {};
    Status st;
    if (m_zstream) {
        st = deflateSome(Z_FINISH);
        deflateEnd(zs(m_zstream));
        delete zs(m_zstream);
        m_zstream = nullptr;
    }
    if (std::fclose(m_file) != 0 && st.ok()) st = writeError(m_path, std::strerror(errno));
    m_file = nullptr;
    return st;
}

// ---------------------------------------------------------------------------------------------
// Reader

Result<std::unique_ptr<TfRecordReader>> TfRecordReader::open(const std::string& path, TfRecordCompression compression) {
    struct stat sb {};
    if (::stat(path.c_str(), &sb) != 0)
        return Error(ErrorCode::FileNotFound, "TFRecord file " + path + " does not exist").withFile(path).with("path", path);
    std::unique_ptr<TfRecordReader> r(new TfRecordReader());
    r->m_path = path;
    r->m_compression = compression;
    r->m_file = std::fopen(path.c_str(), "rb");
    if (!r->m_file)
        return Error(ErrorCode::FileRead, "cannot open " + path + ": " + std::strerror(errno))
            .withFile(path)
            .with("path", path)
            .with("reason", std::strerror(errno));
    r->m_in.resize(kBufferSize);
    if (compression != TfRecordCompression::None) {
        auto* z = new z_stream{};
        r->m_zstream = z;
        if (inflateInit2(z, windowBits(compression)) != Z_OK) {
            delete z;
            r->m_zstream = nullptr;
            return Error(ErrorCode::FileRead, "cannot start decompressing " + path).withFile(path).with("path", path);
        }
    }
    return r;
}

TfRecordReader::~TfRecordReader() {
    if (m_zstream) {
        inflateEnd(zs(m_zstream));
        delete zs(m_zstream);
    }
    if (m_file) std::fclose(m_file);
}

Error TfRecordReader::dataError(int64_t offset, const std::string& reason) const {
    return Error(ErrorCode::DataError, m_path + ": " + reason + " in the record at byte offset " + std::to_string(offset))
        .withFile(m_path)
        .with("file", m_path)
        .with("offset", std::to_string(offset))
        .with("reason", reason);
}

Result<size_t> TfRecordReader::readBytes(char* dst, size_t n) {
    size_t got = 0;
    if (!m_zstream) {
        while (got < n) {
            if (m_inPos == m_inEnd) {
                if (m_fileEof) break;
                m_inEnd = std::fread(m_in.data(), 1, m_in.size(), m_file);
                m_inPos = 0;
                if (m_inEnd == 0) {
                    m_fileEof = true;
                    if (std::ferror(m_file)) return dataError(m_position, "read error");
                    break;
                }
            }
            size_t take = std::min(n - got, m_inEnd - m_inPos);
            std::memcpy(dst + got, m_in.data() + m_inPos, take);
            m_inPos += take;
            got += take;
        }
        m_streamPos += static_cast<int64_t>(got);
        return got;
    }
    z_stream* z = zs(m_zstream);
    while (got < n) {
        if (z->avail_in == 0 && !m_fileEof) {
            size_t k = std::fread(m_in.data(), 1, m_in.size(), m_file);
            if (k == 0) {
                m_fileEof = true;
                if (std::ferror(m_file)) return dataError(m_position, "read error");
            }
            z->next_in = reinterpret_cast<Bytef*>(m_in.data());
            z->avail_in = static_cast<uInt>(k);
        }
        if (m_streamEnded) {
            // Concatenated streams (e.g. gzip members appended to one another) continue.
            if (z->avail_in == 0) break;
            inflateReset(z);
            m_streamEnded = false;
        }
        if (z->avail_in == 0 && m_fileEof) break;
        z->next_out = reinterpret_cast<Bytef*>(dst + got);
        z->avail_out = static_cast<uInt>(n - got);
        int rc = inflate(z, Z_NO_FLUSH);
        got = n - z->avail_out;
        if (rc == Z_STREAM_END) {
            m_streamEnded = true;
        } else if (rc == Z_BUF_ERROR) {
            if (z->avail_in == 0 && m_fileEof) break;
        } else if (rc != Z_OK) {
            return dataError(m_position, std::string("corrupt compressed data (") + (z->msg ? z->msg : "zlib error") + ")");
        }
    }
    m_streamPos += static_cast<int64_t>(got);
    return got;
}

Result<bool> TfRecordReader::next(std::string& payload) {
    if (!m_file) return dataError(m_position, "the reader is closed");
    char header[12];
    const int64_t offset = m_position;
    KILN_ASSIGN(size_t got, readBytes(header, sizeof header));
    if (got == 0) {
        if (m_zstream && !m_streamEnded && m_streamPos > 0)
            return dataError(offset, "truncated file (the compressed stream ends early)");
        return false;
    }
    if (got < sizeof header) return dataError(offset, "truncated file (the record header is incomplete)");
    const uint64_t length = getU64(header);
    if (unmaskCrc32c(getU32(header + 8)) != crc32c(header, 8))
        return dataError(offset, "corrupt record length (CRC mismatch)");
    // The length CRC passed, so the length is what the writer wrote; read in bounded pieces so a
    // truncated file never makes us allocate more than it holds.
    payload.clear();
    uint64_t remaining = length;
    while (remaining > 0) {
        size_t piece = static_cast<size_t>(std::min<uint64_t>(remaining, kBufferSize));
        size_t old = payload.size();
        payload.resize(old + piece);
        KILN_ASSIGN(size_t k, readBytes(payload.data() + old, piece));
        if (k < piece) return dataError(offset, "truncated file (the record data is incomplete)");
        remaining -= piece;
    }
    char footer[4];
    KILN_ASSIGN(size_t f, readBytes(footer, sizeof footer));
    if (f < sizeof footer) return dataError(offset, "truncated file (the record CRC is missing)");
    if (m_verifyPayload && unmaskCrc32c(getU32(footer)) != crc32c(payload.data(), payload.size()))
        return dataError(offset, "corrupt record data (CRC mismatch)");
    m_position = m_streamPos;
    ++m_index;
    return true;
}

Status TfRecordReader::rewind() {
    if (std::fseek(m_file, 0, SEEK_SET) != 0) return dataError(0, "cannot seek");
    m_inPos = m_inEnd = 0;
    m_fileEof = false;
    m_streamEnded = false;
    m_streamPos = 0;
    m_position = 0;
    m_index = 0;
    if (m_zstream) {
        z_stream* z = zs(m_zstream);
        inflateReset(z);
        z->next_in = nullptr;
        z->avail_in = 0;
    }
    return {};
}

Status TfRecordReader::seek(int64_t position, int64_t recordIndex) {
    if (position < 0) return dataError(position, "cannot seek to a negative position");
    if (!m_zstream) {
        if (fseeko(m_file, static_cast<off_t>(position), SEEK_SET) != 0) return dataError(position, "cannot seek");
        m_inPos = m_inEnd = 0;
        m_fileEof = false;
        m_streamPos = m_position = position;
    } else {
        if (position < m_streamPos) KILN_TRY(rewind());
        std::string scratch(std::min<int64_t>(position - m_streamPos, static_cast<int64_t>(kBufferSize)), '\0');
        while (m_streamPos < position) {
            size_t want = static_cast<size_t>(std::min<int64_t>(position - m_streamPos, static_cast<int64_t>(scratch.size())));
            KILN_ASSIGN(size_t k, readBytes(scratch.data(), want));
            if (k < want) return dataError(position, "cannot seek past the end of the file");
        }
        m_position = position;
    }
    if (recordIndex >= 0) m_index = recordIndex;
    return {};
}

}  // namespace kiln::engine::data
