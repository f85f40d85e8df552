// SPDX-License-Identifier: Apache-2.0
// Memory prediction from the plan's arena at small batches, linear in the batch size.
#include "engine/train/memory_assistant.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "engine/exec/param_store.h"

namespace kiln::engine::train {
namespace {

// cuBLASLt's workspace (32 MiB, the size NVIDIA recommends for Hopper) plus the cap Kiln puts on
// cuDNN convolution workspaces (256 MiB).
constexpr uint64_t kCudaWorkspace = (32ull + 256ull) << 20;
// The caching allocator rounds large blocks to 2 MiB; assume a few percent of rounding waste.
constexpr double kCudaRounding = 1.03;

Result<uint64_t> arenaBytes(const ops::ModelInfo& model, exec::ParamStore& store, const MemoryOptions& o,
                            int64_t batch, ThreadPool& pool) {
    exec::CompileOptions co;
    co.batch = batch;
    co.training = o.training;
    co.losses = o.losses;
    KILN_ASSIGN(auto plan, exec::Plan::compile(model, store, co, pool));
    return static_cast<uint64_t>(plan->stats().arenaBytes);
}

}  // namespace

const char* precisionName(Precision p) {
    switch (p) {
    case Precision::Fp32:
        return "fp32";
    case Precision::Fp16:
        return "fp16";
    case Precision::Bf16:
        return "bf16";
    }
    return "fp32";
}

Result<Precision> parsePrecision(const std::string& text) {
    std::string t;
    for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "fp32" || t == "float32") return Precision::Fp32;
    if (t == "fp16" || t == "float16" || t == "mixed_float16") return Precision::Fp16;
    if (t == "bf16" || t == "bfloat16" || t == "mixed_bfloat16") return Precision::Bf16;
    return Error(ErrorCode::ConfigError, "precision must be fp32, fp16 or bf16, not \"" + text + "\"")
        .with("field", "precision")
        .with("reason", "must be fp32, fp16 or bf16");
}

Result<MemoryEstimate> estimateMemory(const ops::ModelInfo& model, const MemoryOptions& o) {
    if (o.batch <= 0)
        return Error(ErrorCode::ConfigError, "batch size must be positive").with("field", "batch_size");
    KILN_TRY(o.optimizer.validate());
    exec::ParamStore store = exec::ParamStore::create(model, 0);
    MemoryEstimate e;
    e.batch = o.batch;
    uint64_t trainable = 0, all = 0;
    for (const auto& p : store.params()) {
        all += static_cast<uint64_t>(p.value.numel());
        if (p.trainable) trainable += static_cast<uint64_t>(p.value.numel());
    }
    const bool half = o.precision != Precision::Fp32;
    e.parameters = all * 4;
    e.lowPrecisionCopy = half ? all * 2 : 0;
    if (o.training) {
        e.gradients = trainable * 4;
        optim::Optimizer opt(o.optimizer);
        e.optimizerState = trainable * 4 * static_cast<uint64_t>(opt.stateSlots());
    }
    // Two small plans give the arena's fixed part and its growth per sample.
    ThreadPool pool(1);
    const int64_t b1 = 2, b2 = 4;
    KILN_ASSIGN(uint64_t a1, arenaBytes(model, store, o, b1, pool));
    KILN_ASSIGN(uint64_t a2, arenaBytes(model, store, o, b2, pool));
    const double perSample = std::max(0.0, (double(a2) - double(a1)) / double(b2 - b1));
    const double fixed = std::max(0.0, double(a1) - perSample * double(b1));
    double act = fixed + perSample * double(o.batch);
    double per = perSample;
    if (half) {  // 16-bit activations; BatchNorm statistics, softmax and losses stay fp32 (small)
        act *= 0.5;
        per *= 0.5;
    }
    if (o.cuda) {
        act *= kCudaRounding;
        per *= kCudaRounding;
        e.workspace = kCudaWorkspace;
    }
    e.activations = static_cast<uint64_t>(act);
    e.bytesPerSample = per;
    return e;
}

Result<int64_t> largestBatch(const ops::ModelInfo& model, MemoryOptions o, uint64_t budget,
                             int64_t maxBatch) {
    o.batch = 1;
    KILN_ASSIGN(MemoryEstimate one, estimateMemory(model, o));
    if (one.total() > budget) {
        Error e = outOfMemoryError(one.total(), 0, budget, o.cuda ? "cuda" : "cpu", &one, 0);
        e.message = "even a batch of one needs " + formatBytes(one.total()) + ", more than the budget of " +
                    formatBytes(budget);
        return e;
    }
    if (one.bytesPerSample <= 0) return maxBatch;
    const double room = double(budget) - double(one.total());
    int64_t b = 1 + static_cast<int64_t>(room / one.bytesPerSample);
    b = std::clamp<int64_t>(b, 1, maxBatch);
    // The linear estimate is exact up to rounding; step down if rounding crossed the budget.
    for (;;) {
        o.batch = b;
        KILN_ASSIGN(MemoryEstimate e, estimateMemory(model, o));
        if (e.total() <= budget || b == 1) break;
        b = std::max<int64_t>(1, b - std::max<int64_t>(1, b / 64));
    }
    return b;
}

std::string formatBytes(uint64_t bytes) {
    char buf[64];
    if (bytes >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
    else if (bytes >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1ull << 20));
    else if (bytes >= (1ull << 10))
        std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

Error outOfMemoryError(uint64_t requested, uint64_t inUse, uint64_t cap, const std::string& device,
                       const MemoryEstimate* predicted, int64_t suggestedBatch) {
    std::string msg = "allocating " + formatBytes(requested) + " on " + device +
                      " failed: " + formatBytes(inUse) + " in use, limit " + formatBytes(cap);
    if (predicted)
        msg += "; predicted peak for batch " + std::to_string(predicted->batch) + ": " +
               formatBytes(predicted->total());
    if (suggestedBatch > 0) msg += "; batch size " + std::to_string(suggestedBatch) + " would fit";
    Error e(ErrorCode::OutOfMemory, msg);
    e.with("bytes", std::to_string(requested))
        .with("requested", std::to_string(requested))
        .with("in_use", std::to_string(inUse))
        .with("cap", std::to_string(cap))
        .with("device", device);
    if (predicted)
        e.with("predicted", std::to_string(predicted->total()))
            .with("batch", std::to_string(predicted->batch));
    if (suggestedBatch > 0) e.with("suggested_batch", std::to_string(suggestedBatch));
    return e;
}

}  // namespace kiln::engine::train
