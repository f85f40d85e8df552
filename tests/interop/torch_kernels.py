# SPDX-License-Identifier: Apache-2.0
# PyTorch reference for tst_torch_kernels: reads cases.json and raw float32 tensors from DIR,
# computes outputs and gradients with torch (float64, NCHW/OIHW internally) and writes them back.
"""Usage: torch_kernels.py DIR

DIR/cases.json: {"cases": [{"name": str, "op": str, "attrs": {...},
                            "tensors": {tensor_name: shape}}]}
Each input tensor is DIR/<case>.<tensor>.bin (little-endian float32, row-major, Kiln layouts:
NHWC activations, HWIO conv weights, [in, out] dense weights). Outputs go to
DIR/<case>.out.<name>.bin in the same layouts, listed in DIR/results.json as {case: {name: shape}}.
Every gradient is of the scalar loss sum(dy * y) unless the op defines its own loss.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def load(d, case, name, shape):
    a = np.fromfile(os.path.join(d, f"{case}.{name}.bin"), dtype="<f4").reshape(shape)
    return torch.from_numpy(a.astype(np.float64))


def nhwc_to_nchw(t):
    return t.permute(0, 3, 1, 2).contiguous()


def nchw_to_nhwc(t):
    return t.permute(0, 2, 3, 1).contiguous()


def same_pads(size, k, stride, dilation):
    """Keras 'same' padding: (before, after), the odd element after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def pad_nchw(x, kh, kw, sh, sw, dh, dw, same, value=0.0):
    if not same:
        return x
    top, bottom = same_pads(x.shape[2], kh, sh, dh)
    left, right = same_pads(x.shape[3], kw, sw, dw)
    return F.pad(x, (left, right, top, bottom), value=value)


def run_dense(t, a):
    x, w, b = (t[k].requires_grad_() for k in ("x", "w", "b"))
    y = x @ w + b
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad, "dw": w.grad, "db": b.grad}


def run_conv2d(t, a):
    x = t["x"].requires_grad_()
    w = t["w"].requires_grad_()  # HWIO
    b = t["b"].requires_grad_()
    xp = pad_nchw(nhwc_to_nchw(x), a["kh"], a["kw"], a["sh"], a["sw"], a["dh"], a["dw"], a["same"])
    y = F.conv2d(xp, w.permute(3, 2, 0, 1), b, stride=(a["sh"], a["sw"]),
                 dilation=(a["dh"], a["dw"]), groups=a["groups"])
    y = nchw_to_nhwc(y)
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad, "dw": w.grad, "db": b.grad}


def run_batchnorm(t, a):
    x = t["x"].requires_grad_()
    gamma = t["gamma"].requires_grad_()
    beta = t["beta"].requires_grad_()
    running_mean = t["moving_mean"].clone()
    running_var = t["moving_var"].clone()
    # Keras momentum m (moving = moving*m + batch*(1-m)) is PyTorch momentum 1 - m; PyTorch
    # feeds the unbiased batch variance into running_var.
    y = F.batch_norm(nhwc_to_nchw(x), running_mean, running_var, gamma, beta, training=True,
                     momentum=1.0 - a["momentum"], eps=a["epsilon"])
    y = nchw_to_nhwc(y)
    (y * t["dy"]).sum().backward()
    xd = t["x"].reshape(-1, t["x"].shape[-1])
    return {"y": y, "dx": x.grad, "dgamma": gamma.grad, "dbeta": beta.grad,
            "moving_mean": running_mean, "moving_var_unbiased": running_var,
            "batch_var_biased": xd.var(dim=0, unbiased=False)}


def run_layernorm(t, a):
    x = t["x"].requires_grad_()
    gamma = t["gamma"].requires_grad_()
    beta = t["beta"].requires_grad_()
    y = F.layer_norm(x, (x.shape[-1],), gamma, beta, eps=a["epsilon"])
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad, "dgamma": gamma.grad, "dbeta": beta.grad}


def run_pool(t, a, is_max):
    x = t["x"].requires_grad_()
    k, s = (a["ph"], a["pw"]), (a["sh"], a["sw"])
    xc = nhwc_to_nchw(x)
    if is_max:
        # Padding never wins a max: pad with -inf.
        y = F.max_pool2d(pad_nchw(xc, a["ph"], a["pw"], a["sh"], a["sw"], 1, 1, a["same"],
                                  value=float("-inf")), k, s)
    else:
        # TensorFlow divides by the number of in-image elements: sum over the zero-padded
        # window divided by the count of ones in the same window.
        ones = torch.ones_like(xc[:1, :1])
        num = F.avg_pool2d(pad_nchw(xc, a["ph"], a["pw"], a["sh"], a["sw"], 1, 1, a["same"]), k, s)
        den = F.avg_pool2d(pad_nchw(ones, a["ph"], a["pw"], a["sh"], a["sw"], 1, 1, a["same"]), k, s)
        y = num / den
    y = nchw_to_nhwc(y)
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad}


def run_global_avg(t, a):
    x = t["x"].requires_grad_()
    y = x.mean(dim=(1, 2))
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad}


def run_global_max(t, a):
    x = t["x"].requires_grad_()
    y = x.amax(dim=(1, 2))
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad}


def run_upsample(t, a):
    x = t["x"].requires_grad_()
    xc = nhwc_to_nchw(x)
    if a["bilinear"]:
        y = F.interpolate(xc, scale_factor=(a["sh"], a["sw"]), mode="bilinear", align_corners=False)
    else:
        y = F.interpolate(xc, scale_factor=(a["sh"], a["sw"]), mode="nearest")
    y = nchw_to_nhwc(y)
    (y * t["dy"]).sum().backward()
    return {"y": y, "dx": x.grad}


def run_softmax_xent(t, a):
    logits = t["logits"].requires_grad_()
    labels = t["labels"].long()
    loss = F.cross_entropy(logits, labels, reduction="mean")
    loss.backward()
    return {"loss": loss.reshape(1), "dlogits": logits.grad}


OPS = {
    "dense": run_dense,
    "conv2d": run_conv2d,
    "batchnorm": run_batchnorm,
    "layernorm": run_layernorm,
    "maxpool": lambda t, a: run_pool(t, a, True),
    "avgpool": lambda t, a: run_pool(t, a, False),
    "global_avg": run_global_avg,
    "global_max": run_global_max,
    "upsample": run_upsample,
    "softmax_xent": run_softmax_xent,
}


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)["cases"]
    results = {}
    for case in cases:
        name = case["name"]
        tensors = {k: load(d, name, k, shape) for k, shape in case["tensors"].items()}
        outs = OPS[case["op"]](tensors, case.get("attrs", {}))
        results[name] = {}
        for k, v in outs.items():
            arr = v.detach().numpy().astype("<f4")
            arr.tofile(os.path.join(d, f"{name}.out.{k}.bin"))
            results[name][k] = list(arr.shape)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
