#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up, builds and runs Kiln: the studio when a display is available, otherwise the headless
# trainer on the bundled Fashion-MNIST example. Extra arguments go to the program.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

export KILN_DATA="${KILN_DATA:-$HOME/.cache/kiln/data}"
example=resources/examples/fashion_mlp.kiln

# KILN_SKIP_DEPS=1 skips the package check (for machines where you are not root).
if [[ "${KILN_SKIP_DEPS:-0}" != 1 ]]; then
    tools/install_deps.sh
fi
tools/fetch_data.sh
launcher=()
# Cache hits across clones in different folders: paths are hashed relative to the checkout.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
# Only the two programs run below: the tests are built by test.sh.
cmake --build build -j"$(nproc)" --target kiln kiln-train

# The studio's binary sits in its own folder (build/app/kiln is that folder).
studio=build/app/kiln/kiln
if [[ -n "${DISPLAY:-}" && -f $studio && -x $studio ]]; then
    exec "$studio" "$example" "$@"
fi
if [[ ! -x build/app/kiln-train ]]; then
    echo "run.sh: build/app/kiln-train was not built" >&2
    exit 1
fi
exec build/app/kiln-train "$example" "$@"
