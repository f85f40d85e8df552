# SPDX-License-Identifier: Apache-2.0
# PyTorch reference for tst_torch_explanation: Grad-CAM and input-gradient saliency of the small
# CNN that the test builds in Kiln, on the same weights and picture, computed with torch autograd.
"""Usage: torch_explanation.py DIR

DIR holds little-endian float32 files in Kiln layouts (NHWC picture, HWIO conv kernels, [in, out]
dense kernels): image.bin [1, 10, 12, 3] and one <node>_<param>.bin per parameter; DIR/classes.json
lists the classes to explain (-1: the predicted one). The network:
  c1 Conv2D(6, 3x3, same) -> b1 BatchNormalization (moving statistics, epsilon 1e-3) -> ReLU
  -> MaxPooling2D(2x2) -> c2 Conv2D(8, 3x3, same) -> ReLU -> GlobalAveragePooling2D
  -> Dropout (inactive) -> logits Dense(4) -> Softmax.
Writes DIR/logits.out.bin [4] and per class k: gradcam_k.layer.bin [5, 6] (ReLU of the weighted
activations of c2), gradcam_k.bin [10, 12] (upsampled bilinearly, divided by its maximum),
saliency_k.bin [10, 12] (max over channels of |d logit / d picture|, divided by its maximum), and
DIR/results.json {"predicted": int, "explained": [int, ...]}.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def load(d, name, shape):
    a = np.fromfile(os.path.join(d, name + ".bin"), dtype="<f4").reshape(shape)
    return torch.from_numpy(a.astype(np.float64))


def save(d, name, t):
    t.detach().numpy().astype("<f4").tofile(os.path.join(d, name + ".bin"))


def conv_same(x, kernel, bias):
    w = kernel.permute(3, 2, 0, 1).contiguous()  # HWIO -> OIHW
    return F.conv2d(x, w, bias, padding=1)


def forward(d, x_nhwc):
    x = x_nhwc.permute(0, 3, 1, 2)
    c1 = conv_same(x, load(d, "c1_kernel", (3, 3, 3, 6)), load(d, "c1_bias", (6,)))
    b1 = F.batch_norm(c1, load(d, "b1_moving_mean", (6,)), load(d, "b1_moving_variance", (6,)),
                      load(d, "b1_gamma", (6,)), load(d, "b1_beta", (6,)), training=False, eps=1e-3)
    p1 = F.max_pool2d(F.relu(b1), 2)
    c2 = conv_same(p1, load(d, "c2_kernel", (3, 3, 6, 8)), load(d, "c2_bias", (8,)))
    if c2.requires_grad:
        c2.retain_grad()
    gap = F.relu(c2).mean(dim=(2, 3))
    logits = gap @ load(d, "logits_kernel", (8, 4)) + load(d, "logits_bias", (4,))
    return c2, logits[0]


def main():
    d = sys.argv[1]
    classes = json.load(open(os.path.join(d, "classes.json")))
    image = load(d, "image", (1, 10, 12, 3))
    _, logits = forward(d, image)
    save(d, "logits.out", logits)
    predicted = int(torch.argmax(logits))
    explained = []
    for cls in classes:
        k = predicted if cls < 0 else cls
        explained.append(k)
        x = image.clone().requires_grad_(True)
        c2, logits = forward(d, x)
        logits[k].backward()
        alpha = c2.grad.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((alpha * c2).sum(dim=1, keepdim=True))
        save(d, f"gradcam_{k}.layer", cam[0, 0])
        up = F.interpolate(cam, size=(10, 12), mode="bilinear", align_corners=False)[0, 0]
        save(d, f"gradcam_{k}", up / up.max() if up.max() > 0 else up)
        sal = x.grad.abs().amax(dim=3)[0]
        save(d, f"saliency_{k}", sal / sal.max())
    json.dump({"predicted": predicted, "explained": explained}, open(os.path.join(d, "results.json"), "w"))


if __name__ == "__main__":
    main()
