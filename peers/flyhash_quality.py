"""faiss's IndexLSH beside `neurobits flyhash eval`, on the same data, split and preprocessing:
Fashion-MNIST (60 000 training images as the database, the first 1 000 test images as queries)
and scikit-learn's digits (the first 300 of 1 797 as queries, the rest the database); pixels
scaled to [0, 1], each image centred on its own mean. Quality: recall@100 of the true 100
Euclidean neighbours among the 100 nearest codes, and the mean average precision of that list —
the measures of `flyhash eval`. IndexLSH is run as faiss ships it (random rotation, thresholds
at zero) and with `train_thresholds` (a median per bit learned on the database: the same
data-dependent step as our "learned thresholds" fly codes).

Usage: python peers/flyhash_quality.py EVAL_CSV FASHION_MNIST_DIR DIGITS_CSV_GZ OUT
(EVAL_CSV: the eval.csv that `neurobits flyhash eval` wrote; OUT gets quality.csv/.json, ours and
faiss's rows together, and quality.svg.)
"""

import csv
import json
import os
import sys
import time

import faiss
import numpy as np

from _idx import idx
from _meta import meta as run_meta

R = 100


def prep(x, scale):
    x = x.reshape(len(x), -1).astype(np.float32) / scale
    return np.ascontiguousarray(x - x.mean(1, keepdims=True))


def truth(db, q):
    d2 = (db.astype(np.float64) ** 2).sum(1)[None, :] - 2 * q.astype(np.float64) @ db.T.astype(np.float64)
    return [set(np.argsort(r, kind="stable")[:R].tolist()) for r in d2]


def quality(t, found):
    rec = ap = 0.0
    for tr, f in zip(t, found):
        hits, s = 0, 0.0
        for rank, i in enumerate(f[:R]):
            if int(i) in tr:
                hits += 1
                s += hits / (rank + 1)
        rec += hits / R
        ap += s / R
    return rec / len(t), ap / len(t)


def main():
    eval_csv, fm, digits, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    faiss.omp_set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    ours = list(csv.DictReader(open(eval_csv)))
    sets = {
        "Fashion-MNIST": (prep(idx(os.path.join(fm, "train-images-idx3-ubyte.gz")), 255),
                          prep(idx(os.path.join(fm, "t10k-images-idx3-ubyte.gz"))[:1000], 255)),
    }
    dg = np.loadtxt(digits, delimiter=",", dtype=np.float32)[:, :64]
    sets["digits"] = (prep(dg[300:], 16), prep(dg[:300], 16))
    rows = [dict(source="neurobits flyhash eval", **r) for r in ours]
    for name, (db, q) in sets.items():
        t = truth(db, q)
        for bits in sorted({int(r["bits"]) for r in ours if r["data"] == name and r["method"] == "SimHash"}):
            for trained in (False, True):
                index = faiss.IndexLSH(db.shape[1], bits, True, trained)
                t0 = time.perf_counter()
                index.train(db)
                index.add(db)
                _, found = index.search(q, R)
                secs = time.perf_counter() - t0
                rec, mAP = quality(t, found)
                method = "faiss IndexLSH" + (" (train_thresholds)" if trained else "")
                rows.append(dict(source="faiss " + faiss.__version__, data=name, comparison="", method=method, k="",
                                 bits=bits, bytes=(bits + 7) // 8, ones="", recall=f"{rec:.4f}", map=f"{mAP:.4f}",
                                 seconds=f"{secs:.2f}"))
                print(f"{name:14} {method:36} {bits:5} bits: recall {rec:.4f} mAP {mAP:.4f}", flush=True)
    keys = ["source", "data", "comparison", "method", "k", "bits", "bytes", "ones", "recall", "map", "seconds"]
    with open(os.path.join(out, "quality.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in keys})
    json.dump(dict(meta=run_meta({"faiss": "none (IndexLSH draws its rotation with faiss's fixed default seed)", "neurobits flyhash eval": "as in its eval.csv's command"}), rows=rows), open(os.path.join(out, "quality.json"), "w"), indent=1)
    plot(rows, os.path.join(out, "quality.svg"))


def plot(rows, path):
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = [("SimHash", "#0072B2", "o-", "SimHash"),
              ("FlyHash (m = 20k", "#E69F00", "s--", "FlyHash (m = 20k, k ones)"),
              ("DenseFly", "#009E73", "^:", "DenseFly (mean threshold)"),
              ("dense fly, learned", "#D55E00", "v-", "fly, learned thresholds"),
              ("faiss IndexLSH", "#56B4E9", "x-", "faiss IndexLSH"),
              ("faiss IndexLSH (train", "#CC79A7", "+--", "faiss IndexLSH, train_thresholds")]
    for ax, name in zip(axes, ("Fashion-MNIST", "digits")):
        for prefix, colour, st, label in styles:
            pts = sorted({(int(r["bits"]), float(r["recall"])) for r in rows if r["data"] == name
                          and r["method"].startswith(prefix)
                          and not (prefix == "faiss IndexLSH" and "train" in r["method"])})
            if pts:
                ax.plot(*zip(*pts), st, color=colour, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("code length (bits)")
        ax.set_ylabel(f"recall@{R}")
        ax.set_title(f"{name}: recall@{R} of Euclidean neighbours")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
