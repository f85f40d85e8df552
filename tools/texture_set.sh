#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the picture set of Kiln's texture transfer-learning example (resources/examples/
# texture_transfer.kiln): five classes (brick, grass, gravel, scratch, spot) drawn from the CC0
# textures of scikit-image, deterministic from a seed, as an image folder with train/, val/ and
# test/ split folders, in ${KILN_DATA:-$HOME/.cache/kiln/data}/textures/texture-defects.
#   1. tools/fetch_data.sh caches and checks the textures (from Debian's python3-skimage);
#   2. tools/texture_set.py draws the pictures (Debian's python3-numpy and python3-pil).
# With --project FILE it also (re)writes the example project: EfficientNet-Lite0 imported by
# kiln-import from the ONNX file of tools/fetch_pretrained.sh with a new 5-class head after
# conv2d_32, then tools/pretrained/texture_transfer_project.py sets its input size, data and stages.
#
# Usage: tools/texture_set.sh [--out DIR] [--per-class N] [--size S] [--seed S]
#                             [--project FILE --kiln-import PROGRAM]
# Idempotent: a picture folder made with the same settings is left alone.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
# From the source tree the helpers are tools/fetch_data.sh and tools/pretrained/...; installed
# (share/kiln/texture-set.sh, on the PATH as kiln-texture-set) the fetcher is fetch-data.sh.
fetch_data="$here/fetch_data.sh"
[[ -x "$fetch_data" ]] || fetch_data="$here/fetch-data.sh"
[[ -x "$fetch_data" ]] || { echo "texture_set: error: no fetch_data.sh or fetch-data.sh beside $0" >&2; exit 1; }
data_dir="${KILN_DATA:-$HOME/.cache/kiln/data}"
python="${KILN_DATA_PYTHON:-/usr/bin/python3}"
out="$data_dir/textures/texture-defects"
per_class=200
size=96
seed=7
project=""
kiln_import=""

die() {
    echo "texture_set: error: $*" >&2
    exit 1
}

while (($# > 0)); do
    case "$1" in
    --out | --per-class | --size | --seed | --project | --kiln-import)
        [[ $# -ge 2 ]] || die "$1 needs a value"
        case "$1" in
        --out) out=$2 ;;
        --per-class) per_class=$2 ;;
        --size) size=$2 ;;
        --seed) seed=$2 ;;
        --project) project=$2 ;;
        --kiln-import) kiln_import=$2 ;;
        esac
        shift 2
        ;;
    -h | --help)
        sed -n '3,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
done

"$python" -c 'import numpy, PIL' 2>/dev/null ||
    die "$python cannot import numpy and PIL; install the Debian packages python3-numpy and python3-pil" \
        "(tools/install_deps.sh) or point KILN_DATA_PYTHON at a Python that has them"

# 1. The textures, checked against tools/data.sha256.
"$fetch_data" >/dev/null

# 2. The pictures.
"$python" "$here/texture_set.py" "$data_dir/textures" "$out" --per-class "$per_class" --size "$size" --seed "$seed"

# 3. The example project, when asked for.
if [[ -n "$project" ]]; then
    [[ -n "$kiln_import" ]] || die "--project needs --kiln-import PROGRAM (e.g. build/app/kiln-import)"
    onnx="$data_dir/pretrained/efficientnet-lite0/efficientnet-lite0.onnx"
    [[ -f "$onnx" ]] || die "$onnx is missing; run tools/fetch_pretrained.sh first"
    [[ -f "$here/pretrained/texture_transfer_project.py" ]] ||
        die "--project needs Kiln's source tree (tools/pretrained/texture_transfer_project.py)"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$kiln_import" "$onnx" -o "$tmp/imported.kiln" --replace-head-after conv2d_32 --classes 5 --dropout 0.2 \
        >"$tmp/import.log" 2>&1 || {
        cat "$tmp/import.log" >&2
        die "kiln-import failed"
    }
    "$python" "$here/pretrained/texture_transfer_project.py" "$tmp/imported.kiln" "$project" --size "$size"
    echo "texture_set: wrote the project $project"
fi
