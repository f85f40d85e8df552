// SPDX-License-Identifier: Apache-2.0
// Tensor shapes. A dimension of -1 is the symbolic batch size, printed as "N".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace kiln::engine {

class Shape {
public:
    static constexpr int64_t kBatch = -1;

    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : m_dims(dims) {}
    explicit Shape(std::vector<int64_t> dims) : m_dims(std::move(dims)) {}

    int rank() const { return static_cast<int>(m_dims.size()); }
    int64_t operator[](int i) const { return m_dims[static_cast<size_t>(i < 0 ? i + rank() : i)]; }
    int64_t& operator[](int i) { return m_dims[static_cast<size_t>(i < 0 ? i + rank() : i)]; }
    const std::vector<int64_t>& dims() const { return m_dims; }
    bool hasBatch() const { return !m_dims.empty() && m_dims[0] == kBatch; }
    bool isConcrete() const;
    // Product of all dimensions; the symbolic batch counts as 1.
    int64_t numel() const;
    // Product of dimensions [from, rank).
    int64_t numelFrom(int from) const;
    // The same shape with the symbolic batch replaced by `batch`.
    Shape withBatch(int64_t batch) const;
    Shape withoutFirst() const;
    std::string toString() const;  // "[N,28,28,1]"

    bool operator==(const Shape&) const = default;

private:
    std::vector<int64_t> m_dims;
};

}  // namespace kiln::engine
