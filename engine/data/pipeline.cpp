// SPDX-License-Identifier: Apache-2.0
// The streaming pipeline. Work items get a sequence number in epoch order; workers may finish
// them in any order, each into the ring slot seq % R; the assembler copies slots into batches in
// sequence order. A worker only takes item seq when its slot is free (seq < assembled + R), and
// the assembler only fills a batch when fewer than `prefetch` wait, so memory is bounded by
// R samples + (prefetch + 2) batches + the shuffle buffer.
#include "engine/data/pipeline.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "engine/core/rng.h"
#include "engine/data/idx_reader.h"

namespace kiln::engine::data {

using Clock = std::chrono::steady_clock;

RecordReader::~RecordReader() = default;
RecordSource::~RecordSource() = default;

// ---------------------------------------------------------------------------------------------
// Options and batches

Result<PipelineOptions> PipelineOptions::fromJson(const nlohmann::json& data, const std::string& field) {
    PipelineOptions o;
    auto err = [&](const std::string& key, const std::string& msg) {
        return Error(ErrorCode::ConfigError, field + "." + key + ": " + msg)
            .with("field", field + "." + key)
            .with("reason", msg);
    };
    auto intAt = [&](const char* key, int64_t lo, int64_t hi, int64_t* out) -> Status {
        if (!data.contains(key)) return okStatus();
        const auto& v = data[key];
        if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
            return err(key,
                       "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
        *out = v.get<int64_t>();
        return okStatus();
    };
    auto boolAt = [&](const char* key, bool* out) -> Status {
        if (!data.contains(key)) return okStatus();
        if (!data[key].is_boolean()) return err(key, "expected true or false");
        *out = data[key].get<bool>();
        return okStatus();
    };
    if (!data.is_object())
        return Error(ErrorCode::ConfigError, field + " must be an object.").with("field", field);
    int64_t v = 0;
    v = o.batchSize;
    KILN_TRY(intAt("batch_size", 1, 1 << 24, &v));
    o.batchSize = v;
    v = o.workers;
    KILN_TRY(intAt("workers", 1, 256, &v));
    o.workers = static_cast<int>(v);
    v = o.prefetch;
    KILN_TRY(intAt("prefetch", 1, 1024, &v));
    o.prefetch = static_cast<int>(v);
    KILN_TRY(intAt("shuffle_buffer", 0, int64_t(1) << 40, &o.shuffleBuffer));
    v = o.cycleLength;
    KILN_TRY(intAt("cycle_length", 1, 4096, &v));
    o.cycleLength = static_cast<int>(v);
    v = 0;
    KILN_TRY(intAt("seed", 0, INT64_MAX, &v));
    o.seed = static_cast<uint64_t>(v);
    KILN_TRY(boolAt("drop_remainder", &o.dropRemainder));
    KILN_TRY(boolAt("reshuffle_each_iteration", &o.reshuffleEachEpoch));
    KILN_TRY(boolAt("strict", &o.strict));
    if (data.contains("shard")) {
        const auto& s = data["shard"];
        if (!s.is_object() || !s.contains("count") || !s.contains("index") ||
            !s["count"].is_number_integer() || !s["index"].is_number_integer())
            return err("shard", "expected {\"count\": N, \"index\": i}");
        o.shardCount = s["count"].get<int>();
        o.shardIndex = s["index"].get<int>();
        if (o.shardCount < 1 || o.shardIndex < 0 || o.shardIndex >= o.shardCount)
            return err("shard", "needs count >= 1 and 0 <= index < count");
    }
    if (data.contains("cache")) {
        const auto& c = data["cache"];
        if (c.is_boolean()) {
            o.cache = c.get<bool>() ? Cache::Memory : Cache::None;
        } else if (c.is_string()) {
            const std::string s = c.get<std::string>();
            if (s == "memory")
                o.cache = Cache::Memory;
            else if (s == "none" || s.empty())
                o.cache = Cache::None;
            else if (s == "file")
                o.cache = Cache::File;
            else {
                o.cache = Cache::File;
                o.cacheFile = s;
            }
        } else {
            return err("cache", "expected \"memory\", \"file\" or a file path");
        }
    }
    return o;
}

// ---------------------------------------------------------------------------------------------
// State

namespace {

constexpr uint64_t kShuffleStream = 0x5348554646ull;

// A uniform position in [0, n) from one 32-bit Philox word (n < 2^32).
size_t pick(uint64_t seed, uint64_t draw, size_t n) {
    return static_cast<size_t>((static_cast<uint64_t>(rng::bits(seed, kShuffleStream, draw)) * n) >> 32);
}

// Indices of one epoch: the population (a split or 0..n-1), this shard's share of it, then a
// shuffle buffer. O(buffer) memory.
class IndexOrder {
public:
    void reset(const std::vector<int64_t>* list, int64_t count, int shardCount, int shardIndex,
               int64_t buffer, uint64_t seed) {
        m_list = list;
        m_count = count;
        m_pos = shardIndex;
        m_step = shardCount;
        m_bufferSize = std::max<int64_t>(buffer, 1);
        m_buffer.clear();
        m_seed = seed;
        m_draws = 0;
    }
    bool next(int64_t* out) {
        if (m_bufferSize <= 1) return pull(out);
        while (static_cast<int64_t>(m_buffer.size()) < m_bufferSize) {
            int64_t v;
            if (!pull(&v)) break;
            m_buffer.push_back(v);
        }
        if (m_buffer.empty()) return false;
        const auto n = m_buffer.size();
        const auto j = pick(m_seed, m_draws++, n);
        *out = m_buffer[j];
        int64_t v;
        if (pull(&v))
            m_buffer[j] = v;
        else {
            m_buffer[j] = m_buffer.back();
            m_buffer.pop_back();
        }
        return true;
    }

private:
    bool pull(int64_t* out) {
        if (m_pos >= m_count) return false;
        *out = m_list ? (*m_list)[static_cast<size_t>(m_pos)] : m_pos;
        m_pos += m_step;
        return true;
    }
    const std::vector<int64_t>* m_list = nullptr;
    int64_t m_count = 0, m_pos = 0, m_step = 1, m_bufferSize = 1;
    std::vector<int64_t> m_buffer;
    uint64_t m_seed = 0;
    uint64_t m_draws = 0;
};

// Samples after the deterministic transforms, by source index. The file variant keeps only
// offsets in memory.
class SampleCache {
public:
    virtual ~SampleCache() = default;
    virtual bool get(int64_t index, Sample& out) = 0;
    virtual void put(const Sample& s) = 0;
};

class MemoryCache : public SampleCache {
public:
    bool get(int64_t index, Sample& out) override {
        std::lock_guard lock(m_mutex);
        auto it = m_map.find(index);
        if (it == m_map.end()) return false;
        // Transforms never write into an input picture in place, so sharing the pixels is safe.
        out = it->second;
        return true;
    }
    void put(const Sample& s) override {
        std::lock_guard lock(m_mutex);
        m_map.emplace(s.index, s);
    }

private:
    std::mutex m_mutex;
    std::unordered_map<int64_t, Sample> m_map;
};

class FileCache : public SampleCache {
public:
    static std::unique_ptr<FileCache> open(std::string path, bool remove, std::string* error) {
        auto c = std::make_unique<FileCache>();
        c->m_path = std::move(path);
        c->m_remove = remove;
        c->m_file = std::fopen(c->m_path.c_str(), "w+b");
        if (c->m_file == nullptr) {
            *error = "cannot create the cache file " + c->m_path;
            return nullptr;
        }
        return c;
    }
    ~FileCache() override {
        if (m_file) std::fclose(m_file);
        if (m_remove) std::remove(m_path.c_str());
    }
    bool get(int64_t index, Sample& out) override {
        std::string bytes;
        {
            std::lock_guard lock(m_mutex);
            auto it = m_where.find(index);
            if (it == m_where.end()) return false;
            bytes.resize(static_cast<size_t>(it->second.second));
            std::fseek(m_file, static_cast<long>(it->second.first), SEEK_SET);
            if (std::fread(bytes.data(), 1, bytes.size(), m_file) != bytes.size()) return false;
        }
        size_t p = 0;
        auto take = [&](void* dst, size_t n) {
            std::memcpy(dst, bytes.data() + p, n);
            p += n;
        };
        uint32_t count = 0, originSize = 0;
        take(&count, 4);
        take(&originSize, 4);
        out.index = index;
        out.origin.assign(bytes.data() + p, originSize);
        p += originSize;
        out.values.resize(count);
        for (auto& v : out.values) {
            uint8_t kind = 0;
            take(&kind, 1);
            v.kind = static_cast<SampleValue::Kind>(kind);
            int64_t dims[3] = {0, 0, 0};
            uint32_t rank = 0;
            take(&rank, 4);
            std::vector<int64_t> shape(rank);
            for (auto& d : shape) take(&d, 8);
            uint64_t size = 0;
            take(&size, 8);
            if (v.kind == SampleValue::Kind::Encoded) {
                v.encoded.assign(bytes.data() + p, size);
            } else if (v.kind == SampleValue::Kind::Image) {
                int type = 0;
                std::memcpy(&type, bytes.data() + p, 4);
                (void)dims;
                v.image.create(static_cast<int>(shape[0]), static_cast<int>(shape[1]), type);
                std::memcpy(v.image.data, bytes.data() + p + 4, size - 4);
            } else {
                v.shape = Shape(shape);
                v.values.resize(size / sizeof(float));
                std::memcpy(v.values.data(), bytes.data() + p, size);
            }
            p += size;
        }
        return true;
    }
    void put(const Sample& s) override {
        std::string bytes;
        auto add = [&](const void* src, size_t n) { bytes.append(static_cast<const char*>(src), n); };
        const auto count = static_cast<uint32_t>(s.values.size());
        const auto originSize = static_cast<uint32_t>(s.origin.size());
        add(&count, 4);
        add(&originSize, 4);
        add(s.origin.data(), originSize);
        for (const auto& v : s.values) {
            const auto kind = static_cast<uint8_t>(v.kind);
            add(&kind, 1);
            std::vector<int64_t> shape;
            if (v.kind == SampleValue::Kind::Image)
                shape = {v.image.rows, v.image.cols, v.image.channels()};
            else if (v.kind == SampleValue::Kind::Numbers)
                shape = v.shape.dims();
            const auto rank = static_cast<uint32_t>(shape.size());
            add(&rank, 4);
            for (int64_t d : shape) add(&d, 8);
            if (v.kind == SampleValue::Kind::Encoded) {
                const uint64_t size = v.encoded.size();
                add(&size, 8);
                add(v.encoded.data(), v.encoded.size());
            } else if (v.kind == SampleValue::Kind::Image) {
                const cv::Mat m = v.image.isContinuous() ? v.image : v.image.clone();
                const uint64_t size = 4 + m.total() * m.elemSize();
                add(&size, 8);
                const int type = m.type();
                add(&type, 4);
                add(m.data, m.total() * m.elemSize());
            } else {
                const uint64_t size = v.values.size() * sizeof(float);
                add(&size, 8);
                add(v.values.data(), size);
            }
        }
        std::lock_guard lock(m_mutex);
        if (m_where.count(s.index)) return;
        std::fseek(m_file, static_cast<long>(m_end), SEEK_SET);
        if (std::fwrite(bytes.data(), 1, bytes.size(), m_file) != bytes.size())
            return;  // a full disk only costs speed
        m_where[s.index] = {m_end, static_cast<int64_t>(bytes.size())};
        m_end += static_cast<int64_t>(bytes.size());
    }

private:
    std::string m_path;
    bool m_remove = false;
    std::FILE* m_file = nullptr;
    std::mutex m_mutex;
    std::unordered_map<int64_t, std::pair<int64_t, int64_t>> m_where;
    int64_t m_end = 0;
};

}  // namespace

struct Pipeline::State {
    // Configuration
    std::shared_ptr<const SampleSource> source;
    std::shared_ptr<const RecordSource> records;
    TransformList transforms;
    PipelineOptions opt;
    std::vector<ColumnSpec> specs;
    std::vector<std::string> names;
    std::vector<Shape> shapes;
    std::vector<int64_t> sizes;  // floats per sample per column
    size_t prefix = 0;           // transforms kept by the cache
    std::unique_ptr<SampleCache> cache;
    int64_t population = 0;  // random access: samples before sharding

    // Epoch
    struct Slot {
        enum class St { Empty, Busy, Ready, Skipped, Failed };
        St state = St::Empty;
        int64_t index = -1;
        std::string origin;
        std::vector<std::vector<float>> data;
        std::optional<Error> error;
        BadSample bad;
    };
    struct InputItem {
        Sample sample;
        std::optional<Error> error;
    };
    mutable std::mutex mutex;
    std::condition_variable workerCv;     // workers: an item or a free slot
    std::condition_variable assemblerCv;  // assembler: a finished slot or room in the queue
    std::condition_variable consumerCv;   // consumer: a batch, the end or an error
    std::condition_variable readerCv;     // record reader: room in the input queue
    std::vector<Slot> slots;
    IndexOrder order;
    std::deque<InputItem> input;  // record sources: read, shuffled, not yet taken
    bool readerDone = false;
    int64_t nextSeq = 0;    // the next sequence number handed to a worker
    int64_t assembled = 0;  // the next sequence number the assembler needs
    int64_t total = -1;     // items in the epoch, once the feed is exhausted
    std::deque<Batch> ready;
    std::vector<Batch> spare;
    bool stop = false;
    bool cancelled = false;
    bool epochDone = false;
    std::optional<Error> error;
    bool running = false;
    std::vector<std::thread> threads;

    // Statistics and reports
    int epoch = 0;
    Clock::time_point epochStart{};
    std::optional<Clock::time_point> epochEnd;  // when next() reported the end
    int64_t delivered = 0, batches = 0, skipped = 0, loaded = 0, cacheHits = 0;
    double waitSeconds = 0;
    std::vector<BadSample> bad;
    std::set<int64_t> badSeen;

    ~State() { stopThreads(); }

    void stopThreads() {
        {
            std::lock_guard lock(mutex);
            stop = true;
        }
        workerCv.notify_all();
        assemblerCv.notify_all();
        consumerCv.notify_all();
        readerCv.notify_all();
        for (auto& t : threads)
            if (t.joinable()) t.join();
        threads.clear();
        running = false;
    }

    int64_t ringSize() const { return std::max<int64_t>(2 * opt.workers + 2, 4); }

    // Load (done by the caller), transforms, shape check, copy into the slot.
    Status process(Sample& s, Slot& slot, std::vector<ColumnSpec> const& columnSpecs) {
        bool cached = false;
        if (cache && prefix > 0) {
            Sample c;
            if (cache->get(s.index, c)) {
                s = std::move(c);
                cached = true;
                std::lock_guard lock(mutex);
                ++cacheHits;
            }
        }
        // Without a cache the whole list runs in one call, so that decoding sees the crop or resize
        // that follows it (a random crop lies past the cached prefix) and can do only its work.
        const size_t split = cache ? prefix : 0;
        if (!cached && split > 0) {
            KILN_TRY(transforms.apply(s, columnSpecs, opt.seed, epoch, 0, split));
            cache->put(s);
        }
        KILN_TRY(transforms.apply(s, columnSpecs, opt.seed, epoch, split));
        KILN_TRY(transforms.decodeRemaining(s, columnSpecs));
        for (size_t c = 0; c < shapes.size(); ++c) {
            const Shape got = valueShape(s.values[c]);
            if (got != shapes[c])
                return Error(ErrorCode::DataError,
                             s.origin + ": column \"" + names[c] + "\" comes out as " + got.toString() +
                                 " where the first sample gave " + shapes[c].toString() +
                                 "; add a resize or crop transform so that every sample has the same shape.")
                    .withFile(s.origin)
                    .with("file", s.origin)
                    .with("reason", "shape " + got.toString() + " instead of " + shapes[c].toString());
            slot.data[c].resize(static_cast<size_t>(sizes[c]));
            copyValue(s.values[c], slot.data[c].data());
        }
        return okStatus();
    }

    void finish(Slot& slot, const Sample& s, Status st) {
        std::lock_guard lock(mutex);
        slot.index = s.index;
        slot.origin = s.origin;
        if (st.ok()) {
            slot.state = Slot::St::Ready;
        } else if (isBadSampleError(st.error()) && !opt.strict) {
            slot.state = Slot::St::Skipped;
            const Error& e = st.error();
            slot.bad = BadSample{s.index, e.file.empty() ? s.origin : e.file,
                                 e.param("reason").empty() ? e.message : e.param("reason")};
        } else {
            slot.state = Slot::St::Failed;
            slot.error = st.error();
        }
        assemblerCv.notify_all();
    }

    void workerLoop() {
        Sample s;
        for (;;) {
            int64_t seq = 0;
            int64_t index = -1;
            std::optional<Error> inputError;
            {
                std::unique_lock lock(mutex);
                workerCv.wait(lock, [&] {
                    if (stop) return true;
                    if (total >= 0) return true;
                    if (nextSeq >= assembled + ringSize()) return false;
                    return source != nullptr || !input.empty() || readerDone;
                });
                if (stop || total >= 0) return;
                if (source) {
                    if (!order.next(&index)) {
                        total = nextSeq;
                        assemblerCv.notify_all();
                        workerCv.notify_all();
                        return;
                    }
                } else {
                    if (input.empty()) {  // readerDone
                        total = nextSeq;
                        assemblerCv.notify_all();
                        workerCv.notify_all();
                        return;
                    }
                    s = std::move(input.front().sample);
                    inputError = std::move(input.front().error);
                    input.pop_front();
                    index = s.index;
                    readerCv.notify_one();
                }
                seq = nextSeq++;
                ++loaded;
                slots[static_cast<size_t>(seq % ringSize())].state = Slot::St::Busy;
            }
            Slot& slot = slots[static_cast<size_t>(seq % ringSize())];
            Status st;
            try {
                st = work(s, slot, index, std::move(inputError));
            } catch (const std::exception& e) {
                st = Error(ErrorCode::Internal, std::string("A data worker failed: ") + e.what())
                         .withFile(s.origin);
            }
            finish(slot, s, std::move(st));
        }
    }

    // One work item: load (random access) or take the read record, then transform into `slot`.
    Status work(Sample& s, Slot& slot, int64_t index, std::optional<Error> inputError) {
        if (inputError) return std::move(*inputError);
        if (!source) return process(s, slot, specs);
        Status st = source->load(index, s);
        if (st.ok()) return process(s, slot, specs);
        s.index = index;
        s.origin = source->origin(index);
        return st;
    }

    void readerLoop() {
        try {
            readRecords();
        } catch (const std::exception& e) {
            InputItem item;
            item.error = Error(ErrorCode::Internal, std::string("The record reader failed: ") + e.what());
            std::lock_guard lock(mutex);
            input.push_back(std::move(item));
            workerCv.notify_one();
        }
    }

    // Record sources: interleave files, shard, shuffle through a bounded buffer.
    void readRecords() {
        const int files = records->fileCount();
        const int cycle = std::max(1, std::min(opt.cycleLength, files));
        struct Open {
            std::unique_ptr<RecordReader> reader;
        };
        std::vector<Open> open;
        int nextFile = 0;
        int64_t ordinal = 0, draws = 0;
        std::vector<Sample> buffer;
        const auto bufferSize = static_cast<size_t>(std::max<int64_t>(opt.shuffleBuffer, 1));
        const uint64_t shuffleSeed =
            rng::mix(opt.seed, static_cast<uint64_t>(opt.reshuffleEachEpoch ? epoch : 0));
        const size_t inputCap = static_cast<size_t>(2 * opt.workers + 2);

        auto push = [&](InputItem item) -> bool {
            std::unique_lock lock(mutex);
            readerCv.wait(lock, [&] { return stop || input.size() < inputCap; });
            if (stop) return false;
            input.push_back(std::move(item));
            workerCv.notify_one();
            return true;
        };
        auto fail = [&](Error e) {
            InputItem item;
            item.error = std::move(e);
            push(std::move(item));
        };
        auto emitFromBuffer = [&](bool drain) -> bool {
            while (buffer.size() >= bufferSize || (drain && !buffer.empty())) {
                size_t j = 0;
                if (bufferSize > 1) {
                    j = pick(shuffleSeed, static_cast<uint64_t>(draws++), buffer.size());
                }
                InputItem item;
                item.sample = std::move(buffer[j]);
                if (bufferSize > 1) {
                    buffer[j] = std::move(buffer.back());
                    buffer.pop_back();
                } else {
                    buffer.erase(buffer.begin());
                }
                if (!push(std::move(item))) return false;
                if (!drain) break;
            }
            return true;
        };

        while (nextFile < files && static_cast<int>(open.size()) < cycle) {
            auto r = records->openFile(nextFile++);
            if (!r.ok()) return fail(std::move(r.error()));
            open.push_back(Open{std::move(r.value())});
        }
        size_t turn = 0;
        while (!open.empty()) {
            {
                std::lock_guard lock(mutex);
                if (stop) return;
            }
            turn %= open.size();
            Sample s;
            auto got = open[turn].reader->next(s);
            if (!got.ok()) return fail(std::move(got.error()));
            if (!got.value()) {
                open.erase(open.begin() + static_cast<std::ptrdiff_t>(turn));
                if (nextFile < files) {
                    auto r = records->openFile(nextFile++);
                    if (!r.ok()) return fail(std::move(r.error()));
                    open.insert(open.begin() + static_cast<std::ptrdiff_t>(turn), Open{std::move(r.value())});
                }
                continue;
            }
            ++turn;
            const int64_t position = ordinal++;
            if (position % opt.shardCount != opt.shardIndex) continue;
            s.index = position;
            buffer.push_back(std::move(s));
            if (!emitFromBuffer(false)) return;
        }
        if (!emitFromBuffer(true)) return;
        std::lock_guard lock(mutex);
        readerDone = true;
        workerCv.notify_all();
    }

    Batch takeSpare() {
        Batch b;
        if (!spare.empty()) {
            b = std::move(spare.back());
            spare.pop_back();
        }
        b.names = names;
        b.shapes = shapes;
        b.columns.resize(names.size());
        for (size_t c = 0; c < names.size(); ++c)
            b.columns[c].resize(static_cast<size_t>(sizes[c] * opt.batchSize));
        b.indices.resize(static_cast<size_t>(opt.batchSize));
        b.origins.resize(static_cast<size_t>(opt.batchSize));
        b.size = 0;
        return b;
    }

    void assemblerLoop() {
        for (;;) {
            Batch batch;
            {
                std::unique_lock lock(mutex);
                assemblerCv.wait(lock,
                                 [&] { return stop || static_cast<int64_t>(ready.size()) < opt.prefetch; });
                if (stop) return;
                batch = takeSpare();
            }
            bool end = false;
            while (batch.size < opt.batchSize) {
                Slot* slot = nullptr;
                {
                    std::unique_lock lock(mutex);
                    assemblerCv.wait(lock, [&] {
                        if (stop) return true;
                        if (total >= 0 && assembled >= total) return true;
                        const auto st = slots[static_cast<size_t>(assembled % ringSize())].state;
                        return st == Slot::St::Ready || st == Slot::St::Skipped || st == Slot::St::Failed;
                    });
                    if (stop) return;
                    if (total >= 0 && assembled >= total) {
                        end = true;
                        break;
                    }
                    slot = &slots[static_cast<size_t>(assembled % ringSize())];
                    if (slot->state == Slot::St::Failed) {
                        // The batch holding the failure is not delivered: the error takes its place.
                        spare.push_back(std::move(batch));
                        error = std::move(slot->error);
                        slot->error.reset();
                        consumerCv.notify_all();
                        return;
                    }
                    if (slot->state == Slot::St::Skipped) {
                        ++skipped;
                        if (badSeen.insert(slot->bad.index).second && bad.size() < 100000)
                            bad.push_back(slot->bad);
                        slot->state = Slot::St::Empty;
                        ++assembled;
                        workerCv.notify_all();
                        continue;
                    }
                }
                // The slot is Ready and owned by the assembler until `assembled` moves on.
                const auto at = static_cast<size_t>(batch.size);
                for (size_t c = 0; c < names.size(); ++c)
                    std::memcpy(batch.columns[c].data() + at * static_cast<size_t>(sizes[c]),
                                slot->data[c].data(), static_cast<size_t>(sizes[c]) * sizeof(float));
                batch.indices[at] = slot->index;
                batch.origins[at] = slot->origin;
                ++batch.size;
                std::lock_guard lock(mutex);
                slot->state = Slot::St::Empty;
                ++assembled;
                workerCv.notify_all();
            }
            std::lock_guard lock(mutex);
            if (batch.size > 0 && (batch.size == opt.batchSize || !opt.dropRemainder))
                pushBatch(std::move(batch));
            if (end) {
                epochDone = true;
                consumerCv.notify_all();
                return;
            }
        }
    }

    // Called with the mutex held.
    void pushBatch(Batch batch) {
        for (size_t c = 0; c < names.size(); ++c)
            batch.columns[c].resize(static_cast<size_t>(batch.size * sizes[c]));
        batch.indices.resize(static_cast<size_t>(batch.size));
        batch.origins.resize(static_cast<size_t>(batch.size));
        ready.push_back(std::move(batch));
        consumerCv.notify_all();
    }
};

// ---------------------------------------------------------------------------------------------
// Pipeline

namespace {

Status checkOptions(const PipelineOptions& o) {
    auto bad = [](const std::string& field, const std::string& msg) {
        return Error(ErrorCode::ConfigError, field + ": " + msg).with("field", field).with("reason", msg);
    };
    if (o.batchSize < 1) return bad("batch_size", "must be at least 1");
    if (o.workers < 1) return bad("workers", "must be at least 1");
    if (o.prefetch < 1) return bad("prefetch", "must be at least 1");
    if (o.shuffleBuffer < 0) return bad("shuffle_buffer", "must not be negative");
    if (o.shardCount < 1 || o.shardIndex < 0 || o.shardIndex >= o.shardCount)
        return bad("shard", "needs count >= 1 and 0 <= index < count");
    if (o.cycleLength < 1) return bad("cycle_length", "must be at least 1");
    return okStatus();
}

Status setupCache(Pipeline::State& s) {
    s.prefix = s.transforms.deterministicPrefix();
    if (s.opt.cache == PipelineOptions::Cache::Memory) s.cache = std::make_unique<MemoryCache>();
    if (s.opt.cache == PipelineOptions::Cache::File) {
        std::string path = s.opt.cacheFile;
        const bool temporary = path.empty();
        if (temporary) {
            path = (std::filesystem::temp_directory_path() /
                    ("kiln-cache-" + std::to_string(reinterpret_cast<uintptr_t>(&s)) + "-" +
                     std::to_string(Clock::now().time_since_epoch().count()) + ".bin"))
                       .string();
        }
        std::string err;
        s.cache = FileCache::open(path, true, &err);
        if (!s.cache)
            return Error(ErrorCode::FileWrite, err + ".")
                .withFile(path)
                .with("path", path)
                .with("reason", err);
    }
    return okStatus();
}

// Runs the transforms on a probe sample to learn the output shapes.
Status setShapes(Pipeline::State& s, Sample& probe) {
    Sample copy = probe;
    KILN_TRY(s.transforms.apply(copy, s.specs, s.opt.seed, 0));
    KILN_TRY(s.transforms.decodeRemaining(copy, s.specs));
    s.names.clear();
    s.shapes.clear();
    s.sizes.clear();
    for (size_t c = 0; c < s.specs.size(); ++c) {
        s.names.push_back(s.specs[c].name);
        s.shapes.push_back(valueShape(copy.values[c]));
        s.sizes.push_back(s.shapes.back().numel());
    }
    return okStatus();
}

}  // namespace

Result<std::unique_ptr<Pipeline>> Pipeline::create(std::shared_ptr<const SampleSource> source,
                                                   TransformList transforms, PipelineOptions options) {
    KILN_TRY(checkOptions(options));
    if (!source) return Error(ErrorCode::InvalidArgument, "The pipeline needs a source.");
    for (int64_t i : options.indices)
        if (i < 0 || i >= source->size())
            return Error(ErrorCode::InvalidArgument, "Sample index " + std::to_string(i) +
                                                         " is outside the data (" +
                                                         std::to_string(source->size()) + " samples).");
    auto p = std::unique_ptr<Pipeline>(new Pipeline());
    p->m_state = std::make_unique<State>();
    State& s = *p->m_state;
    s.source = std::move(source);
    s.transforms = std::move(transforms);
    s.opt = std::move(options);
    s.specs = s.source->columnSpecs();
    s.population = s.opt.indices.empty() ? s.source->size() : static_cast<int64_t>(s.opt.indices.size());
    if (s.population == 0)
        return Error(ErrorCode::DataError, "The data holds no samples.").with("reason", "empty");
    KILN_TRY(setupCache(s));

    // Probe: the first sample of the population that loads.
    std::optional<Error> firstError;
    bool probed = false;
    for (int64_t k = 0; k < std::min<int64_t>(s.population, 64) && !probed; ++k) {
        const int64_t index = s.opt.indices.empty() ? k : s.opt.indices[static_cast<size_t>(k)];
        Sample sample;
        Status st = s.source->load(index, sample);
        if (st.ok()) st = setShapes(s, sample);
        if (st.ok()) {
            probed = true;
        } else if (!isBadSampleError(st.error()) || s.opt.strict) {
            return std::move(st.error());
        } else if (!firstError) {
            firstError = st.error();
        }
    }
    if (!probed) return *firstError;
    return p;
}

Result<std::unique_ptr<Pipeline>> Pipeline::create(std::shared_ptr<const RecordSource> source,
                                                   TransformList transforms, PipelineOptions options) {
    KILN_TRY(checkOptions(options));
    if (!source) return Error(ErrorCode::InvalidArgument, "The pipeline needs a source.");
    if (source->fileCount() == 0)
        return Error(ErrorCode::DataError, "The data names no record files.").with("reason", "no files");
    if (!options.indices.empty())
        return Error(ErrorCode::ConfigError,
                     "Record files are read in order; select a split by file instead of by index.")
            .with("field", "indices")
            .with("reason", "not random access");
    auto p = std::unique_ptr<Pipeline>(new Pipeline());
    p->m_state = std::make_unique<State>();
    State& s = *p->m_state;
    s.records = std::move(source);
    s.transforms = std::move(transforms);
    s.opt = std::move(options);
    s.specs = s.records->columnSpecs();
    for (const ColumnSpec& c : s.specs)
        if (c.text)
            return Error(ErrorCode::ConfigError,
                         "Feature \"" + c.name +
                             "\" holds text, which cannot be batched; leave it out of the feature spec.")
                .with("field", "features." + c.name)
                .with("reason", "text feature");
    s.population = -1;
    KILN_TRY(setupCache(s));
    for (int f = 0; f < s.records->fileCount(); ++f) {
        KILN_ASSIGN(auto reader, s.records->openFile(f));
        Sample sample;
        KILN_ASSIGN(bool got, reader->next(sample));
        if (!got) continue;
        sample.index = 0;
        Status st = setShapes(s, sample);
        if (st.ok()) return p;
        if (!isBadSampleError(st.error()) || s.opt.strict) return std::move(st.error());
    }
    return Error(ErrorCode::DataError, "The record files hold no readable sample.").with("reason", "empty");
}

Pipeline::~Pipeline() = default;

Status Pipeline::startEpoch(int epoch) {
    State& s = *m_state;
    s.stopThreads();
    std::lock_guard lock(s.mutex);
    s.stop = false;
    s.cancelled = false;
    s.epochDone = false;
    s.error.reset();
    s.epoch = epoch;
    s.nextSeq = 0;
    s.assembled = 0;
    s.total = -1;
    s.readerDone = false;
    s.input.clear();
    for (Batch& b : s.ready) s.spare.push_back(std::move(b));
    s.ready.clear();
    s.slots.assign(static_cast<size_t>(s.ringSize()), State::Slot{});
    for (auto& slot : s.slots) slot.data.resize(s.names.size());
    if (s.source) {
        const uint64_t shuffleSeed =
            rng::mix(s.opt.seed, static_cast<uint64_t>(s.opt.reshuffleEachEpoch ? epoch : 0));
        s.order.reset(s.opt.indices.empty() ? nullptr : &s.opt.indices, s.population, s.opt.shardCount,
                      s.opt.shardIndex, s.opt.shuffleBuffer, shuffleSeed);
    }
    s.delivered = s.batches = s.skipped = s.loaded = s.cacheHits = 0;
    s.waitSeconds = 0;
    s.epochStart = Clock::now();
    s.epochEnd.reset();
    s.running = true;
    for (int w = 0; w < s.opt.workers; ++w) s.threads.emplace_back([&s] { s.workerLoop(); });
    s.threads.emplace_back([&s] { s.assemblerLoop(); });
    if (s.records) s.threads.emplace_back([&s] { s.readerLoop(); });
    return okStatus();
}

Result<bool> Pipeline::next(Batch& batch) {
    State& s = *m_state;
    const auto t0 = Clock::now();
    std::unique_lock lock(s.mutex);
    if (!s.running && !s.cancelled)
        return Error(ErrorCode::InvalidArgument, "Call startEpoch() before asking the pipeline for batches.");
    s.consumerCv.wait(lock, [&] { return s.stop || !s.ready.empty() || s.epochDone || s.error.has_value(); });
    s.waitSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!s.ready.empty()) {
        if (!batch.columns.empty()) s.spare.push_back(std::move(batch));
        batch = std::move(s.ready.front());
        s.ready.pop_front();
        s.delivered += batch.size;
        ++s.batches;
        s.assemblerCv.notify_all();
        return true;
    }
    if (s.error) return *s.error;
    if (s.cancelled || s.stop) return Error(ErrorCode::Cancelled, "The data pipeline was cancelled.");
    if (!s.epochEnd) s.epochEnd = Clock::now();
    return false;
}

void Pipeline::cancel() {
    State& s = *m_state;
    {
        std::lock_guard lock(s.mutex);
        s.stop = true;
        s.cancelled = true;
    }
    s.workerCv.notify_all();
    s.assemblerCv.notify_all();
    s.consumerCv.notify_all();
    s.readerCv.notify_all();
}

PipelineStats Pipeline::stats() const {
    const State& s = *m_state;
    std::lock_guard lock(s.mutex);
    PipelineStats out;
    out.epoch = s.epoch;
    out.samples = s.delivered;
    out.batches = s.batches;
    out.skipped = s.skipped;
    out.seconds =
        s.running ? std::chrono::duration<double>(s.epochEnd.value_or(Clock::now()) - s.epochStart).count()
                  : 0.0;
    out.samplesPerSecond = out.seconds > 0 ? static_cast<double>(out.samples) / out.seconds : 0.0;
    out.waitSeconds = s.waitSeconds;
    out.waitFraction = out.seconds > 0 ? std::min(1.0, s.waitSeconds / out.seconds) : 0.0;
    out.queuedBatches = static_cast<int64_t>(s.ready.size());
    out.samplesLoaded = s.loaded;
    out.cacheHits = s.cacheHits;
    return out;
}

std::vector<BadSample> Pipeline::badSamples() const {
    std::lock_guard lock(m_state->mutex);
    return m_state->bad;
}

int64_t Pipeline::badSampleCount() const {
    std::lock_guard lock(m_state->mutex);
    return static_cast<int64_t>(m_state->badSeen.size());
}

const std::vector<std::string>& Pipeline::outputNames() const {
    return m_state->names;
}
const std::vector<Shape>& Pipeline::outputShapes() const {
    return m_state->shapes;
}
const std::vector<ColumnSpec>& Pipeline::sourceColumns() const {
    return m_state->specs;
}

int64_t Pipeline::samplesPerEpoch() const {
    const State& s = *m_state;
    if (!s.source) return -1;
    const int64_t n = s.population - s.opt.shardIndex;
    return n <= 0 ? 0 : (n + s.opt.shardCount - 1) / s.opt.shardCount;
}

int64_t Pipeline::batchesPerEpoch() const {
    const int64_t n = samplesPerEpoch();
    if (n < 0) return -1;
    const int64_t b = m_state->opt.batchSize;
    return m_state->opt.dropRemainder ? n / b : (n + b - 1) / b;
}

}  // namespace kiln::engine::data
