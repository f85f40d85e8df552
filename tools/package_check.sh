#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the Debian package end to end without installing it: `cpack -G DEB` in BUILD_DIR, unpack
# the .deb into a scratch root, check its files, metadata, desktop entry and MIME type, start every
# program from it, and train an installed example for one epoch from its read-only folder.
# Usage: tools/package_check.sh BUILD_DIR. Exit 0 when all holds, 1 on the first failure, 77 when
# this is not a Debian system (no dpkg-deb). CPACK names the cpack program (default: on the PATH).
set -euo pipefail

die() {
    echo "package_check: FAIL: $*" >&2
    exit 1
}

[[ $# -eq 1 ]] || {
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
}
[[ -f "$1/CPackConfig.cmake" ]] || die "$1 is not a configured build folder (no CPackConfig.cmake)"
build=$(cd "$1" && pwd)
cpack=${CPACK:-cpack}
if ! command -v dpkg-deb >/dev/null 2>&1; then
    echo "package_check: skipped: dpkg-deb not found (not a Debian system)"
    exit 77
fi
for tool in "$cpack" desktop-file-validate update-mime-database; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool not found (packages cmake, desktop-file-utils, shared-mime-info; tools/install_deps.sh)"
done
export KILN_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}"

start=$(date +%s)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kiln-package.XXXXXX")
# The examples are made read-only below: give the write bit back so that they can be removed.
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT

# 1. Build the package; its staging folder and the .deb go to the scratch folder, not the build.
if ! (cd "$build" && "$cpack" -G DEB -B "$scratch/out") >"$scratch/cpack.log" 2>&1; then
    tail -n 30 "$scratch/cpack.log" >&2
    die "cpack -G DEB failed in $build (are the programs built? cmake --build $build)"
fi
debs=("$scratch"/out/*.deb)
[[ ${#debs[@]} -eq 1 && -f "${debs[0]}" ]] || die "cpack made ${#debs[@]} packages, expected one .deb"
deb=${debs[0]}
packed=$(($(date +%s) - start))

# 2. Metadata: the name, and dependencies that dpkg-shlibdeps finds and those it cannot see.
[[ $(dpkg-deb -f "$deb" Package) == kiln ]] || die "the package is not named kiln: $(dpkg-deb -f "$deb" Package)"
version=$(dpkg-deb -f "$deb" Version)
depends=$(dpkg-deb -f "$deb" Depends)
# One package name a line: versions and spaces dropped, alternatives on lines of their own.
names=$(tr ',|' '\n' <<<"$depends" | sed -e 's/([^)]*)//' -e 's/ //g')
for dep in qt6-qpa-plugins libqt6sql6-sqlite libqt6core6 libqt6widgets6 libsqlite3-0; do
    grep -qx "$dep" <<<"$names" || die "Depends lacks $dep: $depends"
done

# 3. Contents: only programs and shared data, at their places.
while read -r path; do
    case "$path" in
    ./ | ./usr/ | ./usr/bin/* | ./usr/share/* | ./usr/include/ | ./usr/include/kiln/ | ./usr/include/kiln/plugin.h) ;;
    *) die "unexpected path in the package: $path" ;;
    esac
done < <(dpkg-deb -c "$deb" | awk '{print $6}')
root="$scratch/root"
dpkg-deb -x "$deb" "$root"
missing=()
for f in usr/bin/kiln usr/bin/kiln-train usr/bin/kiln-data usr/bin/kiln-export usr/bin/kiln-import usr/bin/kiln-serve \
    usr/bin/kiln-eval usr/bin/kiln-predict usr/bin/kiln-fetch-data usr/share/kiln/fetch-data.sh \
    usr/bin/kiln-texture-set usr/share/kiln/texture-set.sh; do
    [[ -x "$root/$f" ]] || missing+=("$f")
done
for f in usr/share/kiln/data.sha256 usr/share/doc/kiln/copyright usr/include/kiln/plugin.h \
    usr/share/kiln/examples/fashion_mlp.kiln usr/share/kiln/examples/fashion_cnn.kiln \
    usr/share/kiln/examples/residual.kiln usr/share/kiln/examples/two_tower.kiln \
    usr/share/kiln/examples/texture_transfer.kiln usr/share/kiln/texture_set.py \
    usr/share/applications/kiln.desktop usr/share/mime/packages/kiln.xml \
    usr/share/icons/hicolor/scalable/apps/kiln.svg \
    usr/share/icons/hicolor/scalable/mimetypes/application-x-kiln-project.svg; do
    [[ -f "$root/$f" ]] || missing+=("$f")
done
((${#missing[@]} == 0)) || die "missing from the package: ${missing[*]}"
[[ $(readlink -f "$root/usr/bin/kiln-fetch-data") == "$root/usr/share/kiln/fetch-data.sh" ]] ||
    die "usr/bin/kiln-fetch-data does not lead to usr/share/kiln/fetch-data.sh"

# 4. The desktop entry opens *.kiln files, and the MIME package maps *.kiln to that type.
desktop="$root/usr/share/applications/kiln.desktop"
desktop-file-validate "$desktop" >"$scratch/desktop.log" 2>&1 ||
    die "desktop-file-validate rejects kiln.desktop: $(cat "$scratch/desktop.log")"
grep -qx 'MimeType=application/x-kiln-project;' "$desktop" || die "kiln.desktop has no MimeType=application/x-kiln-project;"
grep -qx 'Exec=kiln %f' "$desktop" || die "kiln.desktop does not start kiln with the file (Exec=kiln %f)"
mkdir -p "$scratch/mime/packages"
cp "$root/usr/share/mime/packages/kiln.xml" "$scratch/mime/packages/"
update-mime-database "$scratch/mime" >"$scratch/mime.log" 2>&1 ||
    die "update-mime-database rejects kiln.xml: $(cat "$scratch/mime.log")"
grep -q ':application/x-kiln-project:\*\.kiln$' "$scratch/mime/globs2" ||
    die "kiln.xml does not map *.kiln to application/x-kiln-project"

# 5. Every program starts from the unpacked files and reports the package's version.
for program in kiln kiln-train kiln-data kiln-export kiln-import kiln-eval kiln-predict; do
    out=$(QT_QPA_PLATFORM=offscreen "$root/usr/bin/$program" --version 2>&1) ||
        die "$program --version failed: $out"
    [[ "$out" == *"$version"* ]] || die "$program --version does not print $version: $out"
done
out=$("$root/usr/bin/kiln-serve" --help 2>&1) || die "kiln-serve --help failed: $out"

# 6. The installed fetcher checks the data cache against its installed checksum list.
out=$("$root/usr/bin/kiln-fetch-data" 2>&1) || die "kiln-fetch-data failed: $out"
[[ "$out" == *"files verified in $KILN_DATA"* ]] || die "kiln-fetch-data did not verify $KILN_DATA: $out"

# 6b. The installed kiln-texture-set draws the texture example's pictures (a small set, into the
# scratch folder) from the cached textures, with the installed fetcher and texture_set.py.
[[ $(readlink -f "$root/usr/bin/kiln-texture-set") == "$root/usr/share/kiln/texture-set.sh" ]] ||
    die "usr/bin/kiln-texture-set does not lead to usr/share/kiln/texture-set.sh"
out=$("$root/usr/bin/kiln-texture-set" --out "$scratch/textures" --per-class 10 --size 32 2>&1) ||
    die "kiln-texture-set failed: $out"
for split in train val test; do
    for cls in brick grass gravel scratch spot; do
        [[ -n $(ls -A "$scratch/textures/$split/$cls" 2>/dev/null) ]] || die "kiln-texture-set made no $split/$cls pictures: $out"
    done
done

# 7. One epoch of the installed MLP example, run from its folder, read-only as after installing:
# nothing may be written there; the run and its record go to the user's data folder.
examples="$root/usr/share/kiln/examples"
chmod -R a-w "$examples"
before=$(ls -A "$examples")
export XDG_DATA_HOME="$scratch/data"
trained=$(date +%s)
(cd "$examples" && "$root/usr/bin/kiln-train" fashion_mlp.kiln --epochs 1 --quiet --json) \
    >"$scratch/train.out" 2>"$scratch/train.err" ||
    die "kiln-train on the installed fashion_mlp.kiln failed: $(tail -n 5 "$scratch/train.err")"
trained=$(($(date +%s) - trained))
[[ $(ls -A "$examples") == "$before" ]] || die "training wrote next to the read-only example: $(ls -A "$examples")"
result=$(tail -n 1 "$scratch/train.out")
run_dir=$(grep -o '"run_dir":"[^"]*"' <<<"$result" | cut -d'"' -f4)
[[ "$run_dir" == "$XDG_DATA_HOME/kiln/projects/examples-"*/runs/fashion_mlp-* ]] ||
    die "the run folder is not in the user's data folder: '$run_dir'"
[[ -f "$run_dir/weights.safetensors" && -f "$run_dir/run.json" ]] || die "no weights or run.json in $run_dir"
store="$(dirname "$(dirname "$run_dir")")/.kiln/runs.sqlite"
[[ -f "$store" ]] || die "no run store at $store"
accuracy=$(grep -o '"test_accuracy":[0-9.e+-]*' <<<"$result" | cut -d: -f2)
# One epoch of this MLP reaches about 0.84; far less means it did not learn.
awk -v a="${accuracy:-0}" 'BEGIN { exit !(a > 0.75) }' || die "test accuracy after one epoch is ${accuracy:-missing}"
# The installed kiln-eval measures the same test accuracy from the run folder.
(cd "$examples" && "$root/usr/bin/kiln-eval" fashion_mlp.kiln --weights "$run_dir" --json) \
    >"$scratch/eval.out" 2>"$scratch/eval.err" ||
    die "kiln-eval on the installed fashion_mlp.kiln failed: $(tail -n 5 "$scratch/eval.err")"
evaluated=$(grep -o '"accuracy":[0-9.e+-]*' "$scratch/eval.out" | head -n 1 | cut -d: -f2)
awk -v a="${accuracy:-0}" -v b="${evaluated:-0}" 'BEGIN { d = a - b; exit !(d < 1e-9 && d > -1e-9) }' ||
    die "kiln-eval measured accuracy ${evaluated:-missing}, training reported $accuracy"

size=$(du -k "$deb" | cut -f1)
echo "package_check: $(basename "$deb") ($((size / 1024)) MiB, packed in ${packed} s): files, Depends, desktop" \
    "entry and MIME type correct; programs start; kiln-texture-set draws the texture set; fashion_mlp trained 1 epoch in ${trained} s from the" \
    "read-only examples (test accuracy $accuracy, kiln-eval agrees), run in the user's data folder"
