// SPDX-License-Identifier: Apache-2.0
// cuDNN convolutions (forward, backward data, backward filter) on NHWC tensors with Keras HWIO
// weights, and softmax. Algorithms are chosen by cuDNN's heuristics once per shape and type and
// cached; each runs with the math type the heuristic paired it with, and one cuDNN refuses at run
// time gives way to the next. The legacy cuDNN API is used; its deprecation warnings stay inside
// dnn.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// "fp32", "fp16", "bf16".
const char* dataTypeName(DataType t);
// "input 256x229x229x3 (NHWC, fp16), filter 64x7x7x3 (OHWI), stride 2x2, ..." for errors and notes.
std::string describeConvolution(const ConvShape& s, DataType type);

// Descriptors and algorithm choices for one convolution shape and data type. Errors name the
// shapes, layout and data type; Unsupported means cuDNN offers or runs no algorithm for it (the
// caller may fall back to fp32), any other code a failure of the device or library.
class Convolution {
public:
    // Forward algorithms for `type`; for fp32 also the backward ones (backward runs in fp32 only).
    // Without `allowTf32`, fp32 runs with FMA math only (no TF32 tensor cores).
    static Result<std::unique_ptr<Convolution>> create(DeviceContext& ctx, const ConvShape& s, DataType type,
                                                       bool allowTf32 = true);
    ~Convolution();
    DataType type() const;
    const std::string& description() const;
    // y = conv(x, wOhwi) (overwrites y); x, w, y of `type`.
    Status forward(DeviceContext& ctx, const void* x, const void* wOhwi, void* y);
    // dx += convᵀ(dy, w); fp32 convolutions only.
    Status backwardData(DeviceContext& ctx, const float* wOhwi, const float* dy, float* dx);
    // dwOhwi = ∂/∂w (overwrites); fp32 convolutions only.
    Status backwardFilter(DeviceContext& ctx, const float* x, const float* dy, float* dwOhwi);

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Fallbacks taken in this process (an algorithm cuDNN refused at run time, a 16-bit convolution
// run in fp32), one line each, for logs; noteConvolution adds one (duplicates are dropped).
std::vector<std::string> convolutionNotes();
void noteConvolution(const std::string& note);

// Softmax over the last axis of [rows, c]: y = softmax(x); dx += softmax'(y)·dy.
Status softmaxForward(DeviceContext& ctx, const float* x, float* y, int64_t rows, int64_t c);
Status softmaxBackward(DeviceContext& ctx, const float* y, const float* dy, float* dx, int64_t rows,
                       int64_t c);

// The cuDNN version the library reports at run time (e.g. 91900), 0 when it cannot load.
int cudnnRuntimeVersion();

}  // namespace kiln::engine::cuda
