// SPDX-License-Identifier: Apache-2.0
// Merge family: Concatenate, Add, Multiply (inputs of one shape; Concatenate along an axis).
#include "engine/ops/kernels/elementwise.h"
#include "engine/ops/op_helpers.h"

namespace kiln::engine::ops {
namespace {
using namespace detail;

Result<Shape> elementwiseShape(const ShapeContext& c) {
    const Shape& first = c.inputs[0];
    for (size_t i = 1; i < c.inputs.size(); ++i)
        if (c.inputs[i] != first)
            return shapeError(c, "needs inputs of one shape, but input 1 is " + first.toString() + " and input " +
                                     std::to_string(i + 1) + " is " + c.inputs[i].toString());
    return first;
}

int normaliseAxis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

Result<Shape> concatShape(const ShapeContext& c) {
    const Shape& first = c.inputs[0];
    int rank = first.rank();
    int axis = normaliseAxis(c.attrs.getInt("axis"), rank);
    if (axis <= 0 || axis >= rank)
        return shapeError(c, "axis " + std::to_string(c.attrs.getInt("axis")) + " is invalid for inputs of shape " +
                                 first.toString() + " (the batch axis cannot be concatenated)");
    std::vector<int64_t> dims = first.dims();
    for (size_t i = 1; i < c.inputs.size(); ++i) {
        const Shape& s = c.inputs[i];
        bool ok = s.rank() == rank;
        for (int d = 0; ok && d < rank; ++d)
            if (d != axis && s[d] != first[d]) ok = false;
        if (!ok)
            return shapeError(c, "cannot join " + first.toString() + " and " + s.toString() + " along axis " +
                                     std::to_string(axis) + ": the other dimensions must match");
        dims[static_cast<size_t>(axis)] += s[axis];
    }
    return Shape(dims);
}

class AddKernel final : public CpuKernel {
public:
    explicit AddKernel(int64_t n) : m_n(n) {}
    bool backwardNeedsInputs() const override { return false; }
    bool backwardNeedsOutput() const override { return m_relu; }
    bool overwritesInputGrads() const override { return true; }
    bool fuseRelu() override {
        m_relu = true;
        return true;
    }
    Status forward(const KernelIo& io) override {
        kernels::addN(io.in.data(), static_cast<int>(io.in.size()), io.out, m_n, *io.pool, m_relu);
        return {};
    }
    Status backward(const KernelIo& io) override {
        // Add(x, x) names one buffer twice: it is never overwritten, and receives both terms.
        kernels::addNBackward(io.dOut, m_relu ? io.out : nullptr, io.dIn.data(),
                              io.dInOverwrite.empty() ? nullptr : io.dInOverwrite.data(),
                              static_cast<int>(io.dIn.size()), m_n, *io.pool);
        return {};
    }

private:
    int64_t m_n;
    bool m_relu = false;  // a following ReLU applied here (fuseRelu)
};

class MultiplyKernel final : public CpuKernel {
public:
    explicit MultiplyKernel(int64_t n) : m_n(n) {}
    size_t workspaceFloats() const override { return static_cast<size_t>(m_n); }
    Status forward(const KernelIo& io) override {
        kernels::multiply(io.in[0], io.in[1], io.out, m_n, *io.pool);
        for (size_t i = 2; i < io.in.size(); ++i) kernels::multiply(io.out, io.in[i], io.out, m_n, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        // d/dx_i = dy * prod_{j != i} x_j, built in the workspace for each input.
        const size_t k = io.in.size();
        for (size_t i = 0; i < k; ++i) {
            if (!io.dIn[i]) continue;
            float* prod = io.workspace;
            kernels::copy(io.dOut, prod, m_n, *io.pool);
            for (size_t j = 0; j < k; ++j)
                if (j != i) kernels::multiply(prod, io.in[j], prod, m_n, *io.pool);
            kernels::accumulate(prod, io.dIn[i], m_n, *io.pool);
        }
        return {};
    }

private:
    int64_t m_n;
};

class ConcatKernel final : public CpuKernel {
public:
    ConcatKernel(int64_t outer, std::vector<int64_t> inners) : m_outer(outer), m_inners(std::move(inners)) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::concatForward(io.in.data(), m_inners.data(), static_cast<int>(m_inners.size()), m_outer, io.out, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        kernels::concatBackward(io.dOut, m_inners.data(), static_cast<int>(m_inners.size()), m_outer, io.dIn.data(),
                                *io.pool);
        return {};
    }

private:
    int64_t m_outer;
    std::vector<int64_t> m_inners;
};

Result<std::unique_ptr<CpuKernel>> addKernel(const ShapeContext&, const Shape& out) {
    return makeKernel<AddKernel>(out.numel());
}
Result<std::unique_ptr<CpuKernel>> multiplyKernel(const ShapeContext&, const Shape& out) {
    return makeKernel<MultiplyKernel>(out.numel());
}
Result<std::unique_ptr<CpuKernel>> concatKernel(const ShapeContext& c, const Shape& out) {
    int axis = normaliseAxis(c.attrs.getInt("axis"), out.rank());
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= out[d];
    std::vector<int64_t> inners;
    for (const auto& s : c.inputs) inners.push_back(s.numelFrom(axis));
    return makeKernel<ConcatKernel>(outer, std::move(inners));
}

}  // namespace

std::vector<OpDef> mergeOps() {
    std::vector<OpDef> rows;
    rows.push_back({OpKind::Concatenate, "Concatenate", Category::Merge, 2, -1,
                    {intAttr("axis", -1, std::nullopt, std::nullopt, "axis along which the inputs are joined")},
                    concatShape, nullptr, nullptr, concatKernel, "Joins its inputs along one axis"});
    rows.push_back({OpKind::Add, "Add", Category::Merge, 2, -1, {}, elementwiseShape, nullptr, nullptr, addKernel,
                    "Sums its inputs element by element (skip connections)"});
    rows.push_back({OpKind::Multiply, "Multiply", Category::Merge, 2, -1, {}, elementwiseShape, nullptr, nullptr,
                    multiplyKernel, "Multiplies its inputs element by element"});
    return rows;
}

}  // namespace kiln::engine::ops
