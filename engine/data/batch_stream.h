// SPDX-License-Identifier: Apache-2.0
// What the trainer reads batches from: epochs of batches with the pipeline's statistics and the
// samples it left out. Pipeline (pipeline.h) is the implementation; the interface keeps users
// such as the Trainer free of the decoding libraries behind it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/shape.h"
#include "engine/data/sample.h"

namespace kiln::engine::data {

// A batch: one contiguous float buffer per column, samples one after another (images NHWC,
// labels as float class indices).
struct Batch {
    int64_t size = 0;
    std::vector<std::string> names;
    std::vector<Shape> shapes;                // per-sample shape of each column
    std::vector<std::vector<float>> columns;  // size * shapes[c].numel() floats each
    std::vector<int64_t> indices;             // the source index of every sample
    std::vector<std::string> origins;         // the file (or file@offset) of every sample

    int column(std::string_view name) const {  // -1 when there is none
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) return static_cast<int>(i);
        return -1;
    }
    const float* data(std::string_view name) const {
        const int c = column(name);
        return c < 0 ? nullptr : columns[static_cast<size_t>(c)].data();
    }
};

struct PipelineStats {
    int epoch = 0;
    int64_t samples = 0;  // delivered in this epoch
    int64_t batches = 0;
    int64_t skipped = 0;  // bad samples left out in this epoch
    double seconds = 0;   // since startEpoch
    double samplesPerSecond = 0;
    double waitSeconds = 0;     // time the consumer spent blocked in next() this epoch
    double waitFraction = 0;    // waitSeconds / seconds: near 1 means the trainer is input-bound
    int64_t queuedBatches = 0;  // ready batches now (never more than prefetch)
    int64_t samplesLoaded = 0;  // samples taken from the source this epoch
    int64_t cacheHits = 0;
};

class BatchStream {
public:
    virtual ~BatchStream() = default;
    // Starts (or restarts) an epoch; the epoch number keys the shuffle and random transforms.
    virtual Status startEpoch(int epoch) = 0;
    // The next batch: true with `batch` filled, false at the end of the epoch, or an Error.
    virtual Result<bool> next(Batch& batch) = 0;
    virtual PipelineStats stats() const = 0;
    virtual std::vector<BadSample> badSamples() const = 0;
    virtual int64_t badSampleCount() const = 0;
    virtual const std::vector<std::string>& outputNames() const = 0;
    virtual const std::vector<Shape>& outputShapes() const = 0;
    // Samples / batches per epoch before unreadable ones are left out; -1 when unknown.
    virtual int64_t samplesPerEpoch() const = 0;
    virtual int64_t batchesPerEpoch() const = 0;
};

}  // namespace kiln::engine::data
