// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for kiln-serve's image decoding ({"b64": ...} request values): the bytes are
// decoded into a grey and an RGB input under a small pixel limit. Any bytes give the item filled
// in or INVALID_ARGUMENT; an image whose header promises more pixels than the limit never
// reaches a decoder, so decoding stays within the limit's memory.
// kiln-fuzz-sources: engine/serve/image_decode.cpp engine/serve/status.cpp
// kiln-fuzz-libs: kiln_core opencv_imgproc opencv_imgcodecs opencv_core
// kiln-fuzz-seconds: 20
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/serve/json_tensor.h"
#include "engine/serve/status.h"

namespace {
using namespace kiln::engine;
using namespace kiln::engine::serve;

constexpr int64_t kMaxPixels = 256 * 256;

void decode(const std::string& bytes, const TensorSpec& spec) {
    std::vector<float> out(static_cast<size_t>(spec.itemSize()), std::nanf(""));
    Status st = decodeImageInto(bytes, spec, out.data(), "instances[0]", kMaxPixels);
    if (!st.ok()) {
        if (tfCodeOf(st.error()) != TfCode::InvalidArgument) __builtin_trap();
        return;
    }
    // The header passed the limit, and every value of the item was written.
    auto h = readImageHeader(bytes);
    if (!h.ok() || h->width <= 0 || h->height <= 0 || h->width * h->height > kMaxPixels) __builtin_trap();
    for (float v : out)
        if (std::isnan(v)) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    static const TensorSpec grey{"image", {-1, 8, 8, 1}};
    static const TensorSpec rgb{"image", {-1, 6, 5, 3}};
    decode(bytes, grey);
    decode(bytes, rgb);
    return 0;
}
