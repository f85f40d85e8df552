// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// Index splits (sizes, disjoint and complete, deterministic, stratified), seeded shuffles,
// data set subsets and the standardizer.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

#include "engine/data/csv_table.h"
#include "engine/data/split.h"

using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

std::string dataDir() {
    if (const char* env = std::getenv("KILN_DATA"); env != nullptr && *env != '\0') return env;
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + "/.cache/kiln/data";
}

// Labels 0..classes-1 with class k holding sizes[k] samples, spread through the index range.
std::vector<float> makeLabels(const std::vector<int64_t>& sizes) {
    std::vector<float> labels;
    std::vector<int64_t> left = sizes;
    bool any = true;
    while (any) {
        any = false;
        for (size_t k = 0; k < left.size(); ++k)
            if (left[k] > 0) {
                labels.push_back(static_cast<float>(k));
                --left[k];
                any = true;
            }
    }
    return labels;
}

// Every index in [0, count) appears in exactly one list, and each list is sorted.
bool disjointAndComplete(const std::vector<std::vector<int64_t>>& lists, int64_t count) {
    std::vector<int> seen(static_cast<size_t>(count), 0);
    for (const auto& l : lists) {
        if (!std::is_sorted(l.begin(), l.end())) return false;
        for (int64_t i : l) {
            if (i < 0 || i >= count) return false;
            ++seen[static_cast<size_t>(i)];
        }
    }
    return std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; });
}

InMemoryDataset makeSet(int64_t n, int64_t features) {
    Column x;
    x.name = "x";
    x.sampleShape = Shape{features};
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < features; ++j)
            x.values.push_back(
                j == features - 1 ? 7.0f : static_cast<float>(i * (j + 1)) + 0.5f * static_cast<float>(j));
    Column y;
    y.name = "y";
    y.sampleShape = Shape{};
    for (int64_t i = 0; i < n; ++i) y.values.push_back(static_cast<float>(i % 3));
    std::vector<Column> cols;
    cols.push_back(std::move(x));
    cols.push_back(std::move(y));
    auto set = InMemoryDataset::create(n, std::move(cols));
    return std::move(set).value();
}

}  // namespace

class TestSplit : public QObject {
    Q_OBJECT

private slots:
    void sizesDisjointComplete() {
        for (int64_t n : {0, 1, 7, 10, 999, 1000}) {
            auto split = splitIndices(n, {0.7, 0.2, 0.1}, 42);
            QVERIFY(split.ok());
            QCOMPARE(split->size(), size_t{3});
            QVERIFY(disjointAndComplete(*split, n));
            const double fr[] = {0.7, 0.2, 0.1};
            for (size_t s = 0; s < 3; ++s)
                QVERIFY2(
                    std::abs(static_cast<double>((*split)[s].size()) - fr[s] * static_cast<double>(n)) <= 1.0,
                    (std::to_string(n) + " split " + std::to_string(s)).c_str());
        }
        // Every size and several share patterns: each list is within one sample of its share.
        const std::vector<std::vector<double>> patterns = {
            {1.0 / 3, 1.0 / 3, 1.0 / 3}, {0.6, 0.25, 0.15}, {0.9, 0.1}, {0.05, 0.9, 0.05}, {0.3, 0.3}};
        for (const auto& p : patterns)
            for (int64_t n = 0; n <= 150; ++n) {
                auto split = splitIndices(n, p, static_cast<uint64_t>(n));
                QVERIFY(split.ok());
                for (size_t s = 0; s < p.size(); ++s)
                    QVERIFY(std::abs(static_cast<double>((*split)[s].size()) -
                                     p[s] * static_cast<double>(n)) < 1.0 + 1e-9);
            }

        auto exact = splitIndices(1000, {0.8, 0.2}, 1);
        QCOMPARE((*exact)[0].size(), size_t{800});
        QCOMPARE((*exact)[1].size(), size_t{200});

        // A vector of fractions works the same as a braced list.
        const std::vector<double> fractions = {0.8, 0.2};
        auto fromVector = splitIndices(1000, fractions, 1);
        QVERIFY(fromVector.ok());
        QCOMPARE(*fromVector, *exact);
    }

    void partialFractions() {
        auto split = splitIndices(1000, {0.5, 0.2}, 3);
        QVERIFY(split.ok());
        QCOMPARE(split->size(), size_t{2});
        QCOMPARE((*split)[0].size(), size_t{500});
        QCOMPARE((*split)[1].size(), size_t{200});
        std::set<int64_t> all((*split)[0].begin(), (*split)[0].end());
        all.insert((*split)[1].begin(), (*split)[1].end());
        QCOMPARE(all.size(), size_t{700});
    }

    void deterministic() {
        const auto labels = makeLabels({300, 200, 100});
        auto a = splitIndices(600, {0.8, 0.2}, 1234, labels.data());
        auto b = splitIndices(600, {0.8, 0.2}, 1234, labels.data());
        auto c = splitIndices(600, {0.8, 0.2}, 1235, labels.data());
        QVERIFY(a.ok() && b.ok() && c.ok());
        QCOMPARE(*a, *b);
        QVERIFY(*a != *c);
        auto plainA = splitIndices(600, {0.8, 0.2}, 99);
        auto plainB = splitIndices(600, {0.8, 0.2}, 99);
        QCOMPARE(*plainA, *plainB);
        // The split is a real shuffle, not a block of the index range.
        QVERIFY((*plainA)[1].front() < 100 && (*plainA)[1].back() > 500);

        QCOMPARE(shuffledIndices(50, 7), shuffledIndices(50, 7));
        QVERIFY(shuffledIndices(50, 7) != shuffledIndices(50, 8));
        QVERIFY(shuffledIndices(50, 7, 0) != shuffledIndices(50, 7, 1));
        auto perm = shuffledIndices(50, 7);
        std::sort(perm.begin(), perm.end());
        for (int64_t i = 0; i < 50; ++i) QCOMPARE(perm[static_cast<size_t>(i)], i);
    }

    void shuffleIsUniform() {
        // Where index 0 lands over 4000 seeds: every one of 8 positions about 500 times.
        std::vector<int> hits(8, 0);
        for (uint64_t seed = 0; seed < 4000; ++seed) {
            const auto p = shuffledIndices(8, seed);
            const auto at = std::find(p.begin(), p.end(), 0) - p.begin();
            ++hits[static_cast<size_t>(at)];
        }
        for (int h : hits) QVERIFY2(h > 400 && h < 600, std::to_string(h).c_str());
    }

    void stratified() {
        const std::vector<int64_t> sizes = {500, 300, 150, 45, 5};
        const auto labels = makeLabels(sizes);
        const auto n = static_cast<int64_t>(labels.size());
        const double fr[] = {0.7, 0.2, 0.1};
        auto split = splitIndices(n, fr, 5, labels.data());
        QVERIFY(split.ok());
        QVERIFY(disjointAndComplete(*split, n));
        for (size_t s = 0; s < 3; ++s) {
            QVERIFY(std::abs(static_cast<double>((*split)[s].size()) - fr[s] * static_cast<double>(n)) <=
                    1.0);
            std::vector<int64_t> perClass(sizes.size(), 0);
            for (int64_t i : (*split)[s]) ++perClass[static_cast<size_t>(labels[static_cast<size_t>(i)])];
            for (size_t k = 0; k < sizes.size(); ++k) {
                const double ideal = fr[s] * static_cast<double>(sizes[k]);
                QVERIFY2(std::abs(static_cast<double>(perClass[k]) - ideal) <= 2.0,
                         ("split " + std::to_string(s) + " class " + std::to_string(k) + ": " +
                          std::to_string(perClass[k]) + " vs " + std::to_string(ideal))
                             .c_str());
            }
        }

        // Without stratification the same data set drifts further for some seed; with it, never.
        int worstPlain = 0;
        for (uint64_t seed = 0; seed < 20; ++seed) {
            auto plain = splitIndices(n, {0.5, 0.5}, seed);
            int64_t rare = 0;
            for (int64_t i : (*plain)[0]) rare += labels[static_cast<size_t>(i)] == 3.0f ? 1 : 0;
            worstPlain = std::max(worstPlain, static_cast<int>(std::abs(static_cast<double>(rare) - 22.5)));
            auto strat = splitIndices(n, {0.5, 0.5}, seed, labels.data());
            rare = 0;
            for (int64_t i : (*strat)[0]) rare += labels[static_cast<size_t>(i)] == 3.0f ? 1 : 0;
            QVERIFY(std::abs(static_cast<double>(rare) - 22.5) <= 2.0);
        }
        QVERIFY(worstPlain > 2);
    }

    void invalidArguments() {
        QVERIFY(!splitIndices(10, {0.8, 0.3}, 0).ok());
        QVERIFY(!splitIndices(10, {-0.1, 0.5}, 0).ok());
        QVERIFY(!splitIndices(10, std::vector<double>{}, 0).ok());
        QVERIFY(!splitIndices(10, {0.0}, 0).ok());
        QVERIFY(!splitIndices(-1, {1.0}, 0).ok());
        QCOMPARE(splitIndices(10, {0.8, 0.3}, 0).error().code, ErrorCode::InvalidArgument);
        std::vector<float> labels(10, 1.0f);
        labels[4] = std::nanf("");
        auto nan = splitIndices(10, {0.5, 0.5}, 0, labels.data());
        QVERIFY(!nan.ok());
        QCOMPARE(nan.error().code, ErrorCode::DataError);
    }

    void subsets() {
        const InMemoryDataset set = makeSet(10, 3);
        const int64_t picks[] = {9, 2, 2};
        auto sub = set.subset(picks);
        QVERIFY(sub.ok());
        QCOMPARE(sub->count(), int64_t{3});
        QCOMPARE(sub->column("y")->values, (std::vector<float>{0, 2, 2}));
        const auto row = sub->column("x")->sample(0);
        QCOMPARE(std::vector<float>(row.begin(), row.end()),
                 std::vector<float>(set.column("x")->sample(9).begin(), set.column("x")->sample(9).end()));
        const int64_t bad[] = {10};
        QVERIFY(!set.subset(bad).ok());

        // Column sizes are checked when a data set is built.
        InMemoryDataset two(2);
        QVERIFY(!two.addColumn(Column{"v", Shape{3}, {1, 2, 3}, {}, {}}).ok());
        QVERIFY(two.addColumn(Column{"v", Shape{3}, {1, 2, 3, 4, 5, 6}, {}, {}}).ok());
        QVERIFY(!two.addColumn(Column{"v", Shape{}, {1, 2}, {}, {}}).ok());
    }

    void standardizer() {
        InMemoryDataset set = makeSet(100, 3);
        auto parts = splitIndices(100, {0.8, 0.2}, 11, set.column("y")->values.data());
        QVERIFY(parts.ok());
        auto train = set.subset((*parts)[0]);
        auto test = set.subset((*parts)[1]);
        QVERIFY(train.ok() && test.ok());
        const std::vector<float> testBefore = test->column("x")->values;

        auto fitted = Standardizer::fit(*train, "x");
        QVERIFY(fitted.ok());
        QCOMPARE(fitted->size(), int64_t{3});
        QCOMPARE(fitted->column(), std::string("x"));
        QCOMPARE(fitted->stddev()[2], 1.0f);  // constant feature: only centred
        QCOMPARE(fitted->mean()[2], 7.0f);

        QVERIFY(fitted->apply(*train).ok());
        const Column& x = *train->column("x");
        for (int j = 0; j < 3; ++j) {
            double mean = 0.0, sq = 0.0;
            for (int64_t i = 0; i < train->count(); ++i) mean += x.values[static_cast<size_t>(i * 3 + j)];
            mean /= static_cast<double>(train->count());
            for (int64_t i = 0; i < train->count(); ++i) {
                const double d = x.values[static_cast<size_t>(i * 3 + j)] - mean;
                sq += d * d;
            }
            const double sd = std::sqrt(sq / static_cast<double>(train->count()));
            QVERIFY(std::abs(mean) < 1e-5);
            QVERIFY(std::abs(sd - (j == 2 ? 0.0 : 1.0)) < 1e-5);
        }

        // The test part is transformed with the training statistics, not its own.
        QVERIFY(fitted->apply(*test).ok());
        const auto& after = test->column("x")->values;
        for (size_t i = 0; i < after.size(); ++i) {
            const size_t j = i % 3;
            const float expected = (testBefore[i] - fitted->mean()[j]) / fitted->stddev()[j];
            QVERIFY(std::abs(after[i] - expected) <= 1e-5f * std::max(1.0f, std::abs(expected)));
        }

        // Mismatches are errors.
        InMemoryDataset other = makeSet(5, 4);
        QCOMPARE(fitted->apply(other).error().code, ErrorCode::ShapeMismatch);
        QVERIFY(!Standardizer::fit(*train, "nope").ok());
        QVERIFY(!Standardizer::fit(InMemoryDataset(0), "x").ok());
        Standardizer manual("x", {1.0f, 2.0f}, {0.0f, 4.0f});
        QCOMPARE(manual.stddev()[0], 1.0f);
        std::vector<float> v = {3.0f, 10.0f, 1.0f, 2.0f};
        manual.apply(std::span<float>(v));
        QCOMPARE(v, (std::vector<float>{2.0f, 2.0f, 0.0f, 0.0f}));
    }

    void realBreastCancerSplit() {
        const std::string path = dataDir() + "/sklearn/breast_cancer.csv";
        if (!std::filesystem::exists(path))
            QSKIP("breast_cancer.csv is not cached (run tools/fetch_data.sh)");
        auto set = readCsvTable(path, {.skipRows = 1});
        QVERIFY(set.ok());
        auto parts = splitIndices(set->count(), {0.8, 0.2}, 2024, set->column("label")->values.data());
        QVERIFY(parts.ok());
        QVERIFY(disjointAndComplete(*parts, 569));
        auto train = set->subset((*parts)[0]);
        auto counts = classCounts(*train->column("label"));
        QVERIFY(counts.ok());
        QVERIFY2(std::abs((*counts)[0] - 170) <= 1 && std::abs((*counts)[1] - 286) <= 1,
                 (std::to_string((*counts)[0]) + "/" + std::to_string((*counts)[1])).c_str());
        auto scaler = Standardizer::fit(*train, "features");
        QVERIFY(scaler.ok());
        QVERIFY(std::abs(scaler->mean()[3] - 654.9f) < 40.0f);  // mean area is about 655
    }
};

QTEST_APPLESS_MAIN(TestSplit)
#include "tst_split.moc"
