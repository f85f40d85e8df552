// SPDX-License-Identifier: Apache-2.0
// Index splits: shuffle each class with the Philox generator, lay the classes end to end, then
// hand samples to the split furthest behind its share, so every prefix (and so every class) is
// divided in proportion.
#include "engine/data/split.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "engine/core/rng.h"

namespace kiln::engine::data {

namespace {

constexpr uint64_t kSplitStream = 0x53504c4954ull;  // "SPLIT"

}  // namespace

std::vector<int64_t> shuffledIndices(int64_t count, uint64_t seed, uint64_t stream) {
    std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(count, 0)));
    std::iota(out.begin(), out.end(), int64_t{0});
    for (int64_t i = count - 1; i > 0; --i) {
        // A uniform j in [0, i] from 64 random bits (multiply-shift; bias below 2^-30).
        const uint64_t r = (uint64_t{rng::bits(seed, stream, 2 * static_cast<uint64_t>(i))} << 32) |
                           rng::bits(seed, stream, 2 * static_cast<uint64_t>(i) + 1);
        const auto j =
            static_cast<int64_t>((static_cast<unsigned __int128>(r) * static_cast<uint64_t>(i + 1)) >> 64);
        std::swap(out[static_cast<size_t>(i)], out[static_cast<size_t>(j)]);
    }
    return out;
}

Result<std::vector<std::vector<int64_t>>> splitIndices(int64_t count, std::span<const double> fractions,
                                                       uint64_t seed, const float* labelsForStratification) {
    if (count < 0) return Error(ErrorCode::InvalidArgument, "Cannot split a negative number of samples.");
    if (fractions.empty()) return Error(ErrorCode::InvalidArgument, "A split needs at least one fraction.");
    double sum = 0.0;
    for (double f : fractions) {
        if (!std::isfinite(f) || f < 0.0)
            return Error(ErrorCode::InvalidArgument, "Split fractions must be non-negative numbers.")
                .with("fraction", std::to_string(f));
        sum += f;
    }
    if (sum > 1.0 + 1e-9)
        return Error(ErrorCode::InvalidArgument,
                     "Split fractions add up to " + std::to_string(sum) + "; they may add up to at most 1.")
            .with("sum", std::to_string(sum));
    if (sum <= 0.0) return Error(ErrorCode::InvalidArgument, "Split fractions add up to 0.");

    // Shares, plus a share for the samples left out when the fractions add up to less than 1.
    std::vector<double> shares(fractions.begin(), fractions.end());
    const bool complete = sum >= 1.0 - 1e-9;
    if (complete) {
        for (double& s : shares) s /= sum;
    } else {
        shares.push_back(1.0 - sum);
    }

    // Classes in ascending label order, each shuffled on its own stream.
    std::vector<int64_t> order;
    order.reserve(static_cast<size_t>(count));
    if (labelsForStratification != nullptr) {
        std::map<float, std::vector<int64_t>> classes;
        for (int64_t i = 0; i < count; ++i) {
            const float label = labelsForStratification[i];
            if (std::isnan(label))
                return Error(ErrorCode::DataError, "Sample " + std::to_string(i) +
                                                       " has no label (NaN), so it cannot be stratified.");
            classes[label].push_back(i);
        }
        uint64_t classNumber = 0;
        for (auto& [label, members] : classes) {
            const auto perm = shuffledIndices(static_cast<int64_t>(members.size()), seed,
                                              rng::mix(kSplitStream, classNumber++));
            for (int64_t p : perm) order.push_back(members[static_cast<size_t>(p)]);
        }
    } else {
        order = shuffledIndices(count, seed, kSplitStream);
    }

    // Each sample goes to the split whose count is furthest below its share of the samples so far.
    std::vector<std::vector<int64_t>> out(shares.size());
    for (size_t s = 0; s < shares.size(); ++s)
        out[s].reserve(static_cast<size_t>(std::ceil(shares[s] * static_cast<double>(count))) + 1);
    for (size_t k = 0; k < order.size(); ++k) {
        const auto seen = static_cast<double>(k + 1);
        size_t best = 0;
        double bestDeficit = -1e300;
        for (size_t s = 0; s < shares.size(); ++s) {
            const double deficit = seen * shares[s] - static_cast<double>(out[s].size());
            if (deficit > bestDeficit + 1e-12) {
                bestDeficit = deficit;
                best = s;
            }
        }
        out[best].push_back(order[k]);
    }
    if (!complete) out.pop_back();
    for (auto& list : out) std::sort(list.begin(), list.end());
    return out;
}

Result<std::vector<std::vector<int64_t>>> splitIndices(int64_t count, std::initializer_list<double> fractions,
                                                       uint64_t seed, const float* labelsForStratification) {
    return splitIndices(count, std::span<const double>(fractions.begin(), fractions.size()), seed,
                        labelsForStratification);
}

Standardizer::Standardizer(std::string column, std::vector<float> mean, std::vector<float> stddev)
    : m_column(std::move(column)), m_mean(std::move(mean)), m_stddev(std::move(stddev)) {
    m_stddev.resize(m_mean.size(), 1.0f);
    for (float& s : m_stddev)
        if (!(s > 0.0f) || !std::isfinite(s)) s = 1.0f;
}

Result<Standardizer> Standardizer::fit(const InMemoryDataset& training, const std::string& column) {
    const Column* col = training.column(column);
    if (col == nullptr)
        return Error(ErrorCode::InvalidArgument,
                     "The data set has no column \"" + column + "\" to standardize.")
            .with("column", column);
    const int64_t n = training.count();
    if (n == 0)
        return Error(ErrorCode::InvalidArgument, "Cannot fit a standardizer on an empty data set.")
            .with("column", column);
    const auto f = static_cast<size_t>(col->sampleSize());
    std::vector<double> mean(f, 0.0), var(f, 0.0);
    for (int64_t i = 0; i < n; ++i) {
        const float* x = col->values.data() + static_cast<size_t>(i) * f;
        for (size_t j = 0; j < f; ++j) {
            if (!std::isfinite(x[j]))
                return Error(ErrorCode::DataError, "Sample " + std::to_string(i) + " of column \"" + column +
                                                       "\" holds a value that is not a finite number.")
                    .with("column", column);
            mean[j] += x[j];
        }
    }
    for (double& m : mean) m /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
        const float* x = col->values.data() + static_cast<size_t>(i) * f;
        for (size_t j = 0; j < f; ++j) {
            const double d = x[j] - mean[j];
            var[j] += d * d;
        }
    }
    std::vector<float> meanOut(f), stdOut(f);
    for (size_t j = 0; j < f; ++j) {
        const double sd = std::sqrt(var[j] / static_cast<double>(n));
        meanOut[j] = static_cast<float>(mean[j]);
        stdOut[j] = sd > 1e-20 ? static_cast<float>(sd) : 1.0f;
    }
    return Standardizer(column, std::move(meanOut), std::move(stdOut));
}

Status Standardizer::apply(InMemoryDataset& data) const {
    Column* col = data.column(m_column);
    if (col == nullptr)
        return Error(ErrorCode::InvalidArgument,
                     "The data set has no column \"" + m_column + "\" to standardize.")
            .with("column", m_column);
    if (col->sampleSize() != size())
        return Error(ErrorCode::ShapeMismatch, "Column \"" + m_column + "\" has " +
                                                   std::to_string(col->sampleSize()) +
                                                   " values per sample, but the standardizer was fitted on " +
                                                   std::to_string(size()) + ".")
            .with("column", m_column);
    apply(std::span<float>(col->values));
    return okStatus();
}

void Standardizer::apply(std::span<float> values) const {
    const size_t f = m_mean.size();
    if (f == 0) return;
    std::vector<float> inv(f);
    for (size_t j = 0; j < f; ++j) inv[j] = 1.0f / m_stddev[j];
    for (size_t i = 0; i + f <= values.size(); i += f)
        for (size_t j = 0; j < f; ++j) values[i + j] = (values[i + j] - m_mean[j]) * inv[j];
}

}  // namespace kiln::engine::data
