// SPDX-License-Identifier: Apache-2.0
// The instruction set the CPU kernels run with, chosen once per process at run time: one portable
// binary (built for x86-64-v3) uses AVX-512 kernels where the processor and the OS support them.
#pragma once

#include <string_view>

namespace kiln::engine {

// Kernel variants, in increasing order of capability. Avx2 includes FMA (the x86-64-v3 baseline);
// Avx512 means AVX512F+BW+DQ+VL with the OS saving the 512-bit state (x86-64-v4).
enum class CpuIsa { Avx2, Avx512 };

// The best variant this processor supports, or the one named by the environment variable
// KILN_CPU_ISA ("avx2" or "avx512") when that is supported too: a request for more than the
// processor has is ignored, so a test or benchmark can force the narrower kernels but never an
// instruction the machine lacks. Decided on the first call and fixed for the process.
CpuIsa cpuIsa();

// The best variant the processor supports, ignoring KILN_CPU_ISA.
CpuIsa cpuIsaSupported();

// "avx2" or "avx512".
std::string_view cpuIsaName(CpuIsa isa);

}  // namespace kiln::engine
