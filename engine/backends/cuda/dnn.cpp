// SPDX-License-Identifier: Apache-2.0
// cuDNN wrappers. The legacy convolution API is deprecated in cuDNN 9 but still exported and
// complete; its warnings are silenced here only.
#include "engine/backends/cuda/dnn.h"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <mutex>
#include <tuple>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace kiln::engine::cuda {
namespace {

Error dnnError(cudnnStatus_t st, const char* what) {
    return Error(ErrorCode::DeviceUnavailable, std::string(what) + ": " + cudnnGetErrorString(st))
        .with("device", "cuda");
}
#define KILN_DNN(call, what)                                                   \
    do {                                                                       \
        cudnnStatus_t kiln_st_ = (call);                                       \
        if (kiln_st_ != CUDNN_STATUS_SUCCESS) return dnnError(kiln_st_, what); \
    } while (0)

cudnnDataType_t dnnType(DataType t) {
    switch (t) {
    case DataType::F32:
        return CUDNN_DATA_FLOAT;
    case DataType::F16:
        return CUDNN_DATA_HALF;
    case DataType::BF16:
        return CUDNN_DATA_BFLOAT16;
    }
    return CUDNN_DATA_FLOAT;
}

struct Algos {
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwdData;
    cudnnConvolutionBwdFilterAlgo_t bwdFilter;
    size_t fwdWs, bwdDataWs, bwdFilterWs;
};
using ShapeKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t, int64_t, int64_t, int64_t, int>;
std::mutex g_mutex;
std::map<ShapeKey, Algos> g_algos;  // per shape and type, for the process

}  // namespace

struct Convolution::Impl {
    ConvShape s{};
    DataType type = DataType::F32;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, x32 = nullptr, y32 = nullptr;
    cudnnFilterDescriptor_t w = nullptr, w32 = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr, conv32 = nullptr;
    Algos algos{};
};

Result<std::unique_ptr<Convolution>> Convolution::create(DeviceContext& ctx, const ConvShape& s,
                                                         DataType type) {
    auto c = std::unique_ptr<Convolution>(new Convolution());
    c->m_impl = std::make_unique<Impl>();
    Impl& m = *c->m_impl;
    m.s = s;
    m.type = type;
    auto handle = static_cast<cudnnHandle_t>(ctx.cudnn());
    auto makeSet = [&](DataType t, cudnnTensorDescriptor_t& xd, cudnnTensorDescriptor_t& yd,
                       cudnnFilterDescriptor_t& wd, cudnnConvolutionDescriptor_t& cd) -> Status {
        const cudnnDataType_t dt = dnnType(t);
        KILN_DNN(cudnnCreateTensorDescriptor(&xd), "cudnnCreateTensorDescriptor");
        KILN_DNN(
            cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, dt, int(s.n), int(s.c), int(s.h), int(s.w)),
            "input descriptor");
        KILN_DNN(cudnnCreateTensorDescriptor(&yd), "cudnnCreateTensorDescriptor");
        KILN_DNN(
            cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, dt, int(s.n), int(s.oc), int(s.oh), int(s.ow)),
            "output descriptor");
        KILN_DNN(cudnnCreateFilterDescriptor(&wd), "cudnnCreateFilterDescriptor");
        KILN_DNN(cudnnSetFilter4dDescriptor(wd, dt, CUDNN_TENSOR_NHWC, int(s.oc), int(s.c / s.groups),
                                            int(s.kh), int(s.kw)),
                 "filter descriptor");
        KILN_DNN(cudnnCreateConvolutionDescriptor(&cd), "cudnnCreateConvolutionDescriptor");
        KILN_DNN(
            cudnnSetConvolution2dDescriptor(cd, int(s.padH), int(s.padW), int(s.sh), int(s.sw), int(s.dh),
                                            int(s.dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "convolution descriptor");
        KILN_DNN(cudnnSetConvolutionGroupCount(cd, int(s.groups)), "group count");
        // Tensor cores: TF32 for fp32 (as cuDNN's default on Ampere and later), fp16/bf16 natively.
        KILN_DNN(
            cudnnSetConvolutionMathType(cd, t == DataType::F32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH),
            "math type");
        int outN = 0, outC = 0, outH = 0, outW = 0;
        KILN_DNN(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &outN, &outC, &outH, &outW),
                 "output size");
        if (outH != s.oh || outW != s.ow || outC != s.oc)
            return Error(ErrorCode::Internal, "cuDNN computes a different convolution output size");
        return {};
    };
    KILN_TRY(makeSet(type, m.x, m.y, m.w, m.conv));
    KILN_TRY(makeSet(DataType::F32, m.x32, m.y32, m.w32, m.conv32));  // backward runs in fp32

    const ShapeKey key{s.n,  s.h,  s.w,  s.c,  s.kh,   s.kw,   s.oc,     s.groups,
                       s.sh, s.sw, s.dh, s.dw, s.padH, s.padW, int(type)};
    std::lock_guard lock(g_mutex);
    if (auto it = g_algos.find(key); it != g_algos.end()) {
        m.algos = it->second;
        return c;
    }
    // The first heuristic choice whose workspace fits Kiln's cap.
    const size_t cap = DeviceContext::kMaxConvWorkspace;
    Algos a{};
    {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int found = 0;
        KILN_DNN(cudnnGetConvolutionForwardAlgorithm_v7(handle, m.x, m.w, m.conv, m.y,
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
                 "choosing a forward convolution algorithm");
        bool ok = false;
        for (int i = 0; i < found && !ok; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= cap) {
                a.fwd = perf[i].algo;
                a.fwdWs = perf[i].memory;
                ok = true;
            }
        if (!ok)
            return Error(ErrorCode::Unsupported, "cuDNN has no forward algorithm for this convolution")
                .with("what", "Conv2D");
    }
    {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        int found = 0;
        KILN_DNN(
            cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, m.w32, m.y32, m.conv32, m.x32,
                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
            "choosing a backward-data algorithm");
        bool ok = false;
        for (int i = 0; i < found && !ok; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= cap) {
                a.bwdData = perf[i].algo;
                a.bwdDataWs = perf[i].memory;
                ok = true;
            }
        if (!ok)
            return Error(ErrorCode::Unsupported, "cuDNN has no backward-data algorithm")
                .with("what", "Conv2D");
    }
    {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        int found = 0;
        KILN_DNN(
            cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                handle, m.x32, m.y32, m.conv32, m.w32, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
            "choosing a backward-filter algorithm");
        bool ok = false;
        for (int i = 0; i < found && !ok; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= cap) {
                a.bwdFilter = perf[i].algo;
                a.bwdFilterWs = perf[i].memory;
                ok = true;
            }
        if (!ok)
            return Error(ErrorCode::Unsupported, "cuDNN has no backward-filter algorithm")
                .with("what", "Conv2D");
    }
    g_algos.emplace(key, a);
    m.algos = a;
    return c;
}

Convolution::~Convolution() {
    if (!m_impl) return;
    for (auto d : {m_impl->x, m_impl->y, m_impl->x32, m_impl->y32})
        if (d) cudnnDestroyTensorDescriptor(d);
    for (auto d : {m_impl->w, m_impl->w32})
        if (d) cudnnDestroyFilterDescriptor(d);
    for (auto d : {m_impl->conv, m_impl->conv32})
        if (d) cudnnDestroyConvolutionDescriptor(d);
}

Status Convolution::forward(DeviceContext& ctx, const void* x, const void* w, void* y) {
    Impl& m = *m_impl;
    KILN_ASSIGN(void* ws, ctx.convWorkspace(m.algos.fwdWs));
    const float one = 1.0f, zero = 0.0f;
    KILN_DNN(cudnnConvolutionForward(static_cast<cudnnHandle_t>(ctx.cudnn()), &one, m.x, x, m.w, w, m.conv,
                                     m.algos.fwd, ws, m.algos.fwdWs, &zero, m.y, y),
             "cudnnConvolutionForward");
    return {};
}

Status Convolution::backwardData(DeviceContext& ctx, const float* w, const float* dy, float* dx) {
    Impl& m = *m_impl;
    KILN_ASSIGN(void* ws, ctx.convWorkspace(m.algos.bwdDataWs));
    const float one = 1.0f;
    KILN_DNN(cudnnConvolutionBackwardData(static_cast<cudnnHandle_t>(ctx.cudnn()), &one, m.w32, w, m.y32, dy,
                                          m.conv32, m.algos.bwdData, ws, m.algos.bwdDataWs, &one, m.x32, dx),
             "cudnnConvolutionBackwardData");
    return {};
}

Status Convolution::backwardFilter(DeviceContext& ctx, const float* x, const float* dy, float* dw) {
    Impl& m = *m_impl;
    KILN_ASSIGN(void* ws, ctx.convWorkspace(m.algos.bwdFilterWs));
    const float one = 1.0f, zero = 0.0f;
    KILN_DNN(cudnnConvolutionBackwardFilter(static_cast<cudnnHandle_t>(ctx.cudnn()), &one, m.x32, x, m.y32,
                                            dy, m.conv32, m.algos.bwdFilter, ws, m.algos.bwdFilterWs, &zero,
                                            m.w32, dw),
             "cudnnConvolutionBackwardFilter");
    return {};
}

namespace {
// A [rows, c] tensor as N×C×1×1, so CUDNN_SOFTMAX_MODE_INSTANCE normalises each row over c.
Result<cudnnTensorDescriptor_t> rowsDesc(int64_t rows, int64_t c) {
    cudnnTensorDescriptor_t d = nullptr;
    KILN_DNN(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    if (auto st = cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(rows), int(c), 1, 1);
        st != CUDNN_STATUS_SUCCESS) {
        cudnnDestroyTensorDescriptor(d);
        return dnnError(st, "softmax descriptor");
    }
    return d;
}
}  // namespace

Status softmaxForward(DeviceContext& ctx, const float* x, float* y, int64_t rows, int64_t c) {
    KILN_ASSIGN(cudnnTensorDescriptor_t d, rowsDesc(rows, c));
    const float one = 1.0f, zero = 0.0f;
    cudnnStatus_t st = cudnnSoftmaxForward(static_cast<cudnnHandle_t>(ctx.cudnn()), CUDNN_SOFTMAX_ACCURATE,
                                           CUDNN_SOFTMAX_MODE_INSTANCE, &one, d, x, &zero, d, y);
    cudnnDestroyTensorDescriptor(d);
    if (st != CUDNN_STATUS_SUCCESS) return dnnError(st, "cudnnSoftmaxForward");
    return {};
}

Status softmaxBackward(DeviceContext& ctx, const float* y, const float* dy, float* dx, int64_t rows,
                       int64_t c) {
    KILN_ASSIGN(cudnnTensorDescriptor_t d, rowsDesc(rows, c));
    const float one = 1.0f;
    cudnnStatus_t st = cudnnSoftmaxBackward(static_cast<cudnnHandle_t>(ctx.cudnn()), CUDNN_SOFTMAX_ACCURATE,
                                            CUDNN_SOFTMAX_MODE_INSTANCE, &one, d, y, d, dy, &one, d, dx);
    cudnnDestroyTensorDescriptor(d);
    if (st != CUDNN_STATUS_SUCCESS) return dnnError(st, "cudnnSoftmaxBackward");
    return {};
}

int cudnnRuntimeVersion() {
    return static_cast<int>(cudnnGetVersion());
}

}  // namespace kiln::engine::cuda
