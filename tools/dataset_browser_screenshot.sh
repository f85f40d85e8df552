#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Takes docs/images/dataset_browser.png: the dataset browser on 2,000 Fashion-MNIST pictures in a
# real X window (Xvfb), captured with ImageMagick's `import`; and docs/images/augmentation_form.png,
# its Augmentation tab with the transforms form.
# Usage: tools/dataset_browser_screenshot.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
exe="$build/tests/tst_dataset_browser_fashion"
[[ -x "$exe" ]] || { echo "build the target tst_dataset_browser_fashion first ($exe missing)" >&2; exit 1; }
mkdir -p "$here/docs/images"
out="$here/docs/images/dataset_browser.png"
KILN_SCREENSHOT="$out" KILN_SCREENSHOT_AUGMENTATION="$here/docs/images/augmentation_form.png" QT_QPA_PLATFORM=xcb \
  xvfb-run -a -s "-screen 0 1400x900x24" "$exe"
echo "wrote $out and $here/docs/images/augmentation_form.png"
