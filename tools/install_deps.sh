#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages Kiln needs to build, test and run. Idempotent: when everything is
# already installed it only checks (about a second) and installs nothing.
set -euo pipefail

# One package per word; later features append here.
KILN_APT_PACKAGES="
  build-essential cmake ninja-build ccache pkg-config zlib1g-dev libpng-dev
  libeigen3-dev nlohmann-json3-dev
  qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools qt6-translations-l10n libqt6sql6-sqlite libsqlite3-dev
  dataset-fashion-mnist
  python3-torch python3-numpy libopenblas0-pthread python3-sklearn python3-pil
  xvfb xauth imagemagick fonts-wqy-microhei
  qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6
  libopencv-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libgrpc++-dev protobuf-compiler-grpc
  libboost-dev libcpp-httplib-dev libssl-dev wrk
  libopenmpi-dev openmpi-bin
  python3-venv clang libclang-rt-14-dev clang-format clang-tidy
  desktop-file-utils shared-mime-info
  libjpeg62-turbo-dev
  libflatbuffers-dev libhdf5-dev libminizip-dev
"

missing=()
for pkg in $KILN_APT_PACKAGES; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != ii* ]]; then
        missing+=("$pkg")
    fi
done

if ((${#missing[@]} == 0)); then
    exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "install_deps: missing packages (${missing[*]}) and not running as root; install them first." >&2
        exit 1
    fi
fi

echo "install_deps: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    </dev/null
echo "install_deps: done"
