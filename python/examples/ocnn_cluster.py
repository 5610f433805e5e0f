"""OCNN: cluster FCPS Lsun (and three Gaussian blobs); the report; save and load.

    python python/examples/ocnn_cluster.py [cpu|cuda|auto] [FCPS_FOLDER]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

from neurobits import OCNN

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
folder = Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[2] / "data" / "fcps")

points = np.loadtxt(folder / "Lsun.data", skiprows=3)  # 400 points in 2-D, 3 clusters
ocnn = OCNN(device=device).fit(points)
r = ocnn.report_
print(f"Lsun: {ocnn.n_clusters_} clusters ({r['k_non_singleton']} of more than one point) at threshold {r['threshold_percent']} %, a = {r['a']:.4f}")
print("cluster sizes:", np.bincount(ocnn.labels_).tolist())

rng = np.random.default_rng(0)
blobs = np.concatenate([c + rng.normal(scale=0.3, size=(50, 2)) for c in ([0, 0], [4, 0], [2, 3])])
print("blobs:", np.bincount(OCNN(iters=300, device=device).fit_predict(blobs)).tolist())

with tempfile.TemporaryDirectory() as d:
    ocnn.save(Path(d) / "lsun.nbm")  # what `neurobits ocnn cluster --model` writes
    again = OCNN.load(Path(d) / "lsun.nbm")
assert np.array_equal(again.labels_, ocnn.labels_) and again.report_["state_sha256"] == r["state_sha256"]
print("saved and loaded: the same labels and digests")
