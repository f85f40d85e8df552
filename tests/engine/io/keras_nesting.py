# SPDX-License-Identifier: Apache-2.0
# Keras models with models nested more than one level deep, a nested model called twice and the
# wrapper layers TimeDistributed and Bidirectional, written alike by Keras 3 (keras_models.py) and
# Keras 2 (tf_keras, keras2_models.py): each builder takes the Keras package and its layers module.


def deep_nested(keras, layers):
    # A Functional model holding a Sequential "mid" that holds a Functional block (a residual Dense),
    # a Dense and a Sequential "core" (BatchNormalization, Dense): layers three models deep.
    fin = keras.Input((8,), name="block_in")
    fh = layers.Dense(8, activation="relu", name="block_dense")(fin)
    block = keras.Model(fin, layers.Add(name="block_add")([fh, fin]), name="block")
    core = keras.Sequential([keras.Input((8,)), layers.BatchNormalization(name="core_bn"),
                             layers.Dense(6, activation="tanh", name="core_dense")], name="core")
    mid = keras.Sequential([keras.Input((8,)), block, layers.Dense(8, name="mid_dense"), core], name="mid")
    x = keras.Input((8,), name="features")
    return keras.Model(x, layers.Dense(3, name="head")(mid(x)), name="deep_nested")


def deep_functional(keras, layers):
    # Functional models three deep, the innermost called twice inside the middle one.
    fin = keras.Input((6,), name="cell_in")
    cell = keras.Model(fin, layers.Dense(6, activation="tanh", name="cell_dense")(fin), name="cell")
    min_ = keras.Input((6,), name="mid_in")
    twice = cell(cell(min_))
    mid = keras.Model(min_, layers.Dense(4, name="mid_dense")(layers.Concatenate(name="mid_cat")([twice, min_])), name="mid")
    x = keras.Input((6,), name="features")
    return keras.Model(x, layers.Dense(2, name="head")(mid(x)), name="deep_functional")


def deep_sequential(keras, layers):
    # Sequential models three deep, the outermost the model itself.
    core = keras.Sequential([keras.Input((5,)), layers.Dense(5, activation="relu", name="core_dense")], name="core")
    mid = keras.Sequential([keras.Input((5,)), layers.Dense(5, name="mid_dense"), core], name="mid")
    return keras.Sequential([keras.Input((4,)), layers.Dense(5, name="stem"), mid, layers.Dense(3, name="head")],
                            name="deep_sequential")


def shared_nested(keras, layers):
    # One Sequential model (a Dense, then a Functional block of a Dense and a LayerNormalization)
    # called on two inputs: both calls share its weights.
    fin = keras.Input((6,), name="inner_in")
    inner = keras.Model(fin, layers.LayerNormalization(name="inner_norm")(layers.Dense(5, name="inner_dense")(fin)), name="inner")
    tower = keras.Sequential([keras.Input((6,)), layers.Dense(6, activation="relu", name="tower_dense"), inner], name="tower")
    a = keras.Input((6,), name="left")
    b = keras.Input((6,), name="right")
    s = layers.Subtract(name="difference")([tower(a), tower(b)])
    return keras.Model([a, b], layers.Dense(2, name="out")(s), name="shared_nested")


def time_distributed(keras, layers):
    # TimeDistributed over layers that act on each position's last axis, on a sequence [5, 4] and
    # on a sequence of grids [3, 4, 5] (a Dense of rank 4), and a plain Dense on a sequence.
    x = keras.Input((5, 4), name="steps")
    h = layers.TimeDistributed(layers.Dense(6, activation="relu", name="proj"), name="td_proj")(x)
    h = layers.TimeDistributed(layers.Dropout(0.3, name="drop"), name="td_drop")(h)
    h = layers.TimeDistributed(layers.Activation("swish", name="act"), name="td_act")(h)
    h = layers.TimeDistributed(layers.LayerNormalization(name="norm"), name="td_norm")(h)
    h = layers.Dense(7, activation="gelu", name="per_step")(h)
    g = keras.Input((3, 4, 5), name="grids")
    k = layers.TimeDistributed(layers.Dense(2, activation="sigmoid", name="cell"), name="td_cell")(g)
    k = layers.TimeDistributed(layers.BatchNormalization(name="bn"), name="td_bn")(k)
    h = layers.Concatenate(name="joined")([layers.Flatten(name="flat_steps")(h), layers.Flatten(name="flat_grids")(k)])
    return keras.Model([x, g], layers.Dense(3, name="out")(h), name="time_distributed")


def wrappers(keras, layers):
    # Bidirectional(LSTM) between two mapped TimeDistributed(Dense) layers: Kiln has no recurrent
    # layer, so it becomes a placeholder keeping its weights.
    x = keras.Input((5, 4), name="steps")
    h = layers.TimeDistributed(layers.Dense(6, name="proj"), name="td_proj")(x)
    h = layers.Bidirectional(layers.LSTM(3, return_sequences=True, name="lstm"), name="bilstm")(h)
    h = layers.TimeDistributed(layers.Dense(2, name="score"), name="td_score")(h)
    return keras.Model(x, layers.Dense(2, name="out")(layers.Flatten(name="flat")(h)), name="wrappers")


def td_conv(keras, layers):
    # TimeDistributed(Conv2D) over a sequence of images: each step is convolved on its own, which
    # Kiln cannot express; a placeholder keeping the convolution's weights.
    x = keras.Input((3, 6, 6, 2), name="frames")
    h = layers.TimeDistributed(layers.Conv2D(4, 3, name="conv"), name="td_conv")(x)
    return keras.Model(x, layers.Dense(2, name="out")(layers.Flatten(name="flat")(h)), name="td_conv")


BUILDERS = {"deep_nested": deep_nested, "deep_functional": deep_functional, "deep_sequential": deep_sequential,
            "shared_nested": shared_nested, "time_distributed": time_distributed,
            "wrappers": wrappers, "td_conv": td_conv}


def randomize(model, rng):
    # Every weight random (variances positive), so that each one reaching the wrong place shows.
    for v in model.weights:
        lo, hi = (0.5, 1.5) if "variance" in v.name else (-0.6, 0.6)
        v.assign(rng.uniform(lo, hi, tuple(v.shape)).astype("float32"))
