#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes resnet50.kiln: ResNet-50 (v1.5: the stride sits on each bottleneck's 3x3 convolution, as
# in torchvision) on 224x224x3 NHWC images, 1000 classes, SGD with momentum.
import json
import os
import sys

nodes = [{"name": "image", "op": "Input", "attrs": {"shape": [224, 224, 3]}}]


def add(name, op, inputs, **attrs):
    node = {"name": name, "op": op, "inputs": inputs}
    if attrs:
        node["attrs"] = attrs
    nodes.append(node)
    return name


def conv_bn(name, x, filters, kernel, stride=1, relu=True):
    c = add(name, "Conv2D", [x], filters=filters, kernel_size=[kernel, kernel], strides=[stride, stride],
            padding="same", use_bias=False)
    b = add(name + "_bn", "BatchNormalization", [c], momentum=0.9, epsilon=1e-5)
    return add(name + "_relu", "ReLU", [b]) if relu else b


x = conv_bn("stem", "image", 64, 7, 2)
x = add("stem_pool", "MaxPooling2D", [x], pool_size=[3, 3], strides=[2, 2], padding="same")
for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], start=2):
    for block in range(blocks):
        p = f"s{stage}b{block + 1}"
        stride = 2 if block == 0 and stage > 2 else 1
        h = conv_bn(p + "_c1", x, width, 1)
        h = conv_bn(p + "_c2", h, width, 3, stride)
        h = conv_bn(p + "_c3", h, 4 * width, 1, relu=False)
        shortcut = conv_bn(p + "_proj", x, 4 * width, 1, stride, relu=False) if block == 0 else x
        s = add(p + "_add", "Add", [h, shortcut])
        x = add(p + "_out", "ReLU", [s])
x = add("pool", "GlobalAveragePooling2D", [x])
add("logits", "Dense", [x], units=1000)

project = {
    "format": "kiln-project",
    "version": 2,
    "name": "resnet50",
    "description": "Benchmark: ResNet-50 v1.5 on 224x224x3 images, 1000 classes, SGD momentum",
    "graph": {"nodes": nodes, "outputs": ["logits"]},
    "training": {
        "epochs": 1,
        "batch_size": 256,
        "seed": 1,
        "shuffle": False,
        "optimizer": {"type": "sgd", "learning_rate": 0.1, "momentum": 0.9},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": True, "target": "label"},
    },
}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "resnet50.kiln")
with open(out, "w") as f:
    json.dump(project, f, indent=1)
    f.write("\n")
print(f"wrote {out}: {len(nodes)} nodes")
