# SPDX-License-Identifier: Apache-2.0
# TensorBoard's side of the event-file interoperability test: loads a log directory with
# TensorBoard's EventAccumulator and prints, as JSON, the tags it found and every scalar, histogram
# and image (PNG decoded with Pillow) so that the Kiln test can compare them with what it logged.
import io
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from PIL import Image  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402


def main(logdir):
    acc = ea.EventAccumulator(logdir, size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.IMAGES: 0, ea.TENSORS: 0})
    acc.Reload()
    tags = acc.Tags()
    out = {"tags": {k: sorted(v) for k, v in tags.items() if isinstance(v, list)},
           "file_version": acc.file_version, "scalars": {}, "histograms": {}, "images": {}}
    for tag in tags["scalars"]:
        out["scalars"][tag] = [[e.step, e.value] for e in acc.Scalars(tag)]
    for tag in tags["histograms"]:
        out["histograms"][tag] = [{"step": e.step, "min": e.histogram_value.min, "max": e.histogram_value.max,
                                   "num": e.histogram_value.num, "sum": e.histogram_value.sum,
                                   "sum_squares": e.histogram_value.sum_squares,
                                   "bucket_limit": list(e.histogram_value.bucket_limit),
                                   "bucket": list(e.histogram_value.bucket)} for e in acc.Histograms(tag)]
    for tag in tags["images"]:
        items = []
        for e in acc.Images(tag):
            img = Image.open(io.BytesIO(e.encoded_image_string))
            items.append({"step": e.step, "width": e.width, "height": e.height, "format": img.format,
                          "mode": img.mode, "pixels": list(img.tobytes())})
        out["images"][tag] = items
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
