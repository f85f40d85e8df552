#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of an imported placeholder card for docs/transfer.md, in a real X window under Xvfb:
# docs/images/import_placeholder_en.png and import_placeholder_zh_CN.png, the canvas around an
# ONNX Erf that Kiln keeps as a placeholder between a convolution and an Add.
# Usage: tools/import_screenshot.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
out="$PWD/docs/images"
mkdir -p "$out"
command -v xvfb-run >/dev/null || { echo "import_screenshot: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
env -u LC_ALL KILN_SCREENSHOT_DIR="$out" QT_QPA_PLATFORM=xcb \
    LANG=en_US.UTF-8 xvfb-run -a -s "-screen 0 1400x1000x24" \
    "$build/tests/tst_import_model" screenshot
echo "wrote $out/import_placeholder_en.png and $out/import_placeholder_zh_CN.png"
