# SPDX-License-Identifier: Apache-2.0
# Turns the EfficientNet-Lite0 project that kiln-import wrote with a new head
# (--replace-head-after conv2d_32 --classes 5) into Kiln's texture transfer-learning example:
# SIZE x SIZE RGB input (the network is fully convolutional up to its global pooling, so only the
# Input's shape changes), the texture picture set of tools/texture_set.py as data, normalised as
# the backbone was trained ((x - 127) / 128), and two stages in one run: the new head alone with
# the backbone frozen, then the top blocks (from TOP_NODE on) at a tenth of the learning rate.
#
# Usage: texture_transfer_project.py IMPORTED.kiln OUT.kiln [--size S] [--data PATH] [--weights PATH]
#        [--head-epochs N] [--top-epochs N] [--top-from NODE] [--learning-rate R]
import argparse
import json
import sys

CLASSES = ["brick", "grass", "gravel", "scratch", "spot"]


def fail(message):
    print("texture_transfer_project: error: " + message, file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("imported")
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--data", default="${KILN_DATA}/textures/texture-defects")
    ap.add_argument("--weights", default="${KILN_DATA}/pretrained/efficientnet-lite0/efficientnet-lite0.safetensors")
    ap.add_argument("--head-epochs", type=int, default=4)
    ap.add_argument("--top-epochs", type=int, default=4)
    ap.add_argument("--top-from", default="conv2d_22")
    ap.add_argument("--learning-rate", type=float, default=0.001)
    args = ap.parse_args()

    try:
        with open(args.imported) as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.imported}: {e}")
    nodes = p.get("graph", {}).get("nodes", [])
    names = {n.get("name") for n in nodes}
    head = p.get("imported_from", {}).get("head")
    if not head or head.get("classes") != len(CLASSES):
        fail(f"{args.imported}: not imported with --replace-head-after ... --classes {len(CLASSES)}")
    if args.top_from not in names:
        fail(f"{args.imported}: --top-from {args.top_from} is not a node of the model")
    inputs = [n for n in nodes if n.get("op") == "Input"]
    if len(inputs) != 1:
        fail(f"{args.imported}: expected one Input node, found {len(inputs)}")
    inputs[0]["attrs"]["shape"] = [args.size, args.size, 3]
    head_nodes = set(head["added"])
    for n in nodes:
        # Frozen as the first stage trains it; the stages decide, the flags show it in the editor.
        n["trainable"] = n["name"] in head_nodes

    normalize = {"type": "normalize", "preset": "centered"}
    resize = {"type": "resize", "size": [args.size, args.size], "interpolation": "area"}
    p["name"] = "texture_transfer"
    p["description"] = (f"Transfer learning: EfficientNet-Lite0 pretrained on ImageNet, new head for 5 texture and defect "
                        f"classes (brick, grass, gravel, scratch, spot) at {args.size}x{args.size} pixels; head only, "
                        f"then the top blocks at a tenth of the learning rate")
    p["data"] = {
        "format": "folder",
        "path": args.data,
        # The resize leaves pictures of the input's size alone; a set drawn at another --size
        # still fits the network.
        "transforms": [{"type": "decode", "channels": 3}, resize,
                       {"type": "flip", "horizontal": True, "probability": 0.5},
                       normalize],
        "eval_transforms": [{"type": "decode", "channels": 3}, resize, normalize],
        "inputs": {inputs[0]["name"]: "image"},
        "class_names": CLASSES,
    }
    p["training"] = {
        "epochs": args.head_epochs + args.top_epochs,
        "batch_size": 32,
        "seed": 1,
        "shuffle": True,
        "optimizer": {"type": "adam", "learning_rate": args.learning_rate},
        "loss": {"type": "SparseCategoricalCrossentropy", "from_logits": False},
        "metrics": ["accuracy"],
        "stages": [
            {"name": "head only", "epochs": args.head_epochs, "trainable": {"from": head["added"][0]}},
            {"name": "top blocks", "epochs": args.top_epochs, "trainable": {"from": args.top_from}, "lr_factor": 0.1},
        ],
    }
    p["pretrained"] = {
        "backbone": "efficientnet-lite0",
        "name": "EfficientNet-Lite0",
        "weights": args.weights,
        "cut_after": head["cut_after"],
        "head": head["added"],
        # As Kiln's backbone catalogue records it (engine/io/model_zoo.cpp): trained at 224 x 224.
        "preprocessing": {"height": 224, "width": 224, "resize": "bilinear", "channel_order": "RGB", "scale": 1.0,
                          "mean": [127.0], "std": [128.0], "formula": "(x - 127) / 128", "normalize": normalize},
    }
    imported = p.get("imported_from", {})
    imported["weights"] = args.weights
    p["imported_from"] = imported
    with open(args.out, "w") as f:
        json.dump(p, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
