# SPDX-License-Identifier: Apache-2.0
# Keras reference for tst_keras_losses: reads cases.json and raw float32 tensors from DIR,
# computes each loss (reduction "sum_over_batch_size", the Keras default) and its gradient with
# respect to the predictions with Keras 3 on TensorFlow, and writes them back.
"""Usage: keras_losses.py DIR

DIR/cases.json: {"cases": [{"name": str, "loss": str, "attrs": {...},
                            "predictions": [shape], "targets": [shape]}]}
Inputs: DIR/<case>.predictions.bin and DIR/<case>.targets.bin (little-endian float32, row-major).
Outputs: DIR/<case>.loss.bin (one float32) and DIR/<case>.grad.bin (shape of the predictions),
listed in DIR/results.json as {case: true}.
"""
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import tensorflow as tf
import keras


def load(d, case, name, shape):
    return np.fromfile(os.path.join(d, f"{case}.{name}.bin"), dtype="<f4").reshape(shape)


def make_loss(name, attrs, classes):
    """The Keras loss object; the sparse focal loss is the categorical one on one-hot targets
    (Keras 3 has no sparse variant)."""
    if name == "SparseCategoricalFocalCrossentropy":
        return keras.losses.CategoricalFocalCrossentropy(**attrs), True
    return getattr(keras.losses, name)(**attrs), False


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)["cases"]
    results = {}
    for c in cases:
        p = load(d, c["name"], "predictions", c["predictions"])
        t = load(d, c["name"], "targets", c["targets"])
        loss, sparse = make_loss(c["loss"], c["attrs"], p.shape[-1])
        if sparse:
            t = tf.one_hot(t.reshape(-1).astype(np.int64), p.shape[-1], dtype=tf.float32)
        pv = tf.Variable(p)
        with tf.GradientTape() as tape:
            value = loss(tf.constant(t), pv)
        grad = tape.gradient(value, pv)
        np.asarray(value.numpy(), dtype="<f4").reshape(1).tofile(os.path.join(d, f"{c['name']}.loss.bin"))
        np.asarray(grad.numpy(), dtype="<f4").tofile(os.path.join(d, f"{c['name']}.grad.bin"))
        results[c["name"]] = True
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
