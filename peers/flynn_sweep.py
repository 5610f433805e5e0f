"""FlyNN's parameters chosen on a validation split (never the test set): the last 10 000 of
Fashion-MNIST's 60 000 training images are the validation set, the first 50 000 the training
set. Sweeps what the FlyNN paper (Ram & Sinha) tunes — the code length m, the winners k, the
inputs per projection row s, the decay γ — with the inputs centred on the training mean or not,
and the error-driven rounds (`--rounds`: after the counting pass, each round counts again the
training codes the memories misclassify), each through `neurobits flyhash flynn` (the CLI, one
process per (m, s, k, centre); every γ and every listed round count on the same codes). Writes
flynn-sweep.csv/.json and flynn-sweep.svg into OUT.

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
MS = (16 * D, 32 * D, 64 * D)
COLOURS = ("#E69F00", "#0072B2", "#009E73")
GAMMAS = [0.9, 0.95, 0.97, 0.98, 0.99, 0.995]
ROUNDS = [0, 1, 2, 3, 4, 6, 8, 10, 12, 16, 20]


def grid():
    """(m, s, k, centre): m and k around the defaults (centred), s and centring at one point."""
    for m, ks in ((16 * D, (50, 100)), (32 * D, (50, 100, 200)), (64 * D, (100,))):
        for k in ks:
            yield m, 39, k, True
    for s in (20, 78):
        yield 32 * D, s, 100, True
    yield 32 * D, 39, 100, False


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
                   "--centre", str(centre).lower(), "--gamma", ",".join(map(str, GAMMAS)),
                   "--rounds", ",".join(map(str, ROUNDS)), "--json", js]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            for r in json.load(open(js))["rows"]:
                rows.append(dict(m=m, s=s, k=k, centre=centre, gamma=r["gamma"], rounds=r["rounds"],
                                 val_accuracy=r["accuracy"],
                                 train_seconds=round(r["train_seconds"], 3), val_seconds=round(r["test_seconds"], 3)))
            best = max(rows[-len(GAMMAS) * len(ROUNDS):], key=lambda r: r["val_accuracy"])
            plain = max((r for r in rows[-len(GAMMAS) * len(ROUNDS):] if r["rounds"] == 0),
                        key=lambda r: r["val_accuracy"])
            print(f"m={m} s={s} k={k} centre={centre}: best γ={best['gamma']} rounds={best['rounds']} accuracy "
                  f"{best['val_accuracy']:.4f} (no rounds: γ={plain['gamma']} {plain['val_accuracy']:.4f})", flush=True)
    keys = list(rows[0])
    with open(os.path.join(out, "flynn-sweep.csv"), "w") as fh:
        fh.write(",".join(keys) + "\n")
        for r in rows:
            fh.write(",".join(str(r[k]).lower() if isinstance(r[k], bool) else str(r[k]) for k in keys) + "\n")
    json.dump(dict(meta=run_meta({"neurobits --seed": "default (1)"}), rows=rows), open(os.path.join(out, "flynn-sweep.json"), "w"), indent=1)
    best = max(rows, key=lambda r: r["val_accuracy"])
    print("best on validation:", best)
    # The default's code length is fixed by speed (m = 32·d keeps prediction ≥ 10× faster than
    # k-NN); at it, the most accurate (k, γ, rounds) on validation.
    at = max((r for r in rows if r["m"] == 32 * D and r["s"] == 39 and r["centre"]), key=lambda r: r["val_accuracy"])
    print("best at m = 32·d:", at)
    plot(rows, os.path.join(out, "flynn-sweep.svg"))


def plot(rows, path):
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    best = lambda sel: max(r["val_accuracy"] for r in sel)
    for m, c in zip(MS, COLOURS):
        sel = [r for r in rows if r["m"] == m and r["s"] == 39 and r["k"] == 100 and r["centre"]]
        axes[0].plot(ROUNDS, [best([r for r in sel if r["rounds"] == n]) for n in ROUNDS], "-", marker="o", color=c,
                     label=f"m = {m // D}·d, k = 100, centred")
    sel = [r for r in rows if r["m"] == 32 * D and r["s"] == 39 and r["k"] == 100 and not r["centre"]]
    axes[0].plot(ROUNDS, [best([r for r in sel if r["rounds"] == n]) for n in ROUNDS], "--", marker="o",
                 color=COLOURS[1], label="m = 32·d, k = 100, raw pixels")
    axes[0].set_xlabel("error-driven rounds")
    axes[0].set_ylabel("validation accuracy (best γ)")
    axes[0].legend(fontsize=8)
    axes[0].set_title("FlyNN on a Fashion-MNIST validation split (s = 39)")
    sel = [r for r in rows if r["m"] == 32 * D and r["s"] == 39 and r["k"] == 100 and r["centre"]]
    for n, c in zip((0, 4, 10, 20), ("#999999", "#56B4E9", "#0072B2", "#D55E00")):
        pts = sorted((r["gamma"], r["val_accuracy"]) for r in sel if r["rounds"] == n)
        axes[1].plot([g for g, _ in pts], [a for _, a in pts], marker="o", color=c, label=f"{n} rounds")
    axes[1].set_xlabel("decay γ")
    axes[1].set_ylabel("validation accuracy")
    axes[1].legend(fontsize=8)
    axes[1].set_title("m = 32·d, k = 100, centred: accuracy against γ")
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
