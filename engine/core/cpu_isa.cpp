// SPDX-License-Identifier: Apache-2.0
// Run-time instruction-set selection for the CPU kernels (see cpu_isa.h).
#include "engine/core/cpu_isa.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace kiln::engine {
namespace {

// Everything else is compiled for x86-64-v3. This check runs before any other static initialiser
// of Kiln's code and is itself compiled for the original x86-64, so a processor without AVX2 and
// FMA gets a message and exit status 3 instead of an illegal-instruction crash somewhere later.
__attribute__((constructor(101), target("arch=x86-64"))) void requireBaseline() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return;
    static const char kMessage[] =
        "Kiln needs a processor with AVX2 and FMA (x86-64-v3: Intel Haswell, AMD Zen or newer); "
        "this one lacks them.\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(3);
}

}  // namespace

CpuIsa cpuIsaSupported() {
    // libgcc's feature bits also check that the OS enabled the AVX-512 register state (XCR0).
    static const CpuIsa isa = [] {
        __builtin_cpu_init();
        const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
        return avx512 ? CpuIsa::Avx512 : CpuIsa::Avx2;
    }();
    return isa;
}

CpuIsa cpuIsa() {
    static const CpuIsa isa = [] {
        const CpuIsa best = cpuIsaSupported();
        const char* env = std::getenv("KILN_CPU_ISA");
        if (!env) return best;
        const std::string_view want(env);
        if (want == "avx2") return CpuIsa::Avx2;
        return best;  // "avx512" (granted only where supported), or an unknown name
    }();
    return isa;
}

std::string_view cpuIsaName(CpuIsa isa) {
    return isa == CpuIsa::Avx512 ? "avx512" : "avx2";
}

}  // namespace kiln::engine
