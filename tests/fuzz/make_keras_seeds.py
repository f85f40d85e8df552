# SPDX-License-Identifier: Apache-2.0
# Writes the seeds of the Keras reader's fuzz target (corpus/fuzz_keras_reader/): small models
# saved by Keras 3 as .keras, covering Sequential and Functional configs, merge layers,
# Normalization over other axes, a layer Kiln keeps as a placeholder, and TimeDistributed,
# Bidirectional and a nested model called twice; and the config.json of three of them (the fuzz
# target wraps text that is not a zip archive into an archive as its config). Run with the Python
# environment of tools/py_env.sh:
#   python tests/fuzz/make_keras_seeds.py tests/fuzz/corpus/fuzz_keras_reader
import os
import sys
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
from keras import layers  # noqa: E402


def sequential():
    return keras.Sequential([keras.Input((4,), name="x"), layers.Dense(3, activation="relu", name="hidden"),
                             layers.Dense(2, name="out")], name="tiny_sequential")


def functional():
    x = keras.Input((4, 4, 2), name="image")
    h = layers.Conv2D(2, 3, padding="same", name="conv")(x)
    h = layers.BatchNormalization(name="bn")(h)
    s = layers.Add(name="sum")([x, h])
    n = layers.Normalization(axis=(1, 3), mean=0.5, variance=2.0, name="norm")(s)
    g = layers.GlobalAveragePooling2D(name="gap")(n)
    return keras.Model(x, layers.Dense(2, activation="softmax", name="out")(g), name="tiny_functional")


def unknown():
    x = keras.Input((5, 2), name="series")
    h = layers.Conv1D(2, 3, padding="same", name="conv1d")(x)
    return keras.Model(x, layers.Dense(1, name="out")(layers.Flatten(name="flat")(h)), name="tiny_unknown")


def wrappers():
    # TimeDistributed(Dense), Bidirectional(LSTM) (a placeholder), and a Sequential model holding a
    # Sequential model, called on two inputs.
    x = keras.Input((3, 2), name="steps")
    h = layers.TimeDistributed(layers.Dense(2, name="proj"), name="td")(x)
    h = layers.Bidirectional(layers.LSTM(1, return_sequences=True, name="lstm"), name="bilstm")(h)
    inner = keras.Sequential([keras.Input((2,)), layers.Dense(2, name="inner_dense")], name="inner")
    tower = keras.Sequential([keras.Input((6,)), layers.Dense(2, name="tower_dense"), inner], name="tower")
    a = layers.Flatten(name="flat")(h)
    b = keras.Input((6,), name="other")
    return keras.Model([x, b], layers.Add(name="sum")([tower(a), tower(b)]), name="tiny_wrappers")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(3)
    for name, build in (("tiny_sequential", sequential), ("tiny_functional", functional), ("tiny_unknown", unknown),
                        ("tiny_wrappers", wrappers)):
        model = build()
        model.save(os.path.join(out, name + ".keras"))
    for name in ("tiny_sequential", "tiny_functional", "tiny_wrappers"):
        with zipfile.ZipFile(os.path.join(out, name + ".keras")) as z, open(os.path.join(out, name + ".config.json"), "wb") as f:
            f.write(z.read("config.json"))


if __name__ == "__main__":
    main()
