#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kiln vs PyTorch CPU training throughput: runs build/bench/train_cpu and bench/torch_train.py
# alternately, model by model, for several rounds and prints the median samples/s of each peer
# with their ratio (goal: Kiln at least 1.5x PyTorch).
#
# Usage: bench/run_train_cpu.sh [--rounds N] [--models "lenet5 mlp resnet8 two_tower"]
#          [--max-other-load PCT] [--retries N] [--quiet-wait SECONDS] [--log FILE]
#          [--kiln-args "..."] [--torch-args "..."] [-- options for both programs]
# Builds nothing: expects build/bench/train_cpu (ninja -C build train_cpu); KILN_TRAIN_CPU
# overrides the binary, KILN_BUILD_DIR the build folder.
#
# PyTorch runs exactly as bench/RESULTS.md prescribes (single-threaded OpenBLAS, large-block
# malloc tunables, OPENBLAS_CORETYPE unset). When OpenBLAS then falls back to its generic SSE3
# kernels ("Prescott": its detection does not know the processor) on an AVX-512 machine, each
# PyTorch run is repeated with OPENBLAS_CORETYPE=SkylakeX and the faster one counts.
#
# On a shared machine other processes distort the timing (PyTorch's OpenMP threads most of all:
# they spin at barriers while a core is taken). Before every run the script waits (up to
# --quiet-wait seconds) for the machine to be idle, measures the CPU time other processes used
# during the run, and repeats a run in which they took more than --max-other-load percent of
# the machine (up to --retries times; a run still disturbed then is kept and flagged with *).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${KILN_TRAIN_CPU:-${KILN_BUILD_DIR:-$root/build}/bench/train_cpu}
if [ ! -x "$bin" ]; then
  echo "run_train_cpu.sh: $bin not found; build it first: ninja -C build train_cpu" >&2
  exit 2
fi
# A private copy, so that a rebuild during the measurement cannot swap the binary half-way.
frozen=$(mktemp -t train_cpu.XXXXXX)
trap 'rm -f "$frozen"' EXIT
cp "$bin" "$frozen" && chmod 755 "$frozen"
export KILN_BENCH_BIN=$frozen KILN_BENCH_DIR=$here KILN_BENCH_SOURCE=$bin

/usr/bin/python3 - "$@" <<'PYTHON'
import argparse, os, resource, shlex, statistics, subprocess, sys, time

bench_dir, kiln_bin = os.environ["KILN_BENCH_DIR"], os.environ["KILN_BENCH_BIN"]
p = argparse.ArgumentParser(prog="run_train_cpu.sh")
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--models", default="lenet5 mlp resnet8 two_tower")
p.add_argument("--max-other-load", type=float, default=10.0,
               help="percent of the machine other processes may use during a run (default 10)")
p.add_argument("--retries", type=int, default=4)
p.add_argument("--quiet-wait", type=float, default=300, help="seconds to wait for an idle machine per run")
p.add_argument("--log", help="append every RESULT line (with round and other load) to this file")
p.add_argument("--kiln-args", default="")
p.add_argument("--torch-args", default="")
p.add_argument("--openblas-coretype", default="auto",
               help="auto (default: as prescribed, plus SkylakeX when detection falls back to a generic "
                    "core), as-is (only as prescribed), or a core type name to add")
p.add_argument("common", nargs="*", help="after --: options for both programs")
args = p.parse_args()
models = args.models.split()
GOAL = 1.5
NCPU = os.cpu_count()
HZ = os.sysconf("SC_CLK_TCK")

# PyTorch at its best: single-threaded BLAS under PyTorch's own 2 OpenMP threads, and a malloc
# that keeps large blocks instead of returning them to the kernel after every step.
torch_env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
torch_env["OPENBLAS_NUM_THREADS"] = "1"
torch_env["GLIBC_TUNABLES"] = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=17179869184"
torch_cmd = ["/usr/bin/python3", os.path.join(bench_dir, "torch_train.py")]


def cpu_jiffies():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return sum(f), f[3] + f[4]  # total, idle + iowait


def busy_percent(seconds=1.0):
    t0, i0 = cpu_jiffies()
    time.sleep(seconds)
    t1, i1 = cpu_jiffies()
    return 100.0 * (1 - (i1 - i0) / max(1, t1 - t0))


def wait_quiet():
    start = time.time()
    busy = busy_percent()
    while busy > 20 and time.time() - start < args.quiet_wait:
        time.sleep(1)
        busy = busy_percent()
    return busy


def run_once(cmd, env=None):
    """Runs cmd; returns (stdout, percent of the machine other processes used meanwhile)."""
    t0, i0 = cpu_jiffies()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.time()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    wall = time.time() - w0
    t1, i1 = cpu_jiffies()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = ((t1 - t0) - (i1 - i0)) / HZ
    ours = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return out, max(0.0, 100.0 * (busy - ours) / (wall * NCPU))


def torch_version(env):
    return subprocess.run([*torch_cmd, "--version"], env=env, stdout=subprocess.PIPE, text=True).stdout.strip()


cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cpu_flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
print(f"Kiln vs PyTorch CPU training throughput: {NCPU} CPUs ({cpu}), 2 threads each")
print(f"Kiln {os.path.relpath(os.environ['KILN_BENCH_SOURCE'], os.path.dirname(bench_dir))} (built {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(os.path.getmtime(os.environ['KILN_BENCH_SOURCE'])))})")
version = torch_version(torch_env)
print("PyTorch " + version)
torch_envs = [torch_env]  # the prescribed environment first
GENERIC_CORES = ("Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai", "Coppermine",
                 "Northwood", "Banias", "Opteron", "Barcelona")
extra_core = None
if args.openblas_coretype == "auto":
    if "avx512f" in cpu_flags and any(f"OpenBLAS core {c};" in version for c in GENERIC_CORES):
        extra_core = "SkylakeX"
        print("  OpenBLAS detection fell back to a generic core on this AVX-512 processor: PyTorch also runs "
              "with OPENBLAS_CORETYPE=SkylakeX, and the faster run counts")
elif args.openblas_coretype != "as-is":
    extra_core = args.openblas_coretype
if extra_core:
    torch_envs.append(dict(torch_env, OPENBLAS_CORETYPE=extra_core))
    print("PyTorch " + torch_version(torch_envs[-1]))


def commands(peer, model):
    common = args.common
    if peer == "kiln":
        return [([kiln_bin, "--threads", "2", *common, *shlex.split(args.kiln_args),
                  os.path.join(bench_dir, "models", model + ".kiln")], None)]
    return [([*torch_cmd, "--threads", "2", *common, *shlex.split(args.torch_args), model], env)
            for env in torch_envs]


results = {}  # (peer, model, variant) -> [samples/s per round]
flags = {}    # (peer, model, variant) -> [disturbed?]
extra = {}    # (peer, model, variant) -> fields of the last RESULT line
log = open(args.log, "a") if args.log else None
for r in range(1, args.rounds + 1):
    print(f"== round {r}/{args.rounds}", flush=True)
    for k, model in enumerate(models):
        order = ["kiln", "torch"] if (r + k) % 2 == 1 else ["torch", "kiln"]
        for peer, (cmd, env) in [(peer, c) for peer in order for c in commands(peer, model)]:
            for attempt in range(1, args.retries + 2):
                before = wait_quiet()
                out, other = run_once(cmd, env)
                disturbed = other > args.max_other_load
                if not disturbed or attempt > args.retries:
                    break
                print(f"  [{peer}] {model}: other processes used {other:.0f}% of the machine, again", flush=True)
            for line in out.splitlines():
                if not line.startswith("RESULT"):
                    print(f"  [{peer}] {line}  (other load {other:.0f}%{', DISTURBED' if disturbed else ''})",
                          flush=True)
                    continue
                f = line.split("\t")
                fields = dict(kv.split("=", 1) for kv in f[4:] if "=" in kv)
                variant = fields.get("variant", "")
                if "openblas_core" in fields:
                    variant += f", OpenBLAS {fields['openblas_core']}"
                key = (f[1], f[2], variant)
                results.setdefault(key, []).append(float(f[3]))
                flags.setdefault(key, []).append(disturbed)
                extra[key] = fields
                if log:
                    log.write(f"{r}\t{other:.1f}\t{line}\n")
                    log.flush()


def median_of(key):
    return statistics.median(results[key])


def rounds_text(key):
    return " ".join(f"{v:.0f}{'*' if d else ''}" for v, d in zip(results[key], flags[key]))


print()
print(f"{'model':<11}{'Kiln samples/s':>15}{'PyTorch samples/s':>19}{'Kiln/PyTorch':>14}  {'goal >= 1.5x':<13}"
      f"{'PyTorch variant':<34}rounds: Kiln | PyTorch")
for model in models:
    kiln = ("kiln", model, "")
    torch_keys = [k for k in results if k[0] == "torch" and k[1] == model]
    if kiln not in results or not torch_keys:
        print(f"{model:<11}missing results")
        continue
    best = max(torch_keys, key=median_of)  # PyTorch at its best: its fastest variant
    km, tm = median_of(kiln), median_of(best)
    ratio = km / tm
    print(f"{model:<11}{km:>15.0f}{tm:>19.0f}{ratio:>13.2f}x  {'met' if ratio >= GOAL else 'NOT met':<13}"
          f"{best[2]:<34}{rounds_text(kiln)} | {rounds_text(best)}")
    for other in sorted(torch_keys):
        if other != best:
            print(f"{'':<11}{'':>15}{median_of(other):>19.0f}{km / median_of(other):>13.2f}x  {'':<13}{other[2]}")
print()
for model in models:
    e = extra.get(("kiln", model, ""), {})
    if e:
        print(f"{model:<11}Kiln plan arena {int(e['arena_bytes']) / 2**20:.2f} MiB "
              f"(one buffer per value: {int(e['unplanned_bytes']) / 2**20:.2f} MiB), {e['plan_steps']} plan steps")
isas = sorted({e["isa"] for k, e in extra.items() if k[0] == "kiln" and "isa" in e})
avx512 = "avx512f" in cpu_flags
print(f"Kiln CPU kernels: {', '.join(isas) or '?'} (this processor {'has' if avx512 else 'has no'} AVX-512; "
      "KILN_CPU_ISA=avx2 forces the AVX2 kernels)")
if any(any(v) for v in flags.values()):
    print("* other processes used more than "
          f"{args.max_other_load:.0f}% of the machine during that run, after {args.retries} retries")
PYTHON
