#!/usr/bin/env python3
"""The cortical network's quality on held-out digits, side by side with what a user would try
instead, on the same split: k-means transfer (k-means with as many clusters as the network's top
level has minicolumns, fitted on the training images, each cluster labelled by the majority of
its training images, applied to the test images) and 1-NN on pixels (scikit-learn).

    python3 peers/cortical_quality.py --bin target/release/neurobits [--data data/digits/digits.csv.gz]
        [--out results/cortical] [--seeds 1,2,3] [--sweep | --validation | --lgn-sweep]

Split ("digits hold-out", the one `neurobits cortical train` uses): per class, in file order, the
last 50 images are the test list (500 images); the training list is the first n of the others
(n = 1, 5, 10, 25, 50, 100 and all: 124-133 per class, 1 297 images). With --sweep, the constants
are chosen instead: the last 25 of the training images of each class are the validation list,
the test list is not read, and every (shape, rate, epochs) is trained with seeds 1-3. With
--validation, the learning curve of the default network (readout and the earlier vote readout)
and of k-means transfer and 1-NN on that validation list instead of the test list (what the
readout was chosen on). With --lgn-sweep, the same on the validation list for each LGN threshold
(`--lgn-threshold`, 0 … 16), beside 1-NN on the LGN's bits at that threshold (what the default 12
was chosen on).

Writes quality.json, quality.csv and learning-curve.svg (or validation.csv, validation-curve.csv
or lgn-threshold.csv) under --out.
"""
import argparse, csv, gzip, json, os, statistics, subprocess, sys, tempfile

import numpy as np
from sklearn.cluster import KMeans
from sklearn.neighbors import KNeighborsClassifier

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _meta import meta as run_meta

SPEC = ["--rule", "spec", "--levels", "3", "--upsample", "1", "--epochs", "60", "--exposure", "4"]
SIZES = [1, 5, 10, 25, 50, 100, None]


def holdout(y, n, val=0, test=50):
    """Per class (sorted), in file order: the last `test` are test, the `val` before them
    validation, the first n of the rest training (all when n is None)."""
    tr, va, te = [], [], []
    for c in sorted(set(y.tolist())):
        idx = np.flatnonzero(y == c)
        pool, t = idx[: len(idx) - test], idx[len(idx) - test:]
        pool, v = pool[: len(pool) - val], pool[len(pool) - val:]
        tr += list(pool[:n] if n else pool)
        va += list(v)
        te += list(t)
    return np.array(tr), np.array(va), np.array(te)


def network(binary, data, n, seed, extra, val=0):
    with tempfile.TemporaryDirectory() as d:
        j = os.path.join(d, "r.json")
        cmd = [binary, "cortical", "train", "--data", data, "--seed", str(seed), "--json", j, *extra]
        cmd += ["--train-per-class", str(n)] if n else []
        cmd += ["--validation-per-class", str(val)] if val else []
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        r = json.load(open(j))
    h = r["held_out"]
    return {**{k: h[k] for k in ("coverage", "distinct_top", "purity", "nmi", "cluster_accuracy", "readout_accuracy")},
            "vote_accuracy": h.get("vote_accuracy") if h.get("vote_accuracy") is not None else float("nan"),
            "random_readout_accuracy": r["random_baseline"][1], "minicolumns": r["minicolumns"],
            "levels": r["levels"], "train_images": r["train_images"]}


def kmeans_transfer(x, y, tr, te, k, seed):
    k = min(k, len(tr))
    km = KMeans(k, n_init=10, random_state=seed).fit(x[tr])
    label = {c: np.bincount(y[tr][km.labels_ == c]).argmax() for c in set(km.labels_.tolist())}
    return float(np.mean([label[c] == t for c, t in zip(km.predict(x[te]), y[te])]))


def one_nn(x, y, tr, te):
    return float(KNeighborsClassifier(1).fit(x[tr], y[tr]).score(x[te], y[te]))


def write_csv(path, rows, keys=None):
    """`rows` (dicts) as CSV with a header: the `keys` given (others left out), else the first row's."""
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=keys or list(rows[0]), extrasaction="ignore")
        wr.writeheader()
        wr.writerows(rows)


def mean(rows, key):
    return statistics.mean(r[key] for r in rows)


def svg(points, path):
    """Accuracy vs training images per class (evenly spaced sizes), one line per method."""
    w, h, l, r, t, b = 680, 400, 60, 210, 20, 50
    xs = [p["per_class"] for p in points]  # in training-size order; the last is "all"
    xpos = {n: l + (w - l - r) * i / (len(xs) - 1) for i, n in enumerate(xs)}
    ypos = lambda a: t + (h - t - b) * (1 - a)
    lines = [("network readout (population code)", "readout_accuracy", "#1f77b4"),
             ("network vote readout (before)", "vote_accuracy", "#17becf"), ("network top level (cluster)", "cluster_accuracy", "#9467bd"),
             ("spec rule readout (before)", "spec_readout_accuracy", "#8c564b"), ("k-means transfer (k = M)", "kmeans", "#d62728"),
             ("1-NN on pixels", "one_nn", "#2ca02c"), ("held-out coverage", "coverage", "#7f7f7f"),
             ("spec rule coverage (before)", "spec_coverage", "#e377c2")]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for a in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        out.append(f'<line x1="{l}" x2="{w - r}" y1="{ypos(a):.1f}" y2="{ypos(a):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{l - 6}" y="{ypos(a) + 4:.1f}" text-anchor="end">{a:.1f}</text>')
    for n in xs:
        out.append(f'<text x="{xpos[n]:.1f}" y="{h - b + 18}" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{(l + w - r) / 2}" y="{h - 8}" text-anchor="middle">training images per class (digits hold-out, 500 test images)</text>')
    out.append(f'<text x="14" y="{(t + h - b) / 2}" transform="rotate(-90 14 {(t + h - b) / 2})" text-anchor="middle">held-out accuracy / coverage</text>')
    for i, (name, key, colour) in enumerate(lines):
        pts = " ".join(f'{xpos[p["per_class"]]:.1f},{ypos(p[key]):.1f}' for p in points)
        dash = ' stroke-dasharray="5,4"' if key.endswith("coverage") else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{xpos[p["per_class"]]:.1f}" cy="{ypos(p[key]):.1f}" r="3" fill="{colour}"/>' for p in points]
        out.append(f'<line x1="{w - r + 10}" x2="{w - r + 30}" y1="{t + 10 + 18 * i}" y2="{t + 10 + 18 * i}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{w - r + 34}" y="{t + 14 + 18 * i}" font-size="10">{name}</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def sweep(a, x, y):
    shapes = [("3", "16", "1"), ("4", "32", "2"), ("5", "16", "2")]
    _, va, _ = holdout(y, None, val=25)
    tr, _, _ = holdout(y, None, val=25)
    rows = []
    for lv, m, up in shapes:
        km = statistics.mean(kmeans_transfer(x, y, tr, va, int(m), s) for s in a.seeds)
        for rate in (2, 3, 4, 5):
            for ep in (5, 10, 20):
                extra = ["--levels", lv, "--minicolumns", m, "--upsample", up, "--rate", str(rate), "--epochs", str(ep), "--exposure", "1"]
                runs = [network(a.bin, a.data, None, s, extra, val=25) for s in a.seeds]
                row = {"levels": lv, "minicolumns": m, "upsample": up, "rate": rate, "epochs": ep,
                       "coverage": mean(runs, "coverage"), "cluster_accuracy": mean(runs, "cluster_accuracy"),
                       "readout_accuracy": mean(runs, "readout_accuracy"),
                       "kmeans": km}
                print(row, flush=True)
                rows.append(row)
    write_csv(os.path.join(a.out, "validation.csv"), rows)


def validation_curve(a, x, y):
    rows = []
    for n in SIZES:
        tr, va, _ = holdout(y, n, val=25)
        runs = [network(a.bin, a.data, n, s, [], val=25) for s in a.seeds]
        m = runs[0]["minicolumns"]
        row = {"per_class": n or "all", "train_images": len(tr), "validation_images": len(va),
               "readout_accuracy": mean(runs, "readout_accuracy"), "vote_accuracy": mean(runs, "vote_accuracy"),
               "coverage": mean(runs, "coverage"), "kmeans_k": min(m, len(tr)),
               "kmeans": statistics.mean(kmeans_transfer(x, y, tr, va, m, s) for s in a.seeds), "one_nn": one_nn(x, y, tr, va)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    write_csv(os.path.join(a.out, "validation-curve.csv"), rows)


LGN_THRESHOLDS = [0, 2, 4, 6, 8, 10, 11, 12, 13, 14, 16]


def lgn_bits(x, theta, up=2):
    """The LGN's cells of each 8×8 image as the library computes them (pixels replicated `up`
    times, contrast 8·centre − Σ 8 neighbours with zero padding; on-off d > θ, off-on −d > θ), in
    any fixed order (1-NN in Hamming distance does not depend on it)."""
    im = x.reshape(-1, 8, 8).astype(int).repeat(up, 1).repeat(up, 2)
    p = np.pad(im, ((0, 0), (1, 1), (1, 1)))
    n = im.shape[1]
    s = sum(p[:, 1 + dr:1 + dr + n, 1 + dc:1 + dc + n] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    d = (9 * im - s).reshape(len(x), -1)
    return np.concatenate([d > theta, -d > theta], 1).astype(np.int32)


def lgn_sweep(a, x, y):
    """The LGN threshold of the competitive default, chosen on the validation list: the readout
    (seeds 1-3) at every training size for each threshold, beside k-means transfer and 1-NN on
    the LGN's own bits; the chosen threshold has the best mean readout over the sizes."""
    rows = []
    kmeans = {}  # per training size: the same for every threshold
    for t in LGN_THRESHOLDS:
        bits = lgn_bits(x, t)
        for n in SIZES:
            tr, va, _ = holdout(y, n, val=25)
            runs = [network(a.bin, a.data, n, s, ["--lgn-threshold", str(t)], val=25) for s in a.seeds]
            if n not in kmeans:
                m = runs[0]["minicolumns"]
                kmeans[n] = statistics.mean(kmeans_transfer(x, y, tr, va, m, s) for s in a.seeds)
            row = {"lgn_threshold": t, "per_class": n or "all", "readout_accuracy": mean(runs, "readout_accuracy"),
                   "per_seed": " ".join(f"{r['readout_accuracy']:.3f}" for r in runs), "kmeans": kmeans[n],
                   "lgn_bits_1nn": one_nn(bits, y, tr, va), "lgn_density": float(bits.mean())}
            print(json.dumps(row), flush=True)
            rows.append(row)
    write_csv(os.path.join(a.out, "lgn-threshold.csv"), rows)
    for t in LGN_THRESHOLDS:
        rs = [r for r in rows if r["lgn_threshold"] == t]
        print(f"theta {t:2d}: mean readout {statistics.mean(r['readout_accuracy'] for r in rs):.3f}, "
              f"worst margin over k-means {min(r['readout_accuracy'] - r['kmeans'] for r in rs):+.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default="target/release/neurobits")
    p.add_argument("--data", default="data/digits/digits.csv.gz")
    p.add_argument("--out", default="results/cortical")
    p.add_argument("--seeds", default="1,2,3", type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--sweep", action="store_true")
    p.add_argument("--validation", action="store_true")
    p.add_argument("--lgn-sweep", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    raw = np.loadtxt(gzip.open(a.data), delimiter=",")
    x, y = raw[:, :64], raw[:, 64].astype(int)
    if a.sweep:
        return sweep(a, x, y)
    if a.validation:
        return validation_curve(a, x, y)
    if a.lgn_sweep:
        return lgn_sweep(a, x, y)
    points = []
    for n in SIZES:
        tr, _, te = holdout(y, n)
        runs = [network(a.bin, a.data, n, s, []) for s in a.seeds]
        spec = [network(a.bin, a.data, n, s, SPEC) for s in a.seeds]
        m = runs[0]["minicolumns"]
        pt = {"per_class": n or "all", "train_images": len(tr), "test_images": len(te),
              **{k: mean(runs, k) for k in ("coverage", "distinct_top", "purity", "nmi", "cluster_accuracy", "readout_accuracy", "vote_accuracy", "random_readout_accuracy")},
              "spec_coverage": mean(spec, "coverage"), "spec_purity": mean(spec, "purity"),
              "spec_readout_accuracy": mean(spec, "readout_accuracy"),
              "kmeans_k": min(m, len(tr)), "kmeans": statistics.mean(kmeans_transfer(x, y, tr, te, m, s) for s in a.seeds),
              "kmeans_spec_k": min(16, len(tr)), "one_nn": one_nn(x, y, tr, te),
              "per_seed_readout": [r["readout_accuracy"] for r in runs], "per_seed_coverage": [r["coverage"] for r in runs]}
        print(json.dumps(pt), flush=True)
        points.append(pt)
    meta = {"data": a.data, "split": "digits hold-out: per class the last 50 images (file order) are the test list; training = the first n of the others",
            "network": "neurobits cortical train defaults (competitive rule, 5 levels x 16 minicolumns, upsample 2, LGN threshold 12, 20 epochs, exposure 1, rate 2); readout = 1-NN (L1) on the population code, vote_accuracy = the earlier vote readout over the winners",
            "spec": "the spec's rule and configuration A's shape: " + " ".join(SPEC), "seeds": a.seeds,
            "kmeans": "sklearn KMeans(k = top-level minicolumns (capped at the training images), n_init=10, random_state=seed); clusters labelled by their training majority",
            "command": "python3 peers/cortical_quality.py --bin " + a.bin, "points": points}
    meta["meta"] = run_meta({"cortical train --seed and KMeans random_state": a.seeds})
    json.dump(meta, open(os.path.join(a.out, "quality.json"), "w"), indent=1)
    keys = [k for k in points[0] if not k.startswith("per_seed")]
    write_csv(os.path.join(a.out, "quality.csv"), points, keys)
    svg(points, os.path.join(a.out, "learning-curve.svg"))


if __name__ == "__main__":
    sys.exit(main())
