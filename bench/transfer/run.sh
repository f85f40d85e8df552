#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Transfer learning vs training from scratch on the texture and defect pictures: trains
# resources/examples/texture_transfer.kiln twice with kiln-train, on this machine, and prints the
# test accuracy and wall time of each and their ratios.
#   pretrained: EfficientNet-Lite0's ImageNet weights (loaded by name, --weights-partial), the
#               example's two stages (new head alone, then the top blocks at a tenth of the rate);
#   scratch:    the same network and data, every node trainable from the project's initialisers,
#               the same number of epochs, optimizer and learning rate, no stages.
#
# Usage: bench/transfer/run.sh [--build DIR] [--keep DIR]
#   --build DIR  the build folder holding app/kiln-train (default: build)
#   --keep DIR   keep the two run folders (run.json, weights) in DIR instead of a temporary folder
# Needs tools/fetch_pretrained.sh's cache; makes the pictures with tools/texture_set.sh.
# Runs under nice -n 10; both runs use kiln-train's default threads (all cores).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build"
keep=""
while (($# > 0)); do
    case "$1" in
    --build)
        build=$2
        shift 2
        ;;
    --keep)
        keep=$2
        shift 2
        ;;
    -h | --help)
        sed -n '3,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "transfer/run.sh: unknown argument $1 (see --help)" >&2
        exit 2
        ;;
    esac
done

train="$build/app/kiln-train"
[[ -x "$train" ]] || {
    echo "transfer/run.sh: $train not found; build it: cmake --build build --target kiln-train" >&2
    exit 2
}
data_dir="${KILN_DATA:-$HOME/.cache/kiln/data}"
weights="$data_dir/pretrained/efficientnet-lite0/efficientnet-lite0.safetensors"
[[ -f "$weights" ]] || {
    echo "transfer/run.sh: $weights is missing; run tools/fetch_pretrained.sh --kiln-import $build/app/kiln-import" >&2
    exit 2
}
"$root/tools/texture_set.sh" >/dev/null

if [[ -n "$keep" ]]; then
    work=$keep
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
example="$root/resources/examples/texture_transfer.kiln"

# The scratch project: the example without its stages, pretrained record and frozen flags.
/usr/bin/python3 - "$example" "$work/scratch.kiln" <<'PYTHON'
import json, sys
p = json.load(open(sys.argv[1]))
training = p["training"]
training["epochs"] = sum(s["epochs"] for s in training.pop("stages"))
p.pop("pretrained", None)
for n in p["graph"]["nodes"]:
    n["trainable"] = True
p["name"] = "texture_scratch"
json.dump(p, open(sys.argv[2], "w"), indent=1)
PYTHON

run() {  # run NAME PROJECT [ARGS...]: one kiln-train run; prints its JSON line and wall seconds
    local name=$1 project=$2
    shift 2
    local start end
    start=$EPOCHREALTIME
    nice -n 10 "$train" "$project" --json --quiet --run-store none --run-dir "$work/$name" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
        cat "$work/$name.err" >&2
        echo "transfer/run.sh: the $name run failed" >&2
        exit 1
    }
    end=$EPOCHREALTIME
    echo "$(tail -n 1 "$work/$name.out") $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
pretrained=$(run pretrained "$example" --weights "$weights" --weights-partial)
scratch=$(run scratch "$work/scratch.kiln")
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 - "$pretrained" "$scratch" "$work" <<'PYTHON'
import json, sys, os
rows = []
for name, line in (("pretrained, staged", sys.argv[1]), ("from scratch", sys.argv[2])):
    text, wall = line.rsplit(" ", 1)
    j = json.loads(text)
    rows.append((name, j["epochs"], j["test_accuracy"], j["val_accuracy"], j["train_accuracy"], float(wall)))
run = json.load(open(os.path.join(sys.argv[3], "pretrained", "run.json")))
stages = [(h["epoch"], h.get("stage_name")) for h in run["history"]]
print()
print(f"{'run':<20} {'epochs':>6} {'test acc':>9} {'val acc':>8} {'train acc':>10} {'wall s':>8}")
for r in rows:
    print(f"{r[0]:<20} {r[1]:>6} {r[2]:>9.4f} {r[3]:>8.4f} {r[4]:>10.4f} {r[5]:>8.1f}")
p, s = rows
print()
print(f"test accuracy: pretrained {p[2]:.4f} vs scratch {s[2]:.4f}: "
      f"{p[2] - s[2]:+.4f} ({p[2] / s[2]:.2f}x); chance is 0.2000")
print(f"wall time: pretrained {p[5]:.1f} s vs scratch {s[5]:.1f} s: the pretrained run takes {p[5] / s[5]:.2f}x the time")
print("stages of the pretrained run (epoch: stage): " + ", ".join(f"{e}: {n}" for e, n in stages))
PYTHON
