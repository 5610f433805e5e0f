"""FlyNN with the library's defaults beside scikit-learn on Fashion-MNIST (60 000 training /
10 000 test images), run once on the test set after the defaults were chosen on a validation
split (peers/flynn_sweep.py). Same machine, same threads (THREADS, default 2): FlyNN through the
CLI (`neurobits flynn fit` / `flynn predict`, each timed as a whole process: reading the files,
hashing, classifying, writing), and scikit-learn's KNeighborsClassifier (brute force, 1 and 5
neighbours, n_jobs = THREADS) and LogisticRegression on pixels scaled to [0, 1], each timed in
process (fit, then predict). Writes flynn-test.csv/.json into OUT.

Usage: THREADS=2 python peers/flynn_knn.py NEUROBITS_BIN FASHION_MNIST_DIR OUT
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from _idx import idx
from _meta import meta as run_meta


def main():
    nb, data, out = sys.argv[1:4]
    threads = int(os.environ.get("THREADS", "2"))
    os.environ.update(RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                      OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier

    os.makedirs(out, exist_ok=True)
    x = idx(os.path.join(data, "train-images-idx3-ubyte.gz")).reshape(60000, -1)
    y = idx(os.path.join(data, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    xt = idx(os.path.join(data, "t10k-images-idx3-ubyte.gz")).reshape(10000, -1)
    yt = idx(os.path.join(data, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        p = lambda n: os.path.join(tmp, n)
        np.save(p("x.npy"), x)
        np.save(p("y.npy"), y[:, None])
        np.save(p("xt.npy"), xt)
        t0 = time.perf_counter()
        subprocess.run([nb, "-q", "flynn", "fit", "-i", p("x.npy"), "--labels", p("y.npy"), "-o", p("m.nbm")], check=True)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([nb, "-q", "flynn", "predict", "--model", p("m.nbm"), "-i", p("xt.npy"), "-o", p("pred.npy")],
                       check=True)
        pred_s = time.perf_counter() - t0
        acc = float((np.load(p("pred.npy")).ravel() == yt).mean())
        rows.append(dict(method="FlyNN (neurobits, library defaults; CLI processes)", accuracy=acc,
                         fit_seconds=round(fit_s, 3), predict_seconds=round(pred_s, 3)))
        print(rows[-1], flush=True)
    xf, xtf = x.astype(np.float32) / 255, xt.astype(np.float32) / 255
    for k in (1, 5):
        clf = KNeighborsClassifier(n_neighbors=k, algorithm="brute", n_jobs=threads)
        t0 = time.perf_counter()
        clf.fit(xf, y)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        acc = float((clf.predict(xtf) == yt).mean())
        rows.append(dict(method=f"scikit-learn KNeighborsClassifier, {k}-NN (brute)", accuracy=acc,
                         fit_seconds=round(fit_s, 3), predict_seconds=round(time.perf_counter() - t0, 3)))
        print(rows[-1], flush=True)
    clf = LogisticRegression(max_iter=200)
    t0 = time.perf_counter()
    clf.fit(xf, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    acc = float((clf.predict(xtf) == yt).mean())
    rows.append(dict(method="scikit-learn LogisticRegression (lbfgs, 200 iterations)", accuracy=acc,
                     fit_seconds=round(fit_s, 3), predict_seconds=round(time.perf_counter() - t0, 3)))
    print(rows[-1], flush=True)
    meta = dict(threads=threads, data="Fashion-MNIST 60 000 train / 10 000 test", command=" ".join(sys.argv),
                cpu=open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :"))
    json.dump(dict(meta=run_meta({"neurobits --seed": "default (1)"}, **meta), rows=rows), open(os.path.join(out, "flynn-test.json"), "w"), indent=1)
    with open(os.path.join(out, "flynn-test.csv"), "w") as fh:
        fh.write("method,accuracy,fit_seconds,predict_seconds\n")
        for r in rows:
            fh.write(f"\"{r['method']}\",{r['accuracy']:.4f},{r['fit_seconds']},{r['predict_seconds']}\n")


if __name__ == "__main__":
    main()
