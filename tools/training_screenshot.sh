#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshot of the training view mid-run (Fashion-MNIST CNN) in a real X window under Xvfb:
# docs/images/training_view.png. Usage: tools/training_screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
out="$PWD/docs/images/training_view.png"
mkdir -p "$(dirname "$out")"
KILN_SCREENSHOT="$out" QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x1000x24" \
    "$build/tests/tst_training_panel" clickTrainPauseResumeStopOnFashionCnn
echo "wrote $out"
