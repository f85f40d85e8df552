#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Caches the real data sets Kiln trains and tests on, outside the repository, in
# ${KILN_DATA:-$HOME/.cache/kiln/data}, and checks each file against tools/data.sha256.
# Idempotent: files already cached and verified are left alone. Quiet on success but for one line.
set -euo pipefail

# The package installs this script as /usr/share/kiln/fetch-data.sh, next to its checksum list,
# with /usr/bin/kiln-fetch-data linking to it: the list is found through the link.
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
sums_file="$here/data.sha256"
data_dir="${KILN_DATA:-$HOME/.cache/kiln/data}"

fashion_src=/usr/share/datasets/fashion-mnist
sklearn_pkg=python3-sklearn
sklearn_src=./usr/lib/python3/dist-packages/sklearn/datasets/data
sklearn_files=(breast_cancer.csv iris.csv wine_data.csv digits.csv.gz)

die() {
    echo "fetch_data: error: $*" >&2
    exit 1
}

[[ -r "$sums_file" ]] || die "checksum list $sums_file is missing"

declare -A expected=()
while read -r sum rel; do
    [[ -z "$sum" || "$sum" == \#* ]] && continue
    expected["$rel"]=$sum
done <"$sums_file"

# verify REL [FILE]: true when FILE (default: the cached copy of REL) has the recorded checksum.
verify() {
    local rel=$1 file=${2:-$data_dir/$1}
    [[ -n "${expected[$rel]:-}" ]] || die "no checksum recorded for $rel in $sums_file"
    [[ -f "$file" ]] || return 1
    local actual
    actual=$(sha256sum "$file" | cut -d' ' -f1)
    [[ "$actual" == "${expected[$rel]}" ]]
}

# install REL SOURCE: checks SOURCE, then moves it into the cache as REL (never leaves a bad file).
install_checked() {
    local rel=$1 src=$2
    if ! verify "$rel" "$src"; then
        local actual
        actual=$(sha256sum "$src" | cut -d' ' -f1)
        rm -f "$src"
        die "checksum mismatch for $rel: expected ${expected[$rel]}, got $actual" \
            "(the packaged file differs from the one Kiln was checked against)"
    fi
    mkdir -p "$(dirname "$data_dir/$rel")"
    mv -f "$src" "$data_dir/$rel"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetched=0

# 1. Fashion-MNIST from Debian's dataset-fashion-mnist.
for name in t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz train-images-idx3-ubyte.gz \
    train-labels-idx1-ubyte.gz; do
    rel=fashion-mnist/$name
    verify "$rel" && continue
    if [[ -e "$data_dir/$rel" ]]; then
        echo "fetch_data: cached $rel does not match its checksum; copying it again" >&2
    fi
    [[ -f "$fashion_src/$name" ]] ||
        die "$fashion_src/$name not found; install the Debian package dataset-fashion-mnist" \
            "(apt-get install dataset-fashion-mnist, or tools/install_deps.sh in a source tree)"
    cp "$fashion_src/$name" "$tmp/$name"
    install_checked "$rel" "$tmp/$name"
    fetched=$((fetched + 1))
done

# Extracts files from a Debian package without installing it: extract_from_deb PACKAGE SRC_DIR
# CACHE_SUBDIR NAME... downloads PACKAGE with apt-get, takes SRC_DIR/NAME out of it and installs each
# as CACHE_SUBDIR/NAME after its checksum matches.
extract_from_deb() {
    local pkg=$1 src=$2 sub=$3
    shift 3
    local apt_opts=(-qq)
    # As root, apt's download sandbox user cannot write into our private temporary folder.
    [[ $(id -u) -eq 0 ]] && apt_opts+=(-o APT::Sandbox::User=root)
    if ! (cd "$tmp" && apt-get "${apt_opts[@]}" download "$pkg" >"$tmp/apt.log" 2>&1); then
        # A fresh machine may have no package lists yet.
        if [[ $(id -u) -eq 0 ]]; then
            apt-get -qq update >>"$tmp/apt.log" 2>&1 || true
        fi
        (cd "$tmp" && apt-get "${apt_opts[@]}" download "$pkg" >>"$tmp/apt.log" 2>&1) || {
            cat "$tmp/apt.log" >&2
            die "could not download the Debian package $pkg"
        }
    fi
    local deb
    deb=$(find "$tmp" -maxdepth 1 -name "${pkg}_*.deb" -print -quit)
    [[ -n "$deb" ]] || die "apt-get download $pkg produced no .deb"
    local members=() name
    for name in "$@"; do
        members+=("$src/$name")
    done
    mkdir -p "$tmp/x"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" "${members[@]}" ||
        die "could not extract $* from $(basename "$deb")"
    for name in "$@"; do
        install_checked "$sub/$name" "$tmp/x/$src/$name"
        fetched=$((fetched + 1))
    done
    rm -f "$deb"
}

# The names among CACHE_SUBDIR/NAME... whose cached copy is missing or does not match its checksum.
missing_in() {
    local sub=$1 name
    shift
    for name in "$@"; do
        verify "$sub/$name" && continue
        if [[ -e "$data_dir/$sub/$name" ]]; then
            echo "fetch_data: cached $sub/$name does not match its checksum; extracting it again" >&2
        fi
        echo "$name"
    done
}

# 2. Small tables shipped inside Debian's python3-sklearn.
mapfile -t need_sklearn < <(missing_in sklearn "${sklearn_files[@]}")
if ((${#need_sklearn[@]} > 0)); then
    extract_from_deb "$sklearn_pkg" "$sklearn_src" sklearn "${need_sklearn[@]}"
fi

# 3. The CC0 textures (brick, grass, gravel) shipped inside Debian's python3-skimage, from which
#    tools/texture_set.sh draws the texture and defect pictures of the transfer-learning example.
mapfile -t need_textures < <(missing_in textures brick.png grass.png gravel.png)
if ((${#need_textures[@]} > 0)); then
    extract_from_deb python3-skimage ./usr/lib/python3/dist-packages/skimage/data textures "${need_textures[@]}"
fi

echo "fetch_data: ${#expected[@]} files verified in $data_dir ($fetched fetched)"
