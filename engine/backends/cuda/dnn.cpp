// SPDX-License-Identifier: Apache-2.0
// cuDNN wrappers. The legacy convolution API is deprecated in cuDNN 9 but still exported and
// complete; its warnings are silenced here only.
#include "engine/backends/cuda/dnn.h"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace kiln::engine::cuda {
namespace {

Error dnnError(cudnnStatus_t st, const std::string& what) {
    return Error(ErrorCode::DeviceUnavailable, what + ": " + cudnnGetErrorString(st)).with("device", "cuda");
}
#define KILN_DNN(call, what)                                                   \
    do {                                                                       \
        cudnnStatus_t kiln_st_ = (call);                                       \
        if (kiln_st_ != CUDNN_STATUS_SUCCESS) return dnnError(kiln_st_, what); \
    } while (0)

// A configuration cuDNN refuses (as opposed to a failure of the device): another algorithm, or
// another data type, may still run it.
bool refused(cudnnStatus_t st) {
    const int category = static_cast<int>(st) / 1000 * 1000;
    return category == static_cast<int>(CUDNN_STATUS_BAD_PARAM) ||
           category == static_cast<int>(CUDNN_STATUS_NOT_SUPPORTED);
}

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

const char* mathName(cudnnMathType_t m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH:
        return "default math";
    case CUDNN_TENSOR_OP_MATH:
        return "tensor-op math";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
        return "tensor-op math with conversion";
    case CUDNN_FMA_MATH:
        return "FMA math";
    }
    return "math type ?";
}

// One usable algorithm: the math type it runs with (the heuristic's, or FMA in strict fp32; the descriptor is
// set to it before every call) and the workspace it needs (the larger of the heuristic's figure and
// cudnnGet*WorkspaceSize for that math type).
struct Choice {
    int algo = 0;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t ws = 0;
};
struct Algos {
    std::vector<Choice> fwd, bwdData, bwdFilter;  // in the heuristic's order, best first
};
using ShapeKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t, int64_t, int64_t, int64_t, int, bool>;
std::mutex g_mutex;
std::map<ShapeKey, Algos> g_algos;  // per shape and data type, for the process
std::vector<std::string> g_notes;   // fallbacks taken, for logs
std::set<std::string> g_noteSet;

void addNote(const std::string& note) {
    std::lock_guard lock(g_mutex);
    if (g_noteSet.insert(note).second) g_notes.push_back(note);
}

// Drops a choice that cuDNN refused at run time from the process cache, so plans compiled
// later for the same shape start at the next one.
template <typename Member>
void forgetChoice(const ShapeKey& key, Member list, int algo) {
    std::lock_guard lock(g_mutex);
    auto it = g_algos.find(key);
    if (it == g_algos.end()) return;
    auto& v = it->second.*list;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const Choice& c) { return c.algo == algo; }), v.end());
}

}  // namespace

const char* dataTypeName(DataType t) {
    switch (t) {
    case DataType::F32:
        return "fp32";
    case DataType::F16:
        return "fp16";
    case DataType::BF16:
        return "bf16";
    }
    return "?";
}

std::string describeConvolution(const ConvShape& s, DataType type) {
    std::ostringstream o;
    o << "input " << s.n << "x" << s.h << "x" << s.w << "x" << s.c << " (NHWC, " << dataTypeName(type)
      << "), filter " << s.oc << "x" << s.kh << "x" << s.kw << "x" << (s.groups > 0 ? s.c / s.groups : s.c)
      << " (OHWI), stride " << s.sh << "x" << s.sw << ", dilation " << s.dh << "x" << s.dw << ", padding "
      << s.padH << "x" << s.padW << ", groups " << s.groups << ", output " << s.n << "x" << s.oh << "x"
      << s.ow << "x" << s.oc;
    return o.str();
}

std::vector<std::string> convolutionNotes() {
    std::lock_guard lock(g_mutex);
    return g_notes;
}

void noteConvolution(const std::string& note) {
    addNote(note);
}

struct Convolution::Impl {
    ConvShape s{};
    DataType type = DataType::F32;
    ShapeKey key{};
    std::string what;  // describeConvolution, for errors
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    Algos algos;
};

Result<std::unique_ptr<Convolution>> Convolution::create(DeviceContext& ctx, const ConvShape& s,
                                                         DataType type, bool allowTf32) {
    auto c = std::unique_ptr<Convolution>(new Convolution());
    c->m_impl = std::make_unique<Impl>();
    Impl& m = *c->m_impl;
    m.s = s;
    m.type = type;
    m.what = describeConvolution(s, type);
    // fp32 without TF32 keeps to FMA math, so results match a CPU in fp32.
    const bool strictFp32 = type == DataType::F32 && !allowTf32;
    m.key = ShapeKey{s.n,  s.h,  s.w,  s.c,  s.kh,   s.kw,   s.oc,      s.groups,
                     s.sh, s.sw, s.dh, s.dw, s.padH, s.padW, int(type), strictFp32};
    const std::string& what = m.what;
    auto handle = static_cast<cudnnHandle_t>(ctx.cudnn());
    const cudnnDataType_t dt = dnnType(type);
    KILN_DNN(cudnnCreateTensorDescriptor(&m.x), "cudnnCreateTensorDescriptor");
    KILN_DNN(cudnnSetTensor4dDescriptor(m.x, CUDNN_TENSOR_NHWC, dt, int(s.n), int(s.c), int(s.h), int(s.w)),
             "convolution input descriptor (" + what + ")");
    KILN_DNN(cudnnCreateTensorDescriptor(&m.y), "cudnnCreateTensorDescriptor");
    KILN_DNN(
        cudnnSetTensor4dDescriptor(m.y, CUDNN_TENSOR_NHWC, dt, int(s.n), int(s.oc), int(s.oh), int(s.ow)),
        "convolution output descriptor (" + what + ")");
    KILN_DNN(cudnnCreateFilterDescriptor(&m.w), "cudnnCreateFilterDescriptor");
    KILN_DNN(cudnnSetFilter4dDescriptor(m.w, dt, CUDNN_TENSOR_NHWC, int(s.oc), int(s.c / s.groups), int(s.kh),
                                        int(s.kw)),
             "convolution filter descriptor (" + what + ")");
    KILN_DNN(cudnnCreateConvolutionDescriptor(&m.conv), "cudnnCreateConvolutionDescriptor");
    // fp32 accumulation for every data type (PSEUDO_HALF / PSEUDO_BFLOAT16 configurations).
    KILN_DNN(cudnnSetConvolution2dDescriptor(m.conv, int(s.padH), int(s.padW), int(s.sh), int(s.sw),
                                             int(s.dh), int(s.dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "convolution descriptor (" + what + ")");
    KILN_DNN(cudnnSetConvolutionGroupCount(m.conv, int(s.groups)), "convolution group count (" + what + ")");
    // The heuristics are asked with tensor ops allowed; each algorithm then runs with the math
    // type the heuristic reported for it.
    KILN_DNN(cudnnSetConvolutionMathType(m.conv, strictFp32              ? CUDNN_FMA_MATH
                                                 : type == DataType::F32 ? CUDNN_DEFAULT_MATH
                                                                         : CUDNN_TENSOR_OP_MATH),
             "convolution math type (" + what + ")");
    int outN = 0, outC = 0, outH = 0, outW = 0;
    KILN_DNN(cudnnGetConvolution2dForwardOutputDim(m.conv, m.x, m.w, &outN, &outC, &outH, &outW),
             "convolution output size (" + what + ")");
    if (outH != s.oh || outW != s.ow || outC != s.oc)
        return Error(ErrorCode::Internal, "cuDNN computes a different convolution output size (" +
                                              std::to_string(outH) + "x" + std::to_string(outW) + "x" +
                                              std::to_string(outC) + ") for " + what);

    {
        std::lock_guard lock(g_mutex);
        if (auto it = g_algos.find(m.key); it != g_algos.end()) {
            m.algos = it->second;
            if (m.algos.fwd.empty())
                return Error(ErrorCode::Unsupported,
                             "cuDNN has no forward algorithm for this convolution (" + what + ")")
                    .with("what", "Conv2D " + std::string(dataTypeName(type)));
            return c;
        }
    }
    // Every heuristic choice that cuDNN confirms (a workspace size for it) and that fits Kiln's
    // cap, best first; a choice refused at run time falls through to the next.
    const size_t cap = DeviceContext::kMaxConvWorkspace;
    Algos a;
    // Keeps each choice whose math type is allowed and whose workspace cuDNN confirms within the cap.
    // `workspace(algo, &bytes)` asks cuDNN for one algorithm with the descriptor's current math type.
    auto collect = [&](const auto* perf, int found, auto workspace, std::vector<Choice>& out,
                       bool tensorOps) {
        for (int i = 0; i < found; ++i) {
            if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
            const cudnnMathType_t reported = perf[i].mathType;
            const bool tensorOp =
                reported == CUDNN_TENSOR_OP_MATH || reported == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
            if (tensorOp && !tensorOps) continue;
            const cudnnMathType_t math = !tensorOps ? CUDNN_FMA_MATH : reported;
            if (cudnnSetConvolutionMathType(m.conv, math) != CUDNN_STATUS_SUCCESS) continue;
            size_t ws = 0;
            if (workspace(perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS) continue;
            ws = std::max(ws, perf[i].memory);
            if (ws <= cap) out.push_back({int(perf[i].algo), math, ws});
        }
        // Strict fp32 with no FMA algorithm at all: TF32 rather than nothing, and say so.
        if (out.empty() && !tensorOps) {
            for (int i = 0; i < found; ++i) {
                if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
                if (cudnnSetConvolutionMathType(m.conv, perf[i].mathType) != CUDNN_STATUS_SUCCESS) continue;
                size_t ws = 0;
                if (workspace(perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS) continue;
                ws = std::max(ws, perf[i].memory);
                if (ws <= cap) out.push_back({int(perf[i].algo), perf[i].mathType, ws});
            }
            if (!out.empty())
                addNote("Conv2D " + what + ": cuDNN offers no FMA-only algorithm; TF32 allowed");
        }
    };
    const bool tensorOps = !strictFp32;
    {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int found = 0;
        KILN_DNN(cudnnGetConvolutionForwardAlgorithm_v7(handle, m.x, m.w, m.conv, m.y,
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
                 "choosing a forward convolution algorithm (" + what + ")");
        collect(
            perf, found,
            [&](cudnnConvolutionFwdAlgo_t algo, size_t* ws) {
                return cudnnGetConvolutionForwardWorkspaceSize(handle, m.x, m.w, m.conv, m.y, algo, ws);
            },
            a.fwd, tensorOps);
    }
    // Backward runs in fp32 only (Kiln keeps activations and gradients in fp32).
    if (type == DataType::F32) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        int found = 0;
        KILN_DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                     handle, m.w, m.y, m.conv, m.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
                 "choosing a backward-data convolution algorithm (" + what + ")");
        collect(
            perf, found,
            [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* ws) {
                return cudnnGetConvolutionBackwardDataWorkspaceSize(handle, m.w, m.y, m.conv, m.x, algo, ws);
            },
            a.bwdData, tensorOps);
    }
    if (type == DataType::F32) {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        int found = 0;
        KILN_DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                     handle, m.x, m.y, m.conv, m.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
                 "choosing a backward-filter convolution algorithm (" + what + ")");
        collect(
            perf, found,
            [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* ws) {
                return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, m.x, m.y, m.conv, m.w, algo,
                                                                      ws);
            },
            a.bwdFilter, tensorOps);
        if (a.bwdData.empty())
            return Error(ErrorCode::Unsupported, "cuDNN has no backward-data algorithm within " +
                                                     std::to_string(cap >> 20) + " MiB of workspace for " +
                                                     what)
                .with("what", "Conv2D");
        if (a.bwdFilter.empty())
            return Error(ErrorCode::Unsupported, "cuDNN has no backward-filter algorithm within " +
                                                     std::to_string(cap >> 20) + " MiB of workspace for " +
                                                     what)
                .with("what", "Conv2D");
    }
    {
        std::lock_guard lock(g_mutex);
        g_algos.emplace(m.key, a);
    }
    m.algos = std::move(a);
    if (m.algos.fwd.empty())
        return Error(ErrorCode::Unsupported, "cuDNN has no forward algorithm within " +
                                                 std::to_string(cap >> 20) + " MiB of workspace for " + what)
            .with("what", "Conv2D " + std::string(dataTypeName(type)));
    return c;
}

Convolution::~Convolution() {
    if (!m_impl) return;
    if (m_impl->x) cudnnDestroyTensorDescriptor(m_impl->x);
    if (m_impl->y) cudnnDestroyTensorDescriptor(m_impl->y);
    if (m_impl->w) cudnnDestroyFilterDescriptor(m_impl->w);
    if (m_impl->conv) cudnnDestroyConvolutionDescriptor(m_impl->conv);
}

DataType Convolution::type() const {
    return m_impl->type;
}

const std::string& Convolution::description() const {
    return m_impl->what;
}

namespace {
// Runs `call(choice, workspace)` with each remaining choice until one is accepted. A refused choice
// is dropped (here and in the process cache) and named in a note; when every choice is refused
// the error is Unsupported and lists them all.
template <typename Call, typename Member>
Status runChoices(DeviceContext& ctx, Convolution::Impl& m, std::vector<Choice>& list, Member member,
                  const char* direction, Call call) {
    std::string tried;
    while (!list.empty()) {
        const Choice ch = list.front();
        KILN_DNN(cudnnSetConvolutionMathType(m.conv, ch.math),
                 std::string("convolution math type (") + m.what + ")");
        KILN_ASSIGN(void* ws, ctx.convWorkspace(ch.ws));
        const cudnnStatus_t st = call(ch, ws);
        if (st == CUDNN_STATUS_SUCCESS) {
            if (!tried.empty())
                addNote(std::string("Conv2D ") + direction + " of " + m.what + ": cuDNN refused" + tried +
                        "; running algorithm " + std::to_string(ch.algo) + " (" + mathName(ch.math) + ")");
            return {};
        }
        if (!refused(st))
            return dnnError(st, std::string("cuDNN convolution ") + direction + " with algorithm " +
                                    std::to_string(ch.algo) + " (" + mathName(ch.math) + ", workspace " +
                                    std::to_string(ch.ws) + " bytes) for " + m.what);
        tried += std::string(tried.empty() ? " " : ", ") + "algorithm " + std::to_string(ch.algo) + " (" +
                 mathName(ch.math) + "): " + cudnnGetErrorString(st);
        forgetChoice(m.key, member, ch.algo);
        list.erase(list.begin());
    }
    return Error(ErrorCode::Unsupported,
                 std::string("cuDNN runs no ") + direction + " algorithm for " + m.what +
                     (tried.empty() ? std::string(" (none was offered)") : ";" + tried))
        .with("what", std::string("Conv2D ") + direction + " " + dataTypeName(m.type));
}
}  // namespace

Status Convolution::forward(DeviceContext& ctx, const void* x, const void* w, void* y) {
    Impl& m = *m_impl;
    auto handle = static_cast<cudnnHandle_t>(ctx.cudnn());
    const float one = 1.0f, zero = 0.0f;
    return runChoices(ctx, m, m.algos.fwd, &Algos::fwd, "forward", [&](const Choice& ch, void* ws) {
        return cudnnConvolutionForward(handle, &one, m.x, x, m.w, w, m.conv,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(ch.algo), ws, ch.ws, &zero, m.y,
                                       y);
    });
}

Status Convolution::backwardData(DeviceContext& ctx, const float* w, const float* dy, float* dx) {
    Impl& m = *m_impl;
    if (m.type != DataType::F32)
        return Error(ErrorCode::Internal, "convolution backward asked of a " +
                                              std::string(dataTypeName(m.type)) + " convolution (" + m.what +
                                              ")");
    auto handle = static_cast<cudnnHandle_t>(ctx.cudnn());
    const float one = 1.0f;
    return runChoices(
        ctx, m, m.algos.bwdData, &Algos::bwdData, "backward-data", [&](const Choice& ch, void* ws) {
            return cudnnConvolutionBackwardData(handle, &one, m.w, w, m.y, dy, m.conv,
                                                static_cast<cudnnConvolutionBwdDataAlgo_t>(ch.algo), ws,
                                                ch.ws, &one, m.x, dx);
        });
}

Status Convolution::backwardFilter(DeviceContext& ctx, const float* x, const float* dy, float* dw) {
    Impl& m = *m_impl;
    if (m.type != DataType::F32)
        return Error(ErrorCode::Internal, "convolution backward asked of a " +
                                              std::string(dataTypeName(m.type)) + " convolution (" + m.what +
                                              ")");
    auto handle = static_cast<cudnnHandle_t>(ctx.cudnn());
    const float one = 1.0f, zero = 0.0f;
    return runChoices(
        ctx, m, m.algos.bwdFilter, &Algos::bwdFilter, "backward-filter", [&](const Choice& ch, void* ws) {
            return cudnnConvolutionBackwardFilter(handle, &one, m.x, x, m.y, dy, m.conv,
                                                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(ch.algo), ws,
                                                  ch.ws, &zero, m.w, dw);
        });
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
