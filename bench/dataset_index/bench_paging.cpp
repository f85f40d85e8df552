// SPDX-License-Identifier: Apache-2.0
// Dataset index paging at scale: builds an index of synthetic rows (1,000,000 by default, no image
// files) and times page reads at 0 %, 50 % and 99 % of the rows, with and without filters, read
// by LIMIT/OFFSET and by anchors, plus the anchor walk itself.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/data/dataset_index.h"

using namespace kiln::engine::data;
namespace fs = std::filesystem;

namespace {

template <class T>
T orElse(const kiln::engine::Result<T>& r, T fallback) {
    return r.ok() ? *r : fallback;
}

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// `rows` samples over 100 classes, each with a split (80/10/10 by a fixed pattern) and 1 % bad.
std::vector<SampleRecord> syntheticRows(int64_t from, int64_t to, int64_t rows) {
    const int64_t classes = 100;
    std::vector<SampleRecord> out;
    out.reserve(static_cast<size_t>(to - from));
    for (int64_t i = from; i < to; ++i) {
        SampleRecord r;
        const int64_t c = i * classes / rows;
        r.label = static_cast<int>(c);
        char cls[16], file[48];
        std::snprintf(cls, sizeof cls, "class%03lld", static_cast<long long>(c));
        std::snprintf(file, sizeof file, "%s/img_%08lld.jpg", cls, static_cast<long long>(i));
        r.className = cls;
        r.path = file;
        r.byteSize = 20000 + i % 5000;
        r.mtimeNs = 1'700'000'000'000'000'000 + i;
        r.hash = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
        r.width = 224;
        r.height = 224;
        const int64_t m = i % 10;
        r.split = m < 8 ? SampleSplit::Train : m == 8 ? SampleSplit::Validation : SampleSplit::Test;
        if (i % 100 == 37) {
            r.status = SampleStatus::Bad;
            r.reason = "truncated JPEG: no end-of-image marker";
        }
        out.push_back(std::move(r));
    }
    return out;
}

// Median of `reps` timings of one page read at `offset`.
template <class Read>
double medianMs(Read read, int reps) {
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
        const auto start = Clock::now();
        auto rows = read();
        t.push_back(msSince(start));
        if (!rows.ok() || rows->empty()) {
            std::fprintf(stderr, "page read failed or empty\n");
            std::exit(1);
        }
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int64_t rows = 1'000'000;
    std::string dir = (fs::temp_directory_path() / "kiln_bench_paging").string();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rows" && i + 1 < argc)
            rows = std::atoll(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_paging [--rows N] [--dir FOLDER]\n");
            return 2;
        }
    }
    fs::create_directories(dir);
    const std::string path = (fs::path(dir) / ("paging_" + std::to_string(rows) + ".kindex")).string();
    bool fresh = !fs::exists(path);
    auto index = DatasetIndex::open(path);
    if (!index.ok()) {
        std::fprintf(stderr, "%s\n", index.error().toString().c_str());
        return 1;
    }
    if (!fresh && orElse(index->count(), int64_t{0}) != rows) {
        std::fprintf(stderr, "%s holds another row count; remove it first\n", path.c_str());
        return 1;
    }
    if (fresh) {
        const auto t = Clock::now();
        for (int64_t from = 0; from < rows; from += 100'000) {
            auto st = index->insertRecords(syntheticRows(from, std::min(rows, from + 100'000), rows));
            if (!st.ok()) {
                std::fprintf(stderr, "%s\n", st.error().toString().c_str());
                return 1;
            }
        }
        std::printf("built %lld rows in %.0f ms: %s\n", static_cast<long long>(rows), msSince(t),
                    path.c_str());
    } else {
        std::printf("reusing %s\n", path.c_str());
    }
    if (!orElse(index->hasTally(), false)) {
        // A file made before the tally: its next scan adds it, as here.
        const auto t = Clock::now();
        if (auto st = index->ensureTally(); !st.ok()) {
            std::fprintf(stderr, "%s\n", st.error().toString().c_str());
            return 1;
        }
        std::printf("tally added in %.0f ms\n", msSince(t));
    }

    struct Case {
        const char* name;
        SampleFilter filter;
    };
    const Case cases[] = {
        {"all", {}},
        {"split=train", {std::nullopt, SampleSplit::Train, std::nullopt}},
        {"status=bad", {std::nullopt, std::nullopt, SampleStatus::Bad}},
        {"label=50", {50, std::nullopt, std::nullopt}},
        {"split=train,status=ok", {std::nullopt, SampleSplit::Train, SampleStatus::Ok}},
    };
    const int64_t page = DatasetIndex::kAnchorStride;
    std::printf("\n%-22s %9s | %-28s | %-28s | %s\n", "filter", "rows", "OFFSET 0 / 50 % / 99 % (ms)",
                "anchors 0 / 50 % / 99 % (ms)", "anchor walk: first 99 % read, full walk; count (ms)");
    for (const Case& c : cases) {
        const auto countStart = Clock::now();
        const int64_t n = orElse(index->count(c.filter), int64_t{0});
        const double countMs = msSince(countStart);
        const int64_t offsets[3] = {0, (n / 2) / page * page, (n * 99 / 100) / page * page};
        double byOffset[3], byAnchor[3];
        for (int k = 0; k < 3; ++k)
            byOffset[k] = medianMs([&] { return index->pageByOffset(c.filter, offsets[k], page); }, 7);
        // A second connection, so no anchors exist: the first deep read pays the walk.
        auto fresh2 = DatasetIndex::open(path);
        auto t = Clock::now();
        (void)fresh2->page(c.filter, offsets[2], page);
        const double firstDeep = msSince(t);
        auto fresh3 = DatasetIndex::open(path);
        t = Clock::now();
        while (!orElse(fresh3->prepareAnchors(c.filter, 1 << 30), true)) {}
        const double walk = msSince(t);
        for (int k = 0; k < 3; ++k)
            byAnchor[k] = medianMs([&] { return fresh2->page(c.filter, offsets[k], page); }, 7);
        std::printf("%-22s %9lld | %7.2f / %7.2f / %8.2f | %7.3f / %7.3f / %8.3f | %.0f, %.0f; %.2f\n",
                    c.name, static_cast<long long>(n), byOffset[0], byOffset[1], byOffset[2], byAnchor[0],
                    byAnchor[1], byAnchor[2], firstDeep, walk, countMs);
    }

    // Prepared in slices, as the browser does between events: the time of one slice.
    {
        auto idx = DatasetIndex::open(path);
        const int64_t slice = 8192;  // SampleListModel::kAnchorSliceRows
        std::vector<double> t;
        bool done = false;
        while (!done) {
            const auto s = Clock::now();
            done = orElse(idx->prepareAnchors({}, slice), true);
            t.push_back(msSince(s));
        }
        std::sort(t.begin(), t.end());
        std::printf("\nanchors in slices of %lld rows: %zu slices, median %.2f ms, longest %.2f ms\n",
                    static_cast<long long>(slice), t.size(), t[t.size() / 2], t.back());
    }
    return 0;
}
