#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of the training form's Loss box with a plugin loss term (the example Huber loss of
# examples/plugins/huber_fbeta, named and weighted next to a built-in term), in English and
# Simplified Chinese, from a real X window under Xvfb: docs/images/loss_box_plugin_<en|zh_CN>.png.
# Usage: tools/loss_box_screenshot.sh [BUILD_DIR]   (needs tst_loss_editor and the example plugins built)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
command -v xvfb-run >/dev/null || { echo "loss_box_screenshot: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
for lang in en zh_CN; do
    out="$PWD/docs/images/loss_box_plugin_$lang.png"
    env -u QT_QPA_PLATFORM KILN_SCREENSHOT="$out" KILN_SCREENSHOT_LANG="$lang" LC_ALL=C.UTF-8 \
        xvfb-run -a -s "-screen 0 1400x1000x24" "$build/tests/tst_loss_editor" screenshot
    echo "wrote $out"
done
