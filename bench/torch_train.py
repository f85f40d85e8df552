# SPDX-License-Identifier: Apache-2.0
# PyTorch peer of train_cpu: the same four reference models trained on synthetic CPU data, timed
# the same way (warm-up, then the median samples/s over several windows of full training steps).
#
# Run it at its best (see bench/RESULTS.md), e.g.:
#   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
#     GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=17179869184 \
#     /usr/bin/python3 bench/torch_train.py
# and, where OpenBLAS does not recognise the processor and falls back to its generic kernels
# (--version names the core), once more with OPENBLAS_CORETYPE=SkylakeX; run_train_cpu.sh does both.
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = ["lenet5", "mlp", "resnet8", "two_tower"]

# The fastest PyTorch setting per model on the reference machine (bench/RESULTS.md lists the
# exploration); --variant all measures every one. A variant joins options with "+":
#   eager          plain eager mode, contiguous (NCHW) tensors; oneDNN convolutions through ATen
#   channels_last  NHWC memory format for the model and the 4-D input
#   no_mkldnn      torch.backends.mkldnn disabled (ATen's im2col + BLAS convolutions)
#   jit            the model traced with torch.jit.trace
#   foreach        the optimizer's multi-tensor (foreach=True) implementation
BEST_VARIANT = {"lenet5": "channels_last", "mlp": "eager", "resnet8": "channels_last", "two_tower": "eager"}
CONV_VARIANTS = ["eager", "channels_last", "no_mkldnn", "jit", "foreach", "channels_last+foreach", "jit+foreach"]
DENSE_VARIANTS = ["eager", "jit", "foreach", "jit+foreach"]
OPTIONS = {"eager", "channels_last", "no_mkldnn", "jit", "foreach"}


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = x if self.short is None else self.short(x)
        return F.relu(y + s)


class ResNet8(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.s1 = BasicBlock(16, 16, 1)
        self.s2 = BasicBlock(16, 32, 2)
        self.s3 = BasicBlock(32, 64, 2)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.bn(self.stem(x)))
        x = self.s3(self.s2(self.s1(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.a1, self.a2 = nn.Linear(15, 16), nn.Linear(16, 8)
        self.b1, self.b2 = nn.Linear(15, 16), nn.Linear(16, 8)
        self.out = nn.Linear(16, 1)

    def forward(self, a, b):
        ya = F.relu(self.a2(F.relu(self.a1(a))))
        yb = F.relu(self.b2(F.relu(self.b1(b))))
        return self.out(torch.cat([ya, yb], dim=1))


def make(name, gen):
    """(model, inputs, target, loss_fn, optimizer factory, batch) with synthetic data."""
    def randn(*shape):
        return torch.rand(*shape, generator=gen) * 2 - 1  # uniform [-1, 1), as train_cpu

    ce = nn.CrossEntropyLoss()
    if name == "mlp":
        b = 128
        return (Mlp(), [randn(b, 784)], torch.randint(0, 10, (b,), generator=gen), ce,
                lambda p, fe: torch.optim.Adam(p, lr=1e-3, foreach=fe), b)
    if name == "lenet5":
        b = 64
        return (LeNet5(), [randn(b, 1, 28, 28)], torch.randint(0, 10, (b,), generator=gen), ce,
                lambda p, fe: torch.optim.SGD(p, lr=0.01, momentum=0.9, foreach=fe), b)
    if name == "resnet8":
        b = 64
        return (ResNet8(), [randn(b, 3, 32, 32)], torch.randint(0, 10, (b,), generator=gen), ce,
                lambda p, fe: torch.optim.SGD(p, lr=0.05, momentum=0.9, foreach=fe), b)
    if name == "two_tower":
        b = 256
        return (TwoTower(), [randn(b, 15), randn(b, 15)],
                torch.randint(0, 2, (b, 1), generator=gen).float(), nn.BCEWithLogitsLoss(),
                lambda p, fe: torch.optim.Adam(p, lr=1e-3, foreach=fe), b)
    raise ValueError(name)


def bench(name, variant, args):
    opts = set(variant.split("+"))
    if not opts <= OPTIONS:
        sys.exit(f"torch_train.py: unknown variant {variant} (options: {', '.join(sorted(OPTIONS))})")
    torch.backends.mkldnn.enabled = "no_mkldnn" not in opts
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    model, inputs, target, loss_fn, make_opt, batch = make(name, gen)
    if "channels_last" in opts:
        model = model.to(memory_format=torch.channels_last)
        inputs = [x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x for x in inputs]
    model.train()
    if "jit" in opts:
        model = torch.jit.trace(model, tuple(inputs))
    opt = make_opt(model.parameters(), "foreach" in opts)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(*inputs), target)
        loss.backward()
        opt.step()
        return loss

    if args.steps:
        for _ in range(3):
            step()
        windows, per_window = 1, args.steps
    else:
        t0 = time.perf_counter()
        done, half, half_steps = 0, t0, 0
        while done < args.warmup_steps or time.perf_counter() - t0 < args.warmup_seconds:
            step()
            done += 1
            if done == args.warmup_steps // 2:
                half, half_steps = time.perf_counter(), done
        per_step = (time.perf_counter() - half) / (done - half_steps)
        windows, per_window = args.windows, max(1, round(args.window_seconds / per_step))
    rates = []
    for _ in range(windows):
        t0 = time.perf_counter()
        for _ in range(per_window):
            loss = step()
        rates.append(per_window * batch / (time.perf_counter() - t0))
    med = statistics.median(rates)
    if not args.quiet:
        print(f"{name:<10} {variant:<13} batch {batch:4d}  {per_window} steps/window x {windows}  "
              f"median {med:.0f} samples/s (min {min(rates):.0f}, max {max(rates):.0f})  "
              f"{1e3 * batch / med:.3f} ms/step  loss {loss.item():.4f}")
    return med


def blas_libraries():
    """The BLAS shared libraries this process loaded (PyTorch's Linear layers run on them)."""
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if "blas" in line.lower() and ".so" in line})


def openblas_core():
    """The kernel family OpenBLAS picked for this processor (OPENBLAS_CORETYPE or its own detection)."""
    import ctypes
    for lib in blas_libraries():
        if "libopenblas" in lib:
            fn = ctypes.CDLL(lib).openblas_get_corename
            fn.restype = ctypes.c_char_p
            return fn().decode()
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("models", nargs="*", default=MODELS, help="models to run (default: all)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--variant", default="best",
                   help="best (default: the fastest measured, per model), all, or options joined by + from "
                        + ", ".join(sorted(OPTIONS)))
    p.add_argument("--warmup-seconds", type=float, default=1.0)
    p.add_argument("--warmup-steps", type=int, default=10)
    p.add_argument("--windows", type=int, default=7)
    p.add_argument("--window-seconds", type=float, default=0.5)
    p.add_argument("--steps", type=int, default=0, help="instead: warm up 3 steps, time exactly N steps")
    p.add_argument("--quiet", action="store_true", help="print only the RESULT lines")
    p.add_argument("--keep-denormals", action="store_true",
                   help="do not flush denormals to zero (train_cpu flushes them too, see its --help)")
    p.add_argument("--version", action="store_true", help="print the torch version and BLAS library, then exit")
    args = p.parse_args()
    if args.version:
        core = openblas_core()
        print(f"{torch.__version__} (oneDNN {'on' if torch.backends.mkldnn.is_available() else 'off'}; "
              f"OpenBLAS core {core or 'none: not OpenBLAS'}; "
              f"{', '.join(os.path.basename(l) for l in blas_libraries()) or 'no BLAS found'})")
        if core is None:
            print("warning: PyTorch is not using OpenBLAS; the reference BLAS makes its Linear layers "
                  "many times slower (apt-get install libopenblas0-pthread)")
        return
    # Before any parallel region: the OpenMP workers inherit the main thread's MXCSR.
    torch.set_flush_denormal(not args.keep_denormals)
    torch.set_num_threads(args.threads)
    for name in args.models:
        if name not in MODELS:
            sys.exit(f"torch_train.py: unknown model {name} (have {', '.join(MODELS)})")
        if args.variant == "best":
            variants = [BEST_VARIANT[name]]
        elif args.variant == "all":
            variants = CONV_VARIANTS if name in ("lenet5", "resnet8") else DENSE_VARIANTS
        else:
            variants = [args.variant]
        for v in variants:
            med = bench(name, v, args)
            print(f"RESULT\ttorch\t{name}\t{med:.1f}\tvariant={v}\ttorch={torch.__version__}\t"
                  f"openblas_core={openblas_core()}", flush=True)


if __name__ == "__main__":
    main()
