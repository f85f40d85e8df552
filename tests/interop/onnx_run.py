# SPDX-License-Identifier: Apache-2.0
# Runs an ONNX model's first input/output with onnxruntime on raw float32 data.
# usage: onnx_run.py MODEL.onnx INPUT.f32 N,C,H,W OUTPUT.f32
import sys

import numpy as np
import onnxruntime as ort


def main():
    model, inp, shape, out = sys.argv[1:5]
    dims = [int(d) for d in shape.split(",")]
    x = np.fromfile(inp, dtype=np.float32).reshape(dims)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    y = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    y.astype(np.float32).tofile(out)


if __name__ == "__main__":
    main()
