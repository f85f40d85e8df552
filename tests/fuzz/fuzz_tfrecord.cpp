// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for TFRecord framing (plain, ZLIB and GZIP streams) and tf.train.Example
// decoding: the bytes are read as a TFRecord file in each compression and every record, and the
// bytes themselves, are decoded as an Example. Each step gives records or a DataError with the
// byte offset, never a crash, a hang or an allocation the input does not back.
// kiln-fuzz-sources: engine/data/tfrecord.cpp engine/data/example.cpp
// kiln-fuzz-libs: kiln_core ZLIB::ZLIB
// kiln-fuzz-seconds: 20
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/data/example.h"
#include "engine/data/tfrecord.h"

namespace {
using namespace kiln::engine;
using namespace kiln::engine::data;

bool hasParam(const Error& e, const char* name) {
    for (const auto& [k, v] : e.params)
        if (k == name) return true;
    return false;
}

void checkExample(std::string_view bytes) {
    auto ex = decodeExample(bytes);
    if (!ex.ok()) {
        if (ex.error().code != ErrorCode::DataError || !hasParam(ex.error(), "offset")) __builtin_trap();
        return;
    }
    // A decoded Example encodes and decodes to the same features (by kind and count; NaN floats
    // would not compare equal).
    auto again = decodeExample(encodeExample(*ex));
    if (!again.ok() || again->features.size() != ex->features.size()) __builtin_trap();
    for (const auto& [key, f] : ex->features) {
        const Feature* g = again->find(key);
        if (!g || g->kind != f.kind || g->size() != f.size()) __builtin_trap();
    }
}

const std::string& scratchPath() {
    static const std::string path =
        (std::filesystem::temp_directory_path() / ("kiln-fuzz-tfrecord-" + std::to_string(::getpid()))).string();
    return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    checkExample(bytes);
    const std::string& path = scratchPath();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
    for (auto compression : {TfRecordCompression::None, TfRecordCompression::Zlib, TfRecordCompression::Gzip}) {
        auto reader = TfRecordReader::open(path, compression);
        if (!reader.ok()) __builtin_trap();  // the file exists
        std::string payload;
        for (;;) {
            auto more = (*reader)->next(payload);
            if (!more.ok()) {
                if (more.error().code != ErrorCode::DataError || !hasParam(more.error(), "offset")) __builtin_trap();
                break;
            }
            if (!*more) break;
            // A plain record carries 16 bytes of framing; a compressed one at most what inflates.
            if (compression == TfRecordCompression::None && payload.size() + kTfRecordOverhead > size) __builtin_trap();
            checkExample(payload);
        }
    }
    std::remove(path.c_str());
    return 0;
}
