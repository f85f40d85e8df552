# SPDX-License-Identifier: Apache-2.0
# The ONNX side of tst_onnx_round_trip (ONNX -> kiln-import -> kiln-export -> ONNX):
#   onnx_round_trip.py build DIR     small models written with onnx.helper, as exporters write them
#   onnx_round_trip.py torch DIR     small models exported by PyTorch (run with a Python that has torch)
#   onnx_round_trip.py compare ORIGINAL.onnx BACK.onnx REPORT.json BATCH
# compare runs both files in onnxruntime on the same random inputs (an NCHW input of the original,
# as kiln-import's report names it, goes to the re-exported file as NHWC) and prints one JSON line
# with the largest differences per output.
import json
import os
import sys

import numpy as np

BATCH = 2


def build(out_dir):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)

    def init(name, shape, scale=0.3, positive=False):
        a = rng.standard_normal(shape).astype(np.float32) * scale
        if positive:
            a = np.abs(a) + 0.5
        return numpy_helper.from_array(a, name)

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, dtype=np.int64), name)

    def floats(name, values):
        return numpy_helper.from_array(np.array(values, dtype=np.float32), name)

    def save(name, nodes, inputs, outputs, inits, opset=13):
        graph = helper.make_graph(nodes, name, inputs, outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnx.helper")
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))

    def vi(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    def bn(prefix, x, y, c):
        return (helper.make_node("BatchNormalization", [x, prefix + "_g", prefix + "_b", prefix + "_m", prefix + "_v"], [y],
                                 epsilon=1e-3),
                [init(prefix + "_g", [c], positive=True), init(prefix + "_b", [c]), init(prefix + "_m", [c]),
                 init(prefix + "_v", [c], positive=True)])

    # A classifier as PyTorch writes one: a strided convolution with padding 1, batch norm, ReLU,
    # max pooling, a depthwise convolution with ReLU6 (Clip 0..6), a pointwise one, global pooling,
    # Flatten, Gemm and Softmax.
    n, i = [], []
    n.append(helper.make_node("Conv", ["image", "c1_w", "c1_b"], ["c1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    i += [init("c1_w", [8, 3, 3, 3]), init("c1_b", [8])]
    node, p = bn("bn1", "c1", "b1", 8)
    n.append(node)
    i += p
    n.append(helper.make_node("Relu", ["b1"], ["r1"]))
    n.append(helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    n.append(helper.make_node("Conv", ["p1", "dw_w"], ["dw"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8))
    i.append(init("dw_w", [8, 1, 3, 3]))
    n.append(helper.make_node("Clip", ["dw", "lo", "hi"], ["r6"]))
    i += [floats("lo", 0.0), floats("hi", 6.0)]
    n.append(helper.make_node("Conv", ["r6", "pw_w", "pw_b"], ["pw"], kernel_shape=[1, 1]))
    i += [init("pw_w", [16, 8, 1, 1]), init("pw_b", [16])]
    n.append(helper.make_node("GlobalAveragePool", ["pw"], ["gap"]))
    n.append(helper.make_node("Flatten", ["gap"], ["flat"], axis=1))
    n.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1))
    i += [init("fc_w", [10, 16]), init("fc_b", [10])]
    n.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=1))
    save("classifier", n, [vi("image", [BATCH, 3, 32, 24])], [vi("probs", [BATCH, 10])], i)

    # Blocks of segmentation and mobile networks: squeeze-and-excitation (ReduceMean over height and
    # width with keepdims, Sigmoid, Mul), a residual Add, nearest upsampling (Resize with scales),
    # explicit zero Pad, Concat on channels, ReduceMax without keepdims, a Reshape to [batch, -1]
    # written with the literal batch, LeakyReLU and HardSwish.
    n, i = [], []
    n.append(helper.make_node("Conv", ["x", "a_w", "a_b"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    i += [init("a_w", [8, 4, 3, 3]), init("a_b", [8])]
    n.append(helper.make_node("Relu", ["a"], ["ar"]))
    n.append(helper.make_node("ReduceMean", ["ar"], ["se_mean"], axes=[2, 3], keepdims=1))
    n.append(helper.make_node("Conv", ["se_mean", "se1_w", "se1_b"], ["se1"], kernel_shape=[1, 1]))
    i += [init("se1_w", [2, 8, 1, 1]), init("se1_b", [2])]
    n.append(helper.make_node("Relu", ["se1"], ["se1r"]))
    n.append(helper.make_node("Conv", ["se1r", "se2_w", "se2_b"], ["se2"], kernel_shape=[1, 1]))
    i += [init("se2_w", [8, 2, 1, 1]), init("se2_b", [8])]
    n.append(helper.make_node("Sigmoid", ["se2"], ["gate"]))
    n.append(helper.make_node("Mul", ["ar", "gate"], ["scaled"]))
    n.append(helper.make_node("Add", ["scaled", "a"], ["res"]))
    n.append(helper.make_node("Resize", ["res", "", "up_scales"], ["up"], mode="nearest", coordinate_transformation_mode="asymmetric",
                              nearest_mode="floor"))
    i.append(floats("up_scales", [1, 1, 2, 2]))
    n.append(helper.make_node("Pad", ["up", "pads"], ["padded"], mode="constant"))
    i.append(ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]))
    n.append(helper.make_node("Conv", ["padded", "b_w"], ["b"], kernel_shape=[3, 3], strides=[4, 4]))
    i.append(init("b_w", [6, 8, 3, 3]))
    n.append(helper.make_node("LeakyRelu", ["b"], ["bl"], alpha=0.1))
    n.append(helper.make_node("MaxPool", ["x"], ["xp"], kernel_shape=[2, 2], strides=[2, 2]))
    n.append(helper.make_node("Concat", ["bl", "xp"], ["cat"], axis=1))
    n.append(helper.make_node("HardSwish", ["cat"], ["hs"]))
    n.append(helper.make_node("ReduceMax", ["hs"], ["gmax"], axes=[2, 3], keepdims=0))
    n.append(helper.make_node("Reshape", ["hs", "flat_shape"], ["hs_flat"]))
    i.append(ints("flat_shape", [BATCH, -1]))
    n.append(helper.make_node("Gemm", ["hs_flat", "h_w"], ["h"], transB=1))
    i.append(init("h_w", [5, 10 * 8 * 8], scale=0.05))
    n.append(helper.make_node("Gemm", ["gmax", "g_w", "g_b"], ["g"], transB=1))
    i += [init("g_w", [5, 10]), init("g_b", [5])]
    n.append(helper.make_node("Add", ["h", "g"], ["out"]))
    save("blocks", n, [vi("x", [BATCH, 4, 16, 16])], [vi("out", [BATCH, 5])], i, opset=14)

    # Feature vectors: Sum of three inputs, MatMul with a bias Add, Unsqueeze (axes as an input,
    # opset 13) to [batch, 1, features], LayerNormalization, a Reshape to [batch, 4, 2] with 0 and
    # -1, ReduceMean over the last axis, Tanh, Sub and a Mul by a number.
    n, i = [], []
    n.append(helper.make_node("Sum", ["u", "v", "w"], ["s"]))
    n.append(helper.make_node("MatMul", ["s", "m1"], ["m"]))
    i.append(init("m1", [6, 8]))
    n.append(helper.make_node("Add", ["m", "m1_b"], ["mb"]))
    i.append(init("m1_b", [8]))
    n.append(helper.make_node("Relu", ["mb"], ["mr"]))
    n.append(helper.make_node("Unsqueeze", ["mr", "ax1"], ["mu"]))
    i.append(ints("ax1", [1]))
    n.append(helper.make_node("LayerNormalization", ["mu", "ln_g", "ln_b"], ["ln"], axis=-1, epsilon=1e-5))
    i += [init("ln_g", [8], positive=True), init("ln_b", [8])]
    n.append(helper.make_node("Reshape", ["ln", "r_shape"], ["lr"]))
    i.append(ints("r_shape", [0, 4, -1]))
    n.append(helper.make_node("ReduceMean", ["lr"], ["lm"], axes=[2], keepdims=0))
    n.append(helper.make_node("Tanh", ["lm"], ["t"]))
    n.append(helper.make_node("MatMul", ["u", "m2"], ["u4"]))
    n.append(helper.make_node("Sub", ["t", "u4"], ["d"]))
    i.append(init("m2", [6, 4]))
    n.append(helper.make_node("Mul", ["d", "half"], ["y"]))
    i.append(floats("half", 0.5))
    save("vectors", n, [vi("u", [BATCH, 6]), vi("v", [BATCH, 6]), vi("w", [BATCH, 6])], [vi("y", [BATCH, 4])], i, opset=17)


def torch_models(out_dir):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(3)

    class Small(nn.Module):
        # A ResNet-style stem and block, squeeze-and-excitation, a decoder step (upsampling and a
        # skip connection) and a linear head, in the idioms torchvision and segmentation code use.
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
            self.pool = nn.MaxPool2d(3, stride=2, padding=1)
            self.c1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(16)
            self.c2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(16)
            self.se1 = nn.Conv2d(16, 4, 1)
            self.se2 = nn.Conv2d(4, 16, 1)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.fuse = nn.Conv2d(32, 24, 1)
            self.fc = nn.Linear(24, 7)
            for m in self.modules():
                if isinstance(m, nn.BatchNorm2d):
                    nn.init.uniform_(m.weight, 0.5, 1.5)
                    nn.init.uniform_(m.bias, -0.2, 0.2)
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)

        def forward(self, x):
            x = self.pool(self.stem(x))
            y = F.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            s = torch.sigmoid(self.se2(F.relu(self.se1(y.mean((2, 3), keepdim=True)))))
            y = F.relu(x + y * s)
            d = F.hardswish(self.dw(F.max_pool2d(y, 2)))
            u = F.interpolate(d, scale_factor=2, mode="nearest")
            z = F.relu6(self.fuse(torch.cat([y, u], dim=1)))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(z, 1), 1))

    class Upsampler(nn.Module):
        # Bilinear upsampling (align_corners=False), an explicit F.pad and a sigmoid head.
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 8, 3)
            self.o = nn.Conv2d(8, 4, 3)
            self.fc = nn.Linear(4 * 4 * 4, 6)

        def forward(self, x):
            x = F.interpolate(F.leaky_relu(self.c(x), 0.2), scale_factor=2, mode="bilinear", align_corners=False)
            x = torch.tanh(self.o(F.pad(x, (1, 1, 1, 1))))
            return torch.sigmoid(self.fc(torch.flatten(F.max_pool2d(x, 2), 1)))

    for name, model, shape in (("torch_small", Small(), (BATCH, 3, 32, 32)), ("torch_upsampler", Upsampler(), (BATCH, 3, 6, 6))):
        model.eval()
        torch.onnx.export(model, torch.randn(*shape), os.path.join(out_dir, name + ".onnx"), input_names=["input"], output_names=["output"],
                          opset_version=13, do_constant_folding=True)


def compare(original, back, report_path, batch):
    import onnxruntime as ort

    with open(report_path) as f:
        report = json.load(f)
    channel_first = {i["name"]: i.get("onnx_layout") == "NCHW" for i in report["inputs"]}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    a = ort.InferenceSession(original, opts, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(back, opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(11)
    feeds_a, feeds_b = {}, {}
    for inp in a.get_inputs():
        shape = [batch if not isinstance(d, int) else d for d in inp.shape]
        shape[0] = batch
        x = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        feeds_a[inp.name] = x
        feeds_b[inp.name] = np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1))) if channel_first.get(inp.name) else x
    names_b = [i.name for i in b.get_inputs()]
    if sorted(names_b) != sorted(feeds_b):
        raise SystemExit("the re-exported model takes inputs %s, the original %s" % (names_b, sorted(feeds_b)))
    ya = a.run(None, feeds_a)
    yb = b.run(None, feeds_b)
    if len(ya) != len(yb):
        raise SystemExit("the re-exported model has %d outputs, the original %d" % (len(yb), len(ya)))
    result = []
    for k, (p, q) in enumerate(zip(ya, yb)):
        p = np.asarray(p, dtype=np.float64)
        q = np.asarray(q, dtype=np.float64)
        if p.size != q.size:
            raise SystemExit("output %d has %d values, the original %d" % (k, q.size, p.size))
        p = p.reshape(-1)
        q = q.reshape(-1)
        diff = np.abs(p - q)
        result.append({"output": a.get_outputs()[k].name, "shape": list(ya[k].shape), "back_shape": list(yb[k].shape),
                       "largest": float(np.abs(p).max()), "max_abs_diff": float(diff.max()),
                       "max_excess": float((diff / (1e-4 + 1e-4 * np.abs(p))).max())})
    print(json.dumps({"outputs": result}))


def main():
    cmd = sys.argv[1]
    if cmd == "build":
        build(sys.argv[2])
    elif cmd == "torch":
        torch_models(sys.argv[2])
    elif cmd == "compare":
        compare(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
