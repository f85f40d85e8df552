# SPDX-License-Identifier: Apache-2.0
# Builds Keras 2 models (tf_keras, the Keras 2 that TensorFlow 2.16+ ships apart) that call
# TensorFlow functions on Keras tensors, which Keras 2 saves as TFOpLambda layers, and saves them
# as legacy .h5 and as .keras (tf_keras's own .keras layout: Keras 2 config, weight groups named after
# the layers' classes), with a batch of inputs and Keras's predictions (raw little-endian float32)
# and a manifest.json in the format keras_models.py writes. "tf_cnn" is a small CNN with a nested
# Sequential block and several layers of the same class, as transfer learning starts from; the
# "tf_<model>" models of keras_nesting.py nest models deeper and wrap layers.
# Usage: keras2_models.py OUTDIR
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
from tf_keras import layers  # noqa: E402

import keras_nesting  # noqa: E402


def oplambda():
    # The TensorFlow calls common in Keras 2 models: arithmetic with numbers and tensors (both
    # orders), activations, a squeeze-and-excitation gate, reshape and concat.
    x = keras.Input((6, 6, 3), name="image")
    a = layers.Conv2D(4, 3, padding="same", name="conv")(x)
    h = tf.math.multiply(a, 0.5)
    h = tf.nn.relu(h + 0.25)
    h = tf.__operators__.add(h, a)
    gate = tf.nn.sigmoid(tf.math.reduce_mean(h, axis=[1, 2], keepdims=True))
    h = h * gate
    h = 2.0 - tf.nn.silu(h)
    h = tf.nn.leaky_relu(h, alpha=0.1) / 4.0
    h = tf.clip_by_value(tf.nn.gelu(h), -0.5, 0.75)
    s = tf.math.subtract(h, a)
    flat = tf.reshape(s, (-1, 144))
    pooled = tf.math.reduce_max(tf.nn.relu6(a * 3.0), axis=[1, 2])
    joined = tf.concat([flat, pooled], axis=-1)
    h = layers.Dense(5, name="logits")(joined)
    return keras.Model(x, tf.nn.softmax(tf.math.tanh(h), axis=-1), name="oplambda")


def oplambda_unknown():
    # A TensorFlow function Kiln has no op for: its TFOpLambda layer becomes a placeholder; so
    # does the slice after it (a SlicingOpLambda layer).
    x = keras.Input((8,), name="series")
    h = layers.Dense(8, name="dense")(x)
    h = tf.math.cumsum(h, axis=-1)[:, 1:]
    return keras.Model(x, layers.Dense(2, name="out")(h), name="oplambda_unknown")


def cumsum_rows(t):
    return tf.math.cumsum(t, axis=1)


def lambda_middle():
    # A Lambda layer (Kiln cannot run its Python function) in the middle of a functional model:
    # its declared output_shape is the only shape the file holds for it (Keras 2 records none
    # elsewhere), so the layers after it still map.
    x = keras.Input((6, 6, 3), name="image")
    h = layers.Conv2D(4, 3, padding="same", name="conv")(x)
    h = layers.Lambda(cumsum_rows, output_shape=(6, 6, 4), name="rows")(h)
    h = layers.Conv2D(5, 3, name="conv2")(h)
    h = layers.GlobalAveragePooling2D(name="gap")(h)
    return keras.Model(x, layers.Dense(2, name="out")(h), name="lambda_middle")


def lambda_sequential():
    return keras.Sequential([keras.Input((8,), name="series"), layers.Dense(6, name="dense"),
                             layers.Lambda(cumsum_rows, output_shape=(6,), name="running"),
                             layers.Dense(3, activation="relu", name="out")], name="lambda_sequential")


def tf_cnn():
    # Layers of one class several times (conv2d, conv2d_1...), a BatchNormalization with trained
    # statistics, a nested Sequential model (its groups below its own) and InputLayers in both.
    x = keras.Input((12, 12, 3), name="image")
    h = layers.Conv2D(8, 3, padding="same", activation="relu", name="stem")(x)
    h = layers.BatchNormalization(name="stem_bn")(h)
    h = layers.MaxPooling2D(name="pool")(h)
    block = keras.Sequential([keras.Input((6, 6, 8)), layers.DepthwiseConv2D(3, padding="same", name="dw"),
                              layers.Conv2D(12, 1, name="pw"), layers.ReLU(name="pw_relu")], name="block")
    h = block(h)
    h = layers.Conv2D(16, 3, strides=2, activation="relu", name="top_conv")(h)
    h = layers.GlobalAveragePooling2D(name="gap")(h)
    h = layers.Dropout(0.3, name="drop")(h)
    h = layers.Dense(10, activation="relu", name="features")(h)
    return keras.Model(x, layers.Dense(4, activation="softmax", name="probs")(h), name="tf_cnn")


def randomize_statistics(model):
    # Trained BatchNormalization statistics, so that the moving mean and variance matter.
    rng = np.random.default_rng(5)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape), rng.uniform(-0.5, 0.5, beta.shape),
                               rng.uniform(-0.5, 0.5, mean.shape), rng.uniform(0.5, 2.0, var.shape)])


BUILDERS = {"tf_cnn": tf_cnn, "oplambda": oplambda, "oplambda_unknown": oplambda_unknown, "lambda_middle": lambda_middle,
            "lambda_sequential": lambda_sequential}
# Deep nesting, a nested model called twice, TimeDistributed and Bidirectional (keras_nesting.py),
# named "tf_<model>" beside Keras 3's.
BUILDERS.update({"tf_" + name: (lambda b: lambda: b(keras, layers))(b) for name, b in keras_nesting.BUILDERS.items()})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(7)
    rng = np.random.default_rng(13)
    manifest = {"keras_version": keras.__version__, "models": []}
    for name, build in BUILDERS.items():
        model = build()
        randomize_statistics(model)
        if name[3:] in keras_nesting.BUILDERS:
            keras_nesting.randomize(model, rng)
        xs = [rng.uniform(-1, 1, [3] + [int(d) for d in t.shape[1:]]).astype("float32") for t in model.inputs]
        y = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
        model.save(os.path.join(out, name + ".tf_keras.h5"))
        model.save(os.path.join(out, name + ".tf_keras.keras"))
        entry = {"name": name, "inputs": [], "outputs": [{"file": name + ".out0.bin", "shape": list(np.shape(y))}]}
        for k, x in enumerate(xs):
            x.astype("<f4").tofile(os.path.join(out, f"{name}.in{k}.bin"))
            entry["inputs"].append({"file": f"{name}.in{k}.bin", "shape": list(x.shape)})
        np.asarray(y, dtype="<f4").tofile(os.path.join(out, name + ".out0.bin"))
        manifest["models"].append(entry)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
