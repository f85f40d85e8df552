#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Takes docs/images/make_layer.png: the palette's "Layers" section and the Make Layer dialog on
# the Fashion-MNIST CNN example, in a real X window (Xvfb), captured with ImageMagick's `import`.
# Usage: tools/layers_screenshot.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
exe="$build/tests/tst_make_layer_dialog"
[[ -x "$exe" ]] || { echo "build the target tst_make_layer_dialog first ($exe missing)" >&2; exit 1; }
mkdir -p "$here/docs/images"
out="$here/docs/images/make_layer.png"
KILN_SCREENSHOT="$out" QT_QPA_PLATFORM=xcb \
  xvfb-run -a -s "-screen 0 1400x900x24" "$exe" makeLayerFromSelection
echo "wrote $out"
