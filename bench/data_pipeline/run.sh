#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kiln's input pipeline vs tf.data on the same 2,000 JPEG files (500x375, made once with OpenCV):
# decode + random crop 224 + horizontal flip + ImageNet normalisation, batch 32, prefetch 2, with 1
# and 2 workers. Each peer runs 2 epochs; the second (warm file cache) counts. Kiln decodes only the
# crop of each JPEG; tf.data runs twice: decode_jpeg + random_crop (the plain peer, as tf.data
# tutorials write it) and decode_and_crop_jpeg (its own crop-only decode). Then peak resident
# memory of Kiln's pipeline over 10,000 and 100,000 hard-linked pictures, to show it stays flat.
# Usage: bench/data_pipeline/run.sh [BUILD_DIR]   (needs the data_pipeline target built)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-${KILN_BUILD:-$ROOT/build}}"
CACHE="${KILN_BENCH_CACHE:-$HOME/.cache/kiln/bench}"
DRIVER="$BUILD/bench/data_pipeline"
[[ -x "$DRIVER" ]] || { echo "build the data_pipeline target first ($DRIVER)" >&2; exit 2; }
PY="$(bash "$ROOT/tools/py_env.sh")"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT

"$DRIVER" make-jpegs "$CACHE/jpeg500x375" --count 2000
for workers in 1 2; do
    "$DRIVER" run "$CACHE/jpeg500x375" --workers "$workers" --epochs 2 | tee -a "$OUT"
    "$PY" "$ROOT/bench/data_pipeline/tf_pipeline.py" "$CACHE/jpeg500x375" --workers "$workers" --epochs 2 | tee -a "$OUT"
    "$PY" "$ROOT/bench/data_pipeline/tf_pipeline.py" "$CACHE/jpeg500x375" --workers "$workers" --epochs 2 \
        --decode-and-crop | tee -a "$OUT"
done

"$DRIVER" make-links "$CACHE/links10k" --count 10000
"$DRIVER" make-links "$CACHE/links100k" --count 100000
for set in links10k links100k; do
    "$DRIVER" run "$CACHE/$set" --workers 2 --epochs 1 --transforms unit --shuffle-buffer 10000 \
        | sed "s/^{/{\"set\": \"$set\", /" | tee -a "$OUT"
done

"$PY" - "$OUT" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("\n| peer | workers | images/s (epoch 2) | CPU ms per image | peak RSS MiB |\n|---|---|---|---|---|")
best = {}
for r in rows:
    if "set" in r or r["epoch"] != 1:
        continue
    best[(r["peer"], r["workers"])] = r
    cpu = 1000 * r["cpu_seconds"] / r["images"]
    print(f"| {r['peer']} | {r['workers']} | {r['images_per_second']:.1f} | {cpu:.2f} | {r['peak_rss_bytes'] / 2**20:.0f} |")
for w in (1, 2):
    for peer in ("tf.data", "tf.data decode_and_crop"):
        k, t = best.get(("kiln", w)), best.get((peer, w))
        if k and t:
            print(f"workers {w}: Kiln / {peer} = {k['images_per_second'] / t['images_per_second']:.2f}")
print("\n| pictures | images/s | peak RSS MiB |\n|---|---|---|")
for r in rows:
    if "set" in r:
        print(f"| {r['images']} | {r['images_per_second']:.0f} | {r['peak_rss_bytes'] / 2**20:.1f} |")
PYEOF
