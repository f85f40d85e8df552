// SPDX-License-Identifier: Apache-2.0
// Merge family: Concatenate, Add, Subtract, Multiply (inputs of one shape; Concatenate along an
// axis; Multiply also scales channels by a per-sample vector, as squeeze-and-excitation does).
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

// A Multiply operand [N,C] or [N,1,...,1,C] that scales the channels of `full` [N,...,C].
bool channelBroadcast(const Shape& s, const Shape& full) {
    if (full.rank() < 3 || s == full || s[0] != full[0] || s[-1] != full[-1]) return false;
    if (s.rank() == 2) return true;
    if (s.rank() != full.rank()) return false;
    for (int d = 1; d + 1 < s.rank(); ++d)
        if (s[d] != 1) return false;
    return true;
}

// The output of Multiply: the first input that is not a channel vector; every other input has
// that shape or broadcasts over it per channel.
Result<Shape> multiplyShape(const ShapeContext& c) {
    Shape full = c.inputs[0];
    for (const auto& s : c.inputs)
        if (s.rank() > full.rank() || (s.rank() == full.rank() && s.numelFrom(1) > full.numelFrom(1))) full = s;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        const Shape& s = c.inputs[i];
        if (s == full || channelBroadcast(s, full)) continue;
        return shapeError(c, "needs inputs of one shape, or per-channel scales [N,C] or [N,1,1,C], but input " +
                                 std::to_string(i + 1) + " is " + s.toString() + " and the output would be " +
                                 full.toString());
    }
    return full;
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

// Product of inputs that are either full-size or per-(sample, channel) scales broadcast over the
// positions in between.
class MultiplyKernel final : public CpuKernel {
public:
    MultiplyKernel(int64_t n, int64_t positions, int64_t c, std::vector<char> broadcast)
        : m_n(n), m_positions(positions), m_c(c), m_broadcast(std::move(broadcast)) {}
    size_t workspaceFloats() const override { return static_cast<size_t>(total()); }
    Status forward(const KernelIo& io) override {
        size_t first = 0;
        while (m_broadcast[first]) ++first;
        kernels::copy(io.in[first], io.out, total(), *io.pool);
        for (size_t j = 0; j < io.in.size(); ++j)
            if (j != first) apply(io.out, j, io);
        return {};
    }
    Status backward(const KernelIo& io) override {
        // d/dx_i = dy * prod_{j != i} x_j, built in the workspace for each input; a broadcast
        // input sums it over the positions it was spread across.
        for (size_t i = 0; i < io.in.size(); ++i) {
            if (!io.dIn[i]) continue;
            float* prod = io.workspace;
            kernels::copy(io.dOut, prod, total(), *io.pool);
            for (size_t j = 0; j < io.in.size(); ++j)
                if (j != i) apply(prod, j, io);
            if (m_broadcast[i])
                kernels::sumOverPositions(prod, io.dIn[i], m_n, m_positions, m_c, *io.pool);
            else
                kernels::accumulate(prod, io.dIn[i], total(), *io.pool);
        }
        return {};
    }

private:
    int64_t total() const { return m_n * m_positions * m_c; }
    // y *= input j (y full-size).
    void apply(float* y, size_t j, const KernelIo& io) const {
        if (m_broadcast[j])
            kernels::multiplyChannels(y, io.in[j], y, m_n, m_positions, m_c, *io.pool);
        else
            kernels::multiply(y, io.in[j], y, total(), *io.pool);
    }

    int64_t m_n, m_positions, m_c;
    std::vector<char> m_broadcast;  // per input: a [N,C] scale rather than a full-size operand
};

class SubtractKernel final : public CpuKernel {
public:
    explicit SubtractKernel(int64_t n) : m_n(n) {}
    bool backwardNeedsInputs() const override { return false; }
    Status forward(const KernelIo& io) override {
        kernels::subtract(io.in[0], io.in[1], io.out, m_n, *io.pool);
        return {};
    }
    Status backward(const KernelIo& io) override {
        kernels::subtractBackward(io.dOut, io.dIn[0], io.dIn[1], m_n, *io.pool);
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
Result<std::unique_ptr<CpuKernel>> multiplyKernel(const ShapeContext& c, const Shape& out) {
    std::vector<char> broadcast;
    for (const auto& s : c.inputs) broadcast.push_back(s != out ? 1 : 0);
    const int64_t n = out[0], ch = out[-1];
    return makeKernel<MultiplyKernel>(n, out.numel() / (n * ch), ch, std::move(broadcast));
}
Result<std::unique_ptr<CpuKernel>> subtractKernel(const ShapeContext&, const Shape& out) {
    return makeKernel<SubtractKernel>(out.numel());
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
    rows.push_back({OpKind::Subtract, "Subtract", Category::Merge, 2, 2, {}, elementwiseShape, nullptr, nullptr,
                    subtractKernel, "First input minus the second, element by element"});
    rows.push_back({OpKind::Multiply, "Multiply", Category::Merge, 2, -1, {}, multiplyShape, nullptr, nullptr,
                    multiplyKernel,
                    "Multiplies its inputs element by element; an [N,C] or [N,1,1,C] input scales each channel"});
    return rows;
}

}  // namespace kiln::engine::ops
