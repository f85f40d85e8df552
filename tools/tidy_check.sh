#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs clang-tidy (the checks of .clang-tidy at the root) on the C++ sources that changed since a
# base commit, the same rule as tools/format_check.sh (tools/diff_base.sh: the merge base with main
# on a branch, else the previous commit; changes in the working tree count as well). Only sources
# that the build's compile_commands.json compiles are checked, with the flags the build uses; a
# changed header is judged through the changed sources that include it. Any warning in a file of
# the project (engine/ app/ ui/ tests/ bench/ examples/, sources and the headers they include)
# fails the check, naming file:line:column and the check; system and Qt headers and the files the
# build generates (moc, uic, under the build folder) are not judged.
#
#   tools/tidy_check.sh [BASE]
#
# The build folder is KILN_TIDY_BUILD (default build/); it must be configured and built, because
# sources include headers that the build generates (.ci/run runs this after test.sh).
#
# Cost: clang-tidy parses each file as the compiler does, then runs the checks; both grow with the
# headers a source includes. Measured with clang-tidy 14 and this .clang-tidy on a 2-core machine
# under load (user CPU per file): 4.6 s for engine/api/plugins.cpp, 11 to 19 s for engine sources
# that include the data, exec or training headers (13.4 s for engine/data/transforms.cpp, of which
# 4.8 s is parsing alone), and 21 to 22 s for studio sources that include Qt Widgets. So at most
# KILN_TIDY_MAX_FILES sources (default 10, under 4 minutes of CPU in the worst case) are checked,
# on KILN_TIDY_JOBS processes (default: the number of cores); the sources past the cap are named
# as not checked, and KILN_TIDY_MAX_FILES=0 checks them all.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

if ! command -v clang-tidy >/dev/null 2>&1; then
    echo "tidy_check: clang-tidy is not installed (tools/install_deps.sh installs it)" >&2
    exit 1
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "tidy_check: not a git checkout; nothing to compare, skipped"
    exit 0
fi
base=$(tools/diff_base.sh "${1:-}")
if [[ -z "$base" ]]; then
    echo "tidy_check: the first commit has no base to compare with; skipped"
    exit 0
fi

build="${KILN_TIDY_BUILD:-build}"
[[ "$build" = /* ]] || build="$root/$build"
database="$build/compile_commands.json"
if [[ ! -f "$database" ]]; then
    echo "tidy_check: $database is missing; configure and build first (./test.sh, or cmake -S . -B build && cmake --build build)" >&2
    exit 1
fi
max="${KILN_TIDY_MAX_FILES:-10}"
jobs="${KILN_TIDY_JOBS:-$(nproc 2>/dev/null || echo 2)}"

mapfile -t changed < <(
    git diff --name-only --diff-filter=ACMR "$base" -- '*.cpp' '*.cc' '*.c'
    git ls-files --others --exclude-standard -- '*.cpp' '*.cc' '*.c'
)
files=()
for f in "${changed[@]}"; do
    [[ -f "$f" ]] || continue
    # CMake writes one "file" entry per line, with the absolute path.
    grep -Fq "\"file\": \"$root/$f\"" "$database" && files+=("$f")
done
if ((${#files[@]} == 0)); then
    echo "tidy_check: no changed C++ source since $(git rev-parse --short "$base") is in $database; nothing to check"
    exit 0
fi
left=()
if ((max > 0 && ${#files[@]} > max)); then
    left=("${files[@]:max}")
    files=("${files[@]:0:max}")
fi

# Project files only: the source tree's own folders, never the build folder inside it.
root_re=$(printf '%s' "$root" | sed 's/[][\.*^$+?(){}|]/\\&/g')
filter="^$root_re/(engine|app|ui|tests|bench|examples)/"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The studio's targets compile with GCC precompiled headers: each -include of a cmake_pch.hxx has a
# .gch beside it that clang would try to read and cannot. clang-tidy reads a copy of the database
# that includes a copy of each such header instead, with no .gch beside it.
mkdir -p "$out/db/pch"
while read -r header; do
    copy="$out/db/pch/$(printf '%s' "$header" | md5sum | cut -c1-16).hxx"
    cp "$header" "$copy"
    printf 's|%s|%s|g\n' "$header" "$copy"
done < <(grep -o -- '-include [^ "]*/cmake_pch\.hxx' "$database" | sed 's/^-include //' | sort -u) >"$out/db/rewrite.sed"
sed -f "$out/db/rewrite.sed" "$database" >"$out/db/compile_commands.json"
build="$out/db"

# One clang-tidy per file, its output kept apart so that parallel runs do not interleave. The
# build compiles with GCC: options clang does not know are not the change's fault.
export root build filter out
printf '%s\0' "${files[@]}" | xargs -0 -P "$jobs" -I{} bash -c '
    f="$1"
    log="$out/$(printf "%s" "$f" | tr / _).log"
    if ! clang-tidy -p "$build" --quiet --header-filter="$filter" --warnings-as-errors="*" \
        --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-unused-command-line-argument \
        "$root/$f" >"$log" 2>&1; then
        echo "$f" >"$log.failed"
    fi' _ {}

status=0
for f in "${files[@]}"; do
    log="$out/$(printf '%s' "$f" | tr / _).log"
    if [[ -e "$log.failed" ]]; then
        status=1
        # Paths relative to the checkout, as format_check prints them; the summary lines of
        # clang-tidy ("N warnings generated", "N warnings treated as errors") are left out.
        sed -e "s|^$root/||" "$log" | grep -v -E '^[0-9]+ warnings? (generated|treated as errors?)\.?$' >&2 || true
    fi
done
for f in "${left[@]}"; do
    echo "tidy_check: not checked (more than $max changed sources; KILN_TIDY_MAX_FILES): $f"
done
if ((status)); then
    echo "tidy_check: clang-tidy found problems in the changed sources (checks: .clang-tidy)" >&2
else
    echo "tidy_check: ${#files[@]} changed C++ source(s) since $(git rev-parse --short "$base") pass clang-tidy"
fi
exit "$status"
