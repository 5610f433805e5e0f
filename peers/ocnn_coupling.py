#!/usr/bin/env python3
"""Why the OCNN synchronized 30-D breast cancer as one cluster (issue 33, fourth round): how local
each neuron's coupling is at the scale `a` and the consensus's multiples of it.

    python3 peers/ocnn_coupling.py > results/ocnn/coupling.txt

Per set: `a` as the engine sets it up to the fourth round (the Delaunay mean up to 3-D, here by
scipy's Qhull, which differs from the engine's by a fraction of a percent; above 3-D the mean
distance to the 10 nearest neighbours), then at 0.5, 1, 1.5 and 2.5 times it the median over
neurons of the perplexity of the normalised coupling J_ij / C_i (J_ij = exp(−d²/(2a²))): the
effective number of neurons that drive a neuron; and the mean share of a neuron's coupling that
comes from its own class ("same"). Sets: seed 0 of clustering_quality.py's synthetic families, the
three real sets (standardised) and five FCPS sets (classes not read: "same" is 1).
"""
import os, sys

import numpy as np
from scipy.spatial import Delaunay
from scipy.spatial.distance import cdist
from sklearn import datasets
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clustering_quality import synthetic


def scale(X):
    D = cdist(X, X)
    if X.shape[1] > 3:
        return np.sort(D, 1)[:, 1:11].mean()
    edges = {(min(a, b), max(a, b)) for s in Delaunay(X).simplices for a in s for b in s if a != b}
    total, count = np.zeros(len(X)), np.zeros(len(X))
    for i, j in edges:
        total[[i, j]] += D[i, j]
        count[[i, j]] += 1
    return np.mean(total / count)


def coupling(X, y, a):
    E = cdist(X, X, "sqeuclidean") / (2 * a * a)
    np.fill_diagonal(E, np.inf)
    W = np.exp(-(E - E.min(1, keepdims=True)))
    P = W / W.sum(1, keepdims=True)
    perplexity = np.exp(-(P * np.log(np.where(P > 0, P, 1))).sum(1))
    return np.median(perplexity), np.mean((P * (y[:, None] == y[None, :])).sum(1))


def sets():
    for family in ["circles", "moons", "varied", "blobs2d", "blobs3d", "blobs5d", "blobs10d"]:
        X, y = synthetic(family, 0)
        yield family + "-0", StandardScaler().fit_transform(X), y
    for name, load in [("iris", datasets.load_iris), ("wine", datasets.load_wine), ("breast_cancer", datasets.load_breast_cancer)]:
        X, y = load(return_X_y=True)
        yield name, StandardScaler().fit_transform(X), y
    here = os.path.dirname(os.path.abspath(__file__))
    for name, skip in [("Lsun", 3), ("Hepta", 0), ("Tetra", 0), ("Chainlink", 0), ("Atom", 0)]:
        X = np.loadtxt(os.path.join(here, "..", "data", "fcps", name + ".data"))[skip:]
        yield name, X, np.zeros(len(X), int)


print("set | N | D | a | median perplexity (same-class share) at 0.5a / a / 1.5a / 2.5a")
for name, X, y in sets():
    a = scale(X)
    cells = [coupling(X, y, f * a) for f in (0.5, 1, 1.5, 2.5)]
    print(f"{name} | {len(X)} | {X.shape[1]} | {a:.3f} | " + " / ".join(f"{p:.0f} ({s:.2f})" for p, s in cells), flush=True)
