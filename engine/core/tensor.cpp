// SPDX-License-Identifier: Apache-2.0
// Host tensor construction and copies.
#include "engine/core/tensor.h"

#include <algorithm>
#include <cassert>

namespace kiln::engine {

Tensor::Tensor(Shape shape, DType dtype)
    : m_shape(std::move(shape)), m_dtype(dtype) {
    assert(m_shape.isConcrete());
    m_storage = std::make_shared<Storage>(std::max<size_t>(bytes(), 1));
    std::memset(m_storage->data(), 0, bytes());
}

Tensor Tensor::wrap(void* data, Shape shape, DType dtype) {
    Tensor t;
    t.m_shape = std::move(shape);
    t.m_dtype = dtype;
    t.m_storage = std::make_shared<Storage>(data, t.bytes());
    return t;
}

Tensor Tensor::fromVector(Shape shape, const std::vector<float>& values) {
    Tensor t(std::move(shape));
    assert(static_cast<size_t>(t.numel()) == values.size());
    std::copy(values.begin(), values.end(), t.data<float>());
    return t;
}

Tensor Tensor::reshaped(Shape shape) const {
    assert(shape.numel() == numel());
    Tensor t = *this;
    t.m_shape = std::move(shape);
    return t;
}

Tensor Tensor::clone() const {
    Tensor t(m_shape, m_dtype);
    std::memcpy(t.raw(), raw(), bytes());
    return t;
}

void Tensor::fill(float v) {
    assert(m_dtype == DType::F32);
    std::fill_n(data<float>(), numel(), v);
}

void Tensor::copyFrom(const Tensor& other) {
    assert(other.bytes() == bytes());
    std::memcpy(raw(), other.raw(), bytes());
}

}  // namespace kiln::engine
