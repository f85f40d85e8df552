#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the layout of changed C++ code with clang-format (.clang-format at the root): the lines
# that differ from a base commit, in every C++ file that differs, must be as clang-format would
# write them. Untouched lines are not judged, so an old file can be edited without reformatting
# all of it. Exits non-zero and prints clang-format's complaints (file:line:column) otherwise.
#
#   tools/format_check.sh [BASE]
#
# BASE defaults to KILN_FORMAT_BASE, else the merge base with origin/main or main when HEAD is on
# another branch, else the previous commit (HEAD~1) (tools/diff_base.sh, shared with
# tools/tidy_check.sh). Changes in the working tree count as well.
# tools/format_check.sh --fix [BASE] rewrites those lines in place instead of checking.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fix=0
if [[ "${1:-}" == --fix ]]; then
    fix=1
    shift
fi

if ! command -v clang-format >/dev/null 2>&1; then
    echo "format_check: clang-format is not installed (tools/install_deps.sh installs it)" >&2
    exit 1
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "format_check: not a git checkout; nothing to compare, skipped"
    exit 0
fi

base=$(tools/diff_base.sh "${1:-}")
if [[ -z "$base" ]]; then
    echo "format_check: the first commit has no base to compare with; skipped"
    exit 0
fi

mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$base" -- '*.cpp' '*.h' '*.cu' '*.cuh' '*.c')
# New files that are not added yet count whole.
mapfile -t untracked < <(git ls-files --others --exclude-standard -- '*.cpp' '*.h' '*.cu' '*.cuh' '*.c')
status=0
checked=0
# check FILE --lines=A:B...: checks (or with --fix, formats) those lines of FILE.
check() {
    local f="$1"
    shift
    (($#)) || return 0
    checked=$((checked + 1))
    if ((fix)); then
        clang-format -i --style=file "$@" "$f"
    elif ! clang-format --dry-run --Werror --style=file "$@" "$f"; then
        status=1
    fi
}
for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    # The added or changed lines of this file, as clang-format --lines ranges.
    mapfile -t ranges < <(git diff -U0 --no-color "$base" -- "$f" |
        sed -n 's/^@@ -[0-9,]* +\([0-9]*\)\(,\([0-9]*\)\)\{0,1\} @@.*/\1 \3/p' |
        awk '{ n = ($2 == "") ? 1 : $2; if (n > 0) print "--lines=" $1 ":" ($1 + n - 1) }')
    check "$f" "${ranges[@]}"
done
for f in "${untracked[@]}"; do
    check "$f" "--lines=1:$(($(wc -l <"$f") + 1))"
done

if ((fix)); then
    echo "format_check: formatted the changed lines of $checked file(s) since $(git rev-parse --short "$base")"
elif ((status)); then
    echo "format_check: changed lines are not formatted as .clang-format says; run tools/format_check.sh --fix" >&2
else
    echo "format_check: the changed lines of $checked C++ file(s) since $(git rev-parse --short "$base") are formatted"
fi
exit "$status"
