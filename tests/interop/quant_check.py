# SPDX-License-Identifier: Apache-2.0
# Runs a float ONNX model and its int8 QDQ twin with onnxruntime on IDX images (8-bit pixels
# scaled by 1/255, NHWC with one channel) and prints one JSON line: the accuracy of each, the
# share of samples where their top-1 classes agree, and the operators of the int8 model.
# usage: quant_check.py FLOAT.onnx INT8.onnx IMAGES.idx.gz LABELS.idx.gz COUNT
import gzip
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * k:8 + 4 * k], "big") for k in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    float_path, int8_path, images, labels, count = sys.argv[1:6]
    n = int(count)
    x = idx(images)[:n].astype(np.float32)[..., None] / 255.0
    y = idx(labels)[:n].astype(np.int64)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    model = onnx.load(int8_path)
    onnx.checker.check_model(model, full_check=True)
    ops = sorted({n.op_type for n in model.graph.node})
    preds = []
    for path in (float_path, int8_path):
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        out = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        preds.append(out.argmax(axis=1))
    print(json.dumps({
        "samples": n,
        "float_accuracy": float((preds[0] == y).mean()),
        "int8_accuracy": float((preds[1] == y).mean()),
        "agreement": float((preds[0] == preds[1]).mean()),
        "int8_ops": ops,
    }))


if __name__ == "__main__":
    main()
