# SPDX-License-Identifier: Apache-2.0
# Runs an ONNX model with onnxruntime on every input it takes and writes every output asked for:
# MANIFEST.json names the model, its inputs (ONNX name, raw little-endian float32 file, shape;
# cast to the input's own type, e.g. int32 indices) and the outputs (ONNX name, file to write as
# float32). onnx.checker (full check) runs first. Prints one JSON line: the checker's verdict and
# the outputs' shapes.
# Usage: onnx_run_inputs.py MANIFEST.json
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort

TYPES = {"tensor(float)": np.float32, "tensor(int32)": np.int32, "tensor(int64)": np.int64}


def main():
    manifest = json.load(open(sys.argv[1]))
    onnx.checker.check_model(onnx.load(manifest["model"]), full_check=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(manifest["model"], opts, providers=["CPUExecutionProvider"])
    given = {i["name"]: np.fromfile(i["file"], dtype="<f4").reshape(i["shape"]) for i in manifest["inputs"]}
    feeds = {i.name: given[i.name].astype(TYPES[i.type]) for i in sess.get_inputs()}
    outs = sess.run([o["name"] for o in manifest["outputs"]], feeds)
    for o, y in zip(manifest["outputs"], outs):
        np.asarray(y, dtype="<f4").tofile(o["file"])
    print(json.dumps({"checker": "ok", "shapes": {o["name"]: list(np.shape(y)) for o, y in zip(manifest["outputs"], outs)}}))


if __name__ == "__main__":
    main()
