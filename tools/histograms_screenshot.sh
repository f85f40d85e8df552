#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshot of the training view's Histograms tab after a 24-epoch run on the iris table, in a
# real X window under Xvfb: docs/images/histograms.png. Usage: tools/histograms_screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
exe="$build/tests/tst_histogram_view"
[[ -x "$exe" ]] || { echo "build the target tst_histogram_view first ($exe missing)" >&2; exit 1; }
out="$PWD/docs/images/histograms.png"
mkdir -p "$(dirname "$out")"
KILN_SCREENSHOT="$out" QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x1000x24" \
    "$exe" fillsLiveThenFromTheRunFolder
echo "wrote $out"
