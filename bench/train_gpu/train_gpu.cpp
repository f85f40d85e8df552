// SPDX-License-Identifier: Apache-2.0
// train_gpu: GPU training throughput of Kiln projects (images/s over timed windows of full
// training steps on one device-resident synthetic batch) in fp32, fp16 and bf16, with the memory
// assistant's prediction next to the allocator's measured peak, both without the cuDNN
// convolution workspace (chosen by cuDNN at run time). Peer: bench/train_gpu/torch_train_gpu.py.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_device.h"
#include "engine/backends/cuda/cuda_plan.h"
#include "engine/backends/cuda/dnn.h"
#include "engine/core/rng.h"
#include "engine/exec/memory_assistant.h"
#include "engine/io/project.h"
#include "engine/ops/model.h"

namespace {
using namespace kiln::engine;
using Clock = std::chrono::steady_clock;

const char* kUsage =
    "usage: train_gpu [--batch N] [--precision fp32,fp16,bf16] [--windows N] [--window-seconds S]\n"
    "                 [--warmup-steps N] [--device N] [--predict-only] project.kiln ...\n"
    "Times full training steps (forward, loss, backward, optimizer update) on the GPU with\n"
    "synthetic data already on the device; prints one RESULT line per project and precision.\n"
    "Memory: predicted_bytes is the memory assistant's prediction and peak_bytes the caching\n"
    "allocator's peak in use, both covering the cuBLASLt workspace, parameters, gradients,\n"
    "optimizer state, the plan's arena and kernel workspace, and neither the cuDNN convolution\n"
    "workspace (conv_workspace_bytes, chosen by cuDNN at run time, up to 256 MiB);\n"
    "allocator_peak_bytes is the peak with it. --predict-only prints the prediction only (no GPU).\n";

struct Options {
    std::vector<std::string> projects;
    std::vector<std::string> precisions{"fp32", "fp16", "bf16"};
    int64_t batch = 0;  // 0: the project's
    int windows = 5;
    double windowSeconds = 1.0;
    int warmupSteps = 10;
    int device = 0;
    bool predictOnly = false;
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
        const size_t comma = s.find(',', at);
        out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

int fail(const Error& e) {
    std::fprintf(stderr, "train_gpu: %s\n", e.toString().c_str());
    return 1;
}

// One project at one precision; returns false on an error (printed).
bool runOne(const std::string& path, const std::string& precisionName, const Options& o) {
    auto project = io::loadProject(path);
    if (!project.ok()) return fail(project.error()), false;
    auto model = ops::analyzeModel(project->graph);
    if (!model.ok()) return fail(model.error()), false;
    // The training block's optimizer, loss, batch size and seed (read directly: the benchmark
    // needs no data pipeline, so it stays free of the data libraries).
    const auto& tj = project->training;
    const int64_t projectBatch = tj.value("batch_size", int64_t{32});
    const uint64_t seed = tj.value("seed", uint64_t{0});
    optim::OptimizerConfig optimizer;
    if (tj.contains("optimizer")) {
        const auto& oj = tj["optimizer"];
        optimizer.type = oj.value("type", std::string("adam"));
        if (oj.contains("learning_rate")) optimizer.learningRate = oj["learning_rate"].get<double>();
        optimizer.momentum = oj.value("momentum", 0.0);
    }
    exec::LossSpec lossSpec;
    if (tj.contains("loss")) {
        const auto& lj = tj["loss"];
        lossSpec.type = lj.value("type", std::string("SparseCategoricalCrossentropy"));
        if (lj.contains("from_logits")) lossSpec.attrs.set("from_logits", lj["from_logits"].get<bool>());
    }
    lossSpec.output =
        project->graph.outputs.empty() ? project->graph.nodes.back().name : project->graph.outputs[0];
    auto precision = parsePrecision(precisionName);
    if (!precision.ok()) return fail(precision.error()), false;
    const int64_t batch = o.batch > 0 ? o.batch : projectBatch;
    const std::string name = std::filesystem::path(path).stem().string();

    // Targets: class indices for sparse losses, else 0/1 values shaped like the output.
    std::vector<exec::LossSpec> losses;
    for (const auto& l : {lossSpec}) {
        exec::LossSpec s = l;
        const int o = model->graph.find(s.output);
        s.targetShape =
            s.type == "SparseCategoricalCrossentropy"
                ? Shape{}
                : Shape(std::vector<int64_t>(model->nodes[static_cast<size_t>(o)].output.dims().begin() + 1,
                                             model->nodes[static_cast<size_t>(o)].output.dims().end()));
        losses.push_back(s);
    }

    exec::MemoryOptions mo;
    mo.batch = batch;
    mo.precision = *precision;
    mo.optimizer = optimizer;
    mo.losses = losses;
    mo.cuda = true;
    auto predicted = exec::estimateMemory(*model, mo);
    if (!predicted.ok()) return fail(predicted.error()), false;
    std::printf(
        "%s %s: predicted %s = parameters %s + gradients %s + optimizer state %s + arena %s + 16-bit staging "
        "%s "
        "+ workspaces %s (cuBLASLt and kernels); cuDNN convolution workspace not predicted (up to %s)\n",
        name.c_str(), precisionName.c_str(), exec::formatBytes(predicted->total()).c_str(),
        exec::formatBytes(predicted->parameters).c_str(), exec::formatBytes(predicted->gradients).c_str(),
        exec::formatBytes(predicted->optimizerState).c_str(),
        exec::formatBytes(predicted->activations).c_str(),
        exec::formatBytes(predicted->lowPrecisionCopy).c_str(),
        exec::formatBytes(predicted->workspace).c_str(),
        exec::formatBytes(predicted->convWorkspaceLimit).c_str());
    if (o.predictOnly) {
        std::printf("PREDICT model=%s precision=%s batch=%lld predicted_bytes=%llu\n", name.c_str(),
                    precisionName.c_str(), static_cast<long long>(batch),
                    static_cast<unsigned long long>(predicted->total()));
        std::fflush(stdout);
        return true;
    }

    auto ctx = cuda::DeviceContext::create(o.device);
    if (!ctx.ok()) return fail(ctx.error()), false;
    (*ctx)->allocator().resetPeak();
    ThreadPool pool(2);
    auto store = exec::ParamStore::create(*model, seed);
    cuda::CudaPlanOptions po;
    po.batch = batch;
    po.losses = losses;
    po.seed = seed;
    po.precision = *precision;
    auto plan = cuda::CudaPlan::compile(*model, store, po, **ctx, pool);
    if (!plan.ok()) return fail(plan.error()), false;
    auto opt = cuda::CudaOptimizer::create(optimizer, **plan);
    if (!opt.ok()) return fail(opt.error()), false;
    std::printf("%s: %s", name.c_str(), (*plan)->placement().report().c_str());
    // Blocks held once the plan and optimizer exist; what is still held after the warm-up beyond
    // them was allocated lazily by the steps: the cuDNN convolution workspace.
    const uint64_t heldBeforeSteps = (*ctx)->allocator().stats().inUse;

    for (size_t k = 0; k < model->inputs.size(); ++k) {
        std::vector<float> x(static_cast<size_t>(
            model->nodes[static_cast<size_t>(model->inputs[k])].output.numelFrom(1) * batch));
        for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0f * rng::uniform(1, k, i) - 1.0f;
        if (auto st = (*plan)->setInput(k, x.data()); !st.ok()) return fail(st.error()), false;
    }
    for (size_t l = 0; l < losses.size(); ++l) {
        const int out = model->graph.find(losses[l].output);
        const int64_t width = model->nodes[static_cast<size_t>(out)].output.numelFrom(1);
        const bool sparse = losses[l].type == "SparseCategoricalCrossentropy";
        std::vector<float> t(static_cast<size_t>(batch * (sparse ? 1 : width)));
        for (size_t i = 0; i < t.size(); ++i)
            t[i] = sparse ? static_cast<float>(rng::bits(2, l, i) % static_cast<uint32_t>(width))
                          : static_cast<float>(rng::bits(2, l, i) & 1u);
        if (auto st = (*plan)->setTarget(l, t.data()); !st.ok()) return fail(st.error()), false;
    }

    optim::LossScaler scaler;
    const double lr = optimizer.resolvedLearningRate();
    uint64_t stepNo = 0;
    auto step = [&]() -> Status {
        if (*precision == Precision::Fp16) {
            KILN_ASSIGN(bool applied, cuda::scaledTrainStep(**plan, **opt, scaler, lr, stepNo));
            (void)applied;
        } else {
            KILN_TRY((*plan)->trainStep(stepNo));
            KILN_TRY((*opt)->step(lr));
        }
        ++stepNo;
        return {};
    };
    for (int i = 0; i < o.warmupSteps; ++i)
        if (auto st = step(); !st.ok()) return fail(st.error()), false;
    if (auto st = (*ctx)->synchronize(); !st.ok()) return fail(st.error()), false;
    const uint64_t heldAfterWarmup = (*ctx)->allocator().stats().inUse;
    const uint64_t convWorkspace = heldAfterWarmup > heldBeforeSteps ? heldAfterWarmup - heldBeforeSteps : 0;
    for (const auto& note : cuda::convolutionNotes()) std::printf("%s: %s\n", name.c_str(), note.c_str());

    std::vector<double> rates;
    for (int w = 0; w < o.windows; ++w) {
        const auto t0 = Clock::now();
        int64_t steps = 0;
        double seconds = 0;
        do {
            if (auto st = step(); !st.ok()) return fail(st.error()), false;
            ++steps;
            if (steps % 8 == 0 || o.windowSeconds <= 0) {
                if (auto st = (*ctx)->synchronize(); !st.ok()) return fail(st.error()), false;
                seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            }
        } while (seconds < o.windowSeconds);
        rates.push_back(double(steps * batch) / seconds);
    }
    auto lossValues = (*plan)->losses();
    if (!lossValues.ok()) return fail(lossValues.error()), false;
    std::sort(rates.begin(), rates.end());
    const auto stats = (*ctx)->allocator().stats();
    const uint64_t peak = stats.peakInUse > convWorkspace ? stats.peakInUse - convWorkspace : stats.peakInUse;
    std::printf(
        "%s %s: measured %s = allocator peak %s - cuDNN convolution workspace %s (plan arena %s, "
        "parameters %s)\n",
        name.c_str(), precisionName.c_str(), exec::formatBytes(peak).c_str(),
        exec::formatBytes(stats.peakInUse).c_str(), exec::formatBytes(convWorkspace).c_str(),
        exec::formatBytes((*plan)->arenaBytes()).c_str(),
        exec::formatBytes((*plan)->parameterBytes()).c_str());
    std::printf(
        "RESULT model=%s precision=%s batch=%lld samples_per_s=%.1f loss=%.4f predicted_bytes=%llu "
        "peak_bytes=%llu allocator_peak_bytes=%llu conv_workspace_bytes=%llu skipped_steps=%lld\n",
        name.c_str(), precisionName.c_str(), static_cast<long long>(batch), rates[rates.size() / 2],
        lossValues->empty() ? 0.0 : (*lossValues)[0], static_cast<unsigned long long>(predicted->total()),
        static_cast<unsigned long long>(peak), static_cast<unsigned long long>(stats.peakInUse),
        static_cast<unsigned long long>(convWorkspace), static_cast<long long>(scaler.skippedSteps()));
    std::fflush(stdout);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s", kUsage);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--batch")
            o.batch = std::atoll(next().c_str());
        else if (a == "--precision")
            o.precisions = split(next());
        else if (a == "--windows")
            o.windows = std::max(1, std::atoi(next().c_str()));
        else if (a == "--window-seconds")
            o.windowSeconds = std::atof(next().c_str());
        else if (a == "--warmup-steps")
            o.warmupSteps = std::max(0, std::atoi(next().c_str()));
        else if (a == "--device")
            o.device = std::atoi(next().c_str());
        else if (a == "--predict-only")
            o.predictOnly = true;
        else if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return 0;
        } else
            o.projects.push_back(a);
    }
    if (o.projects.empty()) {
        std::fprintf(stderr, "%s", kUsage);
        return 2;
    }
    if (!o.predictOnly && cuda::deviceCount() == 0) {
        std::fprintf(stderr, "train_gpu: no CUDA device (%s)\n", cuda::unavailableReason().c_str());
        return 3;
    }
    int failures = 0;
    for (const auto& p : o.projects)
        for (const auto& prec : o.precisions)
            if (!runOne(p, prec, o)) ++failures;
    return failures == 0 ? 0 : 1;
}
