// SPDX-License-Identifier: Apache-2.0
// A dense, row-major tensor on a device. Storage is shared between views; a view is a byte
// offset into it. Host tensors are 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

#include "engine/core/allocator.h"
#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/core/shape.h"

namespace kiln::engine {

class Storage {
public:
    explicit Storage(size_t bytes) : m_bytes(bytes), m_data(makeAlignedBuffer(bytes)) {}
    // Wrap memory owned elsewhere (e.g. a plan's arena); the owner must outlive the storage.
    Storage(void* external, size_t bytes) : m_bytes(bytes), m_external(external) {}
    std::byte* data() { return m_external ? static_cast<std::byte*>(m_external) : m_data.get(); }
    size_t bytes() const { return m_bytes; }

private:
    size_t m_bytes;
    AlignedBuffer m_data;
    void* m_external = nullptr;
};

class Tensor {
public:
    Tensor() = default;
    // A zero-filled host tensor. `shape` must be concrete.
    Tensor(Shape shape, DType dtype = DType::F32);
    static Tensor wrap(void* data, Shape shape, DType dtype = DType::F32);
    static Tensor fromVector(Shape shape, const std::vector<float>& values);

    bool defined() const { return static_cast<bool>(m_storage); }
    const Shape& shape() const { return m_shape; }
    DType dtype() const { return m_dtype; }
    Device device() const { return m_device; }
    int64_t numel() const { return m_shape.numel(); }
    size_t bytes() const { return static_cast<size_t>(numel()) * dtypeSize(m_dtype); }

    void* raw() { return m_storage->data() + m_offset; }
    const void* raw() const { return m_storage->data() + m_offset; }
    template <typename T> T* data() { return static_cast<T*>(raw()); }
    template <typename T> const T* data() const { return static_cast<const T*>(raw()); }
    std::span<float> f32() { return {data<float>(), static_cast<size_t>(numel())}; }
    std::span<const float> f32() const { return {data<float>(), static_cast<size_t>(numel())}; }

    // A view with another shape of the same element count.
    Tensor reshaped(Shape shape) const;
    Tensor clone() const;
    void fill(float v);
    void copyFrom(const Tensor& other);  // same element count and dtype

private:
    std::shared_ptr<Storage> m_storage;
    size_t m_offset = 0;
    Shape m_shape;
    DType m_dtype = DType::F32;
    Device m_device;
};

}  // namespace kiln::engine
