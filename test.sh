#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up and builds Kiln, then runs every test under ctest; with KILN_ASAN=1 also the sanitizer
# lane (the `fast` tests built with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan, see
# tools/sanitizer_lane.sh). Extra arguments go to both ctest runs (for example `./test.sh -L fast`
# or `./test.sh -R tst_split`). Exits non-zero when either run fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

start=$(date +%s)
export KILN_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}"
export QT_QPA_PLATFORM=offscreen

# KILN_SKIP_DEPS=1 skips the package check (for machines where you are not root).
if [[ "${KILN_SKIP_DEPS:-0}" != 1 ]]; then
    tools/install_deps.sh
fi
tools/fetch_data.sh
# The pretrained EfficientNet-Lite0 for the transfer-learning check; cached once. Without it (no
# network on first use) that test is skipped, not failed.
tools/fetch_pretrained.sh || echo "test.sh: the pretrained network could not be fetched; its test will be skipped" >&2
# The Python peers (TensorFlow, TensorBoard, ONNX, onnxruntime, TF Serving client) for interop
# tests; created once and cached. KILN_SKIP_PYENV=1 skips it (interop tests then skip).
if [[ "${KILN_SKIP_PYENV:-0}" != 1 ]]; then
    tools/py_env.sh >/dev/null
fi
launcher=()
# Cache hits across clones in different folders: paths are hashed relative to the checkout. Not
# for the test programs: their definitions hold the checkout's absolute path (KILN_SOURCE_DIR,
# Qt Test's source and build folders), so a clone in another folder compiles them again.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
cmake --build build -j"$(nproc)"

status=0
ctest --test-dir build --output-on-failure -j2 "$@" || status=$?

if [[ "${KILN_ASAN:-0}" == 1 ]]; then
    asan_start=$(date +%s)
    tools/sanitizer_lane.sh "$@" || status=$((status ? status : 1))
    echo "test.sh: sanitizer lane took $(($(date +%s) - asan_start)) s"
fi

elapsed=$(($(date +%s) - start))
if ((status == 0)); then
    echo "test.sh: all selected tests passed (${elapsed} s in all)"
else
    echo "test.sh: tests failed with status $status (${elapsed} s in all)" >&2
fi
exit "$status"
