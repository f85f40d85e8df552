#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# PyTorch peer of train_gpu: builds the same network from each Kiln project file, trains it on a
# device-resident synthetic batch and prints the median samples/s over timed windows, in fp32
# (TF32 allowed, as Kiln), AMP fp16 (GradScaler) and AMP bf16, channels_last for convolutional
# models, cudnn.benchmark on.
#
#   python3 bench/train_gpu/torch_train_gpu.py [--batch N] [--precision fp32,fp16,bf16] project.kiln ...
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def pair(v, default):
    if v is None:
        v = default
    if isinstance(v, int):
        return (v, v)
    return tuple(v) if len(v) == 2 else (v[0], v[0])


def activation(name):
    return {"relu": nn.ReLU(), "relu6": nn.ReLU6(), "sigmoid": nn.Sigmoid(), "tanh": nn.Tanh(),
            "gelu": nn.GELU(), "softmax": nn.Softmax(dim=1)}.get(name or "linear", nn.Identity())


class KilnNet(nn.Module):
    """The graph of a Kiln project as a PyTorch module (NCHW inside; 'same' padding symmetric,
    which gives the same output sizes and the same work as Kiln's)."""

    def __init__(self, graph):
        super().__init__()
        self.nodes = graph["nodes"]
        self.outputs = graph.get("outputs") or [self.nodes[-1]["name"]]
        self.layers = nn.ModuleDict()
        shapes = {}
        for n in self.nodes:
            op, a, name = n["op"], n.get("attrs", {}), n["name"]
            ins = [shapes[i] for i in n.get("inputs", [])]
            key = name.replace(".", "_")
            if op == "Input":
                s = a["shape"]
                shapes[name] = (s[2], s[0], s[1]) if len(s) == 3 else tuple(s)
            elif op == "Conv2D":
                c, h, w = ins[0]
                k, st, dl = pair(a.get("kernel_size"), 3), pair(a.get("strides"), 1), pair(a.get("dilation_rate"), 1)
                same = a.get("padding", "valid") == "same"
                pad = (dl[0] * (k[0] - 1) // 2, dl[1] * (k[1] - 1) // 2) if same else (0, 0)
                conv = nn.Conv2d(c, a["filters"], k, st, pad, dl, a.get("groups", 1), a.get("use_bias", True))
                self.layers[key] = nn.Sequential(conv, activation(a.get("activation")))
                oh = -(-h // st[0]) if same else (h - dl[0] * (k[0] - 1) - 1) // st[0] + 1
                ow = -(-w // st[1]) if same else (w - dl[1] * (k[1] - 1) - 1) // st[1] + 1
                shapes[name] = (a["filters"], oh, ow)
            elif op in ("MaxPooling2D", "AveragePooling2D"):
                c, h, w = ins[0]
                p = pair(a.get("pool_size"), 2)
                st = pair(a.get("strides") or list(p), 2)
                same = a.get("padding", "valid") == "same"
                pad = (p[0] // 2, p[1] // 2) if same else (0, 0)
                cls = nn.MaxPool2d if op == "MaxPooling2D" else nn.AvgPool2d
                self.layers[key] = cls(p, st, pad) if op == "MaxPooling2D" else cls(p, st, pad, count_include_pad=False)
                oh = -(-h // st[0]) if same else (h - p[0]) // st[0] + 1
                ow = -(-w // st[1]) if same else (w - p[1]) // st[1] + 1
                shapes[name] = (c, oh, ow)
            elif op == "BatchNormalization":
                self.layers[key] = nn.BatchNorm2d(ins[0][0]) if len(ins[0]) == 3 else nn.BatchNorm1d(ins[0][0])
                shapes[name] = ins[0]
            elif op in ("ReLU", "Sigmoid", "Tanh", "GELU", "ReLU6"):
                self.layers[key] = activation(op.lower())
                shapes[name] = ins[0]
            elif op == "Dropout":
                self.layers[key] = nn.Dropout(a.get("rate", 0.5))
                shapes[name] = ins[0]
            elif op == "GlobalAveragePooling2D":
                shapes[name] = (ins[0][0],)
            elif op == "Flatten":
                size = 1
                for d in ins[0]:
                    size *= d
                shapes[name] = (size,)
            elif op == "Dense":
                self.layers[key] = nn.Sequential(nn.Linear(ins[0][-1], a["units"], a.get("use_bias", True)),
                                                 activation(a.get("activation")))
                shapes[name] = ins[0][:-1] + (a["units"],)
            elif op == "Add":
                shapes[name] = ins[0]
            elif op == "Concatenate":
                shapes[name] = ins[0][:-1] + (sum(s[-1] for s in ins),) if len(ins[0]) == 1 else \
                    (sum(s[0] for s in ins),) + ins[0][1:]
            else:
                raise SystemExit(f"torch_train_gpu.py: op {op} is not mapped")
        self.shapes = shapes

    def forward(self, *inputs):
        values = {}
        feed = iter(inputs)
        for n in self.nodes:
            op, name = n["op"], n["name"]
            x = [values[i] for i in n.get("inputs", [])]
            if op == "Input":
                values[name] = next(feed)
            elif op == "GlobalAveragePooling2D":
                values[name] = x[0].mean(dim=(2, 3))
            elif op == "Flatten":
                values[name] = torch.flatten(x[0], 1)
            elif op == "Add":
                y = x[0]
                for t in x[1:]:
                    y = y + t
                values[name] = y
            elif op == "Concatenate":
                values[name] = torch.cat(x, dim=1)
            else:
                values[name] = self.layers[name.replace(".", "_")](x[0])
        return values[self.outputs[0]]


def run(path, precision, batch, windows, window_seconds, warmup):
    with open(path) as f:
        project = json.load(f)
    dev = torch.device("cuda")
    net = KilnNet(project["graph"]).to(dev)
    conv = any(n["op"] == "Conv2D" for n in project["graph"]["nodes"])
    if conv:
        net = net.to(memory_format=torch.channels_last)
    training = project.get("training", {})
    batch = batch or training.get("batch_size", 32)
    opt_cfg = training.get("optimizer", {"type": "adam"})
    lr = opt_cfg.get("learning_rate", 0.01 if opt_cfg["type"] == "sgd" else 0.001)
    if opt_cfg["type"] == "sgd":
        opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=opt_cfg.get("momentum", 0.0))
    else:
        opt = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-7)
    loss_type = training.get("loss", {}).get("type", "SparseCategoricalCrossentropy")
    inputs = []
    for n in project["graph"]["nodes"]:
        if n["op"] == "Input":
            shape = net.shapes[n["name"]]
            x = torch.rand((batch,) + shape, device=dev) * 2 - 1
            if len(shape) == 3:
                x = x.contiguous(memory_format=torch.channels_last)
            inputs.append(x)
    out_width = net.shapes[net.outputs[0]][-1]
    if loss_type == "SparseCategoricalCrossentropy":
        target = torch.randint(0, out_width, (batch,), device=dev)
        loss_fn = F.cross_entropy
    else:
        target = torch.randint(0, 2, (batch, out_width), device=dev).float()
        loss_fn = F.binary_cross_entropy_with_logits
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scaler = torch.cuda.amp.GradScaler(enabled=precision == "fp16")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = loss_fn(net(*inputs), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    rates = []
    for _ in range(windows):
        t0 = time.perf_counter()
        steps = 0
        while True:
            step()
            steps += 1
            if steps % 8 == 0:
                torch.cuda.synchronize()
                if time.perf_counter() - t0 >= window_seconds:
                    break
        rates.append(steps * batch / (time.perf_counter() - t0))
    name = os.path.splitext(os.path.basename(path))[0]
    print(f"RESULT peer=pytorch model={name} precision={precision} batch={batch} "
          f"samples_per_s={statistics.median(rates):.1f} peak_bytes={torch.cuda.max_memory_allocated()}", flush=True)
    del net, opt
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("projects", nargs="+")
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--precision", default="fp32,fp16,bf16")
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--window-seconds", type=float, default=1.0)
    ap.add_argument("--warmup-steps", type=int, default=10)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_train_gpu.py: no CUDA device", file=sys.stderr)
        return 3
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)
    for p in args.projects:
        for prec in args.precision.split(","):
            run(p, prec, args.batch, args.windows, args.window_seconds, args.warmup_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
