#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the commit that the changed-code checks (tools/format_check.sh, tools/tidy_check.sh)
# compare with, or nothing when there is none (not a git checkout, or the first commit):
#
#   tools/diff_base.sh [BASE]
#
# BASE if given, else KILN_FORMAT_BASE, else the merge base with origin/main or main when HEAD is
# on another branch, else the previous commit (HEAD~1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

git rev-parse --git-dir >/dev/null 2>&1 || exit 0
base="${1:-${KILN_FORMAT_BASE:-}}"
if [[ -z "$base" ]]; then
    for main in origin/main main; do
        if git rev-parse -q --verify "$main^{commit}" >/dev/null; then
            mb=$(git merge-base HEAD "$main" 2>/dev/null || true)
            if [[ -n "$mb" && "$mb" != "$(git rev-parse HEAD)" ]]; then
                base="$mb"
            fi
            break
        fi
    done
fi
if [[ -z "$base" ]] && git rev-parse -q --verify HEAD~1 >/dev/null; then
    base=HEAD~1
fi
[[ -z "$base" ]] || echo "$base"
