#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kiln-serve under load: exports version 1 of the fashion_mlp example (kiln-export when it is
# built, else the Kiln files directly and an equivalent ONNX model made with the onnx package),
# starts kiln-serve with batching, and runs wrk (2 threads, 64 connections) POSTing :predict with
# one 28x28x1 image: a steady window, then a window during which version 2 is dropped into the
# base path. Reports non-2xx answers, p50/p99 of both windows, requests/s, and onnxruntime's raw
# batch-1 rate on the same model and cores (the best of three thread layouts); also the server's
# CPU time per request (utime + stime from /proc/PID/stat over each window, divided by the
# requests answered). Appends them to bench/RESULTS.md with --append.
#
# Usage: bench/serve/run.sh [--seconds N (per window, default 15)] [--append]
# Needs: kiln-serve built (KILN_BUILD_DIR, default build), wrk, the Python env (tools/py_env.sh).
# KILN_EXPORT may name a kiln-export binary, KILN_SERVE another kiln-serve binary (to compare
# builds); KILN_SERVE_ARGS adds flags to kiln-serve's command line, KILN_INFERENCE_THREADS sets
# --num_inference_threads (default 1), KILN_IO_THREADS --rest_api_io_threads (default 2).
# KILN_SKIP_ORT=1 leaves out the onnxruntime peer (for
# alternating server runs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
serve=${KILN_SERVE:-$build/app/kiln_serve/kiln-serve}
seconds=15
append=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --append) append=1; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$serve" ] || { echo "run.sh: $serve not found; build it: ninja -C $build kiln-serve" >&2; exit 2; }
command -v wrk >/dev/null || { echo "run.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
python=$(bash "$root/tools/py_env.sh")
export_bin=${KILN_EXPORT:-$build/app/kiln_export/kiln-export}

work=$(mktemp -d -t kiln-serve-bench.XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

project=$root/resources/examples/fashion_mlp.kiln
mkdir -p "$work/repo/mlp"
"$python" "$here/make_model.py" "$project" --seed 1 --weights "$work/w1.safetensors" --onnx "$work/peer.onnx"
"$python" "$here/make_model.py" "$project" --seed 2 --weights "$work/w2.safetensors"

onnx_source="python onnx package (same weights; kiln-export not available)"
onnx_model=$work/peer.onnx
# version N of the model into DIR (a temporary name renamed into place, as the exporter does).
# Exports version N into the staging repository $work/stage/mlp/N; `mv` then drops it into the
# served base path in one rename (the export's own CPU time stays out of the measured windows).
stage() {
  local version=$1 weights=$2
  mkdir -p "$work/stage/mlp"
  if [ -x "$export_bin" ]; then
    "$export_bin" "$project" --weights "$weights" --base "$work/stage" --name mlp --version "$version" \
      --formats kiln,onnx --threads 1 --json > "$work/export-$version.json"
  else
    mkdir -p "$work/stage/mlp/$version"
    cp "$project" "$work/stage/mlp/$version/model.kiln"
    cp "$weights" "$work/stage/mlp/$version/weights.safetensors"
  fi
}
stage 1 "$work/w1.safetensors"
stage 2 "$work/w2.safetensors"
mv "$work/stage/mlp/1" "$work/repo/mlp/1"
if [ -f "$work/repo/mlp/1/model.onnx" ]; then
  onnx_model=$work/repo/mlp/1/model.onnx
  onnx_source="kiln-export's model.onnx"
fi

cat > "$work/batching.config" <<CFG
max_batch_size { value: 32 }
batch_timeout_micros { value: 200 }
max_enqueued_batches { value: 1000 }
num_batch_threads { value: 1 }
CFG
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# One inference thread by default: onnxruntime's best layout here is one thread too, and on 2
# cores shared with wrk and the event loop a second one (whose pool spins for 250 µs after each
# batch) costs more than it gains (bench/RESULTS.md).
inference_threads=${KILN_INFERENCE_THREADS:-1}
# Two event loops: on 2 cores a single one spends most of a core reading and parsing requests,
# and a second served 7 % more requests per second in alternating runs (bench/RESULTS.md).
io_threads=${KILN_IO_THREADS:-2}
KILN_NUM_THREADS=$inference_threads "$serve" --rest_api_port="$port" --port=0 --model_name=mlp --model_base_path="$work/repo/mlp" \
  --file_system_poll_wait_seconds=1 --rest_api_num_threads=64 --rest_api_io_threads=$io_threads \
  --num_inference_threads=$inference_threads \
  --enable_batching --batching_parameters_file="$work/batching.config" ${KILN_SERVE_ARGS:-} 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 1 200); do
  curl -sf "http://127.0.0.1:$port/v1/models/mlp" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/v1/models/mlp" >/dev/null || { cat "$work/server.log" >&2; exit 1; }

"$python" - "$work/body.json" <<'PY'
import json, sys
import numpy as np
x = np.random.default_rng(3).random((28, 28, 1)).round(4).tolist()
json.dump({"instances": [x]}, open(sys.argv[1], "w"))
PY
export KILN_BENCH_BODY=$work/body.json KILN_BENCH_PATH=/v1/models/mlp:predict
# The server's user + system CPU time in clock ticks (fields 14 and 15 of /proc/PID/stat, counted
# after the command name, which may hold spaces).
cpu_ticks() { sed 's/.*) //' "/proc/$server_pid/stat" | awk '{print $12 + $13}'; }
ticks_per_s=$(getconf CLK_TCK)
# One wrk window; its KILN line gets cpu_us= (server CPU microseconds per request) appended.
wrk_run() {
  local before after line
  before=$(cpu_ticks)
  line=$(wrk -t2 -c64 -d"${seconds}s" --timeout 10s -s "$here/predict.lua" "http://127.0.0.1:$port" | grep '^KILN ')
  after=$(cpu_ticks)
  local requests
  requests=$(echo "$line" | tr ' ' '\n' | grep '^requests=' | cut -d= -f2)
  echo "$line cpu_us=$(( (after - before) * 1000000 / ticks_per_s / (requests > 0 ? requests : 1) ))"
}
wrk -t2 -c64 -d3s -s "$here/predict.lua" "http://127.0.0.1:$port" > /dev/null  # warm-up
steady=$(wrk_run)
# Swap window: version 2 appears a third of the way in.
( sleep $((seconds / 3)); mv "$work/stage/mlp/2" "$work/repo/mlp/2" ) &
publisher=$!
swap=$(wrk_run)
wait $publisher
sleep 2
status=$(curl -s "http://127.0.0.1:$port/v1/models/mlp" | tr -d ' \n')
echo "steady: $steady"
echo "swap:   $swap"
[ "${KILN_SKIP_ORT:-0}" = 1 ] && exit 0
# onnxruntime at its best on the same cores: 1 or 2 calling threads, 1 or 2 intra-op threads
# each (never more threads than cores); the highest rate is the peer.
for layout in "1 1" "2 1" "1 2"; do
  set -- $layout
  OMP_NUM_THREADS=1 "$python" "$here/ort_rate.py" "$onnx_model" --threads "$1" --intra "$2" --seconds "$seconds" >> "$work/ort.jsonl"
done
ort=$("$python" -c 'import json,sys; print(json.dumps(max((json.loads(l) for l in open(sys.argv[1])), key=lambda d: d["rps"])))' "$work/ort.jsonl")
ort_all=$("$python" -c 'import json,sys; print("; ".join("%d calling × %d intra-op: %.0f/s" % (d["threads"], d["intra"], d["rps"]) for d in map(json.loads, open(sys.argv[1]))))' "$work/ort.jsonl")

field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
report=$(cat <<TXT
## Serving

\`bench/serve/run.sh --seconds $seconds\` ($(date -u +%Y-%m-%d), $(nproc) cores, load average during the run: $load).
kiln-serve serving fashion_mlp (784-256-128-10) with batching (max 32, 200 µs), $inference_threads inference thread(s),
64 REST threads, $io_threads event loop(s)${KILN_SERVE_ARGS:+, extra flags \`$KILN_SERVE_ARGS\`}; wrk 2 threads, 64 connections, one 28x28x1 image per :predict request,
on the same cores. Peer: onnxruntime $("$python" -c 'import onnxruntime; print(onnxruntime.__version__)') on $onnx_source, batch 1, no HTTP, the best of
$ort_all.

| window | requests | non-2xx | socket errors | p50 | p99 | requests/s | server CPU µs/request |
|---|---|---|---|---|---|---|---|
| steady ${seconds} s | $(field "$steady" requests) | $(field "$steady" non2xx) | $(field "$steady" errors) | $(( $(field "$steady" p50_us) / 1000 )).$(printf %03d $(( $(field "$steady" p50_us) % 1000 ))) ms | $(( $(field "$steady" p99_us) / 1000 )).$(printf %03d $(( $(field "$steady" p99_us) % 1000 ))) ms | $(field "$steady" rps) | $(field "$steady" cpu_us) |
| version 1 → 2 swap ${seconds} s | $(field "$swap" requests) | $(field "$swap" non2xx) | $(field "$swap" errors) | $(( $(field "$swap" p50_us) / 1000 )).$(printf %03d $(( $(field "$swap" p50_us) % 1000 ))) ms | $(( $(field "$swap" p99_us) / 1000 )).$(printf %03d $(( $(field "$swap" p99_us) % 1000 ))) ms | $(field "$swap" rps) | $(field "$swap" cpu_us) |

onnxruntime raw inference: $(echo "$ort" | "$python" -c 'import json,sys; d=json.load(sys.stdin); print("%.0f inferences/s (p50 %.0f µs, p99 %.0f µs, %.0f µs of CPU time per inference)" % (d["rps"], d["p50_us"], d["p99_us"], d["cpu_us"]))'); steady kiln-serve / onnxruntime: $("$python" -c 'import sys; print("%.2f×" % (float(sys.argv[1]) / float(sys.argv[2])))' "$(field "$steady" rps)" "$(echo "$ort" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["rps"])')").
Model status after the run: \`$status\`.
TXT
)
echo "$report"
if [ "$append" = 1 ]; then
  printf '\n%s\n' "$report" >> "$root/bench/RESULTS.md"
fi
