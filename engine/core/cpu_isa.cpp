// SPDX-License-Identifier: Apache-2.0
// Run-time instruction-set selection for the CPU kernels (see cpu_isa.h).
#include "engine/core/cpu_isa.h"

#include <cstdlib>
#include <string_view>

namespace kiln::engine {

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
