#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pictures for docs/custom_layers.md, from real X windows under Xvfb:
# - docs/images/make_layer.png: the palette's "Layers" section and the Make Layer dialog on the
#   Fashion-MNIST CNN example, the whole screen captured with ImageMagick's `import`;
# - docs/images/make_layer_dialog_<en|zh_CN>.png: the Make Layer dialog alone, in English and
#   Simplified Chinese (tst_make_layer_dialog's screenshot slot);
# - docs/images/plugins_dialog_<en|zh_CN>.png: Help > Plugins… with the example GroupNorm plugin
#   after Check plugin, in English and Simplified Chinese (tst_plugins_dialog's screenshot slot).
# Usage: tools/layers_screenshot.sh [BUILD_DIR]   (default: build; build the targets
# tst_make_layer_dialog, tst_plugins_dialog and kiln_group_norm first)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
out="$here/docs/images"
for t in tst_make_layer_dialog tst_plugins_dialog; do
    [[ -x "$build/tests/$t" ]] || { echo "layers_screenshot: build the target $t first ($build/tests/$t missing)" >&2; exit 1; }
done
[[ -f "$build/plugins/group_norm.so" ]] || { echo "layers_screenshot: build the target kiln_group_norm first" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "layers_screenshot: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
mkdir -p "$out"
# Fresh settings in a home of fixed name (the Plugins dialog shows the plugin folder), with the
# example plugin in its plugin folder.
home=/tmp/kiln-docs-home
rm -rf "$home"
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/.config" "$home/.local/share/kiln/plugins"
cp "$build/plugins/group_norm.so" "$home/.local/share/kiln/plugins/"

KILN_SCREENSHOT="$out/make_layer.png" QT_QPA_PLATFORM=xcb \
  xvfb-run -a -s "-screen 0 1400x900x24" "$build/tests/tst_make_layer_dialog" makeLayerFromSelection
echo "wrote $out/make_layer.png"

# LC_CTYPE is a UTF-8 locale that always exists.
for t in tst_make_layer_dialog tst_plugins_dialog; do
    env -u LC_ALL -u QT_QPA_PLATFORM -u KILN_PLUGIN_PATH LANG=en_US.UTF-8 LC_CTYPE=C.UTF-8 QT_QPA_PLATFORM=xcb \
        XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" KILN_SCREENSHOT_DIR="$out" \
        xvfb-run -a -s "-screen 0 1400x900x24" "$build/tests/$t" screenshot
done
echo "wrote $out/make_layer_dialog_en.png, make_layer_dialog_zh_CN.png, plugins_dialog_en.png and plugins_dialog_zh_CN.png"
