# SPDX-License-Identifier: Apache-2.0
# TensorFlow's side of the TFRecord interoperability test.
#   read DIR   : reads every DIR/*.tfrecord Kiln wrote (compression from DIR/manifest.json) with
#                tf.data.TFRecordDataset + tf.io.parse_single_example and compares with the
#                expected values in the manifest; exits 1 on any difference.
#   write DIR  : writes DIR/tf_none.tfrecord and DIR/tf_gzip.tfrecord with tf.io.TFRecordWriter
#                and the values it wrote to DIR/tf_expected.json, for Kiln to read back.
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def fail(msg):
    print("MISMATCH: " + msg)
    sys.exit(1)


def read(directory):
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    for entry in manifest["files"]:
        path = os.path.join(directory, entry["file"])
        expected = entry["examples"]
        spec = {
            "label": tf.io.FixedLenFeature([], tf.int64),
            "pixels": tf.io.FixedLenFeature([entry["pixels"]], tf.float32),
            "ids": tf.io.VarLenFeature(tf.int64),
            "name": tf.io.FixedLenFeature([], tf.string),
            "blobs": tf.io.VarLenFeature(tf.string),
        }
        ds = tf.data.TFRecordDataset(path, compression_type=entry["compression"])
        count = 0
        for i, rec in enumerate(ds):
            if i >= len(expected):
                fail(f"{entry['file']}: more records than the {len(expected)} written")
            want = expected[i]
            # The record must also parse as a plain protobuf message.
            proto = tf.train.Example.FromString(rec.numpy())
            if sorted(proto.features.feature.keys()) != sorted(spec.keys()):
                fail(f"{entry['file']}[{i}]: keys {sorted(proto.features.feature.keys())}")
            got = tf.io.parse_single_example(rec, spec)
            if int(got["label"].numpy()) != want["label"]:
                fail(f"{entry['file']}[{i}]: label {got['label'].numpy()} != {want['label']}")
            px = got["pixels"].numpy()
            if not np.array_equal(px, np.array(want["pixels"], dtype=np.float32)):
                fail(f"{entry['file']}[{i}]: pixels differ")
            ids = tf.sparse.to_dense(got["ids"]).numpy().tolist()
            if ids != want["ids"]:
                fail(f"{entry['file']}[{i}]: ids {ids} != {want['ids']}")
            if got["name"].numpy().decode("utf-8") != want["name"]:
                fail(f"{entry['file']}[{i}]: name differs")
            blobs = [b.hex() for b in tf.sparse.to_dense(got["blobs"], default_value=b"").numpy().tolist()]
            if blobs != want["blobs_hex"]:
                fail(f"{entry['file']}[{i}]: blobs differ")
            count += 1
        if count != len(expected):
            fail(f"{entry['file']}: {count} records, expected {len(expected)}")
        print(f"OK {entry['file']} {entry['compression'] or 'NONE'} {count} records")


def write(directory):
    rng = np.random.default_rng(11)
    examples = []
    for i in range(57):
        n = int(rng.integers(0, 6))
        ex = {
            "label": int(rng.integers(-(2**40), 2**40)),
            "values": [float(v) for v in rng.standard_normal(n).astype(np.float32)],
            "tags": [bytes(rng.integers(0, 256, int(rng.integers(0, 9)), dtype=np.uint8)).hex() for _ in range(n % 3)],
        }
        examples.append(ex)

    def to_proto(ex):
        return tf.train.Example(features=tf.train.Features(feature={
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[ex["label"], -1, 0])),
            "values": tf.train.Feature(float_list=tf.train.FloatList(value=ex["values"])),
            "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes.fromhex(t) for t in ex["tags"]])),
        })).SerializeToString()

    for name, comp in (("tf_none.tfrecord", ""), ("tf_gzip.tfrecord", "GZIP"), ("tf_zlib.tfrecord", "ZLIB")):
        with tf.io.TFRecordWriter(os.path.join(directory, name), options=tf.io.TFRecordOptions(compression_type=comp)) as w:
            for ex in examples:
                w.write(to_proto(ex))
    with open(os.path.join(directory, "tf_expected.json"), "w") as f:
        json.dump(examples, f)
    print(f"wrote {len(examples)} examples")


if __name__ == "__main__":
    {"read": read, "write": write}[sys.argv[1]](sys.argv[2])
