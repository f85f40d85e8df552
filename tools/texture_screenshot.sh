#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshot of the texture transfer-learning example for docs/transfer.md:
# docs/images/texture_transfer_train_en.png and texture_transfer_train_zh_CN.png, 1600x1000, from a real X server (Xvfb) with
# ImageMagick's `import`. The example is copied to a scratch folder and trained there once with
# kiln-train from EfficientNet-Lite0's weights (both stages), so that the Train workspace shows a
# real staged run with its stage marker.
# Needs the backbone (tools/fetch_pretrained.sh) and the pictures (tools/texture_set.sh).
# Usage: tools/texture_screenshot.sh [BUILD_DIR]   (default: build)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
kiln="$build/app/kiln/kiln"
train="$build/app/kiln-train"
out="$root/docs/images"
data_dir="${KILN_DATA:-$HOME/.cache/kiln/data}"
weights="$data_dir/pretrained/efficientnet-lite0/efficientnet-lite0.safetensors"
for program in "$kiln" "$train"; do
    [[ -x "$program" ]] || { echo "texture_screenshot: $program not found (build kiln and kiln-train first)" >&2; exit 1; }
done
[[ -f "$weights" ]] || { echo "texture_screenshot: $weights is missing (tools/fetch_pretrained.sh)" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "texture_screenshot: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
command -v import >/dev/null || { echo "texture_screenshot: ImageMagick's import is missing" >&2; exit 1; }
"$root/tools/texture_set.sh" >/dev/null
mkdir -p "$out"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
project="$scratch/project/texture_transfer.kiln"
mkdir -p "$scratch/project"
cp "$root/resources/examples/texture_transfer.kiln" "$project"
(cd "$scratch/project" && KILN_DATA="$data_dir" nice -n 10 "$train" texture_transfer.kiln --weights "$weights" --weights-partial --quiet)

workspace=train
for lang in en zh_CN; do
    png="$out/texture_transfer_${workspace}_${lang}.png"
    home="$scratch/home-$lang"
    mkdir -p "$home/config" "$home/data"
    cat >"$scratch/run.sh" <<INNER
#!/usr/bin/env bash
set -eu
"$kiln" --lang $lang --theme light --size 1600x1000 --workspace $workspace "$project" &
pid=\$!
sleep "\${KILN_SHOT_WAIT:-12}"
import -window root "$png"
kill \$pid 2>/dev/null || true
wait \$pid 2>/dev/null || true
INNER
    chmod +x "$scratch/run.sh"
    env -u QT_QPA_PLATFORM -u LC_ALL LANG=en_US.UTF-8 LANGUAGE=en_US LC_CTYPE=C.UTF-8 KILN_DATA="$data_dir" \
        XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" \
        xvfb-run -a -s "-screen 0 1600x1000x24" "$scratch/run.sh"
    echo "texture_screenshot: wrote $png"
done
