// SPDX-License-Identifier: Apache-2.0
// Memory prediction from the plan's arena at small batches, linear in the batch size.
#include "engine/exec/memory_assistant.h"

#include <algorithm>
#include <cstdio>

#include "engine/exec/param_store.h"
#include "engine/ops/kernels/conv2d.h"

namespace kiln::engine::exec {
namespace {

// cuBLASLt's workspace, allocated with the device context (32 MiB, NVIDIA's size for Hopper).
constexpr uint64_t kBlasWorkspace = 32ull << 20;
// The cap Kiln puts on cuDNN convolution workspaces (DeviceContext::kMaxConvWorkspace).
constexpr uint64_t kConvWorkspaceCap = 256ull << 20;
// Small device blocks of a CUDA plan: loss slots and the non-finite flag.
constexpr uint64_t kCudaSmallBlocks = 2 * 512;

// The caching allocator's size classes: 512 B steps below 1 MiB, 2 MiB steps above.
uint64_t deviceRound(uint64_t bytes) {
    if (bytes == 0) bytes = 1;
    if (bytes < (1ull << 20)) return (bytes + 511) / 512 * 512;
    constexpr uint64_t kLarge = 2ull << 20;
    return (bytes + kLarge - 1) / kLarge * kLarge;
}
uint64_t align256(uint64_t b) {
    return (b + 255) / 256 * 256;
}
uint64_t f32(int64_t n) {
    return align256(static_cast<uint64_t>(n) * 4);
}
uint64_t f16(int64_t n) {
    return align256(static_cast<uint64_t>(n) * 2);
}

// The CUDA plan's kernel workspace (one block, the largest need of any kernel) for Dense, Conv2D,
// DepthwiseConv2D and BatchNormalization as the CUDA kernels lay it out: fp32 scratch of the backward (padded
// input, OHWI weights, activation gradient) and, at 16 bits, the staged input, weights and output.
struct KernelWorkspace {
    uint64_t fp32 = 0;  // the precision's fp32 needs
    uint64_t all = 0;   // with the 16-bit staging
    bool hasConv = false;
};
KernelWorkspace kernelWorkspace(const ops::ModelInfo& model, int64_t batch, bool half) {
    KernelWorkspace k;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if (!ni.def) continue;
        const Shape out = ni.output.withBatch(batch);
        uint64_t f = 0, h = 0;
        if (ni.def->kind == ops::OpKind::Dense && !ni.inputShapes.empty()) {
            const int64_t units = out[-1], in = ni.inputShapes[0][-1];
            const int64_t rows = out.numel() / std::max<int64_t>(1, units);
            const bool linear =
                ni.attrs.getString("activation").empty() || ni.attrs.getString("activation") == "linear";
            f = linear ? 0 : f32(rows * units);
            h = half ? f16(rows * in) + f16(in * units) : 0;
            h = std::max(h, f);
        } else if ((ni.def->kind == ops::OpKind::Conv2D || ni.def->kind == ops::OpKind::DepthwiseConv2D) &&
                   !ni.inputShapes.empty() && ni.inputShapes[0].rank() == 4) {
            k.hasConv = true;
            const Shape x = ni.inputShapes[0].withBatch(batch);
            const auto& ks = ni.attrs.getInts("kernel_size");
            const auto& st = ni.attrs.getInts("strides");
            const auto& dl = ni.attrs.getInts("dilation_rate");
            if (ks.size() < 2 || st.size() < 2 || dl.size() < 2) continue;
            const auto g = kernels::makeConv2DGeom(
                x[0], x[1], x[2], x[3], ks[0], ks[1], out[-1], st[0], st[1], dl[0], dl[1],
                ni.attrs.getString("padding") == "same",
                ni.def->kind == ops::OpKind::DepthwiseConv2D ? x[3] : ni.attrs.getInt("groups"));
            const int64_t padBottom =
                std::max<int64_t>(0, (g.oh - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1 - g.h - g.padTop);
            const int64_t padRight =
                std::max<int64_t>(0, (g.ow - 1) * g.strideW + (g.kw - 1) * g.dilationW + 1 - g.w - g.padLeft);
            const bool padded = g.padTop != padBottom || g.padLeft != padRight;
            const int64_t xElems =
                padded ? g.n * (g.h + g.padTop + padBottom) * (g.w + g.padLeft + padRight) * g.c
                       : g.n * g.h * g.w * g.c;
            const int64_t wElems = g.kh * g.kw * (g.c / std::max<int64_t>(1, g.groups)) * g.oc;
            const int64_t yElems = g.n * g.oh * g.ow * g.oc;
            const uint64_t pad = padded ? f32(xElems) : 0;
            const bool linear =
                ni.attrs.getString("activation").empty() || ni.attrs.getString("activation") == "linear";
            const uint64_t base = pad + f32(wElems);
            const uint64_t bwd = (linear ? 0 : f32(yElems)) + f32(wElems) + pad;
            const uint64_t fwd = half ? f16(xElems) + f16(wElems) + f16(yElems) : 0;
            f = base + bwd;
            h = base + std::max(fwd, bwd);
        } else if (ni.def->kind == ops::OpKind::BatchNormalization) {
            f = h = align256(16 * static_cast<uint64_t>(out[-1]));
        }
        k.fp32 = std::max(k.fp32, f);
        k.all = std::max(k.all, h);
    }
    return k;
}

Result<uint64_t> arenaBytes(const ops::ModelInfo& model, ParamStore& store, const MemoryOptions& o,
                            int64_t batch, ThreadPool& pool) {
    CompileOptions co;
    co.batch = batch;
    co.training = o.training;
    co.losses = o.losses;
    KILN_ASSIGN(auto plan, Plan::compile(model, store, co, pool));
    return static_cast<uint64_t>(plan->stats().arenaBytes);
}

// The CPU plan's kernel scratch (one block, live through the whole step, inside its arena): the
// CUDA plan keeps its own kernel workspace outside the arena instead, so it is taken out of the
// CPU arena when predicting a CUDA run. Loss kernels' scratch is small and stays counted.
Result<uint64_t> cpuWorkspaceBytes(const ops::ModelInfo& model, int64_t batch) {
    size_t workspace = 0;
    for (int i : model.order) {
        const auto& ni = model.nodes[static_cast<size_t>(i)];
        if (!ni.def || ni.def->kind == ops::OpKind::Input) continue;
        std::vector<Shape> ins;
        for (const auto& s : ni.inputShapes) ins.push_back(s.withBatch(batch));
        const ops::ShapeContext ctx{model.graph.nodes[static_cast<size_t>(i)], ni.attrs, ins};
        KILN_ASSIGN(auto k, ni.def->cpu(ctx, ni.output.withBatch(batch)));
        workspace = std::max(workspace, k->workspaceFloats());
    }
    return static_cast<uint64_t>(workspace) * sizeof(float);
}

}  // namespace

Result<MemoryEstimate> estimateMemory(const ops::ModelInfo& model, const MemoryOptions& o) {
    if (o.batch <= 0)
        return Error(ErrorCode::ConfigError, "batch size must be positive").with("field", "batch_size");
    KILN_TRY(o.optimizer.validate());
    ParamStore store = ParamStore::create(model, 0);
    MemoryEstimate e;
    e.batch = o.batch;
    uint64_t trainable = 0, all = 0, allAligned = 0;
    for (const auto& p : store.params()) {
        all += static_cast<uint64_t>(p.value.numel());
        allAligned += f32(p.value.numel());
        if (p.trainable) trainable += static_cast<uint64_t>(p.value.numel());
    }
    const bool half = o.precision != Precision::Fp32;
    optim::Optimizer opt(o.optimizer);
    if (!o.cuda) {
        e.parameters = all * 4;
        if (o.training) {
            e.gradients = trainable * 4;
            e.optimizerState = trainable * 4 * static_cast<uint64_t>(opt.stateSlots());
        }
    } else {
        // One block of values and one of gradients (every parameter, 256-byte aligned each), one
        // of optimizer state (trainable parameters).
        e.parameters = deviceRound(allAligned);
        if (o.training) {
            e.gradients = deviceRound(allAligned);
            e.optimizerState =
                deviceRound(std::max<uint64_t>(1, trainable * static_cast<uint64_t>(opt.stateSlots())) * 4);
        }
    }
    // Two small plans give the arena's fixed part and its growth per sample. Values, gradients
    // and saved state are fp32 at every precision.
    ThreadPool pool(1);
    const int64_t b1 = 2, b2 = 4;
    // The kernel scratch is taken out before extrapolating: it does not grow in proportion to the
    // batch (the Winograd filter gradient's partial sums stop growing at a fixed number of
    // chunks), so the CPU arena gets the scratch of the batch itself added back.
    KILN_ASSIGN(uint64_t a1, arenaBytes(model, store, o, b1, pool));
    KILN_ASSIGN(uint64_t a2, arenaBytes(model, store, o, b2, pool));
    KILN_ASSIGN(uint64_t w1, cpuWorkspaceBytes(model, b1));
    KILN_ASSIGN(uint64_t w2, cpuWorkspaceBytes(model, b2));
    a1 -= std::min(a1, w1);
    a2 -= std::min(a2, w2);
    const double perSample = std::max(0.0, (double(a2) - double(a1)) / double(b2 - b1));
    const double fixed = std::max(0.0, double(a1) - perSample * double(b1));
    double act = fixed + perSample * double(o.batch);
    if (!o.cuda) {
        KILN_ASSIGN(uint64_t w, cpuWorkspaceBytes(model, o.batch));
        act += double(w);
    }
    e.bytesPerSample = perSample;
    if (!o.cuda) {
        e.activations = static_cast<uint64_t>(act);
        return e;
    }
    e.activations = deviceRound(static_cast<uint64_t>(act));
    // The kernel workspace, at this batch and at batch 1 for its growth per sample.
    const KernelWorkspace k = kernelWorkspace(model, o.batch, half);
    const KernelWorkspace k1 = kernelWorkspace(model, 1, half);
    const uint64_t kernelAll = deviceRound(std::max<uint64_t>(k.all, 256));
    const uint64_t kernelFp32 = deviceRound(std::max<uint64_t>(k.fp32, 256));
    e.lowPrecisionCopy = kernelAll > kernelFp32 ? kernelAll - kernelFp32 : 0;
    e.workspace = kBlasWorkspace + kernelFp32 + kCudaSmallBlocks;
    e.convWorkspaceLimit = k.hasConv ? kConvWorkspaceCap : 0;
    // The kernel workspace grows with the batch too (linear in it: every term is).
    const double kb = double(std::max(k.all, k.fp32)), k1b = double(std::max(k1.all, k1.fp32));
    if (o.batch > 1 && kb > k1b) e.bytesPerSample += (kb - k1b) / double(o.batch - 1);
    return e;
}

Result<int64_t> largestBatch(const ops::ModelInfo& model, MemoryOptions o, uint64_t budget,
                             int64_t maxBatch) {
    o.batch = 1;
    KILN_ASSIGN(MemoryEstimate one, estimateMemory(model, o));
    if (one.totalWithConvWorkspace() > budget) {
        Error e = outOfMemoryError(one.totalWithConvWorkspace(), 0, budget, o.cuda ? "cuda" : "cpu", &one, 0);
        e.message = "even a batch of one needs " + formatBytes(one.totalWithConvWorkspace()) +
                    ", more than the budget of " + formatBytes(budget);
        return e;
    }
    if (one.bytesPerSample <= 0) return maxBatch;
    const double room = double(budget) - double(one.totalWithConvWorkspace());
    int64_t b = 1 + static_cast<int64_t>(room / one.bytesPerSample);
    b = std::clamp<int64_t>(b, 1, maxBatch);
    // The linear guess is close but not exact (kernel scratch does not grow in proportion to the
    // batch): the need grows with the batch, so the largest batch that fits lies between a batch
    // that fits and one that does not, found from the guess in growing steps and then halved.
    auto fits = [&](int64_t batch) -> Result<bool> {
        o.batch = batch;
        KILN_ASSIGN(MemoryEstimate e, estimateMemory(model, o));
        return e.totalWithConvWorkspace() <= budget;
    };
    int64_t lo = 1, hi = 0;  // lo fits (a batch of one does, see above); hi, when set, does not
    int64_t step = std::max<int64_t>(1, b / 64);
    KILN_ASSIGN(bool guessFits, fits(b));
    if (guessFits) {
        lo = b;
        while (lo < maxBatch) {
            const int64_t next = std::min(maxBatch, lo + step);
            KILN_ASSIGN(bool ok, fits(next));
            if (!ok) {
                hi = next;
                break;
            }
            lo = next;
            step *= 2;
        }
        if (hi == 0) return lo;  // maxBatch fits
    } else {
        hi = b;
        while (hi > 1) {
            const int64_t next = std::max<int64_t>(1, hi - step);
            KILN_ASSIGN(bool ok, fits(next));
            if (ok) {
                lo = next;
                break;
            }
            hi = next;
            step *= 2;
        }
    }
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        KILN_ASSIGN(bool ok, fits(mid));
        (ok ? lo : hi) = mid;
    }
    return lo;
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

}  // namespace kiln::engine::exec
