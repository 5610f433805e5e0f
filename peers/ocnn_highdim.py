#!/usr/bin/env python3
"""How the OCNN's scale above 3-D was chosen (issue 33, fourth round), on validation sets only.

    python3 peers/ocnn_highdim.py [BINARY] > results/ocnn/high-dim.txt

For each set: the median perplexity of each neuron's normalised coupling J_ij / C_i at the former
scale above 3-D (the mean distance to the 10 nearest neighbours), then the mean ARI of
`ocnn cluster` with its defaults (consensus, mutual links) at `--scale` = that 10-NN mean, at the
scales whose median perplexity is 10, 20, 30 and 50 (found here in numpy over all rows, by
bisection of ln a, as `neurobits::ocnn::scale::perplexity_scale` does over 256 rows), with no
`--scale` (the binary's own default), and HDBSCAN with its defaults.

Validation sets (seeds 0, 1, 2; 500 points): `blobs5d`, `blobs10d` (clustering_quality.py's),
`varied30d` (3 blobs in 30-D, std 1.0/2.5/0.5), `classif30` (make_classification: 30 features,
5 informative, 10 redundant, 3 classes, class_sep 2), `digits` (500 of scikit-learn's 8×8 digits,
pixels as they are, 64-D, 10 classes); all but digits standardised. The held-out sets of
`make ocnn-quality` (seeds 3-7, iris, wine, breast cancer) are not read here.
"""
import os, sys, warnings

import numpy as np
from scipy.spatial.distance import cdist
from sklearn import cluster, datasets
from sklearn.metrics import adjusted_rand_score as ari
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clustering_quality import ocnn, synthetic

TARGETS = [10, 20, 30, 50]
FAMILIES = ["blobs5d", "blobs10d", "varied30d", "classif30", "digits"]


def make(family, seed):
    if family in ("blobs5d", "blobs10d"):
        X, y = synthetic(family, seed)
    elif family == "varied30d":
        X, y = datasets.make_blobs(500, centers=3, n_features=30, cluster_std=[1.0, 2.5, 0.5], random_state=seed + 170)
    elif family == "classif30":
        X, y = datasets.make_classification(500, n_features=30, n_informative=5, n_redundant=10, n_classes=3,
                                            n_clusters_per_class=1, class_sep=2.0, random_state=seed)
    else:
        d = datasets.load_digits()
        r = np.random.default_rng(seed).choice(len(d.target), 500, replace=False)
        return d.data[r], d.target[r]
    return StandardScaler().fit_transform(X), y


def perplexities(D2, a):
    """Each row's perplexity of exp(−d²/(2a²)) normalised, the diagonal left out."""
    E = D2 / (2 * a * a)
    np.fill_diagonal(E, np.inf)
    E = E - E.min(1, keepdims=True)
    W = np.exp(-E)
    P = W / W.sum(1, keepdims=True)
    return np.exp(-(P * np.log(np.where(P > 0, P, 1))).sum(1))


def perplexity_scale(X, target):
    D2 = cdist(X, X, "sqeuclidean")
    nn = np.sqrt(np.where(np.eye(len(X), dtype=bool), np.inf, D2).min(1))
    lo, hi = np.log(nn[nn > 0].min()) - np.log(100), np.log(np.sqrt(D2.max())) + np.log(100)
    target = min(target, (len(X) - 1) / 2)
    for _ in range(64):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.median(perplexities(D2, np.exp(mid))) < target else (lo, mid)
    # The floor was the library's rule until issue 33's sixth round (uncoupled points are left out
    # since); kept here as the fourth round chose with it.
    return max(np.exp((lo + hi) / 2), nn.max() / 12)


def knn_scale(X):
    return np.sort(cdist(X, X), 1)[:, 1:11].mean()


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/neurobits"
    cols = ["10-NN mean"] + [f"perplexity {t}" for t in TARGETS] + ["default", "HDBSCAN"]
    means = {}
    for family in FAMILIES:
        for seed in range(3):
            X, y = make(family, seed)
            a = knn_scale(X)
            perp = np.median(perplexities(cdist(X, X, "sqeuclidean"), a))
            scales = [a] + [perplexity_scale(X, t) for t in TARGETS]
            row = [ari(y, ocnn(binary, X, 1, ["--scale", repr(float(s))])) for s in scales]
            row.append(ari(y, ocnn(binary, X, 1, [])))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row.append(ari(y, cluster.HDBSCAN().fit_predict(X)))
            means.setdefault(family, []).append(row)
            print(f"{family}-{seed} (N={len(X)}, {X.shape[1]}-D; median perplexity at the 10-NN mean {perp:.0f}): "
                  + " ".join(f"{c}={v:.3f}" for c, v in zip(cols, row)), flush=True)
    print("\nmean ARI over seeds 0-2 | " + " | ".join(cols))
    for family, rows in means.items():
        print(f"{family} | " + " | ".join(f"{v:.3f}" for v in np.mean(rows, 0)))


if __name__ == "__main__":
    main()
