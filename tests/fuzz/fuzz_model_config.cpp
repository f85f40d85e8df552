// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for kiln-serve's text-format configuration reader: ModelServerConfig and
// BatchingParameters parsing must return a value or an Error for any bytes, never crash.
// kiln-fuzz-sources: engine/serve/model_config.cpp
// kiln-fuzz-libs: kiln_core
// kiln-fuzz-seconds: 20
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/serve/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto cfg = kiln::engine::serve::parseModelServerConfig(text, "fuzz.config");
    if (!cfg.ok() && (cfg.error().line < 0 || cfg.error().column < 0)) __builtin_trap();
    auto batching = kiln::engine::serve::parseBatchingParameters(text, "fuzz.config");
    if (batching.ok() && batching.value().maxBatchSize < 1) __builtin_trap();
    return 0;
}
