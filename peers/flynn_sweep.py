"""FlyNN's parameters chosen on a validation split (never the test set): the last 10 000 of
Fashion-MNIST's 60 000 training images are the validation set, the first 50 000 the training
set. Sweeps what the FlyNN paper (Ram & Sinha) tunes — the code length m, the winners k, the
inputs per projection row s, the decay γ — and whether the inputs are centred on the training
mean, each through `neurobits flyhash flynn` (the CLI, one process per (m, s, k, centre), every γ
on the same codes). Writes flynn-sweep.csv/.json and flynn-sweep.svg into OUT.

Usage: python peers/flynn_sweep.py NEUROBITS_BIN FASHION_MNIST_DIR OUT
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from _idx import idx
from _meta import meta as run_meta

D = 784
MS = (16 * D, 32 * D, 64 * D, 128 * D)
COLOURS = ("#E69F00", "#0072B2", "#009E73", "#CC79A7")
GAMMAS = [0.5, 0.8, 0.9, 0.95, 0.97, 0.99, 0.995]


def grid():
    """(m, s, k, centre): m and k around the defaults, with and without centring; s at one point."""
    for centre in (False, True):
        for m in (16 * D, 32 * D, 64 * D):
            for div in (500, 250, 125):
                yield m, 39, m // div, centre
    for s in (10, 20, 78):
        yield 32 * D, s, 32 * D // 250, True
    for div in (1000, 500, 250):
        yield 128 * D, 39, 128 * D // div, True


def main():
    nb, data, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    x = idx(os.path.join(data, "train-images-idx3-ubyte.gz")).reshape(60000, D)
    y = idx(os.path.join(data, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        f = {n: os.path.join(tmp, n + ".npy") for n in ("xtr", "ytr", "xva", "yva")}
        np.save(f["xtr"], x[:50000])
        np.save(f["ytr"], y[:50000, None])
        np.save(f["xva"], x[50000:])
        np.save(f["yva"], y[50000:, None])
        for m, s, k, centre in grid():
            js = os.path.join(tmp, "r.json")
            cmd = [nb, "-q", "flyhash", "flynn", "--train", f["xtr"], "--train-labels", f["ytr"], "--test", f["xva"],
                   "--test-labels", f["yva"], "--no-knn", "--m", str(m), "--s", str(s), "--k", str(k),
                   "--centre", str(centre).lower(), "--gamma", ",".join(map(str, GAMMAS)), "--json", js]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            for r in json.load(open(js))["rows"]:
                rows.append(dict(m=m, s=s, k=k, centre=centre, gamma=r["gamma"], val_accuracy=r["accuracy"],
                                 train_seconds=round(r["train_seconds"], 3), val_seconds=round(r["test_seconds"], 3)))
            best = max(rows[-len(GAMMAS):], key=lambda r: r["val_accuracy"])
            print(f"m={m} s={s} k={k} centre={centre}: best γ={best['gamma']} accuracy {best['val_accuracy']:.4f}",
                  flush=True)
    keys = list(rows[0])
    with open(os.path.join(out, "flynn-sweep.csv"), "w") as fh:
        fh.write(",".join(keys) + "\n")
        for r in rows:
            fh.write(",".join(str(r[k]).lower() if isinstance(r[k], bool) else str(r[k]) for k in keys) + "\n")
    json.dump(dict(meta=run_meta({"neurobits --seed": "default (1)"}), rows=rows), open(os.path.join(out, "flynn-sweep.json"), "w"), indent=1)
    best = max(rows, key=lambda r: r["val_accuracy"])
    print("best on validation:", best)
    plot(rows, os.path.join(out, "flynn-sweep.svg"))


def plot(rows, path):
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for centre, ls in ((False, "--"), (True, "-")):
        for m, c in zip(MS, COLOURS):
            pts = sorted({r["k"] for r in rows if r["m"] == m and r["s"] == 39 and r["centre"] == centre})
            acc = [max(r["val_accuracy"] for r in rows if r["m"] == m and r["k"] == k and r["s"] == 39
                       and r["centre"] == centre) for k in pts]
            if not pts:
                continue
            axes[0].plot([m // k for k in pts], acc, ls, marker="o", color=c,
                         label=f"m = {m // D}·d, {'centred' if centre else 'raw'}")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("m / k (sparsity of the code)")
    axes[0].set_ylabel("validation accuracy (best γ)")
    axes[0].legend(fontsize=8)
    axes[0].set_title("FlyNN on a Fashion-MNIST validation split (s = 39)")
    for m, c in zip(MS, COLOURS):
        sel = [r for r in rows if r["m"] == m and r["s"] == 39 and r["centre"] and r["k"] == 100]
        axes[1].plot([r["gamma"] for r in sel], [r["val_accuracy"] for r in sel], marker="o", color=c,
                     label=f"m = {m // D}·d, k = 100, centred")
    axes[1].set_xlabel("decay γ")
    axes[1].set_ylabel("validation accuracy")
    axes[1].legend(fontsize=8)
    axes[1].set_title("accuracy against γ")
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
