#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that a Kiln binary runs on an AVX2-only processor: AVX-512 instructions (zmm registers,
# opmask registers, or the upper 16 vector registers) may only appear in functions of the avx512
# kernel variants (their names contain "::avx512::"), which run only after the run-time check.
# Catches a shared template or inline function compiled for AVX-512 that the linker kept for
# every caller. Usage: isa_check.sh BINARY (exit status 77: skipped, the binary is instrumented).
set -euo pipefail
bin=${1:?usage: isa_check.sh BINARY}
[[ -x "$bin" ]] || { echo "isa_check: $bin is not an executable" >&2; exit 2; }
# A sanitizer build (build-asan, -O1 and instrumented) is not a binary Kiln ships, and its
# different inlining decides which shared functions the linker keeps, so its result would say
# nothing about the optimised build: skipped there (status 77, shown by ctest as skipped).
if nm -D "$bin" 2>/dev/null | grep -w __asan_init >/dev/null; then
    echo "isa_check: skipped: $bin is built with AddressSanitizer; the check applies to the optimised build"
    exit 77
fi
objdump -d -C --no-show-raw-insn "$bin" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); sub(/>:$/, "", fn); next }
  /%zmm|%k[1-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])/ {
    if (index(fn, "::avx512::") == 0 && !(fn in bad)) { bad[fn] = $0; n++ }
    else if (index(fn, "::avx512::") > 0) ok++
  }
  END {
    for (f in bad) printf "AVX-512 outside the avx512 variants: %s\n    %s\n", f, bad[f]
    printf "isa_check: %d AVX-512 instructions inside the avx512 variants, %d functions outside\n", ok, n
    exit n > 0 ? 1 : 0
  }'
