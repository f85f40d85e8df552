// SPDX-License-Identifier: Apache-2.0
// conv_cpu: time of each pass of ResNet-8's convolutions (bench/models/resnet8.kiln, batch 64)
// through the CPU kernels: forward, backward-data and the filter gradient, one at a time. Each
// figure is the best of --reps calls, timed in the calling thread's CPU time with one thread (so
// that other processes on a shared machine cost little beyond cache disturbance) and in wall
// time with more.
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
#include "engine/ops/kernels/conv2d.h"

namespace {
using namespace kiln::engine;
using namespace kiln::engine::kernels;

struct Shape {
    const char* name;
    int64_t hw, c, k, oc, stride;
    int uses;      // how many layers of ResNet-8 have this shape
    bool needsDx;  // false for the stem, whose input needs no gradient
};

// ResNet-8's convolutions, batch 64, "same" padding.
const Shape kShapes[] = {
    {"stem", 32, 3, 3, 16, 1, 1, false},    {"s1_conv", 32, 16, 3, 16, 1, 2, true},
    {"s2_conv1", 32, 16, 3, 32, 2, 1, true}, {"s2_conv2", 16, 32, 3, 32, 1, 1, true},
    {"s2_short", 32, 16, 1, 32, 2, 1, true}, {"s3_conv1", 16, 32, 3, 64, 2, 1, true},
    {"s3_conv2", 8, 64, 3, 64, 1, 1, true},  {"s3_short", 16, 32, 1, 64, 2, 1, true},
};

const char* kUsage =
    "usage: conv_cpu [--threads N] [--reps N] [--shape NAME]\n"
    "  --threads N   kernel threads (default 1: timed in CPU time; more: wall time)\n"
    "  --reps N      calls per pass, the fastest counts (default 20)\n"
    "  --shape NAME  only this convolution (stem, s1_conv, s2_conv1, s2_conv2, s2_short,\n"
    "                s3_conv1, s3_conv2, s3_short)\n"
    "KILN_CPU_ISA=avx2 forces the AVX2 kernels on an AVX-512 machine.\n";

double now(bool cpuTime) {
    timespec t{};
    clock_gettime(cpuTime ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

bool parseCount(const char* flag, const char* text, int& out) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 100000) {
        std::fprintf(stderr, "conv_cpu: %s needs a whole number from 1 to 100000, not '%s'\n", flag, text);
        return false;
    }
    out = static_cast<int>(v);
    return true;
}
}  // namespace

int main(int argc, char** argv) {
    int threads = 1, reps = 20;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if ((a == "--threads" || a == "--reps" || a == "--shape") && i + 1 >= argc) {
            std::fprintf(stderr, "conv_cpu: %s needs a value\n%s", a.c_str(), kUsage);
            return 2;
        }
        if (a == "--threads") {
            if (!parseCount("--threads", argv[++i], threads)) return 2;
        } else if (a == "--reps") {
            if (!parseCount("--reps", argv[++i], reps)) return 2;
        } else if (a == "--shape") {
            only = argv[++i];
            if (std::none_of(std::begin(kShapes), std::end(kShapes), [&](const Shape& s) { return only == s.name; })) {
                std::fprintf(stderr, "conv_cpu: unknown shape '%s'\n%s", only.c_str(), kUsage);
                return 2;
            }
        } else {
            std::fprintf(stderr, "conv_cpu: unknown argument '%s'\n%s", a.c_str(), kUsage);
            return 2;
        }
    }
    const bool cpuTime = threads == 1;
    ThreadPool pool(threads);
    std::printf("Kiln CPU kernels: %s, %d thread%s, best of %d calls (%s time)\n",
                std::string(cpuIsaName(cpuIsa())).c_str(), threads, threads == 1 ? "" : "s", reps,
                cpuTime ? "thread CPU" : "wall");
    std::printf("%-9s %5s  %18s  %18s  %18s\n", "conv", "layers", "forward ms GF/s", "backward-data", "filter gradient");
    double total[3] = {0, 0, 0};
    for (const Shape& s : kShapes) {
        if (!only.empty() && only != s.name) continue;
        const Conv2DGeom g = makeConv2DGeom(64, s.hw, s.hw, s.c, s.k, s.k, s.oc, s.stride, s.stride, 1, 1, true);
        std::vector<float> x(size_t(g.n * g.h * g.w * g.c)), w(size_t(g.kh * g.kw * g.c * g.oc)),
            y(size_t(g.n * g.oh * g.ow * g.oc)), dy(y.size()), dx(x.size()), dw(w.size()),
            ws(conv2dWorkspaceFloats(g));
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (auto* v : {&x, &w, &dy})
            for (float& e : *v) e = u(rng);
        double best[3] = {1e30, 1e30, 1e30};
        for (int r = 0; r < reps; ++r) {
            const double t0 = now(cpuTime);
            conv2dForward(g, x.data(), w.data(), nullptr, y.data(), ws.data(), pool);
            const double t1 = now(cpuTime);
            if (s.needsDx) conv2dBackward(g, nullptr, w.data(), dy.data(), dx.data(), nullptr, nullptr, ws.data(), pool, true);
            const double t2 = now(cpuTime);
            std::fill(dw.begin(), dw.end(), 0.0f);
            const double t3 = now(cpuTime);
            conv2dBackward(g, x.data(), nullptr, dy.data(), nullptr, dw.data(), nullptr, ws.data(), pool);
            const double t4 = now(cpuTime);
            best[0] = std::min(best[0], t1 - t0);
            best[1] = std::min(best[1], t2 - t1);
            best[2] = std::min(best[2], t4 - t3);
        }
        const double flops = 2.0 * double(g.n * g.oh * g.ow * g.oc) * double(g.kh * g.kw * g.c);
        char cell[3][32];
        for (int p = 0; p < 3; ++p) {
            if (p == 1 && !s.needsDx)
                std::snprintf(cell[p], sizeof cell[p], "%18s", "-");
            else
                std::snprintf(cell[p], sizeof cell[p], "%8.3f %9.1f", best[p] * 1e3, flops / best[p] * 1e-9);
            if (p != 1 || s.needsDx) total[p] += best[p] * s.uses;
        }
        std::printf("%-9s %5d  %s  %s  %s\n", s.name, s.uses, cell[0], cell[1], cell[2]);
    }
    std::printf("all layers, ms: forward %.3f  backward-data %.3f  filter gradient %.3f  total %.3f\n",
                total[0] * 1e3, total[1] * 1e3, total[2] * 1e3, (total[0] + total[1] + total[2]) * 1e3);
    return 0;
}
