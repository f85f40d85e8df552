// SPDX-License-Identifier: Apache-2.0
// The one way Kiln reads JSON it did not produce in the same process: size, nesting depth and
// value count are enforced while the document is parsed, so no tree that could overflow the stack
// when copied, compared or destroyed (nlohmann's recursive operations) is ever built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"

namespace kiln::engine {

struct JsonLimits {
    size_t maxBytes = size_t(256) << 20;  // the whole text
    int maxDepth = 128;                   // nested arrays/objects; the top-level value is depth 1
    uint64_t maxValues = 0;               // values of any kind in the tree; 0 = no limit
};

// Parses `text` as one JSON document. Errors are ParseError with `sourceName` as the file, the
// line and column, and a message giving the byte offset and, for nesting, the JSON path
// ("$.context.x[0][0]...") where the limit was crossed. Numbers that do not fit a double
// (1e999) are errors too (nlohmann's parser reports them). Never throws.
Result<nlohmann::json> parseJsonChecked(std::string_view text, const JsonLimits& limits, const std::string& sourceName);

// Reads a file and parses it with parseJsonChecked (the file name is the source name); files
// larger than limits.maxBytes are refused before they are read.
Result<nlohmann::json> readJsonFileChecked(const std::string& path, const JsonLimits& limits = {});

}  // namespace kiln::engine
