#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of File > New from Pretrained for docs/transfer.md, in a real X window under Xvfb:
# docs/images/new_from_pretrained_en.png and new_from_pretrained_zh_CN.png, the dialog over the
# data folder's cached EfficientNet-Lite0 (tools/fetch_pretrained.sh) with five classes and the
# texture pictures filled in. Usage: tools/pretrained_screenshot.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
out="$PWD/docs/images"
mkdir -p "$out"
command -v xvfb-run >/dev/null || { echo "pretrained_screenshot: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
env -u LC_ALL KILN_SCREENSHOT_DIR="$out" KILN_REAL_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}" QT_QPA_PLATFORM=xcb \
    LANG=en_US.UTF-8 xvfb-run -a -s "-screen 0 1680x1050x24" \
    "$build/tests/tst_new_from_pretrained" screenshot
echo "wrote $out/new_from_pretrained_en.png and $out/new_from_pretrained_zh_CN.png"
