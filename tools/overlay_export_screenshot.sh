#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of the Export overlays dialog for docs/evaluate.md, in English and Simplified
# Chinese: docs/images/overlay_export_dialog_<en|zh_CN>.png, the dialog for twelve samples of
# fashion_cnn.kiln (Grad-CAM at conv2, the predicted class, opacity 0.5) in a real X window under
# Xvfb, grabbed by the tst_overlay_export_dialog test's screenshot slot. Needs no data set.
# Usage: tools/overlay_export_screenshot.sh [BUILD_DIR]   (default: build; build the
# tst_overlay_export_dialog target first). tools/evaluate_screenshots.sh runs it too.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
test="$build/tests/tst_overlay_export_dialog"
out="$root/docs/images"
[[ -x "$test" ]] || { echo "overlay_export_screenshot: $test not found (build the tst_overlay_export_dialog target first)" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "overlay_export_screenshot: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
mkdir -p "$out"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/config" "$scratch/data"
# Fresh settings; LC_CTYPE is a UTF-8 locale that always exists.
env -u LC_ALL -u QT_QPA_PLATFORM LANG=en_US.UTF-8 LC_CTYPE=C.UTF-8 QT_QPA_PLATFORM=xcb \
    XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data" KILN_SCREENSHOT_DIR="$out" \
    xvfb-run -a -s "-screen 0 1280x800x24" "$test" screenshot
echo "overlay_export_screenshot: wrote $out/overlay_export_dialog_en.png and $out/overlay_export_dialog_zh_CN.png"
