# SPDX-License-Identifier: Apache-2.0
# Draws the texture and defect picture set of Kiln's transfer-learning example from the three CC0
# textures of scikit-image (brick, grass, gravel; 512x512 grey), deterministically from a seed.
#
# Five classes: "brick", "grass", "gravel" (clean patches of each texture) and "scratch" and
# "spot" (a patch of any of the three with drawn scratches or stains). Each texture is cut into
# row bands, one per split (train rows 0-319, val 320-415, test 416-511), so no pixel of a
# validation or test picture was ever seen in training. Written as an image folder with split
# folders: OUT/{train,val,test}/<class>/<split>_NNNN.png (grey PNG, SIZE x SIZE), plus
# OUT/texture-set.json recording how it was made; a folder whose record matches is left alone.
#
# Usage: texture_set.py TEXTURE_DIR OUT [--per-class N] [--size S] [--seed S]
# Needs numpy and Pillow (Debian: python3-numpy, python3-pil).
import argparse
import json
import os
import shutil
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

TEXTURES = ("brick", "grass", "gravel")
CLASSES = ("brick", "grass", "gravel", "scratch", "spot")
# Row bands of the 512-row textures, per split; val and test bands are 96 rows high.
BANDS = {"train": (0, 320), "val": (320, 416), "test": (416, 512)}
SHARES = {"train": 0.7, "val": 0.15, "test": 0.15}
FORMAT_VERSION = 1


def fail(message):
    print("texture_set: error: " + message, file=sys.stderr)
    sys.exit(2)


def load_textures(directory):
    out = {}
    for name in TEXTURES:
        path = os.path.join(directory, name + ".png")
        try:
            img = Image.open(path)
            img.load()
        except (OSError, ValueError) as e:
            fail(f"{path}: cannot read the texture ({e}); run tools/fetch_data.sh")
        arr = np.asarray(img.convert("L"), dtype=np.float32)
        if arr.shape[0] < BANDS["test"][1] or arr.shape[1] < 96:
            fail(f"{path}: the texture is {arr.shape[1]}x{arr.shape[0]}, expected at least 96x512")
        out[name] = arr
    return out


def patch(rng, texture, split, size):
    """A random square crop (64-96 pixels) from the split's band, turned, mirrored, resized to
    size x size, with its brightness and contrast varied a little."""
    top, bottom = BANDS[split]
    side = int(rng.integers(64, 97))
    y = int(rng.integers(top, bottom - side + 1))
    x = int(rng.integers(0, texture.shape[1] - side + 1))
    crop = texture[y:y + side, x:x + side]
    crop = np.rot90(crop, int(rng.integers(0, 4)))
    if rng.random() < 0.5:
        crop = crop[:, ::-1]
    img = Image.fromarray(np.ascontiguousarray(crop).astype(np.uint8), mode="L").resize((size, size), Image.BICUBIC)
    a = np.asarray(img, dtype=np.float32)
    mean = a.mean()
    a = (a - mean) * rng.uniform(0.8, 1.2) + mean + rng.uniform(-20.0, 20.0)
    return a


def stroke_mask(rng, size, draw_fn, blur):
    """An anti-aliased mask in [0, 1]: drawn at four times the size, then shrunk."""
    big = Image.new("L", (4 * size, 4 * size), 0)
    draw_fn(ImageDraw.Draw(big), 4 * size)
    if blur > 0:
        big = big.filter(ImageFilter.GaussianBlur(4 * blur))
    return np.asarray(big.resize((size, size), Image.LANCZOS), dtype=np.float32) / 255.0


def scratches(rng, size):
    def draw(d, n):
        for _ in range(int(rng.integers(1, 4))):
            length = rng.uniform(0.4, 0.9) * n
            angle = rng.uniform(0.0, np.pi)
            cx, cy = rng.uniform(0.25 * n, 0.75 * n, size=2)
            dx, dy = np.cos(angle), np.sin(angle)
            points = []
            steps = int(rng.integers(3, 6))
            for k in range(steps + 1):
                t = (k / steps - 0.5) * length
                wobble = rng.normal(0.0, 0.02 * n)
                points.append((cx + t * dx - wobble * dy, cy + t * dy + wobble * dx))
            d.line(points, fill=255, width=max(1, int(round(rng.uniform(1.0, 2.5) * 4))), joint="curve")
    return stroke_mask(rng, size, draw, 0.0)


def spots(rng, size):
    def draw(d, n):
        for _ in range(int(rng.integers(1, 4))):
            r = rng.uniform(0.04, 0.11) * n
            ex = r * rng.uniform(0.6, 1.4)
            cx, cy = rng.uniform(0.15 * n, 0.85 * n, size=2)
            d.ellipse((cx - ex, cy - r, cx + ex, cy + r), fill=255)
    return stroke_mask(rng, size, draw, rng.uniform(0.5, 1.5))


def picture(rng, textures, cls, split, size):
    if cls in TEXTURES:
        a = patch(rng, textures[cls], split, size)
    else:
        a = patch(rng, textures[TEXTURES[int(rng.integers(0, len(TEXTURES)))]], split, size)
        mask = scratches(rng, size) if cls == "scratch" else spots(rng, size)
        # Dark or bright marks, strong enough to see but not flat black or white.
        tone = rng.uniform(10.0, 50.0) if rng.random() < 0.5 else rng.uniform(205.0, 245.0)
        strength = rng.uniform(0.75, 1.0)
        a = a * (1.0 - strength * mask) + tone * strength * mask
    return Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8), mode="L")


def main():
    ap = argparse.ArgumentParser(description="Draws Kiln's texture and defect picture set.")
    ap.add_argument("textures", help="folder holding brick.png, grass.png and gravel.png")
    ap.add_argument("out", help="folder to write (train/, val/, test/)")
    ap.add_argument("--per-class", type=int, default=200, help="pictures per class over all splits (default 200)")
    ap.add_argument("--size", type=int, default=112, help="side of the pictures in pixels (default 112)")
    ap.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    args = ap.parse_args()
    if not 10 <= args.per_class <= 1000:
        fail(f"--per-class {args.per_class}: give 10 to 1000 pictures per class")
    if not 32 <= args.size <= 512:
        fail(f"--size {args.size}: give 32 to 512 pixels")

    counts = {"val": max(1, round(args.per_class * SHARES["val"])), "test": max(1, round(args.per_class * SHARES["test"]))}
    counts["train"] = args.per_class - counts["val"] - counts["test"]
    record = {"format": "kiln-texture-set", "version": FORMAT_VERSION, "classes": list(CLASSES), "per_class": args.per_class,
              "size": args.size, "seed": args.seed, "splits": counts, "bands": {k: list(v) for k, v in BANDS.items()},
              "sources": {t: f"scikit-image data/{t}.png (CC0)" for t in TEXTURES}}
    record_path = os.path.join(args.out, "texture-set.json")
    if os.path.isfile(record_path):
        try:
            with open(record_path) as f:
                if json.load(f) == record:
                    print(f"texture_set: {args.out} is up to date ({args.per_class} pictures per class)")
                    return
        except (OSError, ValueError):
            pass

    textures = load_textures(args.textures)
    tmp = args.out.rstrip("/") + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    for split in ("train", "val", "test"):
        for ci, cls in enumerate(CLASSES):
            folder = os.path.join(tmp, split, cls)
            os.makedirs(folder)
            # One stream per split and class: changing one count leaves the others' pictures alone.
            rng = np.random.default_rng([args.seed, ci, ("train", "val", "test").index(split)])
            for i in range(counts[split]):
                picture(rng, textures, cls, split, args.size).save(os.path.join(folder, f"{split}_{i:04d}.png"))
    with open(os.path.join(tmp, "texture-set.json"), "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    os.rename(tmp, args.out)
    total = args.per_class * len(CLASSES)
    print(f"texture_set: {total} pictures ({', '.join(f'{k} {v}' for k, v in counts.items())} per class) in {args.out}")


if __name__ == "__main__":
    main()
