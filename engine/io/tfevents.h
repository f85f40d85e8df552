// SPDX-License-Identifier: Apache-2.0
// TensorBoard event files: `events.out.tfevents.<secs>.<host>.<pid>.<n>` in a log directory, a
// TFRecord stream of Event protos (file_version first, then scalars, histograms and PNG images).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/tfrecord.h"

namespace kiln::engine::io {

// HistogramProto: bucket i counts values in (bucketLimit[i-1], bucketLimit[i]] (the first bucket
// starts at -DBL_MAX).
struct Histogram {
    double min = 0, max = 0, num = 0, sum = 0, sumSquares = 0;
    std::vector<double> bucketLimit;
    std::vector<double> bucket;

    // `buckets` equal-width buckets between the smallest and largest finite value (one bucket when
    // they are equal). Non-finite values are left out.
    static Histogram of(std::span<const float> values, int buckets = 30);
};

struct EventWriterOptions {
    // Buffered events are written out after this many seconds or this many events, whichever
    // comes first, and always on flush() and close().
    double flushSeconds = 2.0;
    int maxPending = 100;
    std::string fileSuffix;  // appended to the file name, e.g. ".v2"
};

class EventFileWriter {
public:
    // Creates `logdir` (and parents) and a new event file in it, starting with
    // Event{file_version: "brain.Event:2"}. FileWrite naming the path on failure.
    static Result<std::unique_ptr<EventFileWriter>> create(const std::string& logdir, EventWriterOptions options = {});
    ~EventFileWriter();  // closes

    // Summary.Value{tag, simple_value} at `step`.
    Status scalar(const std::string& tag, int64_t step, double value);
    // Summary.Value{tag, histo}.
    Status histogram(const std::string& tag, int64_t step, const Histogram& h);
    Status histogram(const std::string& tag, int64_t step, std::span<const float> values, int buckets = 30);
    // Summary.Value{tag, image}: 8-bit pixels, row-major, `channels` 1 (gray), 3 (RGB) or
    // 4 (RGBA) interleaved; encoded as PNG. InvalidArgument for other channel counts or sizes.
    Status image(const std::string& tag, int64_t step, int height, int width, int channels,
                 std::span<const uint8_t> pixels);
    // A ready PNG (colorspace as Summary.Image: 1 gray, 3 RGB, 4 RGBA).
    Status imagePng(const std::string& tag, int64_t step, int height, int width, int colorspace, const std::string& png);

    Status flush();
    Status close();
    const std::string& path() const { return m_path; }
    // Wall-clock time stamp used for new events; tests can pin it.
    void setClock(std::function<double()> now) { m_now = std::move(now); }

private:
    EventFileWriter() = default;
    Status writeEvent(const std::string& event);
    Status maybeFlush();

    std::string m_path;
    std::unique_ptr<data::TfRecordWriter> m_writer;
    EventWriterOptions m_options;
    std::function<double()> m_now;
    std::chrono::steady_clock::time_point m_lastFlush;
    int m_pending = 0;
};

// Serialized pieces, for tests and other writers: Event{wall_time, step, summary{value}}.
std::string encodeScalarEvent(double wallTime, int64_t step, const std::string& tag, float value);
std::string encodeFileVersionEvent(double wallTime);

}  // namespace kiln::engine::io
