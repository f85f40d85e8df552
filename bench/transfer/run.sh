#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Transfer learning vs training from scratch on the texture and defect pictures: trains
# resources/examples/texture_transfer.kiln with kiln-train, on this machine, and prints the test
# accuracy and wall time of each run and their ratios.
#   pretrained: EfficientNet-Lite0's ImageNet weights (loaded by name, --weights-partial), the
#               example's two stages (new head alone, then the top blocks at a tenth of the rate);
#   scratch:    the same network and data, every node trainable from the project's initialisers,
#               the same number of epochs, optimizer and learning rate, no stages;
#   scratch_bn: as scratch, with the BatchNormalization layers the ONNX export folded away put
#               back: each convolution without bias or activation, then BatchNormalization, then
#               its ReLU6, as EfficientNet-Lite is built for training. The moving statistics
#               use momentum 0.9 (--bn-momentum): these runs have only 176 steps, after which
#               Keras's default 0.99 still weighs the initial mean 0 / variance 1 by 0.99^176 = 17 %.
#
# Usage: bench/transfer/run.sh [--build DIR] [--keep DIR] [--only RUN[,RUN...]] [--bn-momentum M]
#   --build DIR  the build folder holding app/kiln-train (default: build)
#   --keep DIR   keep the run folders (run.json, weights) in DIR instead of a temporary folder
#   --only RUNS  just these runs of pretrained,scratch,scratch_bn (default: all three)
#   --bn-momentum M  the momentum of scratch_bn's BatchNormalization layers (default 0.9)
# Needs tools/fetch_pretrained.sh's cache; makes the pictures with tools/texture_set.sh.
# Runs under nice -n 10; both runs use kiln-train's default threads (all cores).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build"
keep=""
only="pretrained,scratch,scratch_bn"
bn_momentum=0.9
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
    --only)
        only=$2
        shift 2
        ;;
    --bn-momentum)
        bn_momentum=$2
        shift 2
        ;;
    -h | --help)
        sed -n '3,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
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

# The scratch project with BatchNormalization back after every convolution: the convolution loses
# its bias (the normalisation's beta takes its place) and its activation, which follows the
# normalisation as its own ReLU6 node; readers of the convolution read the last new node.
/usr/bin/python3 - "$work/scratch.kiln" "$work/scratch_bn.kiln" "$bn_momentum" <<'PYTHON'
import json, sys
p = json.load(open(sys.argv[1]))
momentum = float(sys.argv[3])
nodes, renamed, added = [], {}, 0
for n in p["graph"]["nodes"]:
    n["inputs"] = [renamed.get(i, i) for i in n.get("inputs", [])]
    nodes.append(n)
    if n["op"] not in ("Conv2D", "DepthwiseConv2D"):
        continue
    attrs = n.setdefault("attrs", {})
    act = attrs.pop("activation", None)
    attrs["use_bias"] = False
    last = {"name": n["name"] + "_bn", "op": "BatchNormalization", "inputs": [n["name"]], "trainable": True,
            "attrs": {"momentum": momentum}}
    nodes.append(last)
    added += 1
    if act not in (None, "linear"):
        assert act == "relu6", act
        last = {"name": n["name"] + "_relu6", "op": "ReLU6", "inputs": [last["name"]], "trainable": True}
        nodes.append(last)
    renamed[n["name"]] = last["name"]
p["graph"]["nodes"] = nodes
p["graph"]["outputs"] = [renamed.get(o, o) for o in p["graph"]["outputs"]]
p.get("layout", {}).pop("nodes", None)  # positions of the old graph; the editor lays it out again
p["name"] = "texture_scratch_bn"
json.dump(p, open(sys.argv[2], "w"), indent=1)
print(f"scratch_bn: {added} BatchNormalization layers put back, momentum {momentum}", file=sys.stderr)
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
results=()
for name in ${only//,/ }; do
    case "$name" in
    pretrained) line=$(run pretrained "$example" --weights "$weights" --weights-partial) ;;
    scratch) line=$(run scratch "$work/scratch.kiln") ;;
    scratch_bn) line=$(run scratch_bn "$work/scratch_bn.kiln") ;;
    *)
        echo "transfer/run.sh: unknown run $name (pretrained, scratch, scratch_bn)" >&2
        exit 2
        ;;
    esac
    results+=("$name" "$line")
    echo "load after $name: $(cut -d' ' -f1-3 /proc/loadavg)"
done

/usr/bin/python3 - "$work" "${results[@]}" <<'PYTHON'
import json, sys, os
labels = {"pretrained": "pretrained, staged", "scratch": "from scratch", "scratch_bn": "scratch + BN"}
rows = {}
args = sys.argv[2:]
for name, line in zip(args[0::2], args[1::2]):
    text, wall = line.rsplit(" ", 1)
    j = json.loads(text)
    rows[name] = (labels[name], j["epochs"], j["test_accuracy"], j["val_accuracy"], j["train_accuracy"], float(wall))
print()
print(f"{'run':<20} {'epochs':>6} {'test acc':>9} {'val acc':>8} {'train acc':>10} {'wall s':>8}")
for r in rows.values():
    print(f"{r[0]:<20} {r[1]:>6} {r[2]:>9.4f} {r[3]:>8.4f} {r[4]:>10.4f} {r[5]:>8.1f}")
print()
if "pretrained" in rows:
    p = rows["pretrained"]
    for other in ("scratch", "scratch_bn"):
        if other in rows:
            s = rows[other]
            print(f"test accuracy: pretrained {p[2]:.4f} vs {s[0]} {s[2]:.4f}: {p[2] - s[2]:+.4f}; chance is 0.2000")
            print(f"wall time: pretrained {p[5]:.1f} s vs {s[0]} {s[5]:.1f} s: the pretrained run takes {p[5] / s[5]:.2f}x the time")
    run = json.load(open(os.path.join(sys.argv[1], "pretrained", "run.json")))
    stages = [(h["epoch"], h.get("stage_name")) for h in run["history"]]
    print("stages of the pretrained run (epoch: stage): " + ", ".join(f"{e}: {n}" for e, n in stages))
for name in rows:
    run = json.load(open(os.path.join(sys.argv[1], name, "run.json")))
    losses = [round(h["train"]["loss"], 4) for h in run["history"]]
    val = [round(h.get("validation", {}).get("accuracy", float("nan")), 4) for h in run["history"]]
    print(f"{labels[name]}: loss per epoch {losses}; val accuracy per epoch {val}")
PYTHON
