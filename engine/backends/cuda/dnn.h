// SPDX-License-Identifier: Apache-2.0
// cuDNN convolutions (forward, backward data, backward filter) on NHWC tensors with Keras HWIO
// weights, and softmax. Algorithms are chosen by cuDNN's heuristics once per shape and cached.
// The legacy cuDNN API is used; its deprecation warnings stay inside dnn.cpp.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/backends/cuda/blas.h"
#include "engine/backends/cuda/device_context.h"

namespace kiln::engine::cuda {

struct ConvShape {
    int64_t n, h, w, c;  // input NHWC (already padded when the padding is asymmetric)
    int64_t kh, kw, oc, groups;
    int64_t sh, sw, dh, dw;  // strides, dilations
    int64_t padH, padW;      // symmetric padding cuDNN applies
    int64_t oh, ow;
};

// Descriptors and algorithm choices for one convolution shape.
class Convolution {
public:
    static Result<std::unique_ptr<Convolution>> create(DeviceContext& ctx, const ConvShape& s, DataType type);
    ~Convolution();
    // y = conv(x, wOhwi) (overwrites y); x, w, y of `type`.
    Status forward(DeviceContext& ctx, const void* x, const void* wOhwi, void* y);
    // dx += convᵀ(dy, w); fp32.
    Status backwardData(DeviceContext& ctx, const float* wOhwi, const float* dy, float* dx);
    // dwOhwi = ∂/∂w (overwrites); fp32.
    Status backwardFilter(DeviceContext& ctx, const float* x, const float* dy, float* dwOhwi);

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Softmax over the last axis of [rows, c]: y = softmax(x); dx += softmax'(y)·dy.
Status softmaxForward(DeviceContext& ctx, const float* x, float* y, int64_t rows, int64_t c);
Status softmaxBackward(DeviceContext& ctx, const float* y, const float* dy, float* dx, int64_t rows,
                       int64_t c);

// The cuDNN version the library reports at run time (e.g. 91900), 0 when it cannot load.
int cudnnRuntimeVersion();

}  // namespace kiln::engine::cuda
