#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of the studio's welcome page and five workspaces for the documentation, in English and
# Simplified Chinese: docs/images/workspace_<welcome|design|data|train|evaluate|deploy>_<en|zh_CN>.png, 1600x1000,
# in the light theme, and the same twelve in the dark theme (workspace_<...>_dark_<en|zh_CN>.png), from a
# real X server (Xvfb) with ImageMagick's `import`. The Fashion-MNIST MLP example is copied to a
# scratch folder and trained for two epochs with kiln-train first, so that Train, Evaluate and
# Deploy show a real run. The Data workspace shows a real image folder: 600 Fashion-MNIST pictures
# written as PNG class folders by kiln-data, read by a copy of the project whose data section
# names that folder. Needs the example data (tools/fetch_data.sh) and kiln-data.
# Usage: tools/workspace_screenshots.sh [BUILD_DIR]   (default: build)
# KILN_SHOTS="design_dark_en train_dark_en" takes only the named pictures (names without .png).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
kiln="$build/app/kiln/kiln"
train="$build/app/kiln-train"
data="$build/app/kiln-data"
out="$root/docs/images"
for program in "$kiln" "$train" "$data"; do
    [[ -x "$program" ]] || { echo "workspace_screenshots: $program not found (build kiln, kiln-train and kiln-data first)" >&2; exit 1; }
done
command -v xvfb-run >/dev/null || { echo "workspace_screenshots: xvfb-run is missing (apt-get install xvfb xauth)" >&2; exit 1; }
command -v import >/dev/null || { echo "workspace_screenshots: ImageMagick's import is missing" >&2; exit 1; }
mkdir -p "$out"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
project="$scratch/project/fashion_mlp.kiln"
mkdir -p "$scratch/project"
cp "$root/resources/examples/fashion_mlp.kiln" "$project"
# kiln-train writes its run folders under the current folder: the scratch project's.
(cd "$scratch/project" && KILN_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}" "$train" fashion_mlp.kiln --epochs 2 --quiet)

# The Data workspace's picture folder: the first 600 training pictures, one folder per class
# (kiln-data numbers them 0-9; they are renamed to the class names, "/" left out).
pictures="$scratch/pictures"
"$data" convert "${KILN_DATA:-$HOME/.cache/kiln/data}/fashion-mnist" "$pictures" --limit 600 >/dev/null
names=("T-shirt top" "Trouser" "Pullover" "Dress" "Coat" "Sandal" "Shirt" "Sneaker" "Bag" "Ankle boot")
for i in "${!names[@]}"; do
    [[ -d "$pictures/$i" ]] && mv "$pictures/$i" "$pictures/${names[$i]}"
done
folder_project="$scratch/project/fashion_folder.kiln"
python3 - "$project" "$folder_project" "$pictures" <<'PY'
import json, sys
project = json.load(open(sys.argv[1]))
project["name"] = "fashion_folder"
project["data"] = {"format": "folder", "path": sys.argv[3],
                   "split": {"validation": 0.15, "test": 0.1}, "stratify": True,
                   "transforms": [{"type": "decode", "channels": 1},
                                  {"type": "rotate", "range": [-10, 10]},
                                  {"type": "flip", "horizontal": True, "probability": 0.5},
                                  {"type": "normalize", "preset": "unit"}],
                   "inputs": {"image": "image"}}
json.dump(project, open(sys.argv[2], "w"), indent=2)
PY

shoot() {  # shoot LANG_CODE LOCALE WORKSPACE OUTPUT [THEME] ("welcome": no project, the welcome page)
    local code="$1" locale="$2" workspace="$3" png="$4" theme="${5:-light}"
    if [[ -n "${KILN_SHOTS:-}" && " $KILN_SHOTS " != *" $(basename "$png" .png | sed 's/^workspace_//') "* ]]; then
        return 0
    fi
    local file="$project"
    [[ "$workspace" == data ]] && file="$folder_project"
    local args=(--workspace "$workspace" "$file")
    [[ "$workspace" == welcome ]] && args=()
    local home="$scratch/home-$code-$theme"
    mkdir -p "$home/config" "$home/data"
    cat > "$scratch/run.sh" <<INNER
#!/usr/bin/env bash
set -eu
"$kiln" --lang "$code" --theme "$theme" --size 1600x1000 ${args[*]@Q} &
pid=\$!
sleep "\${KILN_SHOT_WAIT:-8}"
import -window root "$png"
kill \$pid 2>/dev/null || true
wait \$pid 2>/dev/null || true
INNER
    chmod +x "$scratch/run.sh"
    # Fresh settings for each language (no saved layout); LC_CTYPE is a UTF-8 locale that always
    # exists, LANG names the language.
    env -u QT_QPA_PLATFORM -u LC_ALL LANG="$locale" LANGUAGE="${locale%%.*}" LC_CTYPE=C.UTF-8 \
        KILN_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}" \
        XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" \
        xvfb-run -a -s "-screen 0 1600x1000x24" "$scratch/run.sh"
    echo "workspace_screenshots: wrote $png"
}

for workspace in welcome design data train evaluate deploy; do
    shoot en en_US.UTF-8 "$workspace" "$out/workspace_${workspace}_en.png"
    shoot zh_CN zh_CN.UTF-8 "$workspace" "$out/workspace_${workspace}_zh_CN.png"
    shoot en en_US.UTF-8 "$workspace" "$out/workspace_${workspace}_dark_en.png" dark
    shoot zh_CN zh_CN.UTF-8 "$workspace" "$out/workspace_${workspace}_dark_zh_CN.png" dark
done
