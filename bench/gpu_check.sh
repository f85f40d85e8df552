#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU check of Kiln in one run, for a fresh machine with one NVIDIA GPU (sized for an H200,
# under 8 minutes): the `gpu` test label (CUDA against CPU for every op, allocator, dropout masks,
# mixed precision), then the training benchmark (ResNet-50 at 224x224 and the reference models in
# fp32/fp16/bf16) against PyTorch (eager and AMP, channels_last). Log and results go to OUTDIR.
#
#   bench/gpu_check.sh OUTDIR
#       Builds what it needs (Release, ccache, -j16, only the GPU targets) in build-gpu/ and runs.
#       Needs the packages of tools/install_deps.sh and nvcc.
#   bench/gpu_check.sh --make-bundle [DIR]
#       On a build machine: builds the same targets in ${KILN_BUILD_DIR:-build-cuda} and copies the
#       binaries with the shared libraries they need (except CUDA's and the C/C++ runtime) to DIR
#       (default .gpu-bundle). A GPU machine without Qt and the other build packages then runs
#       `bench/gpu_check.sh OUTDIR` from a checkout holding that folder: it uses the bundle.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
tests=(tst_cuda_device tst_cuda_allocator tst_cuda_ops tst_cuda_dropout tst_cuda_mixed_precision tst_cuda_trainer)
models=("$root/bench/train_gpu/resnet50.kiln" "$root/bench/models/resnet8.kiln" "$root/bench/models/lenet5.kiln"
        "$root/bench/models/mlp.kiln" "$root/bench/models/two_tower.kiln")

build() {  # build DIR: configure (once) and build the GPU targets
  local dir=$1
  export CCACHE_BASEDIR=$root
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=ON -DKILN_NATIVE=OFF \
      -DCMAKE_CUDA_COMPILER="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" || return 1
  fi
  ninja -C "$dir" -j"${KILN_JOBS:-16}" "${tests[@]}" train_gpu
}

if [ "${1:-}" = "--make-bundle" ]; then
  dir=${KILN_BUILD_DIR:-$root/build-cuda}
  out=${2:-$root/.gpu-bundle}
  build "$dir" || { echo "gpu_check.sh: build failed" >&2; exit 1; }
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  for t in "${tests[@]}"; do cp "$dir/tests/$t" "$out/bin/"; done
  cp "$dir/bench/train_gpu/train_gpu" "$out/bin/"
  strip --strip-unneeded "$out"/bin/* 2>/dev/null || true
  # Shared libraries outside CUDA and the C/C++ runtime, which the GPU machine has itself.
  ldd "$out"/bin/* | awk '/=> \//{print $3}' | sort -u |
    grep -Ev '/lib(cuda|cudart|cublas|cublasLt|cudnn|nccl|c|m|stdc\+\+|gcc_s|pthread|dl|rt)\.so|/ld-linux' |
    while read -r lib; do cp -L "$lib" "$out/lib/"; done
  echo "gpu_check.sh: bundle in $out ($(du -sh "$out" | cut -f1)); ignore it in git (e.g. echo /$(basename "$out")/ >> .git/info/exclude)"
  exit 0
fi

out=${1:?usage: bench/gpu_check.sh OUTDIR | --make-bundle [DIR]}
mkdir -p "$out"
log="$out/gpu_check.log"
exec > >(tee "$log") 2>&1
start=$(date +%s)
stamp() { echo "== $(( $(date +%s) - start ))s: $*"; }
stamp "Kiln GPU check on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>/dev/null || echo "nvidia-smi: not available"

# CUDA libraries: the toolkit's, and those of the Python packages (cuDNN, NCCL, cuBLAS wheels).
libpath=/usr/local/cuda/lib64:/usr/local/cuda/lib
pyl=$(python3 -c 'import glob, os, sys; print(":".join(d for p in sys.path if os.path.isdir(p) for d in sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib")))))' 2>/dev/null || true)
[ -n "$pyl" ] && libpath=$libpath:$pyl

if [ -d "$root/.gpu-bundle/bin" ]; then
  stamp "using the prebuilt bundle .gpu-bundle"
  bin=$root/.gpu-bundle/bin
  export LD_LIBRARY_PATH=$root/.gpu-bundle/lib:$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  testbin() { echo "$bin/$1"; }
  benchbin=$bin/train_gpu
else
  stamp "building (Release, -j${KILN_JOBS:-16})"
  build "$root/build-gpu" || { stamp "BUILD FAILED"; exit 1; }
  export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  testbin() { echo "$root/build-gpu/tests/$1"; }
  benchbin=$root/build-gpu/bench/train_gpu/train_gpu
fi
export KILN_SOURCE_DIR=$root QT_QPA_PLATFORM=offscreen
test_timeout=${KILN_GPU_TEST_TIMEOUT:-300}
bench_timeout=${KILN_GPU_BENCH_TIMEOUT:-240}
# A library the dynamic linker cannot find fails every program the same way: say which, once.
missing=$(for t in "${tests[@]}"; do ldd "$(testbin "$t")"; done; ldd "$benchbin")
missing=$(echo "$missing" | grep 'not found' | sort -u)
[ -n "$missing" ] && { echo "libraries not found (LD_LIBRARY_PATH=$LD_LIBRARY_PATH):"; echo "$missing"; }

failed=0
for t in "${tests[@]}"; do
  stamp "test $t"
  if ! timeout "$test_timeout" "$(testbin "$t")" -o "$out/$t.txt,txt" -o -,txt; then failed=$((failed + 1)); echo "FAILED: $t"; fi
done
stamp "tests done: $failed failed"

stamp "benchmark: Kiln"
timeout "$bench_timeout" "$benchbin" --windows 3 --window-seconds 1 --warmup-steps 5 "${models[@]}" | tee "$out/kiln_results.txt"
stamp "benchmark: PyTorch"
if python3 -c 'import torch' 2>/dev/null; then
  timeout "$bench_timeout" python3 "$root/bench/train_gpu/torch_train_gpu.py" --windows 3 --window-seconds 1 --warmup-steps 5 "${models[@]}" |
    tee "$out/torch_results.txt"
else
  echo "PyTorch is not installed: peer skipped"
fi

# One table: samples/s of both peers per model and precision.
python3 - "$out" <<'PY' || true
import re, sys, os
out = sys.argv[1]
def read(name):
    rows = {}
    p = os.path.join(out, name)
    if os.path.exists(p):
        for line in open(p):
            if line.startswith("RESULT"):
                kv = dict(re.findall(r"(\w+)=(\S+)", line))
                rows[(kv["model"], kv["precision"])] = kv
    return rows
k, t = read("kiln_results.txt"), read("torch_results.txt")
lines = ["| model | precision | batch | Kiln samples/s | PyTorch samples/s | Kiln/PyTorch | "
         "Kiln predicted / measured / allocator peak (GiB) | PyTorch peak (GiB) |",
         "|---|---|---|---|---|---|---|---|"]
for key in sorted(set(k) | set(t)):
    a, b = k.get(key, {}), t.get(key, {})
    ks, ts = float(a.get("samples_per_s", 0)), float(b.get("samples_per_s", 0))
    # measured: the allocator's peak without the cuDNN convolution workspace, which the
    # prediction leaves out too; the allocator peak includes it.
    mem = "%.2f / %.2f / %.2f" % (int(a.get("predicted_bytes", 0)) / 2**30, int(a.get("peak_bytes", 0)) / 2**30,
                                  int(a.get("allocator_peak_bytes", a.get("peak_bytes", 0))) / 2**30) if a else "-"
    tpeak = "%.2f" % (int(b["peak_bytes"]) / 2**30) if "peak_bytes" in b else "-"
    lines.append(f"| {key[0]} | {key[1]} | {a.get('batch', b.get('batch', '-'))} | {ks:.0f} | {ts:.0f} | "
                 f"{(ks / ts if ts else 0):.2f} | {mem} | {tpeak} |")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
stamp "done: $failed test programs failed"
exit $(( failed > 0 ? 1 : 0 ))
