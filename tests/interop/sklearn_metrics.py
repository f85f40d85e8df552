# SPDX-License-Identifier: Apache-2.0
# Computes with scikit-learn the figures Kiln's evaluation reports hold, for the cases in the JSON
# file given as the first argument; prints one JSON object with the results per case.
import json
import math
import sys
import warnings

import numpy as np
from sklearn import metrics

warnings.simplefilter("ignore")


def number(v):
    v = float(v)
    return v if math.isfinite(v) else None


def classification(case):
    k = case["classes"]
    p = np.array(case["probabilities"], dtype=np.float64).reshape(-1, k)
    y = np.array(case["labels"], dtype=np.int64)
    labels = list(range(k))
    pred = p.argmax(axis=1)
    prec, rec, f1, support = metrics.precision_recall_fscore_support(y, pred, labels=labels, zero_division=0)
    out = {
        "accuracy": metrics.accuracy_score(y, pred),
        "confusion": metrics.confusion_matrix(y, pred, labels=labels).tolist(),
        "precision": prec.tolist(), "recall": rec.tolist(), "f1": f1.tolist(), "support": support.tolist(),
        "log_loss": metrics.log_loss(y, p, labels=labels),
        "roc": [], "pr": [],
    }
    for avg in ("macro", "weighted"):
        ap, ar, af, _ = metrics.precision_recall_fscore_support(y, pred, labels=labels, average=avg, zero_division=0)
        out[avg] = [ap, ar, af]
    for c in range(k):
        truth = (y == c).astype(np.int64)
        score = p[:, c]
        fpr, tpr, thr = metrics.roc_curve(truth, score)
        try:
            auc = metrics.roc_auc_score(truth, score)
        except ValueError:
            auc = None
        out["roc"].append({"fpr": [number(v) for v in fpr], "tpr": [number(v) for v in tpr],
                           "thresholds": [number(v) for v in thr[1:]], "auc": auc})
        precision, recall, pthr = metrics.precision_recall_curve(truth, score)
        out["pr"].append({"precision": precision.tolist(), "recall": recall.tolist(), "thresholds": pthr.tolist(),
                          "average_precision": float(metrics.average_precision_score(truth, score))})
    return out


def regression(case):
    w = case["width"]
    pred = np.array(case["predictions"], dtype=np.float64).reshape(-1, w)
    truth = np.array(case["truths"], dtype=np.float64).reshape(-1, w)
    return {"mae": metrics.mean_absolute_error(truth, pred), "mse": metrics.mean_squared_error(truth, pred),
            "rmse": math.sqrt(metrics.mean_squared_error(truth, pred)), "r2": metrics.r2_score(truth, pred)}


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    out = {}
    for name, case in cases.items():
        out[name] = classification(case) if "classes" in case else regression(case)
    print(json.dumps(out))


main()
