// SPDX-License-Identifier: Apache-2.0
// IDX parsing: a 4-byte magic (0, 0, element type, dimension count), big-endian u32 dimensions,
// then the elements in big-endian order.
#include "engine/data/idx_reader.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/data/byte_reader.h"

namespace kiln::engine::data {

namespace {

constexpr int kMaxRank = 16;

std::string hex32(uint32_t v) {
    std::array<char, 16> buf{};
    std::snprintf(buf.data(), buf.size(), "0x%08X", v);
    return buf.data();
}

int elementBytes(uint8_t type) {
    switch (type) {
    case 0x08:
    case 0x09:
        return 1;
    case 0x0B:
        return 2;
    case 0x0C:
    case 0x0D:
        return 4;
    case 0x0E:
        return 8;
    default:
        return 0;
    }
}

uint32_t loadBe32(const unsigned char* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

uint64_t loadBe64(const unsigned char* p) {
    return (uint64_t{loadBe32(p)} << 32) | uint64_t{loadBe32(p + 4)};
}

// Converts `count` big-endian elements of `type` to float.
void convert(uint8_t type, const unsigned char* src, int64_t count, bool scale, float* dst) {
    switch (type) {
    case 0x08: {
        const float k = scale ? 1.0f / 255.0f : 1.0f;
        for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(src[i]) * k;
        break;
    }
    case 0x09:
        for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(static_cast<int8_t>(src[i]));
        break;
    case 0x0B:
        for (int64_t i = 0; i < count; ++i) {
            const auto v = static_cast<uint16_t>((src[2 * i] << 8) | src[2 * i + 1]);
            dst[i] = static_cast<float>(static_cast<int16_t>(v));
        }
        break;
    case 0x0C:
        for (int64_t i = 0; i < count; ++i)
            dst[i] = static_cast<float>(static_cast<int32_t>(loadBe32(src + 4 * i)));
        break;
    case 0x0D:
        for (int64_t i = 0; i < count; ++i) dst[i] = std::bit_cast<float>(loadBe32(src + 4 * i));
        break;
    case 0x0E:
        for (int64_t i = 0; i < count; ++i)
            dst[i] = static_cast<float>(std::bit_cast<double>(loadBe64(src + 8 * i)));
        break;
    default:
        break;
    }
}

Error truncatedAt(const std::string& path, int64_t byte, const std::string& what, bool streamCut) {
    std::string msg = "The IDX file is truncated at byte " + std::to_string(byte) + ": " + what;
    if (streamCut) msg += " (the compressed stream ends early)";
    msg += ".";
    return Error(ErrorCode::DataError, msg)
        .withFile(path)
        .with("reason", "truncated")
        .with("byte", std::to_string(byte));
}

std::string plural(int64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

Result<IdxArray> readIdxArray(const std::string& path, int64_t limit, bool scaleToUnit) {
    KILN_ASSIGN(ByteReader in, ByteReader::open(path));

    std::array<unsigned char, 4> magic{};
    KILN_ASSIGN(int64_t got, in.read(magic.data(), 4));
    if (got < 4)
        return truncatedAt(path, in.offset(), "the 4-byte magic number is incomplete", in.truncated());
    const uint32_t magicValue = loadBe32(magic.data());
    const uint8_t type = magic[2];
    const int rank = magic[3];
    const int64_t headerBytes = 4 + 4 * int64_t{rank};
    if (magic[0] != 0 || magic[1] != 0 || elementBytes(type) == 0 || rank < 1 || rank > kMaxRank)
        return Error(ErrorCode::DataError,
                     "Bad magic " + hex32(magicValue) +
                         ": not an IDX file (expected two zero bytes, an element type 0x08, 0x09 or "
                         "0x0B..0x0E, and 1.." +
                         std::to_string(kMaxRank) + " dimensions, e.g. 0x00000803 for 8-bit images).")
            .withFile(path)
            .with("reason", "bad magic")
            .with("magic", hex32(magicValue));

    std::array<unsigned char, size_t{4} * kMaxRank> dimBytes{};
    KILN_ASSIGN(got, in.read(dimBytes.data(), headerBytes - 4));
    if (got < headerBytes - 4)
        return truncatedAt(
            path, in.offset(),
            "the header announces " + plural(rank, "dimension") + " but their sizes are missing",
            in.truncated());

    IdxArray out;
    out.type = static_cast<IdxType>(type);
    out.dims.resize(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d)
        out.dims[static_cast<size_t>(d)] = loadBe32(dimBytes.data() + 4 * static_cast<ptrdiff_t>(d));
    out.storedCount = out.dims[0];
    const int64_t items = limit >= 0 ? std::min(limit, out.storedCount) : out.storedCount;
    out.dims[0] = items;

    int64_t perItem = 1;
    for (int d = 1; d < rank; ++d) {
        const int64_t dim = out.dims[static_cast<size_t>(d)];
        if (dim > 0 && perItem > (int64_t{1} << 40) / dim)
            return Error(ErrorCode::DataError, "The IDX header announces items of more than 2^40 elements.")
                .withFile(path)
                .with("reason", "too large");
        perItem *= dim;
    }
    const int esize = elementBytes(type);
    const int64_t total = items * perItem;
    if (perItem > 0 && out.storedCount > (int64_t{1} << 42) / perItem)
        return Error(ErrorCode::DataError, "The IDX header announces more than 2^42 elements.")
            .withFile(path)
            .with("reason", "too large");
    const int64_t dataBytes = total * esize;
    const std::string expectation =
        "the header announces " + plural(out.storedCount, "item") + " of " + plural(perItem * esize, "byte") +
        " (" + std::to_string(headerBytes + out.storedCount * perItem * esize) + " bytes in all)";

    // An uncompressed file must be long enough before anything is allocated.
    std::error_code ec;
    const auto onDisk = std::filesystem::file_size(path, ec);
    if (!in.compressed() && !ec && static_cast<int64_t>(onDisk) < headerBytes + dataBytes)
        return truncatedAt(path, static_cast<int64_t>(onDisk), expectation, false);

    out.values.reserve(static_cast<size_t>(std::min<int64_t>(total, int64_t{1} << 26)));
    constexpr int64_t kChunk = int64_t{1} << 20;
    std::vector<unsigned char> buf(
        static_cast<size_t>(std::min<int64_t>(std::max<int64_t>(dataBytes, 1), kChunk)));
    int64_t remaining = dataBytes;
    while (remaining > 0) {
        // Whole elements per chunk.
        const int64_t want = std::min<int64_t>(remaining, kChunk / esize * esize);
        KILN_ASSIGN(int64_t n, in.read(buf.data(), want));
        if (n < want) return truncatedAt(path, in.offset(), expectation, in.truncated());
        const size_t at = out.values.size();
        out.values.resize(at + static_cast<size_t>(n / esize));
        convert(type, buf.data(), n / esize, scaleToUnit, out.values.data() + at);
        remaining -= n;
    }
    return out;
}

Result<InMemoryDataset> readIdx(const std::string& imagesPath, const std::string& labelsPath,
                                const IdxOptions& options) {
    KILN_ASSIGN(IdxArray images, readIdxArray(imagesPath, options.limit, options.scaleToUnit));
    const auto rank = static_cast<int>(images.dims.size());
    if (rank != 3 && rank != 4)
        return Error(
                   ErrorCode::DataError,
                   "Expected an image array [count, height, width] (magic 0x00000803), but the file holds " +
                       plural(rank, "dimension") + ".")
            .withFile(imagesPath)
            .with("reason", "not images");

    KILN_ASSIGN(IdxArray labels, readIdxArray(labelsPath, options.limit, false));
    if (labels.dims.size() != 1)
        return Error(ErrorCode::DataError,
                     "Expected a label array [count] (magic 0x00000801), but the file holds " +
                         plural(static_cast<int64_t>(labels.dims.size()), "dimension") + ".")
            .withFile(labelsPath)
            .with("reason", "not labels");
    if (labels.storedCount != images.storedCount)
        return Error(ErrorCode::DataError,
                     "Count mismatch: " + std::filesystem::path(imagesPath).filename().string() + " holds " +
                         plural(images.storedCount, "image") + " but " +
                         std::filesystem::path(labelsPath).filename().string() + " holds " +
                         plural(labels.storedCount, "label") + ".")
            .withFile(labelsPath)
            .with("reason", "count mismatch")
            .with("images", std::to_string(images.storedCount))
            .with("labels", std::to_string(labels.storedCount));

    const int64_t count = images.dims[0];

    Column image;
    image.name = options.imageColumn;
    image.sampleShape = rank == 3 ? Shape{images.dims[1], images.dims[2], 1}
                                  : Shape{images.dims[1], images.dims[2], images.dims[3]};
    image.values = std::move(images.values);
    Column label;
    label.name = options.labelColumn;
    label.sampleShape = Shape{};
    label.values = std::move(labels.values);

    std::vector<Column> columns;
    columns.push_back(std::move(image));
    columns.push_back(std::move(label));
    return InMemoryDataset::create(count, std::move(columns));
}

}  // namespace kiln::engine::data
