// SPDX-License-Identifier: Apache-2.0
// Small builders for attribute specs and shared pieces of the op family files.
#pragma once

#include <algorithm>
#include <memory>

#include "engine/ops/kernels/activations.h"
#include "engine/ops/op_table.h"

namespace kiln::engine::ops::detail {

inline AttrSpec intAttr(std::string name, int64_t def, std::optional<double> min, std::optional<double> max,
                        std::string doc) {
    return {std::move(name), AttrType::Int, def, false, min, max, {}, 0, std::move(doc)};
}
inline AttrSpec requiredInt(std::string name, double min, std::string doc) {
    return {std::move(name), AttrType::Int, int64_t{0}, true, min, std::nullopt, {}, 0, std::move(doc)};
}
inline AttrSpec floatAttr(std::string name, double def, std::optional<double> min, std::optional<double> max,
                          std::string doc) {
    return {std::move(name), AttrType::Float, def, false, min, max, {}, 0, std::move(doc)};
}
inline AttrSpec boolAttr(std::string name, bool def, std::string doc) {
    return {std::move(name), AttrType::Bool, def, false, std::nullopt, std::nullopt, {}, 0, std::move(doc)};
}
inline AttrSpec choiceAttr(std::string name, std::string def, std::vector<std::string> choices, std::string doc) {
    return {std::move(name), AttrType::String, std::move(def), false, std::nullopt, std::nullopt, std::move(choices), 0,
            std::move(doc)};
}
inline AttrSpec intsAttr(std::string name, std::vector<int64_t> def, int length, std::optional<double> min,
                         std::string doc, bool required = false) {
    return {std::move(name), AttrType::IntList, std::move(def), required, min, std::nullopt, {}, length, std::move(doc)};
}

// The "activation" attribute of Dense and Conv2D.
inline AttrSpec activationAttr() {
    return choiceAttr("activation", "linear", {"linear", "relu", "relu6", "sigmoid", "tanh", "softmax", "gelu"},
                      "activation applied to the output");
}
inline kernels::Activation activationFromName(const std::string& s) {
    if (s == "relu") return kernels::Activation::ReLU;
    if (s == "relu6") return kernels::Activation::ReLU6;
    if (s == "sigmoid") return kernels::Activation::Sigmoid;
    if (s == "tanh") return kernels::Activation::Tanh;
    if (s == "softmax") return kernels::Activation::Softmax;
    if (s == "gelu") return kernels::Activation::GELU;
    return kernels::Activation::Linear;
}

// Applies an activation in place on a [rows, cols] output (after GEMM/convolution) and back.
// GELU keeps its pre-activation in `saved`; the others are differentiated from the output.
class ActivationEpilogue {
public:
    ActivationEpilogue(kernels::Activation act, int64_t rows, int64_t cols) : m_act(act), m_rows(rows), m_cols(cols) {}
    bool active() const { return m_act != kernels::Activation::Linear; }
    size_t savedFloats() const { return m_act == kernels::Activation::GELU ? static_cast<size_t>(m_rows * m_cols) : 0; }
    size_t scratchFloats() const { return active() ? static_cast<size_t>(m_rows * m_cols) : 0; }
    // y holds the pre-activation on entry (bias already added) and the activation on exit.
    void forward(float* y, float* saved, ThreadPool& pool) const;
    // Gradient w.r.t. the pre-activation, OVERWRITTEN into dpre (size rows*cols); when
    // the activation is linear, returns dy itself and writes nothing.
    const float* backward(const float* y, const float* dy, float* dpre, const float* saved, ThreadPool& pool) const;

private:
    kernels::Activation m_act;
    int64_t m_rows, m_cols;
};

// Whether a backward step writes input k's gradient first and so overwrites it (see
// KernelIo::dInOverwrite).
inline bool overwritesGrad(const KernelIo& io, size_t k) {
    return k < io.dInOverwrite.size() && io.dInOverwrite[k] != 0;
}

// Accumulates column sums of a [rows, cols] matrix into out[cols] (bias gradients), deterministic.
void addColumnSums(const float* m, int64_t rows, int64_t cols, float* out, ThreadPool& pool);

template <typename K, typename... A>
Result<std::unique_ptr<CpuKernel>> makeKernel(A&&... args) {
    return std::unique_ptr<CpuKernel>(std::make_unique<K>(std::forward<A>(args)...));
}

}  // namespace kiln::engine::ops::detail
