// SPDX-License-Identifier: Apache-2.0
// The streaming input pipeline: order (shard, shuffle buffer) -> parallel load + transform on
// worker threads -> in-order batching -> bounded prefetch queue. Memory stays bounded whatever
// the data size; results depend only on the seed, never on the number of workers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/error.h"
#include "engine/core/shape.h"
#include "engine/data/batch_stream.h"
#include "engine/data/record_source.h"
#include "engine/data/sample.h"
#include "engine/data/sources.h"
#include "engine/data/transforms.h"

namespace kiln::engine::data {

struct PipelineOptions {
    enum class Cache { None, Memory, File };

    int64_t batchSize = 32;
    bool dropRemainder = false;
    int workers = 2;   // threads that load, decode and transform (>= 1)
    int prefetch = 2;  // batches kept ready ahead of the consumer (>= 1)
    // Shuffle buffer in samples: 0 or 1 keeps the order; a buffer at least the size of the data
    // is a full shuffle. Random-access sources shuffle sample indices (8 bytes each), record
    // files shuffle the records themselves.
    int64_t shuffleBuffer = 0;
    bool reshuffleEachEpoch = true;
    uint64_t seed = 0;
    int shardCount = 1;   // this pipeline sees every shardCount-th sample ...
    int shardIndex = 0;   // ... starting at shardIndex
    int cycleLength = 1;  // record files read round-robin at a time
    // Keeps samples after the leading transforms that have no randomness (decode, resize, ...)
    // so later epochs skip that work. Memory: unbounded by design, for data that fits. File:
    // one spill file (`cacheFile`, a temporary file when empty) removed with the pipeline.
    Cache cache = Cache::None;
    std::string cacheFile;
    // A picture that cannot be read stops the pipeline (an Error naming the file) instead of
    // being skipped, counted and listed.
    bool strict = false;
    // The source indices to use (a split), in this order before shuffling; empty: all samples.
    std::vector<int64_t> indices;

    // Reads the pipeline settings of a project's data section ("batch_size", "workers",
    // "prefetch", "shuffle_buffer", "reshuffle_each_iteration", "seed", "shard": {"count",
    // "index"}, "cycle_length", "cache": "memory"|"file"|path, "drop_remainder", "strict").
    // Other keys are left to the caller; bad values are ConfigError naming "data.<key>".
    static Result<PipelineOptions> fromJson(const nlohmann::json& data, const std::string& field = "data");
};

class Pipeline final : public BatchStream {
public:
    // A random-access source (IDX, image folder, CSV index, table). `transforms` with
    // Standardize entries must be fitted already (TransformList::fit on the training split).
    // Probes the first readable sample for the output shapes; fails when options are invalid or
    // no sample can be read.
    static Result<std::unique_ptr<Pipeline>> create(std::shared_ptr<const SampleSource> source,
                                                    TransformList transforms, PipelineOptions options);
    // A sequential source (TFRecord files).
    static Result<std::unique_ptr<Pipeline>> create(std::shared_ptr<const RecordSource> source,
                                                    TransformList transforms, PipelineOptions options);

    ~Pipeline() override;
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    // Starts (or restarts) an epoch: stops the running one, then starts the workers. The epoch
    // number keys the shuffle and the random transforms.
    Status startEpoch(int epoch) override;
    // The next batch: true with `batch` filled, false at the end of the epoch, or an Error (a
    // bad file in strict mode, a broken CSV tensor, Cancelled after cancel()). Full batches
    // before the one holding a failure are delivered first.
    Result<bool> next(Batch& batch) override;
    // Stops the epoch from any thread: workers finish their current sample and exit; next()
    // returns Cancelled. startEpoch() may follow.
    void cancel();

    PipelineStats stats() const override;
    // Samples left out so far (each listed once, with file and reason).
    std::vector<BadSample> badSamples() const override;
    int64_t badSampleCount() const override;
    // Output columns (names and per-sample shapes after the transforms).
    const std::vector<std::string>& outputNames() const override;
    const std::vector<Shape>& outputShapes() const override;
    const std::vector<ColumnSpec>& sourceColumns() const;
    // Samples per epoch of this shard (-1 for record files), before bad ones are left out.
    int64_t samplesPerEpoch() const override;
    int64_t batchesPerEpoch() const override;

    struct State;

private:
    Pipeline() = default;
    std::unique_ptr<State> m_state;
};

}  // namespace kiln::engine::data
