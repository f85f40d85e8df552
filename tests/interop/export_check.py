# SPDX-License-Identifier: Apache-2.0
# Checks Kiln's exported models with the real tools: onnx.checker (full check), onnxruntime and
# TensorFlow's SavedModel loader. Reads manifest.json written by tst_export_interop: per model the
# export folder, the input tensors and Kiln's outputs as raw little-endian float32 files (with the
# ONNX output's name, which differs for an Input that is also an output).
# Prints one JSON line per model and exits 1 when any check fails.
import json
import sys

import numpy as np


def load_raw(path, shape):
    return np.fromfile(path, dtype="<f4").reshape(shape)


def main():
    manifest = json.load(open(sys.argv[1]))
    import onnx
    import onnxruntime as ort
    import tensorflow as tf

    failed = False
    for m in manifest["models"]:
        res = {"name": m["name"]}
        inputs = {i["name"]: load_raw(i["file"], i["shape"]) for i in m["inputs"]}
        expected = {o["name"]: load_raw(o["file"], o["shape"]) for o in m["outputs"]}
        try:
            model = onnx.load(m["dir"] + "/model.onnx")
            onnx.checker.check_model(model, full_check=True)
            res["checker"] = "ok"
            sess = ort.InferenceSession(m["dir"] + "/model.onnx", providers=["CPUExecutionProvider"])
            res["ort_input_shape"] = [str(d) for d in sess.get_inputs()[0].shape]
            feeds = {}
            for i in sess.get_inputs():
                x = inputs[i.name]
                feeds[i.name] = x.astype(np.int32) if i.type == "tensor(int32)" else x
            outs = sess.run([o["onnx_name"] for o in m["outputs"]], feeds)
            res["ort_max_abs_diff"] = max(float(np.max(np.abs(o - expected[n["name"]]))) for o, n in zip(outs, m["outputs"]))
            res["metadata"] = sess.get_modelmeta().custom_metadata_map
        except Exception as e:  # report and go on with the next check
            res["onnx_error"] = repr(e)
            failed = True
        try:
            loaded = tf.saved_model.load(m["dir"])
            fn = loaded.signatures["serving_default"]
            kwargs = {k: tf.constant(v) for k, v in inputs.items()}
            for k, spec in fn.structured_input_signature[1].items():
                kwargs[k] = tf.cast(kwargs[k], spec.dtype)
            outs = fn(**kwargs)
            res["tf_max_abs_diff"] = max(float(np.max(np.abs(outs[n].numpy() - expected[n]))) for n in expected)
        except Exception as e:
            res["tf_error"] = repr(e)
            failed = True
        for key in ("ort_max_abs_diff", "tf_max_abs_diff"):
            if key in res and not res[key] <= 1e-4:
                failed = True
        print(json.dumps(res), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
