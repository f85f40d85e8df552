#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer lane: builds the tests labelled `fast` (and the headless programs they start) with
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan, CUDA off, and runs them under ctest.
# Extra arguments go to ctest and also narrow what is built (for example `-R tst_rest_api`).
# Exits with ctest's status; any sanitizer report makes its test fail.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dir="${KILN_ASAN_DIR:-build-asan}"
launcher=()
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_SANITIZE=ON -DKILN_WITH_CUDA=OFF \
    -DKILN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null

# Each selected test's executable is the test's name; isa_check
# inspects kiln-train (and reports itself skipped for an instrumented one). The headless programs
# are built only when a test that starts them (tests/app: tst_kiln_*, tst_doctor, isa_check) is
# selected; CI leaves out isa_check alone (KILN_ASAN_EXCLUDE in .ci/run).
# The `_avx2` reruns are left out: the same code again with the other kernel variant doubles the
# slowest instrumented runs and finds nothing new for the sanitizers. KILN_ASAN_EXCLUDE (a ctest
# regular expression) leaves out more.
exclude='_avx2$'
[[ -n "${KILN_ASAN_EXCLUDE:-}" ]] && exclude="($exclude)|(${KILN_ASAN_EXCLUDE})"
mapfile -t tests < <(ctest --test-dir "$dir" -N -L fast -E "$exclude" "$@" | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*/\1/p')
if ((${#tests[@]} == 0)); then
    echo "sanitizer_lane.sh: none of the selected tests is labelled fast; nothing to run"
    exit 0
fi
# Tests that run a script rather than a program of their own (ui_boundary, format_check) have no
# target to build.
mapfile -t known < <(ninja -C "$dir" -t targets all | sed -n 's/^\([^:]*\): .*/\1/p')
declare -A buildable=()
for k in "${known[@]}"; do buildable[$k]=1; done
targets=()
programs=0
programs_list=(kiln-train kiln-eval kiln-predict kiln-data kiln-export kiln-import kiln-serve)
for t in "${tests[@]}"; do
    case "$t" in
        isa_check) programs=1 ;;
        tst_kiln_*|tst_doctor) programs=1; targets+=("$t") ;;
        *) [[ -n "${buildable[$t]:-}" ]] && targets+=("$t") ;;
    esac
done
if ((programs)); then
    targets+=("${programs_list[@]}")
fi
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)

# The targets are built in three rounds, most exposed code first: (1) the tests of the code that
# reads what users and clients send (tests/engine/{serve,io,data,core}: HTTP and gRPC serving,
# project, model and weight files, data readers, JSON); (2) the other engine tests; (3) the tests
# that start the headless programs, with the programs. A deadline bounds the lane:
# KILN_LANE_DEADLINE (seconds since the epoch; .ci/run sets it from CI's time limit) less
# KILN_LANE_TEST_RESERVE seconds (default 600, for running the tests) is when a build still going
# is stopped. The tests that were built then run as usual; those that were not do not run, and the
# lane names them at the end. Without a deadline every round is built.
round_of() {
    local src
    src=$(find tests -name "$1.cpp" -print -quit 2>/dev/null)
    case "$src" in
        tests/engine/serve/* | tests/engine/io/* | tests/engine/data/* | tests/engine/core/*) echo 1 ;;
        tests/app/*) echo 3 ;;
        *) echo 2 ;;
    esac
}
declare -A round=()
rounds=([1]="" [2]="" [3]="")
for t in "${targets[@]}"; do
    case " ${programs_list[*]} " in
        *" $t "*) r=3 ;;
        *) r=$(round_of "$t") ;;
    esac
    round[$t]=$r
    rounds[$r]+=" $t"
done
deadline="${KILN_LANE_DEADLINE:-0}"
reserve="${KILN_LANE_TEST_RESERVE:-600}"
stopped=0
# The load average is printed with the times: on a shared machine it says how much of the
# cores the lane had.
start=$(date +%s)
echo "sanitizer_lane.sh: building ${#targets[@]} targets (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for r in 1 2 3; do
    read -r -a batch <<<"${rounds[$r]}"
    ((${#batch[@]} > 0)) || continue
    if ((deadline > 0)); then
        left=$((deadline - reserve - $(date +%s)))
        if ((left <= 0)); then
            stopped=1
            break
        fi
        # ninja stops its compilers and exits on SIGINT.
        rc=0
        timeout --signal=INT --kill-after=60 "$left" ninja -C "$dir" -j"$(nproc)" "${batch[@]}" || rc=$?
        if ((rc == 124)); then
            stopped=1
            break
        fi
        ((rc == 0)) || exit "$rc"
    else
        ninja -C "$dir" -j"$(nproc)" "${batch[@]}"
    fi
done
echo "sanitizer_lane.sh: build ended after $(($(date +%s) - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
not_built=()
if ((stopped)); then
    # A test runs only when its program (and, for round 3, every headless program) is up to date.
    for t in "${tests[@]}"; do
        [[ -n "${buildable[$t]:-}" ]] || continue
        need=("$t")
        [[ "${round[$t]:-}" == 3 ]] && need+=("${programs_list[@]}")
        ninja -C "$dir" -n "${need[@]}" 2>/dev/null | grep -q "no work to do" || not_built+=("$t")
    done
    if ((${#not_built[@]} > 0)); then
        exclude="($exclude)|^($(IFS='|'; echo "${not_built[*]}"))\$"
    fi
fi

# halt_on_error: the first report ends the program with a failure; leaks are reported at exit.
# The app tests start the headless programs and judge them by their exit status and output, so a
# report in a started program must not pass for an ordinary failure: every report ends its
# program with status 99, which no Kiln program uses, and AddressSanitizer's and
# LeakSanitizer's reports (those of the test programs and of every program they start) are also
# written to $dir/sanitizer-reports/report.<program>.<pid>; any file there fails the lane.
# UndefinedBehaviorSanitizer ignores log_path when it runs beside AddressSanitizer (GCC's
# separate runtimes): its reports stay on the program's standard error, and the status tells.
reports="$(cd "$dir" && pwd)/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:exitcode=99:log_path=$reports/report:log_exe_name=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# Leaks inside system libraries that Kiln cannot free, each named with its reason (Open MPI).
# LeakSanitizer writes a table of the suppressions it used to the log file even when nothing is
# left to report; print_suppressions=0 keeps that table out, so a file there is always a report.
export LSAN_OPTIONS="suppressions=$PWD/tools/sanitizer/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
ctest --test-dir "$dir" --output-on-failure -j2 -L fast -E "$exclude" "$@" || status=$?
# A file holding nothing but a table of used suppressions (should a caller's LSAN_OPTIONS turn
# print_suppressions back on) is not a report.
is_report() {
    grep -qvE '^(-+|Suppressions used:| +count +bytes +template| +[0-9]+ +[0-9]+ .*|)$' "$1"
}
found=()
while IFS= read -r f; do
    is_report "$f" && found+=("$f")
done < <(find "$reports" -type f | sort)
if ((${#found[@]} > 0)); then
    echo "sanitizer_lane.sh: ${#found[@]} sanitizer report(s) in $reports:"
    for f in "${found[@]}"; do
        echo "---- ${f##*/}"
        cat "$f"
    done
    status=$((status ? status : 1))
fi
echo "sanitizer_lane.sh: ctest status $status ($(($(date +%s) - start)) s for build and tests, load average $(cut -d' ' -f1-3 /proc/loadavg))"
if ((stopped)); then
    echo "sanitizer_lane.sh: NOT RUN: the deadline (KILN_LANE_DEADLINE) stopped the build;" \
        "${#not_built[@]} of ${#tests[@]} selected tests were not built and did not run under the sanitizers:"
    printf '  %s\n' "${not_built[@]}"
fi
exit "$status"
