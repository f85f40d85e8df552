// SPDX-License-Identifier: Apache-2.0
// bn_cpu: time of each batch normalisation of ResNet-8 (bench/models/resnet8.kiln, batch 64)
// through the CPU kernels, forward and backward of training, with the ReLU and residual Add the
// plan folds into them. Each figure is the best of --reps calls in the calling thread's CPU time
// (one thread). Unless --warm is given, a 64 MiB buffer is written between calls, so each call
// finds its tensors in memory rather than in cache, as in a training step (whose arena is about
// 49 MiB).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "engine/core/cpu_isa.h"
#include "engine/core/thread_pool.h"
#include "engine/ops/kernels/normalization.h"

namespace {
using namespace kiln::engine;
using namespace kiln::engine::kernels;

struct Layer {
    const char* name;
    int64_t hw, c;
    bool relu;      // a ReLU folded in
    bool residual;  // an Add folded in (before the ReLU)
};

// ResNet-8's batch normalisations, batch 64, as its plan fuses them.
const Layer kLayers[] = {
    {"stem_bn", 32, 16, true, false},
    {"s1_bn1", 32, 16, true, false},
    {"s1_bn2", 32, 16, true, true},
    {"s2_bn1", 16, 32, true, false},
    {"s2_bn2", 16, 32, false, false},
    {"s2_short_bn", 16, 32, true, true},
    {"s3_bn1", 8, 64, true, false},
    {"s3_bn2", 8, 64, false, false},
    {"s3_short_bn", 8, 64, true, true},
};

const char* kUsage =
    "usage: bn_cpu [--reps N] [--warm] [--mask-from-output]\n"
    "  --reps N             calls per pass, the fastest counts (default 20)\n"
    "  --warm               do not evict the caches between calls\n"
    "  --mask-from-output   backward of a folded ReLU reads the output for its mask, also\n"
    "                       without a residual (the plan takes it from x there)\n"
    "KILN_CPU_ISA=avx2 forces the AVX2 kernels on an AVX-512 machine.\n";

double now() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 20;
    bool warm = false, maskFromOutput = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (a == "--warm") {
            warm = true;
        } else if (a == "--mask-from-output") {
            maskFromOutput = true;
        } else if (a == "--reps" && i + 1 < argc) {
            char* end = nullptr;
            const long v = std::strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end != '\0' || v < 1 || v > 100000) {
                std::fprintf(stderr, "bn_cpu: --reps needs a whole number from 1 to 100000, not '%s'\n", argv[i]);
                return 2;
            }
            reps = static_cast<int>(v);
        } else {
            std::fprintf(stderr, "bn_cpu: unknown or incomplete argument '%s'\n%s", a.c_str(), kUsage);
            return 2;
        }
    }
    ThreadPool pool(1);
    std::vector<char> evict(warm ? 0 : size_t(64) << 20);
    std::printf("Kiln batch normalisation: %s, 1 thread, best of %d calls (thread CPU time, caches %s%s)\n",
                std::string(cpuIsaName(cpuIsa())).c_str(), reps, warm ? "warm" : "evicted",
                maskFromOutput ? ", ReLU mask from the output" : "");
    std::printf("%-12s %6s %3s %-10s  %10s  %10s\n", "layer", "rows", "c", "fused", "forward ms", "backward ms");
    double total[2] = {0, 0};
    for (const Layer& l : kLayers) {
        const int64_t rows = 64 * l.hw * l.hw, c = l.c;
        const size_t n = size_t(rows * c);
        std::vector<float> x(n), res(n), y(n), dy(n), dx(n), dres(n), gamma(c), beta(c), mean(c), inv(c),
            mm(c, 0.0f), mv(c, 1.0f), dg(c), db(c);
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (auto* v : {&x, &res, &dy, &beta})
            for (float& e : *v) e = u(rng);
        for (float& e : gamma) e = 1.0f + 0.5f * u(rng);
        BatchNormParams params;
        BatchNormFusion fwd;
        fwd.relu = l.relu;
        fwd.residual = l.residual ? res.data() : nullptr;
        BatchNormFusion bwd;
        bwd.relu = l.relu;
        bwd.out = y.data();
        bwd.overwriteDx = true;
        bwd.maskFromInput = l.relu && !l.residual && !maskFromOutput;
        bwd.beta = beta.data();
        if (l.residual) {
            bwd.dResidual = dres.data();
            bwd.overwriteResidual = true;
        }
        double best[2] = {1e30, 1e30};
        for (int r = 0; r < reps; ++r) {
            for (size_t i = 0; i < evict.size(); i += 64) evict[i] = char(r + i);
            const double t0 = now();
            batchNormForwardTraining(rows, c, x.data(), gamma.data(), beta.data(), params, y.data(), mean.data(),
                                     inv.data(), mm.data(), mv.data(), pool, fwd);
            const double t1 = now();
            for (size_t i = 0; i < evict.size(); i += 64) evict[i] = char(r + i + 1);
            const double t2 = now();
            batchNormBackwardTraining(rows, c, x.data(), gamma.data(), mean.data(), inv.data(), dy.data(), dx.data(),
                                      dg.data(), db.data(), pool, bwd);
            const double t3 = now();
            best[0] = std::min(best[0], t1 - t0);
            best[1] = std::min(best[1], t3 - t2);
        }
        const char* fused = l.residual ? "add+relu" : l.relu ? "relu"
                                                             : "-";
        std::printf("%-12s %6lld %3lld %-10s  %10.3f  %10.3f\n", l.name, static_cast<long long>(rows),
                    static_cast<long long>(c), fused, best[0] * 1e3, best[1] * 1e3);
        total[0] += best[0];
        total[1] += best[1];
    }
    std::printf("all layers, ms: forward %.3f  backward %.3f  total %.3f\n", total[0] * 1e3, total[1] * 1e3,
                (total[0] + total[1]) * 1e3);
    return 0;
}
