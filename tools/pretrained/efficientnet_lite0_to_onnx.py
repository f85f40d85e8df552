# SPDX-License-Identifier: Apache-2.0
# Converts the EfficientNet-Lite0 ImageNet state_dict to ONNX (NCHW float input "image",
# 1x3x224x224, output "logits" 1x1000) with PyTorch's exporter, and checks the conversion on two
# photos: the weights are loaded strictly, and both preprocessing conventions are scored so that
# the right one is recorded next to the model.
#
# usage: efficientnet_lite0_to_onnx.py WEIGHTS.pth MODEL_CODE_DIR OUT.onnx OUT.json CHELSEA.png SQUIRREL.jpg CLASSES.txt
import json
import sys

import numpy as np
import torch
from PIL import Image


def load_image(path):
    img = Image.open(path).convert("RGB").resize((224, 224), Image.BILINEAR)
    return np.asarray(img, dtype=np.float32)  # HWC, 0..255


def preprocess(hwc, mode):
    if mode == "tf":  # (x - 127) / 128, TensorFlow's convention for the Lite family
        x = (hwc - 127.0) / 128.0
    else:  # ImageNet mean/std on 0..1 values
        x = (hwc / 255.0 - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None].astype(np.float32)))


def main():
    weights, code_dir, out_onnx, out_json, chelsea, squirrel, classes_txt = sys.argv[1:8]
    sys.path.insert(0, code_dir)
    from efficientnet_lite_pytorch import EfficientNet

    torch.manual_seed(0)
    model = EfficientNet.from_name("efficientnet-lite0", num_classes=1000)
    state = torch.load(weights, map_location="cpu")
    model.load_state_dict(state, strict=True)
    model.eval()

    classes = [line.strip() for line in open(classes_txt, encoding="utf-8")]
    scores = {}
    with torch.no_grad():
        for mode in ("tf", "imagenet"):
            result = {}
            for name, path in (("chelsea", chelsea), ("squirrel", squirrel)):
                logits = model(preprocess(load_image(path), mode))[0]
                prob = torch.softmax(logits, 0)
                top = torch.topk(prob, 5)
                result[name] = [[int(i), classes[int(i)], float(p)] for p, i in zip(top.values, top.indices)]
            scores[mode] = result

    # The model's own head reshapes with the traced batch size (x.view(bs, -1)), which would pin
    # the ONNX graph to batch 1; the same layers with a batch-free flatten export cleanly.
    class Exported(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            x = self.net._avg_pooling(self.net.extract_features(x))
            return self.net._fc(torch.flatten(x, 1))

    exported = Exported(model).eval()
    dummy = torch.zeros(1, 3, 224, 224)
    with torch.no_grad():
        probe = preprocess(load_image(chelsea), "tf")
        diff = float((exported(probe) - model(probe)).abs().max())
    if diff > 1e-5:
        raise SystemExit("the export wrapper changes the logits by %g" % diff)
    torch.onnx.export(exported, dummy, out_onnx, input_names=["image"], output_names=["logits"], opset_version=13,
                      do_constant_folding=True, dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})

    # The convention whose top-1 probabilities on the two photos are higher (and right) wins.
    def confidence(mode):
        return sum(scores[mode][k][0][2] for k in ("chelsea", "squirrel"))

    best = max(scores, key=confidence)
    info = {
        "model": "EfficientNet-Lite0 (ImageNet-1k)",
        "input": {"name": "image", "layout": "NCHW", "shape": ["batch", 3, 224, 224], "color": "RGB"},
        "preprocessing": best,
        "preprocessing_formula": "(x - 127) / 128" if best == "tf" else "(x / 255 - mean) / std, ImageNet mean/std",
        "top5": scores,
    }
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1)
    print(json.dumps({m: {k: v[0] for k, v in r.items()} for m, r in scores.items()}))


if __name__ == "__main__":
    main()
