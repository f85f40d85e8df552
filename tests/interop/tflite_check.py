# SPDX-License-Identifier: Apache-2.0
# Runs Kiln's .tflite exports in TensorFlow Lite's interpreter (tf.lite.Interpreter). Reads the
# manifest written by tst_tflite_interop: per model the .tflite file, the input tensors and Kiln's
# outputs as raw little-endian float32 files. The interpreter's batch is resized to the
# manifest's. Prints one JSON line per model and exits 1 when any model fails to run.
import json
import sys

import numpy as np


def load_raw(path, shape):
    return np.fromfile(path, dtype="<f4").reshape(shape)


def main():
    manifest = json.load(open(sys.argv[1]))
    import tensorflow as tf

    failed = False
    for m in manifest["models"]:
        res = {"name": m["name"]}
        try:
            interp = tf.lite.Interpreter(model_path=m["file"])
            by_name = {d["name"]: d for d in interp.get_input_details()}
            for i in m["inputs"]:
                interp.resize_tensor_input(by_name[i["name"]]["index"], i["shape"])
            interp.allocate_tensors()
            res["input_signature"] = [int(d) for d in interp.get_input_details()[0]["shape_signature"]]
            for i in m["inputs"]:
                interp.set_tensor(by_name[i["name"]]["index"], load_raw(i["file"], i["shape"]))
            interp.invoke()
            outs = {d["name"]: d for d in interp.get_output_details()}
            diffs = []
            res["per_output"] = {}
            for o in m["outputs"]:
                got = interp.get_tensor(outs[o["name"]]["index"])
                want = load_raw(o["file"], o["shape"])
                if got.shape != want.shape:
                    raise ValueError("output %s has shape %s, Kiln's %s" % (o["name"], got.shape, want.shape))
                diffs.append(float(np.max(np.abs(got - want))))
                res["per_output"][o["name"]] = diffs[-1]
            res["max_abs_diff"] = max(diffs)
            res["operators"] = sorted({op["op_name"] for op in interp._get_ops_details()})
        except Exception as e:  # report and go on with the next model
            res["error"] = repr(e)
            failed = True
        print(json.dumps(res), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
