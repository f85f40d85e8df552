#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/format_check.sh on a scratch repository: a commit that adds a badly laid out line to a file
# whose old lines are badly laid out too fails naming the new line only; after --fix it passes and
# the old lines are left as they were.
#   format_check_test.sh <source dir>
set -euo pipefail
src="$1"
if ! command -v clang-format >/dev/null 2>&1; then
    echo "format_check_test: clang-format is not installed; skipped"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tools"
cp "$src/tools/format_check.sh" "$src/tools/diff_base.sh" "$work/tools/"
cp "$src/.clang-format" "$work/"
cd "$work"
git init -q -b main .
git config user.email test@example.invalid
git config user.name test
printf 'int  old(int a){return a;}\n\nint kept() { return 1; }\n' >a.cpp
git add -A
git commit -qm base
printf 'int  old(int a){return a;}\n\nint kept() { return 1; }\nint   added( int b ){ return b+1; }\n' >a.cpp
git commit -qam change

if out=$(tools/format_check.sh 2>&1); then
    echo "format_check_test: a badly laid out new line passed" >&2
    echo "$out" >&2
    exit 1
fi
if ! grep -q '^a.cpp:4:' <<<"$out"; then
    echo "format_check_test: the complaint does not name a.cpp:4" >&2
    echo "$out" >&2
    exit 1
fi
if grep -q '^a.cpp:1:' <<<"$out"; then
    echo "format_check_test: the untouched line 1 was judged" >&2
    exit 1
fi
tools/format_check.sh --fix >/dev/null
tools/format_check.sh >/dev/null
[[ "$(sed -n 1p a.cpp)" == 'int  old(int a){return a;}' ]] || { echo "format_check_test: --fix changed line 1" >&2; exit 1; }
[[ "$(sed -n 4p a.cpp)" == 'int added(int b) { return b + 1; }' ]] || { echo "format_check_test: line 4 is '$(sed -n 4p a.cpp)'" >&2; exit 1; }
echo "format_check_test: passed"
