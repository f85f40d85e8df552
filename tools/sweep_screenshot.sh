#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshot of the sweep dialog after a 16-trial sweep of the two-tower example, in a real X
# window under Xvfb: docs/images/sweep_dialog.png. Usage: tools/sweep_screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
out="$PWD/docs/images/sweep_dialog.png"
mkdir -p "$(dirname "$out")"
KILN_SCREENSHOT="$out" QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x1000x24" \
    "$build/tests/tst_sweep_dialog" screenshot
echo "wrote $out"
