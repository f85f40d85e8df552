// SPDX-License-Identifier: Apache-2.0
// kiln-serve's configuration files in protobuf text format, as TF Serving reads them: the
// ModelServerConfig (--model_config_file) and the batching parameters (--batching_parameters_file).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace kiln::engine::serve {

// A parsed text-format message: fields in file order with the position of each field name.
struct TextField;
struct TextMessage {
    std::vector<TextField> fields;
};
struct TextField {
    std::string name;
    int line = 0;    // 1-based
    int column = 0;  // 1-based
    bool isMessage = false;
    // Scalars: the token as written (strings unescaped); `quoted` tells strings from identifiers
    // and numbers.
    std::string scalar;
    bool quoted = false;
    TextMessage message;
};

// Parses protobuf text format (fields `name: value`, `name { ... }`, `name: { ... }`, `name < >`,
// lists `name: [a, b]`, `#` comments, adjacent string concatenation, C escapes). Errors are
// ParseError with the line and column of the offending token; `file` names the source.
Result<TextMessage> parseTextFormat(std::string_view text, const std::string& file = {});

struct VersionPolicy {
    enum class Kind { Latest, All, Specific };
    Kind kind = Kind::Latest;
    uint32_t numVersions = 1;       // Latest
    std::vector<int64_t> versions;  // Specific
};

struct ModelConfig {
    std::string name;
    std::string basePath;
    std::string platform = "tensorflow";
    VersionPolicy policy;
    std::map<std::string, int64_t> versionLabels;
    int line = 0;  // where the config block starts
};

struct ModelServerConfig {
    std::vector<ModelConfig> models;
};

// ModelServerConfig: model_config_list { config { name base_path model_platform
// model_version_policy { latest { num_versions } | all {} | specific { versions } }
// version_labels { key value } } }. Unknown fields, duplicate model names, empty names or base
// paths, model names that could escape a folder, and bad values are errors with line/column.
Result<ModelServerConfig> parseModelServerConfig(std::string_view text, const std::string& file = {});
Result<ModelServerConfig> loadModelServerConfig(const std::string& path);

struct BatchingParameters {
    int64_t maxBatchSize = 32;
    int64_t batchTimeoutMicros = 1000;
    int64_t maxEnqueuedBatches = 100;
    int64_t numBatchThreads = 1;
    std::vector<int64_t> allowedBatchSizes;  // empty: any size up to maxBatchSize
    // Kiln's own, not read from the parameters file: a lone request runs on the calling thread
    // only while the last single-request run took at most this long (see Batcher::runAsync).
    int64_t inlineRunBudgetMicros = 1000;
};

// BatchingParameters: max_batch_size { value: N } batch_timeout_micros { value: N }
// max_enqueued_batches { value: N } num_batch_threads { value: N } allowed_batch_sizes: N ...
// (the wrapper form `{ value: N }` and a bare `N` are both accepted).
Result<BatchingParameters> parseBatchingParameters(std::string_view text, const std::string& file = {});
Result<BatchingParameters> loadBatchingParameters(const std::string& path);

// A model name is usable as a folder name under a base path: non-empty, at most 255 bytes, no
// '/', '\\', NUL or control characters, and not "." or "..".
bool isSafeModelName(std::string_view name);

// Reads a whole file (errors name the path).
Result<std::string> readTextFile(const std::string& path);

}  // namespace kiln::engine::serve
