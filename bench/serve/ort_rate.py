# SPDX-License-Identifier: Apache-2.0
# onnxruntime's raw inference rate on a model: batch-1 runs for a fixed time on N calling threads
# sharing one InferenceSession (as a server's workers would), with --intra intra-op threads.
# Prints one JSON line: {"rps": ..., "p50_us": ..., "p99_us": ..., "cpu_us": ...}, cpu_us being the
# process's CPU time (user + system, the Python loop included) per inference.
import argparse
import json
import threading
import time

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--intra", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10)
    args = ap.parse_args()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.intra
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = [1] + [int(d) for d in inp.shape[1:]]
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    for _ in range(50):
        sess.run(None, {inp.name: x})
    lat, lock, stop = [], threading.Lock(), time.perf_counter() + args.seconds

    def worker():
        mine = []
        while time.perf_counter() < stop:
            t = time.perf_counter()
            sess.run(None, {inp.name: x})
            mine.append(time.perf_counter() - t)
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    cpu = time.process_time()
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    lat.sort()
    print(json.dumps({"rps": len(lat) / elapsed, "p50_us": lat[len(lat) // 2] * 1e6,
                      "p99_us": lat[int(len(lat) * 0.99)] * 1e6,
                      "cpu_us": cpu / len(lat) * 1e6, "runs": len(lat), "threads": args.threads,
                      "intra": args.intra}))


if __name__ == "__main__":
    main()
