#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the live-chart benchmark offscreen and in a real X server (Xvfb). Usage: run_chart_bench.sh BUILD_DIR
set -euo pipefail
build="${1:-build}"
bin="$build/bench/chart_bench"
echo "offscreen: $(QT_QPA_PLATFORM=offscreen "$bin")"
if command -v xvfb-run >/dev/null 2>&1; then
    echo "xvfb:      $(QT_QPA_PLATFORM=xcb xvfb-run -a -s '-screen 0 1600x1000x24' "$bin")"
fi
