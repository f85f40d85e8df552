// SPDX-License-Identifier: Apache-2.0
// Shape helpers.
#include "engine/core/shape.h"

namespace kiln::engine {

bool Shape::isConcrete() const {
    for (int64_t d : m_dims)
        if (d < 0) return false;
    return true;
}

int64_t Shape::numel() const { return numelFrom(0); }

int64_t Shape::numelFrom(int from) const {
    int64_t n = 1;
    for (size_t i = static_cast<size_t>(from); i < m_dims.size(); ++i)
        n *= (m_dims[i] < 0 ? 1 : m_dims[i]);
    return n;
}

Shape Shape::withBatch(int64_t batch) const {
    Shape s = *this;
    for (auto& d : s.m_dims)
        if (d == kBatch) d = batch;
    return s;
}

Shape Shape::withoutFirst() const {
    if (m_dims.empty()) return {};
    return Shape(std::vector<int64_t>(m_dims.begin() + 1, m_dims.end()));
}

std::string Shape::toString() const {
    std::string s = "[";
    for (size_t i = 0; i < m_dims.size(); ++i) {
        if (i) s += ',';
        s += m_dims[i] == kBatch ? std::string("N") : std::to_string(m_dims[i]);
    }
    return s + "]";
}

}  // namespace kiln::engine
