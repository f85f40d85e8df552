# SPDX-License-Identifier: Apache-2.0
# Runs Kiln's int8 (full-integer) .tflite exports in TensorFlow Lite's interpreter. Reads a
# manifest of models; each has the int8 file and either raw little-endian float32 input files with
# Kiln's reference outputs (its int8 simulation, "reference") or IDX test images and labels with
# the float model beside it ("float_file", "images", "labels", "count"). A model with int8 inputs
# and outputs is fed and read through their scales and zero points. Prints one JSON line per
# model: the largest difference from the reference, the output grid step, accuracies and top-1
# agreement, the operators, and the operators that are not integer-only. Exits 1 when any model
# fails to run.
import gzip
import json
import sys

import numpy as np


def load_raw(path, shape):
    return np.fromfile(path, dtype="<f4").reshape(shape)


def idx(path, count):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * k:8 + 4 * k], "big") for k in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)[:count]


def run(path, feeds):
    """Runs the model on float feeds. An int8 model input gets the feed quantised with the
    input's scale and zero point, an int8 output is dequantised with its own; both are what a
    caller of a model with int8 inputs and outputs does."""
    import tensorflow as tf

    # Without the default XNNPACK delegate, so that every operator shows in the operator list.
    resolver = tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    interp = tf.lite.Interpreter(model_path=path, experimental_op_resolver_type=resolver)
    by_name = {d["name"]: d for d in interp.get_input_details()}
    for name, x in feeds.items():
        interp.resize_tensor_input(by_name[name]["index"], list(x.shape))
    interp.allocate_tensors()
    for name, x in feeds.items():
        d = by_name[name]
        if d["dtype"] == np.int8:
            scale, zero_point = d["quantization"]
            x = np.clip(np.round(x / scale) + zero_point, -128, 127).astype(np.int8)
        interp.set_tensor(d["index"], x)
    interp.invoke()
    outs = {}
    for d in interp.get_output_details():
        y = interp.get_tensor(d["index"])
        if d["dtype"] == np.int8:
            scale, zero_point = d["quantization"]
            y = (y.astype(np.float32) - zero_point) * scale
        outs[d["name"]] = y
    return interp, outs


def integer_report(interp):
    """Operators and those with a float tensor other than QUANTIZE's input and DEQUANTIZE's output."""
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    ops, float_ops, versions = set(), set(), {}
    for op in interp._get_ops_details():
        name = op["op_name"]
        ops.add(name)
        ins = [i for i in op["inputs"] if i >= 0]
        outs = list(op["outputs"])
        if name == "QUANTIZE" and tensors[ins[0]]["dtype"] == np.float32:
            ins = []
        if name == "DEQUANTIZE":
            outs = []
        if any(tensors[t]["dtype"] == np.float32 for t in ins + outs):
            float_ops.add(name)
    return sorted(ops), sorted(float_ops)


def output_step(interp, name):
    for d in interp.get_output_details():
        if d["name"] == name and d["dtype"] == np.int8:
            return float(d["quantization"][0])
    for t in interp.get_tensor_details():
        if t["name"] == name + "/int8":
            return float(t["quantization_parameters"]["scales"][0])
    return None


def main():
    manifest = json.load(open(sys.argv[1]))
    failed = False
    for m in manifest["models"]:
        res = {"name": m["name"]}
        try:
            if "images" in m:
                x = idx(m["images"], m["count"]).astype(np.float32)[..., None] / 255.0
                y = idx(m["labels"], m["count"]).astype(np.int64)
                name = m["input"]
                _, fo = run(m["float_file"], {name: x})
                interp, qo = run(m["file"], {name: x})
                f, q = next(iter(fo.values())), next(iter(qo.values()))
                res["samples"] = int(len(y))
                res["float_accuracy"] = float((f.argmax(1) == y).mean())
                res["int8_accuracy"] = float((q.argmax(1) == y).mean())
                res["agreement"] = float((f.argmax(1) == q.argmax(1)).mean())
                res["max_abs_diff_float"] = float(np.max(np.abs(f - q)))
                res["output_step"] = output_step(interp, m["output"])
            else:
                feeds = {i["name"]: load_raw(i["file"], i["shape"]) for i in m["inputs"]}
                interp, outs = run(m["file"], feeds)
                res["per_output"] = {}
                for o in m["outputs"]:
                    got = outs[o["name"]]
                    want = load_raw(o["reference"], o["shape"])
                    if got.shape != want.shape:
                        raise ValueError("output %s has shape %s, Kiln's %s" % (o["name"], got.shape, want.shape))
                    step = output_step(interp, o["name"])
                    res["per_output"][o["name"]] = {"max_abs_diff": float(np.max(np.abs(got - want))), "step": step}
            res["input_types"] = [str(np.dtype(d["dtype"])) for d in interp.get_input_details()]
            res["output_types"] = [str(np.dtype(d["dtype"])) for d in interp.get_output_details()]
            # (name, scale, zero point) of each model input and output as the interpreter reads them.
            res["input_quantization"] = [[d["name"], float(d["quantization"][0]), int(d["quantization"][1])]
                                         for d in interp.get_input_details()]
            res["output_quantization"] = [[d["name"], float(d["quantization"][0]), int(d["quantization"][1])]
                                          for d in interp.get_output_details()]
            res["operators"], res["float_operators"] = integer_report(interp)
        except Exception as e:  # report and go on with the next model
            res["error"] = repr(e)
            failed = True
        print(json.dumps(res), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
