# SPDX-License-Identifier: Apache-2.0
# Builds the Keras models that tst_keras_import reads: each saved as .keras and as legacy .h5,
# with a batch of inputs and Keras's own predictions for it (raw little-endian float32 files)
# and a manifest.json describing them; plus damaged files for the error cases (bad_*.keras,
# plain.h5), and for some models a copy in the legacy layout Keras 2 / tf.keras wrote
# (NAME.keras2.h5, rewritten from Keras 3's .h5, since TensorFlow 2.20 no longer has Keras 2).
# Usage: keras_models.py OUTDIR [NAME...]
import json
import os
import sys
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

import keras_nesting  # noqa: E402


def randomize_bn(model, rng):
    # Fresh BatchNormalization layers have mean 0 and variance 1; other statistics test the mapping.
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            randomize_bn(layer, rng)
        elif isinstance(layer, layers.BatchNormalization):
            w = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, x.shape).astype("float32") if i in (0, 3)
                               else rng.uniform(-0.5, 0.5, x.shape).astype("float32") for i, x in enumerate(w)])


def randomize_normalization(model, rng):
    # A Normalization layer left un-adapted has mean 0 and variance 1; picture-like statistics
    # (as adapt() on pixels in [0, 1] would give) test the mapping.
    for layer in model.layers:
        if isinstance(layer, layers.Normalization) and layer.get_weights():
            mean, var, count = layer.get_weights()
            layer.set_weights([rng.uniform(0.3, 0.6, mean.shape).astype("float32"),
                               rng.uniform(0.04, 0.09, var.shape).astype("float32"), count])
            layer.finalize_state()  # the layer computes with statistics derived at build time


def cnn():
    return keras.Sequential([
        keras.Input((16, 16, 3), name="image"),
        layers.Conv2D(8, 3, padding="same", use_bias=False, name="conv1"),
        layers.BatchNormalization(name="bn1"),
        layers.ReLU(name="relu1"),
        layers.MaxPooling2D(name="pool1"),
        layers.Conv2D(12, 3, strides=2, padding="valid", activation="relu", name="conv2"),
        layers.AveragePooling2D(pool_size=2, strides=1, padding="same", name="pool2"),
        layers.Flatten(name="flatten"),
        layers.Dropout(0.3, name="dropout"),
        layers.Dense(10, activation="softmax", name="probs"),
    ], name="small_cnn")


def two_inputs():
    a = keras.Input((8, 8, 3), name="left")
    b = keras.Input((8, 8, 3), name="right")
    sa = layers.Rescaling(0.5, offset=0.1, name="scale_left")(a)
    ca = layers.Conv2D(6, 3, padding="same", activation="tanh", name="conv_left")(sa)
    cb = layers.Conv2D(6, 3, padding="same", dilation_rate=2, activation="sigmoid", name="conv_right")(b)
    s = layers.Add(name="sum")([ca, cb])
    d = layers.Subtract(name="difference")([ca, cb])
    m = layers.Multiply(name="product")([s, d])
    cat = layers.Concatenate(name="joined")([s, m, b])
    up = layers.UpSampling2D(2, name="up")(cat)
    act = layers.LeakyReLU(negative_slope=0.2, name="leaky")(up)
    p = layers.GlobalMaxPooling2D(name="gmp")(act)
    q = layers.GlobalAveragePooling2D(name="gap")(layers.Activation("silu", name="silu")(up))
    h = layers.Concatenate(name="pooled")([p, q])
    h = layers.Dense(16, activation="gelu", name="hidden")(h)
    h = layers.LayerNormalization(name="norm")(h)
    h = layers.Activation("hard_swish", name="hswish")(h)
    h = layers.Reshape((4, 4), name="grid")(h)
    h = layers.Flatten(name="flat")(h)
    out = layers.Dense(5, name="logits")(h)
    out = layers.Softmax(name="probs")(out)
    return keras.Model([a, b], out, name="two_inputs")


def separable():
    x = keras.Input((12, 12, 4), name="pixels")
    h = layers.ZeroPadding2D(((1, 2), (0, 1)), name="pad")(x)
    h = layers.DepthwiseConv2D(3, depth_multiplier=2, strides=2, activation="relu6", name="dw")(h)
    h = layers.BatchNormalization(name="dw_bn")(h)
    h = layers.SeparableConv2D(6, 3, padding="same", activation="swish", name="sep")(h)
    h = layers.SeparableConv2D(5, 3, padding="valid", use_bias=False, depth_multiplier=2, name="sep2")(h)
    h = layers.Activation("hard_sigmoid", name="hsig")(h)
    h = layers.GlobalAveragePooling2D(name="gap")(h)
    out = layers.Dense(3, activation="linear", name="out")(h)
    return keras.Model(x, out, name="separable")


def embedding():
    ids = keras.Input((6,), dtype="int32", name="tokens")
    e = layers.Embedding(20, 8, name="embed")(ids)
    h = layers.Flatten(name="flat")(e)
    out = layers.Dense(4, activation="softmax", name="out")(h)
    return keras.Model(ids, out, name="embedding")


def sequence_pool():
    # GlobalAveragePooling1D over an embedded sequence, without and with keepdims.
    ids = keras.Input((6,), dtype="int32", name="tokens")
    e = layers.Embedding(20, 8, name="embed")(ids)
    a = layers.GlobalAveragePooling1D(name="mean")(e)
    b = layers.Flatten(name="flat")(layers.GlobalAveragePooling1D(keepdims=True, name="mean_keep")(e))
    out = layers.Dense(4, activation="softmax", name="out")(layers.Concatenate(name="cat")([a, b]))
    return keras.Model(ids, out, name="sequence_pool")


def masked_pool():
    # Keras averages only the positions whose id is not 0: refused by the import.
    ids = keras.Input((6,), dtype="int32", name="tokens")
    e = layers.Embedding(20, 8, mask_zero=True, name="embed")(ids)
    out = layers.Dense(4, name="out")(layers.GlobalAveragePooling1D(name="mean")(e))
    return keras.Model(ids, out, name="masked_pool")


def nested():
    inner = keras.Sequential([keras.Input((10,)), layers.Dense(8, activation="relu", name="inner_dense"),
                              layers.Dense(6, name="inner_out")], name="block")
    x = keras.Input((10,), name="features")
    h = inner(x)
    out = layers.Dense(2, activation="sigmoid", name="head")(h)
    return keras.Model(x, out, name="nested")


def shared():
    # One Dense layer called on two inputs: two calls sharing one set of weights.
    a = keras.Input((6,), name="a")
    b = keras.Input((6,), name="b")
    dense = layers.Dense(4, activation="swish", name="shared_dense")
    h = layers.Add(name="sum")([dense(a), dense(b)])
    out = layers.Dense(2, name="out")(h)
    return keras.Model([a, b], out, name="shared")


def unknown():
    x = keras.Input((6, 4), name="series")
    h = layers.Conv1D(5, 3, padding="same", name="conv1d")(x)
    h = layers.Flatten(name="flat")(h)
    out = layers.Dense(2, name="out")(h)
    return keras.Model(x, out, name="unknown")


def normalizers():
    # Normalization with one statistic for every value (axis=None, adapted), its inverse with
    # per-channel statistics from the config, and the inverse of adapted statistics.
    x = keras.Input((6, 6, 3), name="image")
    h = layers.Normalization(axis=None, name="norm_all")(x)
    h = layers.Conv2D(4, 3, padding="same", name="conv")(h)
    h = layers.Normalization(mean=[0.5, -1.0, 2.0, 0.0], variance=[4.0, 0.25, 1.0, 9.0], invert=True,
                             name="denorm")(h)
    h = layers.Normalization(axis=-1, invert=True, name="denorm_adapted")(h)
    h = layers.Normalization(axis=None, mean=1.5, variance=2.25, invert=True, name="denorm_all")(h)
    return keras.Model(x, layers.Flatten(name="flat")(h), name="normalizers")


def normalizer_axes():
    # Normalization on axes other than the channels: rows of an image (adapted statistics, one
    # per row), (row, column) positions (from the config), and rows and channels, inverted.
    x = keras.Input((6, 5, 3), name="image")
    h = layers.Normalization(axis=1, name="norm_rows")(x)
    mean = np.linspace(-1.0, 1.0, 30).reshape(6, 5)
    var = np.linspace(0.25, 4.0, 30).reshape(6, 5)
    h = layers.Normalization(axis=(1, 2), mean=mean.tolist(), variance=var.tolist(), name="norm_cells")(h)
    h = layers.Normalization(axis=(-3, -1), invert=True, name="denorm_rows_channels")(h)
    return keras.Model(x, layers.Dense(2, name="out")(layers.Flatten(name="flat")(h)), name="normalizer_axes")


def stochastic_depth():
    # EfficientNet's stochastic depth (whole samples of a residual branch dropped while training)
    # and a per-channel dropout: the identity at inference.
    x = keras.Input((8, 8, 4), name="image")
    h = layers.Conv2D(4, 3, padding="same", activation="relu", name="branch")(x)
    h = layers.Dropout(0.5, noise_shape=(None, 1, 1, 1), name="drop_sample")(h)
    h = layers.Add(name="residual")([x, h])
    h = layers.Dropout(0.25, noise_shape=(None, 1, 1, 4), name="drop_channel")(h)
    out = layers.Dense(3, name="out")(layers.GlobalAveragePooling2D(name="gap")(h))
    return keras.Model(x, out, name="stochastic_depth")


def mobilenet():
    return keras.applications.MobileNetV2(weights=None, input_shape=(96, 96, 3), classes=10)


# The keras.applications backbones tst_keras_backbones imports with kiln-import, at 64x64 to keep
# the test short (the layers are the same at 224x224), with logits as outputs, which show
# differences a softmax would flatten.
def resnet50():
    return keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10, classifier_activation=None)


def efficientnet_b0():
    return keras.applications.EfficientNetB0(weights=None, input_shape=(64, 64, 3), classes=10,
                                             classifier_activation=None)


def mobilenet_v3_small():
    return keras.applications.MobileNetV3Small(weights=None, input_shape=(64, 64, 3), classes=10,
                                               classifier_activation=None)


BUILDERS = {"cnn": cnn, "two_inputs": two_inputs, "separable": separable, "embedding": embedding,
            "sequence_pool": sequence_pool, "masked_pool": masked_pool, "nested": nested, "shared": shared, "unknown": unknown, "mobilenet_v2": mobilenet,
            "normalizers": normalizers, "normalizer_axes": normalizer_axes, "stochastic_depth": stochastic_depth, "resnet50": resnet50, "efficientnet_b0": efficientnet_b0, "mobilenet_v3_small": mobilenet_v3_small}
# Deep nesting, a nested model called twice, TimeDistributed and Bidirectional (keras_nesting.py).
BUILDERS.update({name: (lambda b: lambda: b(keras, layers))(b) for name, b in keras_nesting.BUILDERS.items()})


KERAS2_STYLE = ("cnn", "two_inputs", "nested", "separable")


def keras2_style(src, dst):
    # Keras 2's model_config: inbound nodes as [[layer, node, tensor, kwargs], ...], the input
    # shape as batch_input_shape (on the first layer of a Sequential model, which has no
    # InputLayer), LeakyReLU's slope as alpha, plain dtype names; weights named "<name>:0".
    import h5py
    import shutil
    shutil.copyfile(src, dst)

    def tensors(args, nested):
        # Keras 2 counts the calls of a nested model with an input shape from 1 (its call 0 built
        # it on its own Input); Keras 3 from 0.
        found = []
        if isinstance(args, dict) and args.get("class_name") == "__keras_tensor__":
            h = args["config"]["keras_history"]
            found.append([h[0], h[1] + (1 if h[0] in nested else 0), h[2], {}])
        elif isinstance(args, list):
            for a in args:
                found += tensors(a, nested)
        return found

    def convert(model):
        layers_ = model["config"]["layers"]
        nested = {layer["config"]["name"] for layer in layers_ if layer["class_name"] in ("Sequential", "Functional")}
        for layer in layers_:
            cfg = layer["config"]
            if isinstance(cfg.get("dtype"), dict):
                cfg["dtype"] = cfg["dtype"]["config"]["name"]
            if "batch_shape" in cfg:
                cfg["batch_input_shape"] = cfg.pop("batch_shape")
            if layer["class_name"] == "LeakyReLU":
                cfg["alpha"] = cfg.pop("negative_slope")
            if "inbound_nodes" in layer:
                layer["inbound_nodes"] = [tensors(n["args"], nested) for n in layer["inbound_nodes"]]
            if layer["class_name"] in ("Sequential", "Functional"):
                convert(layer)
        if model["class_name"] == "Sequential" and layers_ and layers_[0]["class_name"] == "InputLayer":
            first = layers_.pop(0)
            layers_[0]["config"]["batch_input_shape"] = first["config"]["batch_input_shape"]
        for key in ("input_layers", "output_layers"):
            v = model["config"].get(key)
            if v and isinstance(v[0], str):
                model["config"][key] = [v]

    with h5py.File(dst, "r+") as f:
        model = json.loads(f.attrs["model_config"])
        convert(model)
        f.attrs["model_config"] = json.dumps(model)
        f.attrs["keras_version"] = "2.15.0"
        weights = f["model_weights"]
        for layer in weights:
            group = weights[layer]
            names = [n.decode() if isinstance(n, bytes) else str(n) for n in group.attrs["weight_names"]]
            for n in names:
                group.move(n, n + ":0")
            if names:
                group.attrs["weight_names"] = [(n + ":0").encode() for n in names]


# Built only when asked for by name: they take most of a minute.
BACKBONES = ("resnet50", "efficientnet_b0", "mobilenet_v3_small")
# Models that scale pixel values 0-255 themselves (their Rescaling and Normalization layers).
PIXEL_INPUTS = ("efficientnet_b0", "mobilenet_v3_small")


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or [n for n in BUILDERS if n not in BACKBONES]
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(7)
    rng = np.random.default_rng(11)
    manifest = {"keras_version": keras.__version__, "models": []}
    for name in names:
        model = BUILDERS[name]()
        randomize_bn(model, rng)
        randomize_normalization(model, rng)
        if name in keras_nesting.BUILDERS:
            keras_nesting.randomize(model, rng)
        inputs = []
        for t in model.inputs:
            shape = [3] + [int(d) for d in t.shape[1:]]
            if "int" in str(t.dtype):
                inputs.append(rng.integers(0, 20, shape).astype("int32"))
            elif name in PIXEL_INPUTS:
                inputs.append(rng.uniform(0, 255, shape).astype("float32"))
            else:
                inputs.append(rng.uniform(-1, 1, shape).astype("float32"))
        pred = model.predict(inputs if len(inputs) > 1 else inputs[0], verbose=0)
        preds = pred if isinstance(pred, list) else [pred]
        model.save(os.path.join(out, name + ".keras"))
        model.save(os.path.join(out, name + ".h5"))
        entry = {"name": name, "inputs": [], "outputs": []}
        for k, x in enumerate(inputs):
            f = f"{name}.in{k}.bin"
            x.astype("<f4").tofile(os.path.join(out, f))
            entry["inputs"].append({"file": f, "shape": list(x.shape)})
        for k, y in enumerate(preds):
            f = f"{name}.out{k}.bin"
            np.asarray(y, dtype="<f4").tofile(os.path.join(out, f))
            entry["outputs"].append({"file": f, "shape": list(np.shape(y))})
        manifest["models"].append(entry)
        if name in KERAS2_STYLE:
            keras2_style(os.path.join(out, name + ".h5"), os.path.join(out, name + ".keras2.h5"))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    damaged(out)


def damaged(out):
    # A config that is not JSON, and one whose second layer has text where a number belongs.
    src = os.path.join(out, "cnn.keras")
    if not os.path.exists(src):
        src = os.path.join(out, "damaged_source.keras")
        cnn().save(src)
    with zipfile.ZipFile(src) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    config = json.loads(parts["config.json"])
    config["config"]["layers"][1]["config"]["filters"] = "eight"
    variants = {"bad_json.keras": b'{"class_name": "Sequential", "config": {"layers": [',
                "bad_field.keras": json.dumps(config).encode()}
    for name, text in variants.items():
        with zipfile.ZipFile(os.path.join(out, name), "w") as z:
            for member, data in parts.items():
                z.writestr(member, text if member == "config.json" else data)
    import h5py
    with h5py.File(os.path.join(out, "plain.h5"), "w") as f:
        f.create_dataset("values", data=np.arange(6, dtype="float32"))


if __name__ == "__main__":
    main()
