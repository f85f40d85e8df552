#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/tidy_check.sh on a scratch repository with Kiln's .clang-tidy: a commit that changes one
# source fails naming that source's finding and the project header it includes, while an old
# source with a finding that the commit did not touch, a generated header under the build folder,
# and a changed source the compilation database does not list are not judged. After the finding is
# fixed the check passes, though the sources are compiled with a GCC precompiled header that clang
# cannot read.
#   tidy_check_test.sh <source dir>
set -euo pipefail
src="$1"
if ! command -v clang-tidy >/dev/null 2>&1; then
    echo "tidy_check_test: clang-tidy is not installed; skipped"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tools" "$work/engine" "$work/build/ui"
cp "$src/tools/tidy_check.sh" "$src/tools/diff_base.sh" "$work/tools/"
cp "$src/.clang-tidy" "$work/"
cd "$work"
git init -q -b main .
git config user.email test@example.invalid
git config user.name test
printf '/build/\n' >.gitignore
# Old code with a finding (bugprone-integer-division) that the change does not touch.
printf 'double old(int a, int b) { return 1.5 * (a / b); }\n' >engine/old.cpp
printf 'inline int fine(int a) { return a + 1; }\n' >engine/shared.h
# A generated header (as moc or uic write them) with a finding of its own.
printf 'inline double generated(int a, int b) { return 1.5 * (a / b); }\n' >build/ui/generated.h
printf '#include "engine/shared.h"\nint changed(int a) { return fine(a); }\n' >engine/changed.cpp
# A GCC precompiled header as the studio's targets use: clang cannot read the .gch beside it.
mkdir -p build/pch
printf '#pragma GCC system_header\n#include <string>\n' >build/pch/cmake_pch.hxx
printf 'not a precompiled header\n' >build/pch/cmake_pch.hxx.gch
printf 'double unlisted(int a, int b) { return 1.5 * (a / b); }\n' >engine/unlisted.cpp
{
    echo '['
    for f in old changed; do
        [[ $f == old ]] || echo ','
        printf '{"directory": "%s/build", "command": "/usr/bin/c++ -std=c++20 -O3 -Wno-restrict -I%s -I%s/build -Winvalid-pch -include %s/build/pch/cmake_pch.hxx -c %s/engine/%s.cpp",\n  "file": "%s/engine/%s.cpp"}\n' \
            "$work" "$work" "$work" "$work" "$work" "$f" "$work" "$f"
    done
    echo ']'
} >build/compile_commands.json
git add -A
git commit -qm base

# The change: a finding in the changed source, one in a project header it includes, and one in
# the generated header it includes; the unlisted source changes too.
printf '#include <string>\n#include <vector>\n#include "engine/shared.h"\n#include "ui/generated.h"\nint changed(const std::vector<std::string>& v) {\n    int n = 0;\n    for (const auto s : v) n += fine(int(s.size()));\n    return n + int(generated(1, 2));\n}\n' >engine/changed.cpp
printf 'inline int fine(int a) { return int(1.5 * (a / 2)); }\n' >engine/shared.h
printf 'double unlisted(int a, int b) { return 2.5 * (a / b); }\n' >engine/unlisted.cpp
git commit -qam change

if out=$(tools/tidy_check.sh 2>&1); then
    echo "tidy_check_test: a source with a finding passed" >&2
    echo "$out" >&2
    exit 1
fi
fail() {
    echo "tidy_check_test: $1" >&2
    echo "$out" >&2
    exit 1
}
grep -q '^engine/changed.cpp:7:[0-9]*: .*\[performance-for-range-copy' <<<"$out" || fail "the finding in engine/changed.cpp:7 is not named"
grep -q '^engine/shared.h:1:[0-9]*: .*\[bugprone-integer-division' <<<"$out" || fail "the finding in the included engine/shared.h is not named"
! grep -q 'old.cpp' <<<"$out" || fail "the untouched engine/old.cpp was judged"
! grep -q 'unlisted.cpp' <<<"$out" || fail "engine/unlisted.cpp, which the compilation database does not list, was judged"
! grep -q 'generated.h:' <<<"$out" || fail "the generated header under build/ was judged"

printf '#include <string>\n#include <vector>\n#include "engine/shared.h"\n#include "ui/generated.h"\nint changed(const std::vector<std::string>& v) {\n    int n = 0;\n    for (const auto& s : v) n += fine(int(s.size()));\n    return n + int(generated(1, 2));\n}\n' >engine/changed.cpp
printf 'inline int fine(int a) { return a / 2; }\n' >engine/shared.h
out=$(tools/tidy_check.sh 2>&1) || fail "the fixed source still fails"
grep -q '1 changed C++ source(s) since .* pass clang-tidy' <<<"$out" || fail "the summary does not say one source passed"
echo "tidy_check_test: passed"
