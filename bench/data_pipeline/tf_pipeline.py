# SPDX-License-Identifier: Apache-2.0
# The tf.data peer of Kiln's input-pipeline benchmark: the same JPEG folder, the same work per image
# (read, decode, random crop 224, random horizontal flip, ImageNet normalisation), batched and
# prefetched, with num_parallel_calls and the private thread pool set to the worker count.
# --decode-and-crop decodes only the crop (tf.image.decode_and_crop_jpeg after reading the size from
# the header), the way Kiln's pipeline decodes a JPEG whose first transform is a crop.
# Prints one JSON line per epoch.
import argparse
import json
import os
import resource
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import tensorflow as tf  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--decode-and-crop", action="store_true")
    args = ap.parse_args()

    classes = sorted(d for d in os.listdir(args.dir) if os.path.isdir(os.path.join(args.dir, d)) and not d.startswith("."))
    files, labels = [], []
    for k, c in enumerate(classes):
        for root, _, names in sorted(os.walk(os.path.join(args.dir, c))):
            for n in sorted(names):
                if n.lower().endswith((".jpg", ".jpeg")):
                    files.append(os.path.join(root, n))
                    labels.append(k)

    tf.config.threading.set_inter_op_parallelism_threads(args.workers)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    mean = tf.constant([0.485, 0.456, 0.406], tf.float32)
    std = tf.constant([0.229, 0.224, 0.225], tf.float32)

    def load(path, label):
        data = tf.io.read_file(path)
        if args.decode_and_crop:
            shape = tf.io.extract_jpeg_shape(data)
            top = tf.random.uniform([], 0, shape[0] - 224 + 1, dtype=tf.int32)
            left = tf.random.uniform([], 0, shape[1] - 224 + 1, dtype=tf.int32)
            img = tf.image.decode_and_crop_jpeg(data, tf.stack([top, left, 224, 224]), channels=3)
        else:
            img = tf.io.decode_jpeg(data, channels=3)
            img = tf.image.random_crop(img, [224, 224, 3])
        img = tf.image.random_flip_left_right(img)
        img = (tf.cast(img, tf.float32) / 255.0 - mean) / std
        return img, tf.cast(label, tf.float32)

    options = tf.data.Options()
    options.threading.private_threadpool_size = args.workers
    options.threading.max_intra_op_parallelism = 1
    ds = (tf.data.Dataset.from_tensor_slices((files, labels))
          .map(load, num_parallel_calls=args.workers, deterministic=True)
          .batch(args.batch_size)
          .prefetch(2)
          .with_options(options))

    def cpu_seconds():  # user + system time of every thread: steadier than wall time on a shared machine
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_utime + u.ru_stime

    for epoch in range(args.epochs):
        n = 0
        checksum = 0.0
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        for images, _ in ds:
            n += int(images.shape[0])
            checksum += float(images[0, 0, 0, 0])
        dt = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        peer = "tf.data decode_and_crop" if args.decode_and_crop else "tf.data"
        print(json.dumps({"peer": peer, "workers": args.workers, "epoch": epoch, "images": n, "seconds": round(dt, 3),
                          "images_per_second": round(n / dt, 1), "cpu_seconds": round(cpu_seconds() - cpu0, 3),
                          "peak_rss_bytes": rss}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
