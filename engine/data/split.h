// SPDX-License-Identifier: Apache-2.0
// Seeded train/validation/test splits of sample indices (stratified by class on request) and a
// per-feature standardizer fitted on the training part and applied to the others.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/dataset.h"

namespace kiln::engine::data {

// Splits the indices 0..count-1 into fractions.size() disjoint lists, each sorted ascending.
// Fractions are non-negative (0 gives an empty list) and sum to more than 0 and at most 1; when
// they sum to 1 every index lands in exactly one list, otherwise the rest is left out. Sizes are
// within one sample of fraction * count.
// With `labelsForStratification` (count class labels, may be null) every class is split in the
// same proportions, within one or two samples per class. The same seed gives the same split.
Result<std::vector<std::vector<int64_t>>> splitIndices(int64_t count, std::span<const double> fractions,
                                                       uint64_t seed,
                                                       const float* labelsForStratification = nullptr);

// Convenience overload: splitIndices(n, {0.8, 0.2}, seed).
Result<std::vector<std::vector<int64_t>>> splitIndices(int64_t count, std::initializer_list<double> fractions,
                                                       uint64_t seed,
                                                       const float* labelsForStratification = nullptr);

// A seeded permutation of 0..count-1 (Fisher-Yates on Kiln's counter-based generator).
std::vector<int64_t> shuffledIndices(int64_t count, uint64_t seed, uint64_t stream = 0);

// Standardizes one column per element: x' = (x - mean) / std, with mean and (population) standard
// deviation measured on a training set. An element with zero spread gets std 1 (it is only centred).
class Standardizer {
public:
    Standardizer() = default;
    Standardizer(std::string column, std::vector<float> mean, std::vector<float> stddev);

    // Measures `column` of `training`. Fails when the column is missing, the set is empty or a
    // value is not finite.
    static Result<Standardizer> fit(const InMemoryDataset& training, const std::string& column);

    // Standardizes the column of the same name in `data`, in place (shapes must match).
    Status apply(InMemoryDataset& data) const;
    // Standardizes whole samples laid out one after another (values.size() a multiple of size()).
    void apply(std::span<float> values) const;

    const std::string& column() const { return m_column; }
    int64_t size() const { return static_cast<int64_t>(m_mean.size()); }
    const std::vector<float>& mean() const { return m_mean; }
    const std::vector<float>& stddev() const { return m_stddev; }

private:
    std::string m_column;
    std::vector<float> m_mean;
    std::vector<float> m_stddev;
};

}  // namespace kiln::engine::data
