#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kiln-serve under slow clients: starts kiln-serve on fashion_mlp with 4 REST workers and a 3 s
# request deadline, opens SLOW connections that each send one byte of a request every 100 ms,
# and meanwhile times NORMAL GET /v1/models/mlp requests on fresh connections (2 s client
# timeout each). Reports how many normal requests were answered and how fast, and how the slow
# connections ended (answer status and time; "open" when a slow client sent its whole request
# without being answered or cut off).
#
# Usage: bench/serve/slow_clients.sh [--slow N (default 32)] [--normal N (default 20)]
# Needs: kiln-serve built (KILN_BUILD_DIR, default build), the Python env (tools/py_env.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
serve=$build/app/kiln_serve/kiln-serve
slow=32
normal=20
while [ $# -gt 0 ]; do
  case "$1" in
    --slow) slow=$2; shift 2 ;;
    --normal) normal=$2; shift 2 ;;
    *) echo "slow_clients.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$serve" ] || { echo "slow_clients.sh: $serve not found; build it: ninja -C $build kiln-serve" >&2; exit 2; }
python=$(bash "$root/tools/py_env.sh")

work=$(mktemp -d -t kiln-serve-slow.XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

project=$root/resources/examples/fashion_mlp.kiln
mkdir -p "$work/repo/mlp/1"
"$python" "$here/make_model.py" "$project" --seed 1 --weights "$work/repo/mlp/1/weights.safetensors"
cp "$project" "$work/repo/mlp/1/model.kiln"
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$serve" --rest_api_port="$port" --port=0 --model_name=mlp --model_base_path="$work/repo/mlp" \
  --file_system_poll_wait_seconds=0 --rest_api_num_threads=4 --rest_api_timeout_in_ms=3000 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 1 200); do
  curl -sf "http://127.0.0.1:$port/v1/models/mlp" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/v1/models/mlp" >/dev/null || { cat "$work/server.log" >&2; exit 1; }

"$python" - "$port" "$slow" "$normal" <<'PY'
import socket, sys, threading, time

port, n_slow, n_normal = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
request = b"GET /v1/models/mlp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"p" * 200 + b"\r\n\r\n"
slow_results = []

def slow_client():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.1)
    t0 = time.monotonic()
    status = None
    try:
        for b in request:
            s.send(bytes([b]))
            try:
                data = s.recv(4096)
                status = data[9:12].decode() if data else "closed"
                break
            except socket.timeout:
                pass
    except OSError:
        status = "reset"
    slow_results.append((status or "open", time.monotonic() - t0))
    s.close()

threads = [threading.Thread(target=slow_client) for _ in range(n_slow)]
for t in threads:
    t.start()
time.sleep(0.5)
latencies, failures = [], 0
for _ in range(n_normal):
    t0 = time.monotonic()
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=2)
        c.settimeout(2)
        c.sendall(b"GET /v1/models/mlp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = c.recv(4096)
        c.close()
        if data[9:12] == b"200":
            latencies.append(time.monotonic() - t0)
        else:
            failures += 1
    except OSError:
        failures += 1
    time.sleep(0.1)
for t in threads:
    t.join()
latencies.sort()
print(f"normal requests: {len(latencies)} of {n_normal} answered 200 while {n_slow} slow clients were connected", end="")
if latencies:
    print(f"; median {1000 * latencies[len(latencies) // 2]:.1f} ms, max {1000 * latencies[-1]:.1f} ms")
else:
    print()
ends = {}
for status, t in slow_results:
    ends.setdefault(status, []).append(t)
for status, ts in sorted(ends.items()):
    print(f"slow clients ending with {status}: {len(ts)}, after {min(ts):.2f}-{max(ts):.2f} s")
PY
