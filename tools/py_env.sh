#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Creates (once) the Python virtual environment that Kiln's interoperability tests and benchmarks use
# as independent peers: TensorFlow (tf.data, TFRecord, SavedModel), TensorBoard, ONNX, onnxruntime and
# the TF Serving client, and tf_keras (Keras 2, whose .h5 files the Keras import tests read). The
# application itself never needs Python.
#
# Location: ${KILN_PYENV:-$HOME/.cache/kiln/pyenv}. Prints the interpreter path on success.
# A stamp file records the requirement set, so a changed list rebuilds the environment. Packages
# in EXTRAS are added to an existing environment (their own stamp) without rebuilding it.
set -euo pipefail

ENV_DIR="${KILN_PYENV:-$HOME/.cache/kiln/pyenv}"
REQUIREMENTS="numpy<2.3 tensorflow==2.20.0 tensorflow-serving-api==2.20.0 tensorboard==2.20.0 onnx==1.19.1 onnxruntime==1.23.2 pillow"
STAMP="$ENV_DIR/.kiln-requirements"
EXTRAS="tf_keras==2.20.1"
EXTRAS_STAMP="$ENV_DIR/.kiln-extras"

install_extras() {
    if [[ ! -f "$EXTRAS_STAMP" || "$(cat "$EXTRAS_STAMP")" != "$EXTRAS" ]]; then
        # Optional: without them the tests that need them skip, the rest still run.
        # shellcheck disable=SC2086
        if "$ENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check --no-input $EXTRAS >&2; then
            echo "$EXTRAS" > "$EXTRAS_STAMP"
        else
            echo "py_env.sh: could not install $EXTRAS; the tests needing them will skip" >&2
        fi
    fi
}

if [[ -x "$ENV_DIR/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$REQUIREMENTS" ]]; then
    install_extras
    echo "$ENV_DIR/bin/python"
    exit 0
fi

PYTHON="${KILN_PYTHON:-python3}"
rm -rf "$ENV_DIR"
mkdir -p "$(dirname "$ENV_DIR")"
"$PYTHON" -m venv "$ENV_DIR" >&2
# shellcheck disable=SC2086
"$ENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check --no-input $REQUIREMENTS >&2
echo "$REQUIREMENTS" > "$STAMP"
rm -f "$EXTRAS_STAMP"
install_extras
echo "$ENV_DIR/bin/python"
