// SPDX-License-Identifier: Apache-2.0
// Event protos written by hand on the protobuf wire format. Field numbers: Event wall_time = 1
// (double), step = 2, file_version = 3, summary = 5; Summary.value = 1; Value tag = 1,
// simple_value = 2 (float), image = 4, histo = 5; Image height 1, width 2, colorspace 3,
// encoded_image_string 4; HistogramProto min 1 … sum_squares 5, bucket_limit 6, bucket 7 (packed).
#include "engine/io/tfevents.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <png.h>

namespace kiln::engine::io {
namespace {

void putVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}
void putTag(std::string& out, uint32_t field, uint32_t wire) { putVarint(out, (field << 3) | wire); }
void putFixed(std::string& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void putDouble(std::string& out, uint32_t field, double v) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    putTag(out, field, 1);
    putFixed(out, u, 8);
}
void putFloat(std::string& out, uint32_t field, float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    putTag(out, field, 5);
    putFixed(out, u, 4);
}
void putInt(std::string& out, uint32_t field, int64_t v) {
    putTag(out, field, 0);
    putVarint(out, static_cast<uint64_t>(v));
}
void putLen(std::string& out, uint32_t field, std::string_view bytes) {
    putTag(out, field, 2);
    putVarint(out, bytes.size());
    out.append(bytes);
}
void putPackedDoubles(std::string& out, uint32_t field, const std::vector<double>& v) {
    if (v.empty()) return;
    std::string packed;
    packed.reserve(v.size() * 8);
    for (double d : v) {
        uint64_t u;
        std::memcpy(&u, &d, 8);
        putFixed(packed, u, 8);
    }
    putLen(out, field, packed);
}

// Event{wall_time, step, summary{value{...}}} around one serialized Summary.Value.
std::string summaryEvent(double wallTime, int64_t step, const std::string& value) {
    std::string summary;
    putLen(summary, 1, value);
    std::string ev;
    putDouble(ev, 1, wallTime);
    putInt(ev, 2, step);
    putLen(ev, 5, summary);
    return ev;
}

double systemNow() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostName() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
    return buf;
}

Error invalid(const std::string& what) { return Error(ErrorCode::InvalidArgument, what).with("reason", what); }

}  // namespace

std::string encodeFileVersionEvent(double wallTime) {
    std::string ev;
    putDouble(ev, 1, wallTime);
    putLen(ev, 3, "brain.Event:2");
    return ev;
}

std::string encodeScalarEvent(double wallTime, int64_t step, const std::string& tag, float value) {
    std::string v;
    putLen(v, 1, tag);
    putFloat(v, 2, value);
    return summaryEvent(wallTime, step, v);
}

Histogram Histogram::of(std::span<const float> values, int buckets) {
    Histogram h;
    buckets = std::max(1, buckets);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (float f : values) {
        if (!std::isfinite(f)) continue;
        double d = f;
        lo = std::min(lo, d);
        hi = std::max(hi, d);
        h.num += 1;
        h.sum += d;
        h.sumSquares += d * d;
    }
    if (h.num == 0) return h;
    h.min = lo;
    h.max = hi;
    if (hi == lo) {
        h.bucketLimit = {hi};
        h.bucket = {h.num};
        return h;
    }
    const double width = (hi - lo) / buckets;
    h.bucketLimit.resize(static_cast<size_t>(buckets));
    h.bucket.assign(static_cast<size_t>(buckets), 0.0);
    for (int i = 0; i < buckets; ++i) h.bucketLimit[static_cast<size_t>(i)] = lo + width * (i + 1);
    h.bucketLimit.back() = hi;
    for (float f : values) {
        if (!std::isfinite(f)) continue;
        // Bucket i holds (limit[i-1], limit[i]]; the minimum goes to bucket 0.
        auto i = static_cast<int64_t>(std::ceil((static_cast<double>(f) - lo) / width)) - 1;
        i = std::clamp<int64_t>(i, 0, buckets - 1);
        h.bucket[static_cast<size_t>(i)] += 1;
    }
    return h;
}

Result<std::unique_ptr<EventFileWriter>> EventFileWriter::create(const std::string& logdir, EventWriterOptions options) {
    std::error_code ec;
    std::filesystem::create_directories(logdir, ec);
    if (ec)
        return Error(ErrorCode::FileWrite, "cannot create the TensorBoard log directory " + logdir + ": " + ec.message())
            .withFile(logdir)
            .with("path", logdir)
            .with("reason", ec.message());
    std::unique_ptr<EventFileWriter> w(new EventFileWriter());
    w->m_options = std::move(options);
    w->m_now = systemNow;
    const double now = systemNow();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%010lld", static_cast<long long>(now));
    // A counter keeps two writers created in the same second by one process apart.
    static std::atomic<int> counter{0};
    std::string base = logdir + "/events.out.tfevents." + secs + "." + hostName() + "." + std::to_string(getpid()) + "." +
                       std::to_string(counter++) + w->m_options.fileSuffix;
    w->m_path = base;
    KILN_ASSIGN(w->m_writer, data::TfRecordWriter::create(base));
    KILN_TRY(w->m_writer->write(encodeFileVersionEvent(now)));
    KILN_TRY(w->m_writer->flush());
    w->m_lastFlush = std::chrono::steady_clock::now();
    return w;
}

EventFileWriter::~EventFileWriter() { (void)close(); }

Status EventFileWriter::maybeFlush() {
    ++m_pending;
    auto now = std::chrono::steady_clock::now();
    if (m_pending >= m_options.maxPending ||
        std::chrono::duration<double>(now - m_lastFlush).count() >= m_options.flushSeconds)
        return flush();
    return {};
}

Status EventFileWriter::writeEvent(const std::string& event) {
    if (!m_writer)
        return Error(ErrorCode::FileWrite, "the event file " + m_path + " is closed").withFile(m_path).with("path", m_path);
    KILN_TRY(m_writer->write(event));
    return maybeFlush();
}

Status EventFileWriter::scalar(const std::string& tag, int64_t step, double value) {
    return writeEvent(encodeScalarEvent(m_now(), step, tag, static_cast<float>(value)));
}

Status EventFileWriter::histogram(const std::string& tag, int64_t step, const Histogram& h) {
    std::string histo;
    putDouble(histo, 1, h.min);
    putDouble(histo, 2, h.max);
    putDouble(histo, 3, h.num);
    putDouble(histo, 4, h.sum);
    putDouble(histo, 5, h.sumSquares);
    putPackedDoubles(histo, 6, h.bucketLimit);
    putPackedDoubles(histo, 7, h.bucket);
    std::string v;
    putLen(v, 1, tag);
    putLen(v, 5, histo);
    return writeEvent(summaryEvent(m_now(), step, v));
}

Status EventFileWriter::histogram(const std::string& tag, int64_t step, std::span<const float> values, int buckets) {
    return histogram(tag, step, Histogram::of(values, buckets));
}

Status EventFileWriter::imagePng(const std::string& tag, int64_t step, int height, int width, int colorspace,
                                 const std::string& png) {
    std::string img;
    putInt(img, 1, height);
    putInt(img, 2, width);
    putInt(img, 3, colorspace);
    putLen(img, 4, png);
    std::string v;
    putLen(v, 1, tag);
    putLen(v, 4, img);
    return writeEvent(summaryEvent(m_now(), step, v));
}

Status EventFileWriter::image(const std::string& tag, int64_t step, int height, int width, int channels,
                              std::span<const uint8_t> pixels) {
    if (channels != 1 && channels != 3 && channels != 4)
        return invalid("image \"" + tag + "\" has " + std::to_string(channels) + " channels (use 1, 3 or 4)");
    if (height <= 0 || width <= 0 ||
        pixels.size() != static_cast<size_t>(height) * static_cast<size_t>(width) * static_cast<size_t>(channels))
        return invalid("image \"" + tag + "\": " + std::to_string(pixels.size()) + " bytes do not make a " +
                       std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels) + " image");
    // libpng's simplified writer, straight from RGB(A)/grey rows.
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    img.width = static_cast<png_uint_32>(width);
    img.height = static_cast<png_uint_32>(height);
    img.format = channels == 1 ? PNG_FORMAT_GRAY : channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&img, nullptr, &size, 0, pixels.data(), 0, nullptr) || size == 0) {
        const std::string why = img.message;
        png_image_free(&img);
        return invalid("image \"" + tag + "\" could not be encoded as PNG: " + why);
    }
    std::vector<uint8_t> png(size);
    if (!png_image_write_to_memory(&img, png.data(), &size, 0, pixels.data(), 0, nullptr)) {
        const std::string why = img.message;
        png_image_free(&img);
        return invalid("image \"" + tag + "\" could not be encoded as PNG: " + why);
    }
    png.resize(size);
    return imagePng(tag, step, height, width, channels, std::string(png.begin(), png.end()));
}

Status EventFileWriter::flush() {
    if (!m_writer) return {};
    m_pending = 0;
    m_lastFlush = std::chrono::steady_clock::now();
    return m_writer->flush();
}

Status EventFileWriter::close() {
    if (!m_writer) return {};
    Status st = m_writer->close();
    m_writer.reset();
    return st;
}

}  // namespace kiln::engine::io
