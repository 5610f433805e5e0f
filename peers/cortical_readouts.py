#!/usr/bin/env python3
"""Readouts of the cortical network compared on the validation list (how the readout was
chosen; the test list is not read): the default network is trained by the `cortical_codes`
example (seeds 1-3; per class 1, 5, 10, 25, 50, 100 and all training images, the last 25 of the
training images of each class held out as the validation list), which writes the winners, the
population codes, the ranking values and the LGN bits; each readout is then run here in numpy.

    cargo run -p neurobits --release --example cortical_codes -- 1 1 25 /tmp/x   # (this script runs it)
    python3 peers/cortical_readouts.py [--example target/release/examples/cortical_codes] [--out results/cortical]

Writes readouts.csv: one row per (training images per class, readout), the mean over the seeds.
"""
import argparse, csv, gzip, os, statistics, subprocess, sys, tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cortical_quality import SIZES, holdout, kmeans_transfer, one_nn

NHC, M, NOKEY = 31, 16, np.iinfo(np.int64).min


def load(prefix, part):
    lab = np.fromfile(f"{prefix}.{part}.lab", "<u4").astype(int)
    n = len(lab)
    win = np.fromfile(f"{prefix}.{part}.win", "<i4").reshape(n, NHC)
    code = np.fromfile(f"{prefix}.{part}.code", "<u4").reshape(n, NHC, M).astype(float)
    rank = np.fromfile(f"{prefix}.{part}.rank", "<i8").reshape(n, NHC, M)
    bits = np.unpackbits(np.fromfile(f"{prefix}.{part}.bits", "<u8").view(np.uint8).reshape(n, -1), axis=1, bitorder="little")
    return lab, win, code, rank, bits.astype(float)


def nearest(train, test, metric="l1"):
    """Index of the nearest training row (ties: the first), L1, L2 or largest dot product."""
    out = []
    for x in test:
        if metric == "l1":
            d = np.abs(train - x).sum(1)
        elif metric == "l2":
            d = ((train - x) ** 2).sum(1)
        else:
            d = -(train @ x)
        out.append(int(np.argmin(d)))
    return np.array(out)


def vote(wtr, ytr, wte):
    """The earlier readout: naive Bayes over every hypercolumn's winner (add-one smoothing)."""
    cnt = np.zeros((NHC, M + 1, 10))
    for w, y in zip(wtr, ytr):
        cnt[np.arange(NHC), w + 1, y] += 1
    nc = np.bincount(ytr, minlength=10)
    lik = np.log((cnt + 1) / (nc[None, None, :] + M + 1))
    with np.errstate(divide="ignore"):
        prior = np.log(nc / len(ytr))
    return (lik[np.arange(NHC)[None, :], wte + 1].sum(1) + prior).argmax(1)


def readouts(tr, te):
    (ytr, wtr, ctr, rtr, btr), (yte, wte, cte, rte, bte) = tr, te
    flat = lambda a: a.reshape(len(a), -1)
    onehot = lambda w: flat(np.eye(M + 1)[w + 1])
    resp = lambda r: np.where(r == NOKEY, np.nan, (r >> 24) / 65536.0)  # 20·S/Ω − 40k − 19

    def top(r, k):  # the k best-ranked minicolumns of every hypercolumn
        v = np.nan_to_num(resp(r), nan=-1e9)
        return flat((np.argsort(np.argsort(-v, axis=2, kind="stable"), axis=2) < k).astype(float))

    def triangle(r, c):  # c at the winner, falling to 0 at c below it
        v = resp(r)
        best = np.nan_to_num(np.nanmax(np.where(np.isnan(v), -np.inf, v), axis=2, keepdims=True), neginf=0)
        return flat(np.maximum(np.nan_to_num(v - best, nan=-c), -c) + c)

    cent = np.stack([flat(ctr)[ytr == c].mean(0) for c in range(10)])
    rows = {
        "vote over the winners (the earlier readout)": vote(wtr, ytr, wte),
        "1-NN, agreement of the one-hot winners": ytr[nearest(onehot(wtr), onehot(wte), "dot")],
        "1-NN, top-4 minicolumns per hypercolumn (overlap)": ytr[nearest(top(rtr, 4), top(rte, 4), "dot")],
        "1-NN, L1 on the ranking values (clipped at -200)": ytr[nearest(flat(np.nan_to_num(np.clip(resp(rtr), -200, None), nan=-200)),
                                                                 flat(np.nan_to_num(np.clip(resp(rte), -200, None), nan=-200)))],
        "1-NN, L1 on a triangle code of the ranking (c = 20)": ytr[nearest(triangle(rtr, 20), triangle(rte, 20))],
        "1-NN, L1 on the population code (chosen)": ytr[nearest(flat(ctr), flat(cte))],
        "1-NN, L2 on the population code": ytr[nearest(flat(ctr), flat(cte), "l2")],
        "1-NN, L1 on the population code of the bottom level only": ytr[nearest(flat(ctr[:, :16]), flat(cte[:, :16]))],
        "1-NN, L1 on the square root of the population code": ytr[nearest(np.sqrt(flat(ctr)), np.sqrt(flat(cte)))],
        "nearest class centroid, L1 on the population code": nearest(cent, flat(cte)),
        "reference: 1-NN on the LGN bits (the network's input)": ytr[nearest(btr, bte)],
    }
    return {k: float(np.mean(v == yte)) for k, v in rows.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--example", default="target/release/examples/cortical_codes")
    p.add_argument("--data", default="data/digits/digits.csv.gz")
    p.add_argument("--out", default="results/cortical")
    p.add_argument("--seeds", default="1,2,3", type=lambda s: [int(v) for v in s.split(",")])
    a = p.parse_args()
    raw = np.loadtxt(gzip.open(a.data), delimiter=",")
    x, y = raw[:, :64], raw[:, 64].astype(int)
    out = []
    with tempfile.TemporaryDirectory() as d:
        for n in SIZES:
            per_seed = []
            for s in a.seeds:
                prefix = os.path.join(d, f"n{n}s{s}")
                subprocess.run([a.example, str(n or 0), str(s), "25", prefix], check=True)
                per_seed.append(readouts(load(prefix, "train"), load(prefix, "test")))
            tr, va, _ = holdout(y, n, val=25)
            res = {k: statistics.mean(r[k] for r in per_seed) for k in per_seed[0]}
            res["k-means transfer (k = 16; 10 at 1 per class)"] = statistics.mean(kmeans_transfer(x, y, tr, va, 16, s) for s in a.seeds)
            res["1-NN on pixels"] = one_nn(x, y, tr, va)
            for k, v in res.items():
                out.append({"per_class": n or "all", "readout": k, "validation_accuracy": round(v, 4)})
            print(n or "all", {k: round(v, 3) for k, v in res.items()}, flush=True)
    with open(os.path.join(a.out, "readouts.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(out[0]))
        wr.writeheader()
        wr.writerows(out)


if __name__ == "__main__":
    sys.exit(main())
