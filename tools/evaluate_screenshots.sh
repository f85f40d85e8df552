#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of the Evaluate workspace on picture data for docs/evaluate.md, in English and
# Simplified Chinese: docs/images/evaluate_samples_cached_<en|zh_CN>.png, 1600x1000, from a real X
# server (Xvfb) with ImageMagick's `import`. 600 Fashion-MNIST training pictures are written as PNG
# class folders by kiln-data, a copy of the Fashion-MNIST MLP example reading that folder is
# trained for two epochs with kiln-train, and the studio opens its Evaluate workspace twice: the
# first time evaluates the run and stores the results beside its weights, the second (the
# picture) shows them from there, on the Samples tab with its thumbnails. The Export overlays
# dialog's pictures (docs/images/overlay_export_dialog_<en|zh_CN>.png) are taken last, by
# tools/overlay_export_screenshot.sh.
# Usage: tools/evaluate_screenshots.sh [BUILD_DIR]   (default: build). Needs the example data
# (tools/fetch_data.sh), xvfb-run and ImageMagick, and the tst_overlay_export_dialog target.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
kiln="$build/app/kiln/kiln"
train="$build/app/kiln-train"
data="$build/app/kiln-data"
out="$root/docs/images"
for program in "$kiln" "$train" "$data"; do
    [[ -x "$program" ]] || { echo "evaluate_screenshots: $program not found (build kiln, kiln-train and kiln-data first)" >&2; exit 1; }
done
command -v xvfb-run >/dev/null || { echo "evaluate_screenshots: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
command -v import >/dev/null || { echo "evaluate_screenshots: ImageMagick's import is missing" >&2; exit 1; }
mkdir -p "$out"
export KILN_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
pictures="$scratch/pictures"
"$data" convert "$KILN_DATA/fashion-mnist" "$pictures" --limit 600 >/dev/null
names=("T-shirt top" "Trouser" "Pullover" "Dress" "Coat" "Sandal" "Shirt" "Sneaker" "Bag" "Ankle boot")
for i in "${!names[@]}"; do
    [[ -d "$pictures/$i" ]] && mv "$pictures/$i" "$pictures/${names[$i]}"
done
mkdir -p "$scratch/project"
project="$scratch/project/fashion_folder.kiln"
python3 - "$root/resources/examples/fashion_mlp.kiln" "$project" "$pictures" <<'PY'
import json, sys
project = json.load(open(sys.argv[1]))
project["name"] = "fashion_folder"
project["data"] = {"format": "folder", "path": sys.argv[3], "split": {"validation": 0.15, "test": 0.25},
                   "stratify": True,
                   "transforms": [{"type": "decode", "channels": 1}, {"type": "normalize", "preset": "unit"}],
                   "inputs": {"image": "image"}}
json.dump(project, open(sys.argv[2], "w"), indent=2)
PY
(cd "$scratch/project" && "$train" fashion_folder.kiln --epochs 2 --quiet)

shoot() {  # shoot LANG_CODE LOCALE OUTPUT
    local code="$1" locale="$2" png="$3"
    local home="$scratch/home-$code"
    # The Evaluate view reopens at the tab last used: the samples table.
    mkdir -p "$home/config/Kiln" "$home/data"
    printf '[evaluate]\ntab=samplesView\n' > "$home/config/Kiln/Kiln.conf"
    cat > "$scratch/run.sh" <<INNER
#!/usr/bin/env bash
set -eu
for pass in store show; do
    "$kiln" --lang "$code" --size 1600x1000 --workspace evaluate "$project" &
    pid=\$!
    sleep "\${KILN_SHOT_WAIT:-12}"
    [[ \$pass == show ]] && import -window root "$png"
    kill \$pid 2>/dev/null || true
    wait \$pid 2>/dev/null || true
done
INNER
    chmod +x "$scratch/run.sh"
    env -u QT_QPA_PLATFORM -u LC_ALL LANG="$locale" LANGUAGE="${locale%%.*}" LC_CTYPE=C.UTF-8 \
        XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" \
        xvfb-run -a -s "-screen 0 1600x1000x24" "$scratch/run.sh"
    echo "evaluate_screenshots: wrote $png"
}

shoot en en_US.UTF-8 "$out/evaluate_samples_cached_en.png"
shoot zh_CN zh_CN.UTF-8 "$out/evaluate_samples_cached_zh_CN.png"
"$root/tools/overlay_export_screenshot.sh" "$build"
