// SPDX-License-Identifier: Apache-2.0
// Stored predictions of a run: evaluating the same weights on the same data again reads the
// model's outputs from a file beside the weights instead of running the model. A stored result is
// used only when the weights file (size, modification time and content hash), the split, the data
// (the project's data section, and the size and modification time of every file it names or
// holds in its folders, with a hash of their bytes for small sets) and the model
// (graph, layer definitions, loss and metrics) are those it was computed from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/api/evaluation.h"
#include "engine/io/project.h"

namespace kiln::engine::api {

// What a stored evaluation must match. Two keys are equal when every field is.
struct EvaluationCacheKey {
    std::string weightsPath;  // the resolved weights file (absolute)
    int64_t weightsSize = 0;
    int64_t weightsModifiedNs = 0;  // modification time, nanoseconds since the epoch
    std::string weightsHash;        // store::contentHash of the file's bytes
    std::string split;              // "test", "validation", "train", or the absolute data path
    std::string dataFingerprint;    // data section, stamps (and small sets: hashes) of its files
    std::string modelFingerprint;   // graph, layers, loss and metrics

    bool operator==(const EvaluationCacheKey&) const = default;
};

// The data's files are hashed (besides their sizes and modification times) when they hold at
// most this many bytes and are at most this many files.
constexpr uintmax_t kHashedBytes = uintmax_t(64) << 20;
constexpr size_t kHashedFiles = 20000;

// The format version written by storeEvaluation; files of other versions are not read. Version 2:
// samples of CSV tables are named by their file and line ("table.csv:17") instead of "row N".
constexpr int kEvaluationCacheVersion = 2;

// The key of evaluating `options` (weights and split; picture lists are not cached). Reads the
// whole weights file to hash it. Errors as resolveWeights (the weights file is named).
Result<EvaluationCacheKey> evaluationCacheKey(const io::Project& project, const std::string& projectPath,
                                              const EvaluationOptions& options);

// Where the predictions of `key` are kept: <folder of the weights>/evaluations/<weights file
// name>.<split>.kiln-eval, the split being "test", "validation", "train" or "data-<hash of the
// path>" for other data.
std::string evaluationCachePath(const EvaluationCacheKey& key);

struct CachedPredictions {
    Predictions predictions;
    std::string created;    // ISO 8601 UTC of when they were computed
    int64_t createdMs = 0;  // milliseconds since the Unix epoch
};

// The stored predictions of `key`, or nullopt when there are none or they were computed from
// other weights, data or model (stale), or the file is of another version or damaged: those are
// computed again and never shown.
std::optional<CachedPredictions> loadCachedPredictions(const EvaluationCacheKey& key);

// Stores `predictions` for `key` (atomically; the folder is made). FileWrite naming the file when
// it cannot be written (a read-only run folder, for example).
Status storeCachedPredictions(const EvaluationCacheKey& key, const Predictions& predictions);

}  // namespace kiln::engine::api
