#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshot of the studio with the editor's Preview showing conv1's feature maps on a
# Fashion-MNIST sample, in a real X window under Xvfb: docs/images/node_preview.png.
# Usage: tools/preview_screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
exe="$build/tests/tst_node_preview_panel"
[[ -x "$exe" ]] || { echo "build the target tst_node_preview_panel first ($exe missing)" >&2; exit 1; }
out="$PWD/docs/images/node_preview.png"
mkdir -p "$(dirname "$out")"
KILN_SCREENSHOT="$out" QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \
    "$exe" selectEditAndSwitchWeightsInTheStudio
echo "wrote $out"
