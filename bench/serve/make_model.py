# SPDX-License-Identifier: Apache-2.0
# Writes seeded weights (safetensors) for a Kiln project made of Input, Flatten and Dense nodes,
# and, when asked, the same network as an ONNX model (the fallback peer when kiln-export is not
# available). Usage: make_model.py PROJECT --seed N --weights OUT [--onnx OUT]
import argparse
import json
import struct

import numpy as np


def dense_layers(project):
    nodes = project["graph"]["nodes"]
    shape = None
    layers = []
    for n in nodes:
        if n["op"] == "Input":
            shape = int(np.prod(n["attrs"]["shape"]))
        elif n["op"] == "Flatten":
            pass
        elif n["op"] == "Dense":
            units = int(n["attrs"]["units"])
            layers.append((n["name"], shape, units, n["attrs"].get("activation", "linear")))
            shape = units
        else:
            raise SystemExit(f"make_model.py handles Input/Flatten/Dense only, not {n['op']}")
    return layers


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, arr in tensors:
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("project")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--onnx")
    args = ap.parse_args()
    project = json.load(open(args.project))
    rng = np.random.default_rng(args.seed)
    tensors, layers = [], dense_layers(project)
    for name, fan_in, units, _ in layers:
        limit = np.sqrt(6.0 / (fan_in + units))
        tensors.append((f"{name}/kernel", rng.uniform(-limit, limit, (fan_in, units)).astype(np.float32)))
        tensors.append((f"{name}/bias", rng.uniform(-0.05, 0.05, (units,)).astype(np.float32)))
    write_safetensors(args.weights, sorted(tensors, key=lambda t: t[0]))
    if args.onnx:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        inp = next(n for n in project["graph"]["nodes"] if n["op"] == "Input")
        dims = ["N"] + list(inp["attrs"]["shape"])
        nodes = [helper.make_node("Flatten", [inp["name"]], ["flat"], axis=1)]
        inits, prev = [], "flat"
        w = dict(tensors)
        for name, _, _, act in layers:
            inits += [numpy_helper.from_array(w[f"{name}/kernel"], f"{name}_kernel"),
                      numpy_helper.from_array(w[f"{name}/bias"], f"{name}_bias")]
            out = name if act in ("linear", None) else f"{name}_pre"
            nodes.append(helper.make_node("Gemm", [prev, f"{name}_kernel", f"{name}_bias"], [out]))
            if act == "relu":
                nodes.append(helper.make_node("Relu", [out], [name]))
            elif act not in ("linear", None):
                raise SystemExit(f"activation {act} not handled")
            prev = name
        graph = helper.make_graph(nodes, "kiln_bench", [helper.make_tensor_value_info(inp["name"], TensorProto.FLOAT, dims)],
                                  [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["N", layers[-1][2]])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, args.onnx)


if __name__ == "__main__":
    main()
